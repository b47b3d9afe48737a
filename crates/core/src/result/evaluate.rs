//! evaluate_script: `Script ran on page and returned:` then a ```` ```json ```` fence holding
//! `JSON.stringify(result)` on one line.
//!
//! JSON is cut structurally (arrays to their first items, long strings, deep containers), every
//! cut leaving a marker value in place so the output stays valid JSON, and one note line after
//! the fence says what was cut. A top-level string (typically `innerHTML`) and output that is not
//! JSON are cut on a line or tag boundary. The closing fence is always kept.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Number;

use super::lines::split_last_newline;

/// Per-level limits of the evaluate_script filter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EvaluateLimits {
    /// Items kept per array.
    pub max_array_items: usize,
    /// Characters kept per string inside arrays and objects.
    pub max_string_chars: usize,
    /// Containers nested deeper than this are replaced by a marker string.
    pub max_depth: usize,
    /// Characters kept of a top-level string or of output that is not JSON.
    pub max_output_chars: usize,
}

impl Default for EvaluateLimits {
    /// Changes nothing.
    fn default() -> EvaluateLimits {
        EvaluateLimits {
            max_array_items: usize::MAX,
            max_string_chars: usize::MAX,
            max_depth: usize::MAX,
            max_output_chars: usize::MAX,
        }
    }
}

/// What was cut, for the note line.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct Cuts {
    arrays: usize,
    items: usize,
    strings: usize,
    chars: usize,
    deep: usize,
    /// The whole output was cut (top-level string or not JSON): characters removed.
    output_chars: usize,
}

impl Cuts {
    fn any(&self) -> bool {
        self.arrays + self.strings + self.deep + self.output_chars > 0
    }

    fn note(&self, limits: &EvaluateLimits) -> String {
        let mut parts = Vec::new();
        if self.output_chars > 0 {
            parts.push(format!(
                "output cut to {} chars ({} more chars)",
                limits.max_output_chars, self.output_chars
            ));
        }
        if self.arrays > 0 {
            parts.push(format!(
                "{} cut to {} items ({} more items)",
                plural(self.arrays, "array"),
                limits.max_array_items,
                self.items
            ));
        }
        if self.strings > 0 {
            parts.push(format!(
                "{} cut to {} chars ({} more chars)",
                plural(self.strings, "string"),
                limits.max_string_chars,
                self.chars
            ));
        }
        if self.deep > 0 {
            parts.push(format!(
                "{} nested deeper than {} levels replaced",
                plural(self.deep, "value"),
                limits.max_depth
            ));
        }
        format!(
            "[evaluate_script result cut: {}; a narrower script returns the rest]",
            parts.join(", ")
        )
    }
}

fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// The first line of every evaluate_script result.
pub const MESSAGE_PREFIX: &str = "Script ran on page and returned:";

/// Filters the message section of an evaluate_script result; `None` when nothing was cut.
pub fn filter_evaluate_message(section: &str, limits: &EvaluateLimits) -> Option<String> {
    // Limits that cut nothing (`light`'s) leave every payload as it is: not read at all, where
    // reading a page's worth of JSON cost as much as a lossy level's cut.
    if *limits == EvaluateLimits::default() {
        return None;
    }
    let (body, trailing_newline) = split_last_newline(section);
    let lines: Vec<&str> = body.split('\n').collect();
    let open = lines.iter().position(|l| l.starts_with("```"))?;
    let close = open + 1 + lines.get(open + 1..)?.iter().position(|l| *l == "```")?;
    let payload = lines.get(open + 1..close)?.join("\n");
    let mut cuts = Cuts::default();
    let new_payload = match serde_json::from_str::<Json<'_>>(&payload) {
        Ok(mut value) => {
            cut_value(&mut value, limits, &mut cuts);
            if !cuts.any() {
                return None;
            }
            serde_json::to_string(&value).ok()?
        }
        Err(_) => {
            let cut = cut_at_boundary(&payload, limits.max_output_chars)?;
            cuts.output_chars = payload.get(cut..).map_or(0, |rest| rest.chars().count());
            payload.get(..cut)?.trim_end_matches('\n').to_string()
        }
    };
    let note = cuts.note(limits);
    let mut out: Vec<&str> = Vec::with_capacity(lines.len() + 1);
    out.extend(lines.get(..=open)?);
    out.push(&new_payload);
    out.push(lines.get(close)?);
    out.push(&note);
    out.extend(lines.get(close + 1..)?);
    let mut text = out.join("\n");
    text.push_str(trailing_newline);
    Some(text)
}

