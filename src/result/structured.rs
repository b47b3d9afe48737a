//! `structuredContent` beside filtered text.
//!
//! Claude Code shows the model `structuredContent` instead of `content` when both exist, so a
//! filter that only shrinks the text saves nothing there. chrome-devtools-mcp declares no
//! `outputSchema`, and its `structuredContent` repeats the text as JSON (the snapshot as a tree,
//! lists as arrays, the script result inside `message`) at 1.0–5.5x the text's size on the
//! structured corpus. Filtering that JSON the same way would need a JSON twin of every filter
//! and would still cost more than the filtered text, so when the text was filtered and the tool
//! has no `outputSchema`, `structuredContent` is dropped: every client then shows the filtered
//! text. A tool with an `outputSchema` keeps its `structuredContent` valid against it: untouched,
//! unless it only repeats the text (`{"result": "<the text>"}` of Python servers) under the one
//! plain string its schema declares, which then carries the filtered text (the raw page never
//! reaches the client beside it).

use serde_json::{Map, Value};

/// The member of `structuredContent` that only repeats the result's text: an object of one
/// string member equal to the text blocks joined by newlines (Python MCP servers put a tool's
/// `str` return value in `{"result": …}` so). Read before the text is filtered.
pub fn repeated_text_key(result: &Map<String, Value>) -> Option<String> {
    let Some(Value::Object(structured)) = result.get("structuredContent") else {
        return None;
    };
    let (key, Value::String(repeated)) = structured.iter().next()? else {
        return None;
    };
    if structured.len() != 1 {
        return None;
    }
    let mut texts = super::text_blocks(result);
    let first = texts.next()?;
    let same = match texts.next() {
        None => first == repeated,
        Some(second) => {
            let joined: Vec<&str> = [first, second].into_iter().chain(texts).collect();
            joined.join("\n") == *repeated
        }
    };
    same.then(|| key.clone())
}

/// `repeated_text_key`, read only where `reconcile_structured_content` would use it (a tool whose
/// `outputSchema` declares one plain string): else it compares the whole text for nothing.
pub fn repeated_key_if_kept(
    result: &Map<String, Value>,
    options: &super::ResultOptions,
) -> Option<String> {
    if !options.has_output_schema || options.text_schema_key.is_none() {
        return None;
    }
    repeated_text_key(result)
}

/// What became of `structuredContent` beside the filtered text, for the stats.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Removed {
    pub bytes: usize,
    pub tokens: usize,
}

/// `structuredContent` made consistent with a result whose text was filtered. Without an
/// `outputSchema` it is removed. With one it stays valid against it: untouched, except where it
/// only repeats the text (`repeated`, from `repeated_text_key` before the filter) under the key
/// the schema declares as its one plain string (`text_key`): that member then carries the
/// filtered text blocks, joined by newlines. Returns what the client no longer receives.
pub fn reconcile_structured_content(
    result: &mut Map<String, Value>,
    has_output_schema: bool,
    text_key: Option<&str>,
    repeated: Option<&str>,
) -> Removed {
    if !has_output_schema {
        return result
            .remove("structuredContent")
            .map_or_else(Removed::default, |removed| size(&removed));
    }
    let Some(key) = repeated.filter(|&k| text_key == Some(k)) else {
        return Removed::default();
    };
    let text = super::text_blocks(result).collect::<Vec<_>>().join("\n");
    let Some(slot) = result
        .get_mut("structuredContent")
        .and_then(|s| s.get_mut(key))
    else {
        return Removed::default();
    };
    let before = size(slot);
    *slot = Value::String(text);
    let after = size(slot);
    Removed {
        bytes: before.bytes.saturating_sub(after.bytes),
        tokens: before.tokens.saturating_sub(after.tokens),
    }
}

/// What the client no longer receives when `v` is removed: its JSON's bytes and tokens, counted
/// as the JSON is written rather than from a copy of it (`v` may be megabytes).
pub fn size(v: &Value) -> Removed {
    let mut sink = Counted::default();
    // Writing to `Counted` cannot fail, nor can serializing a `Value` (its keys are strings).
    if serde_json::to_writer(&mut sink, v).is_err() {
        return Removed::default();
    }
    Removed {
        bytes: sink.bytes,
        tokens: sink.tokens.tokens(),
    }
}

