//! Scaling bench (part of `npm run bench`; a benchmark, not a test): time per MB of the
//! snapshot filter on inputs of growing size, as a ratio to the 1 MB input in the same run.
//!
//!     cargo run --release --example bench_scaling -- [CORPUS_DIR] [--json] [--sizes 1,4,10,20]
//!         [--runs N] [--only LEVEL:NOTATION:SHAPE:PATH[:MB] [--repeat N]]
//!
//! Inputs are built from the corpus snapshots: a unit of about 1 MB of real pages (both
//! notations), repeated to each size with every id renumbered in document order (so upstream's
//! uid order holds and no id repeats), in two shapes: `flat` (the pages as top-level roots) and
//! `narrow` (every page under one root). Each size runs through the text path
//! (`filter_snapshot`) and the whole-result path (`filter_tool_result`, no budget) at every lossy
//! level. A linear filter keeps time per MB flat: the ratio printed is time per MB at the size
//! over time per MB at the smallest size, medians of `--runs` runs taken in alternating rounds.
//! `--only` runs one case `--repeat` times (for `perf record` or `valgrind --tool=callgrind`:
//! 20 runs at 1 MB against one at 20 MB compares the same work).

#[path = "support/corpus.rs"]
mod corpus;

use std::fs;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use mcp_snapshot_filter_core::level::Level;
use mcp_snapshot_filter_core::notation;
use mcp_snapshot_filter_core::result::{self, ResultOptions};
use mcp_snapshot_filter_core::snapshot::SnapshotOptions;
use serde_json::Value;

const LEVELS: [Level; 3] = [Level::Light, Level::Moderate, Level::Aggressive];
const UNIT_BYTES: usize = 1 << 20;
const MB: f64 = (1 << 20) as f64;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Notation {
    Cdp,
    Playwright,
}

impl Notation {
    fn name(self) -> &'static str {
        match self {
            Notation::Cdp => "cdp",
            Notation::Playwright => "playwright",
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    Flat,
    Narrow,
}

impl Shape {
    fn name(self) -> &'static str {
        match self {
            Shape::Flat => "flat",
            Shape::Narrow => "narrow",
        }
    }
}

/// One built input: the snapshot body, and the tool result that carries it.
struct Input {
    notation: Notation,
    shape: Shape,
    mb: usize,
    body: String,
    tool: &'static str,
    result_json: String,
}

