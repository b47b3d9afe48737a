//! Snapshot deltas end to end through a `Session`: the recorded sessions replayed (the
//! navigation rule, the invariants of what a delta names), pages kept apart, eviction, and a
//! property test with random edits on corpus trees.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::level::Level;
use crate::notation;
use crate::session::{Session, SessionOptions};
use crate::snapshot::delta::{FullReason, Sent};
use crate::snapshot::marker::read_marker;
use crate::stats::StatsMode;
use crate::test_support::{corpus_dir, XorShift};

pub(crate) static UID_SPOT: once_cell::sync::Lazy<regex::Regex> =
    once_cell::sync::Lazy::new(|| {
        regex::Regex::new(r"(?m)(?:^ *|\||> |uid[ =]|until=|, |…)(\d+_\d+)\b").expect("regex")
    });

/// One recorded call: tool, arguments, result.
pub(crate) struct Step {
    pub tool: String,
    pub args: Value,
    pub result: Value,
}

pub(crate) fn read_session(path: &Path) -> Vec<Step> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .map(|v| Step {
            tool: v["tool"].as_str().unwrap_or("").to_string(),
            args: v["args"].clone(),
            result: v["result"].clone(),
        })
        .collect()
}

fn session_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    let Some(corpus) = corpus_dir() else {
        return files;
    };
    for dir in [corpus.join("sessions"), PathBuf::from("/work/captured")] {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut found: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
            .collect();
        found.sort();
        files.extend(found);
    }
    files
}

pub(crate) fn session(level: Level, deltas: bool) -> Session {
    let mut options = SessionOptions::for_level(level);
    options.stats = StatsMode::Off;
    options.snapshot_deltas = deltas;
    // These tests read expand answers whole; the budget's cut of long answers (read on with
    // read_result) has its own tests in `result::budget::corpus_tests`.
    options.max_tokens = 0;
    Session::new(options)
}

/// The text of a result's first text block.
pub(crate) fn text_of(result_json: &str) -> String {
    serde_json::from_str::<Value>(result_json)
        .ok()
        .and_then(|v| {
            v["content"].as_array().and_then(|c| {
                c.iter()
                    .find_map(|b| b["text"].as_str().map(str::to_string))
            })
        })
        .unwrap_or_default()
}

/// What a session sends for one step: the result's text (filtered or as it came).
pub(crate) fn send(s: &mut Session, step: &Step) -> String {
    let result = step.result.to_string();
    let args = step.args.to_string();
    let out = s
        .filter_tool_result(&step.tool, &result, Some(&args))
        .ok()
        .flatten()
        .unwrap_or(result);
    text_of(&out)
}

/// The snapshot body of a result text (after `## Latest page snapshot`).
pub(crate) fn body_of(text: &str) -> Option<&str> {
    let start = text.find("## Latest page snapshot\n")? + "## Latest page snapshot\n".len();
    let rest = text.get(start..)?;
    rest.get(..rest.find("\n## ").map_or(rest.len(), |i| i + 1))
}

fn expand(s: &mut Session, args: Value) -> String {
    let out = s
        .call_proxy_tool("expand_snapshot", Some(&args.to_string()))
        .unwrap_or_default();
    text_of(&out)
}

#[test]
fn replayed_sessions_keep_every_uid_shown_or_named_and_expandable() {
    let files = session_files();
    if files.is_empty() {
        return;
    }
    let mut deltas = 0;
    for file in &files {
        for level in [Level::Moderate, Level::Aggressive] {
            let mut s = session(level, true);
            for step in read_session(file).iter().skip(1) {
                let sent = send(&mut s, step);
                let Some(Sent::Delta { counts, .. }) = s.last_sent() else {
                    continue;
                };
                deltas += 1;
                if counts.is_empty() {
                    // The short form: the whole page, one call away.
                    let whole = expand(&mut s, json!({"pageId": step.args["pageId"]}));
                    let raw_text = step.result["content"][0]["text"].as_str().unwrap_or("");
                    let full = crate::notation::filter_snapshot(
                        body_of(raw_text).unwrap_or(""),
                        &crate::snapshot::SnapshotOptions::for_level(level),
                    );
                    assert_eq!(whole, full.text);
                    continue;
                }
                let raw_text = step.result["content"][0]["text"].as_str().unwrap_or("");
                let raw = body_of(raw_text).unwrap_or("");
                let body = body_of(&sent).unwrap_or("");
                let tree_uids: HashSet<String> = {
                    let mut implied = Vec::new();
                    let n = notation::notation_of(raw);
                    n.parse(raw, &mut implied)
                        .uids()
                        .map(str::to_string)
                        .collect()
                };
                // Every uid shown is in the snapshot; every uid of the snapshot is shown, or
                // returned by the expand call of a line naming it.
                let mut covered: HashSet<String> = HashSet::new();
                for line in body.lines().skip(1) {
                    let t = line.trim_start();
                    if t.starts_with('…') {
                        let m = read_marker(t);
                        if let Some(uid) = m.expand_uid {
                            let mut args = json!({"uid": uid, "pageId": step.args["pageId"]});
                            if let Some(until) = m.until {
                                args["until"] = json!(until);
                            }
                            let got = expand(&mut s, args);
                            assert!(
                                !got.starts_with("No ") && !got.is_empty(),
                                "{}: {t} expands to {got}",
                                file.display()
                            );
                            covered.extend(
                                tree_uids.iter().filter(|u| contains_uid(&got, u)).cloned(),
                            );
                        }
                        continue;
                    }
                    for uid in tree_uids.iter().filter(|u| contains_uid(line, u)) {
                        covered.insert(uid.clone());
                    }
                }
                // No uid that is not in the snapshot: every uid where the notation writes one
                // (a line's start, after `|` or ` > `, in a marker's list or expand call).
                let shown: String = body
                    .lines()
                    .filter(|l| !l.trim_start().starts_with("… removed"))
                    .collect::<Vec<_>>()
                    .join("\n");
                for m in UID_SPOT.captures_iter(&shown) {
                    let uid = m.get(1).map_or("", |g| g.as_str());
                    assert!(
                        tree_uids.contains(uid),
                        "{}: {uid} is not in the snapshot\n{body}",
                        file.display()
                    );
                }
                let missing: Vec<_> = tree_uids.difference(&covered).collect();
                assert!(
                    missing.is_empty(),
                    "{} {level}: uids neither shown nor named: {missing:?}\n{body}",
                    file.display()
                );
            }
        }
    }
    assert!(
        deltas > 10,
        "only {deltas} deltas over {} sessions",
        files.len()
    );
}

