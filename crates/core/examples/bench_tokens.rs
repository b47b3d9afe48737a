//! Token estimate throughput (a benchmark, not a test): `TokenCount` against the byte-by-byte
//! count it replaced, in the same run.
//!
//!     cargo run --release --example bench_tokens -- [CORPUS_DIR] [--rounds N]
//!
//! Texts: every corpus file (`.json`, `.jsonl`, `.txt`, `.md`) as it is, and the text blocks of
//! each tool result. The count before is `TokenCount::add_bytewise`, byte by byte as the count
//! went before it took blocks (it still counts pieces up to a block); before timing, every text
//! is checked to count the same tokens both ways (the tests compare the thousandths). Both are
//! timed over all texts, whole, in the renderer's 4096-byte pieces and in 16-byte pieces
//! (serde_json writing into a count gives small ones), alternating round by round, each keeping
//! its fastest round (the load of a shared machine comes and goes); MB/s move with the machine,
//! the ratio is what holds.

#[path = "support/corpus.rs"]
mod corpus;

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Instant;

use mcp_snapshot_filter_core::tokens::TokenCount;

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
        .unwrap_or_else(|| corpus::repo_root().join("../shared/corpus"));
    let texts = corpus_texts(&dir);
    if texts.is_empty() {
        eprintln!("bench_tokens: no corpus texts under {}", dir.display());
        std::process::exit(1);
    }
    for text in &texts {
        let (before, after) = (tokens_bytewise(text, text.len()), tokens(text, text.len()));
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
                black_box(tokens_bytewise(black_box(text), piece));
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
    count_with(text, piece, TokenCount::add)
}

/// `tokens` counted byte by byte (`TokenCount::add_bytewise`), as the count went before it took
/// blocks.
fn tokens_bytewise(text: &[u8], piece: usize) -> usize {
    count_with(text, piece, TokenCount::add_bytewise)
}

/// The tokens of `text` fed to `add` in pieces of `piece` bytes.
fn count_with(text: &[u8], piece: usize, add: fn(&mut TokenCount, &[u8])) -> usize {
    let mut count = TokenCount::default();
    for part in text.chunks(piece.max(1)) {
        add(&mut count, part);
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
