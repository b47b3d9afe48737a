//! Byte-identity harness for the token budget: every corpus result and session step through a
//! `Session` at every lossy level and budgets of 25,000, 10,000 and 2,000 tokens (deltas and
//! the proxy tools at their defaults, the stats line inline), each session over the files in
//! order, hashed. `hash_outputs` runs without a budget; this covers the budget's ladder.
//!
//!     cargo run --release --example hash_budget -- [CORPUS_DIR] [--per-file]
//!
//! Prints the total hash last (FNV-1a 64), one line per (level, budget, file) with
//! `--per-file`.

#[path = "support/corpus.rs"]
mod corpus;
#[path = "support/hash.rs"]
mod hash;

use std::fs;
use std::path::{Path, PathBuf};

use hash::Fnv;
use mcp_snapshot_filter_core::level::Level;
use mcp_snapshot_filter_core::session::{Session, SessionOptions};
use mcp_snapshot_filter_core::stats::StatsMode;
use serde_json::Value;

/// (tool, arguments JSON, result JSON).
type Call = (String, String, String);

/// Each call in a corpus file.
fn calls_of(path: &Path) -> Vec<Call> {
    let Ok(text) = fs::read_to_string(path) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if path.extension().is_some_and(|e| e == "jsonl") {
        for line in text.lines() {
            let Ok(step) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            if let (Some(tool), Some(result)) = (step["tool"].as_str(), step.get("result")) {
                if result.get("content").is_some() {
                    out.push((
                        tool.to_string(),
                        step["args"].to_string(),
                        result.to_string(),
                    ));
                }
            }
        }
    } else if let Ok(json) = serde_json::from_str::<Value>(&text) {
        let params = &json["request"]["params"];
        if let (Some(tool), Some(result)) = (params["name"].as_str(), json.get("result")) {
            if result.get("content").is_some() {
                out.push((
                    tool.to_string(),
                    params["arguments"].to_string(),
                    result.to_string(),
                ));
            }
        }
    }
    out
}

fn main() {
    let (corpus, per_file) = hash::corpus_args();
    let files = corpus::files_under(&corpus, &["json", "jsonl"]);
    let calls: Vec<(PathBuf, Vec<Call>)> = files.iter().map(|p| (p.clone(), calls_of(p))).collect();
    let count: usize = calls.iter().map(|(_, c)| c.len()).sum();
    if count == 0 {
        eprintln!("hash_budget: no results under {}", corpus.display());
        std::process::exit(1);
    }
    let mut total = Fnv::new();
    for max_tokens in [25_000usize, 10_000, 2_000] {
        for level in [Level::Light, Level::Moderate, Level::Aggressive] {
            let mut options = SessionOptions::for_level(level);
            options.max_tokens = max_tokens;
            options.stats = StatsMode::Inline;
            let mut session = Session::new(options);
            for (path, file_calls) in &calls {
                let mut h = Fnv::new();
                for (tool, args, result) in file_calls {
                    let out = session.filter_tool_result(tool, result, Some(args));
                    h.write(format!("{out:?}").as_bytes());
                }
                if per_file && !file_calls.is_empty() {
                    let name = path.strip_prefix(&corpus).unwrap_or(path).display();
                    println!("{:016x}  {level:?} {max_tokens} {name}", h.0);
                }
                total.write(&h.0.to_le_bytes());
            }
        }
    }
    println!("{:016x}  total ({count} results x 9 sessions)", total.0);
}
