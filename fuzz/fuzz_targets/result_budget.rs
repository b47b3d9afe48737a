//! The token budget through a `Session` (`max_tokens` 50–5,000 from the first bytes; level, tool
//! and blocks fuzzed, stats line inline, proxy tools on): a valid `CallToolResult` with fuzzed
//! text, sent twice (the second may be a snapshot delta). No panic; JSON out; no text the proxy
//! sends for one result is over the budget by the estimate (`tokens::estimate_tokens`), the
//! stats line and markers included; `off` untouched; an `evaluate_script` JSON payload stays
//! JSON unless cut as text; every `read_result` page, `expand_snapshot` and `search_snapshot`
//! answer within the budget, and every `read_result` page moves on.
#![no_main]

use fuzz_support::{result_text, snapshot_uids, Input};
use libfuzzer_sys::fuzz_target;
use mcp_snapshot_filter_core::level::Level;
use mcp_snapshot_filter_core::session::{Session, SessionOptions};
use mcp_snapshot_filter_core::stats::StatsMode;
use mcp_snapshot_filter_core::tokens::estimate_tokens;
use serde_json::{json, Value};

const PAGES: usize = 40;

const TOOLS: [&str; 8] = [
    "take_snapshot",
    "list_network_requests",
    "list_console_messages",
    "evaluate_script",
    "click",
    "performance_stop_trace",
    "browser_snapshot",
    "get_network_request",
];

/// Estimated tokens of every text block of a result (what the client reads of it).
fn text_tokens(result: &Value) -> usize {
    result["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|b| b["type"] == "text")
        .filter_map(|b| b["text"].as_str())
        .map(estimate_tokens)
        .sum()
}

/// The `read_result id=… offset=…` a text names last.
fn read_on(text: &str) -> Option<(String, usize)> {
    let at = text.rfind("read_result id=")?;
    let rest = &text[at + "read_result id=".len()..];
    let (id, rest) = rest.split_once(" offset=")?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    Some((id.to_string(), digits.parse().ok()?))
}

/// The payload of a ```` ```json ```` fence.
fn fenced_json(text: &str) -> Option<&str> {
    let start = text.find("```json\n")? + 8;
    let rest = &text[start..];
    Some(&rest[..rest.find("\n```")?])
}

fn call(s: &mut Session, tool: &str, args: &Value) -> Value {
    let answer = s
        .call_proxy_tool(tool, Some(&args.to_string()))
        .expect("a proxy tool answers");
    serde_json::from_str(&answer).expect("the answer is JSON")
}

/// A proxy tool's answer within the budget, and, when it says to read on, every page after it.
fn check_answer(s: &mut Session, tool: &str, args: Value, max: usize) {
    let answer = call(s, tool, &args);
    let text = answer["content"][0]["text"].as_str().unwrap_or("");
    let tokens = estimate_tokens(text);
    assert!(tokens <= max, "{tool} {args}: {tokens} tokens over {max}");
    if let Some((id, offset)) = read_on(text) {
        read_through(s, &id, offset, max);
    }
}

/// Pages through `read_result` from `offset`: each page within the budget, each moving on (so
/// paging ends); the first `PAGES` pages, which keeps slow inputs (a tiny budget moves a dozen
/// bytes a page) from slowing the fuzzer down.
fn read_through(s: &mut Session, id: &str, mut offset: usize, max: usize) {
    for _ in 0..PAGES {
        let answer = call(s, "read_result", &json!({"id": id, "offset": offset}));
        if answer.get("isError").is_some() {
            // Evicted or not kept (larger than the cache): the answer says so.
            return;
        }
        let text = answer["content"][0]["text"].as_str().unwrap_or("");
        let tokens = estimate_tokens(text);
        assert!(
            tokens <= max,
            "read_result {id} at {offset}: {tokens} tokens over {max}"
        );
        match read_on(text) {
            Some((next_id, next)) if next_id == id => {
                assert!(
                    next > offset,
                    "read_result {id} does not move on from {offset}"
                );
                offset = next;
            }
            _ => return,
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let max = 50 + (usize::from(input.byte()) << 8 | usize::from(input.byte())) % 4951;
    let tool = TOOLS[usize::from(input.byte()) % TOOLS.len()];
    let level = input.level();
    let flags = input.byte();
    let query = input.field();
    let first = input.field();
    let second = input.rest();

    let mut content = vec![json!({"type": "text", "text": first})];
    if flags & 1 == 1 {
        content.push(json!({"type": "image", "data": "AAAA", "mimeType": "image/png"}));
    }
    if flags & 2 == 2 {
        content.push(json!({"type": "text", "text": second}));
    }
    let mut result = json!({ "content": content });
    if flags & 4 == 4 {
        result["isError"] = json!(true);
    }
    if flags & 8 == 8 {
        result["structuredContent"] = json!({"text": first});
    }
    let result_json = result.to_string();
    let args = if tool.starts_with("browser_") {
        "{}"
    } else {
        r#"{"pageId":1}"#
    };

    let mut options = SessionOptions::for_level(level);
    options.max_tokens = max;
    options.proxy_tools = level != Level::Off;
    options.stats = StatsMode::Inline;
    let mut s = Session::new(options);
    for round in 0..2 {
        let out = s
            .filter_tool_result(tool, &result_json, Some(args))
            .expect("a CallToolResult is accepted");
        if level == Level::Off {
            assert!(out.is_none(), "off changed a result");
            return;
        }
        let Some(out) = out else {
            let tokens = text_tokens(&result);
            assert!(
                tokens <= max,
                "forwarded whole at {tokens} tokens, over {max}"
            );
            continue;
        };
        let value: Value = serde_json::from_str(&out).expect("output is JSON");
        let tokens = text_tokens(&value);
        assert!(
            tokens <= max,
            "round {round}: {tokens} tokens sent, over the budget of {max}\n{out}"
        );
        let text = result_text(&out);
        if tool == "evaluate_script" && !text.contains("cut at the token budget") {
            if let (Some(before), Some(after)) = (fenced_json(&first), fenced_json(&text)) {
                if serde_json::from_str::<Value>(before).is_ok() {
                    assert!(
                        serde_json::from_str::<Value>(after).is_ok(),
                        "evaluate_script payload no longer JSON:\n{text}"
                    );
                }
            }
        }
        if let Some((id, offset)) = read_on(&text) {
            read_through(&mut s, &id, offset, max);
        }
    }
    if !s.is_proxy_tool("expand_snapshot") || s.cached_snapshot_bytes() == 0 {
        return;
    }
    let page = |mut a: Value| {
        if !tool.starts_with("browser_") {
            a["pageId"] = json!(1);
        }
        a
    };
    check_answer(&mut s, "expand_snapshot", page(json!({})), max);
    let mut uids: Vec<String> = snapshot_uids(&first).into_iter().collect();
    uids.sort();
    if let Some(uid) = uids.get(usize::from(flags >> 4) % uids.len().max(1)) {
        check_answer(&mut s, "expand_snapshot", page(json!({ "uid": uid })), max);
    }
    if !query.is_empty() {
        check_answer(
            &mut s,
            "search_snapshot",
            page(json!({"query": query, "limit": 200})),
            max,
        );
    }
});
