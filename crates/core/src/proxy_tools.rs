//! The proxy's own tools, added to the upstream's `tools/list` and answered by the proxy from
//! the raw snapshots it cached: `expand_snapshot` (the unfiltered subtree under a uid) and
//! `search_snapshot` (matching lines with their ancestors). They let the agent fetch exactly
//! what a lossy level hid, without a second full snapshot.

use serde_json::{json, Map, Value};

use crate::describe;
use crate::held::{CacheMiss, Held};
use crate::level::Level;
use crate::notation;
use crate::result;
use crate::snapshot::SnapshotOptions;

pub const EXPAND_SNAPSHOT: &str = "expand_snapshot";
pub const SEARCH_SNAPSHOT: &str = "search_snapshot";
/// Reads on where a token budget cut a result (or a long answer of the other two).
pub const READ_RESULT: &str = "read_result";
pub const NAMES: [&str; 3] = [EXPAND_SNAPSHOT, SEARCH_SNAPSHOT, READ_RESULT];

/// Hits returned by `search_snapshot` when the agent gives no limit, and the most it may ask.
pub const DEFAULT_SEARCH_LIMIT: usize = 20;
const MAX_SEARCH_LIMIT: usize = 200;

/// The tool definitions, as `tools/list` entries, with their descriptions compressed at
/// `describe_level` like the upstream's. Kept as short as a model can still use them: a
/// snapshot's markers spell out the call (`expand_snapshot uid=… until=…`), so the
/// descriptions say only what each returns and that the proxy answers it, and the schemas hold
/// only what validation needs.
pub fn definitions(describe_level: Level) -> Vec<Value> {
    let mut defs = vec![
        json!({
            "name": EXPAND_SNAPSHOT,
            "description": "Returns what a snapshot marker hid or a delta left unchanged: the unfiltered subtree under uid, or the siblings from uid to until; without uid, the latest snapshot of the page whole, filtered as usual. Answered by the mcp-snapshot-filter proxy from the last snapshot; its uids work with click and fill.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "uid": {"type": "string"},
                    "until": {"type": "string"},
                    "depth": {"type": "integer", "minimum": 0},
                    "pageId": {"type": "integer"}
                },
                "additionalProperties": false
            },
            "annotations": {"readOnlyHint": true},
            "_meta": {PROXY_TOOL_META: true}
        }),
        json!({
            "name": SEARCH_SNAPSHOT,
            "description": "Returns the nodes of the last unfiltered snapshot whose role, name, text or attributes hold query (a regex if regex is true), with uid and ancestors, hidden ones included. Answered by the mcp-snapshot-filter proxy.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "minLength": 1},
                    "regex": {"type": "boolean"},
                    "limit": {"type": "integer", "minimum": 1, "maximum": MAX_SEARCH_LIMIT},
                    "pageId": {"type": "integer"}
                },
                "required": ["query"],
                "additionalProperties": false
            },
            "annotations": {"readOnlyHint": true},
            "_meta": {PROXY_TOOL_META: true}
        }),
        json!({
            "name": READ_RESULT,
            "description": "Returns the rest of a result a token budget cut, from offset on. Answered by the mcp-snapshot-filter proxy; call it as the cut marker says (read_result id=… offset=…).",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "id": {"type": "string"},
                    "offset": {"type": "integer", "minimum": 0}
                },
                "required": ["id"],
                "additionalProperties": false
            },
            "annotations": {"readOnlyHint": true},
            "_meta": {PROXY_TOOL_META: true}
        }),
    ];
    // `off` leaves descriptions as they are: not run at all (every call's argument check reads
    // these definitions, at `off`).
    for def in defs.iter_mut().filter(|_| describe_level > Level::Off) {
        if let Some(Value::String(text)) = def.get_mut("description") {
            *text = describe::compress_text(text, describe_level);
        }
    }
    defs
}

/// The `_meta` key that marks the proxy's own tools in `tools/list`.
pub const PROXY_TOOL_META: &str = "mcp-snapshot-filter/proxyTool";