fn main() {
    let mut corpus: Option<PathBuf> = None;
    let mut json = false;
    let mut sizes = vec![1usize, 4, 10, 20];
    let mut runs = 3usize;
    let mut only: Option<String> = None;
    let mut repeat = 1usize;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--json" => json = true,
            "--sizes" => {
                if let Some(v) = args.next() {
                    let parsed: Vec<usize> = v
                        .split(',')
                        .filter_map(|s| s.trim().parse().ok())
                        .filter(|&n| n > 0)
                        .collect();
                    if !parsed.is_empty() {
                        sizes = parsed;
                    }
                }
            }
            "--runs" => {
                runs = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(runs)
                    .max(1)
            }
            "--only" => only = args.next(),
            "--repeat" => {
                repeat = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(repeat)
                    .max(1)
            }
            _ => corpus = Some(PathBuf::from(arg)),
        }
    }
    let corpus =
        corpus.unwrap_or_else(|| corpus::repo_root().join("..").join("shared").join("corpus"));
    let cdp_pages = pages(&corpus.join("chrome-devtools-mcp"), Notation::Cdp);
    let pw_pages = pages(&corpus.join("playwright-mcp"), Notation::Playwright);
    if cdp_pages.is_empty() || pw_pages.is_empty() {
        eprintln!("bench_scaling: no snapshots under {}", corpus.display());
        std::process::exit(1);
    }
    let mut inputs = Vec::new();
    for (notation, pages) in [
        (Notation::Cdp, &cdp_pages),
        (Notation::Playwright, &pw_pages),
    ] {
        let unit = unit_of(pages);
        for shape in [Shape::Flat, Shape::Narrow] {
            for &mb in &sizes {
                inputs.push(build(notation, shape, &unit, mb));
            }
        }
    }

    if let Some(only) = only {
        run_only(&inputs, &only, repeat);
        return;
    }

    // cases[(level, notation, shape, path)] -> per size: samples (ns per MB)
    let paths = ["text", "result"];
    let mut rows = Vec::new();
    for level in LEVELS {
        for notation in [Notation::Cdp, Notation::Playwright] {
            for shape in [Shape::Flat, Shape::Narrow] {
                for path in paths {
                    let group: Vec<&Input> = inputs
                        .iter()
                        .filter(|i| i.notation == notation && i.shape == shape)
                        .collect();
                    // Alternating rounds: every size once per round, so load drift hits all.
                    let mut samples: Vec<Vec<Duration>> = vec![Vec::new(); group.len()];
                    for _ in 0..runs {
                        for (k, input) in group.iter().enumerate() {
                            let c0 = thread_cpu();
                            run_once(input, level, path);
                            if let Some(s) = samples.get_mut(k) {
                                s.push(thread_cpu().saturating_sub(c0));
                            }
                        }
                    }
                    let per_mb: Vec<f64> = group
                        .iter()
                        .zip(samples.iter_mut())
                        .map(|(input, s)| {
                            s.sort();
                            let median = s.get(s.len() / 2).copied().unwrap_or_default();
                            median.as_secs_f64() * 1e3 / (input.body.len() as f64 / MB)
                        })
                        .collect();
                    let base = per_mb.first().copied().unwrap_or(0.0);
                    for (&input, ms_per_mb) in group.iter().zip(&per_mb) {
                        let ratio = if base > 0.0 { ms_per_mb / base } else { 0.0 };
                        rows.push((level, notation, shape, path, input, *ms_per_mb, ratio));
                    }
                }
            }
        }
    }
    if json {
        for (level, notation, shape, path, input, ms_per_mb, ratio) in &rows {
            let line = serde_json::json!({
                "level": level.as_str(),
                "notation": notation.name(),
                "shape": shape.name(),
                "path": path,
                "mb": input.mb,
                "bytes": input.body.len(),
                "ms_per_mb": ms_per_mb,
                "ratio_to_smallest": ratio,
            });
            println!("{line}");
        }
        return;
    }
    let header: Vec<String> = sizes.iter().map(|s| format!("{s} MB")).collect();
    println!(
        "| level | notation | shape | path | {} | worst ratio |",
        header.join(" | ")
    );
    println!("|---|---|---|---|{}---|", "---|".repeat(sizes.len()));
    for chunk in rows.chunks(sizes.len().max(1)) {
        let Some(&(level, notation, shape, path, ..)) = chunk.first() else {
            continue;
        };
        let cells: Vec<String> = chunk
            .iter()
            .map(|r| format!("{:.1} ms/MB ({:.2}×)", r.5, r.6))
            .collect();
        let worst = chunk.iter().map(|r| r.6).fold(0.0, f64::max);
        println!(
            "| {} | {} | {} | {} | {} | {:.2}× |",
            level.as_str(),
            notation.name(),
            shape.name(),
            path,
            cells.join(" | "),
            worst
        );
    }
}

/// `LEVEL:NOTATION:SHAPE:PATH[:MB]` run `repeat` times at each size (at MB only when given).
fn run_only(inputs: &[Input], spec: &str, repeat: usize) {
    let parts: Vec<&str> = spec.split(':').collect();
    let level = parts
        .first()
        .and_then(|l| l.parse::<Level>().ok())
        .unwrap_or(Level::Moderate);
    let notation = parts.get(1).copied().unwrap_or("cdp");
    let shape = parts.get(2).copied().unwrap_or("flat");
    let path = parts.get(3).copied().unwrap_or("text");
    let mb: Option<usize> = parts.get(4).and_then(|m| m.parse().ok());
    for input in inputs.iter().filter(|i| {
        i.notation.name() == notation && i.shape.name() == shape && mb.is_none_or(|m| m == i.mb)
    }) {
        let t0 = Instant::now();
        let c0 = thread_cpu();
        for _ in 0..repeat {
            run_once(input, level, path);
        }
        let cpu = thread_cpu().saturating_sub(c0);
        eprintln!(
            "{} {} {} {} {} MB: {:.1} ms wall, {:.1} ms cpu",
            level.as_str(),
            notation,
            shape,
            path,
            input.mb,
            t0.elapsed().as_secs_f64() * 1e3,
            cpu.as_secs_f64() * 1e3
        );
    }
}

/// This thread's CPU time: on a loaded machine the wall clock counts other processes' turns.
#[cfg(unix)]
fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the call's duration.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return Duration::ZERO;
    }
    Duration::new(
        u64::try_from(ts.tv_sec).unwrap_or(0),
        u32::try_from(ts.tv_nsec).unwrap_or(0),
    )
}

/// Elsewhere the wall clock, since process start.
#[cfg(not(unix))]
fn thread_cpu() -> Duration {
    static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    START.get_or_init(Instant::now).elapsed()
}

