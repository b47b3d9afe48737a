//! Escaping of names and values in the light notation, so that no page text can pose as a node
//! line or close a name early: newline `\n`, carriage return `\r`, quote `\"`, and a backslash
//! written `\\` only where it could be misread (before `n`, `r`, `"`, `\` or at the end).
//! Every other backslash (regexes, Windows paths in page text) stays as it is.

use std::borrow::Cow;

pub fn escape_into(out: &mut String, s: &str) {
    if !s.bytes().any(|b| matches!(b, b'\n' | b'\r' | b'"' | b'\\')) {
        out.push_str(s);
        return;
    }
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '"' => out.push_str("\\\""),
            '\\' => match chars.peek() {
                None | Some('n' | 'r' | '"' | '\\') => out.push_str("\\\\"),
                Some(_) => out.push('\\'),
            },
            other => out.push(other),
        }
    }
}

pub fn unescape(s: &str) -> Cow<'_, str> {
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
            Some(q @ ('"' | '\\')) => {
                out.push(q);
                chars.next();
            }
            _ => out.push('\\'),
        }
    }
    Cow::Owned(out)
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
        ] {
            let mut out = String::new();
            escape_into(&mut out, s);
            assert!(!out.contains('\n'), "{out}");
            assert_eq!(unescape(&out), s);
        }
    }
}
