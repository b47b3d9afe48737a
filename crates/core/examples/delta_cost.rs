//! What a delta costs in time against the plain filter of the same snapshot, same run (a
//! benchmark, not a test): for every chrome-devtools-mcp corpus snapshot at moderate and
//! aggressive, the median of `notation::filter_snapshot` and of `filter_with_deltas` against
//! the page's own fingerprint (the short form: the fingerprint and the whole-tree compare run
//! in full), and the ratio of their sums.
//!
//!     cargo run --release --example delta_cost -- [CORPUS_DIR]

#[path = "support/corpus.rs"]
mod corpus;

use std::hint::black_box;
use std::path::PathBuf;
use std::time::Instant;

use mcp_snapshot_filter_core::level::Level;
use mcp_snapshot_filter_core::notation::{self, cdp::Cdp};
use mcp_snapshot_filter_core::snapshot::delta::{filter_with_deltas, DeltaInput};
use mcp_snapshot_filter_core::snapshot::SnapshotOptions;
use serde_json::Value;

const RUNS: usize = 7;

fn median(mut runs: Vec<f64>) -> f64 {
    runs.sort_by(f64::total_cmp);
    runs[runs.len() / 2]
}

fn main() {
    let dir = std::env::args().nth(1).map_or_else(
        || corpus::repo_root().join("../shared/corpus"),
        PathBuf::from,
    );
    let mut bodies = Vec::new();
    for file in corpus::files_under(&dir.join("chrome-devtools-mcp"), &["json"]) {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        let Ok(doc) = serde_json::from_str::<Value>(&text) else {
            continue;
        };
        let t = doc["result"]["content"][0]["text"].as_str().unwrap_or("");
        if let Some((_, body)) = t.split_once("## Latest page snapshot\n") {
            bodies.push(body.to_string());
        }
    }
    for level in [Level::Moderate, Level::Aggressive] {
        let options = SnapshotOptions::for_level(level);
        let (mut plain_sum, mut delta_sum) = (0.0, 0.0);
        for body in &bodies {
            let first = DeltaInput {
                earlier: None,
                sent: None,
                number: 1,
                upstream_reset: false,
            };
            let Some(held) = filter_with_deltas(&Cdp, body, &options, first).holds else {
                continue;
            };
            let again = DeltaInput {
                earlier: None,
                sent: Some(&held),
                number: 2,
                upstream_reset: false,
            };
            let time = |f: &dyn Fn()| {
                median(
                    (0..RUNS)
                        .map(|_| {
                            let t = Instant::now();
                            f();
                            t.elapsed().as_secs_f64()
                        })
                        .collect(),
                )
            };
            plain_sum += time(&|| {
                black_box(notation::filter_snapshot(body, &options));
            });
            delta_sum += time(&|| {
                black_box(filter_with_deltas(&Cdp, body, &options, again));
            });
        }
        println!(
            "{level}: {} snapshots, filter {:.1} ms, with deltas (short form) {:.1} ms, ratio {:.2}",
            bodies.len(),
            plain_sum * 1e3,
            delta_sum * 1e3,
            delta_sum / plain_sum
        );
    }
}
