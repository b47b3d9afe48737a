//! The token budget over every corpus result and every step of the recorded sessions, at every
//! level and budgets of 25,000, 10,000 and 2,000 tokens under the default character bound
//! (50,000), and 25,000 tokens under 10,000 characters (a Copilot-style client): no result the
//! session hands back is over either (the stats line and markers included), `off` touches
//! nothing, and what a cut left out reads back whole through `read_result`.

use std::path::{Path, PathBuf};

use once_cell::sync::Lazy;
use regex::Regex;
use serde_json::{json, Value};

use crate::level::Level;
use crate::session::{Session, SessionOptions};
use crate::stats::StatsMode;
use crate::test_support::{corpus_dir, report};
use crate::tokens::estimate_tokens;

/// (where, tool, arguments JSON, result JSON).
type Call = (String, String, String, String);

fn corpus_calls(dir: &Path, out: &mut Vec<Call>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    for path in paths {
        if path.is_dir() {
            corpus_calls(&path, out);
            continue;
        }
        let is = |ext: &str| path.extension().is_some_and(|e| e == ext);
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        if is("json") {
            let Ok(json) = serde_json::from_str::<Value>(&text) else {
                continue;
            };
            let params = &json["request"]["params"];
            if let (Some(tool), Some(result)) = (params["name"].as_str(), json.get("result")) {
                if result.get("content").is_some() {
                    out.push((
                        path.display().to_string(),
                        tool.to_string(),
                        params["arguments"].to_string(),
                        result.to_string(),
                    ));
                }
            }
        } else if is("jsonl") {
            for (n, line) in text.lines().enumerate() {
                let Ok(step) = serde_json::from_str::<Value>(line) else {
                    continue;
                };
                let (Some(tool), Some(result)) = (step["tool"].as_str(), step.get("result")) else {
                    continue;
                };
                if result.get("content").is_some() {
                    out.push((
                        format!("{}:{}", path.display(), n + 1),
                        tool.to_string(),
                        step["args"].to_string(),
                        result.to_string(),
                    ));
                }
            }
        }
    }
}

fn all_calls() -> Option<Vec<Call>> {
    let corpus = corpus_dir()?;
    let mut calls = Vec::new();
    corpus_calls(&corpus, &mut calls);
    // Sessions recorded on pages the corpus does not hold (bench/record-session.js).
    match std::env::var_os("MCP_CAPTURED_DIR") {
        Some(dir) => corpus_calls(Path::new(&dir), &mut calls),
        None => report(
            "PARTLY SKIPPED",
            "MCP_CAPTURED_DIR not set: the budget ran over the corpus and its sessions only",
        ),
    }
    Some(calls)
}

