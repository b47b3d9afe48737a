//! Rules that read the schema a description belongs to: prose that only restates what the
//! schema already says ("Optional" on a property that is not required, "Defaults to 10" next
//! to `"default": 10`, "One of: a, b" next to the same `enum`, "Array of X" on an array,
//! "If true," on a boolean, a description that only spells out the property's name) goes.
//! Each rule fires only when the schema says exactly the same thing; otherwise the prose is
//! information and stays.

use std::collections::HashSet;

use once_cell::sync::Lazy;
use regex::Captures;
use serde_json::{Map, Value};

use super::protect::{Protected, SENTINEL_CLASS};
use super::rules::{is_sentence_start, Append, LIMIT_WORDS};
use super::Regex;

/// What a description describes, as far as the context rules care. Two descriptions with the
/// same text and the same `Site` compress the same way (it is part of the memo key).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Site {
    /// The property this schema node is the value of, if any.
    pub property: Option<String>,
    /// Whether the parent schema lists `property` in `required`.
    pub required: bool,
    /// The node's `type` (one name, or the names of a type array).
    pub types: Vec<String>,
    /// The node's `default`, serialized (exact comparison).
    pub default: Option<String>,
    /// The node's string `enum` values (None when absent or not all strings).
    pub enum_values: Option<Vec<String>>,
    /// The node's integer `minimum` and `maximum`, when it has both.
    pub range: Option<(i64, i64)>,
}

impl Site {
    /// The site of a schema node: its own keywords, plus the property it is the value of.
    pub fn of_schema(node: &Map<String, Value>, property: Option<(&str, bool)>) -> Site {
        let types = match node.get("type") {
            Some(Value::String(t)) => vec![t.clone()],
            Some(Value::Array(ts)) => ts
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
            _ => Vec::new(),
        };
        let enum_values = match node.get("enum") {
            Some(Value::Array(values)) => values
                .iter()
                .map(|v| v.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>(),
            _ => None,
        };
        let bound = |key: &str| node.get(key).and_then(Value::as_i64);
        Site {
            property: property.map(|(name, _)| name.to_string()),
            required: property.is_some_and(|(_, required)| required),
            types,
            default: node.get("default").map(Value::to_string),
            enum_values,
            range: bound("minimum").zip(bound("maximum")),
        }
    }

    fn is_optional_property(&self) -> bool {
        self.property.is_some() && !self.required
    }

    fn has_type(&self, name: &str) -> bool {
        self.types.len() == 1 && self.types.iter().any(|t| t == name)
    }
}

fn compile(pattern: &str) -> Regex {
    Regex::new(pattern).unwrap_or_else(|e| panic!("context rule regex {pattern:?}: {e}"))
}

// ---- "Optional" on a property that is not required ---------------------------------

static OPTIONAL_OPENER: Lazy<Regex> =
    Lazy::new(|| compile(r"^(?i:(?:an?|the)[ \t]+)?(?i:optional)(?:[:,.]|[ \t]*-)?[ \t]+"));
static OPTIONAL_ASIDE: Lazy<Regex> = Lazy::new(|| compile(r"[ \t]*\((?i:optional)\)"));

/// "Optional: X" / "An optional X" / "X (optional)" on a property the parent does not
/// require: the schema already says it may be omitted.
pub fn optional_marker<'t>(text: &'t str, site: &Site) -> std::borrow::Cow<'t, str> {
    if !site.is_optional_property() {
        return std::borrow::Cow::Borrowed(text);
    }
    let text = OPTIONAL_ASIDE.replace_all(text, "");
    match OPTIONAL_OPENER.replace(&text, "") {
        std::borrow::Cow::Owned(out) => std::borrow::Cow::Owned(out),
        std::borrow::Cow::Borrowed(_) => text,
    }
}

// ---- a default the schema declares -------------------------------------------------

fn value_pattern() -> String {
    format!(r"([{SENTINEL_CLASS}]|true|false|null|[A-Za-z][A-Za-z_\-]*)")
}

static DEFAULT_SENTENCE: Lazy<Regex> = Lazy::new(|| {
    compile(&format!(
        r"(?i:(?:the[ \t]+)?default(?:[ \t]+value)?(?:[ \t]+is|s[ \t]+to|:)|defaults[ \t]+to)[ \t]+{}\.?(?:[ \t]+|$)",
        value_pattern()
    ))
});
static DEFAULT_ASIDE: Lazy<Regex> = Lazy::new(|| {
    compile(&format!(
        r"[ \t]*\((?i:default(?:[ \t]+is|s[ \t]+to|:)?|defaults[ \t]+to)[ \t]*{}\)",
        value_pattern()
    ))
});

