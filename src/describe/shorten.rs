//! Aggressive shortening: a long description keeps its first sentences and every later
//! sentence that states a limit (negation, "only", "must", "default", ...). Cuts fall only
//! between sentences of the sentinel text, so never inside a protected span.

use once_cell::sync::Lazy;
use regex::Regex;

use super::protect::Protected;
use super::rules::LIMIT_WORDS;

/// Descriptions at most this long (bytes of sentinel text) are left whole.
const LONG: usize = 100;
/// The opening sentences kept reach at least this length.
const OPENING: usize = 40;

static KEEP_ALSO: Lazy<Regex> = Lazy::new(|| {
    Regex::new(r"(?i)(?-u:\b)(?:defaults?|deprecated|always|requires?|maximum|minimum|max|min|limit|ignored|unsafe)(?-u:\b)")
        .unwrap_or_else(|e| panic!("{e}"))
});

/// Splits into sentences, each keeping the blanks that follow it, so the parts concatenate
/// back to the text.
fn sentences(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let ends = match c {
            '\n' => true,
            '.' | '!' | '?' => chars.peek().is_some_and(|&(_, n)| n.is_whitespace()),
            _ => false,
        };
        if ends {
            // Take the blanks that follow into this part.
            let mut end = i + c.len_utf8();
            while let Some(&(j, n)) = chars.peek() {
                if n == ' ' || n == '\t' || (n == '\n' && c != '\n') {
                    end = j + n.len_utf8();
                    chars.next();
                    if n == '\n' {
                        break;
                    }
                } else {
                    break;
                }
            }
            parts.push(text.get(start..end).unwrap_or(""));
            start = end;
        }
    }
    if start < text.len() {
        parts.push(text.get(start..).unwrap_or(""));
    }
    parts
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
        let keep = if opening {
            true
        } else {
            let restored = protected.restore(sentence);
            LIMIT_WORDS.is_match(&restored) || KEEP_ALSO.is_match(&restored)
        };
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
    fn sentences_concatenate_back() {
        let text = "One. Two!\nThree\n- four? five";
        assert_eq!(sentences(text).concat(), text);
        assert_eq!(sentences(text).len(), 5);
    }

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
