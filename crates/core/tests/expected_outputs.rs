//! The regression gate: what the filter sends for a chosen set of real inputs, committed as
//! expected outputs (`tests/expected/`) and compared here, the way lightningcss and oxc do it.
//!
//! Inputs (`tests/fixtures/`, copied from the shared corpus and `__test__/fixtures/`, so a
//! clone needs nothing beside it):
//! - `pages/<upstream>/<page>/<tool>[.<variant>].json`: one call (the corpus' file format) through
//!   a fresh `Session` at every level and at `moderate` under a 2,000-token budget, with the
//!   proxy tools' answer to the first marker's `expand_snapshot` and to one `search_snapshot`
//!   where the output has a marker;
//! - `sessions/<name>.jsonl`: a recorded session, step by step through one `Session` at
//!   `moderate` and at `aggressive` (snapshot deltas on, their default), one file per step;
//! - `lists/<server>.<method>.json`: a `tools/list` (`prompts/list`, …) result at every level.
//!
//! A change to the filter that alters an output fails here with the first differences shown.
//! When the change is meant, regenerate and commit the diff with the reason:
//!
//!     UPDATE_EXPECT=1 cargo test -p mcp-snapshot-filter-core --test expected_outputs
//!
//! Each expected file is the client's view as text (each content block's text verbatim, other
//! members as pretty JSON), so `git diff` of a regeneration reads like the output itself.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use mcp_snapshot_filter_core::level::Level;
use mcp_snapshot_filter_core::session::{Session, SessionOptions};
use mcp_snapshot_filter_core::snapshot::marker::read_marker;
use serde_json::Value;

const UPDATE_VAR: &str = "UPDATE_EXPECT";
/// Files whose differences are printed in full (the rest are only named).
const SHOWN_DIFFS: usize = 3;
/// Changed lines printed per file.
const SHOWN_LINES: usize = 24;
/// The query of the `search_snapshot` call run on every page whose output has a marker.
const SEARCH_QUERY: &str = "button";
/// The token budget of each page's extra run at `moderate`, small enough that the budget's
/// ladder gives way on most snapshots.
const SMALL_BUDGET: usize = 2_000;

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// One call as the corpus stores it.
struct Call {
    /// `tools/call`, or a list method (`tools/list`, `prompts/list`, …).
    method: String,
    tool: String,
    arguments: Option<String>,
    result: Value,
}

/// Reads a corpus-format file: `{request: {method, params: {name, arguments}}, result}`, or the
/// replay fixtures' `{tool, result}`.
fn read_call(path: &Path) -> Call {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let json: Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let request = &json["request"];
    let method = request["method"]
        .as_str()
        .unwrap_or("tools/call")
        .to_string();
    let tool = request["params"]["name"]
        .as_str()
        .or_else(|| json["tool"].as_str())
        .unwrap_or("")
        .to_string();
    let arguments = request["params"].get("arguments").map(|a| a.to_string());
    Call {
        method,
        tool,
        arguments,
        result: json["result"].clone(),
    }
}

/// The steps of a recorded session (`{step, tool, args, result}` per line; step 0 is
/// `tools/list`).
fn read_session(path: &Path) -> Vec<Call> {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let step: Value =
                serde_json::from_str(line).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let tool = step["tool"].as_str().unwrap_or("").to_string();
            let (method, tool) = if tool.contains('/') {
                (tool, String::new())
            } else {
                ("tools/call".to_string(), tool)
            };
            Call {
                method,
                tool,
                arguments: step.get("args").map(|a| a.to_string()),
                result: step["result"].clone(),
            }
        })
        .collect()
}