/// Cuts a parsed value in place, with an explicit stack (no recursion on deep values).
fn cut_value(root: &mut Json<'_>, limits: &EvaluateLimits, cuts: &mut Cuts) {
    if let Json::String(s) = root {
        if let Some(cut) = cut_at_boundary(s, limits.max_output_chars) {
            cuts.output_chars = s.get(cut..).map_or(0, |rest| rest.chars().count());
            let s = s.to_mut();
            s.truncate(cut);
            s.push('…');
        }
        return;
    }
    let mut stack: Vec<(&mut Json<'_>, usize)> = vec![(root, 0)];
    while let Some((value, depth)) = stack.pop() {
        let too_deep = depth >= limits.max_depth;
        let replacement = match &*value {
            Json::Array(items) if too_deep && !items.is_empty() => {
                Some(format!("[… {} items]", items.len()))
            }
            Json::Object(members) if too_deep && !members.is_empty() => {
                Some(format!("{{… {} keys}}", members.len()))
            }
            _ => None,
        };
        if let Some(marker) = replacement {
            cuts.deep += 1;
            *value = Json::String(Cow::Owned(marker));
            continue;
        }
        match value {
            Json::Array(items) => {
                if items.len() > limits.max_array_items {
                    let extra = items.len() - limits.max_array_items;
                    items.truncate(limits.max_array_items);
                    cuts.arrays += 1;
                    cuts.items += extra;
                    items.push(Json::String(Cow::Owned(format!("… {extra} more items"))));
                    // The marker is not pushed below: it is ours, not the page's.
                    let kept = items.len() - 1;
                    stack.extend(items.iter_mut().take(kept).map(|v| (v, depth + 1)));
                } else {
                    stack.extend(items.iter_mut().map(|v| (v, depth + 1)));
                }
            }
            Json::Object(members) => {
                stack.extend(members.iter_mut().map(|(_, v)| (v, depth + 1)));
            }
            Json::String(s) => {
                if let Some(cut) = cut_at_boundary(s, limits.max_string_chars) {
                    cuts.strings += 1;
                    cuts.chars += s.get(cut..).map_or(0, |rest| rest.chars().count());
                    let s = s.to_mut();
                    s.truncate(cut);
                    s.push('…');
                }
            }
            _ => {}
        }
    }
}

/// The script's JSON as the filter reads and writes it: `serde_json::Value`'s reading and
/// writing (its numbers, escapes and nesting limit, a repeated key's last value in its first
/// place) without its map, objects kept as lists of members and strings borrowed from the
/// payload where they hold no escape. Reading into `Value` hashed every key into an index map
/// and copied every string: most of the filter's time on a page's worth of links.
#[derive(Debug, Clone, PartialEq)]
enum Json<'a> {
    Null,
    Bool(bool),
    Number(Number),
    String(Cow<'a, str>),
    Array(Vec<Json<'a>>),
    Object(Vec<(Cow<'a, str>, Json<'a>)>),
}

/// A string borrowed from the payload when it holds no escape.
struct Text<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Text<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer
            .deserialize_str(JsonVisitor)
            .and_then(|json| match json {
                Json::String(s) => Ok(Text(s)),
                _ => Err(de::Error::custom("a string")),
            })
    }
}