/// `uid` appears in `text` as a whole token (not inside a longer uid).
pub(crate) fn contains_uid(text: &str, uid: &str) -> bool {
    text.match_indices(uid).any(|(i, _)| {
        let before = text.get(..i).and_then(|t| t.chars().last());
        let after = text.get(i + uid.len()..).and_then(|t| t.chars().next());
        let edge = |c: Option<char>| c.is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '_'));
        edge(before) && edge(after)
    })
}

#[test]
fn navigation_rule_matches_the_recorded_navigations() {
    // The rule (a new root uid) against what a new document is: one that renumbered every
    // node, so that no uid of the page's previous snapshot is left. And every snapshot after
    // navigate_page, or after a link click to another path, is one.
    let files = session_files();
    if files.is_empty() {
        return;
    }
    let (mut navigations, mut others) = (0, 0);
    for file in &files {
        let mut s = session(Level::Moderate, true);
        let mut navigated: HashSet<String> = HashSet::new();
        let mut urls: std::collections::HashMap<String, String> = Default::default();
        let mut uids: std::collections::HashMap<String, HashSet<String>> = Default::default();
        for step in read_session(file).iter().skip(1) {
            let page = step.args["pageId"].to_string();
            if step.tool == "navigate_page" || step.tool == "new_page" {
                navigated.insert(page.clone());
            }
            let raw = step.result["content"][0]["text"].as_str().unwrap_or("");
            let Some(body) = body_of(raw) else {
                send(&mut s, step);
                continue;
            };
            // A link to another path navigates too (a query or fragment set by the page's
            // script, `pushState`, may keep the document).
            let first = body.lines().next().unwrap_or("");
            let url = first.split(" url=").nth(1).unwrap_or("").trim_matches('"');
            let path = url.split(['?', '#']).next().unwrap_or("").to_string();
            if urls
                .insert(page.clone(), path.clone())
                .is_some_and(|old| old != path)
            {
                navigated.insert(page.clone());
            }
            let now: HashSet<String> = {
                let mut implied = Vec::new();
                let n = notation::notation_of(body);
                n.parse(body, &mut implied)
                    .uids()
                    .map(str::to_string)
                    .collect()
            };
            send(&mut s, step);
            let sent = s.last_sent();
            let after_navigation = navigated.remove(&page);
            if let Some(before) = uids.insert(page.clone(), now.clone()) {
                let kept = now.intersection(&before).count();
                let what = format!("{} step {}", file.display(), step.tool);
                if sent == Some(Sent::Full(FullReason::Navigated)) {
                    navigations += 1;
                    assert_eq!(kept, 0, "{what}: taken as new, yet {kept} uids kept");
                } else {
                    others += 1;
                    assert!(
                        kept > 0,
                        "{what}: no uid kept, yet not taken as new ({sent:?})"
                    );
                    assert!(
                        !after_navigation,
                        "{what}: after a navigation, yet {sent:?}"
                    );
                }
            }
        }
    }
    assert!(navigations > 3 && others > 10, "{navigations} {others}");
}

/// Totals of one replay: bytes of every result's text, and of the snapshots that had a
/// predecessor of the same page.
#[derive(Debug, Default, Clone, Copy)]
struct Totals {
    all: usize,
    with_predecessor: usize,
}

fn replay(file: &Path, level: Level, deltas: bool) -> Totals {
    let mut s = session(level, deltas);
    let mut t = Totals::default();
    let mut seen: HashSet<String> = HashSet::new();
    for step in read_session(file).iter().skip(1) {
        let sent = send(&mut s, step);
        t.all += sent.len();
        let raw = step.result["content"][0]["text"].as_str().unwrap_or("");
        if body_of(raw).is_some() && !seen.insert(step.args["pageId"].to_string()) {
            t.with_predecessor += sent.len();
        }
    }
    t
}

#[test]
fn deltas_cut_the_recorded_sessions() {
    // A floor, not the target (the bench measures tokens): deltas must pay on every set.
    let files = session_files();
    if files.is_empty() {
        return;
    }
    let mut report = String::new();
    let (mut off, mut on) = (Totals::default(), Totals::default());
    for file in &files {
        let a = replay(file, Level::Moderate, false);
        let b = replay(file, Level::Moderate, true);
        report.push_str(&format!(
            "{}: {} -> {} ({} -> {} with predecessor)\n",
            file.display(),
            a.all,
            b.all,
            a.with_predecessor,
            b.with_predecessor
        ));
        off.all += a.all;
        on.all += b.all;
        off.with_predecessor += a.with_predecessor;
        on.with_predecessor += b.with_predecessor;
    }
    eprintln!("{report}total {off:?} -> {on:?}");
    assert!(on.all < off.all, "{report}");
}

