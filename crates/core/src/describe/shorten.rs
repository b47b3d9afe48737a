//! Aggressive shortening: a long description keeps its first sentences and every later
//! sentence that states a limit (negation, "only", "must", "default", ...), a requirement
//! ("have to", "should"), an exclusion ("excludes", "instead") or what leaving a parameter out
//! does ("Omit to clear the override", "If omitted, the file chooser is cancelled"), when the
//! call fails, how to clear a setting, a numeric range, or that names code: a code span, a call,
//! an identifier, another tool of the list, a URL or a quoted value's syntax (`"Control+A"`).
//! Cuts fall only between sentences of the sentinel text, so never inside a protected span.

use once_cell::sync::Lazy;

use super::protect::Protected;
use super::rules::LIMIT_WORDS;
use super::sentences::sentences;
use super::Regex;

/// Descriptions at most this long (bytes of sentinel text) are left whole.
const LONG: usize = 100;
/// The opening sentences kept reach at least this length.
const OPENING: usize = 40;

static KEEP_ALSO: Lazy<Regex> = Lazy::new(|| {
    // Also: when the call fails ("If the destination exists, the operation will fail"), how to
    // clear or reset a setting ("Pass an empty string to clear"), and a numeric range
    // ("Longitude between -180 and 180"): issue 41 item 15.
    Regex::new(r"(?i)(?-u:\b)(?:defaults?|deprecated|always|requires?|maximum|minimum|max|min|limit|ignored|unsafe|ha(?:ve|s|d)[ \t]+to|needs?[ \t]+to|should|ought[ \t]+to|exclud(?:e|es|ed|ing)|instead|rather[ \t]+than|omit(?:s|ted|ting)?|fail(?:s|ed)?|clears?|resets?|between[ \t]+[-+]?[0-9][0-9.,]*[ \t]+and[ \t]+[-+]?[0-9]+)(?-u:\b)")
        .unwrap_or_else(|e| panic!("{e}"))
});

/// A protected span that shows syntax the prose may not state elsewhere: a URL, or a quoted
/// value holding a symbol (`"Control+A"`, `"1MB-2MB"`, `'**/*.ext'`, `"/api/.*"`). Quoted
/// plain words (`"Enter"`, `'main'`) are examples of a value, not of its syntax.
pub fn shows_syntax(span: &str) -> bool {
    if span.contains("://") {
        return true;
    }
    let inner = span.trim_matches(['"', '\'', '‘', '’', '“', '”']);
    inner.len() < span.len()
        && inner.chars().any(|c| {
            !(c.is_alphanumeric() || c.is_whitespace() || matches!(c, '.' | ',' | '\'' | '_'))
        })
}

/// A protected span that names code: backticked or fenced code, or an identifier-shaped word
/// (snake_case, kebab-case, camelCase, a dotted name or a call, quoted or not). Numbers, URLs,
/// paths, quoted prose, plain words (a one-word parameter name) and PascalCase names (mostly products:
/// DevTools, JavaScript) do not count.
static CODE_SPAN: Lazy<Regex> = Lazy::new(|| {
    Regex::new(r"^(?:`|~~~)|^[A-Za-z_$][\w$]*(?:[._\-][A-Za-z0-9_$][\w$]*)+(?:\(.*\))?$|^[A-Za-z_$][\w$]*\(.*\)$|^[a-z][a-z0-9]*[A-Z][\w$]*$")
        .unwrap_or_else(|e| panic!("{e}"))
});

/// Whether a later sentence says something the cut must not lose.
fn carries_meaning(sentence: &str, protected: &Protected) -> bool {
    let names_code = sentence
        .chars()
        .filter_map(|c| protected.span_of(c))
        .any(|span| {
            // A quoted identifier ('resourceLink') is an identifier too.
            let inner = span.trim_matches(['"', '\'', '‘', '’', '“', '”']);
            CODE_SPAN.is_match(span) || CODE_SPAN.is_match(inner) || shows_syntax(span)
        });
    if names_code {
        return true;
    }
    let restored = protected.restore(sentence);
    LIMIT_WORDS.is_match(&restored) || KEEP_ALSO.is_match(&restored)
}

/// Shortens a long sentinel text; `protected` restores a sentence to test it for limits
/// (limit words may sit inside spans, e.g. `BEFORE`).
pub fn shorten(text: &str, protected: &Protected) -> String {
    if text.len() <= LONG {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut opening = true;
    for sentence in sentences(text) {
        let keep = opening || carries_meaning(sentence, protected);
        if keep {
            out.push_str(sentence);
        }
        if opening && out.trim_end().len() >= OPENING {
            opening = false;
        }
    }
    out.trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::super::protect::{protect, Vocab};
    use super::*;

    #[test]
    fn keeps_opening_and_limit_sentences() {
        let text = "Read the complete contents of a file from the file system as text, in any encoding you like. \
                    Handles various text encodings and provides detailed error messages. \
                    Use it when you need to examine one file. Only works within allowed directories.";
        let protected = protect(text, &Vocab::default()).unwrap();
        let short = shorten(&protected.text, &protected);
        assert!(short.starts_with("Read the complete contents"));
        assert!(!short.contains("Handles various"));
        assert!(short.ends_with("Only works within allowed directories."));
    }

    #[test]
    fn never_cuts_inside_a_span() {
        let text = format!(
            "Calls `a. B. c` first. {} Then more text follows here.",
            "x ".repeat(100)
        );
        let protected = protect(&text, &Vocab::default()).unwrap();
        let short = protected.restore(&shorten(&protected.text, &protected));
        assert!(short.contains("`a. B. c`"));
    }
}
