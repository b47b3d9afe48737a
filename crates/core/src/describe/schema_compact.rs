//! From moderate on, a root `$schema` naming MCP's default dialect goes
//! (`drop_default_dialect`). `compact_schemas` (aggressive only) drops schema keywords that tell the model nothing and
//! cannot change any validation outcome:
//! - `$schema`, unless the schema uses a keyword whose meaning differs between JSON Schema
//!   dialects (array-form `items`, `prefixItems`, `dependencies`, boolean `exclusiveMinimum`,
//!   `$recursiveRef`, `$dynamicRef`, `unevaluated*`, ...), so the dialect cannot matter;
//! - `$comment` (an annotation by definition);
//! - `additionalProperties: true`, `required: []`, `properties: {}` (the defaults: no-ops).
//!
//! Everything else stays, including `additionalProperties: false`, bounds, `format`,
//! `default`, `title` and `examples`.

use serde_json::Value;

use super::list::push_subschemas_mut;

/// Keywords whose validation meaning depends on the dialect `$schema` names.
fn is_dialect_sensitive(key: &str, value: &Value) -> bool {
    match key {
        "prefixItems"
        | "dependencies"
        | "dependentSchemas"
        | "dependentRequired"
        | "$recursiveRef"
        | "$recursiveAnchor"
        | "$dynamicRef"
        | "$dynamicAnchor"
        | "unevaluatedProperties"
        | "unevaluatedItems"
        | "additionalItems"
        | "$vocabulary"
        | "$ref"
        | "$id"
        | "id" => true,
        "items" => value.is_array(),
        "exclusiveMinimum" | "exclusiveMaximum" => value.is_boolean(),
        _ => false,
    }
}

/// Visits every schema object below `schema` (itself included) with an explicit stack, through
/// the same subschema keywords the description walk follows.
fn for_each_schema(schema: &mut Value, visit: &mut dyn FnMut(&mut serde_json::Map<String, Value>)) {
    let mut stack = vec![schema];
    while let Some(node) = stack.pop() {
        let Value::Object(map) = node else { continue };
        visit(map);
        for (key, value) in map.iter_mut() {
            push_subschemas_mut(key, value, &mut stack);
        }
    }
}

fn uses_dialect_sensitive_keywords(schema: &mut Value) -> bool {
    let mut sensitive = false;
    for_each_schema(schema, &mut |map| {
        sensitive |= map.iter().any(|(k, v)| is_dialect_sensitive(k, v));
    });
    sensitive
}

/// Compacts one tool schema in place; returns whether anything was dropped.
pub fn compact_schema(schema: &mut Value) -> bool {
    let keep_dialect = uses_dialect_sensitive_keywords(schema);
    let mut changed = false;
    for_each_schema(schema, &mut |map| {
        let before = map.len();
        if !keep_dialect {
            map.shift_remove("$schema");
        }
        map.shift_remove("$comment");
        if map.get("additionalProperties") == Some(&Value::Bool(true)) {
            map.shift_remove("additionalProperties");
        }
        if map
            .get("required")
            .and_then(Value::as_array)
            .is_some_and(Vec::is_empty)
        {
            map.shift_remove("required");
        }
        if map
            .get("properties")
            .and_then(Value::as_object)
            .is_some_and(|m| m.is_empty())
        {
            map.shift_remove("properties");
        }
        changed |= map.len() != before;
    });
    changed
}

/// The dialect MCP assumes for a schema that names none (protocol 2025-11-25, SEP-1613).
const MCP_DEFAULT_DIALECT: [&str; 2] = [
    "https://json-schema.org/draft/2020-12/schema",
    "https://json-schema.org/draft/2020-12/schema#",
];

/// Drops a root `$schema` that names MCP's default dialect (moderate and aggressive): it says
/// what a schema without it means anyway. Kept when the schema uses a keyword whose meaning
/// differs between dialects, so a client that assumes an older default (an older protocol
/// version) validates the same too.
pub fn drop_default_dialect(schema: &mut Value) -> bool {
    let names_default = schema
        .get("$schema")
        .and_then(Value::as_str)
        .is_some_and(|uri| MCP_DEFAULT_DIALECT.contains(&uri));
    if !names_default || uses_dialect_sensitive_keywords(schema) {
        return false;
    }
    schema
        .as_object_mut()
        .and_then(|map| map.shift_remove("$schema"))
        .is_some()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn drops_only_no_op_keywords() {
        let mut schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$comment": "x",
            "properties": {"a": {"type": "object", "properties": {}, "required": [], "additionalProperties": true}},
            "additionalProperties": false
        });
        assert!(compact_schema(&mut schema));
        assert_eq!(
            schema,
            json!({"type": "object", "properties": {"a": {"type": "object"}}, "additionalProperties": false})
        );
    }

    #[test]
    fn drops_only_the_default_dialect_where_no_keyword_depends_on_it() {
        let mut schema = json!({"type": "object", "$schema": "https://json-schema.org/draft/2020-12/schema", "properties": {"a": {"type": "string"}}});
        assert!(drop_default_dialect(&mut schema));
        assert_eq!(
            schema,
            json!({"type": "object", "properties": {"a": {"type": "string"}}})
        );
        for mut kept in [
            json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"}),
            json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "prefixItems": [{"type": "string"}]}),
            json!({"type": "object"}),
        ] {
            let before = kept.clone();
            assert!(!drop_default_dialect(&mut kept));
            assert_eq!(kept, before);
        }
    }

    #[test]
    fn keeps_schema_uri_when_dialect_matters() {
        let mut schema = json!({"$schema": "http://json-schema.org/draft-07/schema#", "items": [{"type": "string"}]});
        assert!(!compact_schema(&mut schema));
        assert!(schema.get("$schema").is_some());
    }
}