/// What the client receives for one call through `session`, as text; with `proxy_tools`, then
/// the proxy tools' answers on it (pages only: in a session they would change what the agent
/// holds between the recorded steps).
fn run_call(session: &mut Session, call: &Call, proxy_tools: bool) -> String {
    let result_json = call.result.to_string();
    let mut out = String::new();
    let answer = if call.method == "tools/call" {
        let _ = writeln!(
            out,
            ">>> {} {}",
            call.tool,
            call.arguments.as_deref().unwrap_or("{}")
        );
        session.filter_tool_result(&call.tool, &result_json, call.arguments.as_deref())
    } else {
        let _ = writeln!(out, ">>> {}", call.method);
        session.compress_list_result(&call.method, &result_json)
    };
    match answer {
        Ok(Some(filtered)) => {
            let value: Value = serde_json::from_str(&filtered)
                .unwrap_or_else(|e| panic!("the filter sent a result that is not JSON: {e}"));
            out.push_str(&render_result(&value));
            if proxy_tools {
                proxy_tool_calls(session, &value, &mut out);
            }
        }
        Ok(None) => out.push_str(">>> forwarded unchanged\n"),
        Err(e) => {
            let _ = writeln!(out, ">>> error: {e}");
        }
    }
    if let Some(line) = session.take_stats_line() {
        let _ = writeln!(out, ">>> stats line (stderr): {line}");
    }
    out
}

/// The proxy tools on a filtered snapshot: the first marker's `expand_snapshot`, and one
/// `search_snapshot` (only where the output hid something, hence named the tools).
fn proxy_tool_calls(session: &mut Session, filtered: &Value, out: &mut String) {
    let text = texts(filtered).join("\n");
    let Some(marker) = text
        .lines()
        .map(read_marker)
        .find(|m| m.expand_uid.is_some())
    else {
        return;
    };
    let mut expand = serde_json::Map::new();
    if let Some(uid) = marker.expand_uid {
        expand.insert("uid".into(), uid.trim_end_matches('\'').into());
    }
    if let Some(until) = marker.until {
        expand.insert("until".into(), until.trim_end_matches('\'').into());
    }
    let search = serde_json::json!({ "query": SEARCH_QUERY });
    for (tool, arguments) in [
        ("expand_snapshot", Value::Object(expand)),
        ("search_snapshot", search),
    ] {
        let arguments = arguments.to_string();
        let _ = writeln!(out, "\n>>> {tool} {arguments}");
        match session.call_proxy_tool(tool, Some(&arguments)) {
            Ok(answer) => match serde_json::from_str::<Value>(&answer) {
                Ok(value) => out.push_str(&render_result(&value)),
                Err(e) => panic!("{tool} answered with text that is not JSON: {e}"),
            },
            Err(e) => {
                let _ = writeln!(out, ">>> error: {e}");
            }
        }
    }
}

/// The text blocks of a result.
fn texts(result: &Value) -> Vec<&str> {
    result["content"]
        .as_array()
        .map(|blocks| blocks.iter().filter_map(|b| b["text"].as_str()).collect())
        .unwrap_or_default()
}

/// A result as text: each content block's text verbatim under a `>>> content[i]` line, each
/// listed tool's, prompt's or resource's description verbatim under its name, any other
/// block and every other member as pretty JSON.
fn render_result(result: &Value) -> String {
    let mut out = String::new();
    let Value::Object(members) = result else {
        return format!("{}\n", pretty(result));
    };
    for (key, value) in members {
        match (key.as_str(), value.as_array()) {
            ("content", Some(blocks)) => {
                for (i, block) in blocks.iter().enumerate() {
                    match block["text"].as_str() {
                        Some(text) if block["type"] == "text" => {
                            let _ = writeln!(out, ">>> content[{i}] text");
                            verbatim(&mut out, text);
                        }
                        _ => {
                            let _ = writeln!(out, ">>> content[{i}]\n{}", pretty(block));
                        }
                    }
                }
            }
            ("tools" | "prompts" | "resources" | "resourceTemplates", Some(items)) => {
                for item in items {
                    let mut rest = item.clone();
                    let name = item["name"].as_str().unwrap_or("(no name)");
                    let _ = writeln!(out, ">>> {key}: {name}");
                    if let Some(Value::String(description)) =
                        rest.as_object_mut().and_then(|o| o.remove("description"))
                    {
                        verbatim(&mut out, &description);
                    }
                    if let Some(rest) = rest.as_object_mut() {
                        rest.remove("name");
                        if !rest.is_empty() {
                            let _ = writeln!(
                                out,
                                ">>> {name}: the rest\n{}",
                                pretty(&Value::Object(rest.clone()))
                            );
                        }
                    }
                }
            }
            _ => {
                let _ = writeln!(out, ">>> {key}\n{}", pretty(value));
            }
        }
    }
    out
}

