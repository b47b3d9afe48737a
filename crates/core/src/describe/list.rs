//! Walks a list result and rewrites only the `description` values that are prose of the
//! list's items: tools (and every schema node of `inputSchema`/`outputSchema`), prompts and
//! their arguments, resources and resource templates. Walks use explicit stacks.

use serde_json::{Map, Value};

use super::context::Site;
use super::protect::Vocab;

/// Keywords whose value is one subschema.
const SCHEMA_ONE: [&str; 13] = [
    "items",
    "additionalProperties",
    "additionalItems",
    "unevaluatedProperties",
    "unevaluatedItems",
    "contains",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
    "contentSchema",
    "additionalInputs",
];
/// Keywords whose value is an array of subschemas.
const SCHEMA_ARRAY: [&str; 5] = ["allOf", "anyOf", "oneOf", "prefixItems", "items"];
/// Keywords whose value maps names to subschemas.
const SCHEMA_MAP: [&str; 6] = [
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
    "dependencies",
];

/// The items array of each list method's result.
pub fn items_key(method: &str) -> Option<&'static str> {
    match method {
        "tools/list" => Some("tools"),
        "prompts/list" => Some("prompts"),
        "resources/list" => Some("resources"),
        "resources/templates/list" => Some("resourceTemplates"),
        _ => None,
    }
}

/// Pushes the subschemas of one schema object onto `stack`.
fn push_subschemas<'a>(key: &str, value: &'a Value, stack: &mut Vec<&'a Value>) {
    if SCHEMA_ONE.contains(&key) && value.is_object() {
        stack.push(value);
    }
    if SCHEMA_ARRAY.contains(&key) {
        if let Value::Array(schemas) = value {
            stack.extend(schemas.iter().filter(|s| s.is_object()));
        }
    }
    if SCHEMA_MAP.contains(&key) {
        if let Value::Object(map) = value {
            stack.extend(map.values().filter(|s| s.is_object()));
        }
    }
}

/// `push_subschemas` for a schema being rewritten.
pub(super) fn push_subschemas_mut<'a>(
    key: &str,
    value: &'a mut Value,
    stack: &mut Vec<&'a mut Value>,
) {
    if value.is_object() && SCHEMA_ONE.contains(&key) {
        stack.push(value);
        return;
    }
    match value {
        Value::Object(m) if SCHEMA_MAP.contains(&key) => {
            stack.extend(m.values_mut().filter(|s| s.is_object()))
        }
        Value::Array(schemas) if SCHEMA_ARRAY.contains(&key) => {
            stack.extend(schemas.iter_mut().filter(|s| s.is_object()))
        }
        _ => {}
    }
}

/// Names and values a schema declares: property names, `required` entries, string enum and
/// const values.
pub fn schema_vocab(schema: &Value, vocab: &mut Vocab) {
    let mut stack = vec![schema];
    while let Some(node) = stack.pop() {
        let Value::Object(map) = node else { continue };
        for (key, value) in map {
            match key.as_str() {
                "properties" | "patternProperties" => {
                    if let Value::Object(props) = value {
                        props.keys().for_each(|name| vocab.add(name));
                    }
                }
                "required" | "enum" => {
                    if let Value::Array(values) = value {
                        values
                            .iter()
                            .filter_map(Value::as_str)
                            .for_each(|v| vocab.add(v));
                    }
                }
                "const" => {
                    if let Some(v) = value.as_str() {
                        vocab.add(v);
                    }
                }
                _ => {}
            }
            push_subschemas(key, value, &mut stack);
        }
    }
}

/// What `compress` is told about each description: where it sits (see `Site`) and its
/// node's number in walk order within the item (0 is the item's own description).
pub type Compress<'a> = dyn FnMut(&mut String, &Site, usize) -> bool + 'a;

/// Calls `compress` on every description of a schema (never inside `default`, `enum`,
/// `const`, `examples` or any keyword that is not a subschema); a description for which it
/// returns false is removed. `next_node` numbers the nodes across calls.
pub fn schema_descriptions(schema: &mut Value, next_node: &mut usize, compress: &mut Compress) {
    // Each node with the property it is the value of (name, required by the parent).
    let mut stack: Vec<(&mut Value, Option<(String, bool)>)> = vec![(schema, None)];
    while let Some((node, property)) = stack.pop() {
        let Value::Object(map) = node else { continue };
        *next_node += 1;
        let node_number = *next_node;
        if map.get("description").is_some_and(Value::is_string) {
            let site = Site::of_schema(map, property.as_ref().map(|(n, r)| (n.as_str(), *r)));
            let keep = match map.get_mut("description") {
                Some(Value::String(text)) => compress(text, &site, node_number),
                _ => true,
            };
            if !keep {
                map.shift_remove("description");
            }
        }
        let required: Vec<String> = match map.get("required") {
            Some(Value::Array(names)) if map.contains_key("properties") => names
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
            _ => Vec::new(),
        };
        for (key, value) in map.iter_mut() {
            if key == "properties" {
                if let Value::Object(props) = value {
                    for (name, sub) in props.iter_mut().filter(|(_, s)| s.is_object()) {
                        let is_required = required.iter().any(|r| r == name);
                        stack.push((sub, Some((name.clone(), is_required))));
                    }
                }
                continue;
            }
            let mut children = Vec::new();
            push_subschemas_mut(key, value, &mut children);
            stack.extend(children.into_iter().map(|c| (c, None)));
        }
    }
}

