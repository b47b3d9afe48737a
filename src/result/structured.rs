//! `structuredContent` beside filtered text.
//!
//! Claude Code shows the model `structuredContent` instead of `content` when both exist, so a
//! filter that only shrinks the text saves nothing there. chrome-devtools-mcp declares no
//! `outputSchema`, and its `structuredContent` repeats the text as JSON (the snapshot as a tree,
//! lists as arrays, the script result inside `message`) at 1.0–5.5x the text's size on the
//! structured corpus. Filtering that JSON the same way would need a JSON twin of every filter
//! and would still cost more than the filtered text, so when the text was filtered and the tool
//! has no `outputSchema`, `structuredContent` is dropped: every client then shows the filtered
//! text. A tool with an `outputSchema` keeps its `structuredContent` untouched (valid by
//! construction); the text is still filtered.

use serde_json::{Map, Value};

/// Removes `structuredContent` from a result whose text was filtered, unless the tool declared
/// an `outputSchema`. Returns the JSON of what was removed (empty when nothing was).
pub fn reconcile_structured_content(
    result: &mut Map<String, Value>,
    has_output_schema: bool,
) -> String {
    if has_output_schema {
        return String::new();
    }
    result
        .remove("structuredContent")
        .map_or_else(String::new, |removed| removed.to_string())
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

    #[test]
    fn drops_without_schema_and_keeps_with_one() {
        let result = json!({"content": [], "structuredContent": {"a": 1}, "_meta": {"x": 1}});
        let Value::Object(mut map) = result else {
            panic!("object")
        };
        let mut kept = map.clone();
        assert_eq!(reconcile_structured_content(&mut kept, true), "");
        assert!(kept.contains_key("structuredContent"));
        assert_eq!(reconcile_structured_content(&mut map, false), r#"{"a":1}"#);
        assert!(!map.contains_key("structuredContent"));
        assert!(map.contains_key("_meta"));
    }
}