/// Tools whose results carry a page snapshot the proxy caches: each upstream's snapshot tool
/// (chrome-devtools-mcp's `take_snapshot`, Playwright MCP's `browser_snapshot`) by name, and any tool the filters
/// read (`result::tools::is_content_heavy`) whose schema has an `includeSnapshot` argument
/// (chrome-devtools-mcp's `click`, `fill`, ...). Playwright's action tools answer with a
/// snapshot too, but every Playwright list has `browser_snapshot`.
pub fn returns_snapshots(tool: &Value) -> bool {
    let Some(name) = tool.get("name").and_then(Value::as_str) else {
        return false;
    };
    if crate::notation::UPSTREAMS
        .iter()
        .any(|u| u.snapshot_tool == name)
    {
        return true;
    }
    result::tools::is_content_heavy(name)
        && tool
            .pointer("/inputSchema/properties/includeSnapshot")
            .is_some()
}

/// Whether a call of `tool` with these arguments (JSON text) may answer with a page snapshot,
/// which the proxy's tools then read: `take_snapshot`, `browser_snapshot` and chrome-devtools-mcp's
/// `wait_for` always do, an action tool the filters read only when asked (`includeSnapshot:
/// true`; chrome-devtools-mcp 1.11 answers without one otherwise), and Playwright's action tools
/// may carry one inline. Lists, scripts and every other tool never do. The proxy holds a call
/// of its tools back while such a call of the same page is in flight, and only then.
pub fn call_returns_snapshot(tool: &str, arguments_json: Option<&str>) -> bool {
    if matches!(tool, "take_snapshot" | "browser_snapshot" | "wait_for") {
        return true;
    }
    // The lists and the script tool the filters read answer with their own sections only.
    let lists_or_script = matches!(
        tool,
        "list_network_requests" | "list_console_messages" | result::tools::EVALUATE_SCRIPT
    );
    if lists_or_script || !result::tools::is_content_heavy(tool) {
        return false;
    }
    if tool.starts_with("browser_") {
        return true;
    }
    arguments_json
        .and_then(|a| serde_json::from_str::<Value>(a).ok())
        .is_some_and(|a| a.get("includeSnapshot") == Some(&Value::Bool(true)))
}

/// Whether the proxy's tool `name` reads the page's snapshot (`read_result` reads a text the
/// agent already got, never one in flight).
pub fn reads_snapshots(name: &str) -> bool {
    name == EXPAND_SNAPSHOT || name == SEARCH_SNAPSHOT
}

/// Whether a `tools/list` result (one page of it) has a tool that returns snapshots.
pub fn lists_a_snapshot_tool(result: &Value) -> bool {
    result
        .get("tools")
        .and_then(Value::as_array)
        .is_some_and(|tools| tools.iter().any(returns_snapshots))
}

/// Answers `read_result`: the kept text from `offset`, cut to `bound` with a
/// marker naming the next offset.
pub fn read_result(
    arguments: &Value,
    held: &Held,
    bound: crate::result::budget::cut::Bound,
) -> Value {
    let empty = Map::new();
    let args = arguments.as_object().unwrap_or(&empty);
    if let Err(msg) = validate(READ_RESULT, args) {
        return error_result(&msg);
    }
    let id = args.get("id").and_then(Value::as_str).unwrap_or_default();
    let offset = args
        .get("offset")
        .and_then(Value::as_u64)
        .and_then(|n| usize::try_from(n).ok())
        .unwrap_or(0);
    let text = match held.cut_text(id) {
        Some(text) => text,
        None => {
            return error_result(&format!(
                "No cut result {} is kept (unknown, or evicted from the proxy's cache): call the tool again.",
                quote(id)
            ))
        }
    };
    let Some(rest) = text.get(offset..) else {
        return error_result(&format!(
            "offset {offset} is not a position in result {} ({} bytes): use an offset a cut marker names.",
            quote(id),
            text.len()
        ));
    };
    let marker = |cut: usize| {
        crate::result::budget::cut::cut_marker(
            rest.get(cut..).unwrap_or_default(),
            bound,
            Some(&format!("read_result id={id} offset={}", offset + cut)),
        )
    };
    let answer = crate::result::budget::cut::cut_to_budget(rest, bound, &marker);
    json!({"content": [{"type": "text", "text": answer.unwrap_or_else(|| rest.to_string())}]})
}

