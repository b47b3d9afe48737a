//! Shared by the corpus-wide tests of every module.

use std::io::Write;
use std::path::PathBuf;

/// Where the corpus would be: `$MCP_CORPUS_DIR`, else `../shared/corpus` beside the repository.
fn corpus_location() -> PathBuf {
    std::env::var_os("MCP_CORPUS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| corpus::repo_root().join("../shared/corpus"))
}

/// The corpus of real responses, or `None` with a loud message when it is missing outside CI.
/// Under CI a missing corpus fails the test: it would otherwise pass without checking anything.
pub fn corpus_dir() -> Option<PathBuf> {
    let dir = corpus_location();
    if dir.join("chrome-devtools-mcp").is_dir() {
        return Some(dir);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "corpus not found at {} (set MCP_CORPUS_DIR)",
        dir.display()
    );
    report(
        "SKIPPED",
        &format!("corpus not found at {} (set MCP_CORPUS_DIR)", dir.display()),
    );
    None
}

// The examples' corpus walker, one piece for both (the examples cannot reach a test module).
#[path = "../examples/support/corpus.rs"]
mod corpus;
pub use corpus::files_under;

/// True when the corpus is there (no message either way).
pub fn has_corpus() -> bool {
    corpus_location().join("chrome-devtools-mcp").is_dir()
}

/// A file the repository ships (`samples/`, `__test__/fixtures/`), for tests that a small real
/// sample serves when the corpus is absent.
pub fn shipped(relative: &str) -> PathBuf {
    corpus::repo_root().join(relative)
}

/// Notes that a corpus test ran on the shipped samples only (the corpus is absent).
pub fn note_samples_only() {
    report(
        "SAMPLES ONLY",
        &format!(
            "corpus not found at {}: ran on the samples the repository ships",
            corpus_location().display()
        ),
    );
}

/// Says it on stderr (cargo shows it for failing tests only) and, when `npm test` runs cargo
/// (scripts/test.js sets `MCP_TEST_SKIP_LOG`), in a file it summarises in its own output.
pub fn report(kind: &str, why: &str) {
    let test = std::thread::current()
        .name()
        .unwrap_or("unnamed test")
        .to_string();
    eprintln!("!!!!! {kind}: {test}: {why} !!!!!");
    if let Some(log) = std::env::var_os("MCP_TEST_SKIP_LOG") {
        let line = format!("{kind}\t{test}\t{why}\n");
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log);
        if let Ok(mut file) = file {
            let _ = file.write_all(line.as_bytes());
        }
    }
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

/// A documentation-like page: a sidebar navigation of `links` links outside `main`, then
/// `main` with a heading and `sections` sections of prose, each closing with a button; with
/// the uids of its links and of its buttons.
pub(crate) fn sidebar_page(links: usize, sections: usize) -> (String, Vec<String>, Vec<String>) {
    let mut text = String::from(
        "## Latest page snapshot\nuid=1_0 RootWebArea \"Docs\" url=\"http://127.0.0.1/doc.html\"\n  uid=1_1 navigation \"Sidebar\"\n",
    );
    let mut next = 2..;
    let mut uid = || format!("1_{}", next.next().unwrap_or_default());
    let mut nav = Vec::new();
    for k in 0..links {
        let u = uid();
        text.push_str(&format!(
            "    uid={u} link \"method_number_{k}\" url=\"http://127.0.0.1/doc.html#method.m{k}\"\n"
        ));
        nav.push(u);
    }
    text.push_str(&format!(
        "  uid={} main\n    uid={} heading \"The type\" level=\"1\"\n",
        uid(),
        uid()
    ));
    let mut buttons = Vec::new();
    for k in 0..sections {
        for p in 0..3 {
            text.push_str(&format!(
                "    uid={} StaticText \"Paragraph {p} of section {k} says what the method does, when it panics and what it returns.\"\n",
                uid()
            ));
        }
        let u = uid();
        text.push_str(&format!("    uid={u} button \"Run example {k}\"\n"));
        buttons.push(u);
    }
    (text, nav, buttons)
}

/// The budget's lean step as a page over the budget meets it: `lean_limits` with its node cap
/// scaled (to 600 nodes).
pub(crate) fn lean_step_options() -> crate::snapshot::SnapshotOptions {
    crate::snapshot::SnapshotOptions {
        level: crate::level::Level::Moderate,
        limits: crate::snapshot::SnapshotLimits {
            max_nodes: 600,
            ..crate::snapshot::params::lean_limits()
        },
    }
}

/// The grid fixture's `take_snapshot` result (`__test__/fixtures/snapshots/grid.json`), with its
/// `link "Orders"` replaced by `change` when given: the era and router tests route it.
pub(crate) fn grid_result(change: Option<&str>) -> String {
    let capture: serde_json::Value = serde_json::from_str(include_str!(
        "../../../__test__/fixtures/snapshots/grid.json"
    ))
    .expect("fixture");
    let mut result = capture["result"].clone();
    if let (Some(change), Some(text)) = (change, result.pointer_mut("/content/0/text")) {
        let changed = text
            .as_str()
            .unwrap_or_default()
            .replace("link \"Orders\"", change);
        *text = serde_json::Value::String(changed);
    }
    result.to_string()
}