#[test]
fn an_unchanged_page_is_the_short_form_and_deltas_are_deterministic() {
    let Some(corpus) = corpus_dir() else {
        return;
    };
    let file = corpus.join("sessions/grid-triage.jsonl");
    let steps = read_session(&file);
    let Some(snap) = steps.iter().find(|s| s.tool == "take_snapshot") else {
        panic!("no take_snapshot in {}", file.display());
    };
    let mut s = session(Level::Moderate, true);
    let first = send(&mut s, snap);
    assert_eq!(s.last_sent(), Some(Sent::Full(FullReason::First)));
    let again = send(&mut s, snap);
    assert!(
        matches!(s.last_sent(), Some(Sent::Delta { counts, .. }) if counts.is_empty()),
        "{again}"
    );
    let body = body_of(&again).unwrap_or("");
    assert_eq!(body.lines().count(), 1, "{again}");
    assert!(
        body.contains("snapshot 2: unchanged since snapshot 1"),
        "{body}"
    );
    assert!(crate::tokens::estimate_tokens(body) <= 60, "{body}");
    // The same inputs give the same outputs.
    let mut t = session(Level::Moderate, true);
    assert_eq!(send(&mut t, snap), first);
    assert_eq!(send(&mut t, snap), again);
    // The whole page is one call away.
    let whole = expand(&mut s, json!({"pageId": snap.args["pageId"]}));
    let full_body = body_of(&first).unwrap_or("");
    assert!(
        full_body.ends_with(&whole) || full_body.contains(whole.trim_end()),
        "{whole}"
    );
}

/// A page sent at the budget's lean step (moderate's view just over the bound) is compared at
/// that step while it is held: unchanged, it is the short form. (The level's own delta against
/// it fits the budget, and used to send back every link the lean step had collapsed.)
#[test]
fn an_unchanged_page_sent_at_the_lean_step_is_the_short_form() {
    let (page, _, _) = crate::test_support::sidebar_page(200, 150);
    let snap = Step {
        tool: "take_snapshot".to_string(),
        args: json!({"pageId": 1}),
        result: json!({"content": [{"type": "text", "text": page}]}),
    };
    let mut options = SessionOptions::for_level(Level::Moderate);
    options.stats = StatsMode::Off;
    options.snapshot_deltas = true;
    options.max_tokens = 0;
    let moderate = send(&mut Session::new(options.clone()), &snap);
    options.max_tokens = crate::snapshot::params::DEFAULT_MAX_TOKENS;
    options.max_chars = moderate.chars().count() + crate::snapshot::params::RESERVE_CHARS - 200;
    let mut s = Session::new(options);
    let first = send(&mut s, &snap);
    assert!(first.contains("… 192 link hidden"), "{first}");
    let again = send(&mut s, &snap);
    assert!(
        matches!(s.last_sent(), Some(Sent::Delta { against: 1, counts, .. }) if counts.is_empty()),
        "{again}"
    );
    assert!(crate::tokens::estimate_tokens(&again) <= 60, "{again}");
}

#[test]
fn a_page_the_budget_sent_coarser_gets_its_deltas_at_that_step() {
    let Some(corpus) = corpus_dir() else {
        return;
    };
    let file = corpus.join("sessions/grid-triage.jsonl");
    let steps = read_session(&file);
    let Some(snap) = steps.iter().find(|s| s.tool == "take_snapshot") else {
        panic!("no take_snapshot in {}", file.display());
    };
    let mut options = SessionOptions::for_level(Level::Moderate);
    options.stats = StatsMode::Off;
    options.snapshot_deltas = true;
    // Under the page's moderate snapshot: the budget takes a coarser step.
    options.max_tokens = 1000;
    let mut s = Session::new(options);
    let first = send(&mut s, snap);
    assert!(crate::tokens::estimate_tokens(&first) <= 1000, "{first}");
    assert!(
        first.contains("full: first snapshot of this page"),
        "{first}"
    );
    assert_eq!(s.last_sent(), Some(Sent::Full(FullReason::First)));
    // The same page again is unchanged against what the coarser step sent: the short form.
    let again = send(&mut s, snap);
    assert!(
        matches!(s.last_sent(), Some(Sent::Delta { against: 1, counts, .. }) if counts.is_empty()),
        "{again}"
    );
    let body = body_of(&again).unwrap_or("");
    assert!(body.contains("unchanged since snapshot 1"), "{again}");
    assert!(crate::tokens::estimate_tokens(body) <= 60, "{again}");
    // The whole page is still one call away (over the budget: cut, and read on by id).
    let whole = expand(&mut s, json!({"pageId": snap.args["pageId"]}));
    assert!(crate::tokens::estimate_tokens(&whole) <= 1000, "{whole}");
    assert!(whole.contains("read_result id="), "{whole}");
}

#[test]
fn two_pages_never_mix_and_an_evicted_page_starts_full() {
    let Some(corpus) = corpus_dir() else {
        return;
    };
    let steps = read_session(&corpus.join("sessions/grid-triage.jsonl"));
    let other = read_session(&corpus.join("sessions/megamenu-shop.jsonl"));
    let (Some(a), Some(b)) = (
        steps.iter().find(|s| s.tool == "take_snapshot"),
        other.iter().find(|s| s.tool == "take_snapshot"),
    ) else {
        panic!("no snapshots");
    };
    let on_page = |step: &Step, page: u32| Step {
        tool: step.tool.clone(),
        args: json!({"pageId": page}),
        result: step.result.clone(),
    };
    let mut s = session(Level::Moderate, true);
    send(&mut s, &on_page(a, 1));
    send(&mut s, &on_page(b, 2));
    assert_eq!(s.last_sent(), Some(Sent::Full(FullReason::First)));
    send(&mut s, &on_page(a, 1));
    assert!(
        matches!(s.last_sent(), Some(Sent::Delta { against: 1, counts, .. }) if counts.is_empty())
    );
    send(&mut s, &on_page(b, 2));
    assert!(
        matches!(s.last_sent(), Some(Sent::Delta { against: 1, counts, .. }) if counts.is_empty())
    );
    // Page 2's document on page 1 (recorded in another browser, with the same root uid): no
    // delta against page 1's.
    send(&mut s, &on_page(b, 1));
    assert!(
        matches!(s.last_sent(), Some(Sent::Full(_))),
        "{:?}",
        s.last_sent()
    );
    send(&mut s, &on_page(b, 2));
    assert!(
        matches!(s.last_sent(), Some(Sent::Delta { against: 2, counts, .. }) if counts.is_empty())
    );

    // A cache too small for two pages: the evicted one's next snapshot is full.
    let mut probe = session(Level::Moderate, true);
    send(&mut probe, &on_page(a, 1));
    let entry = probe.cached_snapshot_bytes();
    let mut options = SessionOptions::for_level(Level::Moderate);
    options.stats = StatsMode::Off;
    options.cache_bytes = entry * 5 / 2;
    let mut s = Session::new(options);
    send(&mut s, &on_page(a, 1));
    send(&mut s, &on_page(a, 1));
    assert!(matches!(s.last_sent(), Some(Sent::Delta { .. })));
    send(&mut s, &on_page(a, 2));
    send(&mut s, &on_page(a, 3));
    send(&mut s, &on_page(a, 1));
    assert_eq!(s.last_sent(), Some(Sent::Full(FullReason::First)));
}

