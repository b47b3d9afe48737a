//! Reads the JSON-RPC envelope of a big response line without building its tree: the proxy
//! routes a multi-megabyte response by its id and forwards its bytes as they came, so neither
//! V8 nor Rust materialises the result just to find out where it goes.

use serde_json::value::RawValue;
use serde_json::Value;
use std::collections::HashMap;
use std::ops::Range;

/// The envelope of a well-formed JSON-RPC response line.
#[derive(Debug, Clone, PartialEq)]
pub struct ResponseEnvelope {
    /// The id's JSON text exactly as it is in the line (a string or a number): the proxy keys
    /// requests by it, so 9007199254740993 and 9007199254740992 stay two ids.
    pub id_json: String,
    /// Where the `result` member's value lies in the line (the last one when the key repeats,
    /// as JSON.parse reads it); `None`: the response has `error` instead.
    pub result: Option<Range<usize>>,
}

/// Where `raw`, a value read out of `text` (it borrows from it), lies in `text`.
pub fn span_in(text: &str, raw: &RawValue) -> Option<Range<usize>> {
    let raw = raw.get();
    let start = (raw.as_ptr() as usize).wrapping_sub(text.as_ptr() as usize);
    let span = start..start.saturating_add(raw.len());
    (text.get(span.clone()) == Some(raw)).then_some(span)
}

/// The envelope when `line` is UTF-8 and one JSON object that is a plain JSON-RPC 2.0 response
/// with a string or number id; `None` for anything else (batches, requests, notifications,
/// bad JSON…), which the caller then handles the way it handles small lines, so only lines both
/// readers agree on take this path.
pub fn peek_response(line: &[u8]) -> Option<ResponseEnvelope> {
    peek_response_text(std::str::from_utf8(line).ok()?)
}

/// `peek_response` on a line read as UTF-8 already.
pub fn peek_response_text(text: &str) -> Option<ResponseEnvelope> {
    // Every value is checked as JSON but kept as its text; duplicate keys: the last wins, as
    // with JSON.parse.
    let fields: HashMap<String, &RawValue> = serde_json::from_str(text).ok()?;
    if fields.contains_key("method") {
        return None;
    }
    let jsonrpc: Value = serde_json::from_str(fields.get("jsonrpc")?.get()).ok()?;
    if jsonrpc.as_str() != Some("2.0") {
        return None;
    }
    let result = match fields.get("result") {
        Some(raw) => Some(span_in(text, raw)?),
        None => None,
    };
    let has_result = result.is_some();
    if let Some(error) = fields.get("error") {
        if !error.get().starts_with('{') {
            return None;
        }
    } else if !has_result {
        return None;
    }
    let id = fields.get("id")?.get();
    if !(id.starts_with('"') || id.starts_with('-') || id.starts_with(|c: char| c.is_ascii_digit()))
    {
        return None;
    }
    Some(ResponseEnvelope {
        id_json: id.to_string(),
        result,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn peek(line: &str) -> Option<ResponseEnvelope> {
        peek_response(line.as_bytes())
    }

    #[test]
    fn reads_id_and_kind_of_responses() {
        let line = r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"x"}]}}"#;
        let result = r#"{"content":[{"type":"text","text":"x"}]}"#;
        let at = line.find(result).expect("in the line");
        assert_eq!(
            peek(line),
            Some(ResponseEnvelope {
                id_json: "7".into(),
                result: Some(at..at + result.len())
            })
        );
        assert_eq!(
            peek(r#" {"id":"a\"b","error":{"code":-1,"message":"m"},"jsonrpc":"2.0"} "#),
            Some(ResponseEnvelope {
                id_json: r#""a\"b""#.into(),
                result: None
            })
        );
        assert_eq!(
            peek(r#"{"jsonrpc":"2.0","id":-3,"result":null}"#).map(|e| e.id_json),
            Some("-3".into())
        );
    }

    #[test]
    fn the_result_span_is_the_last_result_member_as_it_is_in_the_line() {
        let line = r#"{"result": {"a":1}, "jsonrpc":"2.0","id":1,"result" : [ "x\"}" ] }"#;
        let span = peek(line).and_then(|e| e.result).expect("a result");
        assert_eq!(&line[span], r#"[ "x\"}" ]"#);
    }

    #[test]
    fn numbers_come_back_as_their_exact_text() {
        for id in [
            "9007199254740993",
            "12345678901234567891",
            "1E400",
            "1.0",
            "-0",
            "1e-7",
        ] {
            let line = format!(r#"{{"jsonrpc":"2.0","id": {id} ,"result":{{}}}}"#);
            assert_eq!(peek(&line).map(|e| e.id_json), Some(id.to_string()), "{id}");
        }
    }

    #[test]
    fn last_duplicate_key_wins_as_in_json_parse() {
        assert_eq!(
            peek(r#"{"jsonrpc":"2.0","id":1,"id":"two","result":{}}"#).map(|e| e.id_json),
            Some(r#""two""#.into())
        );
        assert_eq!(
            peek(r#"{"jsonrpc":"2.0","jsonrpc":"1.0","id":1,"result":{}}"#),
            None
        );
    }

    #[test]
    fn leaves_everything_else_to_the_caller() {
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"method":"x"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/x"}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{},"method":"x"}"#,
            r#"[{"jsonrpc":"2.0","id":1,"result":{}}]"#,
            r#"{"jsonrpc":"1.0","id":1,"result":{}}"#,
            r#"{"id":1,"result":{}}"#,
            r#"{"jsonrpc":"2.0","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":null,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":true,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":{"a":1},"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1}"#,
            r#"{"jsonrpc":"2.0","id":1,"error":null}"#,
            r#"{"jsonrpc":"2.0","id":1,"error":"boom"}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"a":}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{}} x"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{}}{}"#,
            "",
            "   ",
        ] {
            assert_eq!(peek(line), None, "{line}");
        }
        assert_eq!(
            peek_response(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"\xff\"}"),
            None
        );
    }

    #[test]
    fn deep_results_do_not_overflow() {
        let depth = 5_000;
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{{"a":{}{}}}}}"#,
            "[".repeat(depth),
            "]".repeat(depth)
        );
        // Values are skipped without recursion: deep results are routed like any other.
        assert_eq!(peek(&line).map(|e| e.id_json), Some("1".into()));
    }
}