/// A text as it is, marking a missing last newline so the next header stays on its own line.
fn verbatim(out: &mut String, text: &str) {
    out.push_str(text);
    if !text.ends_with('\n') {
        out.push_str("\n>>> (no newline at the end)\n");
    }
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|e| format!("(unprintable: {e})"))
}

/// Every expected file's path (relative to `tests/expected/`) and content, computed now.
fn actual_outputs() -> BTreeMap<PathBuf, String> {
    let fixtures = crate_dir().join("tests/fixtures");
    let mut outputs = BTreeMap::new();
    for path in files_under(&fixtures.join("pages"), "json") {
        let call = read_call(&path);
        let case = relative_case(&fixtures, &path);
        for level in Level::ALL {
            let mut session = Session::new(SessionOptions::for_level(level));
            outputs.insert(
                case.join(format!("{level}.txt")),
                run_call(&mut session, &call, true),
            );
        }
        // The budget's ladder: most pages are under the default budget.
        let mut options = SessionOptions::for_level(Level::Moderate);
        options.max_tokens = SMALL_BUDGET;
        let mut session = Session::new(options);
        outputs.insert(
            case.join(format!("moderate-budget-{SMALL_BUDGET}.txt")),
            run_call(&mut session, &call, true),
        );
    }
    for path in files_under(&fixtures.join("lists"), "json") {
        let call = read_call(&path);
        let case = relative_case(&fixtures, &path);
        for level in Level::ALL {
            let mut session = Session::new(SessionOptions::for_level(level));
            outputs.insert(
                case.join(format!("{level}.txt")),
                run_call(&mut session, &call, true),
            );
        }
    }
    for path in files_under(&fixtures.join("sessions"), "jsonl") {
        let steps = read_session(&path);
        let case = relative_case(&fixtures, &path);
        for level in [Level::Moderate, Level::Aggressive] {
            let options = SessionOptions::for_level(level);
            assert!(
                options.snapshot_deltas,
                "sessions are recorded with deltas on"
            );
            let mut session = Session::new(options);
            for (i, step) in steps.iter().enumerate() {
                let name = format!("{level}/{i:02}-{}.txt", step_name(step));
                outputs.insert(case.join(name), run_call(&mut session, step, false));
            }
        }
    }
    assert!(
        outputs.len() > 100,
        "the fixtures are missing: {} outputs",
        outputs.len()
    );
    outputs
}

fn step_name(step: &Call) -> String {
    if step.method == "tools/call" {
        step.tool.clone()
    } else {
        step.method.replace('/', "-")
    }
}

/// `pages/x/y.json` → `pages/x/y`.
fn relative_case(root: &Path, path: &Path) -> PathBuf {
    let relative = path.strip_prefix(root).unwrap_or(path);
    relative.with_extension("")
}