/// The name of one list item (a tool's or prompt's name), or "" when it has none.
pub fn item_name(item: &Map<String, Value>) -> &str {
    item.get("name").and_then(Value::as_str).unwrap_or("")
}

/// The vocabulary of one list item (tool, prompt, resource, template).
pub fn item_vocab(item: &Map<String, Value>) -> Vocab {
    let mut vocab = Vocab::default();
    if let Some(name) = item.get("name").and_then(Value::as_str) {
        vocab.add(name);
    }
    for key in ["inputSchema", "outputSchema"] {
        if let Some(schema) = item.get(key) {
            schema_vocab(schema, &mut vocab);
        }
    }
    if let Some(Value::Array(args)) = item.get("arguments") {
        for arg in args {
            if let Some(name) = arg.get("name").and_then(Value::as_str) {
                vocab.add(name);
            }
        }
    }
    vocab
}

/// Calls `compress` on every prose description of one list item (see `schema_descriptions`).
pub fn item_descriptions(item: &mut Map<String, Value>, compress: &mut Compress) {
    let item_site = Site::default();
    if let Some(Value::String(text)) = item.get_mut("description") {
        if !compress(text, &item_site, 0) {
            item.shift_remove("description");
        }
    }
    let mut next_node = 0;
    for key in ["inputSchema", "outputSchema"] {
        if let Some(schema) = item.get_mut(key) {
            schema_descriptions(schema, &mut next_node, compress);
        }
    }
    if let Some(Value::Array(args)) = item.get_mut("arguments") {
        for arg in args.iter_mut() {
            next_node += 1;
            let Value::Object(arg) = arg else { continue };
            let site = Site {
                property: arg.get("name").and_then(Value::as_str).map(str::to_string),
                required: arg
                    .get("required")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
                ..Site::default()
            };
            if let Some(Value::String(text)) = arg.get_mut("description") {
                if !compress(text, &site, next_node) {
                    arg.shift_remove("description");
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn all_descriptions(schema: &mut Value) -> Vec<String> {
        let mut seen = Vec::new();
        schema_descriptions(schema, &mut 0, &mut |t, _, _| {
            seen.push(t.clone());
            true
        });
        seen.sort();
        seen
    }

    #[test]
    fn reaches_every_nested_schema_and_nothing_else() {
        let mut schema = json!({
            "description": "root",
            "properties": {
                "description": {"type": "string", "description": "prop named description"},
                "a": {"items": {"description": "items"}, "default": {"description": "in default"}},
                "b": {"anyOf": [{"description": "anyOf"}], "enum": [{"description": "in enum"}]},
                "c": {"additionalProperties": {"description": "addl"}, "examples": [{"description": "ex"}]},
                "d": {"patternProperties": {"^x": {"description": "pattern"}}, "const": {"description": "const"}},
                "e": {"not": {"description": "not"}, "if": {"description": "if"}, "then": {"description": "then"}, "else": {"description": "else"}},
                "f": {"prefixItems": [{"description": "prefix"}], "oneOf": [{"allOf": [{"description": "deep"}]}]}
            },
            "$defs": {"x": {"description": "defs"}},
            "definitions": {"y": {"description": "definitions"}}
        });
        assert_eq!(
            all_descriptions(&mut schema),
            [
                "addl",
                "anyOf",
                "deep",
                "definitions",
                "defs",
                "else",
                "if",
                "items",
                "not",
                "pattern",
                "prefix",
                "prop named description",
                "root",
                "then"
            ]
        );
    }

    #[test]
    fn vocab_holds_names_and_enum_values() {
        let schema = json!({"properties": {"pageId": {"enum": ["light", "dark mode"]}}, "required": ["pageId"]});
        let mut vocab = Vocab::default();
        schema_vocab(&schema, &mut vocab);
        assert!(!vocab.is_empty());
        let text = "pick light or dark mode for pageId";
        let spans: Vec<&str> = super::super::protect::span_ranges(text, &vocab)
            .into_iter()
            .map(|(s, e)| &text[s..e])
            .collect();
        assert_eq!(spans, ["light", "dark mode", "pageId"]);
    }

    #[test]
    fn deep_schemas_do_not_overflow_the_stack() {
        let mut schema = json!({"description": "leaf"});
        for _ in 0..5000 {
            // Not json!(): it serializes its arguments recursively.
            let mut map = Map::new();
            map.insert("items".to_string(), schema);
            map.insert(
                "description".to_string(),
                Value::String("level".to_string()),
            );
            schema = Value::Object(map);
        }
        let mut count = 0;
        schema_descriptions(&mut schema, &mut 0, &mut |_, _, _| {
            count += 1;
            true
        });
        assert_eq!(count, 5001);
        let mut vocab = Vocab::default();
        schema_vocab(&schema, &mut vocab);
        // Dropping a 5,000-deep Value recurses in serde_json; unwind it by hand.
        let mut stack = vec![schema];
        while let Some(mut v) = stack.pop() {
            if let Some(Value::Object(m)) = v.get_mut("items").map(Value::take) {
                stack.push(Value::Object(m));
            }
        }
    }
}
