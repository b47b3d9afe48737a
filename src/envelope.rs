//! Reads the JSON-RPC envelope of a big response line without building its tree: the proxy
//! routes a multi-megabyte response by its id and forwards its bytes as they came, so neither
//! V8 nor Rust materialises the result just to find out where it goes.

use serde_json::value::RawValue;
use serde_json::Value;
use std::collections::HashMap;

/// A JSON-RPC request id as the proxy keys it: a string or a number JS reads the same way.
#[derive(Debug, Clone, PartialEq)]
pub enum ResponseId {
    Text(String),
    Number(f64),
}

/// The envelope of a well-formed JSON-RPC response line.
#[derive(Debug, Clone, PartialEq)]
pub struct ResponseEnvelope {
    pub id: ResponseId,
    /// `result` is present (else `error` is).
    pub has_result: bool,
}

/// The envelope when `line` is UTF-8 and one JSON object that is a plain JSON-RPC 2.0 response
/// with a string or integer id; `None` for anything else (batches, requests, notifications,
/// bad JSON, fractional or huge ids…), which the caller then handles the way it handles small
/// lines, so only lines both readers agree on take this path.
pub fn peek_response(line: &[u8]) -> Option<ResponseEnvelope> {
    let text = std::str::from_utf8(line).ok()?;
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
    let has_result = fields.contains_key("result");
    if let Some(error) = fields.get("error") {
        if !error.get().starts_with('{') {
            return None;
        }
    } else if !has_result {
        return None;
    }
    let id = match serde_json::from_str::<Value>(fields.get("id")?.get()).ok()? {
        Value::String(s) => ResponseId::Text(s),
        // Integers JS holds exactly; others could key differently once rounded.
        Value::Number(n) => {
            let exact = n
                .as_i64()
                .filter(|i| i.unsigned_abs() <= MAX_SAFE_INTEGER)?;
            ResponseId::Number(exact as f64)
        }
        _ => return None,
    };
    Some(ResponseEnvelope { id, has_result })
}

/// 2^53 - 1: JS's Number.MAX_SAFE_INTEGER.
const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

#[cfg(test)]
mod tests {
    use super::*;

    fn peek(line: &str) -> Option<ResponseEnvelope> {
        peek_response(line.as_bytes())
    }

    #[test]
    fn reads_id_and_kind_of_responses() {
        assert_eq!(
            peek(r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"x"}]}}"#),
            Some(ResponseEnvelope {
                id: ResponseId::Number(7.0),
                has_result: true
            })
        );
        assert_eq!(
            peek(r#" {"id":"a\"b","error":{"code":-1,"message":"m"},"jsonrpc":"2.0"} "#),
            Some(ResponseEnvelope {
                id: ResponseId::Text("a\"b".into()),
                has_result: false
            })
        );
        assert_eq!(
            peek(r#"{"jsonrpc":"2.0","id":-3,"result":null}"#).map(|e| e.id),
            Some(ResponseId::Number(-3.0))
        );
    }

    #[test]
    fn last_duplicate_key_wins_as_in_json_parse() {
        assert_eq!(
            peek(r#"{"jsonrpc":"2.0","id":1,"id":"two","result":{}}"#).map(|e| e.id),
            Some(ResponseId::Text("two".into()))
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
            r#"{"jsonrpc":"2.0","id":1.5,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":9007199254740993,"result":{}}"#,
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
        assert_eq!(peek(&line).map(|e| e.id), Some(ResponseId::Number(1.0)));
    }
}