/// Files under `root` ending in `.ext`, sorted, with no recursion limit.
fn files_under(root: &Path, ext: &str) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for path in entries.flatten().map(|e| e.path()) {
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == ext) {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The changed middle of two texts (common first and last lines trimmed), as `-`/`+` lines
/// with the line number where they start: enough to see a change, short for a big one.
fn diff(expected: &str, actual: &str) -> String {
    let e: Vec<&str> = expected.lines().collect();
    let a: Vec<&str> = actual.lines().collect();
    let head = e.iter().zip(&a).take_while(|(x, y)| x == y).count();
    let tail = e[head..]
        .iter()
        .rev()
        .zip(a[head..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (gone, came) = (&e[head..e.len() - tail], &a[head..a.len() - tail]);
    let mut out = format!(
        "@@ line {}: {} line(s) expected, {} line(s) now @@\n",
        head + 1,
        gone.len(),
        came.len()
    );
    if head > 0 {
        let _ = writeln!(out, "  {}", clip(e[head - 1], 0));
    }
    for (sign, lines, other) in [('-', gone, came), ('+', came, gone)] {
        for (i, line) in lines.iter().take(SHOWN_LINES).enumerate() {
            // A long line is shown around where it first differs from its counterpart.
            let at = other.get(i).map_or(0, |o| first_difference(line, o));
            let _ = writeln!(out, "{sign} {}", clip(line, at));
        }
        if lines.len() > SHOWN_LINES {
            let _ = writeln!(out, "{sign} … {} more", lines.len() - SHOWN_LINES);
        }
    }
    if expected.ends_with('\n') != actual.ends_with('\n') && gone.is_empty() && came.is_empty() {
        out.push_str("(only the newline at the end differs)\n");
    }
    out
}

/// Characters of a line shown around its first difference.
const SHOWN_CHARS: usize = 160;

/// The byte offset where `a` first differs from `b`.
fn first_difference(a: &str, b: &str) -> usize {
    a.char_indices()
        .zip(b.chars())
        .find(|((_, x), y)| x != y)
        .map_or(a.len().min(b.len()), |((i, _), _)| i)
}

/// `line`, or a window of it around byte `at` when it is long.
fn clip(line: &str, at: usize) -> String {
    if line.chars().count() <= 2 * SHOWN_CHARS {
        return line.to_string();
    }
    let chars: Vec<(usize, char)> = line.char_indices().collect();
    let centre = chars.iter().position(|(i, _)| *i >= at).unwrap_or(0);
    let start = centre.saturating_sub(SHOWN_CHARS / 2);
    let end = (start + SHOWN_CHARS).min(chars.len());
    let window: String = chars[start..end].iter().map(|(_, c)| c).collect();
    let before = if start > 0 { "…" } else { "" };
    let after = if end < chars.len() { "…" } else { "" };
    format!("{before}{window}{after}")
}

#[test]
fn every_output_is_the_expected_one() {
    let expected_dir = crate_dir().join("tests/expected");
    let actual = actual_outputs();
    let on_disk: BTreeMap<PathBuf, String> = files_under(&expected_dir, "txt")
        .into_iter()
        .map(|p| {
            let text = fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (
                p.strip_prefix(&expected_dir).unwrap_or(&p).to_path_buf(),
                text,
            )
        })
        .collect();

    if std::env::var_os(UPDATE_VAR).is_some() {
        for path in on_disk.keys().filter(|p| !actual.contains_key(*p)) {
            fs::remove_file(expected_dir.join(path)).expect("remove a stale expected output");
        }
        for (path, text) in &actual {
            if on_disk.get(path) != Some(text) {
                let file = expected_dir.join(path);
                fs::create_dir_all(file.parent().expect("an expected file has a folder"))
                    .expect("create the expected outputs' folder");
                fs::write(&file, text).expect("write an expected output");
            }
        }
        eprintln!(
            "{UPDATE_VAR}: {} expected outputs written under {}",
            actual.len(),
            expected_dir.display()
        );
        return;
    }

    let mut report = String::new();
    let mut changed = 0;
    for (path, text) in &actual {
        let Some(old) = on_disk.get(path) else {
            changed += 1;
            let _ = writeln!(report, "new output (no expected file): {}", path.display());
            continue;
        };
        if old == text {
            continue;
        }
        changed += 1;
        if changed <= SHOWN_DIFFS {
            let _ = writeln!(report, "--- {}\n{}", path.display(), diff(old, text));
        } else {
            let _ = writeln!(report, "also changed: {}", path.display());
        }
    }
    let stale: Vec<_> = on_disk
        .keys()
        .filter(|p| !actual.contains_key(*p))
        .collect();
    for path in &stale {
        let _ = writeln!(report, "expected file no input makes: {}", path.display());
    }
    assert!(
        changed == 0 && stale.is_empty(),
        "{changed} of {} outputs differ from tests/expected/ ({} stale):\n{report}\n\
         If the change is meant, regenerate them and say why in the commit:\n    \
         {UPDATE_VAR}=1 cargo test -p mcp-snapshot-filter-core --test expected_outputs",
        actual.len(),
        stale.len()
    );
}
