//! Byte-identity harness for refactors: hashes every snapshot filter, expand and search output
//! over the whole shared corpus (both notations, every level) plus the fuzz regressions' inputs.
//! The gate is the committed expected outputs (`tests/expected_outputs.rs`, in `cargo test`);
//! this is the wider net for a change that must alter nothing anywhere in the corpus (compare
//! the hash before and after; it needs the corpus beside the clone).
//!
//!     cargo run --release --example hash_outputs -- [CORPUS_DIR] [--per-file]
//!
//! Prints one line per input file (`hash  path`) with `--per-file` (diff two runs to find the
//! file that changed), and always the total hash last. The hash is FNV-1a 64, stable across
//! builds and toolchains.

#[path = "support/corpus.rs"]
mod corpus;
#[path = "support/hash.rs"]
mod hash;

use std::fs;

use hash::Fnv;
use mcp_snapshot_filter_core::level::Level;
use mcp_snapshot_filter_core::result::{self, ResultOptions};
use mcp_snapshot_filter_core::snapshot::marker::read_marker;
use mcp_snapshot_filter_core::snapshot::SnapshotOptions;
use serde_json::Value;

use api::{notation, playwright};

/// The entry points hashed, in one place: a refactor that moves them edits only this.
mod api {
    pub use mcp_snapshot_filter_core::notation::playwright;
    pub mod notation {
        pub use mcp_snapshot_filter_core::notation::{
            expand_range, expand_subtree, filter_snapshot, search_snapshot,
        };

        pub fn uids_of(body: &str) -> Vec<String> {
            let mut implied = Vec::new();
            let tree =
                mcp_snapshot_filter_core::notation::notation_of(body).parse(body, &mut implied);
            tree.uids().map(str::to_string).collect()
        }
    }
}

const SNAPSHOT_HEADER: &str = "## Latest page snapshot\n";
/// Uids expanded per snapshot (spread over the document), to keep the run short.
const EXPANDS_PER_SNAPSHOT: usize = 12;
const QUERIES: [(&str, bool); 4] = [
    ("the", false),
    ("link", false),
    ("^[A-Z]", true),
    ("e1", false),
];

fn main() {
    let (corpus, per_file) = hash::corpus_args();
    let files = corpus::files_under(&corpus, &["json", "jsonl"]);
    if files.is_empty() {
        eprintln!("hash_outputs: no corpus under {}", corpus.display());
        std::process::exit(1);
    }
    let mut total = Fnv::new();
    let mut snapshots = 0usize;
    for path in &files {
        let Ok(text) = fs::read_to_string(path) else {
            continue;
        };
        let mut texts = Vec::new();
        if path.extension().is_some_and(|e| e == "jsonl") {
            for line in text.lines() {
                if let Ok(v) = serde_json::from_str::<Value>(line) {
                    collect_texts(&v, &mut texts);
                }
            }
        } else if let Ok(v) = serde_json::from_str::<Value>(&text) {
            collect_texts(&v, &mut texts);
        }
        let mut h = Fnv::new();
        for t in &texts {
            snapshots += hash_text(&mut h, t);
        }
        let name = path.strip_prefix(&corpus).unwrap_or(path).display();
        if per_file {
            println!("{:016x}  {name}", h.0);
        }
        total.write(&h.0.to_le_bytes());
    }
    let mut h = Fnv::new();
    for t in fuzz_inputs() {
        snapshots += hash_body(&mut h, &t);
    }
    if per_file {
        println!("{:016x}  (fuzz regressions)", h.0);
    }
    total.write(&h.0.to_le_bytes());
    println!(
        "{:016x}  total ({} files, {snapshots} snapshot bodies)",
        total.0,
        files.len()
    );
}

