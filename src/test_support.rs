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
