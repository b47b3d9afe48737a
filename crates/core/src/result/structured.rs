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

use std::borrow::Cow;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::notation::cdp::structured::{Echo, Scalar, SnapshotSeed, StructuredSnapshot};

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
/// `read`: the `structuredContent` as read from the result's text (`read_result`), whose
/// `result` member may be a stand-in.
pub fn reconcile_structured_content(
    result: &mut Map<String, Value>,
    has_output_schema: bool,
    text_key: Option<&str>,
    repeated: Option<&str>,
    read: Option<&StructuredText<'_>>,
) -> Removed {
    if !has_output_schema {
        return result
            .remove("structuredContent")
            .map_or_else(Removed::default, |removed| {
                read.map_or_else(|| size(&removed), |r| r.removed)
            });
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
    /// No one reads the measure (`read_result` without `measured`): nothing is counted, and
    /// what is written only to be counted is not written.
    idle: bool,
}

impl Counted {
    /// A writer that counts when `measured`, else idle.
    fn new(measured: bool) -> Counted {
        Counted {
            idle: !measured,
            ..Counted::default()
        }
    }

    fn add(&mut self, buf: &[u8]) {
        if self.idle {
            return;
        }
        self.bytes += buf.len();
        self.tokens.add(buf);
    }

    fn removed(&self) -> Removed {
        Removed {
            bytes: self.bytes,
            tokens: self.tokens.tokens(),
        }
    }
}

impl std::io::Write for Counted {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.add(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A result's `structuredContent` as read from the result's JSON text, never as a `Value`
/// (megabytes of snapshot tree on chrome-devtools-mcp: building and dropping a `Value` of it
/// cost more than the filter): what dropping it saves, and its snapshot tree's members, both
/// from one reading of it.
#[derive(Debug)]
pub struct StructuredText<'j> {
    /// What dropping it saves: its compact serialization's bytes and tokens, as `size` counts
    /// them on its `Value`.
    pub removed: Removed,
    /// Its `snapshot` member, when that is an object.
    snapshot: Option<StructuredSnapshot<'j>>,
}

impl<'j> StructuredText<'j> {
    /// Measured into `out`, its `snapshot` member read as `snapshot`.
    fn new(out: Counted, snapshot: Option<StructuredSnapshot<'j>>) -> StructuredText<'j> {
        StructuredText {
            removed: out.removed(),
            snapshot: snapshot.filter(StructuredSnapshot::root_is_object),
        }
    }

    /// Its `snapshot` member (an object), read for its tree.
    pub fn snapshot(&self) -> Option<&StructuredSnapshot<'j>> {
        self.snapshot.as_ref()
    }

    fn into_owned(self) -> StructuredText<'static> {
        StructuredText {
            removed: self.removed,
            snapshot: self.snapshot.map(StructuredSnapshot::into_owned),
        }
    }
}

/// A result's members, and its `structuredContent` as read (`read_result`).
pub type ReadResult<'j> = (Map<String, Value>, Option<StructuredText<'j>>);

/// A result read from its JSON text: its members, and its `structuredContent`. Without
/// `keep_value` the result holds a stand-in for that member, in its place: `{"snapshot": {}}`
/// when its `snapshot` is an object, else `null` (it is dropped from any result the filter
/// writes, `reconcile_structured_content`); with `keep_value` (an `outputSchema`: it may be
/// written) it holds the member's `Value`. `Ok(None)`: JSON, but not an object. An error is
/// `serde_json::from_str::<Value>`'s on the same text. Without `measured` (no one reads the
/// figures: `SnapshotCapture::tokens_unread`) `structuredContent` is read and checked the same
/// but not measured: what dropping it saves is left 0.
pub fn read_result(
    json: &str,
    keep_value: bool,
    measured: bool,
) -> Result<Option<ReadResult<'_>>, serde_json::Error> {
    if let Some((mut result, measured)) = read_measuring(json, keep_value, measured) {
        let Some((text, raw)) = measured else {
            return Ok(Some((result, None)));
        };
        let value = match raw {
            Some(raw) => serde_json::from_str(raw.get())?,
            None => stand_in(&text),
        };
        result.insert("structuredContent".to_string(), value);
        return Ok(Some((result, Some(text))));
    }
    // What the reading above leaves to a `Value` (bad JSON and its error, a key repeated in
    // `structuredContent`, nesting past serde_json's limit): read as before, and the member
    // measured as written from its `Value`.
    let mut result = match serde_json::from_str(json) {
        Ok(Value::Object(result)) => result,
        Ok(_) => return Ok(None),
        Err(e) => return read_deep(json, keep_value, measured).map(Some).ok_or(e),
    };
    let Some(value) = result.get("structuredContent") else {
        return Ok(Some((result, None)));
    };
    let Some(text) = measure(&value.to_string(), measured).map(StructuredText::into_owned) else {
        return Err(serde::de::Error::custom(
            "structuredContent could not be measured",
        ));
    };
    if !keep_value {
        result.insert("structuredContent".to_string(), stand_in(&text));
    }
    Ok(Some((result, Some(text))))
}