/// Whether a stated value (a protected span or a bare word) is exactly the schema default.
fn states_default(stated: &str, default: &str, protected: &Protected) -> bool {
    let Ok(default) = serde_json::from_str::<Value>(default) else {
        return false;
    };
    let mut chars = stated.chars();
    let single = chars.next().filter(|_| chars.next().is_none());
    let stated = match single.and_then(|c| protected.span_of(c)) {
        Some(span) => span,
        None => stated,
    };
    let unquoted = ['"', '\'', '`']
        .iter()
        .find_map(|q| stated.strip_prefix(*q).and_then(|s| s.strip_suffix(*q)));
    match (&default, unquoted) {
        (Value::String(d), Some(inner)) => d == inner,
        (Value::String(d), None) => d == stated,
        (_, None) => serde_json::from_str::<Value>(stated).is_ok_and(|v| v == default),
        _ => false,
    }
}

/// "Defaults to 10." / "Default is \"png\"" / "(default: 1)" when the schema's `default` is
/// that very value. A sentence that says more than the value stays whole.
pub fn default_restated<'t>(
    text: &'t str,
    site: &Site,
    protected: &Protected,
) -> std::borrow::Cow<'t, str> {
    let Some(default) = site.default.as_deref() else {
        return std::borrow::Cow::Borrowed(text);
    };
    let text = DEFAULT_ASIDE.replace_all(
        text,
        Append(|c: &Captures, dst: &mut String| {
            let whole = c.get(0).map_or("", |m| m.as_str());
            let stated = c.get(1).map_or("", |m| m.as_str());
            if !states_default(stated, default, protected) {
                dst.push_str(whole);
            }
        }),
    );
    let out = DEFAULT_SENTENCE.replace_all(
        &text,
        Append(|c: &Captures, dst: &mut String| {
            let whole = c.get(0).map_or("", |m| m.as_str());
            let start = c.get(0).map_or(0, |m| m.start());
            let stated = c.get(1).map_or("", |m| m.as_str());
            let ends_sentence =
                whole.trim_end().ends_with('.') || c.get(0).is_some_and(|m| m.end() == text.len());
            if !(is_sentence_start(&text, start)
                && ends_sentence
                && states_default(stated, default, protected))
            {
                dst.push_str(whole);
            }
        }),
    );
    match out {
        std::borrow::Cow::Owned(out) => std::borrow::Cow::Owned(out.trim_end().to_string()),
        std::borrow::Cow::Borrowed(_) => text,
    }
}

// ---- an enum the schema declares ---------------------------------------------------

static ENUM_SENTENCE: Lazy<Regex> = Lazy::new(|| {
    compile(&format!(
        r"(?i:(?:must|should|can)[ \t]+be[ \t]+one[ \t]+of|one[ \t]+of|(?:possible|allowed|valid)[ \t]+values(?:[ \t]+are)?)[ \t]*:?[ \t]*([{SENTINEL_CLASS}](?:(?:[ \t]*,[ \t]*|[ \t]*,?[ \t]+(?i:or|and)[ \t]+)[{SENTINEL_CLASS}])*)(?:\.(?:[ \t]+|$)|$)"
    ))
});

/// "Must be one of: a, b, c." when the listed values are exactly the schema's `enum` (same
/// set, same count). A partial or different list stays.
pub fn enum_restated<'t>(
    text: &'t str,
    site: &Site,
    protected: &Protected,
) -> std::borrow::Cow<'t, str> {
    let Some(values) = site.enum_values.as_ref() else {
        return std::borrow::Cow::Borrowed(text);
    };
    let wanted: HashSet<&str> = values.iter().map(String::as_str).collect();
    let out = ENUM_SENTENCE.replace_all(
        text,
        Append(|c: &Captures, dst: &mut String| {
            let whole = c.get(0).map_or("", |m| m.as_str());
            let start = c.get(0).map_or(0, |m| m.start());
            let listed: Vec<&str> = c
                .get(1)
                .map_or("", |m| m.as_str())
                .chars()
                .filter_map(|ch| protected.span_of(ch))
                .map(|span| {
                    ['"', '\'', '`']
                        .iter()
                        .find_map(|q| span.strip_prefix(*q).and_then(|s| s.strip_suffix(*q)))
                        .unwrap_or(span)
                })
                .collect();
            let same = listed.len() == wanted.len()
                && listed.iter().copied().collect::<HashSet<&str>>() == wanted;
            if !(same && is_sentence_start(text, start)) {
                dst.push_str(whole);
            }
        }),
    );
    match out {
        std::borrow::Cow::Owned(out) => std::borrow::Cow::Owned(out.trim_end().to_string()),
        borrowed => borrowed,
    }
}

