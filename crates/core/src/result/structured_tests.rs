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
    let mut map = object(json!({"content": [], "structuredContent": {"a": 1}, "_meta": {"x": 1}}));
    let mut kept = map.clone();
    assert_eq!(
        reconcile_structured_content(&mut kept, true, Some("a"), None, None),
        Removed::default()
    );
    assert!(kept.contains_key("structuredContent"));
    let removed = reconcile_structured_content(&mut map, false, None, None, None);
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

/// JSON of every kind, as a server may write it: escapes of every sort (in keys too),
/// unicode, numbers a `Value` holds otherwise than written, nesting, spaces.
const VARIED: [&str; 8] = [
    r#"{"snapshot": {"id": "1_0", "name": "caf\u00e9 \"q\"\n\u0001 \/ \ud83d\ude00 \u2603 ☃",
            "n": 1e5, "z": -0.0, "f": 1.5e300, "g": 0.1, "e": 2E-7, "i": -3, "zero": -0,
            "u": 18446744073709551615, "over": 18446744073709551616, "t": true, "no": false,
            "nil": null, "children": [ {"id": "1_1", "a\tb": [1, [2, [3, {}]], []]} ] },
            "k\u0065y": "\b\f\r\t\u001f\u007f"}"#,
    r#"[1, 2.50, "x", {"a": {"b": {"c": [null]}}}]"#,
    r#""a string alone""#,
    r#"-12.5e-3"#,
    r#"{}"#,
    r#"{"snapshot": []}"#,
    "{\"snapshot\":{\"id\":\"1_0\",\"role\":\"RootWebArea\",\"name\":\"Página — 東京\"}}",
    r#"{"a": "\u00e9\u00E9", "snapshot": "not a tree", "b": [true, false]}"#,
];

