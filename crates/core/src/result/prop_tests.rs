//! Property tests of the tool-result filters: random network and console lists and snapshot
//! sections assembled into `CallToolResult` JSON, filtered at every level. No panic; `off`
//! changes nothing; every reqid/msgid is shown or named in a summary line; failed requests and
//! errors/warnings always stay, line for line; no snapshot uid is made up.

use std::collections::HashSet;

use serde_json::{json, Value};

use super::console::always_kept;
use super::ids::parse_id_ranges;
use super::network::{is_failed, parse_request_line};
use super::*;
use crate::test_support::XorShift;

/// Results per run (each filtered at the four levels).
const CASES: usize = 800;

const URLS: &[&str] = &[
    "http://127.0.0.1:8765/app/assets/logo.png",
    "http://127.0.0.1:8765/app/assets/p1.JPG?v=2",
    "https://fonts.gstatic.com/s/roboto/v1/a.woff2",
    "http://h/fonts/regular.woff",
    "http://h/styles/main.css#x",
    "https://fonts.googleapis.com/css2?family=Roboto",
    "http://h/app.js",
    "http://h/module.mjs?x=1",
    "http://h/video/intro.mp4",
    "http://h/index.html",
    "http://h/api/v1/orders?page=1",
    "http://h/",
    "data:image/png;base64,iVBORw0KGgo=",
    "data:font/woff2;base64,d09GMgAB",
    "data:text/plain,hello",
    "http://h/very/long/path/picture.png... <truncated>",
    "http://h/a b.png",
];
const STATUSES: &[&str] = &[
    "200",
    "200",
    "304",
    "204",
    "404",
    "500",
    "net::ERR_FAILED",
    "net::ERR_INTERNET_DISCONNECTED",
    "pending",
    "",
    "999",
];
const TYPES: &[&str] = &[
    "log", "log", "info", "debug", "verbose", "error", "warn", "issue", "assert", "table", "count",
    "trace",
];
const MESSAGES: &[&str] = &[
    "App booting [object Object] (2 args)",
    "render: 1 (1 args)",
    "render: 2 (1 args)",
    "Failed to load resource: the server responded with a status of 404 (File not found) (0 args)",
    "tick 7 [3 times]",
    "[widget] loaded v2.3.1 (1 args)",
    "msgid=9 [error] inside the text",
    "",
];

fn network_section(rng: &mut XorShift, next_id: &mut u64) -> String {
    let n = rng.below(30);
    let mut out = format!("## Network requests\nShowing 1-{n} of {n} (Page 1 of 1).");
    for _ in 0..n {
        let id = match rng.below(10) {
            0 => rng.below(5),
            _ => {
                *next_id += 1 + rng.below(3);
                *next_id
            }
        };
        let method = rng.pick(&["GET", "POST", "GET"]);
        let url = rng.pick(URLS);
        let status = rng.pick(STATUSES);
        out.push_str(&format!("\nreqid={id} {method} {url} [{status}]"));
        if rng.below(15) == 0 {
            out.push_str("\nnot a request line");
        }
    }
    out
}

fn console_section(rng: &mut XorShift, next_id: &mut u64) -> String {
    let n = rng.below(40);
    let mut out = format!("## Console messages\nShowing 1-{n} of {n} (Page 1 of 1).");
    let mut stacks = false;
    for _ in 0..n {
        *next_id += 1 + rng.below(2);
        let ty = rng.pick(TYPES);
        let message = rng.pick(MESSAGES);
        out.push_str(&format!("\nmsgid={} [{ty}] {message}", *next_id));
        if rng.below(4) == 0 {
            stacks = true;
            for frame in 0..rng.below(9) {
                out.push_str(&format!("\n  at f{frame} (http://h/app.js:{frame}:2)"));
            }
        }
        if rng.below(10) == 0 {
            out.push_str("\n  --- async ---");
        }
    }
    if stacks && rng.below(2) == 0 {
        out.push_str("\nNote: stack trace line and column numbers use 1-based indexing");
    }
    out
}

fn snapshot_section(rng: &mut XorShift) -> String {
    const ROLES: &[&str] = &[
        "link",
        "button",
        "generic",
        "heading",
        "navigation",
        "image",
    ];
    let mut out = String::from(
        "## Latest page snapshot\nuid=1_0 RootWebArea \"root\" url=\"http://h/index.html\"",
    );
    let mut depth = 1usize;
    for i in 1..=rng.below(80) {
        depth = match rng.below(3) {
            0 => depth + 1,
            1 => depth.saturating_sub(1).max(1),
            _ => depth,
        };
        let role = rng.pick(ROLES);
        out.push_str(&format!(
            "\n{}uid=1_{i} {role} \"name {} reqid=7 msgid=8\"",
            "  ".repeat(depth),
            rng.below(5)
        ));
    }
    out
}

