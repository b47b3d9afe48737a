use super::super::scan::LineIndex;

use super::*;
use crate::test_support::XorShift;

/// Random `uid=` lines: counters counting up per prefix, shared uids (a high counter on
/// many lines, as upstream prints them), repeats with roles of their own, moved nodes,
/// huge counters and many prefixes.
fn random_lines(rng: &mut XorShift) -> Vec<UidLine> {
    let prefixes = match rng.below(6) {
        0 => 1 + rng.below(30),
        _ => 1 + rng.below(3),
    };
    let shared_counter = rng.below(100);
    let mut next = vec![0u64; prefixes as usize];
    let n = rng.below(60) as usize;
    (0..n)
        .map(|line| {
            let p = rng.below(prefixes);
            let counter = match rng.below(12) {
                0 | 1 => shared_counter,
                2 => rng.below(100),
                3 if rng.below(8) == 0 => u64::MAX - rng.below(2),
                4 if rng.below(8) == 0 => 1 << 40,
                _ => {
                    let slot = next.get_mut(p as usize).map_or(0, |c| {
                        *c += 1 + rng.below(3);
                        *c
                    });
                    slot
                }
            };
            UidLine {
                line: line as u32,
                prefix: 20 + p,
                counter,
                depth: 0,
                shared_role: rng.below(5) != 0,
                uid: (0, 0),
                tail: 0,
            }
        })
        .collect()
}

/// Within its table (few prefixes, counters not far beyond the lines), the fast reading
/// says "all believed" exactly when the general one believes every line; beyond it, never
/// where the general one does not.
#[test]
fn the_fast_reading_agrees_with_the_general_one() {
    let mut rng = XorShift(0x0bad_5eed_c0de);
    let (mut all_believed, mut some_not) = (0, 0);
    for case in 0..20_000 {
        let found = random_lines(&mut rng);
        let general = in_order_by_prefix(&found);
        let all = general.iter().all(|&b| b);
        let fast = all_in_order(&found);
        // Each prefix's largest counter: the table holds them all.
        let mut largest = std::collections::BTreeMap::new();
        for f in &found {
            let max = largest.entry(f.prefix).or_insert(0);
            *max = f.counter.max(*max);
        }
        let table: u64 = largest
            .values()
            .map(|m| m.saturating_add(1))
            .fold(0, u64::saturating_add);
        let in_table = largest.len() <= FEW_PREFIXES && table <= found.len() as u64 * 8 + 1024;
        if in_table {
            assert_eq!(fast, all, "case {case}");
        } else {
            assert!(!fast || all, "case {case}");
        }
        assert_eq!(in_order(&found), general, "case {case}");
        if fast {
            all_believed += 1;
        } else if !all {
            some_not += 1;
        }
    }
    // Both answers came up often.
    assert!(
        all_believed > 2000 && some_not > 2000,
        "{all_believed} {some_not}"
    );
}

/// Whole texts: the believed lines are the same read either way.
#[test]
fn the_fast_reading_believes_the_same_lines_in_texts() {
    const ROLES: &[&str] = &[
        "",
        "InlineTextBox",
        "StaticText",
        "link",
        "generic",
        "ignored",
    ];
    const WORDS: &[&str] = &["a", "\"", "\n", "\" url=\"x", "\n  uid=20_3 link \"x\""];
    let mut rng = XorShift(0x7e57_7e57);
    for case in 0..3000 {
        let mut text = String::new();
        let mut depth = 0usize;
        for f in random_lines(&mut rng) {
            depth = match rng.below(4) {
                0 => depth + 1,
                1 => depth.saturating_sub(1 + rng.below(3) as usize),
                _ => depth,
            };
            text.push_str(&"  ".repeat(depth));
            text.push_str(&format!(
                "uid={}_{} {}",
                f.prefix,
                f.counter,
                rng.pick(ROLES)
            ));
            if rng.below(2) == 0 {
                text.push_str(" \"");
                for _ in 0..rng.below(3) {
                    text.push_str(rng.pick(WORDS));
                }
                text.push('"');
            }
            text.push('\n');
            if rng.below(20) == 0 {
                text.push_str("page text\n");
            }
        }
        let body = text.strip_suffix('\n').unwrap_or(&text);
        let lines = LineIndex::new(&text, body);
        assert_eq!(
            UidLines::scan(&lines).next_believed,
            UidLines::scan_with(&lines, in_order_by_prefix).next_believed,
            "case {case}\n{text}"
        );
    }
}