#[test]
fn measuring_the_text_counts_what_size_counts_of_its_value() {
    for json in VARIED {
        let value: Value = serde_json::from_str(json).expect(json);
        let written = value.to_string();
        let text = measure(json, true).expect(json);
        assert_eq!(text.removed, size(&value), "{json}");
        assert_eq!(text.removed.bytes, written.len(), "{json}");
        assert_eq!(
            text.removed.tokens,
            crate::tokens::estimate_tokens(&written),
            "{json}"
        );
        // Read from the whole result, as the filter reads it, with or without the value.
        let result = format!(r#"{{"content": [], "structuredContent": {json}, "n": 1}}"#);
        for keep_value in [false, true] {
            let (map, read) = read_result(&result, keep_value, true)
                .expect("JSON")
                .expect("an object");
            assert_eq!(read.expect("read").removed, size(&value), "{json}");
            let keys: Vec<&str> = map.keys().map(String::as_str).collect();
            assert_eq!(keys, ["content", "structuredContent", "n"]);
            let expected = match keep_value {
                true => value.clone(),
                false if value.get("snapshot").is_some_and(Value::is_object) => {
                    json!({"snapshot": {}})
                }
                false => Value::Null,
            };
            assert_eq!(map["structuredContent"], expected, "{json}");
        }
    }
}

/// Read without `measured` (no one reads the figures), a result is read and checked as with
/// it (the same members, snapshot, errors and fallbacks); only its measure is left 0.
#[test]
fn a_result_read_unmeasured_differs_only_in_its_measure() {
    let mut results: Vec<String> = VARIED
        .iter()
        .map(|json| format!(r#"{{"content": [], "structuredContent": {json}, "n": 1}}"#))
        .collect();
    results.extend(
        [
            r#"{"structuredContent": {"a": 1, "b": 2, "a": [3, 4]}, "content": []}"#,
            r#"{"structuredContent": {"snapshot": {"id": "1_0", "id": "1_1"}}}"#,
            r#"{"structuredContent": {"a": 1e400}}"#,
            r#"{"structuredContent": "\ud800"}"#,
            r#"{"structuredContent": {"a": 1}} x"#,
            r#"[{"structuredContent": 1}]"#,
        ]
        .map(str::to_string),
    );
    results.push(format!(
        r#"{{"structuredContent": {}1{}}}"#,
        "[".repeat(127),
        "]".repeat(127)
    ));
    let mut measured_some = 0;
    for result in &results {
        for keep_value in [false, true] {
            let measured = read_result(result, keep_value, true);
            let unmeasured = read_result(result, keep_value, false);
            match (&measured, &unmeasured) {
                (Err(e), Err(u)) => assert_eq!(e.to_string(), u.to_string(), "{result}"),
                (Ok(None), Ok(None)) => {}
                (Ok(Some((map, read))), Ok(Some((map_u, read_u)))) => {
                    assert_eq!(map, map_u, "{result}");
                    assert_eq!(read.is_some(), read_u.is_some(), "{result}");
                    if let (Some(read), Some(read_u)) = (read, read_u) {
                        measured_some += usize::from(read.removed.bytes > 0);
                        assert_eq!(read_u.removed, Removed::default(), "{result}");
                        assert_eq!(
                            format!("{:?}", read.snapshot()),
                            format!("{:?}", read_u.snapshot()),
                            "{result}"
                        );
                    }
                }
                (m, u) => panic!("{result}: {m:?} vs {u:?}"),
            }
        }
    }
    assert!(measured_some > 10);
}

/// What the text does not say member for member as its `Value` holds it (a repeated key:
/// the last one, in the first one's place) is measured from the `Value`; bad JSON is the
/// error a `Value` reads.
#[test]
fn a_result_the_text_cannot_measure_is_read_as_a_value() {
    let nested = |n: usize| {
        format!(
            r#"{{"content": [], "structuredContent": {}1{}}}"#,
            "[".repeat(n),
            "]".repeat(n)
        )
    };
    let in_snapshot = |n: usize, snapshot: fn(usize) -> String| {
        format!(
            r#"{{"content": [], "structuredContent": {{"snapshot": {}}}}}"#,
            snapshot(n)
        )
    };
    let children = |n: usize| {
        format!(
            r#"{}{{"id": "1_0"}}{}"#,
            r#"{"id": "1_0", "children": ["#.repeat(n),
            "]}".repeat(n)
        )
    };
    let results = [
        r#"{"structuredContent": {"a": 1, "b": 2, "a": [3, 4]}, "content": []}"#.to_string(),
        r#"{"structuredContent": {"snapshot": {"id": "1_0", "id": "1_1"}}}"#.to_string(),
        r#"{"structuredContent": 1, "structuredContent": {"x": "y"}}"#.to_string(),
        format!(
            r#"{{"structuredContent": {{{}}}}}"#,
            (0..40)
                .map(|i| format!(r#""k{}": {i}"#, i % 39))
                .collect::<Vec<_>>()
                .join(",")
        ),
        nested(126),
        nested(127),
        // Nesting in the snapshot, read for its tree as it is measured: in an attribute,
        // and in children.
        in_snapshot(124, |n| {
            format!(r#"{{"a": {}1{}}}"#, "[".repeat(n), "]".repeat(n))
        }),
        in_snapshot(125, |n| {
            format!(r#"{{"a": {}1{}}}"#, "[".repeat(n), "]".repeat(n))
        }),
        in_snapshot(61, children),
        in_snapshot(62, children),
        in_snapshot(63, children),
        r#"{"structuredContent": {"a": 1e400}}"#.to_string(),
        r#"{"structuredContent": "\ud800"}"#.to_string(),
        r#"{"structuredContent": {"a": 1}} x"#.to_string(),
        r#"{"structuredContent": {"a": 1}"#.to_string(),
        r#"[{"structuredContent": 1}]"#.to_string(),
        "3".to_string(),
    ];
    for result in &results {
        let expected = serde_json::from_str::<Value>(result);
        let read = read_result(result, false, true);
        match (&expected, &read) {
            (Err(e), Err(r)) => assert_eq!(e.to_string(), r.to_string(), "{result}"),
            (Ok(Value::Object(map)), Ok(Some((_, read)))) => {
                let removed = read.as_ref().map(|r| r.removed);
                let structured = map.get("structuredContent");
                assert_eq!(removed, structured.map(size), "{result}");
            }
            (Ok(v), Ok(None)) => assert!(!v.is_object()),
            // Not readable as a `Value` for its structuredContent alone (nested past the
            // limit, a lone surrogate): that member is skipped, measured as written, and
            // holds no tree (`read_deep`).
            (Err(_), Ok(Some((map, Some(read))))) => {
                let raw = serde_json::from_str::<RawMembers<'_>>(result)
                    .expect("members")
                    .0;
                let (_, member) = raw
                    .iter()
                    .find(|(k, _)| k == "structuredContent")
                    .expect("a structuredContent");
                assert_eq!(map.get("structuredContent"), Some(&Value::Null), "{result}");
                assert_eq!(read.removed.bytes, member.get().len(), "{result}");
                assert!(read.snapshot().is_none(), "{result}");
            }
            _ => panic!("{result}: {expected:?} / {read:?}"),
        }
    }
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
        reconcile_structured_content(&mut filtered, true, Some("result"), Some("result"), None);
    assert_eq!(filtered["structuredContent"], json!({"result": "page"}));
    assert_eq!(removed.bytes, 4);
    // Another schema: untouched; no schema: dropped.
    let mut untouched = map.clone();
    untouched["content"][0]["text"] = json!("page");
    reconcile_structured_content(&mut untouched, true, None, Some("result"), None);
    assert_eq!(
        untouched["structuredContent"],
        json!({"result": "raw page"})
    );
    let mut dropped = map;
    reconcile_structured_content(&mut dropped, false, None, Some("result"), None);
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
    let text = format!(
        "## Latest page snapshot\nuid=1_0 RootWebArea \"Shop\" url=\"http://127.0.0.1/\"\n{page}"
    );
    let result =
        json!({"content": [{"type": "text", "text": text}], "structuredContent": {"result": text}})
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
