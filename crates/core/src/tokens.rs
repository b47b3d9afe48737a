//! The one token estimate of the project: the stats line, the session summary, `measure`
//! without gpt-tokenizer, the demo and the ledger all count with `estimate_tokens`.
//!
//! It is a linear model over byte classes, fitted to o200k_base counts of the corpus (748
//! distinct texts: raw and filtered tool results at every level, `structuredContent`, list
//! results raw and compressed; `node bench/tokens.js` reports the error) and then scaled up
//! until no corpus text of 50 tokens or more was under-estimated, with floors where a payload
//! costs more than the fit says (`node bench/tokens.js --adversarial`; the node test
//! `__test__/tokens.test.js` holds them against o200k):
//! - a letter run past its 12th letter (since its start or a camelCase joint) costs 0.6 a
//!   letter more: o200k splits `aaaa…` every 8 letters, `AAAA…` of a blank PNG's base64 too,
//!   and random letters every two;
//! - a digit costs a third of a token (o200k splits digit runs into groups of three);
//! - a non-ASCII character costs a token per UTF-8 byte, 2.078 at two bytes: no o200k token is
//!   shorter than a byte, and a rare character of CJK Extension B, a private use plane or an
//!   emoji sequence's joiner is that many alone;
//! - a control character a token; a tab or `\r` a token unless after one of them or a newline;
//!   a backslash (a JSON escape) about one with the character it escapes.
//!
//! On the corpus it never counts fewer tokens than o200k; it counts a median 18.6% more (5th–95th
//! percentile +9.3% to +28.5%). A budget built on it errs on the safe side.
//!
//! `TokenCount::add` counts 64 bytes a block, no allocation: each byte's weight is a table
//! look-up by the class of the byte before, summed with no other state carried from byte to
//! byte; the letters past a run's 12th are found from bit masks of the block, first of its
//! letters (a block without 12 in a row has none, and most have none) and only then of where
//! a run goes on. Pieces up to a block long, as the writers that count what they write give,
//! go byte by byte with the run carried. `cargo run --release --example bench_tokens` times
//! it against the byte-by-byte count of every byte it replaced.

/// Weights in thousandths of a token, per counted feature.
/// A run of ASCII letters (a word, or the part of one before a camelCase joint) and each letter.
const WORD: u64 = 1219;
const LETTER: u64 = 31;
/// Each letter of a run past its `LONG_RUN`th (a run restarts at a camelCase joint).
const LONG_LETTER: u64 = 600;
const LONG_RUN: u32 = 12;
/// A lowercase letter followed by an uppercase one (`getElement`: o200k splits there).
const CAMEL: u64 = 1815;
/// A run of digits and each digit (o200k splits runs into groups of three).
const DIGIT_RUN: u64 = 1250;
const DIGIT: u64 = 334;
/// Each ASCII punctuation character, each run of them, and a backslash (JSON escapes).
const PUNCT: u64 = 191;
const PUNCT_RUN: u64 = 366;
const BACKSLASH: u64 = 650;
const NEWLINE: u64 = 1502;
/// A space after a space (indentation).
const EXTRA_SPACE: u64 = 51;
/// A tab or carriage return at the start of a run of them (after a newline, or inside the run:
/// `CONTROL_IN_RUN`), and any other control character.
const CONTROL: u64 = 1000;
const CONTROL_IN_RUN: u64 = 100;
/// The first byte of a non-ASCII character of two bytes; of three and four: a token a byte.
const NON_ASCII: u64 = 2078;
const NON_ASCII_3: u64 = 3000;
const NON_ASCII_4: u64 = 4000;

// Every feature but the long letter run is a property of one byte and the class of the byte
// before it: `WEIGHT[class of the previous byte][byte]`; the scan carries that class and the
// length of the letter run.
const OTHER: u8 = 0;
const LOWER: u8 = 1;
const UPPER: u8 = 2;
const DIGIT_CLASS: u8 = 3;
const SPACE: u8 = 4;
const PUNCT_CLASS: u8 = 5;
/// Newline, tab, carriage return and the other control characters.
const CONTROL_CLASS: u8 = 6;
const CLASSES: usize = 7;

