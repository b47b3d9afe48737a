//! The proxy's own tools, added to the upstream's `tools/list` and answered by the proxy from
//! the raw snapshots it cached: `expand_snapshot` (the unfiltered subtree under a uid) and
//! `search_snapshot` (matching lines with their ancestors). They let the agent fetch exactly
//! what a lossy level hid, without a second full snapshot.

use serde_json::{json, Map, Value};

use crate::notation;
use crate::snapshot::SnapshotOptions;
use crate::snapshot_cache::{CacheMiss, SnapshotCache};

pub const EXPAND_SNAPSHOT: &str = "expand_snapshot";
pub const SEARCH_SNAPSHOT: &str = "search_snapshot";
pub const NAMES: [&str; 2] = [EXPAND_SNAPSHOT, SEARCH_SNAPSHOT];

/// Hits returned by `search_snapshot` when the agent gives no limit, and the most it may ask.
pub const DEFAULT_SEARCH_LIMIT: usize = 20;
const MAX_SEARCH_LIMIT: usize = 200;

/// Written terse by hand (the descriptions are appended after the list is compressed, so the
/// compressor never rewrites them): each says it is answered by the proxy, what it returns
/// and when to use it.
const PAGE_ID_DOC: &str = "pageId given to take_snapshot (default: the page snapshotted last).";

/// The tool definitions, as `tools/list` entries.
pub fn definitions() -> Vec<Value> {
    vec![
        json!({
            "name": EXPAND_SNAPSHOT,
            "title": "Expand snapshot (mcp-snapshot-filter)",
            "description": "Answered by the mcp-snapshot-filter proxy, not the browser. Returns the unfiltered subtree under a uid of the last snapshot, or with until the siblings from uid to until; without uid, the latest snapshot of the page whole, filtered as usual (no delta). Use when a snapshot line says content was hidden or unchanged (\"expand_snapshot uid=… until=…\"), with the same arguments; its uids work with click/fill as usual.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "uid": {"type": "string", "description": "uid from the snapshot (e.g. 7_118, or a Playwright ref such as e39); omit for the whole page."},
                    "until": {"type": "string", "description": "uid of a later sibling: returns the siblings from uid to until, each with its subtree (default: uid's subtree alone)."},
                    "depth": {"type": "integer", "minimum": 0, "description": "Levels below the node(s) to include (default: all)."},
                    "pageId": {"type": ["number", "string"], "description": PAGE_ID_DOC}
                },
                "additionalProperties": false
            },
            "annotations": {"readOnlyHint": true, "openWorldHint": false},
            "_meta": {"mcp-snapshot-filter/proxyTool": true}
        }),
        json!({
            "name": SEARCH_SNAPSHOT,
            "title": "Search snapshot (mcp-snapshot-filter)",
            "description": "Answered by the mcp-snapshot-filter proxy, not the browser. Returns lines of the last unfiltered snapshot whose role, name, text or attributes match query, each with uid and ancestors, including content the filtered snapshot hid. Use to find an element without a new snapshot; its uids work with click/fill as usual.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "minLength": 1, "description": "Case-insensitive substring (a regex if regex is true)."},
                    "regex": {"type": "boolean", "default": false, "description": "Treat query as a case-insensitive regex (Rust syntax)."},
                    "limit": {"type": "integer", "minimum": 1, "maximum": MAX_SEARCH_LIMIT, "default": DEFAULT_SEARCH_LIMIT, "description": "Most hits to return."},
                    "pageId": {"type": ["number", "string"], "description": PAGE_ID_DOC}
                },
                "required": ["query"],
                "additionalProperties": false
            },
            "annotations": {"readOnlyHint": true, "openWorldHint": false},
            "_meta": {"mcp-snapshot-filter/proxyTool": true}
        }),
    ]
}

/// Appends the proxy's tools to a `tools/list` result, unless the upstream already has a tool
/// of that name (the upstream's wins, and the proxy then never intercepts it). Returns the
/// names added.
pub fn add_to_tools_list(result: &mut Value) -> Vec<&'static str> {
    let Some(tools) = result.get_mut("tools").and_then(Value::as_array_mut) else {
        return Vec::new();
    };
    let mut added = Vec::new();
    for def in definitions() {
        let name = def.get("name").and_then(Value::as_str).unwrap_or_default();
        let taken = tools
            .iter()
            .any(|t| t.get("name").and_then(Value::as_str) == Some(name));
        if let (false, Some(static_name)) = (taken, NAMES.iter().find(|n| **n == name)) {
            tools.push(def);
            added.push(*static_name);
        }
    }
    added
}

