//! Linearity of every compressor entry point on adversarial inputs, by counting work (never
//! by timing it): the bytes each regex search of the passes scans and each of their char walks
//! covers (`metered`), the same on any machine under any load. Four times the input must be at
//! most `MAX_GROWTH` times the work (linear gives 4, a quadratic pass 16). The time it takes is
//! measured in `examples/bench_describe.rs`.

use std::path::PathBuf;

use serde_json::json;

use super::adversarial::{repeated, UNITS};
use super::metered::{self, Regex};
use super::*;

/// The most four times the input may cost, as a multiple of the work.
const MAX_GROWTH: f64 = 5.0;

/// Seeds and finds of the `describe_text` / `describe_list` fuzz targets, when present (the
/// fuzz corpora are git-ignored; `fuzz/make-seeds.js` writes them).
fn fuzz_inputs() -> Vec<String> {
    let root = crate::test_support::shipped("fuzz/corpus");
    let mut inputs = Vec::new();
    for target in ["describe_text", "describe_list"] {
        let Ok(dir) = std::fs::read_dir(root.join(target)) else {
            continue;
        };
        let mut files: Vec<PathBuf> = dir.filter_map(|e| e.ok().map(|e| e.path())).collect();
        files.sort();
        // A few per target.
        for file in files.into_iter().take(8) {
            if let Ok(bytes) = std::fs::read(&file) {
                let text = String::from_utf8_lossy(&bytes).into_owned();
                if text.len() >= 8 {
                    inputs.push(text);
                }
            }
        }
    }
    if inputs.is_empty() {
        eprintln!("note: no fuzz corpus under fuzz/corpus (run fuzz/make-seeds.js): the built-in units only");
    }
    inputs
}

/// work(4n) / work(n) of `run` on `unit` repeated to n and 4n bytes.
fn growth(unit: &str, run: &dyn Fn(&str), bytes: usize) -> (u64, u64) {
    let small = repeated(unit, bytes);
    let large = repeated(unit, 4 * bytes);
    (
        metered::work_of(|| run(&small)),
        metered::work_of(|| run(&large)),
    )
}

fn assert_linear(what: &str, unit: &str, run: &dyn Fn(&str), bytes: usize) {
    let (small, large) = growth(unit, run, bytes);
    let unit = unit.chars().take(40).collect::<String>();
    assert!(small > 0, "{what} on {unit:?}: no work counted");
    let ratio = large as f64 / small as f64;
    assert!(
        ratio <= MAX_GROWTH,
        "{what} on {unit:?} repeated: 4x the input took {ratio:.1}x the work ({small} then {large})"
    );
}

/// A tools/list whose descriptions (the tool's and a property's) are `text` cut into pieces
/// of about 2 KB, each made distinct so the list's memo cannot share the work.
fn as_tools_list(text: &str) -> String {
    let mut tools = Vec::new();
    let mut rest = text;
    let mut n = 0;
    while !rest.is_empty() {
        let mut cut = rest.len().min(2048);
        while !rest.is_char_boundary(cut) {
            cut += 1;
        }
        let (piece, tail) = rest.split_at(cut);
        rest = tail;
        n += 1;
        let description = format!("{piece} {n}");
        tools.push(json!({
            "name": format!("t{n}"),
            "description": description,
            "inputSchema": {"type": "object", "properties": {"p": {"type": "string", "description": description}}}
        }));
    }
    json!({ "tools": tools }).to_string()
}

/// The meter itself: a search that scans to the end of the text for every short match (an
/// unbounded email local part before the `1.` alternative, as the protected-span pattern had
/// it) counts quadratic work, its bounded form linear.
#[test]
fn the_meter_counts_a_search_that_rescans_the_text_as_quadratic() {
    let unbounded = Regex::new(r"[\w.]+@[a-z]+|[0-9]+\.").expect("regex");
    let bounded = Regex::new(r"[\w.]{1,64}@[a-z]+|[0-9]+\.").expect("regex");
    let (small, large) = growth(
        "1.",
        &|text| {
            let _ = unbounded.replace_all(text, "");
        },
        4 * 1024,
    );
    assert!(large as f64 / small as f64 > 12.0, "{small} then {large}");
    assert_linear(
        "the bounded pattern",
        "1.",
        &|text| {
            let _ = bounded.replace_all(text, "");
        },
        4 * 1024,
    );
    // A char walk back to the text start per match, as `is_sentence_start` once did.
    let walk_back = |text: &str| {
        for (at, _) in text.match_indices(' ') {
            metered::walked(text[..at].len());
        }
    };
    let (small, large) = growth("the a ", &walk_back, 4 * 1024);
    assert!(large as f64 / small as f64 > 12.0, "{small} then {large}");
}

#[test]
fn compression_work_grows_linearly_with_adversarial_input() {
    let mut units: Vec<String> = UNITS.iter().map(|u| u.to_string()).collect();
    units.extend(fuzz_inputs());
    let options = CompressOptions {
        level: Level::Aggressive,
        compact_schemas: false,
    };
    for (i, unit) in units.iter().enumerate() {
        // Aggressive runs every pass light and moderate run, and more.
        assert_linear(
            "compress_text at aggressive",
            unit,
            &|text| {
                compress_text(text, Level::Aggressive);
            },
            // Past the windows the rules look in (1,000 characters around a match).
            4 * 1024,
        );
        // The list walk around it: a few units are enough.
        if i % 3 != 0 {
            continue;
        }
        // 4 x 2 KiB of text, written twice per tool and JSON-escaped, stays under the list
        // bound: the list is compressed, not passed through. One tool, then four.
        assert_linear(
            "compress_list_result at aggressive",
            unit,
            &|text| {
                let list = as_tools_list(text);
                assert!(list.len() <= MAX_LIST_RESULT_BYTES, "{} bytes", list.len());
                let _ = compress_list_result("tools/list", &list, &options);
            },
            2 * 1024,
        );
    }
}

#[test]
fn lists_and_descriptions_over_the_bounds_pass_unchanged() {
    let options = CompressOptions {
        level: Level::Aggressive,
        compact_schemas: false,
    };
    let wordy = "You can use this tool in order to read the file. ";
    let small = json!({"tools": [{"name": "a", "description": wordy}]}).to_string();
    assert!(compress_list_result("tools/list", &small, &options)
        .ok()
        .flatten()
        .is_some());

    // Over the list bound: unchanged, and no pass runs on it.
    let huge_text = repeated("1.2.", MAX_LIST_RESULT_BYTES);
    let huge =
        json!({"tools": [{"name": "a", "description": format!("{wordy}{huge_text}")}]}).to_string();
    let mut out = None;
    let work = metered::work_of(|| out = compress_list_result("tools/list", &huge, &options).ok());
    assert_eq!(out, Some(None));
    assert_eq!(work, 0);

    // One description over its bound stays byte for byte; the others are still compressed.
    let long = format!("{wordy}{}", repeated("a. ", MAX_DESCRIPTION_BYTES));
    let mixed = json!({"tools": [
        {"name": "a", "description": long},
        {"name": "b", "description": wordy}
    ]})
    .to_string();
    let out: serde_json::Value = serde_json::from_str(
        &compress_list_result("tools/list", &mixed, &options)
            .ok()
            .flatten()
            .unwrap_or_default(),
    )
    .unwrap_or_default();
    assert_eq!(out["tools"][0]["description"], json!(long));
    assert_ne!(out["tools"][1]["description"], json!(wordy));
}
