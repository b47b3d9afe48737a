//! Snapshot deltas through a `Session` (deltas on, moderate or aggressive, tiny limits at
//! times): a fuzzed snapshot, then a second one of the same page, made from the first by
//! fuzzed edits (a name, a state, a role, a node removed, added or duplicated, one state set on
//! every line alike (a select-all over a table's rows), siblings swapped
//! or reversed, a subtree moved to another parent keeping its uids, the root renumbered) or
//! fuzzed whole; chrome-devtools-mcp text or Playwright YAML. When the
//! second is sent as a delta: no panic; every uid it shows or names is in its snapshot (a
//! removed one in the first); every uid of the snapshot is shown or returned by the
//! `expand_snapshot` call of a line naming it; "unchanged since" only when the full filtered
//! snapshot is what it was; a delta's "layout nodes dropped" line is the full snapshot's; the
//! same inputs give the same outputs.
#![no_main]

use std::collections::HashSet;

use fuzz_support::{
    marker_of, mentions, result_text, snapshot_options, snapshot_uids, text_result, Input,
};
use libfuzzer_sys::fuzz_target;
use mcp_snapshot_filter_core::level::Level;
use mcp_snapshot_filter_core::notation::{filter_snapshot, notation_of};
use mcp_snapshot_filter_core::session::{Session, SessionOptions};
use mcp_snapshot_filter_core::snapshot::delta::Sent;
use mcp_snapshot_filter_core::snapshot::marker::read_marker;
use mcp_snapshot_filter_core::snapshot::SnapshotOptions;
use mcp_snapshot_filter_core::stats::StatsMode;
use serde_json::{json, Value};

const EDITS: usize = 4;
const ROLES: [&str; 6] = ["button", "link", "generic", "StaticText", "row", "heading"];

/// One fuzzed edit of a snapshot's lines (the line picked by `at`).
fn edit(lines: &mut Vec<String>, op: u8, at: usize, yaml: bool, fresh: &mut u32) {
    match op % 12 {
        11 => return check_alike(lines, at, yaml),
        8 => return move_subtree(lines, at, usize::from(op >> 4)),
        9 => return reverse_siblings(lines, at),
        10 => return change_role(lines, at, usize::from(op >> 4)),
        _ => {}
    }
    if lines.len() < 2 {
        return;
    }
    let i = 1 + at % (lines.len() - 1);
    let indent_of = |l: &str| l.len() - l.trim_start().len();
    let indent = indent_of(&lines[i]);
    let subtree_end = |from: usize, lines: &[String]| {
        let mut e = from + 1;
        while lines.get(e).is_some_and(|l| indent_of(l) > indent) {
            e += 1;
        }
        e
    };
    match op % 8 {
        0 => match lines[i].find('"') {
            Some(q) => lines[i].insert_str(q + 1, "edited "),
            None => lines[i].push_str(" \"edited\""),
        },
        1 if yaml => match lines[i].find(" [ref=") {
            Some(r) => lines[i].insert_str(r, " [checked]"),
            None => lines[i].push_str(" [checked]"),
        },
        1 => lines[i].push_str(" checked"),
        2 => {
            let end = subtree_end(i, lines);
            lines.drain(i..end);
        }
        3 => {
            *fresh += 1;
            let role = ROLES[usize::from(op >> 3) % ROLES.len()];
            let pad = " ".repeat(indent);
            let prefix = first_uid_prefix(lines);
            lines.insert(
                i,
                if yaml {
                    format!("{pad}- {role} \"new {fresh}\" [ref=e9{fresh}]")
                } else {
                    format!("{pad}uid={prefix}_9{fresh} {role} \"new {fresh}\"")
                },
            );
        }
        4 => {
            let a_end = subtree_end(i, lines);
            if lines.get(a_end).is_some_and(|l| indent_of(l) == indent) {
                let b_end = subtree_end(a_end, lines);
                let b: Vec<String> = lines.drain(a_end..b_end).collect();
                for (k, l) in b.into_iter().enumerate() {
                    lines.insert(i + k, l);
                }
            }
        }
        5 => {
            let copy = lines[i].clone();
            lines.insert(i, copy);
        }
        6 if !yaml => {
            // A new document: the root's uid changes.
            if let Some(root) = lines
                .iter_mut()
                .find(|l| l.trim_start().starts_with("uid="))
            {
                *root = root.replacen("uid=", "uid=7", 1);
            }
        }
        _ => lines[i].push_str(" value=\"x\""),
    }
}

/// The end (exclusive) of the subtree whose first line is `from`.
fn subtree_end_of(lines: &[String], from: usize) -> usize {
    let indent_of = |l: &str| l.len() - l.trim_start().len();
    let indent = lines.get(from).map_or(0, |l| indent_of(l));
    let mut e = from + 1;
    while lines.get(e).is_some_and(|l| indent_of(l) > indent) {
        e += 1;
    }
    e
}