/// One result: its tool, its JSON, and its text.
fn generate(rng: &mut XorShift) -> (&'static str, String, String) {
    let tool = *[
        "list_network_requests",
        "list_console_messages",
        "take_snapshot",
        "click",
        "navigate_page",
    ]
    .get(rng.below(5) as usize)
    .unwrap_or(&"click");
    let mut ids = (rng.below(1000), rng.below(1000));
    let mut sections = Vec::new();
    if rng.below(3) == 0 {
        sections.push("Successfully clicked on the element".to_string());
    }
    if rng.below(2) == 0 {
        sections.push("## Pages\n1: http://h/index.html [selected]".to_string());
    }
    if tool == "list_network_requests" || rng.below(3) == 0 {
        sections.push(network_section(rng, &mut ids.0));
    }
    if tool == "list_console_messages" || rng.below(3) == 0 {
        sections.push(console_section(rng, &mut ids.1));
    }
    if tool == "take_snapshot" || rng.below(3) == 0 {
        sections.push(snapshot_section(rng));
    }
    let mut text = sections.join("\n");
    if rng.below(2) == 0 {
        text.push('\n');
    }
    let mut result = json!({"content": [{"type": "text", "text": text}]});
    if rng.below(5) == 0 {
        result["isError"] = json!(true);
    }
    (tool, result.to_string(), text)
}

/// Ids listed at the start of a line (`reqid=12 …`).
fn listed_ids(text: &str, prefix: &str) -> HashSet<u64> {
    text.lines()
        .filter_map(|l| l.strip_prefix(prefix))
        .filter_map(|rest| {
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            digits.parse().ok()
        })
        .collect()
}

/// Ids a summary line (`[hidden …: image 3 reqid=4,7-9; …]`) names.
fn ids_named_in_summaries(text: &str, prefix: &str) -> HashSet<u64> {
    let mut named = HashSet::new();
    for line in text.lines().filter(|l| l.starts_with("[hidden ")) {
        for (at, _) in line.match_indices(prefix) {
            let rest = line.get(at + prefix.len()..).unwrap_or("");
            let list: String = rest
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == ',' || *c == '-')
                .collect();
            named.extend(parse_id_ranges(&list));
        }
    }
    named
}

fn snapshot_uids(text: &str) -> HashSet<String> {
    let Some(at) = text.find(sections::SNAPSHOT_HEADER) else {
        return HashSet::new();
    };
    let body = text.get(at..).unwrap_or("");
    let body = body.split_once('\n').map_or("", |(_, b)| b);
    crate::notation::cdp::parse::parse(body)
        .uids()
        .map(str::to_string)
        .collect()
}

#[test]
fn generated_results_keep_every_invariant() {
    let mut rng = XorShift(0xdead_beef_cafe_f00d);
    let mut changed = 0;
    let mut hidden = [0usize; 2];
    for case in 0..CASES {
        let (tool, json, text_in) = generate(&mut rng);
        for level in Level::ALL {
            let options = ResultOptions::for_level(level);
            let out = filter_tool_result(tool, &json, &options).expect("a CallToolResult");
            if level == Level::Off {
                assert!(out.is_none(), "case {case}: off changed the result");
            }
            let Some(out) = out else { continue };
            changed += 1;
            let value: Value = serde_json::from_str(&out.json).expect("JSON out");
            let text_out = value["content"][0]["text"]
                .as_str()
                .unwrap_or("")
                .to_string();
            let what = format!("case {case} {tool} {level}");
            for (prefix, hidden) in ["reqid=", "msgid="].into_iter().zip(hidden.iter_mut()) {
                let shown = listed_ids(&text_out, prefix);
                let named = ids_named_in_summaries(&text_out, prefix);
                for id in listed_ids(&text_in, prefix) {
                    if !shown.contains(&id) {
                        *hidden += 1;
                    }
                    assert!(
                        shown.contains(&id) || named.contains(&id),
                        "{what}: {prefix}{id} neither shown nor named\n{text_in}\n---\n{text_out}"
                    );
                }
            }
            for line in text_in.lines() {
                let failed = parse_request_line(line).is_some_and(|r| is_failed(r.status));
                let kept_type = line
                    .strip_prefix("msgid=")
                    .is_some_and(|rest| always_kept(rest.split(['[', ']']).nth(1).unwrap_or("")));
                if failed || kept_type {
                    assert!(
                        text_out.lines().any(|l| l == line),
                        "{what}: lost {line:?}\n{text_out}"
                    );
                }
            }
            let uids_in = snapshot_uids(&text_in);
            for uid in snapshot_uids(&text_out) {
                assert!(uids_in.contains(&uid), "{what}: made-up uid {uid}");
            }
            if level == Level::Light {
                // Light is lossless: only the snapshot section may change.
                let lists = |t: &str| -> Vec<String> {
                    t.lines()
                        .filter(|l| l.starts_with("reqid=") || l.starts_with("msgid="))
                        .map(str::to_string)
                        .collect()
                };
                assert_eq!(lists(&text_in), lists(&text_out), "{what}: light hid lines");
            }
            assert_eq!(
                value.get("isError"),
                serde_json::from_str::<Value>(&json)
                    .ok()
                    .as_ref()
                    .and_then(|v| v.get("isError")),
                "{what}: isError changed"
            );
        }
    }
    // The generator must reach the filters, or this test proves nothing.
    assert!(changed > CASES, "only {changed} filtered results");
    assert!(
        hidden.iter().all(|&n| n > CASES),
        "too few hidden ids: {hidden:?}"
    );
}
