//! Helpers shared by the fuzz targets: cutting the fuzzer's bytes into options and text, and
//! the invariants that are cheap enough to check on every input.

use std::collections::{HashMap, HashSet};

use mcp_snapshot_filter_core::level::Level;
use mcp_snapshot_filter_core::notation::playwright;
use mcp_snapshot_filter_core::snapshot::{SnapshotLimits, SnapshotOptions};

/// Reads control bytes off the front of the fuzzer's input; what is left is the text.
pub struct Input<'a> {
    bytes: &'a [u8],
}

impl<'a> Input<'a> {
    pub fn new(bytes: &'a [u8]) -> Input<'a> {
        Input { bytes }
    }

    /// The next control byte (0 once the input is used up).
    pub fn byte(&mut self) -> u8 {
        match self.bytes.split_first() {
            Some((&b, rest)) => {
                self.bytes = rest;
                b
            }
            None => 0,
        }
    }

    pub fn level(&mut self) -> Level {
        Level::ALL[usize::from(self.byte()) % Level::ALL.len()]
    }

    /// Text up to the next NUL byte (or the end), invalid UTF-8 replaced.
    pub fn field(&mut self) -> String {
        let end = self
            .bytes
            .iter()
            .position(|&b| b == 0)
            .unwrap_or(self.bytes.len());
        let (field, rest) = self.bytes.split_at(end);
        self.bytes = rest.get(1..).unwrap_or(&[]);
        String::from_utf8_lossy(field).into_owned()
    }

    /// Everything left, invalid UTF-8 replaced (the neighbours of bad bytes survive).
    pub fn rest(self) -> String {
        String::from_utf8_lossy(self.bytes).into_owned()
    }
}

/// Options of `level`; when `small`, tiny limits chosen by the input, so that every lossy pass
/// fires on the short texts a fuzzer makes.
pub fn snapshot_options(input: &mut Input<'_>, level: Level) -> SnapshotOptions {
    let mut options = SnapshotOptions::for_level(level);
    let small = input.byte();
    if level >= Level::Moderate && small & 1 == 1 {
        options.limits = SnapshotLimits {
            max_nodes: 1 + usize::from(small >> 1 & 31),
            max_depth: 1 + usize::from(input.byte() % 6),
            max_similar_siblings: 1 + usize::from(input.byte() % 4),
            max_text_length: usize::from(input.byte() % 24),
            max_text_per_container: usize::from(input.byte() % 48),
            max_records: 1 + usize::from(input.byte() % 4),
            // Condensed records at times: none, a few, or every one.
            max_condensed_records: match input.byte() % 4 {
                0 | 1 => 0,
                2 => 1 + usize::from(input.byte() % 3),
                _ => usize::MAX,
            },
            max_options: usize::from(input.byte() % 4),
            // Tables at times, with a text budget from none to plenty.
            max_table_text: match input.byte() % 3 {
                0 => 0,
                1 => 1 + usize::from(input.byte() % 40),
                _ => usize::MAX,
            },
            tables: input.byte() % 3 != 0,
            // A navigation's runs kept whole (moderate) or collapsed (the budget's lean step).
            max_nav_controls: match input.byte() % 2 {
                0 => usize::MAX,
                _ => 1 + usize::from(input.byte() % 4),
            },
            // Decoration shown, or hidden as at the budget's steps from `no decoration` on.
            decoration: input.byte() % 2 == 0,
        };
    }
    options
}

/// The uids (chrome-devtools-mcp) or refs (Playwright YAML) a snapshot text shows, read the
/// way `filter_snapshot` reads it.
pub fn snapshot_uids(text: &str) -> HashSet<String> {
    if playwright::is_yaml_snapshot(text) {
        let mut implied = Vec::new();
        let tree = playwright::parse::parse(text, &mut implied);
        let uids: HashSet<String> = tree.uids().map(str::to_string).collect();
        uids
    } else {
        mcp_snapshot_filter_core::notation::cdp::parse::parse(text)
            .uids()
            .map(str::to_string)
            .collect()
    }
}

/// A filtered snapshot invents no uid and is never larger than its input.
pub fn check_snapshot(input: &str, output: &str, what: &str) {
    assert!(
        output.len() <= input.len(),
        "{what}: output ({} bytes) larger than input ({} bytes)",
        output.len(),
        input.len()
    );
    let known = snapshot_uids(input);
    for uid in snapshot_uids(output) {
        assert!(known.contains(&uid), "{what}: uid {uid:?} not in the input");
    }
}

/// How often each limit word occurs (lower-cased).
pub fn limit_word_counts(text: &str) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for m in mcp_snapshot_filter_core::describe::LIMIT_WORDS.find_iter(text) {
        *counts.entry(m.as_str().to_lowercase()).or_insert(0) += 1;
    }
    counts
}

/// No negation or limit word of `before` is missing from `after`.
pub fn check_limit_words(before: &str, after: &str, level: Level, what: &str) {
    let now = limit_word_counts(after);
    for (word, n) in limit_word_counts(before) {
        assert!(
            now.get(&word).copied().unwrap_or(0) >= n,
            "{what} {level}: lost {word:?}\n  {before:?}\n  {after:?}"
        );
    }
}

/// A result text as a `CallToolResult` with one text block.
pub fn text_result(text: &str) -> String {
    serde_json::json!({"content": [{"type": "text", "text": text}]}).to_string()
}

/// The text of every text block of a `CallToolResult` (JSON), joined by newlines.
pub fn result_text(result_json: &str) -> String {
    let value: serde_json::Value = serde_json::from_str(result_json).unwrap_or_default();
    value["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|b| b["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The marker a snapshot line holds, if it is one: a chrome-devtools-mcp `… N hidden …` line,
/// or a Playwright `- '… N hidden …'` item (its quotes taken off).
pub fn marker_of(line: &str) -> Option<&str> {
    let t = line.trim_start();
    if t.starts_with('…') {
        return Some(t);
    }
    let quoted = t.strip_prefix("- '")?;
    quoted
        .starts_with('…')
        .then(|| quoted.trim_end().trim_end_matches('\''))
}

/// `uid` appears in `text` as a whole word: not inside a longer uid or ref (uids of fuzzed
/// snapshots can hold any character).
pub fn mentions(text: &str, uid: &str) -> bool {
    let edge = |c: Option<char>| c.is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '_'));
    !uid.is_empty()
        && text.match_indices(uid).any(|(i, _)| {
            edge(text[..i].chars().next_back()) && edge(text[i + uid.len()..].chars().next())
        })
}