#[test]
fn deltas_off_light_and_off_levels_send_what_they_sent_before() {
    let Some(corpus) = corpus_dir() else {
        return;
    };
    let steps = read_session(&corpus.join("sessions/grid-triage.jsonl"));
    for level in Level::ALL {
        for deltas in [false, true] {
            if deltas && level >= Level::Moderate {
                continue;
            }
            let mut with = session(level, deltas);
            for step in steps.iter().skip(1) {
                let plain = crate::result::filter_tool_result(
                    &step.tool,
                    &step.result.to_string(),
                    &crate::result::ResultOptions::for_level(level),
                )
                .ok()
                .flatten()
                .map(|r| text_of(&r.json))
                .unwrap_or_else(|| text_of(&step.result.to_string()));
                assert_eq!(send(&mut with, step), plain, "{level} deltas={deltas}");
                assert_eq!(with.last_sent(), None);
            }
        }
    }
}

/// Random edits on a raw chrome-devtools-mcp snapshot: a name changed, a state added, a node
/// removed, a node added, two siblings swapped. Returns the edited text.
fn edit(raw: &str, rng: &mut XorShift, next_uid: &mut u32) -> String {
    let mut lines: Vec<String> = raw.lines().map(str::to_string).collect();
    let edits = 1 + rng.below(4);
    for _ in 0..edits {
        if lines.len() < 3 {
            break;
        }
        let i = 1 + rng.below(lines.len() as u64 - 1) as usize;
        let indent = lines[i].len() - lines[i].trim_start().len();
        match rng.below(5) {
            0 => {
                if let Some(q) = lines[i].find('"') {
                    lines[i].insert_str(q + 1, "edited ");
                }
            }
            1 => lines[i].push_str(" checked"),
            2 => {
                // The node and its subtree.
                let mut end = i + 1;
                while lines
                    .get(end)
                    .is_some_and(|l| l.len() - l.trim_start().len() > indent)
                {
                    end += 1;
                }
                lines.drain(i..end);
            }
            3 => {
                *next_uid += 1;
                let line = format!(
                    "{}uid=99_{} button \"new {}\"",
                    " ".repeat(indent),
                    next_uid,
                    next_uid
                );
                lines.insert(i, line);
            }
            _ => {
                // Swap with the next sibling (same indent), subtrees and all.
                let end = |from: usize, lines: &[String]| {
                    let mut e = from + 1;
                    while lines
                        .get(e)
                        .is_some_and(|l| l.len() - l.trim_start().len() > indent)
                    {
                        e += 1;
                    }
                    e
                };
                let a_end = end(i, &lines);
                if lines
                    .get(a_end)
                    .is_some_and(|l| l.len() - l.trim_start().len() == indent)
                {
                    let b_end = end(a_end, &lines);
                    let b: Vec<String> = lines.drain(a_end..b_end).collect();
                    for (k, l) in b.into_iter().enumerate() {
                        lines.insert(i + k, l);
                    }
                }
            }
        }
    }
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

#[test]
fn deltas_of_random_edits_rebuild_the_full_snapshot() {
    use crate::snapshot::delta::{self, DeltaInput};
    use crate::snapshot::{Notation, SnapshotOptions};
    let Some(corpus) = corpus_dir() else {
        return;
    };
    let mut bodies = Vec::new();
    for file in session_files().iter().take(5) {
        for step in read_session(file) {
            let text = step.result["content"][0]["text"]
                .as_str()
                .unwrap_or("")
                .to_string();
            if let Some(body) = body_of(&text) {
                if body.len() > 2000 {
                    bodies.push(body.to_string());
                }
            }
        }
    }
    let _ = corpus;
    bodies.truncate(12);
    assert!(!bodies.is_empty());
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    let mut next_uid = 0;
    let mut checked = 0;
    for level in [Level::Moderate, Level::Aggressive] {
        let options = SnapshotOptions::for_level(level);
        let cdp = crate::notation::cdp::Cdp;
        for body in &bodies {
            let mut prev_text = body.clone();
            let first = delta::filter_with_deltas(
                &cdp,
                &prev_text,
                &options,
                DeltaInput {
                    earlier: None,
                    sent: None,
                    number: 1,
                    upstream_reset: false,
                },
            );
            let Some(mut holds) = first.holds else {
                continue;
            };
            let mut held = rebuild::Held::of(&cdp, &prev_text, &options);
            for round in 0..6u64 {
                let next_text = edit(&prev_text, &mut rng, &mut next_uid);
                let out = delta::filter_with_deltas(
                    &cdp,
                    &next_text,
                    &options,
                    DeltaInput {
                        earlier: None,
                        sent: Some(&holds),
                        number: 2 + round,
                        upstream_reset: false,
                    },
                );
                let expected = rebuild::Held::of(&cdp, &next_text, &options);
                if let Some(Sent::Delta { .. }) = out.sent {
                    let got = held.apply(&cdp, &next_text, &options, &holds);
                    assert_eq!(
                        got, expected,
                        "level {level} round {round}\n{}",
                        out.filtered.text
                    );
                    checked += 1;
                }
                held = expected;
                holds = match out.holds {
                    Some(h) => h,
                    None => break,
                };
                prev_text = next_text;
            }
        }
        let _ = cdp.comment("");
    }
    assert!(checked > 20, "only {checked} deltas checked");
}

/// What an agent holds, as a tree of shown lines: each visible node its own line (as the
/// notation writes it) with its frame under it, each run of hidden siblings its marker, walked
/// as the one traversal walks frames. Applying a delta reads only what the delta writes: each
/// unchanged line's uids (first and last) pick the held lines from the first through the last.
pub(crate) mod rebuild {
    use super::*;
    use crate::snapshot::marker::{hidden_run_end, write_run};
    use crate::snapshot::render::flatten;
    use crate::snapshot::tree::{NodeKind, Tree};
    use crate::snapshot::{Notation, SnapshotOptions};

    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct Line {
        /// The uids the line stands for (a hidden run: all its siblings').
        pub members: Vec<String>,
        pub text: String,
        pub children: Vec<Line>,
    }

    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct Held(pub Vec<Line>);

    /// How a delta's changed tables are written.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Tables {
        /// Row by row (chrome-devtools-mcp's notation).
        Rows,
        /// Marked so, by a notation that writes no tables: its rows as nodes.
        Ignored,
        /// Marked as nodes (the delta sent when that is shorter).
        Nodes,
    }

    type Lookup<'l> = &'l dyn Fn(&str, &str) -> Option<Vec<Line>>;

    fn frame_lines(
        n: &dyn Notation,
        tree: &Tree<'_>,
        items: &[usize],
        fallback: &str,
        held: Option<Lookup<'_>>,
    ) -> Vec<Line> {
        let mut out = Vec::new();
        let mut pos = 0;
        while let Some(&id) = items.get(pos) {
            let Some(node) = tree.nodes.get(id) else {
                pos += 1;
                continue;
            };
            let table_delta = tree.delta.as_ref().and_then(|d| d.tables.get(&id));
            if let (Some(lookup), Some(td), Some(table)) = (held, table_delta, tree.tables.get(&id))
            {
                // A table of a delta: written rows are their cells' lines, a run line is the
                // held lines it names, whole rows, with the state it says changed changed.
                let w = table.columns.len();
                let mut r = 0;
                while r < td.rows {
                    let Some((len, text)) = td.runs.get(&r) else {
                        let record = table.record(r);
                        // As the row writes them: the unchanged runs inside the table are
                        // for a notation that writes no tables.
                        out.extend(frame_lines(n, tree, record, fallback, None));
                        r += 1;
                        continue;
                    };
                    let run = read_row_run(text);
                    assert_eq!(run.rows, *len, "{text}");
                    let mut lines = lookup(&run.first, &run.last)
                        .unwrap_or_else(|| panic!("{text}: uids not in what was held"));
                    assert_eq!(lines.len(), len * w, "{text}: not whole rows of {w}");
                    if let Some((on, word, place)) = &run.toggled {
                        let col = table
                            .columns
                            .iter()
                            .enumerate()
                            .filter(|(_, c)| c.shown)
                            .nth(place - 1)
                            .map(|(c, _)| c)
                            .unwrap_or_else(|| panic!("{text}: no column {place}"));
                        for row in lines.chunks_mut(w) {
                            if let Some(cell) = row.get_mut(col) {
                                set_word(&mut cell.text, word, *on);
                            }
                        }
                    }
                    out.extend(lines);
                    r += len;
                }
                pos += td.rows * w;
                continue;
            }
            if let (Some(lookup), Some((len, text))) =
                (held, tree.delta.as_ref().and_then(|d| d.runs.get(&id)))
            {
                let m = read_marker(text);
                let (first, last) = match (m.range, m.listed.as_slice()) {
                    (Some((a, b)), _) => (a, b),
                    (None, [a]) => (*a, *a),
                    (None, [a, b]) => (*a, *b),
                    _ => panic!("an unchanged line names no uid: {text}"),
                };
                let lines = lookup(first, last)
                    .unwrap_or_else(|| panic!("{text}: uids not in what was held"));
                out.extend(lines);
                pos += len;
                continue;
            }
            if node.hidden {
                let end = hidden_run_end(tree, items, pos);
                let run = items.get(pos..end).unwrap_or(&[]);
                let mut text = String::new();
                write_run(&mut text, tree, run, fallback);
                out.push(Line {
                    members: run
                        .iter()
                        .filter_map(|&i| tree.nodes.get(i))
                        .map(|n| n.uid.to_string())
                        .collect(),
                    text,
                    children: Vec::new(),
                });
                pos = end;
                continue;
            }
            let (text, children) = match node.kind {
                NodeKind::Element => {
                    let visible = flatten(tree, tree.children(id), &mut Vec::new());
                    let fb = if node.uid.is_empty() {
                        fallback
                    } else {
                        node.uid
                    };
                    (
                        n.hit_line(tree, id),
                        frame_lines(n, tree, &visible, fb, held),
                    )
                }
                NodeKind::Verbatim => (node.raw.unwrap_or("").to_string(), Vec::new()),
                NodeKind::Marker => (node.name_str().to_string(), Vec::new()),
            };
            out.push(Line {
                members: vec![node.uid.to_string()],
                text,
                children,
            });
            pos += 1;
        }
        out
    }

    /// A run line of a table delta read back.
    struct RowRun {
        rows: usize,
        /// (gained, word, column in the header from 1).
        toggled: Option<(bool, String, usize)>,
        first: String,
        last: String,
    }

    /// `… 12 rows unchanged[ but [not ]WORD in column K] (uid A…B)`.
    fn read_row_run(text: &str) -> RowRun {
        let re = regex::Regex::new(
            r"^… (\d+) rows unchanged(?: but (not )?(\w+) in column (\d+))? \(uid ([^…,)]+)(?:…|, )([^)]+)\)$",
        )
        .expect("regex");
        let c = re
            .captures(text)
            .unwrap_or_else(|| panic!("not a run of rows: {text}"));
        let num = |i: usize| c.get(i).map_or(0, |m| m.as_str().parse().unwrap_or(0));
        RowRun {
            rows: num(1),
            toggled: c
                .get(3)
                .map(|w| (c.get(2).is_none(), w.as_str().to_string(), num(4))),
            first: c[5].to_string(),
            last: c[6].to_string(),
        }
    }

    /// The words of a line outside quotes, split by spaces (a quoted part stays whole).
    pub fn words(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        let (mut cur, mut quote, mut escaped) = (String::new(), false, false);
        for ch in text.chars() {
            if escaped {
                escaped = false;
            } else if ch == '\\' {
                escaped = true;
            } else if ch == '"' {
                quote = !quote;
            } else if ch == ' ' && !quote {
                out.push(std::mem::take(&mut cur));
                continue;
            }
            cur.push(ch);
        }
        out.push(cur);
        out
    }

    /// A line with its bare `word` (`on`) or without it.
    fn set_word(text: &mut String, word: &str, on: bool) {
        let mut w = words(text);
        let at = w.iter().skip(2).position(|x| x == word);
        match (on, at) {
            (true, None) => w.push(word.to_string()),
            (false, Some(i)) => {
                w.remove(i + 2);
            }
            _ => {}
        }
        *text = w.join(" ");
    }

    /// `held` with every line's words after the uid and role in one order (a word a run line
    /// added goes at the end of its line; the reader holds states as a set).
    pub fn in_word_order(held: &Held) -> Held {
        fn lines(ls: &[Line]) -> Vec<Line> {
            ls.iter()
                .map(|l| {
                    let mut w = words(&l.text);
                    if w.len() > 2 {
                        w[2..].sort();
                    }
                    Line {
                        members: l.members.clone(),
                        text: w.join(" "),
                        children: lines(&l.children),
                    }
                })
                .collect()
        }
        Held(lines(&held.0))
    }

    /// The lines from the one standing for `first` through the one standing for `last`, in
    /// the frame that holds them.
    fn find(lines: &[Line], first: &str, last: &str) -> Option<Vec<Line>> {
        let has = |l: &Line, uid: &str| l.members.iter().any(|m| m == uid);
        if let Some(start) = lines.iter().position(|l| has(l, first)) {
            let end = start + lines.get(start..)?.iter().position(|l| has(l, last))?;
            return Some(lines.get(start..=end)?.to_vec());
        }
        lines.iter().find_map(|l| find(&l.children, first, last))
    }

    impl Held {
        /// The full filtered snapshot of `text`, as lines.
        pub fn of(n: &dyn Notation, text: &str, options: &SnapshotOptions) -> Held {
            let mut implied = Vec::new();
            let mut tree = n.parse(text, &mut implied);
            crate::snapshot::apply_passes(&mut tree, options);
            Held(frame_lines(n, &tree, &tree.roots.clone(), "", None))
        }

        /// The held lines with the delta of `text` against `sent` applied.
        pub fn apply(
            &self,
            n: &dyn Notation,
            text: &str,
            options: &SnapshotOptions,
            sent: &crate::snapshot::delta::SentPage,
        ) -> Held {
            self.apply_tables(n, text, options, sent, Tables::Rows)
        }

        /// `apply`, with the delta's tables as `tables` says.
        pub fn apply_tables(
            &self,
            n: &dyn Notation,
            text: &str,
            options: &SnapshotOptions,
            sent: &crate::snapshot::delta::SentPage,
            tables: Tables,
        ) -> Held {
            use crate::snapshot::delta;
            let mut implied = Vec::new();
            let mut tree = n.parse(text, &mut implied);
            crate::snapshot::apply_passes(&mut tree, options);
            let fp = delta::Fingerprint::of(&tree);
            delta::mark_with(&mut tree, &fp, sent, tables != Tables::Nodes);
            if tables == Tables::Ignored {
                if let Some(marks) = tree.delta.as_mut() {
                    marks.tables.clear();
                }
            }
            let lookup = |a: &str, b: &str| find(&self.0, a, b);
            Held(frame_lines(
                n,
                &tree,
                &tree.roots.clone(),
                "",
                Some(&lookup),
            ))
        }
    }
}