impl<'de> Deserialize<'de> for Json<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(JsonVisitor)
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_unit<E>(self) -> Result<Json<'de>, E> {
        Ok(Json::Null)
    }

    fn visit_bool<E>(self, b: bool) -> Result<Json<'de>, E> {
        Ok(Json::Bool(b))
    }

    fn visit_i64<E>(self, n: i64) -> Result<Json<'de>, E> {
        Ok(Json::Number(n.into()))
    }

    fn visit_u64<E>(self, n: u64) -> Result<Json<'de>, E> {
        Ok(Json::Number(n.into()))
    }

    fn visit_f64<E>(self, n: f64) -> Result<Json<'de>, E> {
        Ok(Number::from_f64(n).map_or(Json::Null, Json::Number))
    }

    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Json<'de>, E> {
        Ok(Json::String(Cow::Borrowed(s)))
    }

    fn visit_str<E>(self, s: &str) -> Result<Json<'de>, E> {
        Ok(Json::String(Cow::Owned(s.to_owned())))
    }

    fn visit_string<E>(self, s: String) -> Result<Json<'de>, E> {
        Ok(Json::String(Cow::Owned(s)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json<'de>, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Json::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json<'de>, A::Error> {
        let mut members: Vec<(Cow<'de, str>, Json<'de>)> = Vec::new();
        while let Some((Text(key), value)) = map.next_entry()? {
            members.push((key, value));
        }
        Ok(Json::Object(merge_repeated_keys(members)))
    }
}

/// A key given twice keeps its first place and its last value, as `serde_json::Map` does.
fn merge_repeated_keys<'a>(
    members: Vec<(Cow<'a, str>, Json<'a>)>,
) -> Vec<(Cow<'a, str>, Json<'a>)> {
    let repeated = match members.len() {
        0 | 1 => false,
        // Most objects are small: a compare of each pair costs less than a set.
        2..=8 => members
            .iter()
            .enumerate()
            .any(|(i, (k, _))| members.iter().skip(i + 1).any(|(other, _)| other == k)),
        n => {
            let mut seen = std::collections::HashSet::with_capacity(n);
            !members.iter().all(|(k, _)| seen.insert(k.as_ref()))
        }
    };
    if !repeated {
        return members;
    }
    let mut at: HashMap<Cow<'a, str>, usize> = HashMap::new();
    let mut merged: Vec<(Cow<'a, str>, Json<'a>)> = Vec::new();
    for (key, value) in members {
        match at.get(&key) {
            Some(&i) => {
                if let Some(slot) = merged.get_mut(i) {
                    slot.1 = value;
                }
            }
            None => {
                at.insert(key.clone(), merged.len());
                merged.push((key, value));
            }
        }
    }
    merged
}

impl Serialize for Json<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Json::Null => serializer.serialize_unit(),
            Json::Bool(b) => serializer.serialize_bool(*b),
            Json::Number(n) => n.serialize(serializer),
            Json::String(s) => serializer.serialize_str(s),
            Json::Array(items) => serializer.collect_seq(items),
            Json::Object(members) => {
                let mut map = serializer.serialize_map(Some(members.len()))?;
                for (key, value) in members {
                    map.serialize_entry(key.as_ref(), value)?;
                }
                map.end()
            }
        }
    }
}