/// Every `text` string of a JSON document (the text blocks of results, wherever they sit).
fn collect_texts(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(map) => {
            for (k, child) in map {
                match child {
                    Value::String(s) if k == "text" => out.push(s.clone()),
                    _ => collect_texts(child, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|c| collect_texts(c, out)),
        _ => {}
    }
}

/// One result text: the tool-result filter under both notations' tool names, then its snapshot
/// body (either notation) through every filter, expand and search. Returns bodies hashed.
fn hash_text(h: &mut Fnv, text: &str) -> usize {
    let result_json = serde_json::json!({"content": [{"type": "text", "text": text}]}).to_string();
    for tool in ["take_snapshot", "browser_snapshot"] {
        for level in Level::ALL {
            let out =
                result::filter_tool_result(tool, &result_json, &ResultOptions::for_level(level));
            h.field(&format!("{out:?}"));
        }
    }
    let mut bodies = 0;
    if let Some(start) = text
        .find(SNAPSHOT_HEADER)
        .map(|i| i + SNAPSHOT_HEADER.len())
    {
        let rest = text.get(start..).unwrap_or("");
        let end = rest.find("\n## ").map_or(rest.len(), |i| i + 1);
        bodies += hash_body(h, rest.get(..end).unwrap_or(""));
    }
    if let Some(found) = playwright::sections::find_yaml_snapshot(text) {
        bodies += hash_body(h, found.body);
        for level in Level::ALL {
            let mut raw = None;
            let out = playwright::filter_result_text(text, |body| {
                raw = Some(body.to_string());
                playwright::filter_yaml_snapshot(body, &SnapshotOptions::for_level(level))
            });
            h.field(&format!("{out:?} {raw:?}"));
        }
    }
    bodies
}

fn hash_body(h: &mut Fnv, body: &str) -> usize {
    for level in Level::ALL {
        let options = SnapshotOptions::for_level(level);
        let out = notation::filter_snapshot(body, &options);
        h.field(&format!("{out:?}"));
        // Filtering filtered output reads our own notation and markers back.
        let again = notation::filter_snapshot(&out.text, &options);
        h.field(&format!("{again:?}"));
        for line in out
            .text
            .lines()
            .filter(|l| l.contains("expand_snapshot uid="))
        {
            let m = read_marker(line);
            if let Some(uid) = m.expand_uid {
                let uid = uid.trim_end_matches('\'');
                let until = m.until.map(|u| u.trim_end_matches('\''));
                h.field(&outcome(notation::expand_range(body, uid, until, None)));
            }
        }
    }
    let uids = notation::uids_of(body);
    let step = (uids.len() / EXPANDS_PER_SNAPSHOT).max(1);
    for uid in uids.iter().step_by(step) {
        for depth in [None, Some(1), Some(3)] {
            h.field(&outcome(notation::expand_subtree(body, uid, depth)));
        }
    }
    h.field(&outcome(notation::expand_subtree(
        body,
        "no-such-uid",
        None,
    )));
    for (query, regex) in QUERIES {
        for limit in [3, 50] {
            h.field(&outcome(notation::search_snapshot(
                body, query, regex, limit,
            )));
        }
    }
    1
}

/// A call's outcome as hashed: an error by its text, written as the one error kind read before
/// errors were typed (`Err(InvalidArgument("…"))`), so the hash compares across that change.
fn outcome<T: std::fmt::Debug>(
    result: Result<T, mcp_snapshot_filter_core::error::FilterError>,
) -> String {
    match result {
        Ok(value) => format!("Ok({value:?})"),
        Err(e) => format!("Err(InvalidArgument({:?}))", e.to_string()),
    }
}

/// The inputs of `src/fuzz_regressions.rs` (kept there as tests).
fn fuzz_inputs() -> Vec<String> {
    let tail: String = (3..40)
        .map(|i| format!("  - paragraph [ref=e{i}]: text {i}\n"))
        .collect();
    let mut out: Vec<String> = [
        "- main [ref=e1] [ref=e2]:\n",
        "- main [ref=x\u{2}y] [ref=e2]:\n",
        "- main [ref=] [ref=e2]:\n",
    ]
    .iter()
    .map(|head| format!("{head}{tail}"))
    .collect();
    out.extend(
        [
            "- b",
            "- b:\n  - c [ref=e2]",
            "uid=1_0 RootWebArea \"x\"\n  not a node",
        ]
        .map(str::to_string),
    );
    out
}