// ---- a range the schema declares -----------------------------------------------------

static RANGE_ASIDE: Lazy<Regex> = Lazy::new(|| compile(r"[ \t]*\(([^()\n]{1,40})\)"));
static RANGE: Lazy<Regex> =
    Lazy::new(|| compile(r"^[ \t]*(-?[0-9]+)[ \t]*(?:-|–|to)[ \t]*(-?[0-9]+)[ \t]*$"));

/// "(0-100)" / "(1 to 10)" when the schema's `minimum` and `maximum` are those very bounds.
/// Any other aside, or a range that differs, stays.
pub fn range_restated<'t>(
    text: &'t str,
    site: &Site,
    protected: &Protected,
) -> std::borrow::Cow<'t, str> {
    let Some((min, max)) = site.range else {
        return std::borrow::Cow::Borrowed(text);
    };
    RANGE_ASIDE.replace_all(
        text,
        Append(|c: &Captures, dst: &mut String| {
            let whole = c.get(0).map_or("", |m| m.as_str());
            let inner = protected.restore(c.get(1).map_or("", |m| m.as_str()));
            let same = RANGE.captures(&inner).is_some_and(|r| {
                let bound = |i| r.get(i).and_then(|m| m.as_str().parse::<i64>().ok());
                bound(1) == Some(min) && bound(2) == Some(max)
            });
            if !same {
                dst.push_str(whole);
            }
        }),
    )
}

// ---- openers the type already says -------------------------------------------------

fn next_word() -> String {
    format!(r"([A-Za-z][A-Za-z'’\-]*|[0-9]+|[{SENTINEL_CLASS}])")
}

static CONTAINER_OPENER: Lazy<Regex> = Lazy::new(|| {
    compile(&format!(
        r"^(?:(?i:an?|the)[ \t]+)?(?i:array|list)[ \t]+of[ \t]+{}",
        next_word()
    ))
});
static BOOLEAN_OPENER: Lazy<Regex> = Lazy::new(|| {
    compile(&format!(
        r"^(?:(?:If|When)(?:[ \t]+set)?(?:[ \t]+to)?[ \t]+true,?|Set(?:[ \t]+this)?[ \t]+to[ \t]+true[ \t]+(?:to|for)|(?:Determines|Specifies|Indicates|Controls)[ \t]+(?:whether(?:[ \t]+to)?|if))[ \t]+{}",
        next_word()
    ))
});
static COUNT_OPENER: Lazy<Regex> = Lazy::new(|| {
    compile(&format!(
        r"^(?:(?i:the)[ \t]+)?(?i:number)[ \t]+of[ \t]+{}",
        next_word()
    ))
});
/// Words that cannot start what remains (the condition goes on: "If true and ...").
const CONTINUES: [&str; 6] = ["and", "or", "but", "unless", "except", "only"];

/// "An array of X" on an array, "If true, X" / "Set to true to X" / "Determines whether X"
/// on a boolean, "The number of X" on an integer or number: the schema says the type, the
/// description starts at X.
pub fn type_opener<'t>(text: &'t str, site: &Site) -> std::borrow::Cow<'t, str> {
    let opener = if site.has_type("array") {
        &*CONTAINER_OPENER
    } else if site.has_type("boolean") {
        &*BOOLEAN_OPENER
    } else if site.has_type("integer") || site.has_type("number") {
        &*COUNT_OPENER
    } else {
        return std::borrow::Cow::Borrowed(text);
    };
    opener.replace(
        text,
        Append(|c: &Captures, dst: &mut String| {
            let next = c.get(1).map_or("", |m| m.as_str());
            if CONTINUES.contains(&next.to_ascii_lowercase().as_str()) {
                dst.push_str(c.get(0).map_or("", |m| m.as_str()));
            } else {
                dst.push_str(next);
            }
        }),
    )
}

// ---- a description that only spells out the name ----------------------------------