/// A result whose `structuredContent` nests past serde_json's limit (a page of 70 nested
/// sections: two levels a node) and is to be dropped: its other members read as `Value`s, that
/// one skipped without recursion (serde_json skips a value in a loop) and measured from its
/// text as upstream wrote it; it holds no tree, so the snapshot is read from the text. `None`
/// where another member is not readable either, or where it is to be kept (`keep_value`).
fn read_deep(json: &str, keep_value: bool, measured: bool) -> Option<ReadResult<'_>> {
    if keep_value {
        return None;
    }
    let members: Vec<(String, &RawValue)> = serde_json::from_str::<RawMembers<'_>>(json).ok()?.0;
    let mut result = Map::new();
    let mut text = None;
    for (key, raw) in members {
        if key == "structuredContent" {
            let mut out = Counted::new(measured);
            out.add(raw.get().as_bytes());
            text = Some(StructuredText::new(out, None));
            result.insert(key, Value::Null);
        } else {
            result.insert(key, serde_json::from_str(raw.get()).ok()?);
        }
    }
    Some((result, text))
}

/// An object's members in order, each value's text unread (`RawValue`).
pub(crate) struct RawMembers<'j>(pub Vec<(String, &'j RawValue)>);

impl<'j> serde::Deserialize<'j> for RawMembers<'j> {
    fn deserialize<D: Deserializer<'j>>(de: D) -> Result<Self, D::Error> {
        struct Members;
        impl<'j> Visitor<'j> for Members {
            type Value = RawMembers<'j>;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object")
            }

            fn visit_map<A: MapAccess<'j>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut members = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    members.push((key, map.next_value::<&'j RawValue>()?));
                }
                Ok(RawMembers(members))
            }
        }
        de.deserialize_map(Members)
    }
}

fn stand_in(text: &StructuredText<'_>) -> Value {
    match text.snapshot {
        Some(_) => serde_json::json!({"snapshot": {}}),
        None => Value::Null,
    }
}

/// The result's members as `Value`s but `structuredContent`'s (the last one, as a `Value`
/// reads a repeated key), measured as it is read (`measure`), and its text with `keep_value`;
/// a `null` holds its place. `None` when `json` is not an object or not JSON, or where
/// `measure` gives `None`.
type Measured<'j> = (
    Map<String, Value>,
    Option<(StructuredText<'j>, Option<&'j RawValue>)>,
);

fn read_measuring(json: &str, keep_value: bool, measured: bool) -> Option<Measured<'_>> {
    struct Members {
        keep_value: bool,
        measured: bool,
    }
    impl<'j> Visitor<'j> for Members {
        type Value = Measured<'j>;

        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a result object")
        }

        fn visit_map<A: MapAccess<'j>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut members = Map::new();
            let mut measured = None;
            while let Some(key) = map.next_key::<String>()? {
                if key != "structuredContent" {
                    let value = map.next_value()?;
                    members.insert(key, value);
                    continue;
                }
                measured = Some(if self.keep_value {
                    // Read as a `Value` too: measured from its text.
                    let raw: &'j RawValue = map.next_value()?;
                    let text = measure(raw.get(), self.measured)
                        .ok_or_else(|| serde::de::Error::custom("not measured"))?;
                    (text, Some(raw))
                } else {
                    let mut out = Counted::new(self.measured);
                    let mut snapshot = None;
                    map.next_value_seed(Sizer {
                        out: &mut out,
                        keys: &mut Vec::new(),
                        // Inside the result object.
                        depth: 1,
                        comma: false,
                        snapshot: Some(&mut snapshot),
                    })?;
                    (StructuredText::new(out, snapshot), None)
                });
                members.insert(key, Value::Null);
            }
            Ok((members, measured))
        }
    }
    let mut de = serde_json::Deserializer::from_str(json);
    let read = de
        .deserialize_map(Members {
            keep_value,
            measured,
        })
        .ok()?;
    de.end().ok()?;
    Some(read)
}

