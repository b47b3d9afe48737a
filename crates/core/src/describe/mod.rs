//! Description compression for `tools/list`, `prompts/list`, `resources/list` and
//! `resources/templates/list` results: fewer tokens in the prose, same meaning.
//!
//! Protect, compress, restore: technical spans become sentinels (`protect`), the prose rules
//! run around them (`rules`, `japanese`, and at aggressive `shorten`), and the spans come back
//! byte for byte. `list` decides which `description` values are prose; nothing else in the
//! result changes, except the no-op schema keywords `schema_compact` drops: a root `$schema`
//! naming MCP's default dialect from moderate on, the rest when asked.

mod context;
mod japanese;
mod list;
mod protect;
mod rules;

/// The negation and limit words no rule may drop (the fuzz targets and tests count them).
pub use rules::LIMIT_WORDS;
mod schema_compact;
mod sentences;
mod shorten;

#[cfg(test)]
mod adversarial;
#[cfg(test)]
mod linear_tests;
#[cfg(test)]
mod metered;
#[cfg(test)]
mod prop_tests;
#[cfg(test)]
mod tests;

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use crate::error::{FilterError, FilterResult};
use crate::level::Level;
use context::Site;
use protect::Vocab;

/// The passes' regex; in tests one that also counts the work of its searches (`metered`), so
/// linearity is tested by counting, never by timing.
#[cfg(test)]
use metered::Regex;
#[cfg(not(test))]
use regex::Regex;

