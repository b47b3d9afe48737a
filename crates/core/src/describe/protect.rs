//! Protected spans: everything technical in a description (code, URLs, paths, identifiers,
//! quoted strings, numbers, flags, the tool's own parameter names and enum values) is swapped
//! for a one-character sentinel before the prose rules run, and swapped back afterwards.
//!
//! Sentinels are Private Use Area characters that do not occur in the input (checked per
//! text), so restoring is exact and no rule can match inside a span.

use std::collections::HashSet;

use once_cell::sync::Lazy;

use super::Regex;

/// The Unicode ranges sentinels are taken from (BMP PUA, then planes 15 and 16).
const SENTINEL_RANGES: [(u32, u32); 3] =
    [(0xE000, 0xF8FF), (0xF0000, 0xFFFFD), (0x100000, 0x10FFFD)];

/// Regex class of every character that may be a sentinel (for rules that must treat a
/// protected span as a word).
pub const SENTINEL_CLASS: &str = r"\x{E000}-\x{F8FF}\x{F0000}-\x{FFFFD}\x{100000}-\x{10FFFD}";

pub fn is_sentinel_range(c: char) -> bool {
    let c = c as u32;
    SENTINEL_RANGES
        .iter()
        .any(|&(lo, hi)| (lo..=hi).contains(&c))
}

