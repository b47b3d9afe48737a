//! An upstream that restarted, reconnected or relaunched its browser: every uid the agent held
//! is gone. The proxy learns it two ways: it restarted the upstream itself (or a remote one
//! came back under a new session: the bin says so), or the upstream says so in a result
//! (chrome-devtools-mcp's reconnect note). Either way nothing held before is a base for a delta
//! (`Held::forget_pages`), and the first `tools/call` result the client gets after it carries one
//! line saying what happened ([`insert_notice`]).

use std::collections::HashMap;

use serde_json::value::RawValue;
use serde_json::Value;

use crate::envelope::span_in;

/// The first line chrome-devtools-mcp (1.8 and later) writes in a result after its browser was
/// restarted or it reconnected to one (`McpResponse.format`); it then also sets
/// `structuredContent.reconnected`.
pub const RECONNECT_NOTE: &str =
    "Note: the browser was restarted or reconnected since the last call.";

/// The line the proxy adds after the upstream's own reconnect note.
pub const RECONNECT_NOTICE: &str = "[mcp-snapshot-filter: the upstream's browser was restarted or reconnected: uids changed; no snapshot sent before is a base for a delta, the next one is whole]";

/// True when a `tools/call` result (its JSON text) says the upstream's browser was restarted
/// or reconnected: its first text block begins with [`RECONNECT_NOTE`] (where the upstream
/// writes it, before any page text), or `structuredContent.reconnected` is `true`. Page text
/// holding the note elsewhere does not count. Only a result that holds either text at all is
/// parsed.
pub fn reconnected(result_json: &str) -> bool {
    if !result_json.contains(RECONNECT_NOTE) && !result_json.contains("\"reconnected\"") {
        return false;
    }
    let Ok(result) = serde_json::from_str::<Value>(result_json) else {
        return false;
    };
    let first_text = result
        .get("content")
        .and_then(Value::as_array)
        .and_then(|blocks| {
            blocks
                .iter()
                .find(|b| b.get("type") == Some(&"text".into()))
        })
        .and_then(|b| b.get("text"))
        .and_then(Value::as_str);
    first_text.is_some_and(|t| t.starts_with(RECONNECT_NOTE))
        || result.pointer("/structuredContent/reconnected") == Some(&Value::Bool(true))
}

/// `response_json` (a JSON-RPC response to `tools/call`) with `line` as a first text block of its
/// result's `content`; every other byte stays as it was. `None` when the response has no result
/// with a `content` array (an error, say): the line then waits for the next result.
pub fn insert_notice(response_json: &str, line: &str) -> Option<String> {
    // Values kept as their text (borrowed from `response_json`); the last of a repeated key wins,
    // as with JSON.parse.
    let members: HashMap<String, &RawValue> = serde_json::from_str(response_json).ok()?;
    let result = *members.get("result")?;
    let result_members: HashMap<String, &RawValue> = serde_json::from_str(result.get()).ok()?;
    let content = *result_members.get("content")?;
    let blocks: Vec<&RawValue> = serde_json::from_str(content.get()).ok()?;
    let span = span_in(response_json, content)?;
    let block = serde_json::json!({"type": "text", "text": line}).to_string();
    let at = span.start + 1; // after the array's `[`
    let mut out = String::with_capacity(response_json.len() + block.len() + 1);
    out.push_str(&response_json[..at]);
    out.push_str(&block);
    if !blocks.is_empty() {
        out.push(',');
    }
    out.push_str(&response_json[at..]);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_upstream_note_counts_only_where_the_upstream_writes_it() {
        let note = format!(
            r#"{{"content":[{{"type":"text","text":"{RECONNECT_NOTE} Page ids have changed.\n## Pages"}}]}}"#
        );
        assert!(reconnected(&note));
        let structured =
            r#"{"content":[{"type":"text","text":"ok"}],"structuredContent":{"reconnected":true}}"#;
        assert!(reconnected(structured));
        // Page text holding the note (a snapshot line) is not the upstream's note.
        let in_page = format!(
            r#"{{"content":[{{"type":"text","text":"Snapshot\nuid=1_2 StaticText \"{RECONNECT_NOTE}\""}}],"structuredContent":{{"snapshot":{{"name":"reconnected"}}}}}}"#
        );
        assert!(!reconnected(&in_page));
        assert!(!reconnected(
            r#"{"content":[],"structuredContent":{"reconnected":false}}"#
        ));
        assert!(!reconnected("not json"));
    }

    #[test]
    fn a_notice_goes_first_in_the_content_and_nothing_else_changes() {
        let response = r#"{"jsonrpc":"2.0","id":12345678901234567891,"result":{"content":[{"type":"text","text":"a"}],"n":1e400}}"#;
        let out = insert_notice(response, "[restarted]").unwrap();
        assert_eq!(
            out,
            r#"{"jsonrpc":"2.0","id":12345678901234567891,"result":{"content":[{"type":"text","text":"[restarted]"},{"type":"text","text":"a"}],"n":1e400}}"#
        );
        let empty = r#"{"jsonrpc":"2.0","id":1,"result":{"content": [ ]}}"#;
        assert_eq!(
            insert_notice(empty, "x").unwrap(),
            r#"{"jsonrpc":"2.0","id":1,"result":{"content": [{"type":"text","text":"x"} ]}}"#
        );
        assert_eq!(
            insert_notice(
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"}}"#,
                "x"
            ),
            None
        );
        assert_eq!(
            insert_notice(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#, "x"),
            None
        );
    }
}
