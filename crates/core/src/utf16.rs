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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::XorShift;

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