fn texts(result: &Value) -> impl Iterator<Item = &str> {
    result["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|b| b["type"] == "text")
        .filter_map(|b| b["text"].as_str())
}

fn text_tokens(result: &Value) -> usize {
    texts(result).map(estimate_tokens).sum()
}

/// Characters of the text blocks as a JS string counts them (what Claude Code bounds at 50,000).
fn text_chars(result: &Value) -> usize {
    texts(result).map(|t| t.encode_utf16().count()).sum()
}

static READ_ON: Lazy<Regex> =
    Lazy::new(|| Regex::new(r"read_result id=(r[0-9]+) offset=([0-9]+)").expect("regex"));

fn session(level: Level, max_tokens: usize) -> Session {
    session_within(
        level,
        max_tokens,
        crate::snapshot::params::DEFAULT_MAX_CHARS,
    )
}

fn session_within(level: Level, max_tokens: usize, max_chars: usize) -> Session {
    let mut options = SessionOptions::for_level(level);
    options.max_tokens = max_tokens;
    options.max_chars = max_chars;
    options.proxy_tools = level != Level::Off;
    options.stats = StatsMode::Inline;
    Session::new(options)
}

/// Pages through `read_result` from a marker's id and offset; every page within the budget.
fn read_all(session: &mut Session, id: &str, offset: usize, max_tokens: usize) -> String {
    read_all_within(
        session,
        id,
        offset,
        max_tokens,
        crate::snapshot::params::DEFAULT_MAX_CHARS,
    )
}

fn read_all_within(
    session: &mut Session,
    id: &str,
    mut offset: usize,
    max_tokens: usize,
    max_chars: usize,
) -> String {
    let mut whole = String::new();
    for _ in 0..10_000 {
        let args = json!({"id": id, "offset": offset}).to_string();
        let answer: Value = serde_json::from_str(
            &session
                .call_proxy_tool("read_result", Some(&args))
                .expect("read_result"),
        )
        .expect("JSON");
        assert!(answer["isError"].is_null(), "{answer}");
        let text = answer["content"][0]["text"].as_str().unwrap_or_default();
        assert!(estimate_tokens(text) <= max_tokens);
        assert!(text.encode_utf16().count() <= max_chars);
        let Some((page, marker)) = text.rsplit_once('\n').filter(|(_, m)| READ_ON.is_match(m))
        else {
            whole.push_str(text);
            return whole;
        };
        let caps = READ_ON.captures(marker).expect("marker");
        whole.push_str(page);
        whole.push('\n');
        let next: usize = caps[2].parse().expect("offset");
        assert!(next > offset, "read_result must move on");
        offset = next;
    }
    panic!("read_result never ended");
}

#[test]
fn no_result_is_ever_over_the_budget() {
    let Some(calls) = all_calls() else {
        return;
    };
    assert!(calls.len() > 300, "{} calls", calls.len());
    let mut acted = 0usize;
    let mut cuts = 0usize;
    for (max_tokens, max_chars) in [
        (25_000usize, 50_000usize),
        (10_000, 50_000),
        (2_000, 50_000),
        (25_000, 10_000),
    ] {
        for level in [Level::Off, Level::Light, Level::Moderate, Level::Aggressive] {
            let mut session = session_within(level, max_tokens, max_chars);
            let mut read_back = false;
            for (where_, tool, args, result) in &calls {
                let out = session
                    .filter_tool_result(tool, result, Some(args))
                    .unwrap_or_else(|e| panic!("{where_}: {e}"));
                if level == Level::Off {
                    assert!(out.is_none(), "{where_}: off touched a result");
                    continue;
                }
                let Some(out) = out else {
                    let original: Value = serde_json::from_str(result).expect("JSON");
                    assert!(
                        text_tokens(&original) <= max_tokens,
                        "{where_} at {level:?}/{max_tokens}: forwarded over the budget"
                    );
                    assert!(
                        text_chars(&original) <= max_chars,
                        "{where_} at {level:?}/{max_chars} chars: forwarded over the bound"
                    );
                    continue;
                };
                let out: Value = serde_json::from_str(&out).expect("filtered JSON");
                let tokens = text_tokens(&out);
                assert!(
                    tokens <= max_tokens,
                    "{where_} at {level:?}: {tokens} tokens over the budget of {max_tokens}"
                );
                let chars = text_chars(&out);
                assert!(
                    chars <= max_chars,
                    "{where_} at {level:?}: {chars} characters over the bound of {max_chars}"
                );
                let text = out["content"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|b| b["text"].as_str())
                    .collect::<Vec<_>>()
                    .join("\n");
                if text.contains("| token budget ") {
                    acted += 1;
                }
                if let Some(caps) = READ_ON.captures(&text) {
                    cuts += 1;
                    // One cut per session read back whole: the pages join to the rest.
                    if !read_back {
                        read_back = true;
                        let offset: usize = caps[2].parse().expect("offset");
                        let rest =
                            read_all_within(&mut session, &caps[1], offset, max_tokens, max_chars);
                        assert!(!rest.is_empty(), "{where_}");
                    }
                }
            }
        }
    }
    assert!(
        acted > 0 && cuts > 0,
        "the budget never acted ({acted}, {cuts})"
    );
}

#[test]
fn a_cut_reads_back_exactly_and_stays_retrievable() {
    // A tool no filter knows, with a long result: cut at a line, the rest read back whole.
    let text: String = (0..5000)
        .map(|i| format!("trace event {i}: duration {}ms\n", i * 7))
        .collect();
    let result = json!({"content": [{"type": "text", "text": text}]}).to_string();
    let mut session = session(Level::Moderate, 2_000);
    let out = session
        .filter_tool_result("performance_stop_trace", &result, None)
        .expect("ok")
        .expect("cut");
    let out: Value = serde_json::from_str(&out).expect("JSON");
    let shown = out["content"][0]["text"].as_str().unwrap_or_default();
    assert!(estimate_tokens(shown) <= 2_000);
    assert!(shown.contains("token budget 2.0k: cut"), "{shown}");
    let caps = READ_ON.captures(shown).expect("a read_result marker");
    let offset: usize = caps[2].parse().expect("offset");
    let kept = &shown[..shown.find("\n[… cut at the token budget").expect("marker")];
    assert_eq!(&text[..offset], format!("{kept}\n"));
    let rest = read_all(&mut session, &caps[1], offset, 2_000);
    assert_eq!(format!("{kept}\n{rest}"), text);
    // Under the budget, a tool no filter knows is forwarded untouched.
    let small = json!({"content": [{"type": "text", "text": "ok"}]}).to_string();
    assert!(session
        .filter_tool_result("performance_stop_trace", &small, None)
        .expect("ok")
        .is_none());
}

#[test]
fn expand_and_search_answers_obey_the_budget_and_say_how_to_read_on() {
    let Some(corpus) = corpus_dir() else {
        return;
    };
    let path = corpus.join("chrome-devtools-mcp/rust-std-vec/take_snapshot.json");
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("corpus file")).expect("JSON");
    let mut session = session(Level::Moderate, 2_000);
    session
        .filter_tool_result("take_snapshot", &json["result"].to_string(), Some("{}"))
        .expect("ok")
        .expect("filtered");
    for (tool, args) in [
        ("expand_snapshot", json!({"uid": "1_0"})),
        ("search_snapshot", json!({"query": "vec", "limit": 200})),
    ] {
        let answer: Value = serde_json::from_str(
            &session
                .call_proxy_tool(tool, Some(&args.to_string()))
                .expect("answer"),
        )
        .expect("JSON");
        let text = answer["content"][0]["text"].as_str().unwrap_or_default();
        assert!(
            estimate_tokens(text) <= 2_000,
            "{tool}: {}",
            estimate_tokens(text)
        );
        let caps = READ_ON.captures(text).expect("a read_result marker");
        let offset: usize = caps[2].parse().expect("offset");
        let rest = read_all(&mut session, &caps[1], offset, 2_000);
        assert!(rest.len() > 1000, "{tool}");
    }
}

