//! Text between UTF-8 (the core's `str`) and UTF-16 (a JS string's code units), for the
//! binding: V8 converts either way with a scalar loop, and on the non-ASCII text of real pages
//! that made crossing into and out of native code cost a quarter of a light snapshot filter.
//! Both directions find stretches of ASCII a block at a time and convert them in loops the
//! compiler vectorises; only the other characters are converted one by one.

/// Units of a block checked at once for ASCII.
const BLOCK: usize = 32;

/// Whether every unit of `block` is ASCII, in a loop the compiler vectorises (no early exit).
fn all_ascii(block: &[u16]) -> bool {
    block.iter().fold(0, |acc, &u| acc | u) < 0x80
}

/// UTF-16 `units` as UTF-8: what `char::decode_utf16` yields, a lone surrogate read as U+FFFD
/// (as V8 writes one).
pub fn to_utf8(units: &[u16]) -> String {
    let mut out = String::with_capacity(units.len());
    let mut at = 0;
    while at < units.len() {
        let mut end = at;
        while units.get(end..end + BLOCK).is_some_and(all_ascii) {
            end += BLOCK;
        }
        while units.get(end).is_some_and(|&u| u < 0x80) {
            end += 1;
        }
        let ascii = units.get(at..end).unwrap_or_default();
        // SAFETY: every unit of `ascii` is below 0x80, so each byte pushed is an ASCII
        // character: the String stays UTF-8.
        unsafe { out.as_mut_vec() }.extend(ascii.iter().map(|&u| u as u8));
        let rest = units.get(end..).unwrap_or_default();
        let Some(decoded) = char::decode_utf16(rest.iter().copied()).next() else {
            break;
        };
        // A lone surrogate is one unit; a character is one or two.
        let (c, len) = decoded.map_or((char::REPLACEMENT_CHARACTER, 1), |c| (c, c.len_utf16()));
        out.push(c);
        at = end + len;
    }
    out
}

/// `text` as UTF-16 code units: what `str::encode_utf16` yields.
pub fn from_utf8(text: &str) -> Vec<u16> {
    let bytes = text.as_bytes();
    let mut units = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let mut end = at;
        while bytes.get(end..end + BLOCK).is_some_and(<[u8]>::is_ascii) {
            end += BLOCK;
        }
        while bytes.get(end).is_some_and(u8::is_ascii) {
            end += 1;
        }
        let ascii = bytes.get(at..end).unwrap_or_default();
        units.extend(ascii.iter().map(|&b| u16::from(b)));
        // An ASCII byte ends a character: one that is not ASCII starts at `end`.
        let Some(c) = text.get(end..).and_then(|rest| rest.chars().next()) else {
            break;
        };
        units.extend_from_slice(c.encode_utf16(&mut [0; 2]));
        at = end + c.len_utf8();
    }
    units
}

