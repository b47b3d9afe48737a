//! The one exception to "requests pass through": a uid the agent was shown, that the page has
//! since renumbered, goes upstream as the same node's current uid (`snapshot::identity` says
//! which node that is, only when certain). Only the uid-carrying arguments of
//! chrome-devtools-mcp's input schemas are read (`uid`, `from_uid`, `to_uid`, `elements[].uid`
//! of `fill_form`, `args[].uid` of `evaluate_script`); only their string values change, each
//! spliced into the request's own text, every other byte as it came. A uid with no certain
//! match passes unchanged. An error answering such a request names the uid the upstream got:
//! it is written back as the one the agent sent (`write_back`).

use std::collections::HashMap;
use std::ops::Range;

use serde_json::value::RawValue;
use serde_json::Value;

use crate::envelope::span_in;
use crate::held::Held;
use crate::notation::upstream::Upstream;

/// The upstreams whose uids renumber: their uid arguments are read (`Upstream::uid_args`).
fn renumbering() -> impl Iterator<Item = &'static Upstream> {
    crate::notation::UPSTREAMS
        .iter()
        .copied()
        .filter(|u| u.notation.uids_renumber())
}

/// A request rewritten: its new text, and each uid sent upstream with the one the agent named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rewritten {
    pub line: String,
    pub uids: Vec<(String, String)>,
}

type Fields<'a> = HashMap<String, &'a RawValue>;

fn fields(raw: &str) -> Option<Fields<'_>> {
    serde_json::from_str(raw).ok()
}

/// `line` with the uids of its `tools/call` arguments that `held` knows as renumbered replaced
/// by their current ones; `None` when nothing changes (any other message, bad JSON, no such
/// uid).
pub fn rewrite_request(line: &str, held: &Held) -> Option<Rewritten> {
    let top = fields(line)?;
    let method: Value = serde_json::from_str(top.get("method")?.get()).ok()?;
    if method.as_str() != Some("tools/call") {
        return None;
    }
    let params = fields(top.get("params")?.get())?;
    let args = fields(params.get("arguments")?.get())?;
    // The page the uids are of, as the snapshot's page is keyed (`proxy_tools::page_key`).
    let page = match args
        .get("pageId")
        .map(|raw| serde_json::from_str(raw.get()))
    {
        Some(Ok(Value::Number(n))) => n.to_string(),
        Some(Ok(Value::String(s))) => s,
        _ => String::new(),
    };
    let mut spots: Vec<&RawValue> = renumbering()
        .flat_map(|u| u.uid_args)
        .filter_map(|k| args.get(*k).copied())
        .collect();
    for &list in renumbering().flat_map(|u| u.uid_lists) {
        let Some(items) = args
            .get(list)
            .and_then(|raw| serde_json::from_str::<Vec<&RawValue>>(raw.get()).ok())
        else {
            continue;
        };
        for item in items {
            if let Some(uid) = fields(item.get()).and_then(|f| f.get("uid").copied()) {
                spots.push(uid);
            }
        }
    }
    let mut edits: Vec<(Range<usize>, String)> = Vec::new();
    let mut uids = Vec::new();
    for raw in spots {
        let Ok(Value::String(uid)) = serde_json::from_str::<Value>(raw.get()) else {
            continue;
        };
        let Some(current) = held.current_uid(&page, &uid) else {
            continue;
        };
        let Some(span) = span_in(line, raw) else {
            continue;
        };
        edits.push((span, Value::String(current.to_string()).to_string()));
        uids.push((current.to_string(), uid));
    }
    if edits.is_empty() {
        return None;
    }
    edits.sort_by_key(|(span, _)| span.start);
    let mut out = String::with_capacity(line.len() + 16 * edits.len());
    let mut at = 0;
    for (span, text) in edits {
        // Two keys never share a value's text; an overlap would be a bug: keep the line.
        let before = line.get(at..span.start)?;
        out.push_str(before);
        out.push_str(&text);
        at = span.end;
    }
    out.push_str(line.get(at..)?);
    Some(Rewritten { line: out, uids })
}

/// An error answering a rewritten request (a JSON-RPC `error`, or a result with `isError`),
/// with each uid sent upstream written back as the one the agent named, where it stands as a
/// word of its own; `None` for any other answer, or when it names none of them.
pub fn write_back(line: &str, uids: &[(String, String)]) -> Option<String> {
    let top = fields(line)?;
    let raw = match (top.get("error"), top.get("result")) {
        (Some(error), _) => *error,
        (None, Some(result)) => {
            let is_error = fields(result.get())
                .and_then(|f| f.get("isError").map(|v| v.get() == "true"))
                .unwrap_or(false);
            if !is_error {
                return None;
            }
            *result
        }
        _ => return None,
    };
    let span = span_in(line, raw)?;
    let body = line.get(span.clone())?;
    let mut out = String::with_capacity(body.len());
    let mut rest = body;
    let mut changed = false;
    'scan: while !rest.is_empty() {
        for (sent, agent) in uids {
            if !sent.is_empty() && rest.starts_with(sent.as_str()) && word_ends(&out, rest, sent) {
                out.push_str(agent);
                rest = rest.get(sent.len()..).unwrap_or("");
                changed = true;
                continue 'scan;
            }
        }
        let Some(c) = rest.chars().next() else { break };
        out.push(c);
        rest = rest.get(c.len_utf8()..).unwrap_or("");
    }
    if !changed {
        return None;
    }
    Some(format!(
        "{}{out}{}",
        line.get(..span.start)?,
        line.get(span.end..)?
    ))
}