/// A step of the ladder that will not fit stops rendering once it is sure to be over
/// (`OutputCap`): over every corpus result and session step, at every lossy level, with
/// deltas and without (the proxy's default at `light`, and `filterToolResult`), under budgets
/// that take each step of the ladder, the results are byte for byte those of renders written
/// whole, and steps did give up (the work a rejected step is spared).
#[test]
fn a_step_that_gives_up_changes_no_result() {
    let Some(calls) = all_calls() else {
        return;
    };
    let gave_up = spared_without_changing_outputs(&super::GAVE_UP, "steps give up", || {
        let mut outs = Vec::new();
        for (max_tokens, max_chars) in [
            (25_000usize, 50_000usize),
            (2_000, 50_000),
            (25_000, 10_000),
        ] {
            for level in [Level::Light, Level::Moderate, Level::Aggressive] {
                for deltas in [false, true] {
                    let mut options = SessionOptions::for_level(level);
                    options.max_tokens = max_tokens;
                    options.max_chars = max_chars;
                    options.snapshot_deltas = deltas;
                    options.stats = StatsMode::Inline;
                    let mut session = Session::new(options);
                    for (where_, tool, args, result) in &calls {
                        let out = session
                            .filter_tool_result(tool, result, Some(args))
                            .unwrap_or_else(|e| panic!("{where_}: {e}"));
                        outs.push(out);
                    }
                }
            }
        }
        outs
    });
    assert!(gave_up > 100, "{gave_up} steps gave up");
}

