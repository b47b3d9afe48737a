//! Time of the description compressor on adversarial input (a benchmark, not a test; the
//! test, `describe::linear_tests`, counts work instead): for each unit that once made a pass
//! quadratic, t(4n) / t(n) of `compress_text` at aggressive, both timed in the same run, the
//! best of `--runs` (default 5). Linear gives about 4, quadratic 16.
//!
//!     cargo run --release --example bench_describe -- [--bytes N] [--runs N]

#[path = "../src/describe/adversarial.rs"]
mod adversarial;

use std::hint::black_box;
use std::time::Instant;

use adversarial::{repeated, UNITS};
use mcp_snapshot_filter_core::describe::compress_text;
use mcp_snapshot_filter_core::level::Level;

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Best wall time of `runs` compressions of `text`, in seconds.
fn best_of(runs: usize, text: &str) -> f64 {
    (0..runs.max(1))
        .map(|_| {
            let t = Instant::now();
            black_box(compress_text(black_box(text), Level::Aggressive));
            t.elapsed().as_secs_f64()
        })
        .fold(f64::MAX, f64::min)
}

fn main() {
    let bytes = arg("--bytes", 64 * 1024);
    let runs = arg("--runs", 5);
    println!("unit\tt(n) ms\tt(4n) ms\tratio (n = {bytes} bytes)");
    for unit in UNITS {
        let t1 = best_of(runs, &repeated(unit, bytes));
        let t4 = best_of(runs, &repeated(unit, 4 * bytes));
        println!(
            "{:?}\t{:.2}\t{:.2}\t{:.1}",
            unit,
            t1 * 1e3,
            t4 * 1e3,
            t4 / t1.max(1e-9)
        );
    }
}
