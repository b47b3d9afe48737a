//! One result as the client would receive it under the default budget (no session: no deltas,
//! no stats line), and the budget's step: what a page that must lose content to fit keeps.
//!
//!     cargo run --release --example budget_view -- FILE [--step N] [--level L] [--no-budget]
//!         [--steps]
//!
//! FILE is a corpus result (`{"request", "result"}`) or a recorded session (JSONL of
//! `bench/record-session.js`), of which `--step N` names the step (default: the first
//! snapshot). Prints the step to stderr and the text blocks to stdout; with `--steps`, instead,
//! the size of the result at each of the budget's steps between `moderate` and `aggressive`
//! without the budget (`way_around_steps`; `lean` with its own node cap, unscaled).

use mcp_snapshot_filter_core::level::Level;
use mcp_snapshot_filter_core::result::{self, ResultOptions};
use mcp_snapshot_filter_core::snapshot::params::{
    way_around_steps, DEFAULT_MAX_CHARS, DEFAULT_MAX_TOKENS,
};
use serde_json::Value;

fn main() {
    let mut file = None;
    let mut level = Level::Moderate;
    let mut step: Option<u64> = None;
    let mut budget = true;
    let mut steps = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--level" => level = args.next().and_then(|l| l.parse().ok()).unwrap_or(level),
            "--step" => step = args.next().and_then(|n| n.parse().ok()),
            "--no-budget" => budget = false,
            "--steps" => steps = true,
            _ => file = Some(arg),
        }
    }
    let Some(file) = file else {
        eprintln!("budget_view: FILE missing");
        std::process::exit(2);
    };
    let text = std::fs::read_to_string(&file).unwrap_or_default();
    // A corpus file is one JSON document; a session one per line.
    let docs: Vec<Value> = match serde_json::from_str::<Value>(&text) {
        Ok(doc) => vec![doc],
        Err(_) => text
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect(),
    };
    let is_snapshot = |d: &Value| d["result"].to_string().contains("## Latest page snapshot");
    let doc = match step {
        Some(n) => docs.iter().find(|d| d["step"].as_u64() == Some(n)),
        None => docs.iter().find(|d| is_snapshot(d)),
    };
    let Some(doc) = doc else {
        eprintln!("budget_view: no such step in {file}");
        std::process::exit(2);
    };
    let tool = doc["request"]["params"]["name"]
        .as_str()
        .or_else(|| doc["tool"].as_str())
        .unwrap_or("take_snapshot")
        .to_string();
    let result_json = doc["result"].to_string();
    if steps {
        for (name, limits) in way_around_steps() {
            let mut options = ResultOptions::for_level(Level::Moderate);
            options.snapshot = limits;
            options.max_tokens = 0;
            if let Ok(Some(out)) = result::filter_tool_result_value(&tool, &result_json, &options) {
                println!(
                    "{name}: {} bytes, {} estimated tokens",
                    out.figures.text_bytes_out, out.figures.text_tokens_out
                );
            }
        }
        return;
    }
    let mut options = ResultOptions::for_level(level);
    if budget {
        options.max_tokens = DEFAULT_MAX_TOKENS;
        options.max_chars = DEFAULT_MAX_CHARS;
    }
    match result::filter_tool_result_value(&tool, &result_json, &options) {
        Ok(Some(out)) => {
            eprintln!(
                "{tool} at {level:?}: budget step {:?}, {} bytes out, {} estimated tokens",
                out.budget.as_ref().map(|b| b.step),
                out.figures.text_bytes_out,
                out.figures.text_tokens_out
            );
            for block in out.result["content"].as_array().into_iter().flatten() {
                if let Some(t) = block["text"].as_str() {
                    println!("{t}");
                }
            }
        }
        Ok(None) => eprintln!("{tool}: unchanged"),
        Err(e) => eprintln!("{tool}: {e}"),
    }
}