/// A page key from a tool's `pageId` argument (numbers and strings alike), if any.
pub fn page_key(arguments: &Map<String, Value>) -> Option<String> {
    match arguments.get("pageId") {
        Some(Value::Number(n)) => Some(n.to_string()),
        Some(Value::String(s)) => Some(s.clone()),
        _ => None,
    }
}

/// Answers a call of one of the proxy's tools with a `CallToolResult`; `whole_page` is how the
/// session filters a whole page (`expand_snapshot` without uid).
pub fn call(
    name: &str,
    arguments: &Value,
    cache: &SnapshotCache,
    whole_page: &SnapshotOptions,
) -> Value {
    let empty = Map::new();
    let args = arguments.as_object().unwrap_or(&empty);
    let page = page_key(args);
    let snapshot = match cache.get(page.as_deref()) {
        Ok(s) => s,
        Err(miss) => return error_result(&miss_message(&miss)),
    };
    let answer = match name {
        EXPAND_SNAPSHOT => {
            let uid = match args.get("uid") {
                None | Some(Value::Null) => {
                    let text = notation::filter_snapshot(&snapshot.raw, whole_page).text;
                    return json!({"content": [{"type": "text", "text": text}]});
                }
                Some(Value::String(uid)) => uid.as_str(),
                Some(_) => {
                    return error_result(
                        "expand_snapshot's \"uid\" must be a string such as \"7_118\" (omit it for the whole page).",
                    )
                }
            };
            let depth = match optional_count(args, "depth") {
                Ok(d) => d,
                Err(msg) => return error_result(&msg),
            };
            let until = match args.get("until") {
                None | Some(Value::Null) => None,
                Some(Value::String(u)) => Some(u.as_str()),
                Some(_) => {
                    return error_result(
                        "expand_snapshot's \"until\" must be a uid string (such as \"7_130\").",
                    )
                }
            };
            notation::expand_range(&snapshot.raw, uid, until, depth)
        }
        SEARCH_SNAPSHOT => {
            let Some(query) = args
                .get("query")
                .and_then(Value::as_str)
                .filter(|q| !q.is_empty())
            else {
                return error_result("search_snapshot needs a non-empty \"query\" argument.");
            };
            let regex = args.get("regex").and_then(Value::as_bool).unwrap_or(false);
            let limit = match optional_count(args, "limit") {
                Ok(l) => l.unwrap_or(DEFAULT_SEARCH_LIMIT).clamp(1, MAX_SEARCH_LIMIT),
                Err(msg) => return error_result(&msg),
            };
            notation::search_snapshot(&snapshot.raw, query, regex, limit).map(|hits| hits.text)
        }
        other => return error_result(&format!("{other:?} is not a tool of the proxy.")),
    };
    match answer {
        Ok(text) => json!({"content": [{"type": "text", "text": text}]}),
        Err(e) => error_result(&e.to_string()),
    }
}

fn optional_count(args: &Map<String, Value>, key: &str) -> Result<Option<usize>, String> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .map(Some)
            .ok_or_else(|| format!("\"{key}\" must be a whole number ≥ 0.")),
    }
}

fn miss_message(miss: &CacheMiss) -> String {
    match miss {
        CacheMiss::NoSnapshot { page: None } => {
            "No snapshot to read yet: take one first (take_snapshot, or browser_snapshot with Playwright MCP).".to_string()
        }
        CacheMiss::NoSnapshot { page: Some(p) } => format!(
            "No snapshot of page {p} is cached (it was never taken or was evicted): call take_snapshot for that page first."
        ),
        CacheMiss::TooLarge { page, bytes, cap } => format!(
            "The snapshot of page {page} ({bytes} bytes) is larger than the proxy's snapshot cache ({cap} bytes): restart the proxy with a larger --snapshot-cache-bytes."
        ),
    }
}

