//! Escaping of names and values in the light notation, so that no page text can pose as a node
//! line or close a name early: newline `\n`, carriage return `\r`, the closing delimiter (`\"`
//! in a quoted name, `\]` in a link's `[text]`), and a backslash written `\\` only where it
//! could be misread (before `n`, `r`, a line break, the delimiter, `\` or at the end). Every
//! other backslash (regexes, Windows paths in page text) stays as it is. Shared by both
//! notations: our table headers and rows escape and read cells the same way in each.

use std::borrow::Cow;

/// Escapes `s` for a `"quoted"` name or value.
pub fn escape_into(out: &mut String, s: &str) {
    escape_delimited_into(out, s, '"');
}

/// Escapes `s` for a link's `[text]`.
pub fn escape_link_text_into(out: &mut String, s: &str) {
    escape_delimited_into(out, s, ']');
}

/// Escapes `s` for a bare text cell of a table row: cells end at `|`, and a `"` would open a
/// quote to whoever splits the row (both written `\|`, `\"`; a backslash always doubled). A
/// leading `…` is written `\…`: a row starting with it could pose as a marker line of the
/// table (a delta's `… 2 rows unchanged (uid …)`), and no row line ever starts with `…`.
pub fn escape_cell_into(out: &mut String, s: &str) {
    let s = match s.strip_prefix('…') {
        Some(rest) => {
            out.push_str("\\…");
            rest
        }
        None => s,
    };
    if !s
        .bytes()
        .any(|b| matches!(b, b'\n' | b'\r' | b'\\' | b'|' | b'"'))
    {
        out.push_str(s);
        return;
    }
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\\' | '|' | '"' => {
                out.push('\\');
                out.push(c);
            }
            other => out.push(other),
        }
    }
}

/// `close` is ASCII, so the fast path can scan bytes.
fn escape_delimited_into(out: &mut String, s: &str, close: char) {
    let close_byte = close as u8;
    if !s
        .bytes()
        .any(|b| matches!(b, b'\n' | b'\r' | b'\\') || b == close_byte)
    {
        out.push_str(s);
        return;
    }
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            // Doubled wherever what follows it is written starting with `n`, `r`, `\\` or the
            // delimiter: a line break is written `\\n`, so a backslash before one is doubled too.
            '\\' => match chars.peek() {
                Some(&next) if !matches!(next, 'n' | 'r' | '\\' | '\n' | '\r') && next != close => {
                    out.push('\\')
                }
                _ => out.push_str("\\\\"),
            },
            c if c == close => {
                out.push('\\');
                out.push(c);
            }
            other => out.push(other),
        }
    }
}

/// Reverses `escape_into`.
pub fn unescape(s: &str) -> Cow<'_, str> {
    unescape_delimited(s, '"')
}

/// Reverses `escape_cell_into`.
pub fn unescape_cell(s: &str) -> Cow<'_, str> {
    if !s.contains('\\') {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    Cow::Owned(out)
}

/// Reverses `escape_link_text_into`.
pub fn unescape_link_text(s: &str) -> Cow<'_, str> {
    unescape_delimited(s, ']')
}

fn unescape_delimited(s: &str, close: char) -> Cow<'_, str> {
    if !s.contains('\\') {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.peek().copied() {
            Some('n') => {
                out.push('\n');
                chars.next();
            }
            Some('r') => {
                out.push('\r');
                chars.next();
            }
            Some(q) if q == close || q == '\\' => {
                out.push(q);
                chars.next();
            }
            _ => out.push('\\'),
        }
    }
    Cow::Owned(out)
}

/// Reads an escaped quoted string at the start of `s` (which starts after the opening quote):
/// returns the raw content and the rest after the closing quote.
pub fn read_escaped(s: &str) -> Option<(&str, &str)> {
    let bytes = s.as_bytes();
    let mut k = 0;
    while let Some(&b) = bytes.get(k) {
        match b {
            b'\\' => k += 2,
            b'"' => return Some((s.get(..k)?, s.get(k + 1..)?)),
            _ => k += 1,
        }
    }
    None
}

/// Splits at `sep` outside quotes (a backslash escapes the next byte).
pub fn split_outside_quotes<'s>(s: &'s str, sep: &str) -> Vec<&'s str> {
    let bytes = s.as_bytes();
    let mut parts = Vec::new();
    let (mut start, mut k, mut quote) = (0, 0, false);
    while let Some(&b) = bytes.get(k) {
        if b == b'\\' {
            k += 2;
            continue;
        }
        if b == b'"' {
            quote = !quote;
        } else if !quote && b.is_ascii() && s.get(k..).is_some_and(|t| t.starts_with(sep)) {
            parts.push(s.get(start..k).unwrap_or(""));
            k += sep.len();
            start = k;
            continue;
        }
        k += 1;
    }
    parts.push(s.get(start..).unwrap_or(""));
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_hostile_text() {
        for s in [
            "plain",
            "a \"quoted\" word",
            "line\nuid=9_9 button \"Pay now\"",
            "ends with \\",
            "\\n literal and \\d regex and \\\\ double",
            "\r\n\"\\",
            "[x](y) ] \\] \\",
            "\\\n",
            "a\\\r\nb\\\\\nc",
        ] {
            let mut out = String::new();
            escape_into(&mut out, s);
            assert!(!out.contains('\n'), "{out}");
            assert_eq!(unescape(&out), s);
            let mut link = String::new();
            escape_link_text_into(&mut link, s);
            assert!(!link.contains('\n'), "{link}");
            assert_eq!(unescape_link_text(&link), s);
        }
    }

    /// Issue 20 item 3: a backslash before a line break was written `\\n`, which reads back as
    /// a backslash and `n`.
    #[test]
    fn a_backslash_before_a_line_break_reads_back() {
        let mut out = String::new();
        escape_into(&mut out, "\\\n");
        assert_eq!(out, "\\\\\\n");
        assert_eq!(unescape(&out), "\\\n");
        let mut link = String::new();
        escape_link_text_into(&mut link, "a\\\r");
        assert_eq!(link, "a\\\\\\r");
        assert_eq!(unescape_link_text(&link), "a\\\r");
    }

    /// Every string over the characters that matter reads back, for both delimiters.
    #[test]
    fn every_short_string_of_the_escaped_characters_round_trips() {
        const ALPHABET: [char; 8] = ['\\', 'n', 'r', '\n', '\r', '"', ']', 'a'];
        for len in 0..=5u32 {
            for code in 0..ALPHABET.len().pow(len) {
                let mut rest = code;
                let s: String = (0..len)
                    .map(|_| {
                        let c = ALPHABET[rest % ALPHABET.len()];
                        rest /= ALPHABET.len();
                        c
                    })
                    .collect();
                let mut out = String::new();
                escape_into(&mut out, &s);
                assert_eq!(unescape(&out), s, "{s:?} written {out:?}");
                let mut link = String::new();
                escape_link_text_into(&mut link, &s);
                assert_eq!(unescape_link_text(&link), s, "{s:?} written {link:?}");
            }
        }
    }

    #[test]
    fn link_text_escapes_only_its_delimiter() {
        let mut out = String::new();
        escape_link_text_into(&mut out, "a [b] \"c\" \\]");
        assert_eq!(out, "a [b\\] \"c\" \\\\\\]");
        assert_eq!(unescape_link_text(&out), "a [b] \"c\" \\]");
    }
}
