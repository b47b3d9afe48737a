//! The YAML scalar rules Playwright's `renderAriaTree` follows (its `yaml.ts`): when a key or a
//! value needs quotes, how keys are single-quoted and values double-quoted, and names written as
//! JSON strings. Readers and writers here are exact inverses, so a snapshot we write reads back
//! to the same nodes.

use std::borrow::Cow;

/// Playwright's `yamlStringNeedsQuotes`.
pub fn needs_quotes(s: &str) -> bool {
    let Some(first) = s.chars().next() else {
        return true;
    };
    let last = s.chars().next_back().unwrap_or(first);
    if first.is_whitespace() || last.is_whitespace() {
        return true;
    }
    if s.chars().any(|c| {
        let u = c as u32;
        (u <= 0x08)
            || u == 0x0b
            || u == 0x0c
            || (0x0e..=0x1f).contains(&u)
            || (0x7f..=0x9f).contains(&u)
    }) {
        return true;
    }
    if first == '-' || first == '[' || "&*],?!>|@\"'#%".contains(first) {
        return true;
    }
    let bytes = s.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        let next = bytes.get(i + 1).copied();
        match b {
            b'\n' | b'\r' => return true,
            b':' if next.is_none_or(|n| n.is_ascii_whitespace()) => return true,
            b'#' if i > 0 && bytes.get(i - 1).is_some_and(|p| p.is_ascii_whitespace()) => {
                return true
            }
            b'{' | b'}' | b'`' => return true,
            _ => {}
        }
    }
    // Also any Unicode whitespace before '#' (JS `\s`).
    if s.char_indices().any(|(i, c)| {
        c.is_whitespace()
            && !c.is_ascii()
            && s.get(i + c.len_utf8()..)
                .is_some_and(|r| r.starts_with('#'))
    }) {
        return true;
    }
    looks_like_non_string(s)
}

/// `!isNaN(Number(str))` or a YAML 1.1 boolean/null word.
fn looks_like_non_string(s: &str) -> bool {
    let lower = s.to_ascii_lowercase();
    if ["y", "n", "yes", "no", "true", "false", "on", "off", "null"].contains(&lower.as_str()) {
        return true;
    }
    let t = s.trim();
    if t.is_empty() {
        return true;
    }
    let body = t.strip_prefix(['+', '-']).unwrap_or(t);
    if body == "Infinity" {
        return true;
    }
    let radix = |p: &str, ok: fn(&u8) -> bool| {
        t.strip_prefix(p)
            .or_else(|| t.strip_prefix(&p.to_uppercase()))
            .is_some_and(|d| !d.is_empty() && d.as_bytes().iter().all(ok))
    };
    if radix("0x", u8::is_ascii_hexdigit)
        || radix("0o", |b| (b'0'..=b'7').contains(b))
        || radix("0b", |b| *b == b'0' || *b == b'1')
    {
        return true;
    }
    // A decimal number: digits, one '.', an exponent.
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(at) => (&body[..at], Some(&body[at + 1..])),
        None => (body, None),
    };
    let mut digits = 0;
    let mut dots = 0;
    for b in mantissa.bytes() {
        match b {
            b'0'..=b'9' => digits += 1,
            b'.' => dots += 1,
            _ => return false,
        }
    }
    if digits == 0 || dots > 1 {
        return false;
    }
    match exponent {
        None => true,
        Some(e) => {
            let e = e.strip_prefix(['+', '-']).unwrap_or(e);
            !e.is_empty() && e.bytes().all(|b| b.is_ascii_digit())
        }
    }
}

/// A key as Playwright writes it: single quotes (`''` for `'`) when needed.
pub fn write_key(out: &mut String, key: &str) {
    if !needs_quotes(key) {
        out.push_str(key);
        return;
    }
    out.push('\'');
    out.push_str(&key.replace('\'', "''"));
    out.push('\'');
}

/// A value as Playwright writes it: double quotes with backslash escapes when needed.
pub fn write_value(out: &mut String, value: &str) {
    if !needs_quotes(value) {
        out.push_str(value);
        return;
    }
    out.push('"');
    for c in value.chars() {
        if push_short_escape(out, c) {
            continue;
        }
        match c as u32 {
            code @ (0..0x20 | 0x7f..=0x9f) => out.push_str(&format!("\\x{code:02x}")),
            _ => out.push(c),
        }
    }
    out.push('"');
}

/// The escapes a double-quoted YAML scalar and a JSON string share (`\\`, `\"`, `\b`, `\f`,
/// `\n`, `\r`, `\t`); false when `c` has none.
fn push_short_escape(out: &mut String, c: char) -> bool {
    let escape = match c {
        '\\' => "\\\\",
        '"' => "\\\"",
        '\u{8}' => "\\b",
        '\u{c}' => "\\f",
        '\n' => "\\n",
        '\r' => "\\r",
        '\t' => "\\t",
        _ => return false,
    };
    out.push_str(escape);
    true
}

/// A name as `JSON.stringify` writes it.
pub fn write_json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        if push_short_escape(out, c) {
            continue;
        }
        match c as u32 {
            code @ 0..0x20 => out.push_str(&format!("\\u{code:04x}")),
            _ => out.push(c),
        }
    }
    out.push('"');
}