/// Where to cut `text` to keep at most `max_chars` characters: after the last newline or `>`,
/// or before the last `<`, in the final fifth of the allowance; otherwise at `max_chars`.
/// `None` when the text is short enough.
fn cut_at_boundary(text: &str, max_chars: usize) -> Option<usize> {
    // No more bytes than that is no more characters: most strings are told by their length.
    if text.len() <= max_chars {
        return None;
    }
    let (limit, _) = text.char_indices().nth(max_chars)?;
    let window_start = text
        .char_indices()
        .nth(max_chars - max_chars / 5)
        .map_or(0, |(i, _)| i);
    let window = text.get(window_start..limit)?;
    let after_newline = window.rfind('\n').map(|i| i + 1);
    let after_tag = window.rfind('>').map(|i| i + 1);
    let before_tag = window.rfind('<');
    let best = [after_newline, after_tag, before_tag]
        .into_iter()
        .flatten()
        .max()
        .filter(|&i| i > 0);
    Some(best.map_or(limit, |i| window_start + i))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn limits() -> EvaluateLimits {
        EvaluateLimits {
            max_array_items: 2,
            max_string_chars: 5,
            max_depth: 3,
            max_output_chars: 20,
        }
    }

    fn fenced(payload: &str) -> String {
        format!("{MESSAGE_PREFIX}\n```json\n{payload}\n```")
    }

    fn payload_of(text: &str) -> &str {
        text.split('\n').nth(2).unwrap_or("")
    }

    #[test]
    fn cuts_arrays_strings_and_depth_to_valid_json_with_a_note() {
        let input = fenced(r#"[{"t":"abcdefghij","a":{"b":{"c":[1]}}},2,3,4]"#);
        let out = filter_evaluate_message(&input, &limits()).expect("cut");
        let value: Value = serde_json::from_str(payload_of(&out)).expect("valid JSON");
        assert_eq!(
            value,
            serde_json::json!([{"t":"abcde…","a":{"b":"{… 1 keys}"}},2,"… 2 more items"])
        );
        let lines: Vec<&str> = out.split('\n').collect();
        assert_eq!(lines[3], "```");
        assert!(
            lines[4].contains("1 array cut to 2 items (2 more items)"),
            "{out}"
        );
        assert!(lines[4].contains("1 string cut to 5 chars (5 more chars)"));
        assert!(lines[4].contains("1 value nested deeper than 3 levels"));
    }

    #[test]
    fn cuts_html_strings_on_a_tag_boundary() {
        let input = fenced(r#""<p>one</p><p>two</p><p>three</p>""#);
        let out = filter_evaluate_message(&input, &limits()).expect("cut");
        let value: Value = serde_json::from_str(payload_of(&out)).expect("valid JSON");
        assert_eq!(value, Value::String("<p>one</p><p>two</p>…".to_string()));
    }

    #[test]
    fn non_json_output_is_cut_on_a_line_and_the_fence_survives() {
        let input = format!("{}\nmore", fenced("line one\nline two\nline three\n```x"));
        // The payload holds a line that starts with ``` but is not the closing fence.
        let out = filter_evaluate_message(&input, &limits()).expect("cut");
        assert_eq!(
            out.split('\n').take(5).collect::<Vec<_>>(),
            vec![
                "Script ran on page and returned:",
                "```json",
                "line one",
                "line two",
                "```"
            ]
        );
        assert!(out.ends_with("the rest]\nmore"));
    }

    #[test]
    fn small_results_and_unfenced_text_are_left_alone() {
        assert!(filter_evaluate_message(&fenced("[1,2]"), &limits()).is_none());
        assert!(filter_evaluate_message("no fence here", &limits()).is_none());
        assert!(filter_evaluate_message("```json\n[1,2,3]", &limits()).is_none());
    }

    #[test]
    fn json_deeper_than_the_parser_allows_is_cut_as_text() {
        // serde_json stops at 128 levels; 5,000 levels are then plain text, cut at the limit.
        let deep = format!("{}{}", "[".repeat(5000), "]".repeat(5000));
        let out = filter_evaluate_message(&fenced(&deep), &limits()).expect("cut");
        assert_eq!(payload_of(&out), "[".repeat(20));
        assert_eq!(out.split('\n').nth(3), Some("```"));
    }

    /// The filter's own reading and writing of JSON gives what `serde_json::Value` gives, byte
    /// for byte: numbers of every kind, escapes, non-ASCII text, repeated keys, nesting.
    #[test]
    fn the_lean_value_reads_and_writes_as_serde_json_value_does() {
        let payloads = [
            r#"[0,-0,1,-1,18446744073709551615,18446744073709551616,-9223372036854775809]"#,
            r#"[1.0,0.1,1e21,1e+21,1E-7,0.000001,123456789012345680000,5e-324,-2.5e300]"#,
            r#"{"a":"x\"y\\z\n\t\u0001\u001f\u007f\/","b":"é✓😀\u00e9\ud83d\ude00"}"#,
            r#"{"k":1,"j":2,"k":3,"":{"":[]},"l":{"m":4,"m":5}}"#,
            r#"{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"a":10}"#,
            r#"[true,false,null,[],{},[[[{"x":[{"y":null}]}]]]]"#,
            r#"  {"spaced" : [ 1 , 2 ] }  "#,
            r#""just a string with \u2028 and \r\n""#,
        ];
        for payload in payloads {
            let value: Value = serde_json::from_str(payload).expect(payload);
            let lean: Json<'_> = serde_json::from_str(payload).expect(payload);
            assert_eq!(
                serde_json::to_string(&lean).expect("written"),
                value.to_string(),
                "{payload}"
            );
        }
        for bad in ["[1,]", r#"{"a"}"#, r#""\ud800""#, "[1] 2", "nul"] {
            assert_eq!(
                serde_json::from_str::<Json<'_>>(bad).is_ok(),
                serde_json::from_str::<Value>(bad).is_ok(),
                "{bad}"
            );
        }
    }

    #[test]
    fn deep_json_does_not_overflow() {
        let deep = format!("{}{}", "[".repeat(120), "]".repeat(120));
        let out = filter_evaluate_message(&fenced(&deep), &limits()).expect("cut");
        assert!(serde_json::from_str::<Value>(payload_of(&out)).is_ok());
    }
}