/// A node moved to another parent with its subtree, keeping its uids (a DOM node moved): cut
/// out, then put in as the first child of another line (`to` picks it), reindented.
fn move_subtree(lines: &mut Vec<String>, at: usize, to: usize) {
    if lines.len() < 3 {
        return;
    }
    let indent_of = |l: &str| l.len() - l.trim_start().len();
    let i = 1 + at % (lines.len() - 1);
    let end = subtree_end_of(lines, i);
    let moved: Vec<String> = lines.drain(i..end).collect();
    let Some(first) = moved.first() else { return };
    let from_indent = indent_of(first);
    let target = to % lines.len();
    let new_indent = lines.get(target).map_or(0, |l| indent_of(l)) + 2;
    for (k, line) in moved.iter().enumerate() {
        let body = line.get(from_indent.min(indent_of(line))..).unwrap_or(line);
        lines.insert(target + 1 + k, format!("{}{body}", " ".repeat(new_indent)));
    }
}

/// The children of a line's parent in reverse order (a list re-sorted).
/// Every line at the indent and with the role of line `at` checked, or unchecked when it is
/// (a "select all" over a table's rows: one state of one column in every row).
fn check_alike(lines: &mut [String], at: usize, yaml: bool) {
    if lines.len() < 2 {
        return;
    }
    let i = 1 + at % (lines.len() - 1);
    let shape = |l: &str| {
        let indent = l.len() - l.trim_start().len();
        let mut words = l.trim_start().split(' ');
        let first = words.next().unwrap_or("");
        let role = if yaml { first } else { words.next().unwrap_or("") };
        (indent, role.to_string())
    };
    let want = shape(&lines[i]);
    let word = if yaml { " [checked]" } else { " checked" };
    let on = !lines[i].contains(word);
    for line in lines.iter_mut().filter(|l| shape(l) == want) {
        if !on {
            *line = line.replace(word, "");
        } else if !line.contains(word) {
            match line.find(" [ref=").filter(|_| yaml) {
                Some(r) => line.insert_str(r, word),
                None => line.push_str(word),
            }
        }
    }
}

fn reverse_siblings(lines: &mut Vec<String>, at: usize) {
    if lines.len() < 3 {
        return;
    }
    let indent_of = |l: &str| l.len() - l.trim_start().len();
    let i = 1 + at % (lines.len() - 1);
    let indent = indent_of(&lines[i]);
    // The run of siblings around it: back to the parent, on to the parent's end.
    let mut start = i;
    while start > 0 && indent_of(&lines[start - 1]) >= indent {
        start -= 1;
    }
    let mut end = i;
    while lines.get(end).is_some_and(|l| indent_of(l) >= indent) {
        end += 1;
    }
    let mut subtrees: Vec<Vec<String>> = Vec::new();
    let mut k = start;
    while k < end {
        let e = subtree_end_of(lines, k).min(end);
        subtrees.push(lines[k..e].to_vec());
        k = e;
    }
    subtrees.reverse();
    let flat: Vec<String> = subtrees.into_iter().flatten().collect();
    lines.splice(start..end, flat);
}

/// A node's role changed (the word after its uid).
fn change_role(lines: &mut [String], at: usize, role: usize) {
    if lines.len() < 2 {
        return;
    }
    let i = 1 + at % (lines.len() - 1);
    let line = &lines[i];
    let trimmed = line.trim_start();
    let indent = line.len() - trimmed.len();
    let mut words = trimmed.splitn(3, ' ');
    let (Some(uid), Some(_old)) = (words.next(), words.next()) else {
        return;
    };
    let rest = words.next().map(|r| format!(" {r}")).unwrap_or_default();
    lines[i] = format!(
        "{}{uid} {}{rest}",
        " ".repeat(indent),
        ROLES[role % ROLES.len()]
    );
}

/// The "layout nodes dropped" lines of a text.
fn dropped_lines(text: &str) -> Vec<&str> {
    text.lines()
        .map(str::trim_start)
        .filter(|l| l.starts_with('…') && l.contains("layout nodes dropped"))
        .collect()
}

/// Whether an element uid occurs on more than one node.
fn repeats_a_uid(text: &str) -> bool {
    let mut implied = Vec::new();
    let tree = notation_of(text).parse(text, &mut implied);
    let mut seen = HashSet::new();
    let repeats = tree.uids().any(|u| !seen.insert(u.to_string()));
    repeats
}

fn first_uid_prefix(lines: &[String]) -> String {
    lines
        .iter()
        .find_map(|l| {
            let rest = l.trim_start().strip_prefix("uid=")?;
            Some(rest.split('_').next()?.to_string())
        })
        .unwrap_or_else(|| "1".into())
}