/// Appends the proxy's tools to a `tools/list` result, unless the upstream already has a tool
/// of that name (the upstream's wins, and the proxy then never intercepts it). Returns the
/// names added.
pub fn add_to_tools_list(result: &mut Value, describe_level: Level) -> Vec<&'static str> {
    let Some(tools) = result.get_mut("tools").and_then(Value::as_array_mut) else {
        return Vec::new();
    };
    let mut added = Vec::new();
    for def in definitions(describe_level) {
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

/// Answers a call of one of the proxy's tools with a `CallToolResult`. The arguments are
/// checked against the tool's own `inputSchema` first (a string `pageId` is an error, not
/// page 1), and error texts quote at most a short prefix of an argument.
/// `whole_page` is how the session filters a whole page (`expand_snapshot` without uid).
pub fn call(name: &str, arguments: &Value, held: &Held, whole_page: &SnapshotOptions) -> Value {
    let empty = Map::new();
    let args = match arguments {
        Value::Object(args) => args,
        Value::Null => &empty,
        other => {
            return error_result(&format!(
                "{name} takes an object of arguments, not {}.",
                type_name(other)
            ))
        }
    };
    if let Err(msg) = validate(name, args) {
        return error_result(&msg);
    }
    let page = page_key(args);
    let raw = match held.snapshot(page.as_deref()) {
        Ok(raw) => raw,
        Err(miss) => return error_result(&miss_message(&miss)),
    };
    let text_arg = |key: &str| args.get(key).and_then(Value::as_str);
    let count_arg = |key: &str| {
        args.get(key)
            .and_then(Value::as_u64)
            .and_then(|n| usize::try_from(n).ok())
    };
    let answer = match name {
        EXPAND_SNAPSHOT if text_arg("uid").is_none() => {
            let text = notation::filter_snapshot(raw, whole_page).text;
            return json!({"content": [{"type": "text", "text": text}]});
        }
        EXPAND_SNAPSHOT => notation::expand_range(
            raw,
            text_arg("uid").unwrap_or_default(),
            text_arg("until"),
            count_arg("depth"),
        ),
        SEARCH_SNAPSHOT => {
            let regex = args.get("regex").and_then(Value::as_bool).unwrap_or(false);
            let limit = count_arg("limit").unwrap_or(DEFAULT_SEARCH_LIMIT);
            notation::search_snapshot(raw, text_arg("query").unwrap_or_default(), regex, limit)
                .map(|hits| hits.text)
        }
        other => return error_result(&format!("{} is not a tool of the proxy.", quote(other))),
    };
    match answer {
        Ok(text) => json!({"content": [{"type": "text", "text": text}]}),
        Err(e) => error_result(&short_error(&e.to_string(), args)),
    }
}

/// At most this many characters of an argument appear in an error text.
const QUOTED_CHARS: usize = 40;

/// A value quoted for an error text: JSON-escaped, cut to `QUOTED_CHARS` characters.
fn quote(value: &str) -> String {
    let mut chars = value.chars();
    let head: String = chars.by_ref().take(QUOTED_CHARS).collect();
    let more = if chars.next().is_some() { "…" } else { "" };
    format!("{}{more}", Value::String(head))
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_u64() || n.is_i64() => "an integer",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A short form of an argument's value for an error text.
fn shown(value: &Value) -> String {
    match value {
        Value::String(s) => format!("{} {}", type_name(value), quote(s)),
        Value::Number(n) => format!("{} ({})", type_name(value), quote(&n.to_string())),
        other => type_name(other).to_string(),
    }
}

fn type_name_of(schema_type: &str) -> &'static str {
    match schema_type {
        "string" => "a string",
        "boolean" => "a boolean (true or false)",
        "integer" => "an integer",
        _ => "a number",
    }
}

/// Checks `args` against the `inputSchema` of the proxy tool `name` (the keywords its schemas
/// use: `type`, `minimum`, `maximum`, `minLength`, `required`, `additionalProperties: false`).
fn validate(name: &str, args: &Map<String, Value>) -> Result<(), String> {
    let defs = definitions(Level::Off);
    let Some(schema) = defs
        .iter()
        .find(|d| d.get("name").and_then(Value::as_str) == Some(name))
        .and_then(|d| d.get("inputSchema"))
    else {
        return Err(format!("{} is not a tool of the proxy.", quote(name)));
    };
    let empty = Map::new();
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    for required in schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        if !args.contains_key(required) {
            return Err(format!("{name} needs a \"{required}\" argument."));
        }
    }
    for (key, value) in args {
        let Some(property) = properties.get(key) else {
            let known: Vec<&str> = properties.keys().map(String::as_str).collect();
            return Err(format!(
                "{name} has no argument {} (it takes {}).",
                quote(key),
                known.join(", ")
            ));
        };
        let wanted = property.get("type").and_then(Value::as_str).unwrap_or("");
        let fits = match wanted {
            "string" => value.is_string(),
            "boolean" => value.is_boolean(),
            "integer" => value.is_u64() || value.is_i64(),
            "number" => value.is_number(),
            _ => true,
        };
        if !fits {
            return Err(format!(
                "{name}: \"{key}\" must be {}, not {}.",
                type_name_of(wanted),
                shown(value)
            ));
        }
        if let Some(n) = value.as_f64() {
            let min = property.get("minimum").and_then(Value::as_f64);
            let max = property.get("maximum").and_then(Value::as_f64);
            if min.is_some_and(|m| n < m) || max.is_some_and(|m| n > m) {
                let bounds = match (min, max) {
                    (Some(a), Some(b)) => format!("from {a} to {b}"),
                    (Some(a), None) => format!("at least {a}"),
                    (None, Some(b)) => format!("at most {b}"),
                    (None, None) => String::new(),
                };
                return Err(format!(
                    "{name}: \"{key}\" must be {bounds}, not {}.",
                    quote(&value.to_string())
                ));
            }
        }
        let min_length = property.get("minLength").and_then(Value::as_u64);
        if let (Some(s), Some(min)) = (value.as_str(), min_length) {
            if (s.chars().count() as u64) < min {
                return Err(format!("{name}: \"{key}\" must not be empty."));
            }
        }
    }
    Ok(())
}

