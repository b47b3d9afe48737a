//! One corpus result through `filter_tool_result` many times, with the default budget and
//! without one, for `perf record` (a profiling aid, not a benchmark: `bench/seed.js` and
//! `bench/proxy-overhead.js` give the ratios).
//!
//!     cargo run --release --example budget_profile -- FILE.json [--level L] [--repeat N]
//!         [--no-budget]
//!
//! Prints the median thread CPU time per call (a loaded machine inflates wall time) and the
//! budget's step.

use std::hint::black_box;
use std::time::Duration;

use mcp_snapshot_filter_core::level::Level;
use mcp_snapshot_filter_core::result::{self, ResultOptions};
use mcp_snapshot_filter_core::snapshot::params::{DEFAULT_MAX_CHARS, DEFAULT_MAX_TOKENS};
use serde_json::Value;

fn main() {
    let mut file = None;
    let mut level = Level::Moderate;
    let mut repeat = 50usize;
    let mut budget = true;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--level" => {
                level = args
                    .next()
                    .and_then(|l| l.parse().ok())
                    .unwrap_or(Level::Moderate)
            }
            "--repeat" => repeat = args.next().and_then(|n| n.parse().ok()).unwrap_or(50),
            "--no-budget" => budget = false,
            _ => file = Some(arg),
        }
    }
    let Some(file) = file else {
        eprintln!("budget_profile: FILE.json missing");
        std::process::exit(2);
    };
    let doc: Value = match std::fs::read_to_string(&file)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
    {
        Some(doc) => doc,
        None => {
            eprintln!("budget_profile: {file} is not a JSON corpus file");
            std::process::exit(2);
        }
    };
    let tool = doc["request"]["params"]["name"]
        .as_str()
        .unwrap_or("take_snapshot")
        .to_string();
    let result_json = doc["result"].to_string();
    let mut options = ResultOptions::for_level(level);
    if budget {
        options.max_tokens = DEFAULT_MAX_TOKENS;
        options.max_chars = DEFAULT_MAX_CHARS;
    }
    let mut times = Vec::with_capacity(repeat);
    let mut step = None;
    for _ in 0..repeat.max(1) {
        let t0 = thread_cpu();
        let out = result::filter_tool_result_value(&tool, &result_json, &options);
        times.push(thread_cpu().saturating_sub(t0));
        if let Ok(Some(f)) = &out {
            step = f.budget.as_ref().map(|b| b.step);
        }
        black_box(out).ok();
    }
    times.sort();
    println!(
        "{tool} {} KB at {level:?}{}: median {:.2} ms over {} runs; budget step {:?}",
        result_json.len() / 1000,
        if budget { " (default budget)" } else { "" },
        times[times.len() / 2].as_secs_f64() * 1e3,
        times.len(),
        step
    );
}

/// CPU time this thread has run.
fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec for the call to write.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(
        ts.tv_sec.max(0) as u64,
        ts.tv_nsec.clamp(0, 999_999_999) as u32,
    )
}
