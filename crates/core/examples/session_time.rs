//! The filter's time per snapshot in a session (a benchmark, not a test): replays recorded
//! sessions (JSONL, as `bench/record-session.js` writes them) through a `Session` at moderate
//! with snapshot deltas on, the way the proxy filters them (identity matching and the delta
//! against what the agent holds included), and prints the median over runs of the time spent
//! on the steps that carry a snapshot, per snapshot. Written against the session API alone so
//! that the same file builds on the commit before identity (0f633b9, whose crate is
//! `mcp_snapshot_filter`: `docs/benchmarks.md` gives the command) for a ratio in one run.
//!
//!     cargo run --release -p mcp-snapshot-filter-core --example session_time -- [RUNS] SESSION.jsonl …

use std::hint::black_box;
use std::time::Instant;

use mcp_snapshot_filter_core::level::Level;
use mcp_snapshot_filter_core::session::{Session, SessionOptions};
use mcp_snapshot_filter_core::stats::StatsMode;
use serde_json::Value;

struct Step {
    tool: String,
    result: String,
    args: String,
    snapshot: bool,
}

fn read(path: &str) -> Vec<Step> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter_map(|step| {
            let tool = step["tool"].as_str()?.to_string();
            if tool == "tools/list" {
                return None;
            }
            let result = step["result"].to_string();
            let snapshot = result.contains("## Latest page snapshot");
            Some(Step {
                tool,
                result,
                args: step["args"].to_string(),
                snapshot,
            })
        })
        .collect()
}

/// One replay of `steps` in a fresh session: nanoseconds spent on the snapshot steps.
fn replay(steps: &[Step]) -> u128 {
    let mut options = SessionOptions::for_level(Level::Moderate);
    options.stats = StatsMode::Off;
    options.snapshot_deltas = true;
    let mut session = Session::new(options);
    let mut spent = 0;
    for step in steps {
        let start = Instant::now();
        let out = session.filter_tool_result(&step.tool, &step.result, Some(&step.args));
        let took = start.elapsed().as_nanos();
        black_box(out.ok());
        if step.snapshot {
            spent += took;
        }
    }
    spent
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let runs = match args.first().and_then(|a| a.parse::<usize>().ok()) {
        Some(runs) => {
            args.remove(0);
            runs.max(1)
        }
        None => 15,
    };
    let (mut total, mut snapshots) = (0u128, 0usize);
    for path in &args {
        let steps = read(path);
        let count = steps.iter().filter(|s| s.snapshot).count();
        let mut times: Vec<u128> = (0..runs).map(|_| replay(&steps)).collect();
        times.sort_unstable();
        let median = times[times.len() / 2];
        println!(
            "{path}: {count} snapshots, {:.1} µs per snapshot (median of {runs} runs)",
            median as f64 / 1e3 / count.max(1) as f64
        );
        total += median;
        snapshots += count;
    }
    println!(
        "all: {snapshots} snapshots, {:.1} µs per snapshot",
        total as f64 / 1e3 / snapshots.max(1) as f64
    );
}