/// An error text from the snapshot readers with every long string argument cut to a short
/// quoted prefix, and a regex diagnostic reduced to its first and last lines (the lines
/// between repeat the pattern).
fn short_error(message: &str, args: &Map<String, Value>) -> String {
    let lines: Vec<&str> = message.lines().collect();
    let mut text = match lines.as_slice() {
        [first, .., last] if lines.len() > 2 => format!("{first} {}", last.trim()),
        _ => lines.join(" "),
    };
    for value in args.values().filter_map(Value::as_str) {
        if value.chars().count() <= QUOTED_CHARS {
            continue;
        }
        let short = quote(value);
        text = text.replace(&format!("{value:?}"), &short);
        text = text.replace(value, &short);
    }
    text
}

fn miss_message(miss: &CacheMiss) -> String {
    match miss {
        CacheMiss::NoSnapshot { page: None } => {
            "No snapshot to read yet: take one first (take_snapshot, or browser_snapshot with Playwright MCP).".to_string()
        }
        CacheMiss::NoSnapshot { page: Some(p) } => format!(
            "No snapshot of page {p} is cached (it was never taken or was evicted): call take_snapshot for that page first."
        ),
        CacheMiss::TooLarge { page, bytes, cap } => {
            let which = if page.is_empty() {
                String::new()
            } else {
                format!(" of page {page}")
            };
            // Room for the snapshot and what deltas keep of it, in the option's own unit.
            let suggested = bytes.saturating_mul(2).div_ceil(1 << 20);
            format!(
                "The latest snapshot{which} ({bytes} bytes) is larger than the proxy's whole snapshot cache ({cap} bytes), so it is not kept and these tools cannot read it (nor an older one): restart the proxy with a larger --snapshot-cache-bytes (or MCP_SNAPSHOT_FILTER_SNAPSHOT_CACHE_BYTES), e.g. --snapshot-cache-bytes={suggested}M."
            )
        }
    }
}