/// Words that add nothing next to a property name ("The URL", "Branch identifier", "ID of
/// the extension to reload" on `id` of `reload_extension`).
const EMPTY_WORDS: [&str; 11] = [
    "the",
    "a",
    "an",
    "name",
    "identifier",
    "id",
    "value",
    "of",
    "to",
    "for",
    "in",
];

/// The lowercase words of an identifier: `branchId` -> branch, id; `from_uid` -> from, uid.
fn name_words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if !c.is_alphanumeric() {
            prev_lower = false;
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            continue;
        }
        if c.is_uppercase() && prev_lower && !word.is_empty() {
            words.push(std::mem::take(&mut word));
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        word.extend(c.to_lowercase());
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// Whether a description word names a name word: the same word, or the name word abbreviates
/// it ("repo" -> "repository"; at least 3 letters), or id/identifier.
fn names(desc_word: &str, name_word: &str) -> bool {
    desc_word == name_word
        || (name_word.len() >= 3 && desc_word.starts_with(name_word))
        || (name_word == "id" && desc_word == "identifier")
}

/// Whether a property's description only restates names the model sees next to it: every
/// word is a word of the property's name, of its item's name (the tool or prompt), or an
/// empty word, and every word of the property's name is there ("The URL." for `url`,
/// "Repository name" for `repo`, "Pull request number" for `pull_number` of
/// `merge_pull_request`). A text with a negation or limit word never qualifies.
pub fn restates_name(text: &str, site: &Site, item_name: &str) -> bool {
    let Some(property) = site.property.as_deref() else {
        return false;
    };
    let name = name_words(property);
    let trimmed = text.trim().trim_end_matches('.');
    if name.is_empty() || trimmed.is_empty() || trimmed.len() > 60 {
        return false;
    }
    let item = name_words(item_name);
    let mut covered = vec![false; name.len()];
    for word in trimmed.split([' ', '-', '_']) {
        if word.is_empty() {
            continue;
        }
        if !word.chars().all(char::is_alphanumeric) {
            return false;
        }
        let word = word.to_lowercase();
        if LIMIT_WORDS.is_match(&word) {
            return false;
        }
        let mut matched = false;
        for (i, n) in name.iter().enumerate() {
            if names(&word, n) {
                covered[i] = true;
                matched = true;
            }
        }
        if !matched
            && !EMPTY_WORDS.contains(&word.as_str())
            && !item.iter().any(|n| names(&word, n))
        {
            return false;
        }
    }
    covered.iter().all(|&c| c)
}

/// Whether `text` holds `word` in any ASCII case (no allocation).
fn holds(text: &str, word: &str) -> bool {
    text.as_bytes()
        .windows(word.len())
        .any(|w| w.eq_ignore_ascii_case(word.as_bytes()))
}

/// Runs the context rules on a protected text (before the prose rules). Each rule runs only
/// where its schema keyword exists and its trigger word occurs.
pub fn apply<'t>(text: &'t str, site: &Site, protected: &Protected) -> std::borrow::Cow<'t, str> {
    use std::borrow::Cow;
    if site.property.is_none() && site.types.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut out = Cow::Borrowed(text);
    let step = |out: &mut Cow<'t, str>, next: Option<String>| {
        if let Some(next) = next.filter(|n| n != out.as_ref()) {
            *out = Cow::Owned(next);
        }
    };
    if site.is_optional_property() && holds(&out, "optional") {
        let next = optional_marker(&out, site).into_owned();
        step(&mut out, Some(next));
    }
    if site.default.is_some() && holds(&out, "default") {
        let next = default_restated(&out, site, protected).into_owned();
        step(&mut out, Some(next));
    }
    if site.range.is_some() && out.contains('(') {
        let next = range_restated(&out, site, protected).into_owned();
        step(&mut out, Some(next));
    }
    if site.enum_values.is_some() && (holds(&out, "one of") || holds(&out, "values")) {
        let next = enum_restated(&out, site, protected).into_owned();
        step(&mut out, Some(next));
    }
    let counted = (site.has_type("integer") || site.has_type("number")) && holds(&out, "number");
    if site.has_type("array") || site.has_type("boolean") || counted {
        let next = type_opener(&out, site).into_owned();
        step(&mut out, Some(next));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::protect::{protect, Vocab};
    use super::*;
    use serde_json::json;

    /// The site of `schema` as the property `name` (required or not).
    fn site(name: &str, required: bool, schema: Value) -> Site {
        let Value::Object(map) = schema else {
            panic!("schema must be an object")
        };
        Site::of_schema(&map, Some((name, required)))
    }

    /// Runs the context rules as the compressor does: protected, then restored.
    fn run(text: &str, site: &Site) -> String {
        let mut vocab = Vocab::default();
        site.enum_values.iter().flatten().for_each(|v| vocab.add(v));
        let protected = protect(text, &vocab).unwrap();
        protected.restore(&apply(&protected.text, site, &protected))
    }

    #[test]
    fn optional_marker_table() {
        let optional = site("text", false, json!({"type": "string"}));
        let required = site("text", true, json!({"type": "string"}));
        let cases: [(&str, &Site, &str); 7] = [
            (
                "Optional prompt text to enter.",
                &optional,
                "prompt text to enter.",
            ),
            ("An optional list of uids.", &optional, "list of uids."),
            ("Optional: source branch.", &optional, "source branch."),
            ("Source branch (optional).", &optional, "Source branch."),
            // Must not fire: the property is required, or "optional" is not a marker.
            (
                "Optional prompt text to enter.",
                &required,
                "Optional prompt text to enter.",
            ),
            (
                "Optionally opens a URL.",
                &optional,
                "Optionally opens a URL.",
            ),
            (
                "Makes the header optional.",
                &optional,
                "Makes the header optional.",
            ),
        ];
        for (text, site, want) in cases {
            assert_eq!(run(text, site), want, "{text:?}");
        }
        // Not a property (a tool's own description): never fires.
        assert_eq!(run("Optional text.", &Site::default()), "Optional text.");
    }

    #[test]
    fn default_restated_table() {
        let number = site("pageSize", false, json!({"type": "integer", "default": 10}));
        let boolean = site("all", false, json!({"type": "boolean", "default": false}));
        let string = site("format", false, json!({"type": "string", "default": "png"}));
        let none = site("pageSize", false, json!({"type": "integer"}));
        let cases: [(&str, &Site, &str); 10] = [
            (
                "Max rules per page. Defaults to 10.",
                &number,
                "Max rules per page.",
            ),
            ("Page size (default: 10)", &number, "Page size"),
            ("Include all. Default is false.", &boolean, "Include all."),
            ("Image format. Default is \"png\"", &string, "Image format."),
            ("Image format. Defaults to 'png'.", &string, "Image format."),
            // Must not fire: the value differs, the schema has no default, the sentence says
            // more than the value, or it is not a sentence of its own.
            (
                "Max rules. Defaults to 20.",
                &number,
                "Max rules. Defaults to 20.",
            ),
            (
                "Max rules. Defaults to 10.",
                &none,
                "Max rules. Defaults to 10.",
            ),
            (
                "Page. Defaults to 10 (the first page).",
                &number,
                "Page. Defaults to 10 (the first page).",
            ),
            (
                "Image format. Default is \"jpeg\"",
                &string,
                "Image format. Default is \"jpeg\"",
            ),
            (
                "Uses the default is false rule.",
                &boolean,
                "Uses the default is false rule.",
            ),
        ];
        for (text, site, want) in cases {
            assert_eq!(run(text, site), want, "{text:?}");
        }
    }

    #[test]
    fn enum_restated_table() {
        let mode = site(
            "mode",
            false,
            json!({"type": "string", "enum": ["light", "dark"]}),
        );
        let cases: [(&str, &str); 5] = [
            ("Color mode. Must be one of: light, dark.", "Color mode."),
            ("Color mode. One of \"light\" or \"dark\".", "Color mode."),
            // Must not fire: a partial list, an extra value, or a list that is not a sentence.
            (
                "Color mode. Must be one of: light.",
                "Color mode. Must be one of: light.",
            ),
            (
                "Color mode. One of light, dark or auto.",
                "Color mode. One of light, dark or auto.",
            ),
            (
                "Pick the one of light or dark that you like.",
                "Pick the one of light or dark that you like.",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(run(text, &mode), want, "{text:?}");
        }
    }

    #[test]
    fn range_restated_table() {
        let quality = site(
            "quality",
            false,
            json!({"type": "number", "minimum": 0, "maximum": 100}),
        );
        let unbounded = site("quality", false, json!({"type": "number", "minimum": 0}));
        let cases: [(&str, &Site, &str); 6] = [
            (
                "Compression quality (0-100). Higher is better.",
                &quality,
                "Compression quality. Higher is better.",
            ),
            ("Quality (0 to 100)", &quality, "Quality"),
            // Must not fire: other bounds, one bound in the schema, not a range.
            ("Quality (1-100)", &quality, "Quality (1-100)"),
            (
                "Quality (0-50, at most 50 for PNG)",
                &quality,
                "Quality (0-50, at most 50 for PNG)",
            ),
            ("Quality (0-100)", &unbounded, "Quality (0-100)"),
            ("Quality (percent)", &quality, "Quality (percent)"),
        ];
        for (text, site, want) in cases {
            assert_eq!(run(text, site), want, "{text:?}");
        }
    }

    #[test]
    fn type_opener_table() {
        let array = site("files", true, json!({"type": "array"}));
        let boolean = site("fullPage", false, json!({"type": "boolean"}));
        let string = site("files", true, json!({"type": "string"}));
        let integer = site("steps", false, json!({"type": "integer"}));
        let cases: [(&str, &Site, &str); 16] = [
            (
                "Number of steps in the operation",
                &integer,
                "steps in the operation",
            ),
            (
                "Determines if trace recording should stop",
                &boolean,
                "trace recording should stop",
            ),
            ("Indicates whether to wait", &boolean, "wait"),
            // Must not fire: the condition goes on, or another type.
            (
                "Determines if, once started, it reloads",
                &boolean,
                "Determines if, once started, it reloads",
            ),
            ("Determines if it waits", &string, "Determines if it waits"),
            (
                "The number of contexts to return per page.",
                &integer,
                "contexts to return per page.",
            ),
            // Must not fire: not an opener, not a count type, or the phrase goes on.
            (
                "Page number of the results",
                &integer,
                "Page number of the results",
            ),
            ("Number of steps", &string, "Number of steps"),
            ("A number of steps", &integer, "A number of steps"),
            ("Array of files to push", &array, "files to push"),
            ("An array of entity names", &array, "entity names"),
            (
                "When true, takes a full page screenshot.",
                &boolean,
                "takes a full page screenshot.",
            ),
            (
                "Set to true to return preserved messages.",
                &boolean,
                "return preserved messages.",
            ),
            // Must not fire: another type, or the condition goes on.
            ("Array of files to push", &string, "Array of files to push"),
            (
                "If true and uid is set, waits.",
                &boolean,
                "If true and uid is set, waits.",
            ),
            ("Takes an array of names", &array, "Takes an array of names"),
        ];
        for (text, site, want) in cases {
            assert_eq!(run(text, site), want, "{text:?}");
        }
    }

    #[test]
    fn restates_name_table() {
        // (property, item, description, dropped)
        let cases: [(&str, &str, &str, bool); 20] = [
            ("url", "", "The URL.", true),
            ("repo", "", "Repository name", true),
            ("branchId", "", "Branch identifier", true),
            ("entity_name", "", "The entity name", true),
            ("entityType", "", "The type of the entity", true),
            // Words of the tool's own name say nothing new either.
            (
                "pull_number",
                "merge_pull_request",
                "Pull request number",
                true,
            ),
            (
                "id",
                "reload_extension",
                "ID of the extension to reload.",
                true,
            ),
            ("url", "browser_navigate", "The URL to navigate to", true),
            ("height", "resize_page", "Page height", true),
            // Must not fire: the description adds a word, or misses part of the name.
            ("message", "push_files", "Commit message", false),
            ("pull_number", "", "Pull request number", false),
            (
                "pull_number",
                "merge_pull_request",
                "Pull request number to close",
                false,
            ),
            ("branchFromThought", "", "Branch identifier", false),
            ("description", "", "Repository description", false),
            ("url", "", "Not the URL.", false),
            ("url", "", "The URL (https only).", false),
            (
                "to",
                "",
                "The name of the entity where the relation ends",
                false,
            ),
            // A negation or limit stays, even when the names carry it.
            ("track", "do_not_track", "Do not track", false),
            ("url", "open_only", "Only the URL", false),
            (
                "id",
                "reload_extension",
                "ID of the extension to reload first",
                false,
            ),
        ];
        for (name, item, text, want) in cases {
            let site = site(name, false, json!({"type": "string"}));
            assert_eq!(
                restates_name(text, &site, item),
                want,
                "{name} of {item}: {text:?}"
            );
        }
        assert!(!restates_name("The URL.", &Site::default(), "url"));
    }
}