#[test]
fn playwright_snapshots_get_deltas_in_yaml_too() {
    let Some(corpus) = corpus_dir() else {
        return;
    };
    let file = corpus.join("playwright-mcp/pages/app-grid/browser_snapshot.json");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap_or_default())
        .unwrap_or_default();
    let result = doc["result"].clone();
    let text = result["content"][0]["text"]
        .as_str()
        .unwrap_or("")
        .to_string();
    assert!(text.contains("```yaml"), "{}", file.display());
    let step = |text: &str| Step {
        tool: "browser_snapshot".into(),
        args: json!({}),
        result: json!({"content": [{"type": "text", "text": text}]}),
    };
    let mut s = session(Level::Moderate, true);
    let first = send(&mut s, &step(&text));
    assert_eq!(s.last_sent(), Some(Sent::Full(FullReason::First)));
    assert!(
        first.contains("# snapshot-filter snapshot 1, full: first snapshot of this page\n"),
        "{first}"
    );
    let again = send(&mut s, &step(&text));
    assert!(
        again.contains("# snapshot-filter snapshot 2: unchanged since snapshot 1"),
        "{again}"
    );
    // A checkbox ticked: the delta is YAML (every other section as it was), with the change.
    let Some(at) = text.find("- checkbox \"Select ") else {
        panic!("no row checkbox in {}", file.display());
    };
    let line_end = at + text.get(at..).and_then(|t| t.find('\n')).unwrap_or(0);
    let mut edited = text.clone();
    let Some(ref_at) = edited.get(at..line_end).and_then(|l| l.find(" [ref=")) else {
        panic!("no ref on the checkbox line");
    };
    edited.insert_str(at + ref_at, " [checked]");
    let delta = send(&mut s, &step(&edited));
    assert!(
        matches!(s.last_sent(), Some(Sent::Delta { against: 2, .. })),
        "{delta}"
    );
    assert!(
        delta.contains(
            "# snapshot-filter snapshot 3: delta against snapshot 2, 0 added, 1 changed, 0 removed"
        ),
        "{delta}"
    );
    assert!(delta.contains("[checked]"), "{delta}");
    assert!(delta.contains(" unchanged (uid "), "{delta}");
    assert!(delta.len() * 3 < first.len(), "{delta}");
    // Still YAML where it was: every line of the fenced body is a list item or a comment.
    let body = delta
        .split("```yaml\n")
        .nth(1)
        .and_then(|b| b.split("\n```").next())
        .unwrap_or("");
    for line in body.lines() {
        let t = line.trim_start();
        assert!(
            t.starts_with("- ") || t.starts_with('#'),
            "not YAML: {line}\n{delta}"
        );
    }
}

