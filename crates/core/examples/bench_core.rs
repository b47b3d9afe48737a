//! Core throughput bench (part of `npm run bench`; a benchmark, not a test).
//!
//!     cargo run --release --example bench_core -- [CORPUS_DIR] [--json] [--budget-ms N]
//!
//! Times the pure-Rust snapshot filter, tool-result filter and description compressor on every
//! corpus file at every lossy level: repeated runs per file (at least `MIN_RUNS`, until the
//! per-file budget is spent), median time, MB/s. No napi here: this is the floor the Node
//! boundary is measured against. Each run alternates with a floor on the same bytes, timed the
//! same way: `serde_json` decoding the input (a snapshot body encoded as a JSON string; a
//! result or list as the JSON it is), work the proxy does on every message anyway. MB/s move
//! with the machine and its load; the ratio to the floor is what holds. `--json` prints one
//! JSON object per file and level (what bench/run.js reads); otherwise a markdown summary.

#[path = "support/corpus.rs"]
mod corpus;

use std::fs;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use mcp_snapshot_filter_core::describe::{self, CompressOptions, LIST_METHODS};
use mcp_snapshot_filter_core::level::Level;
use mcp_snapshot_filter_core::notation;
use mcp_snapshot_filter_core::result::{self, ResultOptions};
use mcp_snapshot_filter_core::snapshot::SnapshotOptions;
use serde_json::Value;

const LEVELS: [Level; 3] = [Level::Light, Level::Moderate, Level::Aggressive];
const MIN_RUNS: usize = 5;
const MAX_RUNS: usize = 2000;
const SNAPSHOT_HEADER: &str = "## Latest page snapshot\n";

/// One input: which function it feeds and the text it is fed.
struct Input {
    function: &'static str,
    file: String,
    /// Tool name (tool results) or list method (lists).
    name: String,
    text: String,
}

struct Timing {
    runs: usize,
    median: Duration,
    /// The floor's median on the same input, in the same rounds.
    floor: Duration,
}

fn main() {
    let mut corpus: Option<PathBuf> = None;
    let mut json = false;
    let mut budget = Duration::from_millis(30);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--json" => json = true,
            "--budget-ms" => {
                let ms = args
                    .next()
                    .and_then(|v| v.parse::<u64>().ok())
                    .unwrap_or(30);
                budget = Duration::from_millis(ms);
            }
            _ => corpus = Some(PathBuf::from(arg)),
        }
    }
    let corpus =
        corpus.unwrap_or_else(|| corpus::repo_root().join("..").join("shared").join("corpus"));
    let inputs = collect_inputs(&corpus);
    if inputs.is_empty() {
        eprintln!("bench_core: no corpus results under {}", corpus.display());
        std::process::exit(1);
    }
    let mut rows = Vec::new();
    for level in LEVELS {
        for input in &inputs {
            let timing = time_input(input, level, budget);
            rows.push((input, level, timing));
        }
    }
    if json {
        for (input, level, t) in &rows {
            let line = serde_json::json!({
                "function": input.function,
                "file": input.file,
                "name": input.name,
                "level": level.as_str(),
                "bytes": input.text.len(),
                "runs": t.runs,
                "median_ns": t.median.as_nanos() as u64,
                "floor_median_ns": t.floor.as_nanos() as u64,
            });
            println!("{line}");
        }
    } else {
        print_summary(&rows);
    }
}

/// Runs one input at one level until the budget is spent; median of the runs.
fn time_input(input: &Input, level: Level, budget: Duration) -> Timing {
    let floor_input = match input.function {
        "filter_snapshot" => serde_json::to_string(&input.text).unwrap_or_default(),
        _ => input.text.clone(),
    };
    let mut samples = Vec::new();
    let mut floor = Vec::new();
    let started = Instant::now();
    while samples.len() < MIN_RUNS || (started.elapsed() < budget && samples.len() < MAX_RUNS) {
        let t0 = Instant::now();
        run_floor(input.function, &floor_input);
        floor.push(t0.elapsed());
        let t0 = Instant::now();
        run_once(input, level);
        samples.push(t0.elapsed());
    }
    let median = |v: &mut Vec<Duration>| {
        v.sort();
        v.get(v.len() / 2).copied().unwrap_or_default()
    };
    Timing {
        runs: samples.len(),
        median: median(&mut samples),
        floor: median(&mut floor),
    }
}

/// `serde_json` decoding the input: a string for a snapshot body, a value otherwise.
fn run_floor(function: &str, json: &str) {
    if function == "filter_snapshot" {
        let _ = black_box(serde_json::from_str::<String>(black_box(json)));
    } else {
        let _ = black_box(serde_json::from_str::<Value>(black_box(json)));
    }
}

