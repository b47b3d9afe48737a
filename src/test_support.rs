//! Shared by the corpus-wide tests of every module.

use std::path::PathBuf;

/// The corpus of real responses (`$MCP_CORPUS_DIR`, else `../shared/corpus` beside the repo),
/// or `None` with a loud message when it is missing outside CI. Under CI a missing corpus
/// fails the test: it would otherwise pass without checking anything.
pub fn corpus_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("MCP_CORPUS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus"));
    if dir.join("chrome-devtools-mcp").is_dir() {
        return Some(dir);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "corpus not found at {} (set MCP_CORPUS_DIR)",
        dir.display()
    );
    eprintln!(
        "!!!!! SKIPPED: corpus not found at {} (set MCP_CORPUS_DIR) !!!!!",
        dir.display()
    );
    None
}

/// A tiny deterministic generator (xorshift) for the property tests: no crate needed, and the
/// same seed gives the same cases on every machine.
pub struct XorShift(pub u64);

impl XorShift {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    /// One of `items` ("" when there are none).
    pub fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items
            .get(self.below(items.len() as u64) as usize)
            .copied()
            .unwrap_or("")
    }
}