fn error_result(message: &str) -> Value {
    json!({"content": [{"type": "text", "text": message}], "isError": true})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_call_that_may_answer_with_a_snapshot_holds_the_proxy_tools_back() {
        for (tool, arguments) in [
            ("take_snapshot", None),
            ("take_snapshot", Some(r#"{"pageId":1}"#)),
            ("wait_for", Some(r#"{"text":["Done"]}"#)),
            ("click", Some(r#"{"uid":"1_2","includeSnapshot":true}"#)),
            (
                "fill_form",
                Some(r#"{"elements":[],"includeSnapshot":true}"#),
            ),
            ("browser_snapshot", None),
            ("browser_click", Some(r#"{"ref":"e2"}"#)),
        ] {
            assert!(
                call_returns_snapshot(tool, arguments),
                "{tool} {arguments:?}"
            );
        }
        for (tool, arguments) in [
            ("click", Some(r#"{"uid":"1_2"}"#)),
            ("click", Some(r#"{"uid":"1_2","includeSnapshot":false}"#)),
            ("click", Some(r#"{"uid":"1_2","includeSnapshot":"true"}"#)),
            ("click", Some("not json")),
            ("click", None),
            ("list_network_requests", Some(r#"{"includeSnapshot":true}"#)),
            ("list_console_messages", None),
            ("evaluate_script", Some(r#"{"function":"() => 1"}"#)),
            ("navigate_page", Some(r#"{"url":"http://127.0.0.1/"}"#)),
            ("browser_network_requests", None),
            ("take_screenshot", None),
        ] {
            assert!(
                !call_returns_snapshot(tool, arguments),
                "{tool} {arguments:?}"
            );
        }
        assert!(reads_snapshots(EXPAND_SNAPSHOT) && reads_snapshots(SEARCH_SNAPSHOT));
        assert!(!reads_snapshots(READ_RESULT));
    }

    #[test]
    fn adds_both_tools_unless_the_upstream_has_one_of_that_name() {
        let mut list = json!({"tools": [{"name": "take_snapshot"}]});
        assert_eq!(
            add_to_tools_list(&mut list, Level::Moderate),
            vec![EXPAND_SNAPSHOT, SEARCH_SNAPSHOT, READ_RESULT]
        );
        assert_eq!(list["tools"].as_array().map(Vec::len), Some(4));

        let mut clash = json!({"tools": [{"name": "search_snapshot", "description": "theirs"}]});
        assert_eq!(
            add_to_tools_list(&mut clash, Level::Moderate),
            vec![EXPAND_SNAPSHOT, READ_RESULT]
        );
        assert_eq!(clash["tools"][0]["description"], "theirs");
        assert_eq!(clash["tools"].as_array().map(Vec::len), Some(3));
    }

    #[test]
    fn calls_without_a_snapshot_or_with_bad_arguments_are_error_results() {
        let mut held = Held::new(1024);
        let res = call(EXPAND_SNAPSHOT, &json!({"uid": "1_1"}), &held, &whole());
        assert_eq!(res["isError"], true);
        assert!(res["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .contains("take_snapshot"));

        held.keep_snapshot("3", "uid=1_0 RootWebArea \"x\"\n".to_string(), None)
            .unwrap_or_default();
        let res = call(EXPAND_SNAPSHOT, &json!({"uid": 7}), &held, &whole());
        assert_eq!(res["isError"], true);
        let res = call(
            EXPAND_SNAPSHOT,
            &json!({"uid": "1_0", "depth": -1}),
            &held,
            &whole(),
        );
        assert_eq!(res["isError"], true);
        let res = call(
            EXPAND_SNAPSHOT,
            &json!({"uid": "1_0", "until": 3}),
            &held,
            &whole(),
        );
        assert_eq!(res["isError"], true);
        let res = call(SEARCH_SNAPSHOT, &json!({"query": ""}), &held, &whole());
        assert_eq!(res["isError"], true);
        let res = call(
            EXPAND_SNAPSHOT,
            &json!({"uid": "1_0", "pageId": 9}),
            &held,
            &whole(),
        );
        assert!(res["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .contains("page 9"));
    }

    /// A snapshot larger than the whole cache: the tools say so, naming its size, the cap and
    /// the option, and never answer from an older snapshot (of that page or another).
    #[test]
    fn a_snapshot_larger_than_the_cache_is_named_not_answered_from_an_older_one() {
        let small = "uid=1_0 RootWebArea \"old\"\n  uid=1_1 link \"Customers\"\n";
        let big: String = std::iter::once("uid=2_0 RootWebArea \"new\"\n".to_string())
            .chain((0..40).map(|i| format!("  uid=2_{} link \"Customers {i}\"\n", i + 1)))
            .collect();
        let mut held = Held::new(big.len() - 1);
        held.keep_snapshot("1", small.to_string(), None)
            .unwrap_or_default();
        held.keep_snapshot("2", small.to_string(), None)
            .unwrap_or_default();
        assert!(held.keep_snapshot("2", big.clone(), None).is_err());
        for (name, args) in [
            (SEARCH_SNAPSHOT, json!({"query": "Customers"})),
            (SEARCH_SNAPSHOT, json!({"query": "Customers", "pageId": 2})),
            (EXPAND_SNAPSHOT, json!({"uid": "1_1"})),
            (EXPAND_SNAPSHOT, json!({})),
        ] {
            let text = error_text(&call(name, &args, &held, &whole()));
            assert!(
                text.contains(&format!("page 2 ({} bytes)", big.len()))
                    && text.contains(&format!("({} bytes)", big.len() - 1))
                    && text.contains("--snapshot-cache-bytes="),
                "{args}: {text}"
            );
        }
        // Page 1 is still read when named.
        let res = call(
            SEARCH_SNAPSHOT,
            &json!({"query": "Customers", "pageId": 1}),
            &held,
            &whole(),
        );
        assert!(res["isError"].is_null(), "{res}");
        // Without a pageId the message names no page.
        held.keep_snapshot("", big.clone(), None)
            .unwrap_or_default();
        let text = error_text(&call(
            SEARCH_SNAPSHOT,
            &json!({"query": "a"}),
            &held,
            &whole(),
        ));
        assert!(text.starts_with("The latest snapshot ("), "{text}");
    }

    fn whole() -> SnapshotOptions {
        SnapshotOptions::for_level(Level::Moderate)
    }

    #[test]
    fn expand_without_uid_returns_the_whole_page_filtered_at_the_level() {
        let mut held = Held::new(1 << 20);
        let links: String = (0..30)
            .map(|i| {
                format!(
                    "  uid=1_{} link \"item {i}\" url=\"https://x.test/{i}\"\n",
                    i + 1
                )
            })
            .collect();
        let raw = format!("uid=1_0 RootWebArea \"x\" url=\"https://x.test/\"\n{links}");
        held.keep_snapshot("1", raw.clone(), None)
            .unwrap_or_default();
        let res = call(EXPAND_SNAPSHOT, &json!({}), &held, &whole());
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
        let mut held = Held::new(1 << 20);
        let raw = "uid=1_0 RootWebArea \"x\"\n  uid=1_1 link \"a\"\n  uid=1_2 button \"b\"\n    uid=1_3 \"in b\"\n  uid=1_4 link \"c\"\n";
        held.keep_snapshot("1", raw.to_string(), None)
            .unwrap_or_default();
        let text = |res: &Value| res["content"][0]["text"].as_str().unwrap_or("").to_string();
        let res = call(
            EXPAND_SNAPSHOT,
            &json!({"uid": "1_2", "until": "1_4"}),
            &held,
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
            &held,
            &whole(),
        );
        assert_eq!(res["isError"], true, "{}", text(&res));
    }

    fn error_text(res: &Value) -> String {
        assert_eq!(res["isError"], true, "{res}");
        res["content"][0]["text"].as_str().unwrap_or("").to_string()
    }

    #[test]
    fn arguments_are_checked_against_the_tools_own_schema() {
        let mut held = Held::new(1 << 20);
        let raw = "uid=1_0 RootWebArea \"x\"\n  uid=1_1 link \"a\"\n";
        held.keep_snapshot("1", raw.to_string(), None)
            .unwrap_or_default();
        // pageId "1" is not page 1: the schema says integer.
        let text = error_text(&call(
            EXPAND_SNAPSHOT,
            &json!({"uid": "1_1", "pageId": "1"}),
            &held,
            &whole(),
        ));
        assert!(
            text.contains("\"pageId\" must be an integer, not a string \"1\""),
            "{text}"
        );
        let ok = call(
            EXPAND_SNAPSHOT,
            &json!({"uid": "1_1", "pageId": 1}),
            &held,
            &whole(),
        );
        assert!(ok["isError"].is_null(), "{ok}");
        for (name, args, says) in [
            (
                EXPAND_SNAPSHOT,
                json!({"uid": 7}),
                "\"uid\" must be a string",
            ),
            (
                EXPAND_SNAPSHOT,
                json!({"uid": "1_1", "depth": 1.5}),
                "\"depth\" must be an integer",
            ),
            (
                EXPAND_SNAPSHOT,
                json!({"uid": "1_1", "uuid": "1_1"}),
                "no argument \"uuid\"",
            ),
            (
                SEARCH_SNAPSHOT,
                json!({"query": "a", "limit": 0}),
                "\"limit\" must be from 1 to 200",
            ),
            (
                SEARCH_SNAPSHOT,
                json!({"query": "a", "limit": 201}),
                "\"limit\" must be from 1 to 200",
            ),
            (
                SEARCH_SNAPSHOT,
                json!({"query": "a", "regex": "yes"}),
                "\"regex\" must be a boolean",
            ),
            (SEARCH_SNAPSHOT, json!({"regex": true}), "needs a \"query\""),
            (SEARCH_SNAPSHOT, json!(["a"]), "object of arguments"),
        ] {
            let text = error_text(&call(name, &args, &held, &whole()));
            assert!(text.contains(says), "{args}: {text}");
        }
    }

    #[test]
    fn error_texts_quote_only_a_short_prefix_of_an_argument() {
        let mut held = Held::new(1 << 20);
        held.keep_snapshot("1", "uid=1_0 RootWebArea \"x\"\n".to_string(), None)
            .unwrap_or_default();
        let long = "x".repeat(100_000);
        for (name, args) in [
            (EXPAND_SNAPSHOT, json!({"uid": long})),
            (EXPAND_SNAPSHOT, json!({"uid": "1_0", "until": long})),
            (EXPAND_SNAPSHOT, json!({"uid": long, "pageId": long})),
            (
                SEARCH_SNAPSHOT,
                json!({"query": format!("({long}"), "regex": true}),
            ),
            (SEARCH_SNAPSHOT, json!({"query": "a", "limit": long})),
            (SEARCH_SNAPSHOT, json!({"query": "a", long.clone(): 1})),
        ] {
            let text = error_text(&call(name, &args, &held, &whole()));
            assert!(
                text.len() < 400 && !text.contains(&"x".repeat(41)),
                "{} bytes: {}",
                text.len(),
                text.chars().take(300).collect::<String>()
            );
        }
        // read_result's unknown id too (issue 24 item 13: it echoed a 200 KB id whole).
        let text = error_text(&read_result(
            &json!({ "id": long }),
            &held,
            crate::result::budget::cut::Bound::tokens(usize::MAX),
        ));
        assert!(
            text.len() < 400 && !text.contains(&"x".repeat(41)),
            "{} bytes: {}",
            text.len(),
            text.chars().take(300).collect::<String>()
        );
    }

    /// The proxy's tools go only in front of an upstream with a tool that returns snapshots.
    #[test]
    fn snapshot_tools_are_found_in_the_lists_that_have_them() {
        let dir = crate::test_support::shipped("__test__/fixtures/lists");
        for (file, has) in [
            ("chrome-devtools-mcp.default.tools-list.json", true),
            ("chrome-devtools-mcp.all-categories.tools-list.json", true),
            ("playwright-mcp.tools-list.json", true),
            ("server-everything.tools-list.json", false),
            ("server-filesystem.tools-list.json", false),
            ("server-github.tools-list.json", false),
            ("server-memory.tools-list.json", false),
            ("server-sequential-thinking.tools-list.json", false),
        ] {
            let text = std::fs::read_to_string(dir.join(file)).unwrap_or_default();
            let list: Value = serde_json::from_str(&text).unwrap_or_default();
            assert_eq!(lists_a_snapshot_tool(&list["result"]), has, "{file}");
        }
        // chrome-devtools-mcp --slim (evaluate, navigate, screenshot) has none.
        let slim =
            json!({"tools": [{"name": "evaluate"}, {"name": "navigate"}, {"name": "screenshot"}]});
        assert!(!lists_a_snapshot_tool(&slim));
        // An action tool returns one only with includeSnapshot in its schema.
        let click = |props: Value| json!({"tools": [{"name": "click", "inputSchema": {"type": "object", "properties": props}}]});
        assert!(lists_a_snapshot_tool(&click(
            json!({"uid": {}, "includeSnapshot": {}})
        )));
        assert!(!lists_a_snapshot_tool(&click(json!({"uid": {}}))));
        // A tool outside the filtered ones does not count, whatever its schema.
        let other = json!({"tools": [{"name": "take_heapsnapshot", "inputSchema": {"properties": {"includeSnapshot": {}}}}]});
        assert!(!lists_a_snapshot_tool(&other));
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