#[test]
fn a_whole_page_follows_deltas_in_a_row_and_expand_without_uid_counts_as_one() {
    use crate::snapshot::delta::MAX_DELTAS_IN_ROW;
    let Some(corpus) = corpus_dir() else {
        return;
    };
    let steps = read_session(&corpus.join("sessions/megamenu-shop.jsonl"));
    let Some(snap) = steps.iter().find(|s| s.tool == "take_snapshot") else {
        panic!("no take_snapshot");
    };
    let mut s = session(Level::Moderate, true);
    send(&mut s, snap);
    for _ in 0..MAX_DELTAS_IN_ROW {
        send(&mut s, snap);
        assert!(matches!(s.last_sent(), Some(Sent::Delta { .. })));
    }
    let full = send(&mut s, snap);
    assert_eq!(s.last_sent(), Some(Sent::Full(FullReason::InRow)));
    assert!(
        full.contains(&format!("full: after {MAX_DELTAS_IN_ROW} deltas in a row")),
        "{full}"
    );
    for _ in 0..MAX_DELTAS_IN_ROW - 1 {
        send(&mut s, snap);
    }
    // The agent asked for the whole page: the count starts again.
    let whole = expand(&mut s, json!({"pageId": snap.args["pageId"]}));
    assert!(whole.contains("RootWebArea"), "{whole}");
    send(&mut s, snap);
    assert!(matches!(s.last_sent(), Some(Sent::Delta { .. })));
}