/// Counts the bytes a pass's char walk covered, in tests (`metered`), with the regex
/// searches' work; nothing otherwise.
#[inline]
fn walked(bytes: usize) {
    #[cfg(test)]
    metered::walked(bytes);
    #[cfg(not(test))]
    let _ = bytes;
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CompressOptions {
    pub level: Level,
    /// At `aggressive` only: drop schema keywords that change no validation outcome.
    pub compact_schemas: bool,
}

/// The list methods whose results this module rewrites.
pub const LIST_METHODS: [&str; 4] = [
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
];

/// A list result larger than this passes through unchanged: real lists are under 100 KB (the
/// largest in the corpus, chrome-devtools-mcp with every category, is 80 KB), and the proxy
/// holds every other message while it compresses one (adversarial prose costs about 3 µs a
/// byte, so this bounds that to about a second).
pub const MAX_LIST_RESULT_BYTES: usize = 256 * 1024;
/// A description longer than this stays as it is (the longest in the corpus has 2,781 bytes).
pub const MAX_DESCRIPTION_BYTES: usize = 16 * 1024;

/// Compresses the descriptions of a list result; `Ok(None)` when nothing changed (or the
/// result is over `MAX_LIST_RESULT_BYTES`).
pub fn compress_list_result(
    method: &str,
    result_json: &str,
    options: &CompressOptions,
) -> FilterResult<Option<String>> {
    let items_key = list::items_key(method)
        .ok_or_else(|| FilterError::UnknownListMethod(method.to_string()))?;
    if result_json.len() > MAX_LIST_RESULT_BYTES {
        return Ok(None);
    }
    let mut result: Value =
        serde_json::from_str(result_json).map_err(|e| FilterError::NotJson {
            what: "result",
            reason: e.to_string(),
        })?;
    if options.level == Level::Off {
        return Ok(None);
    }
    let compact = options.compact_schemas && options.level == Level::Aggressive;
    let Some(Value::Array(items)) = result.get_mut(items_key) else {
        return Ok(None);
    };
    let mut changed = false;
    // Lists repeat descriptions ("Targets a specific page by ID." on every tool): a text with
    // the same protected spans and the same site compresses the same way.
    type MemoKey = (String, Vec<(usize, usize)>, Site);
    let mut memo: HashMap<MemoKey, String> = HashMap::new();
    let mut pattern_memo: HashMap<String, Vec<(usize, usize)>> = HashMap::new();
    // At aggressive, a property whose name and description an earlier tool of the list already
    // gave keeps its name only: the model reads the list whole.
    let mut seen_properties: HashSet<(String, String)> = HashSet::new();
    // The list's tool names of more than one word ("performance_start_trace", "get-sum") are
    // protected in every item: a sentence pointing to another tool is code to the model.
    let tool_names: Vec<String> = items
        .iter()
        .filter_map(|item| item.get("name").and_then(Value::as_str))
        .filter(|name| name.contains(['_', '-']) && !name.contains(char::is_whitespace))
        .map(str::to_string)
        .collect();
    for item in items.iter_mut() {
        let Value::Object(item) = item else { continue };
        let mut vocab = list::item_vocab(item);
        for name in &tool_names {
            vocab.add(name);
        }
        let item_name = list::item_name(item).to_string();
        list::item_descriptions(item, &mut |text, site, _| {
            if text.len() > MAX_DESCRIPTION_BYTES {
                return true;
            }
            if options.level >= Level::Moderate && context::restates_name(text, site, &item_name) {
                changed = true;
                return false;
            }
            if options.level == Level::Aggressive {
                if let Some(name) = site.property.as_ref() {
                    if !seen_properties.insert((name.clone(), text.clone())) {
                        changed = true;
                        return false;
                    }
                }
            }
            let patterns = match pattern_memo.get(text.as_str()) {
                Some(found) => found.clone(),
                None => {
                    let found = protect::pattern_ranges(text);
                    pattern_memo.insert(text.clone(), found.clone());
                    found
                }
            };
            let ranges = protect::with_vocab_ranges(text, patterns, &vocab);
            let key = (std::mem::take(text), ranges, site.clone());
            let compressed = match memo.get(&key) {
                Some(done) => done.clone(),
                None => {
                    let done = compress_ranges(&key.0, options.level, key.1.clone(), site);
                    memo.insert((key.0.clone(), key.1.clone(), key.2.clone()), done.clone());
                    done
                }
            };
            *text = key.0;
            if compressed != *text {
                changed = true;
                if compressed.is_empty() {
                    return false;
                }
                *text = compressed;
            }
            true
        });
        for key in ["inputSchema", "outputSchema"] {
            if let Some(schema) = item.get_mut(key) {
                if options.level >= Level::Moderate {
                    changed |= schema_compact::drop_default_dialect(schema);
                }
                if compact {
                    changed |= schema_compact::compact_schema(schema);
                }
            }
        }
    }
    if !changed {
        return Ok(None);
    }
    serde_json::to_string(&result)
        .map(Some)
        .map_err(|e| FilterError::Unwritable(e.to_string()))
}

/// Compresses one prose text.
pub fn compress_text(text: &str, level: Level) -> String {
    compress_description(text, level, &Vocab::default())
}

/// Compresses one description; `vocab` holds the words its item declares (parameter names,
/// enum values), which are protected like code.
fn compress_description(text: &str, level: Level, vocab: &Vocab) -> String {
    compress_ranges(
        text,
        level,
        protect::span_ranges(text, vocab),
        &Site::default(),
    )
}

/// `compress_description` with the protected spans already found.
fn compress_ranges(text: &str, level: Level, ranges: Vec<(usize, usize)>, site: &Site) -> String {
    if level == Level::Off || text.is_empty() {
        return text.to_string();
    }
    let Some(protected) = protect::protect_ranges(text, ranges) else {
        return text.to_string();
    };
    protected.restore(&compress_protected(&protected, level, site))
}

/// Runs the rules of `level` on a protected text; the result still holds sentinels.
fn compress_protected(protected: &protect::Protected, level: Level, site: &Site) -> String {
    let prose = before_cut(protected, level, site);
    if level == Level::Aggressive {
        shorten::shorten(&prose, protected)
    } else {
        prose
    }
}

/// Every rule of `level` but the aggressive cut to the first sentences.
fn before_cut(protected: &protect::Protected, level: Level, site: &Site) -> String {
    // Each step that may drop a sentence's first words gives it back its capital.
    let tidy = rules::whitespace(&protected.text);
    let before_rules = if level >= Level::Moderate {
        let text = context::apply(&tidy, site, protected);
        match text {
            std::borrow::Cow::Owned(changed) => {
                sentences::capitalize_dropped_starts(&tidy, &changed)
            }
            std::borrow::Cow::Borrowed(same) => same.to_string(),
        }
    } else {
        tidy.into_owned()
    };
    let prose = japanese::apply(&rules::apply(&before_rules, level), level);
    let mut prose = sentences::capitalize_dropped_starts(&before_rules, &prose);
    if level == Level::Aggressive {
        let is_example = |c: char| {
            protected
                .span_of(c)
                .is_some_and(|span| span.starts_with("e.g"))
        };
        // Examples that are the syntax (a URL, `"Control+A"`, `"1MB-2MB"`) stay.
        let shows_syntax = |c: char| protected.span_of(c).is_some_and(shorten::shows_syntax);
        prose = rules::example_asides(&prose, &is_example, &shows_syntax);
    }
    prose
}