/// `json`, the text of a result's `structuredContent`, measured as `size` measures its `Value`
/// (`None` where that `Value` is not what its text says member for member: a key repeated, or
/// nesting past the limit a `Value` of the whole result is read within). Not `measured`: read
/// and checked the same, its measure left 0.
fn measure(json: &str, measured: bool) -> Option<StructuredText<'_>> {
    let mut out = Counted::new(measured);
    let mut snapshot = None;
    let mut de = serde_json::Deserializer::from_str(json);
    let sizer = Sizer {
        out: &mut out,
        keys: &mut Vec::new(),
        // Inside the result object.
        depth: 1,
        comma: false,
        snapshot: Some(&mut snapshot),
    };
    sizer.deserialize(&mut de).ok()?;
    de.end().ok()?;
    Some(StructuredText::new(out, snapshot))
}

/// A string written as serde_json writes it, `plain` when it was read without an escape: it then
/// holds nothing to escape (JSON holds no bare quote, backslash or control character in a
/// string, serde_json rejects them), and is not scanned for escapes again.
fn write_string(out: &mut Counted, s: &str, plain: bool) {
    if out.idle {
        return;
    }
    if plain {
        out.add(b"\"");
        out.add(s.as_bytes());
        out.add(b"\"");
    } else {
        // Writing to `Counted` cannot fail.
        let _ = serde_json::to_writer(out, s);
    }
}

/// serde_json reads at most this many nested arrays and objects (`RecursionLimitExceeded`).
const DEPTH_LIMIT: usize = 128;

/// Writes a value as `serde_json` writes its `Value` (compact: strings escaped as it escapes
/// them, numbers as it holds and writes them) into `out`, straight from the JSON read.
struct Sizer<'s, 'j> {
    out: &'s mut Counted,
    /// The keys of the objects being read (each object's from where it started): a key
    /// repeated in one object is an error here, as its `Value` would hold it once.
    keys: &'s mut Vec<Cow<'j, str>>,
    /// Arrays and objects around the value (the result object counts).
    depth: usize,
    /// An element after the first of an array: a comma goes before it.
    comma: bool,
    /// At the top of `structuredContent`: where its `snapshot` member goes, read as it is
    /// measured.
    snapshot: Option<&'s mut Option<StructuredSnapshot<'j>>>,
}

impl Sizer<'_, '_> {
    fn write<E: serde::de::Error>(
        &mut self,
        value: &(impl serde::Serialize + ?Sized),
    ) -> Result<(), E> {
        if self.out.idle {
            return Ok(());
        }
        serde_json::to_writer(&mut *self.out, value).map_err(E::custom)
    }

    fn punct(&mut self, p: &[u8]) {
        self.out.add(p);
    }

    fn string(&mut self, s: &str, plain: bool) {
        write_string(self.out, s, plain);
    }

    fn enter<E: serde::de::Error>(&self) -> Result<usize, E> {
        let depth = self.depth + 1;
        if depth >= DEPTH_LIMIT {
            return Err(E::custom("recursion limit exceeded"));
        }
        Ok(depth)
    }
}

impl<'j> DeserializeSeed<'j> for Sizer<'_, 'j> {
    type Value = ();

    fn deserialize<D: Deserializer<'j>>(mut self, de: D) -> Result<(), D::Error> {
        if self.comma {
            self.punct(b",");
        }
        de.deserialize_any(self)
    }
}

