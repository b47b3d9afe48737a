//! `result::filter_tool_result` on arbitrary JSON-ish bytes, for a tool the first byte picks:
//! no panic; an error or `None` for what is not a result; any output is JSON.
#![no_main]

use fuzz_support::Input;
use libfuzzer_sys::fuzz_target;
use mcp_snapshot_filter_core::result::{filter_tool_result, ResultOptions};

const TOOLS: [&str; 8] = [
    "take_snapshot",
    "list_network_requests",
    "list_console_messages",
    "evaluate_script",
    "click",
    "navigate_page",
    "browser_snapshot",
    "browser_click",
];

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let tool = TOOLS[usize::from(input.byte()) % TOOLS.len()];
    let level = input.level();
    let arguments = input.field();
    let json = input.rest();
    let options = ResultOptions::for_level(level).with_arguments(Some(&arguments));
    if let Ok(Some(out)) = filter_tool_result(tool, &json, &options) {
        assert!(serde_json::from_str::<serde_json::Value>(&out.json).is_ok());
    }
});
