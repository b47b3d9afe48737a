//! Linearity of every compressor entry point on adversarial inputs: doubling the input twice
//! must multiply the time by about 4 (a quadratic pass gives 16). Timings are the best of
//! several runs and the bound is generous (8), so load on a shared machine does not fail it;
//! a failing ratio is measured once more before the test fails.

use std::path::PathBuf;
use std::time::Instant;

use serde_json::json;

use super::*;

/// Units that made a pass quadratic before: a leftmost regex alternative that scanned to the
/// end of the text for every match (`1.` and `1.2.`: the email local part; `a-1-`: the URL
/// scheme; `a$1$`: calls; `-_*`: paths), a look-back to the line start (`the a `), the whole
/// sentence searched per match (`either `), every span summed per sentence when shortening
/// (`/\n`).
const UNITS: [&str; 12] = [
    "1.",
    "1.2.",
    "a-1-",
    "a$1$",
    "-_*",
    "x@1.",
    "/\n",
    "either ",
    "the a ",
    "  either A",
    "(e.g. either the [",
    "You can use this tool to a. ",
];

/// Seeds and finds of the `describe_text` / `describe_list` fuzz targets, when present (the
/// fuzz corpora are git-ignored; `fuzz/make-seeds.js` writes them).
fn fuzz_inputs() -> Vec<String> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus");
    let mut inputs = Vec::new();
    for target in ["describe_text", "describe_list"] {
        let Ok(dir) = std::fs::read_dir(root.join(target)) else {
            continue;
        };
        let mut files: Vec<PathBuf> = dir.filter_map(|e| e.ok().map(|e| e.path())).collect();
        files.sort();
        // A few per target: each costs a timing.
        for file in files.into_iter().take(8) {
            if let Ok(bytes) = std::fs::read(&file) {
                let text = String::from_utf8_lossy(&bytes).into_owned();
                if text.len() >= 8 {
                    inputs.push(text);
                }
            }
        }
    }
    if inputs.is_empty() {
        eprintln!("note: no fuzz corpus under fuzz/corpus (run fuzz/make-seeds.js): timing the built-in units only");
    }
    inputs
}

/// The unit repeated to at least `bytes` bytes.
fn repeated(unit: &str, bytes: usize) -> String {
    unit.repeat(bytes.div_ceil(unit.len().max(1)))
}

/// Best wall time of `runs` calls of `f`, in seconds.
fn best_of(runs: usize, f: &dyn Fn()) -> f64 {
    (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::MAX, f64::min)
}

/// t(4n) / t(n), with n grown until t(n) is at least 2 ms (below that the timer and the
/// allocator dominate) or reaches `max_bytes`.
fn growth(unit: &str, run: &dyn Fn(&str), max_bytes: usize) -> f64 {
    let mut bytes = 4 * 1024;
    loop {
        let small = repeated(unit, bytes);
        let t1 = best_of(3, &|| run(&small));
        if t1 >= 0.002 || bytes >= max_bytes {
            let large = repeated(unit, 4 * bytes);
            let t4 = best_of(3, &|| run(&large));
            return t4 / t1.max(1e-9);
        }
        bytes *= 2;
    }
}

fn assert_linear(what: &str, unit: &str, run: &dyn Fn(&str), max_bytes: usize) {
    let first = growth(unit, run, max_bytes);
    if first <= 8.0 {
        return;
    }
    let again = growth(unit, run, max_bytes);
    assert!(
        again <= 8.0,
        "{what} on {:?} repeated: 4x the input took {first:.1}x then {again:.1}x the time",
        unit.chars().take(40).collect::<String>()
    );
}

/// A tools/list whose descriptions (the tool's and a property's) are `text` cut into pieces
/// of about 2 KB, each made distinct so the list's memo cannot share the work.
fn as_tools_list(text: &str) -> String {
    let mut tools = Vec::new();
    let mut rest = text;
    let mut n = 0;
    while !rest.is_empty() {
        let mut cut = rest.len().min(2048);
        while !rest.is_char_boundary(cut) {
            cut += 1;
        }
        let (piece, tail) = rest.split_at(cut);
        rest = tail;
        n += 1;
        let description = format!("{piece} {n}");
        tools.push(json!({
            "name": format!("t{n}"),
            "description": description,
            "inputSchema": {"type": "object", "properties": {"p": {"type": "string", "description": description}}}
        }));
    }
    json!({ "tools": tools }).to_string()
}

#[test]
fn compression_time_grows_linearly_with_adversarial_input() {
    let mut units: Vec<String> = UNITS.iter().map(|u| u.to_string()).collect();
    units.extend(fuzz_inputs());
    let options = CompressOptions {
        level: Level::Aggressive,
        compact_schemas: false,
    };
    for (i, unit) in units.iter().enumerate() {
        // Aggressive runs every pass light and moderate run, and more.
        assert_linear(
            "compress_text at aggressive",
            unit,
            &|text| {
                compress_text(text, Level::Aggressive);
            },
            64 * 1024,
        );
        // The list walk around it: a few units are enough.
        if i % 3 != 0 {
            continue;
        }
        // 4 x 16 KiB of text, written twice per tool and JSON-escaped, stays under the list
        // bound: the list is compressed, not passed through.
        assert_linear(
            "compress_list_result at aggressive",
            unit,
            &|text| {
                let list = as_tools_list(text);
                assert!(list.len() <= MAX_LIST_RESULT_BYTES, "{} bytes", list.len());
                let _ = compress_list_result("tools/list", &list, &options);
            },
            16 * 1024,
        );
    }
}

#[test]
fn lists_and_descriptions_over_the_bounds_pass_unchanged() {
    let options = CompressOptions {
        level: Level::Aggressive,
        compact_schemas: false,
    };
    let wordy = "You can use this tool in order to read the file. ";
    let small = json!({"tools": [{"name": "a", "description": wordy}]}).to_string();
    assert!(compress_list_result("tools/list", &small, &options)
        .ok()
        .flatten()
        .is_some());

    // Over the list bound: unchanged, and at once (no pass runs on it).
    let huge_text = repeated("1.2.", MAX_LIST_RESULT_BYTES);
    let huge =
        json!({"tools": [{"name": "a", "description": format!("{wordy}{huge_text}")}]}).to_string();
    let t = Instant::now();
    assert_eq!(
        compress_list_result("tools/list", &huge, &options).ok(),
        Some(None)
    );
    assert!(t.elapsed().as_secs_f64() < 1.0);

    // One description over its bound stays byte for byte; the others are still compressed.
    let long = format!("{wordy}{}", repeated("a. ", MAX_DESCRIPTION_BYTES));
    let mixed = json!({"tools": [
        {"name": "a", "description": long},
        {"name": "b", "description": wordy}
    ]})
    .to_string();
    let out: serde_json::Value = serde_json::from_str(
        &compress_list_result("tools/list", &mixed, &options)
            .ok()
            .flatten()
            .unwrap_or_default(),
    )
    .unwrap_or_default();
    assert_eq!(out["tools"][0]["description"], json!(long));
    assert_ne!(out["tools"][1]["description"], json!(wordy));
}