const fn class_of(b: u8) -> u8 {
    match b {
        b'a'..=b'z' => LOWER,
        b'A'..=b'Z' => UPPER,
        b'0'..=b'9' => DIGIT_CLASS,
        b' ' => SPACE,
        b'!'..=b'~' => PUNCT_CLASS,
        0..=0x1F | 0x7F => CONTROL_CLASS,
        _ => OTHER,
    }
}

/// Weight of byte `b` after a byte of class `prev`.
const fn weight(prev: u8, b: u8) -> u64 {
    let in_word = prev == LOWER || prev == UPPER;
    match class_of(b) {
        LOWER => LETTER + if in_word { 0 } else { WORD },
        UPPER => {
            LETTER
                + if prev == LOWER {
                    CAMEL
                } else if in_word {
                    0
                } else {
                    WORD
                }
        }
        DIGIT_CLASS => DIGIT + if prev == DIGIT_CLASS { 0 } else { DIGIT_RUN },
        SPACE => {
            if prev == SPACE {
                EXTRA_SPACE
            } else {
                0
            }
        }
        PUNCT_CLASS => {
            PUNCT
                + if b == b'\\' { BACKSLASH } else { 0 }
                + if prev == PUNCT_CLASS { 0 } else { PUNCT_RUN }
        }
        CONTROL_CLASS => match b {
            b'\n' => NEWLINE,
            b'\t' | b'\r' if prev == CONTROL_CLASS => CONTROL_IN_RUN,
            _ => CONTROL,
        },
        _ => match b {
            // Continuation bytes (0x80..=0xBF) add nothing.
            0xC0..=0xDF => NON_ASCII,
            0xE0..=0xEF => NON_ASCII_3,
            0xF0..=0xFF => NON_ASCII_4,
            _ => 0,
        },
    }
}

static CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = class_of(b as u8);
        b += 1;
    }
    t
};

static WEIGHT: [[u16; 256]; CLASSES] = {
    let mut t = [[0u16; 256]; CLASSES];
    let mut prev = 0;
    while prev < CLASSES {
        let mut b = 0;
        while b < 256 {
            let w = weight(prev as u8, b as u8);
            assert!(w <= u16::MAX as u64);
            t[prev][b] = w as u16;
            b += 1;
        }
        prev += 1;
    }
    t
};

/// Estimated o200k tokens of `text`: never fewer than o200k counted on any corpus text of 50
/// tokens or more, usually ~18% more, and not fewer on long runs, base64, hex, digits,
/// characters of any plane or emoji sequences (the module doc). Linear in the length; 0 for "".
pub fn estimate_tokens(text: &str) -> usize {
    let mut count = TokenCount::default();
    count.add(text.as_bytes());
    count.tokens()
}

/// `estimate_tokens` of a text fed in pieces (cut anywhere, inside a character too): the same
/// count as of the pieces joined. A renderer that gives up once its output is over the budget
/// counts what it wrote so far with it.
#[derive(Debug, Clone, Copy)]
pub struct TokenCount {
    milli: u64,
    prev: usize,
    run: u32,
}

impl Default for TokenCount {
    fn default() -> Self {
        TokenCount {
            milli: 0,
            prev: OTHER as usize,
            run: 0,
        }
    }
}

/// Bytes a block of `TokenCount::add` looks at together: one bit each in a `u64` mask.
const BLOCK: usize = 64;

impl TokenCount {
    #[inline]
    pub fn add(&mut self, bytes: &[u8]) {
        // A piece up to a block long (serde_json writing a value gives many) goes byte by
        // byte, inline in the writer as before.
        if bytes.len() <= BLOCK {
            self.add_bytewise(bytes);
        } else {
            self.add_blocks(bytes);
        }
    }