/// JSON text with every `\uXXXX` escape of a lone surrogate written `\uFFFD` (same length, so
/// every offset into the text stays valid): read as U+FFFD, as `to_utf8` reads one. A JS string
/// may hold a lone surrogate (a page's `aria-label="\uD800"`, `JSON.stringify` escapes it), no
/// UTF-8 string can, and serde_json refuses to read one into a `String`: one such name made the
/// whole result unreadable, and the filter forwarded it whole, past every bound.
pub fn json_lone_surrogates_replaced(json: &str) -> std::borrow::Cow<'_, str> {
    use std::borrow::Cow;
    let bytes = json.as_bytes();
    let unit_at = |at: usize| -> Option<u32> {
        let hex = bytes.get(at..at + 6)?;
        if hex[0] != b'\\' || hex[1] != b'u' {
            return None;
        }
        let digits = std::str::from_utf8(&hex[2..]).ok()?;
        if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        u32::from_str_radix(digits, 16).ok()
    };
    let mut out: Option<Vec<u8>> = None;
    let mut at = 0;
    while let Some(found) = bytes
        .get(at..)
        .and_then(|rest| rest.iter().position(|&b| b == b'\\'))
    {
        let start = at + found;
        // Any escape is at least two bytes: `\\` never starts another one.
        at = start + 2;
        let Some(unit) = unit_at(start) else {
            continue;
        };
        at = start + 6;
        let lone = match unit {
            0xD800..=0xDBFF => match unit_at(start + 6) {
                Some(0xDC00..=0xDFFF) => {
                    at = start + 12;
                    false
                }
                _ => true,
            },
            0xDC00..=0xDFFF => true,
            _ => false,
        };
        if lone {
            let out = out.get_or_insert_with(|| bytes.to_vec());
            out[start..start + 6].copy_from_slice(b"\\uFFFD");
        }
    }
    match out {
        // Only six ASCII bytes were replaced by six ASCII bytes: still UTF-8.
        Some(out) => String::from_utf8(out).map_or(Cow::Borrowed(json), Cow::Owned),
        None => Cow::Borrowed(json),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::XorShift;

    #[test]
    fn lone_surrogate_escapes_read_as_the_replacement_character() {
        let cases = [
            (r#"{"a":"x\ud800y"}"#, r#"{"a":"x\uFFFDy"}"#),
            (r#"{"a":"\uDFFF"}"#, r#"{"a":"\uFFFD"}"#),
            // A high surrogate before anything but a low one, twice in a row, at the end.
            (r#""\ud800\ud800\u0041""#, r#""\uFFFD\uFFFD\u0041""#),
            (r#""\udbff""#, r#""\uFFFD""#),
        ];
        for (json, want) in cases {
            assert_eq!(json_lone_surrogates_replaced(json), want, "{json}");
            let read: serde_json::Value =
                serde_json::from_str(&json_lone_surrogates_replaced(json)).unwrap();
            assert!(read.to_string().contains('\u{FFFD}'), "{json}");
            assert!(
                serde_json::from_str::<serde_json::Value>(json).is_err(),
                "{json}"
            );
        }
        // Pairs, escaped backslashes before `u`, other escapes and short tails stay as they are.
        for json in [
            r#""\ud83d\ude00""#,
            r#""\\ud800""#,
            r#""\\\\ud800""#,
            r#""\u00e9\n\"\\""#,
            r#""\ud8""#,
            r#""\u+800""#,
            "\"plain\"",
        ] {
            assert!(
                matches!(
                    json_lone_surrogates_replaced(json),
                    std::borrow::Cow::Borrowed(_)
                ),
                "{json}"
            );
        }
    }

    #[test]
    fn both_ways_agree_with_std_at_every_block_edge() {
        let long_ascii = "a".repeat(100);
        let mut texts = vec![
            String::new(),
            "x".to_string(),
            long_ascii.clone(),
            format!("{long_ascii}é"),
            format!("é{long_ascii}—{long_ascii}😀"),
            "日本語のテキスト 😀😀 mixed with ascii and ümlauts".repeat(5),
        ];
        // A character of each width just before, at and after a block's end.
        for c in ["é", "—", "😀", "\u{10FFFF}"] {
            for n in BLOCK - 2..=BLOCK + 2 {
                texts.push(format!("{}{c}\n", "z".repeat(n)));
                texts.push(format!("{}{c}", "z".repeat(n)));
            }
        }
        for text in texts {
            let units = from_utf8(&text);
            assert_eq!(units, text.encode_utf16().collect::<Vec<_>>(), "{text}");
            assert_eq!(to_utf8(&units), text);
        }
    }

    #[test]
    fn random_text_round_trips() {
        const PIECES: &[&str] = &[
            "a",
            "Zz",
            " ",
            "\n",
            "\0",
            "é",
            "ÿ",
            "—",
            "€",
            "日本",
            "😀",
            "\u{10FFFF}",
        ];
        let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
        for _ in 0..2000 {
            let len = rng.below(120);
            let text: String = (0..len)
                .map(|_| {
                    // Mostly ASCII, as pages are, in runs long enough to fill blocks.
                    if rng.below(4) == 0 {
                        rng.pick(PIECES)
                    } else {
                        "abcdefgh"
                    }
                })
                .collect();
            let units = from_utf8(&text);
            assert_eq!(units, text.encode_utf16().collect::<Vec<_>>());
            assert_eq!(to_utf8(&units), text);
        }
    }

    #[test]
    fn lone_surrogates_read_as_replacement_characters() {
        let mut units: Vec<u16> = "a".repeat(40).encode_utf16().collect();
        units.push(0xD800);
        units.extend("b😀".encode_utf16());
        units.push(0xDC00);
        assert_eq!(
            to_utf8(&units),
            format!("{}\u{FFFD}b😀\u{FFFD}", "a".repeat(40))
        );
        assert_eq!(to_utf8(&[0xDFFF, 0xD800]), "\u{FFFD}\u{FFFD}");
        // A high surrogate last, after a block of ASCII.
        let mut units: Vec<u16> = "b".repeat(BLOCK).encode_utf16().collect();
        units.push(0xDBFF);
        assert_eq!(to_utf8(&units), format!("{}\u{FFFD}", "b".repeat(BLOCK)));
    }
}