/// A writer that keeps only the length and the token estimate of what it is given.
#[derive(Default)]
struct Counted {
    bytes: usize,
    tokens: crate::tokens::TokenCount,
}

impl std::io::Write for Counted {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.bytes += buf.len();
        self.tokens.add(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The key of the one plain string member an `outputSchema` declares (`{"type": "object",
/// "properties": {"result": {"type": "string"}}}`, as Python MCP servers wrap a `str` return
/// value, titles and descriptions aside), if that is all it declares: `structuredContent` may
/// then carry the filtered text there and stay valid.
pub fn plain_text_key(output_schema: &Value) -> Option<String> {
    let schema = output_schema.as_object()?;
    let annotation = |k: &str| matches!(k, "title" | "description" | "$schema");
    let properties = schema.get("properties")?.as_object()?;
    let (key, property) = properties.iter().next()?;
    let plain_string = property.as_object().is_some_and(|p| {
        p.get("type").and_then(Value::as_str) == Some("string")
            && p.keys().all(|k| k == "type" || annotation(k))
    });
    let required_ok = schema
        .get("required")
        .is_none_or(|r| r.as_array().is_some_and(|r| r.iter().all(|k| k == key)));
    let only = schema.iter().all(|(k, v)| match k.as_str() {
        "type" => v == "object",
        "properties" | "required" => true,
        "additionalProperties" => v == false,
        _ => annotation(k),
    });
    (properties.len() == 1 && plain_string && required_ok && only).then(|| key.clone())
}

/// UTF-8 size of a result's `structuredContent` as serialized JSON (0 when absent).
pub fn structured_content_bytes(result: &Map<String, Value>) -> usize {
    result
        .get("structuredContent")
        .map_or(0, |value| value.to_string().len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => panic!("object"),
        }
    }

    #[test]
    fn drops_without_schema_and_keeps_with_one() {
        let mut map =
            object(json!({"content": [], "structuredContent": {"a": 1}, "_meta": {"x": 1}}));
        let mut kept = map.clone();
        assert_eq!(
            reconcile_structured_content(&mut kept, true, Some("a"), None),
            Removed::default()
        );
        assert!(kept.contains_key("structuredContent"));
        let removed = reconcile_structured_content(&mut map, false, None, None);
        assert_eq!(removed.bytes, r#"{"a":1}"#.len());
        assert!(!map.contains_key("structuredContent"));
        assert!(map.contains_key("_meta"));
    }

    #[test]
    fn size_counts_the_json_as_written() {
        let v = json!({"snapshot": {"id": "1_0", "name": "caf\u{e9} \"q\"\n\u{1}", "n": 1.5e300,
            "children": [{"a": true, "b": null, "c": -3}]}, "getElementById": "x\\y"});
        let json = v.to_string();
        assert_eq!(
            size(&v),
            Removed {
                bytes: json.len(),
                tokens: crate::tokens::estimate_tokens(&json),
            }
        );
    }

    #[test]
    fn a_repeat_of_the_text_is_found_and_carries_the_filtered_text_under_its_schema() {
        let raw = json!({"content": [{"type": "text", "text": "raw page"}],
            "structuredContent": {"result": "raw page"}});
        let map = object(raw);
        assert_eq!(repeated_text_key(&map).as_deref(), Some("result"));
        let other = object(json!({"content": [{"type": "text", "text": "raw page"}],
            "structuredContent": {"result": "raw page", "n": 1}}));
        assert_eq!(repeated_text_key(&other), None);
        let two = object(
            json!({"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
            "structuredContent": {"result": "a\nb"}}),
        );
        assert_eq!(repeated_text_key(&two).as_deref(), Some("result"));
        // The text filtered: under the schema's plain string the member follows it.
        let mut filtered = map.clone();
        filtered["content"][0]["text"] = json!("page");
        let removed =
            reconcile_structured_content(&mut filtered, true, Some("result"), Some("result"));
        assert_eq!(filtered["structuredContent"], json!({"result": "page"}));
        assert_eq!(removed.bytes, 4);
        // Another schema: untouched; no schema: dropped.
        let mut untouched = map.clone();
        untouched["content"][0]["text"] = json!("page");
        reconcile_structured_content(&mut untouched, true, None, Some("result"));
        assert_eq!(
            untouched["structuredContent"],
            json!({"result": "raw page"})
        );
        let mut dropped = map;
        reconcile_structured_content(&mut dropped, false, None, Some("result"));
        assert!(!dropped.contains_key("structuredContent"));
    }

    #[test]
    fn only_a_schema_of_one_plain_string_lets_the_text_in() {
        let fastmcp = json!({"type": "object", "title": "_WrappedResult",
            "properties": {"result": {"type": "string", "title": "Result"}}, "required": ["result"]});
        assert_eq!(plain_text_key(&fastmcp).as_deref(), Some("result"));
        for schema in [
            json!({"type": "object", "properties": {"result": {"type": "string", "maxLength": 10}}}),
            json!({"type": "object", "properties": {"result": {"type": "string", "enum": ["a"]}}}),
            json!({"type": "object", "properties": {"result": {"type": "string"}, "n": {"type": "number"}}}),
            json!({"type": "object", "properties": {"result": {"type": "number"}}}),
            json!({"type": "object", "properties": {"result": {"type": "string"}}, "minProperties": 2}),
        ] {
            assert_eq!(plain_text_key(&schema), None, "{schema}");
        }
    }

    /// A Python server (FastMCP) wraps a tool's `str` in `{"result": …}` and declares that
    /// `outputSchema`: through a session the filtered text, the delta or the budget's cut goes
    /// there too, never the raw page; without the schema it is dropped.
    #[test]
    fn a_python_servers_repeated_text_is_filtered_like_the_text() {
        use crate::level::Level;
        use crate::session::{Session, SessionOptions};
        let page: String = (0..400)
            .map(|i| {
                format!(
                    "  uid=1_{} link \"Item number {i}\" url=\"http://127.0.0.1/item/{i}\"\n",
                    i + 1
                )
            })
            .collect();
        let text = format!("## Latest page snapshot\nuid=1_0 RootWebArea \"Shop\" url=\"http://127.0.0.1/\"\n{page}");
        let result = json!({"content": [{"type": "text", "text": text}], "structuredContent": {"result": text}})
            .to_string();
        let list = |schema: bool| {
            let mut tool = json!({"name": "take_snapshot", "inputSchema": {"type": "object"}});
            if schema {
                tool["outputSchema"] = json!({"type": "object", "title": "_WrappedResult",
                    "properties": {"result": {"type": "string", "title": "Result"}}, "required": ["result"]});
            }
            json!({"tools": [tool]}).to_string()
        };
        for (max_tokens, schema) in [(25_000, true), (25_000, false), (300, true)] {
            let mut options = SessionOptions::for_level(Level::Moderate);
            options.max_tokens = max_tokens;
            let mut session = Session::new(options);
            session
                .compress_list_result("tools/list", &list(schema))
                .expect("list");
            let out = session
                .filter_tool_result("take_snapshot", &result, Some("{}"))
                .expect("ok")
                .expect("filtered");
            let out: Value = serde_json::from_str(&out).expect("JSON");
            let shown = out["content"][0]["text"].as_str().expect("text");
            assert_ne!(shown, text);
            if !schema {
                assert!(out.get("structuredContent").is_none(), "{out}");
                continue;
            }
            let repeated = out["structuredContent"]["result"].as_str().expect("result");
            assert!(
                repeated.len() < text.len() / 2,
                "{max_tokens}: {}",
                repeated.len()
            );
            // The text as filtered, before the session's stats line.
            assert!(shown.starts_with(repeated), "{max_tokens}");
            assert!(crate::tokens::estimate_tokens(repeated) <= max_tokens);
        }
    }
}