    /// A piece of more than a block: its first byte weighs by the state carried, the rest
    /// block by block.
    #[inline(never)]
    fn add_blocks(&mut self, bytes: &[u8]) {
        let Some((&first, rest)) = bytes.split_first() else {
            return;
        };
        self.add_bytewise(&[first]);
        // Every other byte weighs by the byte before it, in blocks of `BLOCK` (each window
        // holds its block and the byte before), the bytes after the last block one by one.
        let body = rest.len() / BLOCK * BLOCK;
        let in_word = matches!(self.prev as u8, LOWER | UPPER);
        let run = if in_word { self.run } else { 0 };
        // Before the first block, as the masks' top bits: the first byte's letter (and
        // perhaps letters before it: the test only has to miss no run), and the run's
        // continuations (a run of `run` letters continues `run - 1` times).
        let mut letters_before: u64 = if in_word { !0 } else { 0 };
        let continued = run.saturating_sub(1).min(LONG_RUN - 1);
        let mut continues_before = (!0u64).checked_shl(64 - continued).unwrap_or(0);
        // Whether `continues_before` is known: a block's continuations are found only when
        // its letters could hold a long run, and the block before's then if they were not.
        let mut known = true;
        let mut window_before: Option<&[u8; BLOCK + 1]> = None;
        let mut milli = self.milli;
        for window in bytes[..=body].windows(BLOCK + 1).step_by(BLOCK) {
            let Ok(window) = <&[u8; BLOCK + 1]>::try_from(window) else {
                continue;
            };
            milli += block_weights(window);
            let letters = mask(window, |_, b| is_letter(b));
            if ends_of_12(letters, letters_before) != 0 {
                if let (false, Some(before)) = (known, window_before) {
                    continues_before = mask(before, continues);
                }
                let continuations = mask(window, continues);
                let long = ends_of_12(continuations, continues_before);
                milli += LONG_LETTER * u64::from(long.count_ones());
                continues_before = continuations;
                known = true;
            } else {
                known = false;
            }
            letters_before = letters;
            window_before = Some(window);
        }
        self.milli = milli;
        self.prev = usize::from(CLASS[usize::from(bytes[body])]);
        self.run = run_ending(&bytes[..=body]);
        self.add_bytewise(&bytes[body + 1..]);
    }

    /// `add` one byte after another, carrying the class before and the letter run: as the count
    /// went before it took blocks, and still goes for pieces up to a block long. The reference
    /// the blocks agree with (the tests), and what `bench_tokens` times them against.
    #[inline]
    pub fn add_bytewise(&mut self, bytes: &[u8]) {
        let (mut milli, mut prev, mut run) = (self.milli, self.prev, self.run);
        for &b in bytes {
            milli += u64::from(WEIGHT[prev][b as usize]);
            let class = CLASS[b as usize];
            if class == LOWER || class == UPPER {
                let joint = prev == LOWER as usize && class == UPPER;
                run = if prev == LOWER as usize || prev == UPPER as usize {
                    if joint {
                        1
                    } else {
                        run + 1
                    }
                } else {
                    1
                };
                if run > LONG_RUN {
                    milli += LONG_LETTER;
                }
            }
            prev = usize::from(class);
        }
        (self.milli, self.prev, self.run) = (milli, prev, run);
    }

    /// The estimate of everything added.
    pub fn tokens(&self) -> usize {
        self.milli.div_ceil(1000) as usize
    }
}

/// An ASCII letter (`b | 0x20` folds the upper case onto the lower).
#[inline(always)]
fn is_letter(b: u8) -> bool {
    (b | 0x20).wrapping_sub(b'a') < 26
}

/// Whether letter `b` after `p` goes on with `p`'s run: both letters and not a camelCase
/// joint (0x20 is set in a lower case letter only).
#[inline(always)]
fn continues(p: u8, b: u8) -> bool {
    is_letter(p) & is_letter(b) & (p & !b & 0x20 == 0)
}

