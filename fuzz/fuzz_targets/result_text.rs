//! `result::filter_tool_result` on a valid `CallToolResult` whose text block(s) the fuzzer
//! writes (sections, lists, snapshots as it likes): no panic, JSON out, `off` gives `None`,
//! every block other than text passes untouched, and `isError` stays as it was.
#![no_main]

use fuzz_support::Input;
use libfuzzer_sys::fuzz_target;
use mcp_snapshot_filter_core::level::Level;
use mcp_snapshot_filter_core::result::{filter_tool_result, ResultOptions};
use serde_json::{json, Value};

const TOOLS: [&str; 7] = [
    "take_snapshot",
    "list_network_requests",
    "list_console_messages",
    "evaluate_script",
    "click",
    "navigate_page",
    "browser_snapshot",
];

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let tool = TOOLS[usize::from(input.byte()) % TOOLS.len()];
    let level = input.level();
    let flags = input.byte();
    let first = input.field();
    let second = input.rest();
    let mut content = vec![json!({"type": "text", "text": first})];
    if flags & 1 == 1 {
        content.push(json!({"type": "image", "data": "AAAA", "mimeType": "image/png"}));
    }
    if flags & 2 == 2 {
        content.push(json!({"type": "text", "text": second}));
    }
    let mut result = json!({"content": content});
    if flags & 4 == 4 {
        result["isError"] = json!(true);
    }
    if flags & 8 == 8 {
        result["structuredContent"] = json!({"text": first});
    }
    let json = result.to_string();
    let options = ResultOptions::for_level(level);
    let out = filter_tool_result(tool, &json, &options).expect("a CallToolResult is accepted");
    if level == Level::Off {
        assert!(out.is_none(), "off changed a result");
    }
    if let Some(out) = out {
        let value: Value = serde_json::from_str(&out.json).expect("output is JSON");
        assert_eq!(value.get("isError"), result.get("isError"));
        let before = result["content"].as_array().map_or(0, Vec::len);
        let after = value["content"].as_array().map_or(0, Vec::len);
        assert_eq!(before, after, "content blocks added or lost");
        if flags & 1 == 1 {
            assert_eq!(
                value["content"][1], result["content"][1],
                "image block changed"
            );
        }
    }
});