#[test]
fn snapshots_read_from_structured_content_get_deltas_too() {
    // The default upstream is asked for structuredContent: its tree is what is filtered.
    let Some(corpus) = corpus_dir() else {
        return;
    };
    let file = corpus.join("chrome-devtools-mcp-structured/app-grid/take_snapshot.json");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap_or_default())
        .unwrap_or_default();
    let result = doc["result"].clone();
    assert!(
        result["structuredContent"]["snapshot"].is_object(),
        "{}",
        file.display()
    );
    let step = Step {
        tool: "take_snapshot".into(),
        args: json!({"pageId": 1}),
        result,
    };
    let mut s = session(Level::Moderate, true);
    let first = send(&mut s, &step);
    assert_eq!(
        s.last_sent(),
        Some(Sent::Full(FullReason::First)),
        "{first}"
    );
    let again = send(&mut s, &step);
    assert!(
        matches!(s.last_sent(), Some(Sent::Delta { counts, .. }) if counts.is_empty()),
        "{again}"
    );
    assert!(
        again.contains("snapshot 2: unchanged since snapshot 1"),
        "{again}"
    );
}

/// A kanban page of our own: a navigation of `links` links, two lists of cards ("Pending" and
/// "Done", each card a listitem holding a button), a footer. `pending` and `done` hold card
/// numbers; a card keeps its uids wherever it is (as a DOM node moved keeps its uid).
fn kanban(links: u32, pending: &[u32], done: &[u32], rename: Option<(u32, &str)>) -> String {
    let mut out = String::from("uid=1_0 RootWebArea \"Board\" url=\"http://127.0.0.1/board\"\n");
    out.push_str("  uid=1_1 navigation\n");
    for i in 0..links {
        out.push_str(&format!(
            "    uid=1_{} link \"nav link number {i}\" url=\"http://127.0.0.1/p{i}\"\n",
            10 + i
        ));
    }
    let card = |out: &mut String, c: u32| {
        let name = match rename {
            Some((r, name)) if r == c => name.to_string(),
            _ => format!("Task {c}: book the flights"),
        };
        out.push_str(&format!("      uid=1_{} listitem\n", 500 + 2 * c));
        out.push_str(&format!(
            "        uid=1_{} button \"{name}\"\n",
            501 + 2 * c
        ));
    };
    out.push_str("  uid=1_2 main\n");
    out.push_str("    uid=1_3 list \"Pending\"\n");
    for &c in pending {
        card(&mut out, c);
    }
    out.push_str("    uid=1_4 list \"Done\"\n");
    for &c in done {
        card(&mut out, c);
    }
    out.push_str("  uid=1_5 contentinfo\n    uid=1_6 StaticText \"Payment status: pending\"\n");
    out
}

fn take(s: &mut Session, body: &str) -> String {
    let text = format!("# take_snapshot response\n## Latest page snapshot\n{body}");
    let step = Step {
        tool: "take_snapshot".into(),
        args: json!({"pageId": 1}),
        result: json!({"content": [{"type": "text", "text": text}]}),
    };
    send(s, &step)
}

