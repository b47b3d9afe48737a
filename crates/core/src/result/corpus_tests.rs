//! Whole-response filtering over the real corpus (chrome-devtools-mcp 1.11, plain and
//! structured passes), at every level: properties that must hold for every result, and
//! hand-checked expectations on the noisy app page, which has every console level and request
//! kind.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::level::Level;
use crate::result::console::always_kept;
use crate::result::ids::parse_id_ranges;
use crate::result::network::{classify_url, is_failed, parse_request_line, RequestKind};
use crate::result::sections::{split_sections, SectionKind};
use crate::result::{filter_tool_result, ResultOptions};
use crate::session::{Session, SessionOptions};
use crate::stats::StatsMode;
use crate::test_support::{corpus_dir, has_corpus, note_samples_only, shipped};
use regex::Regex;
use serde_json::Value;

/// A captured `tools/call`: tool name, arguments JSON, result.
struct Capture {
    path: PathBuf,
    tool: String,
    arguments: String,
    result: Value,
}

fn captures(corpus: &Path) -> Vec<Capture> {
    let mut out = Vec::new();
    for server in ["chrome-devtools-mcp", "chrome-devtools-mcp-structured"] {
        let Ok(pages) = std::fs::read_dir(corpus.join(server)) else {
            continue;
        };
        let mut pages: Vec<PathBuf> = pages.flatten().map(|e| e.path()).collect();
        pages.sort();
        for page in pages.into_iter().filter(|p| p.is_dir()) {
            let mut files: Vec<PathBuf> = std::fs::read_dir(&page)
                .map(|d| d.flatten().map(|e| e.path()).collect())
                .unwrap_or_default();
            files.sort();
            for path in files
                .into_iter()
                .filter(|p| p.extension().is_some_and(|e| e == "json"))
            {
                let Ok(text) = std::fs::read_to_string(&path) else {
                    continue;
                };
                let Ok(json) = serde_json::from_str::<Value>(&text) else {
                    continue;
                };
                let params = &json["request"]["params"];
                let (Some(tool), Some(result)) = (params["name"].as_str(), json.get("result"))
                else {
                    continue;
                };
                if result.get("content").is_none() {
                    continue;
                }
                out.push(Capture {
                    path: path.clone(),
                    tool: tool.to_string(),
                    arguments: params["arguments"].to_string(),
                    result: result.clone(),
                });
            }
        }
    }
    out
}

