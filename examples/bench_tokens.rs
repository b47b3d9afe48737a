//! Token estimate throughput (a benchmark, not a test): `TokenCount` against the byte-by-byte
//! count it replaced, in the same run.
//!
//!     cargo run --release --example bench_tokens -- [CORPUS_DIR] [--rounds N]
//!
//! Texts: every corpus file (`.json`, `.jsonl`, `.txt`, `.md`) as it is, and the text blocks of
//! each tool result. The count before is a frozen copy here (the tests of `src/tokens.rs` hold
//! their own oracle); before timing, every text is checked to count the same tokens both ways
//! (the tests compare the thousandths). Both are timed over all texts, whole, in the renderer's
//! 4096-byte pieces and in 16-byte pieces (serde_json writing into a count gives small ones),
//! alternating round by round, each keeping its fastest round (the load of a shared machine
//! comes and goes); MB/s move with the machine, the ratio is what holds.

#[path = "support/corpus.rs"]
mod corpus;

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Instant;

use mcp_snapshot_filter::tokens::TokenCount;

fn main() {
    let mut dir: Option<PathBuf> = None;
    let mut rounds = 15;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--rounds" => rounds = args.next().and_then(|v| v.parse().ok()).unwrap_or(rounds),
            _ => dir = Some(PathBuf::from(arg)),
        }
    }
    let dir = dir
        .or_else(|| std::env::var_os("MCP_CORPUS_DIR").map(PathBuf::from))
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus"));
    let texts = corpus_texts(&dir);
    if texts.is_empty() {
        eprintln!("bench_tokens: no corpus texts under {}", dir.display());
        std::process::exit(1);
    }
    for text in &texts {
        let (before, after) = (before::tokens(text, text.len()), tokens(text, text.len()));
        assert_eq!(
            before,
            after,
            "the counts differ on a text of {} bytes",
            text.len()
        );
    }
    let bytes: usize = texts.iter().map(Vec::len).sum();
    println!(
        "{} texts, {:.1} MB, best of {rounds} rounds, before and after alternating",
        texts.len(),
        bytes as f64 / 1e6
    );
    let ways = [
        ("whole", usize::MAX),
        ("in 4096-byte pieces", 4096),
        ("in 16-byte pieces", 16),
    ];
    for (what, piece) in ways {
        let (mut before_secs, mut after_secs) = (f64::MAX, f64::MAX);
        for _ in 0..rounds {
            let start = Instant::now();
            for text in &texts {
                black_box(before::tokens(black_box(text), piece));
            }
            before_secs = before_secs.min(start.elapsed().as_secs_f64());
            let start = Instant::now();
            for text in &texts {
                black_box(tokens(black_box(text), piece));
            }
            after_secs = after_secs.min(start.elapsed().as_secs_f64());
        }
        let mb = |secs: f64| bytes as f64 / 1e6 / secs;
        println!(
            "{what}: before {:.0} MB/s, after {:.0} MB/s: {:.2}x",
            mb(before_secs),
            mb(after_secs),
            before_secs / after_secs
        );
    }
}

/// The tokens `TokenCount` counts of `text` fed in pieces of `piece` bytes.
fn tokens(text: &[u8], piece: usize) -> usize {
    let mut count = TokenCount::default();
    for part in text.chunks(piece.max(1)) {
        count.add(part);
    }
    count.tokens()
}

/// Every corpus file as it is, and the text blocks of its tool result.
fn corpus_texts(dir: &Path) -> Vec<Vec<u8>> {
    let mut texts = Vec::new();
    for path in corpus::files_under(dir, &["json", "jsonl", "txt", "md"]) {
        let Ok(bytes) = std::fs::read(&path) else {
            continue;
        };
        if let Ok(doc) = serde_json::from_slice::<serde_json::Value>(&bytes) {
            let blocks = doc.pointer("/result/content").and_then(|c| c.as_array());
            for block in blocks.into_iter().flatten() {
                if let Some(text) = block.get("text").and_then(|t| t.as_str()) {
                    texts.push(text.as_bytes().to_vec());
                }
            }
        }
        texts.push(bytes);
    }
    texts
}

/// The estimate as `src/tokens.rs` counted it up to 21a9165: byte by byte through the tables,
/// the class before and the letter run carried from one byte to the next. Its weights are a
/// copy; `main` stops if they no longer agree with the crate's.
mod before {
    const WORD: u64 = 1219;
    const LETTER: u64 = 31;
    const LONG_LETTER: u64 = 600;
    const LONG_RUN: u32 = 12;
    const CAMEL: u64 = 1815;
    const DIGIT_RUN: u64 = 1250;
    const DIGIT: u64 = 334;
    const PUNCT: u64 = 191;
    const PUNCT_RUN: u64 = 366;
    const BACKSLASH: u64 = 650;
    const NEWLINE: u64 = 1502;
    const EXTRA_SPACE: u64 = 51;
    const CONTROL: u64 = 1000;
    const CONTROL_IN_RUN: u64 = 100;
    const NON_ASCII: u64 = 2078;
    const NON_ASCII_3: u64 = 3000;
    const NON_ASCII_4: u64 = 4000;

    const OTHER: u8 = 0;
    const LOWER: u8 = 1;
    const UPPER: u8 = 2;
    const DIGIT_CLASS: u8 = 3;
    const SPACE: u8 = 4;
    const PUNCT_CLASS: u8 = 5;
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
                t[prev][b] = weight(prev as u8, b as u8) as u16;
                b += 1;
            }
            prev += 1;
        }
        t
    };

    pub struct TokenCount {
        milli: u64,
        prev: usize,
        run: u32,
    }

    impl TokenCount {
        #[inline]
        pub fn add(&mut self, bytes: &[u8]) {
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
    }

    pub fn tokens(text: &[u8], piece: usize) -> usize {
        let mut count = TokenCount {
            milli: 0,
            prev: usize::from(OTHER),
            run: 0,
        };
        for part in text.chunks(piece.max(1)) {
            count.add(part);
        }
        count.milli.div_ceil(1000) as usize
    }
}