/// The protected-span classes, in priority order (the leftmost match wins; at the same start
/// the earlier alternative wins, so the longer constructs come first).
pub const SPAN_CLASSES: [(&str, &str); 17] = [
    ("fenced code", r"(?s:```.*?```|~~~.*?~~~)"),
    ("inline code", r"`[^`\n]+`"),
    (
        "URL",
        r"(?-u:\b)[A-Za-z][A-Za-z0-9+.\-]{0,31}(?:\(s\))?://(?:[A-Za-z0-9\-._~:/?#\[\]@!$&*+,;=%{}|]*[A-Za-z0-9\-_~/#@$&*+=%}|])?",
    ),
    (
        "email",
        r"(?-u:\b)(?:[A-Za-z0-9_.+\-]|[^\x00-\x7F\u{A0}\u{2000}-\u{206F}\u{3000}-\u{303F}]){1,64}@(?:[A-Za-z0-9_\-]|[^\x00-\x7F\u{A0}\u{2000}-\u{206F}\u{3000}-\u{303F}]){1,63}(?:\.[\w\-]+)+(?-u:\b)",
    ),
    ("double-quoted string", r#""[^"\n]{0,200}"|“[^”\n]{0,200}”"#),
    (
        "single-quoted string",
        r"(?-u:\B)'[^'\n]{1,200}'(?-u:\B)|‘[^’\n]{0,200}’",
    ),
    (
        "file path",
        r"(?:[A-Za-z]:\\[\w\\.\-]*|(?:~|\.{1,2})?/[\w.*\-/{}\[\]]*|\*\*?/[\w.*\-/]*|(?-u:\b)(?:[A-Za-z0-9_\-*]|[^\x00-\x7F\u{A0}\u{2000}-\u{206F}\u{3000}-\u{303F}]){1,64}(?:/[\w.\-*{}]+)+/?|(?-u:\B)\.[A-Za-z][\w\-]*|\*\.[\w\-]+)",
    ),
    (
        "abbreviation",
        r"(?-u:\b)(?:e\.g|i\.e|etc|vs|cf|approx|incl)\.,?",
    ),
    (
        "call",
        r"(?-u:\b)[A-Za-z_$](?:[A-Za-z0-9_$]|[^\x00-\x7F\u{A0}\u{2000}-\u{206F}\u{3000}-\u{303F}]){0,63}(?:\.[A-Za-z_$][\w$]*)*\([^()\n]{0,200}\)",
    ),
    (
        "dotted name",
        r"(?-u:\b)[A-Za-z_$](?:[A-Za-z0-9_$\-]|[^\x00-\x7F\u{A0}\u{2000}-\u{206F}\u{3000}-\u{303F}]){0,63}(?:\.[A-Za-z_$0-9][\w$\-]*)+",
    ),
    (
        "semver",
        r"(?-u:\b)v?\d+\.\d+\.\d+(?:-[\w.]+)?(?:\+[\w.]+)?(?-u:\b)",
    ),
    ("flag", r"(?:^|(?-u:\B))--?[A-Za-z][\w\-]*(?:=[^\s,;)]+)?"),
    (
        "number with unit",
        r"[\-+]?(?-u:\b)\d+(?:[.,:]\d+)*(?:[ \t]?(?:ms|s|sec|secs|seconds?|minutes?|min|mins|h|hours?|days?|[KMGT]i?B|[kmgt]b|bytes?|B|px|pt|em|rem|fps|k?Hz|%|x|chars?|characters?|lines?|tokens?|items?|rules?|times?)(?-u:\b)|%)?(?:-\d+(?:[.,]\d+)*%?)?",
    ),
    (
        "CONST_CASE",
        r"(?-u:\b)[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+(?-u:\b)|(?-u:\b)[A-Z]{2,}[0-9]*s?(?-u:\b)",
    ),
    (
        "identifier",
        r"(?-u:\b)[a-z][a-z0-9]*(?:[A-Z][A-Za-z0-9]*)+(?-u:\b)|(?-u:\b)[A-Z][a-z0-9]+(?:[A-Z][A-Za-z0-9]*)+(?-u:\b)|(?-u:\b)[A-Za-z0-9]*_[\w]*(?-u:\b)|(?-u:\b)[A-Z]+[a-z]+[A-Z][\w]*(?-u:\b)",
    ),
    (
        "markup",
        r"<[^<>\n]{1,80}>|\[[^\[\]\n]{1,60}\]|\{[^{}\n]{0,200}\}|@[A-Za-z][\w\-]*",
    ),
    ("arrow", r"=>|->|<-|&&|\|\|"),
];

static SPANS: Lazy<Regex> = Lazy::new(|| {
    let alternation = SPAN_CLASSES
        .iter()
        .map(|(_, re)| format!("(?:{re})"))
        .collect::<Vec<_>>()
        .join("|");
    Regex::new(&alternation).unwrap_or_else(|e| panic!("protected span regex: {e}"))
});

/// A character of a vocabulary word (`\w` and `$`); `.` and `-` may join them.
fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

/// Candidate words for the vocabulary check, as byte ranges of `text`: maximal runs of word
/// characters, dots and hyphens, trimmed to start and end on a word character (what the
/// regex `[\w$][\w$.\-]*[\w$]|[\w$]` finds, without a regex call per gap).
fn candidate_words(text: &str, mut found: impl FnMut(usize, usize)) {
    let mut run: Option<(usize, usize)> = None; // first and past-last word char of the run
    for (i, c) in text.char_indices() {
        if is_word_char(c) {
            let end = i + c.len_utf8();
            run = Some(run.map_or((i, end), |(s, _)| (s, end)));
        } else if c != '.' && c != '-' {
            if let Some((s, e)) = run.take() {
                found(s, e);
            }
        }
    }
    if let Some((s, e)) = run {
        found(s, e);
    }
}

/// Words a tool declares itself: its name, its parameter names and enum/const values. They
/// are protected wherever they occur as whole words in that tool's descriptions.
#[derive(Debug, Default, Clone)]
pub struct Vocab {
    words: HashSet<String>,
    /// Byte length of the longest word (a cheap filter before hashing).
    longest: usize,
    /// Values that contain whitespace (found by substring search instead).
    phrases: Vec<String>,
}

impl Vocab {
    pub fn add(&mut self, word: &str) {
        let word = word.trim();
        if word.is_empty() || word.len() > 200 {
            return;
        }
        if word.chars().any(char::is_whitespace) {
            if !self.phrases.iter().any(|p| p == word) {
                self.phrases.push(word.to_string());
            }
        } else {
            self.longest = self.longest.max(word.len());
            self.words.insert(word.to_string());
        }
    }

    fn may_hold(&self, len: usize) -> bool {
        len <= self.longest
    }

    pub fn is_empty(&self) -> bool {
        self.words.is_empty() && self.phrases.is_empty()
    }
}

/// A text with its protected spans replaced by sentinels.
#[derive(Debug)]
pub struct Protected {
    pub text: String,
    spans: Vec<String>,
    /// The sentinel of span i is `sentinels[i]`; ascending, so restore can binary-search.
    sentinels: Vec<char>,
}

/// Byte ranges of the protected spans of `text`, sorted and non-overlapping.
pub fn span_ranges(text: &str, vocab: &Vocab) -> Vec<(usize, usize)> {
    with_vocab_ranges(text, pattern_ranges(text), vocab)
}

/// The spans the class patterns find (independent of any vocabulary).
pub fn pattern_ranges(text: &str) -> Vec<(usize, usize)> {
    SPANS
        .find_iter(text)
        .filter(|m| !m.as_str().is_empty())
        .map(|m| (m.start(), m.end()))
        .collect()
}

/// Adds the vocabulary words found between the `pattern_ranges` of `text`.
pub fn with_vocab_ranges(
    text: &str,
    mut ranges: Vec<(usize, usize)>,
    vocab: &Vocab,
) -> Vec<(usize, usize)> {
    if !vocab.is_empty() {
        let mut extra = Vec::new();
        let mut gaps = Vec::new();
        let mut at = 0;
        for &(s, e) in &ranges {
            gaps.push((at, s));
            at = e;
        }
        gaps.push((at, text.len()));
        for (gs, ge) in gaps {
            let gap = text.get(gs..ge).unwrap_or("");
            candidate_words(gap, |s, e| {
                if vocab.may_hold(e - s) && gap.get(s..e).is_some_and(|w| vocab.words.contains(w)) {
                    extra.push((gs + s, gs + e));
                }
            });
            for phrase in &vocab.phrases {
                let mut from = 0;
                while let Some(found) = gap.get(from..).and_then(|rest| rest.find(phrase.as_str()))
                {
                    let start = from + found;
                    let end = start + phrase.len();
                    if is_word_edge(gap, start, end) {
                        extra.push((gs + start, gs + end));
                    }
                    from = end;
                }
            }
        }
        if !extra.is_empty() {
            ranges.extend(extra);
            ranges.sort_unstable();
            // Phrases may overlap each other: keep the first of overlapping ranges, widened.
            let mut merged: Vec<(usize, usize)> = Vec::with_capacity(ranges.len());
            for (s, e) in ranges {
                match merged.last_mut() {
                    Some(last) if s < last.1 => last.1 = last.1.max(e),
                    _ => merged.push((s, e)),
                }
            }
            ranges = merged;
        }
    }
    ranges
}

fn is_word_edge(text: &str, start: usize, end: usize) -> bool {
    let before = text.get(..start).and_then(|s| s.chars().next_back());
    let after = text.get(end..).and_then(|s| s.chars().next());
    let is_word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    !is_word(before) && !is_word(after)
}

/// Replaces every protected span of `text` by a sentinel; `None` when the text holds more
/// spans than there are free sentinel characters (the caller then leaves the text alone).
#[cfg(test)]
pub fn protect(text: &str, vocab: &Vocab) -> Option<Protected> {
    protect_ranges(text, span_ranges(text, vocab))
}

/// `protect` with the spans already found (see `span_ranges`).
pub fn protect_ranges(text: &str, ranges: Vec<(usize, usize)>) -> Option<Protected> {
    // Most texts hold no Private Use character: skip the set then.
    let used: HashSet<char> = if text.chars().any(is_sentinel_range) {
        text.chars().filter(|&c| is_sentinel_range(c)).collect()
    } else {
        HashSet::new()
    };
    let mut free = SENTINEL_RANGES
        .iter()
        .flat_map(|&(lo, hi)| lo..=hi)
        .filter_map(char::from_u32)
        .filter(|c| !used.contains(c));
    let mut out = String::with_capacity(text.len());
    let mut spans = Vec::with_capacity(ranges.len());
    let mut sentinels = Vec::with_capacity(ranges.len());
    let mut at = 0;
    for (s, e) in ranges {
        let sentinel = free.next()?;
        out.push_str(text.get(at..s)?);
        out.push(sentinel);
        spans.push(text.get(s..e)?.to_string());
        sentinels.push(sentinel);
        at = e;
    }
    out.push_str(text.get(at..)?);
    Some(Protected {
        text: out,
        spans,
        sentinels,
    })
}

impl Protected {
    /// The span a sentinel stands for.
    pub fn span_of(&self, c: char) -> Option<&str> {
        let i = self.sentinels.binary_search(&c).ok()?;
        self.spans.get(i).map(String::as_str)
    }

    /// Puts the spans back into a text derived from `self.text` by the rules.
    pub fn restore(&self, text: &str) -> String {
        if self.spans.is_empty() {
            return text.to_string();
        }
        // Sized by the text alone: restore runs once per sentence when shortening, so summing
        // every span here would make that quadratic.
        let mut out = String::with_capacity(text.len() * 2);
        for c in text.chars() {
            match self.sentinels.binary_search(&c) {
                Ok(i) => out.push_str(self.spans.get(i).map_or("", String::as_str)),
                Err(_) => out.push(c),
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spans(text: &str) -> Vec<&str> {
        span_ranges(text, &Vocab::default())
            .into_iter()
            .map(|(s, e)| &text[s..e])
            .collect()
    }

    #[test]
    fn every_class_is_protected() {
        let cases: [(&str, &str); 24] = [
            ("run ```js\nlet a = 1;\n``` now", "```js\nlet a = 1;\n```"),
            ("call `foo bar` here", "`foo bar`"),
            (
                "see https://w3c.github.io/manifest/#id-member.",
                "https://w3c.github.io/manifest/#id-member",
            ),
            ("a file:// or http(s):// bundle", "file://"),
            ("read /usr/bin/chromium now", "/usr/bin/chromium"),
            ("match '**/*.ext' files", "'**/*.ext'"),
            ("to a .heapsnapshot file", ".heapsnapshot"),
            ("exposed from /docs: x", "/docs"),
            ("set MAX_SIZE here", "MAX_SIZE"),
            ("calls page.title() once", "page.title()"),
            ("like fill() cannot", "fill()"),
            ("version 1.11.0-beta.2 out", "1.11.0-beta.2"),
            ("the pageSize value", "pageSize"),
            ("use read_text_file instead", "read_text_file"),
            ("say \"hello world\" twice", "\"hello world\""),
            ("wait 500 ms more", "500 ms"),
            ("sizes like 10KB used", "10KB"),
            ("pass --headless to it", "--headless"),
            ("the <select> element", "<select>"),
            ("with [FILE] prefix", "[FILE]"),
            ("the {resourceId} variable", "{resourceId}"),
            ("uses element.style here", "element.style"),
            ("e.g. this", "e.g."),
            ("the DevTools panel", "DevTools"),
        ];
        for (text, span) in cases {
            assert!(spans(text).contains(&span), "{text:?}: {:?}", spans(text));
        }
    }

    #[test]
    fn apostrophes_are_not_quotes() {
        let text = "the server's local filesystem. Provide either this or function, but don't.";
        assert!(
            spans(text).iter().all(|s| !s.contains('\'')),
            "{:?}",
            spans(text)
        );
    }

    #[test]
    fn vocab_words_and_phrases_are_protected() {
        let mut vocab = Vocab::default();
        vocab.add("head");
        vocab.add("light mode");
        let text = "use the head parameter in light mode; ahead stays";
        let got: Vec<&str> = span_ranges(text, &vocab)
            .into_iter()
            .map(|(s, e)| &text[s..e])
            .collect();
        assert_eq!(got, ["head", "light mode"]);
    }

    #[test]
    fn restore_is_exact_and_sentinels_avoid_input_chars() {
        let text = "uses \u{E000} and `code` and https://x.io/a and \u{E001}";
        let protected = protect(text, &Vocab::default()).unwrap();
        assert!(!protected.text.contains("`code`"));
        assert_eq!(protected.text.matches('\u{E000}').count(), 1);
        assert_eq!(protected.restore(&protected.text), text);
    }
}