/// The result the upstream sends for `body`, and the call's tool and arguments.
fn upstream(body: &str, yaml: bool) -> (&'static str, String, &'static str) {
    if yaml {
        let text = format!("### Page\n- Page URL: http://h/\n### Snapshot\n```yaml\n{body}\n```\n");
        ("browser_snapshot", text_result(&text), "{}")
    } else {
        let text = format!("# take_snapshot response\n## Latest page snapshot\n{body}");
        ("take_snapshot", text_result(&text), r#"{"pageId":1}"#)
    }
}

/// The snapshot body of a sent result's text.
fn body_of(text: &str, yaml: bool) -> &str {
    if yaml {
        let start = text.find("```yaml\n").map_or(text.len(), |i| i + 8);
        let rest = &text[start..];
        &rest[..rest.find("\n```").unwrap_or(rest.len())]
    } else {
        let start = text
            .find("## Latest page snapshot\n")
            .map_or(text.len(), |i| i + 24);
        &text[start..]
    }
}

fn session(level: Level, options: &SnapshotOptions) -> Session {
    let mut o = SessionOptions::for_level(level);
    o.snapshot = options.limits.clone();
    o.stats = StatsMode::Off;
    o.snapshot_deltas = true;
    o.proxy_tools = true;
    // Expand answers are read whole here; the budget has its own target.
    o.max_tokens = 0;
    Session::new(o)
}

/// What the session sends for each body: the text, and how it was sent.
fn send_all(s: &mut Session, bodies: &[&str], yaml: bool) -> Vec<(String, Option<Sent>)> {
    bodies
        .iter()
        .map(|body| {
            let (tool, result, args) = upstream(body, yaml);
            let out = s
                .filter_tool_result(tool, &result, Some(args))
                .expect("a CallToolResult is accepted")
                .unwrap_or(result);
            (result_text(&out), s.last_sent())
        })
        .collect()
}

fn expand(s: &mut Session, args: Value) -> Value {
    let answer = s
        .call_proxy_tool("expand_snapshot", Some(&args.to_string()))
        .expect("expand_snapshot answers");
    serde_json::from_str(&answer).expect("the answer is JSON")
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let level = if input.byte() & 1 == 0 {
        Level::Moderate
    } else {
        Level::Aggressive
    };
    let flags = input.byte();
    let yaml = flags & 1 == 1;
    let options = snapshot_options(&mut input, level);
    let edits: Vec<(u8, usize)> = (0..EDITS)
        .map(|_| {
            let op = input.byte();
            let at = usize::from(input.byte()) << 8 | usize::from(input.byte());
            (op, at)
        })
        .collect();
    let (first, second) = if flags & 2 == 2 {
        // Both fuzzed.
        let first = input.field();
        (first, input.rest())
    } else {
        let first = input.rest();
        let mut lines: Vec<String> = first.lines().map(str::to_string).collect();
        let mut fresh = 0;
        for &(op, at) in edits.iter().take(1 + usize::from(flags >> 2) % EDITS) {
            edit(&mut lines, op, at, yaml, &mut fresh);
        }
        let mut second = lines.join("\n");
        second.push('\n');
        (first, second)
    };
    if yaml && !(first.trim_start().starts_with("- ") && second.trim_start().starts_with("- ")) {
        return;
    }

    if let Some(dir) = std::env::var_os("FUZZ_DUMP") {
        // Replaying a crash: the two snapshots, for a regression test.
        let dir = std::path::PathBuf::from(dir);
        let _ = std::fs::write(dir.join("first.txt"), &first);
        let _ = std::fs::write(dir.join("second.txt"), &second);
    }
    let mut s = session(level, &options);
    let sent = send_all(&mut s, &[&first, &second], yaml);
    let mut again = session(level, &options);
    assert_eq!(
        send_all(&mut again, &[&first, &second], yaml),
        sent,
        "not deterministic"
    );
    let (text, Some(Sent::Delta { counts, .. })) = &sent[1] else {
        return;
    };
    let body = body_of(text, yaml);
    let uids = snapshot_uids(&second);
    let before = snapshot_uids(&first);
    // A marker lists uids between `(uid ` and `)`, split at `, ` and `…`: a fuzzed ref holding
    // those (never one of upstream's) cannot be read back from it.
    // A quote or a control character in a ref is escaped where YAML quotes the line: neither
    // can be found back in the text as it is.
    let syntax = |u: &String| {
        u.contains([')', ',', '…', ':', ' ', '\'', '"'])
            || u.chars().any(char::is_control)
            || u.is_empty()
    };
    if uids.iter().chain(&before).any(syntax) {
        return;
    }
    // Playwright MCP has one page for the proxy: no pageId.
    let with_page = |mut args: Value| {
        if !yaml {
            args["pageId"] = json!(1);
        }
        args
    };

    if counts.is_empty() {
        // The short form: nothing the agent holds changed.
        assert_eq!(
            body.lines().count(),
            1,
            "short form of more than one line:\n{body}"
        );
        // (The input's trailing newline is kept in a full snapshot; it is no node.)
        assert_eq!(
            filter_snapshot(&first, &options)
                .text
                .trim_end_matches('\n'),
            filter_snapshot(&second, &options)
                .text
                .trim_end_matches('\n'),
            "called unchanged, yet the filtered snapshot changed:\n{body}"
        );
        let whole = expand(&mut s, with_page(json!({})));
        assert!(whole.get("isError").is_none(), "{whole}");
        return;
    }

    // Each layout-nodes-dropped line of the delta is one of the full view's (a document inside
    // an unchanged run, an iframe, has its line in that run).
    let have = dropped_lines(body);
    if !have.is_empty() && !yaml {
        let full = filter_snapshot(&second, &options).text;
        let want = dropped_lines(&full);
        // A full view no shorter than the input goes as it came: no line to compare with.
        let as_came = full.trim_end_matches('\n') == second.trim_end_matches('\n');
        for line in have.into_iter().filter(|_| !as_came) {
            if second.lines().any(|l| l.trim_start() == line) {
                continue;
            }
            assert!(
                want.contains(&line),
                "layout nodes dropped, not the full view's {want:?}:\n{body}"
            );
        }
    }

    let mut covered: HashSet<&str> = snapshot_uids(body)
        .into_iter()
        .filter_map(|u| uids.get(&u).map(String::as_str))
        .collect();
    for uid in snapshot_uids(body) {
        assert!(
            uids.contains(&uid),
            "{uid} shown, not in the snapshot:\n{body}"
        );
    }
    for line in body.lines() {
        let Some(marker) = marker_of(line) else {
            continue;
        };
        // A line the parser could not read is passed as it came: a fuzzed input's own "…" line
        // is no marker of ours.
        if second.lines().any(|l| l == line) {
            continue;
        }
        let m = read_marker(marker);
        // A marker that names no uid (nodes without a ref dropped) has nothing to bring back.
        if m.expand_uid.is_none() && m.listed.is_empty() && !marker.contains("uid ") {
            continue;
        }
        if m.expand_uid.is_none() && marker.contains("layout nodes dropped") {
            // A document without a uid (a Playwright root without a ref) has no call for its
            // dropped nodes, as in the full view: each one named is expanded by its own uid.
            for uid in m
                .listed
                .iter()
                .chain(m.range.iter().flat_map(|(a, b)| [a, b]))
            {
                let answer = expand(&mut s, with_page(json!({ "uid": uid })));
                assert!(answer.get("isError").is_none(), "{marker}: {answer}");
                let got = answer["content"][0]["text"].as_str().unwrap_or("");
                covered.extend(uids.iter().map(String::as_str).filter(|u| mentions(got, u)));
            }
            continue;
        }
        if m.expand_uid.is_none() && !marker.starts_with("… removed") {
            // The open case (fuzz/README.md): a hidden run no call can name, which needs a
            // uid repeated on several elements; on any other page it is a failure.
            assert!(
                repeats_a_uid(&second),
                "a marker without a call: {marker}\n{body}"
            );
            return;
        }
        let named: Vec<&str> = m
            .listed
            .iter()
            .copied()
            .chain(m.range.into_iter().flat_map(|(a, b)| [a, b]))
            .collect();
        if marker.starts_with("… removed") {
            for uid in named {
                assert!(before.contains(uid), "{uid} removed, never sent:\n{body}");
            }
            continue;
        }
        for uid in named.iter().chain(&m.expand_uid).chain(&m.until) {
            assert!(
                uids.contains(*uid),
                "{uid} named, not in the snapshot: {marker}\n{body}"
            );
        }
        let Some(uid) = m.expand_uid else {
            continue;
        };
        let mut args = with_page(json!({ "uid": uid }));
        if let Some(until) = m.until {
            args["until"] = json!(until);
        }
        let answer = expand(&mut s, args);
        assert!(answer.get("isError").is_none(), "{marker}: {answer}");
        let got = answer["content"][0]["text"].as_str().unwrap_or("");
        covered.extend(uids.iter().map(String::as_str).filter(|u| mentions(got, u)));
    }
    if repeats_a_uid(&first) || repeats_a_uid(&second) {
        // The open case (fuzz/README.md): coverage under a uid repeated on several elements.
        return;
    }
    let missing: Vec<&String> = uids
        .iter()
        .filter(|u| !covered.contains(u.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "uids neither shown nor named: {missing:?}\n{body}"
    );
});
