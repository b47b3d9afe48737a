//! Sentences of a (sentinel) text, and the capital letter a sentence keeps when a rule drops
//! its first words ("The tool returns x" -> "Returns x", not "returns x").

/// Splits into sentences, each keeping the blanks that follow it, so the parts concatenate
/// back to the text. A line break ends a sentence unless a lowercase letter follows it (a
/// hard-wrapped line goes on: "the element selected\nin the panel").
pub fn sentences(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let ends = match c {
            '\n' => !chars.peek().is_some_and(|&(_, n)| n.is_ascii_lowercase()),
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

/// Byte offset of a sentence's first word: after blanks and a list marker (`- `, `* `, `• `).
fn first_word_at(sentence: &str) -> usize {
    let body = sentence.trim_start();
    let mut at = sentence.len() - body.len();
    for marker in ["- ", "* ", "• "] {
        if let Some(rest) = body.strip_prefix(marker) {
            at += marker.len() + (rest.len() - rest.trim_start().len());
            break;
        }
    }
    at
}

/// The first word of a sentence (letters, digits, apostrophes, hyphens).
fn first_word(sentence: &str) -> &str {
    let rest = sentence.get(first_word_at(sentence)..).unwrap_or("");
    let end = rest
        .char_indices()
        .find(|&(_, c)| !(c.is_alphanumeric() || c == '\'' || c == '’' || c == '-'))
        .map_or(rest.len(), |(i, _)| i);
    rest.get(..end).unwrap_or("")
}

/// Capitalises each sentence of `after` whose first words the rules dropped, when the same
/// sentence of `before` started with a capital: `before` and `after` are the text before and
/// after the rules, which keep the sentence boundaries (when the counts differ, a pleasantry
/// sentence went, and nothing is changed). Only a plain lowercase word is capitalised, never
/// a protected span or a word like "iOS".
pub fn capitalize_dropped_starts(before: &str, after: &str) -> String {
    let (was, now) = (sentences(before), sentences(after));
    if was.len() != now.len() {
        return after.to_string();
    }
    let mut out = String::with_capacity(after.len());
    for (old, new) in was.iter().zip(&now) {
        let (old_word, new_word) = (first_word(old), first_word(new));
        let capital_before = old_word.starts_with(|c: char| c.is_ascii_uppercase());
        let plain_lowercase = new_word.starts_with(|c: char| c.is_ascii_lowercase())
            && !new_word.chars().skip(1).any(char::is_uppercase);
        if capital_before && plain_lowercase && !old_word.eq_ignore_ascii_case(new_word) {
            let at = first_word_at(new);
            out.push_str(new.get(..at).unwrap_or(""));
            let rest = new.get(at..).unwrap_or("");
            let mut chars = rest.chars();
            if let Some(first) = chars.next() {
                out.push(first.to_ascii_uppercase());
            }
            out.push_str(chars.as_str());
        } else {
            out.push_str(new);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences_concatenate_back() {
        let text = "One. Two!\nThree\n- four? five\nwrapped on";
        assert_eq!(sentences(text).concat(), text);
        assert_eq!(
            sentences(text),
            ["One. ", "Two!\n", "Three\n", "- four? ", "five\nwrapped on"]
        );
    }

    #[test]
    fn capitalizes_only_sentences_that_lost_their_first_words() {
        let cases: [(&str, &str, &str); 8] = [
            ("This tool returns x.", "returns x.", "Returns x."),
            (
                "Reads. You can skip it.",
                "Reads. skip it.",
                "Reads. Skip it.",
            ),
            ("- You can branch", "- branch", "- Branch"),
            // Must not change: a sentence that began in lowercase, an unchanged first word,
            // a word with an inner capital, a different sentence count.
            ("the url to open", "url to open", "url to open"),
            ("Pass url here", "Pass url here", "Pass url here"),
            ("The iPhone app", "iPhone app", "iPhone app"),
            ("Thanks! The page.", "page.", "page."),
            ("Uid of the node", "uid of node", "uid of node"),
        ];
        for (before, after, want) in cases {
            assert_eq!(capitalize_dropped_starts(before, after), want, "{before:?}");
        }
    }
}
