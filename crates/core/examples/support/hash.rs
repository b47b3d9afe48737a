//! The byte-identity harness's (`hash_outputs`) hash and arguments.

use std::path::PathBuf;

/// FNV-1a 64: stable across runs and machines, so two builds' totals compare.
pub struct Fnv(pub u64);

impl Fnv {
    pub fn new() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }

    pub fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }

    /// A field with its length first, so that field boundaries count.
    pub fn field(&mut self, s: &str) {
        self.write(&(s.len() as u64).to_le_bytes());
        self.write(s.as_bytes());
    }
}

/// `[CORPUS_DIR] [--per-file]`: the corpus (else `$MCP_CORPUS_DIR`, else `../shared/corpus`
/// beside the repository) and whether to print a line per file.
pub fn corpus_args() -> (PathBuf, bool) {
    let mut corpus: Option<PathBuf> = None;
    let mut per_file = false;
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--per-file" => per_file = true,
            _ => corpus = Some(PathBuf::from(arg)),
        }
    }
    let corpus = corpus
        .or_else(|| std::env::var_os("MCP_CORPUS_DIR").map(PathBuf::from))
        .unwrap_or_else(|| super::corpus::repo_root().join("../shared/corpus"));
    (corpus, per_file)
}