impl<'j> Visitor<'j> for Sizer<'_, 'j> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("JSON")
    }

    fn visit_bool<E: serde::de::Error>(mut self, b: bool) -> Result<(), E> {
        self.write(&b)
    }
    fn visit_i64<E: serde::de::Error>(mut self, n: i64) -> Result<(), E> {
        self.write(&n)
    }
    fn visit_u64<E: serde::de::Error>(mut self, n: u64) -> Result<(), E> {
        self.write(&n)
    }
    fn visit_f64<E: serde::de::Error>(mut self, n: f64) -> Result<(), E> {
        // As a `Value` holds it (JSON holds no non-finite number).
        self.write(&serde_json::Number::from_f64(n))
    }
    fn visit_str<E: serde::de::Error>(mut self, s: &str) -> Result<(), E> {
        self.write(s)
    }
    fn visit_borrowed_str<E: serde::de::Error>(mut self, s: &'j str) -> Result<(), E> {
        self.string(s, true);
        Ok(())
    }
    fn visit_unit<E: serde::de::Error>(mut self) -> Result<(), E> {
        self.punct(b"null");
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'j>>(mut self, mut seq: A) -> Result<(), A::Error> {
        let depth = self.enter()?;
        self.punct(b"[");
        let mut comma = false;
        while seq
            .next_element_seed(Sizer {
                out: &mut *self.out,
                keys: &mut *self.keys,
                depth,
                comma,
                snapshot: None,
            })?
            .is_some()
        {
            comma = true;
        }
        self.punct(b"]");
        Ok(())
    }

    fn visit_map<A: MapAccess<'j>>(mut self, mut map: A) -> Result<(), A::Error> {
        let depth = self.enter()?;
        self.punct(b"{");
        let mark = self.keys.len();
        while let Some(key) = map.next_key_seed(crate::notation::cdp::structured::CowStr)? {
            if self.keys.len() > mark {
                self.punct(b",");
            }
            self.string(&key, matches!(key, Cow::Borrowed(_)));
            self.punct(b":");
            match self.snapshot.as_deref_mut() {
                Some(slot) if key == "snapshot" => {
                    let mut echo = Measure {
                        out: &mut *self.out,
                        keys: &mut *self.keys,
                        depth,
                        marks: Vec::new(),
                    };
                    *slot = Some(map.next_value_seed(SnapshotSeed(&mut echo))?);
                }
                _ => map.next_value_seed(Sizer {
                    out: &mut *self.out,
                    keys: &mut *self.keys,
                    depth,
                    comma: false,
                    snapshot: None,
                })?,
            }
            self.keys.push(key);
        }
        if repeats(&mut self.keys[mark..]) {
            return Err(serde::de::Error::custom("a key repeats"));
        }
        self.keys.truncate(mark);
        self.punct(b"}");
        Ok(())
    }
}

/// The `Sizer`'s measure told the pieces of a snapshot as the snapshot is read from them
/// (`Echo`): the same bytes, the same checks.
struct Measure<'s, 'j> {
    out: &'s mut Counted,
    keys: &'s mut Vec<Cow<'j, str>>,
    /// Arrays and objects around the piece (the result object counts).
    depth: usize,
    /// Where each open array's or object's keys start in `keys`.
    marks: Vec<usize>,
}

impl<'j> Echo<'j> for Measure<'_, 'j> {
    fn open(&mut self, bracket: u8) -> Result<(), String> {
        self.depth += 1;
        if self.depth >= DEPTH_LIMIT {
            return Err("recursion limit exceeded".to_string());
        }
        self.marks.push(self.keys.len());
        self.out.add(&[bracket]);
        Ok(())
    }

    fn close(&mut self, bracket: u8) -> Result<(), String> {
        let mark = self.marks.pop().unwrap_or(self.keys.len());
        if repeats(&mut self.keys[mark..]) {
            return Err("a key repeats".to_string());
        }
        self.keys.truncate(mark);
        self.depth -= 1;
        self.out.add(&[bracket]);
        Ok(())
    }

    fn key(&mut self, key: &Cow<'j, str>, first: bool) {
        if !first {
            self.out.add(b",");
        }
        write_string(self.out, key, matches!(key, Cow::Borrowed(_)));
        self.out.add(b":");
        self.keys.push(key.clone());
    }

    fn element(&mut self, first: bool) {
        if !first {
            self.out.add(b",");
        }
    }

    fn scalar(&mut self, scalar: Scalar<'_>) {
        let out = &mut *self.out;
        if out.idle {
            return;
        }
        // Writing to `Counted` cannot fail.
        let _ = match scalar {
            Scalar::Str(s, plain) => {
                write_string(out, s, plain);
                Ok(())
            }
            Scalar::Bool(b) => serde_json::to_writer(out, &b),
            Scalar::U64(n) => serde_json::to_writer(out, &n),
            Scalar::I64(n) => serde_json::to_writer(out, &n),
            // As a `Value` holds it (JSON holds no non-finite number).
            Scalar::F64(n) => serde_json::to_writer(out, &serde_json::Number::from_f64(n)),
            Scalar::Null => {
                out.add(b"null");
                Ok(())
            }
        };
    }

    fn whole<D: Deserializer<'j>>(&mut self, de: D) -> Result<(), D::Error> {
        Sizer {
            out: &mut *self.out,
            keys: &mut *self.keys,
            depth: self.depth,
            comma: false,
            snapshot: None,
        }
        .deserialize(de)
    }
}

/// Whether a key is in `keys` twice (their order is not kept).
fn repeats(keys: &mut [Cow<'_, str>]) -> bool {
    if keys.len() <= 16 {
        return keys
            .iter()
            .enumerate()
            .any(|(i, k)| keys[i + 1..].contains(k));
    }
    keys.sort_unstable();
    keys.windows(2).any(|w| w[0] == w[1])
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
#[path = "structured_tests.rs"]
mod tests;