/// The weights of a window's block, each byte after the one before: table look-ups with no
/// state carried but the sum.
#[inline(always)]
fn block_weights(window: &[u8; BLOCK + 1]) -> u64 {
    let mut milli = 0u64;
    let mut prev = usize::from(CLASS[usize::from(window[0])]);
    for &b in &window[1..] {
        milli += u64::from(WEIGHT[prev][usize::from(b)]);
        prev = usize::from(CLASS[usize::from(b)]);
    }
    milli
}

/// Bit `j`: `test(byte before, byte)` of the block's byte `j`. The tests are computed into an
/// array (a loop that vectorises) and gathered eight at a time by a multiplication: byte `k`
/// of a word, 0 or 1, lands on bit `56 + k` and no two products overlap.
#[inline(always)]
fn mask(window: &[u8; BLOCK + 1], test: impl Fn(u8, u8) -> bool) -> u64 {
    let mut flags = [0u8; BLOCK];
    // Indexed, not `zip(windows(2))`: that form did not vectorise.
    for j in 0..BLOCK {
        flags[j] = u8::from(test(window[j], window[j + 1]));
    }
    let (words, _) = flags.as_chunks::<8>();
    words.iter().enumerate().fold(0u64, |bits, (k, word)| {
        let gathered = u64::from_le_bytes(*word).wrapping_mul(0x0102_0408_1020_4080) >> 56;
        bits | gathered << (8 * k)
    })
}

/// Bit `j`: bits `j - 11..=j` of `bits` all set, the bits of `before` preceding bit 0. Of the
/// continuations, the letters whose run is past its `LONG_RUN`th (bit `j` continues the run
/// and so do the 11 before); of the letters, a superset of those.
#[inline(always)]
fn ends_of_12(bits: u64, before: u64) -> u64 {
    const _: () = assert!(LONG_RUN == 12, "ends_of_12 checks 8 + 4 bits");
    let x = (u128::from(bits) << 64) | u128::from(before);
    let two = x & (x << 1);
    let four = two & (two << 2);
    let eight = four & (four << 4);
    ((eight & (four << 8)) >> 64) as u64
}

/// The letter run that ends the text (of more than `LONG_RUN` bytes), counted up to
/// `LONG_RUN` (the count goes on the same from there).
fn run_ending(text: &[u8]) -> u32 {
    if !text.last().is_some_and(|&b| is_letter(b)) {
        return 0;
    }
    let continued = text
        .windows(2)
        .rev()
        .take(LONG_RUN as usize - 1)
        .take_while(|pair| continues(pair[0], pair[1]))
        .count();
    1 + continued as u32
}

/// The most tokens a text's estimate can lose at a seam, where it follows other text instead
/// of starting one (or other text is put in it): only the byte after the seam weighs by what
/// is before it, and a letter run going on only adds. At most a word's or a digit run's start
/// (1.25); counted high.
pub const MAX_TOKENS_LOST_AT_SEAM: usize = 2;

/// Characters of `text` as a JS string counts them (UTF-16 code units): one per character, two
/// for a character of four UTF-8 bytes (a surrogate pair).
pub fn utf16_len(text: &str) -> usize {
    // A character is a byte that does not continue one (not 0x80..=0xBF), and one of four
    // bytes (led by 0xF0..) is two units: a count of bytes, summed in 16 bits per block (at
    // most two units a byte) so that it vectorises, where decoding each character did not.
    const BLOCK: usize = 8192;
    text.as_bytes()
        .chunks(BLOCK)
        .map(|block| {
            let units = block
                .iter()
                .map(|&b| u16::from((b as i8) >= -0x40) + u16::from(b >= 0xF0))
                .fold(0u16, u16::wrapping_add);
            usize::from(units)
        })
        .sum()
}

/// The most estimated tokens one UTF-16 code unit of text (a JS string's `length`) can cost: a
/// character of three UTF-8 bytes (3, one unit; four bytes cost 4 over two units). The proxy's
/// bin lets a result of a tool no filter knows cross into native code only when
/// `length × this` may exceed the budget.
pub const MAX_TOKENS_PER_UTF16_UNIT: f64 = 3.0;