/// Issue 24 item 1: two cards swapped, or a card moved to the other list keeping its uids,
/// change no node's own line: the short form "unchanged" was sent. The whole shown tree is
/// compared now, and the moved nodes are counted.
#[test]
fn a_move_or_a_swap_is_never_unchanged() {
    for level in [Level::Moderate, Level::Aggressive] {
        let mut s = session(level, true);
        let pending: Vec<u32> = (1..=6).collect();
        let done: Vec<u32> = (7..=12).collect();
        take(&mut s, &kanban(80, &pending, &done, None));
        let same = take(&mut s, &kanban(80, &pending, &done, None));
        assert!(same.contains("unchanged since snapshot 1"), "{same}");
        // A card moved from Pending to Done.
        let mut pending: Vec<u32> = pending.into_iter().filter(|&c| c != 2).collect();
        let mut done = done;
        done.push(2);
        let moved = take(&mut s, &kanban(80, &pending, &done, None));
        assert!(!moved.contains("unchanged since"), "{level}: {moved}");
        // (At aggressive the page is small enough to be sent whole.)
        if level == Level::Moderate {
            assert!(moved.contains("Task 2: book the flights"), "{moved}");
            assert!(
                matches!(s.last_sent(), Some(Sent::Delta { counts, .. }) if counts.moved == 1),
                "{level}: {:?}\n{moved}",
                s.last_sent()
            );
            assert!(moved.contains(", 1 moved,"), "{moved}");
        }
        // Two cards swapped in their list.
        pending.swap(1, 2);
        let swapped = take(&mut s, &kanban(80, &pending, &done, None));
        assert!(!swapped.contains("unchanged since"), "{level}: {swapped}");
        if level == Level::Moderate {
            assert!(swapped.contains(", 1 moved,"), "{swapped}");
        }
    }
}

/// Issue 24 item 2: the client cancelled a `take_snapshot` and the upstream answered anyway;
/// the client dropped that answer, so it is not what the agent holds: the next snapshot is a
/// delta against what it did receive.
#[test]
fn an_answer_not_delivered_never_becomes_what_the_agent_holds() {
    let pending: Vec<u32> = (1..=6).collect();
    let done: Vec<u32> = (7..=12).collect();
    let before = kanban(80, &pending, &done, None);
    let failed = before.replace(
        "Payment status: pending",
        "Payment status: FAILED – card declined",
    );
    let mut s = session(Level::Moderate, true);
    take(&mut s, &before);
    take(&mut s, &failed);
    assert!(matches!(
        s.last_sent(),
        Some(Sent::Delta { against: 1, .. })
    ));
    // Cancelled: the answer above never reached the agent.
    s.answer_not_delivered();
    let next = take(&mut s, &failed);
    assert!(!next.contains("unchanged since"), "{next}");
    assert!(
        matches!(s.last_sent(), Some(Sent::Delta { against: 1, counts, .. }) if counts.changed == 1),
        "{:?}\n{next}",
        s.last_sent()
    );
    assert!(next.contains("FAILED – card declined"), "{next}");
    // Delivered: it is the base of the one after.
    let again = take(&mut s, &failed);
    assert!(again.contains("unchanged since snapshot 3"), "{again}");
    // Not delivered on a page's first snapshot: the next is full.
    let mut s = session(Level::Moderate, true);
    take(&mut s, &before);
    s.answer_not_delivered();
    take(&mut s, &before);
    assert_eq!(s.last_sent(), Some(Sent::Full(FullReason::First)));
}

/// Issue 24 item 4: a small snapshot (a modal) is sent as it came, the filtered one being no
/// shorter; the agent holds it all the same, and the next snapshot of the page is a delta.
#[test]
fn a_small_snapshot_sent_as_it_came_is_what_the_agent_holds() {
    let modal = |status: &str| {
        format!(
            "uid=3_0 RootWebArea \"Checkout\" url=\"http://127.0.0.1/pay\"\n  uid=3_1 dialog \"Confirm payment\" modal\n    uid=3_2 heading \"Confirm payment\" level=\"2\"\n    uid=3_3 StaticText \"Card ending 4242, 49.00 EUR\"\n    uid=3_4 StaticText \"{status}\"\n    uid=3_5 button \"Pay now\"\n    uid=3_6 button \"Cancel\"\n    uid=3_7 checkbox \"Remember this card\"\n    uid=3_8 link \"Terms of sale\" url=\"http://127.0.0.1/terms\"\n"
        )
    };
    let mut s = session(Level::Moderate, true);
    let first = take(&mut s, &modal("Payment status: pending"));
    assert!(
        first.contains("uid=3_0 RootWebArea"),
        "sent as it came: {first}"
    );
    assert_eq!(s.last_sent(), None);
    let second = take(&mut s, &modal("Payment status: pending"));
    assert!(second.contains("unchanged since snapshot 1"), "{second}");
    let third = take(&mut s, &modal("Payment status: FAILED"));
    // A delta would not be much smaller: the page as it came again.
    assert!(third.contains("Payment status: FAILED"), "{third}");
    assert!(!third.contains("unchanged since"), "{third}");
}

/// Issue 24 item 3: the header counts shown nodes; a change behind a marker (a card renamed
/// among the hidden records) is named with its uid and the call that shows it.
#[test]
fn a_change_behind_a_marker_is_named_with_the_call_that_shows_it() {
    let pending: Vec<u32> = (1..=12).collect();
    let done: Vec<u32> = (13..=24).collect();
    let mut s = session(Level::Moderate, true);
    let first = take(&mut s, &kanban(40, &pending, &done, None));
    assert!(
        first.contains("hidden (button 4, listitem 4; uid 1_542…1_549)"),
        "{first}"
    );
    let renamed = take(
        &mut s,
        &kanban(40, &pending, &done, Some((24, "Task 24: cancelled"))),
    );
    assert!(
        matches!(s.last_sent(), Some(Sent::Delta { counts, .. })
            if counts.changed == 0 && counts.added == 0 && counts.behind == 1),
        "{:?}\n{renamed}",
        s.last_sent()
    );
    let header = renamed
        .lines()
        .find(|l| l.contains("delta against"))
        .unwrap_or("");
    assert!(
        header.contains("0 added, 0 changed, 0 removed")
            && header.contains(
                "behind a marker: 1 added or changed (uid 1_549): expand_snapshot uid=1_542 until=1_548"
            ),
        "{renamed}"
    );
    // The call named shows the change.
    let shown = expand(
        &mut s,
        json!({"uid": "1_542", "until": "1_548", "pageId": 1}),
    );
    assert!(shown.contains("Task 24: cancelled"), "{shown}");
}