fn run_once(input: &Input, level: Level, path: &str) {
    if path == "text" {
        let options = SnapshotOptions::for_level(level);
        black_box(notation::filter_snapshot(black_box(&input.body), &options));
    } else {
        let options = ResultOptions::for_level(level);
        let _ = black_box(result::filter_tool_result(
            input.tool,
            black_box(&input.result_json),
            &options,
        ));
    }
}

/// The snapshot bodies of the corpus in `notation`, in file order.
fn pages(root: &Path, notation: Notation) -> Vec<String> {
    let wanted = match notation {
        Notation::Cdp => "take_snapshot.json",
        Notation::Playwright => "browser_snapshot.json",
    };
    let mut out = Vec::new();
    for path in corpus::files_under(root, &["json"]) {
        if path.file_name().and_then(|f| f.to_str()) != Some(wanted) {
            continue;
        }
        let Ok(text) = fs::read_to_string(&path) else {
            continue;
        };
        let Ok(doc) = serde_json::from_str::<Value>(&text) else {
            continue;
        };
        let Some(t) = doc
            .pointer("/result/content/0/text")
            .and_then(Value::as_str)
        else {
            continue;
        };
        let body = match notation {
            Notation::Cdp => t
                .split_once("## Latest page snapshot\n")
                .map(|(_, b)| b.trim_end_matches('\n')),
            Notation::Playwright => t
                .split_once("```yaml\n")
                .and_then(|(_, b)| b.split_once("\n```"))
                .map(|(b, _)| b),
        };
        if let Some(body) = body.filter(|b| !b.is_empty()) {
            out.push(body.to_string());
        }
    }
    out
}

/// About `UNIT_BYTES` of pages: each page in turn, smallest first, so every kind of page is in
/// it and no one page dominates.
fn unit_of(pages: &[String]) -> Vec<&str> {
    let mut sorted: Vec<&str> = pages.iter().map(String::as_str).collect();
    sorted.sort_by_key(|p| p.len());
    let mut unit = Vec::new();
    let mut bytes = 0;
    while bytes < UNIT_BYTES {
        for page in &sorted {
            if bytes >= UNIT_BYTES {
                break;
            }
            bytes += page.len();
            unit.push(*page);
        }
    }
    unit
}

/// `mb` copies of the unit in `shape`, ids renumbered in document order.
fn build(notation: Notation, shape: Shape, unit: &[&str], mb: usize) -> Input {
    let mut body = String::with_capacity(mb * UNIT_BYTES * 11 / 10);
    let mut next_id = 0u64;
    let indent = match shape {
        Shape::Flat => "",
        Shape::Narrow => "  ",
    };
    if shape == Shape::Narrow {
        match notation {
            Notation::Cdp => body.push_str("uid=1_0 RootWebArea \"Scaled\"\n"),
            Notation::Playwright => body.push_str("- generic [ref=e0]:\n"),
        }
        next_id = 1;
    }
    for _ in 0..mb {
        for page in unit {
            for line in page.lines() {
                body.push_str(indent);
                renumber_into(&mut body, line, notation, &mut next_id);
                body.push('\n');
            }
        }
    }
    let (tool, text) = match notation {
        Notation::Cdp => (
            "take_snapshot",
            format!("## Latest page snapshot\n{body}"),
        ),
        Notation::Playwright => (
            "browser_snapshot",
            format!("### Page\n- Page URL: http://127.0.0.1/scaled\n- Page Title: Scaled\n### Snapshot\n```yaml\n{body}```\n"),
        ),
    };
    let result_json = serde_json::json!({"content": [{"type": "text", "text": text}]}).to_string();
    Input {
        notation,
        shape,
        mb,
        body,
        tool,
        result_json,
    }
}

/// `line` with its id (`uid=P_N` at the start, `[ref=…]` anywhere) replaced by the next one.
fn renumber_into(out: &mut String, line: &str, notation: Notation, next_id: &mut u64) {
    match notation {
        Notation::Cdp => {
            let trimmed = line.trim_start_matches(' ');
            let lead = line.len() - trimmed.len();
            if let Some(after) = trimmed.strip_prefix("uid=") {
                let end = after.find(' ').unwrap_or(after.len());
                out.push_str(&line[..lead]);
                out.push_str(&format!("uid=1_{}", next_id));
                *next_id += 1;
                out.push_str(&after[end..]);
            } else {
                out.push_str(line);
            }
        }
        Notation::Playwright => {
            let mut rest = line;
            while let Some(at) = rest.find("[ref=") {
                let Some(close) = rest[at..].find(']') else {
                    break;
                };
                out.push_str(&rest[..at]);
                out.push_str(&format!("[ref=e{}]", next_id));
                *next_id += 1;
                rest = &rest[at + close + 1..];
            }
            out.push_str(rest);
        }
    }
}