/// Reads a double-quoted string at the start of `s` (which starts with `"`): the decoded
/// content and the rest after the closing quote. Understands JSON and YAML escapes.
pub fn read_double_quoted(s: &str) -> Option<(Cow<'_, str>, &str)> {
    let inner = s.strip_prefix('"')?;
    let bytes = inner.as_bytes();
    let mut k = 0;
    let mut escaped = false;
    while let Some(&b) = bytes.get(k) {
        match b {
            b'\\' => {
                escaped = true;
                k += 2;
            }
            b'"' => {
                let raw = inner.get(..k)?;
                let rest = inner.get(k + 1..)?;
                let text = if escaped {
                    Cow::Owned(unescape_double(raw)?)
                } else {
                    Cow::Borrowed(raw)
                };
                return Some((text, rest));
            }
            _ => k += 1,
        }
    }
    None
}

fn unescape_double(raw: &str) -> Option<String> {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next()? {
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'b' => out.push('\u{8}'),
            'f' => out.push('\u{c}'),
            '0' => out.push('\0'),
            '/' => out.push('/'),
            'x' => {
                let hex: String = chars.by_ref().take(2).collect();
                out.push(char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?);
            }
            'u' => {
                let hex: String = chars.by_ref().take(4).collect();
                let unit = u32::from_str_radix(&hex, 16).ok()?;
                if (0xd800..0xdc00).contains(&unit) {
                    // A surrogate pair: `\uD83D\uDE00`.
                    let rest: String = chars.by_ref().take(6).collect();
                    let low = rest
                        .strip_prefix("\\u")
                        .and_then(|h| u32::from_str_radix(h, 16).ok())?;
                    let code = 0x10000 + ((unit - 0xd800) << 10) + (low.checked_sub(0xdc00)?);
                    out.push(char::from_u32(code)?);
                } else {
                    out.push(char::from_u32(unit)?);
                }
            }
            other => out.push(other),
        }
    }
    Some(out)
}

/// Reads a single-quoted string at the start of `s` (which starts with `'`): the content
/// (`''` read as `'`) and the rest after the closing quote.
pub fn read_single_quoted(s: &str) -> Option<(Cow<'_, str>, &str)> {
    let inner = s.strip_prefix('\'')?;
    let bytes = inner.as_bytes();
    let mut k = 0;
    let mut doubled = false;
    while let Some(&b) = bytes.get(k) {
        if b == b'\'' {
            if bytes.get(k + 1) == Some(&b'\'') {
                doubled = true;
                k += 2;
                continue;
            }
            let raw = inner.get(..k)?;
            let rest = inner.get(k + 1..)?;
            let text = if doubled {
                Cow::Owned(raw.replace("''", "'"))
            } else {
                Cow::Borrowed(raw)
            };
            return Some((text, rest));
        }
        k += 1;
    }
    None
}

/// A scalar value after `: `: quoted or plain.
pub fn read_value(s: &str) -> Cow<'_, str> {
    if s.starts_with('"') {
        if let Some((v, rest)) = read_double_quoted(s) {
            if rest.is_empty() {
                return v;
            }
        }
    } else if s.starts_with('\'') {
        if let Some((v, rest)) = read_single_quoted(s) {
            if rest.is_empty() {
                return v;
            }
        }
    }
    Cow::Borrowed(s)
}

/// A `[key=value]` (or `[key]`) attribute after a node's role and name.
pub(super) fn write_attr(out: &mut String, key: &str, value: Option<&str>) {
    out.push_str(" [");
    out.push_str(key);
    if let Some(v) = value {
        out.push('=');
        out.push_str(v);
    }
    out.push(']');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_follows_playwright() {
        for s in [
            "", " a", "-x", "a: b", "a:", "#x", "a #b", "12", "1e5", "0x1F", "yes", "{", "[a",
        ] {
            assert!(needs_quotes(s), "{s:?}");
        }
        for s in [
            "plain text",
            "http://x/y",
            "a-b",
            "1a",
            "a#b",
            "Free shipping ·",
            "e5",
        ] {
            assert!(!needs_quotes(s), "{s:?}");
        }
    }

    #[test]
    fn values_and_keys_round_trip() {
        for s in [
            "x",
            "a: \"b\"\n\\c\t",
            "'quoted' it's",
            "#main",
            "100",
            "\u{1}",
        ] {
            let mut v = String::new();
            write_value(&mut v, s);
            assert_eq!(read_value(&v), s, "{v}");
            let mut k = String::new();
            write_key(&mut k, s);
            let back = if k.starts_with('\'') {
                read_single_quoted(&k).map(|(t, _)| t.into_owned())
            } else {
                Some(k.clone())
            };
            assert_eq!(back.as_deref(), Some(s), "{k}");
            let mut j = String::new();
            write_json_string(&mut j, s);
            assert_eq!(
                read_double_quoted(&j)
                    .map(|(t, _)| t.into_owned())
                    .as_deref(),
                Some(s)
            );
        }
    }
}