/// The bound that spares the ladder a `light` step (`ParsedTrees::light_units_at_least`)
/// never exceeds what that step writes: over every corpus result and session step (text and
/// exact trees, both notations), the UTF-16 units of its text at `light` are at least the
/// bound, which is of use (over the default character bound) on the largest pages.
#[test]
fn the_light_bound_never_exceeds_the_light_output() {
    let Some(calls) = all_calls() else {
        return;
    };
    let options = crate::result::ResultOptions::for_level(Level::Light);
    let mut proven = 0usize;
    for (where_, tool, _, result) in &calls {
        if !crate::result::tools::is_content_heavy(tool) {
            continue;
        }
        // Read as `fit` reads it: the exact tree from `structuredContent`'s text.
        let Ok(Some((map, structured))) =
            crate::result::structured::read_result(result, false, true)
        else {
            continue;
        };
        let slots = 1 + map["content"].as_array().map_or(0, Vec::len);
        let mut implied = vec![Vec::new(); slots];
        let snapshot = structured
            .as_ref()
            .and_then(crate::result::structured::StructuredText::snapshot);
        let trees =
            crate::result::ParsedTrees::of(tool, &map, &mut implied, structured.as_ref(), snapshot);
        let bound = trees.light_units_at_least(usize::MAX);
        let out = crate::result::filter_tool_result_value(tool, result, &options)
            .unwrap_or_else(|e| panic!("{where_}: {e}"));
        let units = match out {
            Some(f) => crate::result::budget::text_chars(&f.result),
            None => crate::result::budget::text_chars(&map),
        };
        assert!(bound <= units, "{where_}: bound {bound} over {units} units");
        if bound > crate::snapshot::params::DEFAULT_MAX_CHARS {
            proven += 1;
        }
        // Counting stops at `enough`.
        assert_eq!(trees.light_units_at_least(bound / 2), bound / 2, "{where_}");
    }
    assert!(proven > 0, "the bound proved no light step over");
}

/// Steps the bound proves over are not run, and the results are those of the ladder run
/// step by step (`filterToolResult`'s path: no session, no deltas), under budgets where the
/// step after `light` sometimes fits and sometimes does not.
#[test]
fn a_light_step_proven_over_changes_no_result() {
    let Some(calls) = all_calls() else {
        return;
    };
    let deferred =
        spared_without_changing_outputs(&super::DEFERRED, "a light step is spared", || {
            let mut outs = Vec::new();
            for (max_tokens, max_chars) in [
                (25_000usize, 50_000usize),
                (10_000, 50_000),
                (25_000, 10_000),
            ] {
                let mut options = crate::result::ResultOptions::for_level(Level::Light);
                options.max_tokens = max_tokens;
                options.max_chars = max_chars;
                for (where_, tool, _, result) in &calls {
                    let out = crate::result::filter_tool_result(tool, result, &options)
                        .unwrap_or_else(|e| panic!("{where_}: {e}"));
                    outs.push(out.map(|f| f.json));
                }
            }
            outs
        });
    assert!(deferred > 0, "no light step proven over");
}

/// `outputs` run twice: first with every step rendered whole (`GIVING_UP` unset: the
/// reference, in which nothing is spared, so `counter` stays 0), then as the ladder runs
/// them. Both runs give the same outputs, each equal (`what` names the difference if not).
/// Returns what `counter` (reset before each run) counted in the second: the work spared.
fn spared_without_changing_outputs<T: PartialEq>(
    counter: &'static std::thread::LocalKey<std::cell::Cell<usize>>,
    what: &str,
    outputs: impl Fn() -> Vec<T>,
) -> usize {
    let run = |giving_up: bool| {
        super::GIVING_UP.with(|g| g.set(giving_up));
        counter.with(|n| n.set(0));
        let outs = outputs();
        let counted = counter.with(|n| n.get());
        super::GIVING_UP.with(|g| g.set(true));
        (outs, counted)
    };
    let (whole, none) = run(false);
    let (spared, counted) = run(true);
    assert_eq!(none, 0);
    assert_eq!(whole.len(), spared.len());
    for (i, (a, b)) in whole.iter().zip(&spared).enumerate() {
        assert!(a == b, "result {i} differs when {what}");
    }
    counted
}
