//! `describe::compress_list_result`: on arbitrary JSON-ish bytes for a list method the first
//! byte picks (no panic, output is JSON), and on a valid `tools/list` result whose
//! descriptions and parameter names the fuzzer writes (no limit word lost, nothing but
//! descriptions changes).
#![no_main]

use fuzz_support::{check_limit_words, Input};
use libfuzzer_sys::fuzz_target;
use mcp_snapshot_filter_core::describe::{compress_list_result, CompressOptions, LIST_METHODS};
use serde_json::{json, Value};

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let method = LIST_METHODS[usize::from(input.byte()) % LIST_METHODS.len()];
    let level = input.level();
    let compact_schemas = input.byte() & 1 == 1;
    let options = CompressOptions {
        level,
        compact_schemas,
    };
    let description = input.field();
    let param = input.field();
    let raw = input.rest();

    if let Ok(Some(out)) = compress_list_result(method, &raw, &options) {
        assert!(serde_json::from_str::<Value>(&out).is_ok());
    }

    let list = json!({"tools": [{
        "name": "tool",
        "description": description,
        "inputSchema": {"type": "object", "properties": {
            param.clone(): {"type": "string", "description": raw}
        }}
    }]});
    let options = CompressOptions {
        level,
        compact_schemas: false,
    };
    let out = compress_list_result("tools/list", &list.to_string(), &options)
        .expect("a tools/list result is accepted");
    let Some(out) = out else { return };
    let mut after: Value = serde_json::from_str(&out).expect("output is JSON");
    let new_description = after["tools"][0]["description"]
        .as_str()
        .unwrap_or("")
        .to_string();
    check_limit_words(&description, &new_description, level, "description");
    let prop = &mut after["tools"][0]["inputSchema"]["properties"][&param];
    let new_raw = prop["description"].as_str().unwrap_or("").to_string();
    check_limit_words(&raw, &new_raw, level, "parameter description");
    // Everything but the two descriptions is as it was.
    prop["description"] = json!(raw);
    after["tools"][0]["description"] = json!(description);
    assert_eq!(after, list, "something besides descriptions changed");
});
