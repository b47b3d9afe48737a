//! The structured-content path: a `take_snapshot` result carrying `structuredContent.snapshot`
//! (chrome-devtools-mcp's `--experimentalStructuredContent` JSON tree). The tree is the fuzzed
//! text's, read by the text parser, with fuzzed page text (quotes, line breaks, lines that
//! imitate nodes) put into a name or a value; the result's text is that tree printed raw, as
//! upstream prints it, so the text alone is ambiguous. Through a `Session` at the fuzzed level:
//! no panic; JSON out; when the tree is readable, no uid shown, expanded or found that is not
//! an id of the tree, the raw kept for the proxy tools reads back as the tree (ids, roles and
//! names in order), and every id expands.
#![no_main]

use fuzz_support::{result_text, snapshot_options, snapshot_uids, Input};
use libfuzzer_sys::fuzz_target;
use mcp_snapshot_filter_core::notation::cdp::{parse, structured, writer};
use mcp_snapshot_filter_core::notation::{expand_subtree, search_snapshot};
use mcp_snapshot_filter_core::session::{Session, SessionOptions};
use mcp_snapshot_filter_core::snapshot::tree::{NodeKind, Tree};
use mcp_snapshot_filter_core::stats::StatsMode;
use serde_json::{json, Map, Value};

/// The JSON tree of `tree`'s node `id` (and its subtree), as upstream writes it.
fn to_json(tree: &Tree<'_>, id: usize, depth: usize) -> Option<Value> {
    let node = tree.nodes.get(id)?;
    if node.kind != NodeKind::Element || node.uid.is_empty() || depth > 200 {
        return None;
    }
    let mut object = Map::new();
    object.insert("id".into(), json!(node.uid));
    let role = match node.role {
        "" => "StaticText",
        "ignored" => "none",
        other => other,
    };
    object.insert("role".into(), json!(role));
    if let Some(name) = &node.name {
        object.insert("name".into(), json!(name));
    }
    for attr in &node.attrs {
        let value = attr.value.as_deref().map_or(json!(true), |v| json!(v));
        object.insert(attr.key.to_string(), value);
    }
    let children: Vec<Value> = tree
        .children(id)
        .iter()
        .filter_map(|&c| to_json(tree, c, depth + 1))
        .collect();
    if !children.is_empty() {
        object.insert("children".into(), Value::Array(children));
    }
    Some(Value::Object(object))
}

/// Puts `text` into the name (or, when `value`, a `value` attribute) of the `pick`th node.
fn plant(root: &mut Value, pick: usize, text: &str, value: bool) {
    let mut stack = vec![root];
    let mut seen = 0;
    while let Some(node) = stack.pop() {
        if seen == pick {
            let key = if value { "value" } else { "name" };
            let old = node[key].as_str().unwrap_or("").to_string();
            node[key] = json!(format!("{old}{text}"));
            return;
        }
        seen += 1;
        if let Some(children) = node.get_mut("children").and_then(Value::as_array_mut) {
            stack.extend(children.iter_mut().rev());
        }
    }
}

/// The tree printed as chrome-devtools-mcp prints it: raw names and values, attributes sorted.
fn print(node: &Value, depth: usize, out: &mut String) {
    let Some(object) = node.as_object() else {
        return;
    };
    out.push_str(&"  ".repeat(depth));
    out.push_str("uid=");
    out.push_str(object.get("id").and_then(Value::as_str).unwrap_or(""));
    match object.get("role").and_then(Value::as_str).unwrap_or("") {
        "StaticText" => {}
        "none" => out.push_str(" ignored"),
        role => {
            out.push(' ');
            out.push_str(role);
        }
    }
    if let Some(name) = object.get("name").and_then(Value::as_str) {
        out.push_str(&format!(" \"{name}\""));
    }
    let mut keys: Vec<&String> = object
        .keys()
        .filter(|k| !["id", "role", "name", "children"].contains(&k.as_str()))
        .collect();
    keys.sort();
    for key in keys {
        match &object[key.as_str()] {
            Value::Bool(true) => out.push_str(&format!(" {key}")),
            Value::String(v) => out.push_str(&format!(" {key}=\"{v}\"")),
            _ => {}
        }
    }
    out.push('\n');
    for child in object
        .get("children")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        print(child, depth + 1, out);
    }
}