/// `word` at the start of `rest` stands alone: neither what was written before it nor what
/// follows it continues a uid.
fn word_ends(before: &str, rest: &str, word: &str) -> bool {
    let continues = |c: char| c.is_ascii_alphanumeric() || c == '_';
    !before.chars().next_back().is_some_and(continues)
        && !rest
            .get(word.len()..)
            .and_then(|r| r.chars().next())
            .is_some_and(continues)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::level::Level;
    use crate::session::{Session, SessionOptions};
    use crate::stats::StatsMode;

    const BEFORE: &str = "## Latest page snapshot\nuid=1_0 RootWebArea \"Shop\"\n  uid=1_1 main\n    uid=1_2 button \"Refresh\"\n    uid=1_3 \"#1\"\n    uid=1_4 button \"Edit\"\n    uid=1_5 \"#2\"\n    uid=1_6 button \"Edit\"\n    uid=1_7 textbox \"Note\"\n";

    fn result(text: &str) -> String {
        serde_json::json!({"content": [{"type": "text", "text": text}]}).to_string()
    }

    /// A session that was sent `BEFORE` on page 1, then the same page with rows re-rendered
    /// (`1_3`… renumbered to `2_3`…).
    fn renumbered_session() -> Session {
        let mut options = SessionOptions::for_level(Level::Moderate);
        options.stats = StatsMode::Off;
        let mut s = Session::new(options);
        let args = Some(r#"{"pageId":1}"#);
        s.filter_tool_result("take_snapshot", &result(BEFORE), args)
            .expect("first");
        let after = BEFORE
            .replace("1_3", "2_3")
            .replace("1_4", "2_4")
            .replace("1_5", "2_5")
            .replace("1_6", "2_6")
            .replace("1_7", "2_7");
        s.filter_tool_result("take_snapshot", &result(&after), args)
            .expect("second");
        s
    }

    fn rewrite(s: &Session, line: &str) -> Option<String> {
        rewrite_request(line, s.held()).map(|r| r.line)
    }

    #[test]
    fn a_renumbered_uid_goes_upstream_as_the_current_one_and_nothing_else_changes() {
        let s = renumbered_session();
        let line = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"click","arguments":{"pageId":1,"uid":"1_6","includeSnapshot":true, "x":1.0E2}}}"#;
        assert_eq!(
            rewrite(&s, line).as_deref(),
            Some(
                r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"click","arguments":{"pageId":1,"uid":"2_6","includeSnapshot":true, "x":1.0E2}}}"#
            )
        );
        // Every uid-carrying argument of the upstream's schemas.
        let drag = r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"drag","arguments":{"pageId":1,"from_uid":"1_4","to_uid":"1_6"}}}"#;
        assert_eq!(
            rewrite(&s, drag).as_deref(),
            Some(
                r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"drag","arguments":{"pageId":1,"from_uid":"2_4","to_uid":"2_6"}}}"#
            )
        );
        let form = r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"fill_form","arguments":{"pageId":1,"elements":[{"uid":"1_7","value":"1_7"},{"uid":"1_2","value":"x"}]}}}"#;
        assert_eq!(
            rewrite(&s, form).as_deref(),
            Some(
                r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"fill_form","arguments":{"pageId":1,"elements":[{"uid":"2_7","value":"1_7"},{"uid":"1_2","value":"x"}]}}}"#
            )
        );
        let script = r#"{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"evaluate_script","arguments":{"pageId":1,"function":"(e) => e.id","args":[{"uid":"1_5"}]}}}"#;
        assert_eq!(
            rewrite(&s, script).as_deref(),
            Some(
                r#"{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"evaluate_script","arguments":{"pageId":1,"function":"(e) => e.id","args":[{"uid":"2_5"}]}}}"#
            )
        );
    }

    #[test]
    fn a_uid_without_a_certain_match_passes_unchanged() {
        let s = renumbered_session();
        let call = |uid: &str, page: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"click","arguments":{{{page}"uid":"{uid}"}}}}}}"#
            )
        };
        // Kept by the upstream, current already, unknown, or of another page.
        for line in [
            call("1_2", r#""pageId":1,"#),
            call("2_6", r#""pageId":1,"#),
            call("9_9", r#""pageId":1,"#),
            call("1_6", r#""pageId":2,"#),
            call("1_6", ""),
        ] {
            assert_eq!(rewrite(&s, &line), None, "{line}");
        }
        // Not a tools/call, or not JSON.
        let list = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"arguments":{"pageId":1,"uid":"1_6"}}}"#;
        assert_eq!(rewrite(&s, list), None);
        assert_eq!(rewrite(&s, "{not json"), None);
    }

    #[test]
    fn an_error_naming_the_uid_sent_names_the_agents() {
        let uids = vec![("2_6".to_string(), "1_6".to_string())];
        let error = r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"Element with uid 2_6 no longer exists (not 2_66 or 12_6)."}],"isError":true}}"#;
        assert_eq!(
            write_back(error, &uids).as_deref(),
            Some(
                r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"Element with uid 1_6 no longer exists (not 2_66 or 12_6)."}],"isError":true}}"#
            )
        );
        let rpc = r#"{"jsonrpc":"2.0","id":"2_6","error":{"code":-32602,"message":"uid \"2_6\" not found"}}"#;
        assert_eq!(
            write_back(rpc, &uids).as_deref(),
            Some(
                r#"{"jsonrpc":"2.0","id":"2_6","error":{"code":-32602,"message":"uid \"1_6\" not found"}}"#
            )
        );
        // A result that is no error keeps its text: its snapshot is what the agent holds.
        let ok = r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"clicked 2_6"}]}}"#;
        assert_eq!(write_back(ok, &uids), None);
    }
}