fn run_once(input: &Input, level: Level) {
    match input.function {
        "filter_snapshot" => {
            let options = SnapshotOptions::for_level(level);
            black_box(notation::filter_snapshot(black_box(&input.text), &options));
        }
        "filter_tool_result" => {
            let options = ResultOptions::for_level(level);
            // Errors are part of the work measured (the proxy forwards the original then).
            let _ = black_box(result::filter_tool_result(
                &input.name,
                black_box(&input.text),
                &options,
            ));
        }
        _ => {
            let options = CompressOptions {
                level,
                compact_schemas: false,
            };
            let _ = black_box(describe::compress_list_result(
                &input.name,
                black_box(&input.text),
                &options,
            ));
        }
    }
}

/// Every corpus file in the `{request, result}` format: tools/call results (and their snapshot
/// section, when they have one) and list results.
fn collect_inputs(root: &Path) -> Vec<Input> {
    let files = corpus::files_under(root, &["json"]);
    let mut inputs = Vec::new();
    for path in files {
        let Ok(text) = fs::read_to_string(&path) else {
            continue;
        };
        let Ok(doc) = serde_json::from_str::<Value>(&text) else {
            continue;
        };
        let (Some(method), Some(result)) = (
            doc.pointer("/request/method").and_then(Value::as_str),
            doc.get("result").filter(|r| r.is_object()),
        ) else {
            continue;
        };
        let file = path
            .strip_prefix(root)
            .unwrap_or(&path)
            .display()
            .to_string();
        if method == "tools/call" {
            let tool = doc
                .get("tool")
                .or_else(|| doc.pointer("/request/params/name"))
                .and_then(Value::as_str)
                .unwrap_or("unknown")
                .to_string();
            if let Some(body) = snapshot_body(result) {
                inputs.push(Input {
                    function: "filter_snapshot",
                    file: file.clone(),
                    name: tool.clone(),
                    text: body,
                });
            }
            inputs.push(Input {
                function: "filter_tool_result",
                file,
                name: tool,
                text: result.to_string(),
            });
        } else if LIST_METHODS.contains(&method) {
            inputs.push(Input {
                function: "compress_list_result",
                file,
                name: method.to_string(),
                text: result.to_string(),
            });
        }
    }
    inputs
}

/// The body of the `## Latest page snapshot` section of a result's text blocks, if any.
fn snapshot_body(result: &Value) -> Option<String> {
    let blocks = result.get("content")?.as_array()?;
    blocks.iter().find_map(|block| {
        let text = block.get("text")?.as_str()?;
        let start = text.find(SNAPSHOT_HEADER)? + SNAPSHOT_HEADER.len();
        // The section runs to the next `## ` heading or the end of the text.
        let rest = text.get(start..)?;
        let end = rest.find("\n## ").map_or(rest.len(), |i| i + 1);
        rest.get(..end).map(str::to_string)
    })
}

fn mb_per_s(bytes: usize, time: Duration) -> f64 {
    let secs = time.as_secs_f64();
    if secs == 0.0 {
        f64::INFINITY
    } else {
        bytes as f64 / 1e6 / secs
    }
}

fn print_summary(rows: &[(&Input, Level, Timing)]) {
    println!("| function | level | files | MB | total median ms | MB/s (all) | floor MB/s (all) | × floor (all) | MB/s (slowest file) | MB/s (largest file) |");
    println!("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for function in [
        "filter_snapshot",
        "filter_tool_result",
        "compress_list_result",
    ] {
        for level in LEVELS {
            let group: Vec<_> = rows
                .iter()
                .filter(|(i, l, _)| i.function == function && *l == level)
                .collect();
            if group.is_empty() {
                continue;
            }
            let bytes: usize = group.iter().map(|(i, _, _)| i.text.len()).sum();
            let time: Duration = group.iter().map(|(_, _, t)| t.median).sum();
            let floor: Duration = group.iter().map(|(_, _, t)| t.floor).sum();
            let slowest = group
                .iter()
                .filter(|(i, _, _)| i.text.len() >= 10_000)
                .map(|(i, _, t)| mb_per_s(i.text.len(), t.median))
                .fold(f64::INFINITY, f64::min);
            let largest = group
                .iter()
                .max_by_key(|(i, _, _)| i.text.len())
                .map_or(0.0, |(i, _, t)| mb_per_s(i.text.len(), t.median));
            println!(
                "| {function} | {} | {} | {:.2} | {:.2} | {:.0} | {:.0} | {:.3} | {:.0} | {:.0} |",
                level.as_str(),
                group.len(),
                bytes as f64 / 1e6,
                time.as_secs_f64() * 1e3,
                mb_per_s(bytes, time),
                mb_per_s(bytes, floor),
                floor.as_secs_f64() / time.as_secs_f64(),
                slowest,
                largest,
            );
        }
    }
}
