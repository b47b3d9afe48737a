//! The proxy's envelope readers on arbitrary bytes: `envelope::peek_response` (no panic; when
//! it reads an envelope, the line is a JSON object without `method`, the id's text is that
//! object's id, a JSON string or number, and the result's span holds its `result` member's
//! text) and `Session::filter_tool_response` (no panic; any output keeps the text before and
//! after the result byte for byte).
#![no_main]

use std::collections::HashMap;

use libfuzzer_sys::fuzz_target;
use mcp_snapshot_filter_core::envelope::peek_response;
use mcp_snapshot_filter_core::level::Level;
use mcp_snapshot_filter_core::session::{Session, SessionOptions};
use serde_json::value::RawValue;

fuzz_target!(|data: &[u8]| {
    if let Some(envelope) = peek_response(data) {
        let fields: HashMap<String, Box<RawValue>> =
            serde_json::from_slice(data).expect("a peeked line is a JSON object");
        assert_eq!(
            fields.get("id").map(|id| id.get()),
            Some(envelope.id_json.as_str())
        );
        let id = envelope.id_json.as_bytes();
        assert!(id[0] == b'"' || id[0] == b'-' || id[0].is_ascii_digit());
        assert!(!fields.contains_key("method"));
        // The result's span is the `result` member's text, where routeResponse cuts it out.
        assert_eq!(
            envelope.result.map(|span| &data[span]),
            fields.get("result").map(|r| r.get().as_bytes())
        );
    }
    let Ok(result) = std::str::from_utf8(data) else {
        return;
    };
    let head = r#"{"jsonrpc":"2.0","id":12345678901234567891,"result":"#;
    let tail = r#","z":1E400}"#;
    let response = format!("{head}{result}{tail}");
    let mut session = Session::new(SessionOptions::for_level(Level::Moderate));
    if let Ok(Some(out)) = session.filter_tool_response("take_snapshot", &response, None) {
        assert!(out.starts_with(head) && out.ends_with(tail));
    }
});