fn text_of(result: &Value) -> String {
    result["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|b| b["type"] == "text")
        .filter_map(|b| b["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

fn filtered(capture: &Capture, level: Level) -> Option<Value> {
    let options = ResultOptions::for_level(level).with_arguments(Some(&capture.arguments));
    let json = capture.result.to_string();
    filter_tool_result(&capture.tool, &json, &options)
        .unwrap_or_else(|e| panic!("{}: {e}", capture.path.display()))
        .map(|f| serde_json::from_str(&f.json).expect("filtered result is JSON"))
}

static SUMMARY_IDS: once_cell::sync::Lazy<Regex> =
    once_cell::sync::Lazy::new(|| Regex::new(r"(?:reqid|msgid)=([0-9][0-9,\-]*)").expect("regex"));

/// Ids named in the `[hidden …]` summary lines of a text.
fn ids_named_in_summaries(text: &str) -> BTreeSet<u64> {
    text.lines()
        .filter(|l| l.starts_with("[hidden "))
        .flat_map(|l| SUMMARY_IDS.captures_iter(l).collect::<Vec<_>>())
        .filter_map(|c| c.get(1).map(|m| parse_id_ranges(m.as_str())))
        .flatten()
        .collect()
}

fn listed_ids(text: &str, prefix: &str) -> BTreeSet<u64> {
    text.lines()
        .filter_map(|l| l.strip_prefix(prefix))
        .filter_map(|rest| rest.split(' ').next()?.parse().ok())
        .collect()
}

#[test]
fn every_corpus_result_keeps_its_invariants_at_every_level() {
    let Some(captures) = corpus_or_sample_captures() else {
        return;
    };
    if has_corpus() {
        assert!(captures.len() > 200, "corpus too small: {}", captures.len());
    }
    let mut changed = 0;
    for capture in &captures {
        let name = capture.path.display().to_string();
        assert!(
            filtered(capture, Level::Off).is_none(),
            "{name}: off changed it"
        );
        for level in [Level::Light, Level::Moderate, Level::Aggressive] {
            let Some(out) = filtered(capture, level) else {
                continue;
            };
            changed += 1;
            check_result(capture, &out, &name);
        }
    }
    // Hundreds of corpus results change; of the samples, 14 over the three lossy levels.
    let expected = if has_corpus() { 50 } else { 12 };
    assert!(changed > expected, "only {changed} results changed");
}

fn check_result(capture: &Capture, out: &Value, name: &str) {
    let before = &capture.result;
    // Only text blocks change; images and everything beside `content` stay (except a dropped
    // structuredContent, and only because the text changed).
    let (Some(blocks_in), Some(blocks_out)) =
        (before["content"].as_array(), out["content"].as_array())
    else {
        panic!("{name}: content missing")
    };
    assert_eq!(blocks_in.len(), blocks_out.len(), "{name}");
    for (a, b) in blocks_in.iter().zip(blocks_out) {
        if a["type"] != "text" {
            assert_eq!(a, b, "{name}: non-text block changed");
        }
    }
    for key in ["isError", "_meta"] {
        assert_eq!(before.get(key), out.get(key), "{name}: {key} changed");
    }
    assert!(
        out.get("structuredContent").is_none(),
        "{name}: structuredContent kept"
    );

    let text_in = text_of(before);
    let text_out = text_of(out);
    assert!(text_out.len() < text_in.len(), "{name}: did not shrink");
    let is_error = before["isError"] == true;
    let blank = |t: &str| t.split('\n').filter(|l| l.is_empty()).count();
    assert!(
        blank(&text_out) <= blank(&text_in),
        "{name}: blank lines added"
    );

    // Sections without a filter come through byte for byte, and the error section last.
    for section in split_sections(&text_in, is_error) {
        let passthrough = match section.kind {
            SectionKind::Snapshot | SectionKind::NetworkList | SectionKind::ConsoleList => false,
            SectionKind::Message => capture.tool != "evaluate_script",
            _ => true,
        };
        if passthrough {
            assert!(
                text_out.contains(section.text),
                "{name}: {:?} changed",
                section.kind
            );
        }
        if section.kind == SectionKind::Error {
            assert!(text_out.ends_with(section.text), "{name}: error line moved");
        }
    }

    // Every hidden reqid/msgid is named in a summary line, and no summary names a kept one.
    let named = ids_named_in_summaries(&text_out);
    for prefix in ["reqid=", "msgid="] {
        let ids_in = listed_ids(&text_in, prefix);
        let ids_out = listed_ids(&text_out, prefix);
        for id in ids_in.difference(&ids_out) {
            assert!(
                named.contains(id),
                "{name}: {prefix}{id} hidden but not named"
            );
        }
    }

    // Failed requests and possible documents/XHR/fetch stay, line for line.
    for line in text_in.lines() {
        if let Some(request) = parse_request_line(line) {
            // Failed by the test's own reading of the status, not the filter's.
            let failed = !request.status.parse::<u16>().is_ok_and(|code| code < 400);
            assert_eq!(failed, is_failed(request.status), "{name}: {line}");
            if failed || classify_url(request.url) == RequestKind::Other {
                assert!(text_out.lines().any(|l| l == line), "{name}: lost {line}");
            }
        }
        if let Some(rest) = line.strip_prefix("msgid=") {
            let ty = rest.split(['[', ']']).nth(1).unwrap_or("");
            if always_kept(ty) {
                assert!(text_out.lines().any(|l| l == line), "{name}: lost {line}");
            }
        }
    }

    // evaluate_script: the fence survives and holds valid JSON when it did before.
    if capture.tool == "evaluate_script" {
        let payload = |t: &str| t.split('\n').nth(2).map(str::to_string);
        let lines: Vec<&str> = text_out.split('\n').collect();
        assert_eq!(lines.get(1), Some(&"```json"), "{name}");
        assert_eq!(lines.get(3), Some(&"```"), "{name}");
        if let Some(p) = payload(&text_in) {
            if serde_json::from_str::<Value>(&p).is_ok() {
                let q = payload(&text_out).unwrap_or_default();
                assert!(
                    serde_json::from_str::<Value>(&q).is_ok(),
                    "{name}: invalid JSON"
                );
            }
        }
    }
}

fn noisy(corpus: &Path, file: &str) -> Capture {
    let path = corpus.join("chrome-devtools-mcp/app-noisy").join(file);
    captures(corpus)
        .into_iter()
        .find(|c| c.path == path)
        .unwrap_or_else(|| panic!("missing {}", path.display()))
}

/// Every corpus capture; without the corpus (outside CI), the tool results `samples/` ships
/// (real chrome-devtools-mcp results, copies of corpus files). `None` only under a failing CI.
fn corpus_or_sample_captures() -> Option<Vec<Capture>> {
    if has_corpus() || std::env::var_os("CI").is_some() {
        return corpus_dir().map(|corpus| captures(&corpus));
    }
    note_samples_only();
    let mut files: Vec<PathBuf> = std::fs::read_dir(shipped("samples"))
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    files.sort();
    let mut out = Vec::new();
    for path in files
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
    {
        let text = std::fs::read_to_string(&path).expect("a shipped sample");
        let json: Value = serde_json::from_str(&text).expect("sample JSON");
        let params = &json["request"]["params"];
        if let (Some(tool), Some(result)) = (params["name"].as_str(), json.get("result")) {
            if result.get("content").is_some() {
                out.push(Capture {
                    tool: tool.to_string(),
                    arguments: params["arguments"].to_string(),
                    result: result.clone(),
                    path,
                });
            }
        }
    }
    assert!(out.len() >= 6, "samples missing: {}", out.len());
    Some(out)
}

/// A noisy-page result that `samples/` ships a copy of (`samples/app-noisy.<file>`): from the
/// corpus when it is there, else from the sample, so the test checks real data either way.
fn noisy_shipped(file: &str) -> Capture {
    if has_corpus() || std::env::var_os("CI").is_some() {
        if let Some(corpus) = corpus_dir() {
            return noisy(&corpus, file);
        }
    }
    note_samples_only();
    let path = shipped(&format!("samples/app-noisy.{file}"));
    let text = std::fs::read_to_string(&path).expect("a shipped sample");
    let json: Value = serde_json::from_str(&text).expect("sample JSON");
    let params = &json["request"]["params"];
    Capture {
        tool: params["name"].as_str().expect("tool name").to_string(),
        arguments: params["arguments"].to_string(),
        result: json["result"].clone(),
        path,
    }
}

#[test]
fn noisy_network_list_hides_exactly_the_successful_static_files() {
    let capture = noisy_shipped("list_network_requests.json");
    let hidden = |level| {
        let out = text_of(&filtered(&capture, level).expect("filtered"));
        let ids: Vec<u64> = listed_ids(&text_of(&capture.result), "reqid=")
            .difference(&listed_ids(&out, "reqid="))
            .copied()
            .collect();
        (ids, out)
    };
    // Read off the list by hand: app.css, brand.ttf, logo/hero1/p0/p1/p2/logo .png (200).
    // theme-missing.css, missing-photo.jpg, the .gif/.webp/.woff2 are 404s and stay.
    let (moderate, text) = hidden(Level::Moderate);
    assert_eq!(
        moderate,
        vec![2432, 2434, 2437, 2438, 2439, 2440, 2448, 2455]
    );
    assert!(text.contains(
        "[hidden 8 of 34 requests (successful static files): 6 image reqid=2437-2440,2448,2455; \
         1 font reqid=2434; 1 stylesheet reqid=2432; get_network_request shows any]"
    ));
    assert!(text.contains("Showing 1-34 of 34 (Page 1 of 1).\n"));
    // Aggressive also hides the one successful script, widget.js.
    let (aggressive, _) = hidden(Level::Aggressive);
    assert_eq!(aggressive.len(), moderate.len() + 1);
    assert!(aggressive.contains(&2435));
    assert!(filtered(&capture, Level::Light).is_none());
}

#[test]
fn noisy_fetch_xhr_list_is_left_alone() {
    let Some(corpus) = corpus_dir() else { return };
    // Asking for fetch/xhr leaves that list alone.
    let fetch = noisy(&corpus, "list_network_requests.fetch-xhr.json");
    assert!(filtered(&fetch, Level::Aggressive).is_none());
}

#[test]
fn noisy_console_list_hides_debug_and_repeats_but_no_error_or_warning() {
    let capture = noisy_shipped("list_console_messages.json");
    let out = text_of(&filtered(&capture, Level::Moderate).expect("filtered"));
    let gone: Vec<u64> = listed_ids(&text_of(&capture.result), "msgid=")
        .difference(&listed_ids(&out, "msgid="))
        .copied()
        .collect();
    // 12 debug messages (2143, 2158, the polls) and the two repeated `render` counts.
    assert_eq!(
        gone,
        vec![2143, 2155, 2156, 2158, 2181, 2184, 2185, 2186, 2187, 2188, 2189, 2190, 2191, 2193]
    );
    assert!(out.contains("msgid=2154 [count] render: 1 (1 args)"));
    assert!(out.contains("msgid=2153 [assert]"));
    assert!(out.contains("msgid=2172 [issue]"));
    let aggressive = text_of(&filtered(&capture, Level::Aggressive).expect("filtered"));
    assert!(aggressive.contains("older log/info (latest 10 kept) msgid="));
}

#[test]
fn noisy_console_stack_traces_are_cut_only_when_that_saves() {
    let Some(corpus) = corpus_dir() else { return };
    // With stack traces: the aggressive limit (2 lines, cut only when that saves 2 or more)
    // cuts nothing the noisy page keeps; with 1 line, every 3-line trace is cut and named.
    let traces = noisy(&corpus, "list_console_messages.stack-traces.json");
    let out = text_of(&filtered(&traces, Level::Aggressive).expect("filtered"));
    assert!(!out.contains("stack traces cut"));
    let mut options = ResultOptions::for_level(Level::Moderate);
    options.limits.console.max_stack_lines = 1;
    let json = traces.result.to_string();
    let out = filter_tool_result(&traces.tool, &json, &options)
        .expect("ok")
        .expect("filtered");
    let out = text_of(&serde_json::from_str(&out.json).expect("json"));
    assert!(out.ends_with("Note: stack trace line and column numbers use 1-based indexing"));
    let summary = out
        .lines()
        .find(|l| l.starts_with("[hidden "))
        .expect("summary");
    assert!(
        summary.contains("stack traces cut msgid=2162,2166,2169,2171,2176,2177,2192;"),
        "{summary}"
    );
    // msgid=2169 (an error) had 3 stack lines: cut to 1, named, still listed.
    assert!(out.contains(
        "msgid=2169 [error] GET /api/orders failed with status 404 (2 args)\n  at  (noisy.html:48:58)\n  … 2 more stack lines\n"
    ));
}

#[test]
fn details_errors_and_non_heavy_tools_pass_untouched() {
    let Some(corpus) = corpus_dir() else { return };
    for capture in captures(&corpus) {
        let heavy = crate::result::tools::is_content_heavy(&capture.tool);
        if !heavy || capture.result["isError"] == true && text_of(&capture.result).len() < 1000 {
            for level in Level::ALL {
                assert!(
                    filtered(&capture, level).is_none(),
                    "{} changed",
                    capture.path.display()
                );
            }
        }
    }
}

#[test]
fn structured_content_is_dropped_without_a_schema_and_kept_with_one() {
    let Some(corpus) = corpus_dir() else { return };
    let path = corpus.join("chrome-devtools-mcp-structured/app-noisy/list_network_requests.json");
    let capture = captures(&corpus)
        .into_iter()
        .find(|c| c.path == path)
        .expect("structured capture");
    assert!(capture.result.get("structuredContent").is_some());
    let out = filtered(&capture, Level::Moderate).expect("filtered");
    assert!(out.get("structuredContent").is_none());
    let mut options = ResultOptions::for_level(Level::Moderate);
    options.has_output_schema = true;
    let kept = filter_tool_result(&capture.tool, &capture.result.to_string(), &options)
        .expect("ok")
        .expect("filtered");
    let kept: Value = serde_json::from_str(&kept.json).expect("json");
    assert_eq!(
        kept["structuredContent"],
        capture.result["structuredContent"]
    );
}

#[test]
fn session_appends_or_holds_the_stats_line() {
    let capture = noisy_shipped("list_network_requests.json");
    let json = capture.result.to_string();
    let mut inline = Session::new(SessionOptions::for_level(Level::Moderate));
    let out = inline
        .filter_tool_result(&capture.tool, &json, Some(&capture.arguments))
        .expect("ok")
        .expect("filtered");
    let out: Value = serde_json::from_str(&out).expect("json");
    let text = text_of(&out);
    let last = text.lines().last().unwrap_or("");
    assert!(
        last.starts_with("[mcp-snapshot-filter: 2.4 KB → "),
        "{last}"
    );
    assert!(
        last.ends_with("over 1 calls (−") || last.contains("| session: "),
        "{last}"
    );
    assert!(inline.take_stats_line().is_none());

    let mut options = SessionOptions::for_level(Level::Moderate);
    options.stats = StatsMode::Stderr;
    let mut stderr = Session::new(options);
    let out = stderr
        .filter_tool_result(&capture.tool, &json, Some(&capture.arguments))
        .expect("ok")
        .expect("filtered");
    assert!(!out.contains("[mcp-snapshot-filter:"));
    let line = stderr.take_stats_line().expect("stats line held");
    // On stderr the tool is named and the proxy's log adds the `[mcp-snapshot-filter]` prefix.
    let body = line
        .strip_prefix("list_network_requests: ")
        .expect("named tool");
    assert_eq!(format!("[mcp-snapshot-filter: {body}]"), last);
    assert!(stderr.take_stats_line().is_none());
    // An unfiltered result counts as seen but not as a filtered call.
    // chrome-devtools-mcp 1.11's answer to navigate_page on the noisy page (corpus, verbatim).
    let navigate = r###"{"content":[{"type":"text","text":"Successfully navigated to http://127.0.0.1:8765/app/noisy.html.\n## Pages\n1: Orders dashboard (debug build) (http://127.0.0.1:8765/app/noisy.html) [selected]"}]}"###;
    assert!(stderr
        .filter_tool_result("navigate_page", navigate, None)
        .expect("ok")
        .is_none());
    assert!(
        stderr
            .summary()
            .contains("shrinking 1 of 2 results of filtered tools"),
        "{}",
        stderr.summary()
    );
}

#[test]
fn whole_response_filters_exactly_as_the_result_alone() {
    let Some(all) = corpus_or_sample_captures() else {
        return;
    };
    assert!(!all.is_empty());
    // Two sessions side by side: same options, same history, so same stats lines and cache.
    let mut by_result = Session::new(SessionOptions::for_level(Level::Moderate));
    let mut by_response = Session::new(SessionOptions::for_level(Level::Moderate));
    let mut changed = 0;
    for (n, capture) in all.iter().enumerate() {
        let response = serde_json::json!({"jsonrpc": "2.0", "id": n, "result": capture.result});
        let expected = by_result
            .filter_tool_result(
                &capture.tool,
                &capture.result.to_string(),
                Some(&capture.arguments),
            )
            .expect("result filters");
        let got = by_response
            .filter_tool_response(
                &capture.tool,
                &response.to_string(),
                Some(&capture.arguments),
            )
            .expect("response filters");
        match (expected, got) {
            (None, None) => {}
            (Some(result), Some(got)) => {
                changed += 1;
                let mut want = response.clone();
                want["result"] = serde_json::from_str(&result).expect("json");
                // Byte-equal, keys in the upstream's order.
                assert_eq!(got, want.to_string(), "{}", capture.path.display());
            }
            (e, g) => panic!(
                "{}: result {:?} vs response {:?}",
                capture.path.display(),
                e.is_some(),
                g.is_some()
            ),
        }
    }
    assert!(changed > 0);
    assert_eq!(by_result.summary(), by_response.summary());
    // Not a response: an error the proxy logs before forwarding the original.
    assert!(by_response
        .filter_tool_response("take_snapshot", r#"{"jsonrpc":"2.0","id":1}"#, None)
        .is_err());
}

/// The binding's JSON-only path, which does not estimate the tokens of figures no caller reads,
/// writes what `filter_tool_result` writes, at every level, without a budget and under budgets
/// where tokens, characters or both decide (small enough that results go down the ladder).
#[test]
fn the_json_only_path_writes_what_the_figures_path_writes() {
    use crate::result::filter_tool_result_json;
    let Some(all) = corpus_or_sample_captures() else {
        return;
    };
    let mut fitted = 0;
    for level in [Level::Light, Level::Moderate, Level::Aggressive] {
        for (max_tokens, max_chars) in [(0, 0), (25_000, 50_000), (2_000, 0), (100_000, 5_000)] {
            let mut options = ResultOptions::for_level(level);
            options.max_tokens = max_tokens;
            options.max_chars = max_chars;
            for capture in &all {
                let json = capture.result.to_string();
                let with_figures =
                    filter_tool_result(&capture.tool, &json, &options).expect("result filters");
                fitted += usize::from(with_figures.as_ref().is_some_and(|f| {
                    max_tokens > 0 && f.figures.tokens_out() < f.figures.tokens_in()
                }));
                let json_only = filter_tool_result_json(&capture.tool, &json, &options)
                    .expect("result filters");
                assert_eq!(
                    json_only,
                    with_figures.map(|f| f.json),
                    "{} at {level:?}, budget {max_tokens}/{max_chars}",
                    capture.path.display()
                );
            }
        }
    }
    assert!(fitted > 0, "no result went through the budget");
}

/// The structured snapshots read from the result's text (as the filter reads them) give the
/// tree and the measure their `Value`s give, written compact or spaced.
#[test]
fn structured_snapshots_read_from_text_as_from_their_value() {
    use crate::notation::cdp::structured::StructuredSnapshot;
    use crate::result::structured::{read_result, size};
    let Some(captures) = corpus_or_sample_captures() else {
        return;
    };
    let mut trees = 0;
    for capture in &captures {
        let Some(structured) = capture.result.get("structuredContent") else {
            continue;
        };
        let text = text_of(&capture.result);
        let body = split_sections(&text, false)
            .into_iter()
            .find(|s| s.kind == SectionKind::Snapshot)
            .and_then(|s| s.text.split_once('\n').map(|(_, body)| body.to_string()));
        let from_value = structured
            .get("snapshot")
            .and_then(StructuredSnapshot::of_value);
        let expected = body.as_deref().and_then(|body| {
            let tree = from_value.as_ref()?.tree(body)?;
            Some(format!("{tree:?}"))
        });
        let json = serde_json::to_string(&capture.result).expect("JSON");
        let spaced = serde_json::to_string_pretty(&capture.result).expect("JSON");
        for json in [json, spaced] {
            let (_, read) = read_result(&json, false, true)
                .expect("JSON")
                .expect("an object");
            let read = read.expect("structuredContent");
            let name = capture.path.display();
            assert_eq!(read.removed, size(structured), "{name}");
            let snapshot = read.snapshot();
            let tree = body.as_deref().and_then(|body| {
                let tree = snapshot.as_ref()?.tree(body)?;
                Some(format!("{tree:?}"))
            });
            assert_eq!(tree, expected, "{name}");
            trees += usize::from(tree.is_some());
        }
    }
    if has_corpus() {
        assert!(trees > 0, "no structured snapshot read");
    }
}