fn error_result(message: &str) -> Value {
    json!({"content": [{"type": "text", "text": message}], "isError": true})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds_both_tools_unless_the_upstream_has_one_of_that_name() {
        let mut list = json!({"tools": [{"name": "take_snapshot"}]});
        assert_eq!(
            add_to_tools_list(&mut list),
            vec![EXPAND_SNAPSHOT, SEARCH_SNAPSHOT]
        );
        assert_eq!(list["tools"].as_array().map(Vec::len), Some(3));

        let mut clash = json!({"tools": [{"name": "search_snapshot", "description": "theirs"}]});
        assert_eq!(add_to_tools_list(&mut clash), vec![EXPAND_SNAPSHOT]);
        assert_eq!(clash["tools"][0]["description"], "theirs");
        assert_eq!(clash["tools"].as_array().map(Vec::len), Some(2));
    }

    #[test]
    fn calls_without_a_snapshot_or_with_bad_arguments_are_error_results() {
        let mut cache = SnapshotCache::new(1024);
        let res = call(EXPAND_SNAPSHOT, &json!({"uid": "1_1"}), &cache, &whole());
        assert_eq!(res["isError"], true);
        assert!(res["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .contains("take_snapshot"));

        cache
            .put("3", "uid=1_0 RootWebArea \"x\"\n".to_string(), None)
            .unwrap_or_default();
        let res = call(EXPAND_SNAPSHOT, &json!({"uid": 7}), &cache, &whole());
        assert_eq!(res["isError"], true);
        assert!(res["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .contains("uid"));
        let res = call(
            EXPAND_SNAPSHOT,
            &json!({"uid": "1_0", "depth": -1}),
            &cache,
            &whole(),
        );
        assert_eq!(res["isError"], true);
        let res = call(
            EXPAND_SNAPSHOT,
            &json!({"uid": "1_0", "until": 3}),
            &cache,
            &whole(),
        );
        assert_eq!(res["isError"], true);
        let res = call(SEARCH_SNAPSHOT, &json!({"query": ""}), &cache, &whole());
        assert_eq!(res["isError"], true);
        let res = call(
            EXPAND_SNAPSHOT,
            &json!({"uid": "1_0", "pageId": 9}),
            &cache,
            &whole(),
        );
        assert!(res["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .contains("page 9"));
    }

    fn whole() -> SnapshotOptions {
        SnapshotOptions::for_level(crate::level::Level::Moderate)
    }

    #[test]
    fn expand_without_uid_returns_the_whole_page_filtered_at_the_level() {
        let mut cache = SnapshotCache::new(1 << 20);
        let links: String = (0..30)
            .map(|i| {
                format!(
                    "  uid=1_{} link \"item {i}\" url=\"https://x.test/{i}\"\n",
                    i + 1
                )
            })
            .collect();
        let raw = format!("uid=1_0 RootWebArea \"x\" url=\"https://x.test/\"\n{links}");
        cache.put("1", raw.clone(), None).unwrap_or_default();
        let res = call(EXPAND_SNAPSHOT, &json!({}), &cache, &whole());
        let got = res["content"][0]["text"].as_str().unwrap_or("").to_string();
        assert!(res["isError"].is_null(), "{got}");
        assert_eq!(got, notation::filter_snapshot(&raw, &whole()).text);
        assert!(
            got.contains("1_0 RootWebArea") && got.len() < raw.len(),
            "{got}"
        );
    }

    #[test]
    fn expand_with_until_returns_the_run_of_siblings() {
        let mut cache = SnapshotCache::new(1 << 20);
        let raw = "uid=1_0 RootWebArea \"x\"\n  uid=1_1 link \"a\"\n  uid=1_2 button \"b\"\n    uid=1_3 \"in b\"\n  uid=1_4 link \"c\"\n";
        cache.put("1", raw.to_string(), None).unwrap_or_default();
        let text = |res: &Value| res["content"][0]["text"].as_str().unwrap_or("").to_string();
        let res = call(
            EXPAND_SNAPSHOT,
            &json!({"uid": "1_2", "until": "1_4"}),
            &cache,
            &whole(),
        );
        let got = text(&res);
        assert!(res["isError"].is_null(), "{got}");
        assert!(
            got.contains("1_2 button") && got.contains("1_3 \"in b\"") && got.contains("1_4 link")
        );
        assert!(!got.contains("1_1 "), "{got}");
        let res = call(
            EXPAND_SNAPSHOT,
            &json!({"uid": "1_4", "until": "1_1"}),
            &cache,
            &whole(),
        );
        assert_eq!(res["isError"], true, "{}", text(&res));
    }

    #[test]
    fn page_keys_accept_numbers_and_strings() {
        let args = json!({"pageId": 2});
        assert_eq!(
            page_key(args.as_object().unwrap_or(&Map::new())),
            Some("2".into())
        );
        let args = json!({"pageId": "tab-2"});
        assert_eq!(
            page_key(args.as_object().unwrap_or(&Map::new())),
            Some("tab-2".into())
        );
    }
}