fn ids(node: &Value, out: &mut Vec<String>) {
    if let Some(id) = node["id"].as_str() {
        out.push(id.to_string());
    }
    for child in node["children"].as_array().into_iter().flatten() {
        ids(child, out);
    }
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let level = input.level();
    let flags = input.byte();
    let pick = usize::from(input.byte());
    let options = snapshot_options(&mut input, level);
    let planted = input.field();
    let query = input.field();
    let text = input.rest();

    let parsed = parse::parse(&text);
    let Some(mut root) = parsed.roots.iter().find_map(|&r| to_json(&parsed, r, 0)) else {
        return;
    };
    if !planted.is_empty() {
        plant(&mut root, pick, &planted, flags & 1 == 1);
    }
    let mut body = String::new();
    print(&root, 0, &mut body);
    let mut tree_ids = Vec::new();
    ids(&root, &mut tree_ids);
    let known: std::collections::HashSet<&str> = tree_ids.iter().map(String::as_str).collect();
    let result = json!({
        "content": [{"type": "text", "text": format!("# take_snapshot response\n## Latest page snapshot\n{body}")}],
        "structuredContent": {"snapshot": root},
    });

    if let Some(dir) = std::env::var_os("FUZZ_DUMP") {
        // Replaying a crash: the result, for a regression test.
        let _ = std::fs::write(
            std::path::Path::new(&dir).join("result.json"),
            result.to_string(),
        );
    }
    let mut session_options = SessionOptions::for_level(level);
    session_options.snapshot = options.limits.clone();
    session_options.stats = StatsMode::Off;
    session_options.proxy_tools = true;
    session_options.max_tokens = if flags & 2 == 2 { 0 } else { 25_000 };
    session_options.drop_structured_content = flags & 4 == 4;
    let mut s = Session::new(session_options);
    let out = s
        .filter_tool_result(
            "take_snapshot",
            &result.to_string(),
            Some(r#"{"pageId":1}"#),
        )
        .expect("a CallToolResult is accepted");
    if let Some(out) = &out {
        serde_json::from_str::<Value>(out).expect("output is JSON");
    }
    let read = structured::StructuredSnapshot::of_value(&result["structuredContent"]["snapshot"]);
    let Some(exact) = read.as_ref().and_then(|read| read.tree(&body)) else {
        // Not a tree as upstream writes it: the text is read instead.
        return;
    };
    if let Some(out) = &out {
        let text = result_text(out);
        // The upstream's own text, passed as it came (only structuredContent dropped), is not
        // the proxy's to answer for.
        let rewritten = Some(text.as_str()) != result["content"][0]["text"].as_str();
        let sent = text
            .split_once("## Latest page snapshot\n")
            .map_or("", |(_, b)| b);
        for uid in snapshot_uids(sent).into_iter().filter(|_| rewritten) {
            assert!(
                known.contains(uid.as_str()),
                "{uid} shown, not in the tree:\n{text}"
            );
        }
    }

    // The raw the proxy tools read: the tree in the lossless notation, read back as the tree.
    let raw = writer::render(&exact, false).text;
    let back = parse::parse(&raw);
    let read: Vec<(&str, &str, &str)> = back
        .nodes
        .iter()
        .filter(|n| n.kind == NodeKind::Element && !n.uid.is_empty())
        .map(|n| (n.uid, n.role, n.name_str()))
        .collect();
    let wrote: Vec<(&str, &str, &str)> = exact
        .nodes
        .iter()
        .filter(|n| n.kind == NodeKind::Element && !n.uid.is_empty())
        .map(|n| (n.uid, n.role, n.name_str()))
        .collect();
    assert_eq!(
        read, wrote,
        "the raw kept does not read back as the tree:\n{raw}"
    );

    for uid in &tree_ids {
        assert!(
            expand_subtree(&raw, uid, None).is_ok(),
            "{uid} does not expand"
        );
    }
    let cached = level != mcp_snapshot_filter_core::level::Level::Off && s.cached_snapshot_bytes() > 0;
    if let Some(uid) = tree_ids.get(pick % tree_ids.len()).filter(|_| cached) {
        let answer = s
            .call_proxy_tool(
                "expand_snapshot",
                Some(&json!({"uid": uid, "pageId": 1}).to_string()),
            )
            .expect("expand answers");
        let answer: Value = serde_json::from_str(&answer).expect("JSON");
        assert!(answer.get("isError").is_none(), "{uid}: {answer}");
        let text = answer["content"][0]["text"].as_str().unwrap_or("");
        for shown in snapshot_uids(text) {
            assert!(
                known.contains(shown.as_str()),
                "{shown} expanded, not in the tree"
            );
        }
    }
    if !query.is_empty() {
        if let Ok(hits) = search_snapshot(&raw, &query, flags & 8 == 8, 20) {
            for hit in &hits.hits {
                assert!(
                    known.contains(hit.uid.as_str()),
                    "{} found, not in the tree",
                    hit.uid
                );
            }
        }
    }
});
