//! Shared by the examples and the crate's tests (`src/test_support.rs`): the corpus files they read.

use std::path::{Path, PathBuf};

/// The repository's root (the core crate is `crates/core` in it): where `samples/`,
/// `__test__/fixtures/` and `fuzz/corpus/` are, and beside which the shared corpus is.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every file under `root` whose extension is one of `exts`, sorted (explicit stack: no
/// recursion limit, unreadable directories passed over).
pub fn files_under(root: &Path, exts: &[&str]) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for path in entries.flatten().map(|e| e.path()) {
            if path.is_dir() {
                stack.push(path);
            } else if path
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| exts.contains(&e))
            {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}
