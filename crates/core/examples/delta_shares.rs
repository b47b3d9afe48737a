//! The measurement behind `snapshot::delta::MAX_DELTA_SHARE`: replays recorded sessions (the
//! JSONL of `../shared/corpus/sessions/`) through the delta core and prints, for every snapshot
//! with a predecessor of the same page, the delta's size as a share of the full filtered
//! snapshot, then how many fall in each tenth:
//!     cargo run --release --example delta_shares -- [LEVEL] SESSION.jsonl ...

use std::collections::HashMap;

use mcp_snapshot_filter_core::notation;
use mcp_snapshot_filter_core::snapshot::delta::{filter_with_deltas, DeltaInput, SentPage};
use mcp_snapshot_filter_core::snapshot::SnapshotOptions;
use serde_json::Value;

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let level = match args.first().map(|a| a.parse()) {
        Some(Ok(level)) => {
            args.remove(0);
            level
        }
        _ => Default::default(),
    };
    let options = SnapshotOptions::for_level(level);
    let mut tenths = [0usize; 11];
    for path in &args {
        let text = std::fs::read_to_string(path).expect("session file");
        let mut held: HashMap<String, (SentPage, u64)> = HashMap::new();
        for line in text.lines() {
            let Ok(step) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            let result = step["result"]["content"][0]["text"].as_str().unwrap_or("");
            let Some(at) = result.find("## Latest page snapshot\n") else {
                continue;
            };
            let rest = &result[at + "## Latest page snapshot\n".len()..];
            let body = &rest[..rest.find("\n## ").map_or(rest.len(), |i| i + 1)];
            let page = step["args"]["pageId"].to_string();
            let prev = held.get(&page);
            // Against what the agent holds, however the previous one was sent; a fresh count
            // of deltas in a row so that every pair is judged.
            let mut sent = prev.map(|(p, _)| p.clone());
            if let Some(s) = sent.as_mut() {
                s.deltas_in_row = 0;
            }
            let number = prev.map_or(1, |(_, n)| n + 1);
            let out = filter_with_deltas(
                notation::notation_of(body),
                body,
                &options,
                DeltaInput {
                    earlier: None,
                    sent: sent.as_ref(),
                    number,
                    upstream_reset: false,
                },
            );
            if let Some(delta) = out.delta_bytes {
                let share = delta as f64 / out.full_bytes.max(1) as f64;
                tenths[((share * 10.0) as usize).min(10)] += 1;
                println!(
                    "{path} step {}: {:?} delta {delta} / full {} = {share:.3}",
                    step["step"], out.sent, out.full_bytes
                );
            }
            if let Some(h) = out.holds {
                held.insert(page, (h, number));
            }
        }
    }
    for (i, n) in tenths.iter().enumerate() {
        println!(
            "share {:.1}–{:.1}: {n}",
            i as f64 / 10.0,
            (i + 1) as f64 / 10.0
        );
    }
}
