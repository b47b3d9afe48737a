//! Replays a recorded session (the JSONL of `../shared/corpus/sessions/`) through a `Session`
//! with snapshot deltas on and prints what each step sends (the result's first text block):
//!     cargo run --example delta_dump -- SESSION.jsonl [LEVEL]
//! A way to read deltas on real pages (the README's example comes from it).

use mcp_snapshot_filter_core::session::{Session, SessionOptions};
use mcp_snapshot_filter_core::stats::StatsMode;
use serde_json::Value;

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .expect("usage: delta_dump SESSION.jsonl [LEVEL]");
    let level = args
        .next()
        .map_or(Ok(Default::default()), |l| l.parse())
        .expect("level: off, light, moderate or aggressive");
    let mut options = SessionOptions::for_level(level);
    options.stats = StatsMode::Off;
    let mut session = Session::new(options);
    let text = std::fs::read_to_string(&path).expect("session file");
    for line in text.lines() {
        let Ok(step) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let tool = step["tool"].as_str().unwrap_or("");
        if tool == "tools/list" {
            continue;
        }
        let result = step["result"].to_string();
        let out = session
            .filter_tool_result(tool, &result, Some(&step["args"].to_string()))
            .ok()
            .flatten()
            .unwrap_or(result);
        let sent: Value = serde_json::from_str(&out).unwrap_or_default();
        let body = sent["content"][0]["text"].as_str().unwrap_or("");
        println!(
            "===== step {} {tool} {} ({} bytes)\n{body}",
            step["step"],
            step["args"],
            body.len()
        );
    }
}