/// The most estimated tokens one byte of text can cost (a camelCase joint, 1.846): a JSON text
/// of `n` bytes holds strings of at most `n × this` tokens (escapes only lengthen them).
pub const MAX_TOKENS_PER_BYTE: f64 = 1.846;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_words_numbers_punctuation_and_lines() {
        assert_eq!(estimate_tokens(""), 0);
        // 1 word + 5 letters = 1.374 -> 2
        assert_eq!(estimate_tokens("hello"), 2);
        // 2 words, 1 camel boundary, 10 letters
        assert_eq!(
            estimate_tokens("getElement"),
            (WORD + CAMEL + 10 * LETTER).div_ceil(1000) as usize
        );
        // one run of seven digits
        assert_eq!(
            estimate_tokens("1234567"),
            (DIGIT_RUN + 7 * DIGIT).div_ceil(1000) as usize
        );
        assert_eq!(
            estimate_tokens("\n\n"),
            (2 * NEWLINE).div_ceil(1000) as usize
        );
        assert_eq!(
            estimate_tokens("\\\""),
            (2 * PUNCT + BACKSLASH + PUNCT_RUN).div_ceil(1000) as usize
        );
        assert_eq!(estimate_tokens("é"), 3);
    }

    #[test]
    fn is_additive_up_to_rounding_and_monotone() {
        let a = "uid=1_2 button \"Save\"\n";
        let b = "  uid=1_3 link \"Home\" url=\"https://example.org/a/b\"\n";
        let joined = format!("{a}{b}");
        let sum = estimate_tokens(a) + estimate_tokens(b);
        let whole = estimate_tokens(&joined);
        assert!(whole <= sum && whole + 2 >= sum, "{whole} vs {sum}");
        assert!(estimate_tokens(&joined.repeat(10)) > estimate_tokens(&joined) * 9);
    }

    /// The byte count of UTF-16 units agrees with decoding: characters of one to four bytes,
    /// across the count's blocks.
    #[test]
    fn utf16_units_counted_from_bytes_are_those_of_the_characters() {
        let decoded = |t: &str| t.chars().map(char::len_utf16).sum::<usize>();
        for unit in [
            "a",
            "é",
            "€",
            "😀",
            "\u{7f}\u{80}\u{7ff}\u{800}\u{ffff}\u{10000}\u{10ffff}",
        ] {
            for repeat in [0, 1, 3, 8191, 8193, 20_000] {
                let text = unit.repeat(repeat);
                assert_eq!(utf16_len(&text), decoded(&text), "{unit:?} x {repeat}");
            }
        }
        assert_eq!(utf16_len("a😀"), 3);
    }

    /// The model written plainly, feature by feature: the table must agree with it.
    fn reference(text: &str) -> usize {
        #[derive(PartialEq, Clone, Copy)]
        enum C {
            Other,
            Lower,
            Upper,
            Digit,
            Space,
            Punct,
            Control,
        }
        let (mut milli, mut prev, mut run) = (0u64, C::Other, 0u32);
        for &b in text.as_bytes() {
            let c = match b {
                b'a'..=b'z' => C::Lower,
                b'A'..=b'Z' => C::Upper,
                b'0'..=b'9' => C::Digit,
                b' ' => C::Space,
                b'!'..=b'~' => C::Punct,
                0..=0x1F | 0x7F => C::Control,
                _ => C::Other,
            };
            let in_word = matches!(prev, C::Lower | C::Upper);
            match c {
                C::Lower | C::Upper => {
                    milli += LETTER;
                    let joint = c == C::Upper && prev == C::Lower;
                    if !in_word {
                        milli += WORD;
                        run = 1;
                    } else if joint {
                        milli += CAMEL;
                        run = 1;
                    } else {
                        run += 1;
                    }
                    if run > LONG_RUN {
                        milli += LONG_LETTER;
                    }
                }
                C::Digit => milli += DIGIT + if prev == C::Digit { 0 } else { DIGIT_RUN },
                C::Space if prev == C::Space => milli += EXTRA_SPACE,
                C::Space => {}
                C::Punct => {
                    milli += PUNCT + if b == b'\\' { BACKSLASH } else { 0 };
                    if prev != C::Punct {
                        milli += PUNCT_RUN;
                    }
                }
                C::Control if b == b'\n' => milli += NEWLINE,
                C::Control if (b == b'\t' || b == b'\r') && prev == C::Control => {
                    milli += CONTROL_IN_RUN
                }
                C::Control => milli += CONTROL,
                C::Other if b >= 0xF0 => milli += NON_ASCII_4,
                C::Other if b >= 0xE0 => milli += NON_ASCII_3,
                C::Other if b >= 0xC0 => milli += NON_ASCII,
                C::Other => {}
            }
            prev = c;
        }
        milli.div_ceil(1000) as usize
    }

    #[test]
    fn the_table_computes_the_plain_model() {
        let mut rng = crate::test_support::XorShift(0x5eed);
        let alphabet = [
            "a",
            "Z",
            "q",
            "0",
            "7",
            " ",
            "  ",
            "\n",
            "\t",
            "\r",
            "\u{1}",
            "\\",
            "\"",
            "{",
            "é",
            "€",
            "😀",
            "_",
            "-",
            "abcdefghijklmn",
            "ABCDEFGHIJKLMNOP",
        ];
        for _ in 0..2000 {
            let len = rng.below(60);
            let text: String = (0..len).map(|_| rng.pick(&alphabet)).collect();
            assert_eq!(estimate_tokens(&text), reference(&text), "{text:?}");
        }
        let snapshot = "uid=1_0 RootWebArea \"Café 2026\" url=\"http://127.0.0.1:8765/a?b=1234567\"\n  uid=1_1 button \"getElementById\"\n";
        assert_eq!(estimate_tokens(snapshot), reference(snapshot));
        // Longer texts, fed whole and in pieces cut anywhere (the renderer's output cap feeds
        // its count so): the letter run and the class before are carried across pieces.
        for _ in 0..2000 {
            let len = rng.below(120);
            let text: String = (0..len).map(|_| rng.pick(&alphabet)).collect();
            assert_eq!(estimate_tokens(&text), reference(&text), "{text:?}");
            let bytes = text.as_bytes();
            let mut count = TokenCount::default();
            let mut at = 0;
            while at < bytes.len() {
                let piece = (1 + rng.below(40) as usize).min(bytes.len() - at);
                count.add(&bytes[at..at + piece]);
                at += piece;
            }
            assert_eq!(count.tokens(), reference(&text), "{text:?} in pieces");
        }
    }

    /// `bytes` counted byte by byte (`add_bytewise`, the oracle) and by `add`, whole and cut at
    /// `cuts` (offsets, ascending, in range): the thousandths of a token, not only the rounded
    /// count, agree.
    fn assert_agrees_with_oracle(bytes: &[u8], cuts: &[usize], what: &str) {
        let mut oracle = TokenCount::default();
        oracle.add_bytewise(bytes);
        let mut whole = TokenCount::default();
        whole.add(bytes);
        assert_eq!(whole.milli, oracle.milli, "{what}: whole");
        let mut pieces = TokenCount::default();
        let mut at = 0;
        for &cut in cuts.iter().chain([&bytes.len()]) {
            pieces.add(&bytes[at..cut]);
            at = cut;
        }
        assert_eq!(pieces.milli, oracle.milli, "{what}: cut at {cuts:?}");
    }

    /// Random byte strings leaning to text: words, camelCase, letter runs of 11 to 14 and
    /// longer, digit runs, punctuation, backslashes, tabs, `\r`, newlines, UTF-8 of two to four
    /// bytes and any byte; lengths across several blocks (a block's start and end fall at every
    /// offset of them); fed whole and cut at random points, pieces a block long and longer
    /// among them.
    #[test]
    fn blocks_count_what_the_bytewise_oracle_counts() {
        let mut rng = crate::test_support::XorShift(0x70c3_b10c);
        let pieces = [
            "word",
            "the",
            "getElementById",
            "aB",
            "Ab",
            "AB",
            "ab",
            "xY",
            "12",
            "2026",
            "7",
            " ",
            "  ",
            "\n",
            "\t",
            "\r",
            "\r\n",
            "\\",
            "\\\"",
            "\"",
            "{",
            "}",
            ",",
            "_",
            "-",
            "/",
            ":",
            "é",
            "€",
            "😀",
            "𠀀",
            "\u{1}",
            "\u{7f}",
        ];
        let mut text = Vec::new();
        for round in 0..6000 {
            text.clear();
            let len = match round % 4 {
                0 => rng.below(2 * BLOCK as u64 + 8),
                1 => rng.below(6 * BLOCK as u64),
                _ => rng.below(20 * BLOCK as u64),
            } as usize;
            while text.len() < len {
                match rng.below(10) {
                    0 => text.push(rng.next() as u8),
                    1 | 2 => {
                        // A letter run around the long-run threshold, of one case or mixed.
                        let run = match rng.below(4) {
                            0 => 1 + rng.below(40),
                            _ => LONG_RUN as u64 - 1 + rng.below(4),
                        };
                        let case = rng.below(3);
                        for _ in 0..run {
                            let letter = b'a' + rng.below(26) as u8;
                            let upper = case == 1 || (case == 2 && rng.below(4) == 0);
                            text.push(if upper {
                                letter.to_ascii_uppercase()
                            } else {
                                letter
                            });
                        }
                    }
                    _ => text.extend_from_slice(rng.pick(&pieces).as_bytes()),
                }
            }
            let mut cuts: Vec<usize> = (0..rng.below(6))
                .map(|_| rng.below(text.len() as u64 + 1) as usize)
                .collect();
            cuts.sort_unstable();
            assert_agrees_with_oracle(&text, &cuts, &format!("round {round}"));
        }
    }

    /// A letter run of 11 to 14 letters (and one long one) ending at every offset around the
    /// first blocks' edges, after a text that leaves a run going, a camelCase joint or none,
    /// cut at every offset once.
    #[test]
    fn long_runs_across_block_edges_and_cuts_agree_with_the_oracle() {
        for lead in [
            "",
            "x",
            "  ",
            "abcdefghijk",
            "getElement",
            "ABCDEFGHIJKLMN",
            "1",
        ] {
            for run in [11, 12, 13, 14, 40] {
                for at in 0..3 * BLOCK + 2 {
                    let mut text = lead.as_bytes().to_vec();
                    text.resize(text.len() + at, b'.');
                    let letters = b"abcdefghijklmnopqrstuvwxyz";
                    text.extend(letters.iter().cycle().take(run));
                    text.extend_from_slice(b"Zz end");
                    assert_agrees_with_oracle(&text, &[], &format!("{lead:?} {run} at {at}"));
                    let cut = (at * 7 + run) % (text.len() + 1);
                    assert_agrees_with_oracle(&text, &[cut], &format!("{lead:?} {run} at {at}"));
                }
            }
        }
        // One byte at a time, then a block and more at once, after every piece length.
        let text = "uid=1_2 StaticText \"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ\"\n"
            .repeat(8);
        for first in 0..2 * BLOCK + 2 {
            assert_agrees_with_oracle(text.as_bytes(), &[first], &format!("after {first}"));
        }
    }

    /// Every text of the corpus when it is there (`MCP_CORPUS_DIR`): each file whole and each
    /// tool result's text blocks, whole and cut as the renderer's cap check and serde_json
    /// writing feed the count.
    #[test]
    fn corpus_texts_count_what_the_bytewise_oracle_counts() {
        let Some(dir) = crate::test_support::corpus_dir() else {
            return;
        };
        let files = crate::test_support::files_under(&dir, &["json", "jsonl", "txt", "md"]);
        assert!(!files.is_empty(), "no corpus texts under {}", dir.display());
        let mut rng = crate::test_support::XorShift(0xc0_4905);
        let mut texts = 0;
        for file in files {
            let Ok(bytes) = std::fs::read(&file) else {
                continue;
            };
            let blocks: Vec<String> = serde_json::from_slice::<serde_json::Value>(&bytes)
                .ok()
                .and_then(|v| v.pointer("/result/content").cloned())
                .and_then(|c| c.as_array().cloned())
                .unwrap_or_default()
                .iter()
                .filter_map(|b| b.get("text").and_then(|t| t.as_str()).map(str::to_owned))
                .collect();
            for text in std::iter::once(bytes.as_slice()).chain(blocks.iter().map(|b| b.as_bytes()))
            {
                let what = file.display().to_string();
                let strides: Vec<usize> = (4096..text.len()).step_by(4096).collect();
                assert_agrees_with_oracle(text, &strides, &what);
                let mut cuts: Vec<usize> = (0..rng.below(40))
                    .map(|_| rng.below(text.len() as u64 + 1) as usize)
                    .collect();
                cuts.sort_unstable();
                assert_agrees_with_oracle(text, &cuts, &what);
                texts += 1;
            }
        }
        assert!(texts > 300, "{texts} corpus texts");
    }

    #[test]
    fn the_estimate_never_costs_more_per_unit_or_byte_than_the_callers_assume() {
        for unit in [
            "aB", "1\n", "\n", "é,", "😀", "a\\", "!a", "1,", "€", "\u{1}", "\t", "a", "A", "𠀀",
        ] {
            let text = &unit.repeat(50);
            let units = text.encode_utf16().count() as f64;
            let tokens = estimate_tokens(text) as f64;
            assert!(tokens <= units * MAX_TOKENS_PER_UTF16_UNIT, "{text:?}");
            assert!(
                tokens <= text.len() as f64 * MAX_TOKENS_PER_BYTE,
                "{text:?}"
            );
        }
        // Every byte after every class, a letter run's floor included, within the bound.
        for row in WEIGHT.iter() {
            for (b, &w) in row.iter().enumerate() {
                let per_byte = match b {
                    0xC0..=0xDF => f64::from(w) / 2.0,
                    0xE0..=0xEF => f64::from(w) / 3.0,
                    0xF0..=0xFF => f64::from(w) / 4.0,
                    // The floor adds to a letter inside a run only.
                    _ if u64::from(w) == LETTER => (LETTER + LONG_LETTER) as f64,
                    _ => f64::from(w),
                };
                assert!(per_byte <= MAX_TOKENS_PER_BYTE * 1000.0, "byte {b:#x}");
            }
        }
    }

    #[test]
    fn long_runs_digits_and_wide_characters_cost_at_least_what_o200k_counts() {
        // o200k_base counts (gpt-tokenizer 3.4.0): `node bench/tokens.js --adversarial` prints
        // them for the same texts at 20,000 characters; these hold at any length.
        assert!(estimate_tokens(&"a".repeat(8000)) >= 1000);
        assert!(estimate_tokens(&"A".repeat(8000)) >= 1000);
        assert!(estimate_tokens(&"0".repeat(9000)) >= 3000);
        assert!(estimate_tokens(&"\u{20000}".repeat(1000)) >= 4000);
        assert!(estimate_tokens(&"\u{e000}".repeat(1000)) >= 3000);
        assert!(estimate_tokens(&"\u{1}".repeat(1000)) >= 1000);
        // Ordinary words and identifiers gain nothing from the long-run floor.
        assert_eq!(
            estimate_tokens("getElementsByClassName"),
            (WORD + 4 * CAMEL + 22 * LETTER).div_ceil(1000) as usize
        );
    }

    #[test]
    fn random_text_never_panics() {
        let text: String = (0u32..5000)
            .filter_map(|i| char::from_u32((i * 7919) % 0x3000))
            .collect();
        assert!(estimate_tokens(&text) > 0);
    }
}
