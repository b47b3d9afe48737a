//! A reader of our outputs, written apart from the writers (it shares no code with them): it
//! reads the light notation (chrome-devtools-mcp) and our Playwright YAML back into nodes —
//! lines, siblings after `|`, children after ` > `, links `[name](url)`, and tables (the header
//! naming the columns, one line per record) — and checks every uid it reads against the raw
//! snapshot: the same role, the name (or the start of it, when cut), the value and the states.
//! Run over every corpus body and every snapshot of our own recorded pages, at every level.

use std::collections::HashMap;

use super::{filter_snapshot, notation_of};
use crate::level::Level;
use crate::snapshot::tree::NodeKind;
use crate::snapshot::SnapshotOptions;

/// A node as the reader finds it in an output.
#[derive(Debug, Clone, Default, PartialEq)]
struct Read {
    uid: String,
    role: String,
    name: Option<String>,
    value: Option<String>,
    /// Bare words (`checked`, `disabled`, …), sorted.
    states: Vec<String>,
}

/// A run line of a delta's table, `… 12 rows unchanged[ but [not ]WORD in column K] (uid A…B)`:
/// rows the agent holds, as they were, or with one state of one column set (or unset) in each.
#[derive(Debug, Clone)]
struct RowRun {
    rows: usize,
    /// (gained, word, column from 0).
    toggled: Option<(bool, String, usize)>,
    /// The column's role and name pattern in the table's header (with `toggled`).
    column: Option<(String, Option<String>)>,
    first: String,
    last: String,
}

fn row_run(line: &str) -> Option<RowRun> {
    let rest = line.strip_prefix("… ")?;
    let (rows, rest) = rest.split_once(" rows unchanged")?;
    let (claim, uids) = rest.split_once(" (uid ")?;
    let uids = uids.strip_suffix(')')?;
    let (first, last) = uids.split_once('…').or_else(|| uids.split_once(", "))?;
    let toggled = match claim.strip_prefix(" but ") {
        None if claim.is_empty() => None,
        None => return None,
        Some(c) => {
            let (on, c) = match c.strip_prefix("not ") {
                Some(c) => (false, c),
                None => (true, c),
            };
            let (word, col) = c.split_once(" in column ")?;
            Some((
                on,
                word.to_string(),
                col.parse::<usize>().ok()?.checked_sub(1)?,
            ))
        }
    };
    Some(RowRun {
        rows: rows.parse().ok()?,
        toggled,
        column: None,
        first: first.to_string(),
        last: last.to_string(),
    })
}

/// Words that say a node can take a state, written only with the state.
const CAPABILITIES: [&str; 4] = ["disableable", "expandable", "focusable", "selectable"];

fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some(other) => {
                // `\x` for a delimiter or a backslash; any other backslash stays.
                if !matches!(other, '"' | '\\' | ']' | '|') {
                    out.push('\\');
                }
                out.push(other)
            }
            None => out.push('\\'),
        }
    }
    out
}

/// Reads a quoted string at the start of `s` (after the opening `"`): (content, rest).
fn quoted(s: &str, close: char) -> Option<(String, &str)> {
    let mut escaped = false;
    for (i, c) in s.char_indices() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == close {
            return Some((unescape(s.get(..i)?), s.get(i + 1..)?));
        }
    }
    None
}

/// Splits `s` at `sep` outside quotes, `[…]` and `(…)`, honouring backslashes.
fn split_top(s: &str, sep: &str) -> Vec<String> {
    split_outside(s, sep, true)
}

/// `split_top`; without `links`, outside quotes only (a table row's bare text may hold `[`).
fn split_outside(s: &str, sep: &str, links: bool) -> Vec<String> {
    let mut parts = Vec::new();
    let (mut quote, mut bracket, mut paren, mut escaped) = (false, false, 0usize, false);
    let mut start = 0;
    let mut i = 0;
    let bytes = s.as_bytes();
    while i < bytes.len() {
        let c = bytes[i];
        if escaped {
            escaped = false;
        } else if c == b'\\' {
            escaped = true;
        } else if quote {
            quote = c != b'"';
        } else if bracket {
            bracket = c != b']';
        } else if paren > 0 {
            match c {
                b'(' => paren += 1,
                b')' => paren -= 1,
                _ => {}
            }
        } else if c == b'"' {
            quote = true;
        } else if links && c == b'[' {
            bracket = true;
        } else if links && c == b'(' && i > 0 && bytes[i - 1] == b']' {
            paren = 1;
        } else if c.is_ascii() && s[i..].starts_with(sep) {
            parts.push(s[start..i].to_string());
            i += sep.len();
            start = i;
            continue;
        }
        i += 1;
    }
    parts.push(s[start..].to_string());
    parts
}

/// Attributes after a node's role and name: `key=value` (bare or quoted) and bare words.
fn attrs(mut s: &str, node: &mut Read) {
    loop {
        s = s.trim_start_matches(' ');
        if s.is_empty() {
            break;
        }
        let end = s.find([' ', '=']).unwrap_or(s.len());
        let key = &s[..end];
        s = &s[end..];
        if let Some(rest) = s.strip_prefix('=') {
            let (value, rest) = match rest.strip_prefix('"') {
                Some(q) => quoted(q, '"').unwrap_or((q.to_string(), "")),
                None => {
                    let e = rest.find(' ').unwrap_or(rest.len());
                    (rest[..e].to_string(), &rest[e..])
                }
            };
            if key == "value" {
                node.value = Some(value);
            }
            s = rest;
        } else if key != "[selected" && !key.is_empty() {
            node.states.push(key.to_string());
        } else {
            break;
        }
    }
    node.states.sort();
}

/// One segment of a light line: `UID role "name" attrs`, `UID [name](url)`, `UID "text"`.
fn segment(s: &str) -> Option<Read> {
    let s = s.trim_start();
    let end = s.find(' ').unwrap_or(s.len());
    let uid = &s[..end];
    if !is_uid(uid) {
        return None;
    }
    let mut node = Read {
        uid: uid.to_string(),
        ..Read::default()
    };
    let mut rest = s[end..].trim_start_matches(' ');
    if let Some(link) = rest.strip_prefix('[') {
        let (name, after) = quoted(link, ']')?;
        node.role = "link".into();
        node.name = Some(name);
        let after = after.strip_prefix('(')?;
        let mut depth = 1;
        let close = after.char_indices().find(|&(_, c)| {
            match c {
                '(' => depth += 1,
                ')' => depth -= 1,
                _ => {}
            }
            depth == 0
        })?;
        rest = &after[close.0 + 1..];
    } else if !rest.starts_with('"') && !rest.is_empty() {
        let e = rest.find(' ').unwrap_or(rest.len());
        node.role = rest[..e].to_string();
        rest = &rest[e..];
    }
    let trimmed = rest.trim_start_matches(' ');
    if let Some(q) = trimmed.strip_prefix('"') {
        let (name, after) = quoted(q, '"')?;
        node.name = Some(name);
        rest = after;
    }
    attrs(rest, &mut node);
    Some(node)
}

/// A uid as either upstream writes it: `1_75` (chrome-devtools-mcp), `e12` or `f1e2`
/// (Playwright refs).
fn is_uid(t: &str) -> bool {
    let cdp = t.split_once('_').is_some_and(|(a, b)| {
        !a.is_empty() && !b.is_empty() && a.bytes().chain(b.bytes()).all(|c| c.is_ascii_digit())
    });
    let pw = {
        let t = match t.strip_prefix('f') {
            Some(rest) => rest.trim_start_matches(|c: char| c.is_ascii_digit()),
            None => t,
        };
        t.strip_prefix('e')
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()))
    };
    cdp || pw
}

/// One cell of a table row other than a text cell: `[uid][ "name"][ value][ attrs]` (the value
/// when the header says `value=*`).
fn cell(s: &str, with_value: bool) -> Option<Read> {
    let mut node = Read::default();
    let end = s.find(' ').unwrap_or(s.len());
    let mut rest = s;
    if is_uid(&s[..end]) {
        node.uid = s[..end].to_string();
        rest = &s[end..];
    }
    let trimmed = rest.trim_start_matches(' ');
    if let Some(q) = trimmed.strip_prefix('"') {
        let (name, after) = quoted(q, '"')?;
        node.name = Some(name);
        rest = after;
    }
    if with_value {
        let r = rest.trim_start_matches(' ');
        let (value, after) = match r.strip_prefix('"') {
            Some(q) => quoted(q, '"')?,
            None => {
                let e = r.find(' ').unwrap_or(r.len());
                (r[..e].to_string(), &r[e..])
            }
        };
        node.value = Some(value);
        rest = after;
    }
    attrs(rest, &mut node);
    Some(node)
}

/// A table header's column: role (`text`: a text cell), name pattern, fixed attributes, the
/// number of options after its uid.
#[derive(Debug, Default)]
struct HeaderColumn {
    role: String,
    pattern: Option<String>,
    fixed: Read,
    options: Vec<String>,
}

fn header_columns(line: &str) -> Option<(usize, Vec<HeaderColumn>)> {
    let rest = line.strip_prefix("… table of ")?;
    let (count, rest) = rest.split_once(" records, a line each: ")?;
    // The columns end where the uids of the run are named: ` (uid ` outside quotes.
    let mut cols_text = rest;
    let parts = split_top(rest, " (uid ");
    if let Some(first) = parts.first() {
        cols_text = first;
    }
    let cols_text = cols_text.split("; ").next().unwrap_or("");
    let mut columns = Vec::new();
    for spec in split_top(cols_text, " | ") {
        let mut col = HeaderColumn::default();
        let mut spec = spec.as_str();
        if let Some(at) = spec.find(" [options") {
            let opts = &spec[at + " [options".len()..];
            let mut o = opts;
            while let Some(q) = o.trim_start().strip_prefix('"') {
                let (name, after) = quoted(q, '"')?;
                col.options.push(name);
                o = after;
            }
            spec = &spec[..at];
        }
        let e = spec.find(' ').unwrap_or(spec.len());
        col.role = spec[..e].to_string();
        let mut rest = spec[e..].trim_start_matches(' ');
        if let Some(q) = rest.strip_prefix('"') {
            let (name, after) = quoted(q, '"')?;
            col.pattern = Some(name);
            rest = after;
        }
        attrs(rest, &mut col.fixed);
        columns.push(col);
    }
    Some((count.parse().ok()?, columns))
}

/// Whether `col` is the first `"{name}"` column of `columns` (the record's name).
fn is_key_col(col: &HeaderColumn, columns: &[HeaderColumn]) -> bool {
    columns
        .iter()
        .find(|c| c.pattern.as_deref() == Some("{name}"))
        .is_some_and(|c| std::ptr::eq(c, col))
}

/// One row of a table into its nodes (options included, their uids by the header's rule).
fn table_row(line: &str, columns: &[HeaderColumn], out: &mut Vec<Read>) -> Option<()> {
    let cells = split_outside(line, "|", false);
    if cells.len() != columns.len() {
        return None;
    }
    // The record's name: the `{name}` column's own name.
    let mut record_name = None;
    let mut reads = Vec::new();
    for (col, cell_text) in columns.iter().zip(&cells) {
        // The first `"{name}"` column holds the record's name; a later one repeats it.
        let is_key = col.pattern.as_deref() == Some("{name}") && record_name.is_none();
        if col.role == "text" {
            if is_key {
                record_name = Some(unescape(cell_text));
            }
            continue;
        }
        let with_value = col.fixed.value.as_deref() == Some("*");
        let mut node = cell(cell_text, with_value)?;
        if is_key {
            record_name = node.name.clone();
        }
        node.role = col.role.clone();
        node.states.extend(col.fixed.states.iter().cloned());
        node.states.sort();
        if node.value.is_none() && !with_value {
            node.value = col.fixed.value.clone();
        }
        reads.push((col, node));
    }
    for (col, mut node) in reads {
        if let Some(p) = &col.pattern {
            // A pattern gives the name unless the row writes it.
            if !is_key_col(col, columns) && (node.name.is_none() || !p.contains("{name}")) {
                node.name = Some(match (p.split_once("{name}"), &record_name) {
                    (Some((pre, suf)), Some(name)) => format!("{pre}{name}{suf}"),
                    _ => p.clone(),
                });
            }
        }
        if !col.options.is_empty() {
            let (prefix, n) = node.uid.rsplit_once('_')?;
            let n: u64 = n.parse().ok()?;
            for (k, name) in col.options.iter().enumerate() {
                let selected = node.value.as_deref() == Some(name.as_str());
                out.push(Read {
                    uid: format!("{prefix}_{}", n + 1 + k as u64),
                    role: "option".into(),
                    name: Some(name.clone()),
                    value: None,
                    states: if selected {
                        vec!["selected".into()]
                    } else {
                        Vec::new()
                    },
                });
            }
        }
        if !node.uid.is_empty() {
            out.push(node);
        }
    }
    Some(())
}

/// Every node with a uid that a light-notation output shows. `Err` names a line it cannot read.
fn read_light(text: &str) -> Result<Vec<Read>, String> {
    read_light_runs(text).map(|(reads, _)| reads)
}

/// `read_light`, with the run lines of a delta's tables.
fn read_light_runs(text: &str) -> Result<(Vec<Read>, Vec<RowRun>), String> {
    let mut out = Vec::new();
    let mut runs = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let t = line.trim_start_matches(' ');
        if t.is_empty() || line.starts_with("#snapshot-filter") || t.starts_with('\\') {
            continue;
        }
        if t.starts_with('…') {
            if let Some((count, columns)) = header_columns(t) {
                let indent = line.len() - t.len();
                let mut left = count;
                while left > 0 {
                    let row = lines.next().ok_or("table ends early")?;
                    let row = row.get(indent..).ok_or("row less indented")?;
                    if let Some(mut run) = row_run(row) {
                        run.column = run
                            .toggled
                            .as_ref()
                            .and_then(|(_, _, c)| columns.get(*c))
                            .map(|c| (c.role.clone(), c.pattern.clone()));
                        // A delta's run of rows the agent holds.
                        left = left
                            .checked_sub(run.rows)
                            .ok_or_else(|| format!("run past the table's rows: {row}"))?;
                        runs.push(run);
                        continue;
                    }
                    table_row(row, &columns, &mut out)
                        .ok_or_else(|| format!("unreadable row: {row}"))?;
                    left -= 1;
                }
            }
            continue;
        }
        // `parent > child|child`: the parent is the first segment before ` > `.
        for part in split_top(t, " > ") {
            for seg in split_top(&part, "|") {
                match segment(&seg) {
                    Some(node) => out.push(node),
                    None => return Err(format!("unreadable segment {seg:?} in {line}")),
                }
            }
        }
    }
    Ok((out, runs))
}

/// The uids written in the table rows of a light-notation output.
pub(crate) fn table_row_uids(text: &str) -> std::collections::HashSet<String> {
    let mut out = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let t = line.trim_start_matches(' ');
        if let Some((count, columns)) = header_columns(t) {
            let indent = line.len() - t.len();
            for row in lines.by_ref().take(count) {
                let _ = table_row(row.get(indent..).unwrap_or(""), &columns, &mut out);
            }
        }
    }
    out.into_iter().map(|r| r.uid).collect()
}

/// Every node with a ref that our Playwright YAML shows: explicit `[ref=…]` lines, and table
/// rows (quoted items after a `… table of` header).
fn read_yaml(text: &str) -> Result<Vec<Read>, String> {
    let mut out = Vec::new();
    let mut lines = text.lines();
    let yaml_item = |line: &str| -> Option<String> {
        let t = line.trim_start().strip_prefix("- '")?.strip_suffix('\'')?;
        Some(t.replace("''", "'"))
    };
    while let Some(line) = lines.next() {
        if let Some(node) = yaml_element(line) {
            out.push(node);
            continue;
        }
        let Some(item) = yaml_item(line) else {
            continue;
        };
        if let Some((count, columns)) = header_columns(&item) {
            for _ in 0..count {
                let row = lines.next().and_then(yaml_item).ok_or("table ends early")?;
                table_row(&row, &columns, &mut out)
                    .ok_or_else(|| format!("unreadable row: {row}"))?;
            }
        }
    }
    Ok(out)
}

/// A YAML element line with an explicit ref: `- role "name" [state] [key=v] [ref=e12]…`.
fn yaml_element(line: &str) -> Option<Read> {
    let item = line.trim_start().strip_prefix("- ")?;
    // Our writer quotes a key holding YAML's special characters: read only plain keys.
    if item.starts_with(['\'', '"']) {
        return None;
    }
    let key = match item.find(": ") {
        Some(at) => &item[..at],
        None => item.strip_suffix(':').unwrap_or(item),
    };
    let at = key.find(" [ref=")?;
    let uid_end = key[at + 6..].find(']')?;
    let mut node = Read {
        uid: key[at + 6..at + 6 + uid_end].to_string(),
        ..Read::default()
    };
    let end = key.find(' ').unwrap_or(key.len());
    node.role = key[..end].to_string();
    let mut rest = &key[end..];
    if let Some(q) = rest.strip_prefix(" \"") {
        let (name, after) = quoted(q, '"')?;
        node.name = Some(name);
        rest = after;
    }
    for part in rest.split(" [").skip(1) {
        let word = part.strip_suffix(']').unwrap_or(part);
        if !word.contains('=') {
            node.states.push(word.to_string());
        }
    }
    node.states.sort();
    Some(node)
}

/// What is wrong with the output of `body` at `options`: each node read whose role, name,
/// value or states differ from the raw snapshot's node with that uid.
fn reader_problems(body: &str, options: &SnapshotOptions) -> Vec<String> {
    let out = filter_snapshot(body, options).text;
    if out == body {
        return Vec::new();
    }
    let yaml = !out.starts_with("#snapshot-filter");
    let read = match if yaml {
        read_yaml(&out)
    } else {
        read_light(&out)
    } {
        Ok(r) => r,
        Err(e) => return vec![e],
    };
    problems_against(body, read, yaml)
}

/// Each node of `read` whose role, name, value or states differ from the raw snapshot's node
/// with that uid (`body`).
fn problems_against(body: &str, read: Vec<Read>, yaml: bool) -> Vec<String> {
    let mut implied = Vec::new();
    let raw = notation_of(body).parse(body, &mut implied);
    // Upstream repeats a uid on several text nodes at times: any of them may be the one read.
    let mut by_uid: HashMap<&str, Vec<usize>> = HashMap::new();
    for (id, n) in raw.nodes.iter().enumerate() {
        if n.kind == NodeKind::Element && !n.uid.is_empty() {
            by_uid.entry(n.uid).or_default().push(id);
        }
    }
    let mut problems = Vec::new();
    for r in read {
        let Some(ids) = by_uid.get(r.uid.as_str()) else {
            problems.push(format!("{} is no uid of the snapshot", r.uid));
            continue;
        };
        let mut first_problem = None;
        for &id in ids {
            let Some(node) = raw.nodes.get(id) else {
                continue;
            };
            match node_problem(&r, node, yaml) {
                None => {
                    first_problem = None;
                    break;
                }
                Some(p) => {
                    first_problem.get_or_insert(p);
                }
            }
        }
        problems.extend(first_problem);
    }
    problems
}

/// How `node` (of the raw snapshot) differs from what the reader read of it, if it does.
fn node_problem(r: &Read, node: &crate::snapshot::tree::Node<'_>, yaml: bool) -> Option<String> {
    {
        let role = if node.role == "link" && r.role.is_empty() {
            ""
        } else {
            node.role
        };
        let name_ok = match (&r.name, node.name.as_deref()) {
            (None, None) => true,
            (None, Some(n)) => n.is_empty() || yaml,
            (Some(shown), Some(n)) => {
                shown == n
                    || shown
                        .strip_suffix('…')
                        .is_some_and(|start| n.starts_with(start))
            }
            (Some(shown), None) => shown.is_empty(),
        };
        let mut states: Vec<String> = node
            .attrs
            .iter()
            .filter(|a| a.value.is_none() && !CAPABILITIES.contains(&a.key))
            .map(|a| a.key.to_string())
            .collect();
        states.sort();
        let shown_states: Vec<&String> = r
            .states
            .iter()
            .filter(|s| !CAPABILITIES.contains(&s.as_str()) && !s.starts_with("cut"))
            .collect();
        let value = node.attr("value").and_then(|a| a.value.as_deref());
        let value_ok = r.value.is_none() && value.is_none()
            || r.value.as_deref() == value
            || r.value
                .as_deref()
                .zip(value)
                .is_some_and(|(s, v)| s.strip_suffix('…').is_some_and(|p| v.starts_with(p)));
        if role != r.role
            || !name_ok
            || states.iter().collect::<Vec<_>>() != shown_states
            || (!yaml && !value_ok)
        {
            return Some(format!(
                "{}: read {:?} {:?} value={:?} {:?}, snapshot has {:?} {:?} value={:?} {:?}",
                r.uid, r.role, r.name, r.value, r.states, node.role, node.name, value, states
            ));
        }
    }
    None
}

/// Snapshot bodies of our own recorded pages (`__test__/fixtures/sessions/*.jsonl`), either
/// notation.
fn own_bodies() -> Vec<(String, String)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("__test__/fixtures/sessions");
    let mut out = Vec::new();
    for path in crate::test_support::files_under(&dir, &["jsonl"]) {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        for line in text.lines() {
            let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
                continue;
            };
            let mut texts = Vec::new();
            super::tests::collect_texts(&v, &mut texts);
            for t in texts {
                for body in super::tests::bodies_of(&t) {
                    out.push((path.display().to_string(), body));
                }
            }
        }
    }
    out
}

fn check_all(bodies: &[(String, String)]) -> (Vec<String>, usize) {
    let mut failures = Vec::new();
    let mut tables = 0;
    for (name, body) in bodies {
        for level in Level::ALL {
            let options = SnapshotOptions::for_level(level);
            tables += usize::from(filter_snapshot(body, &options).text.contains("… table of "));
            for p in reader_problems(body, &options) {
                failures.push(format!("{name} {level}: {p}"));
            }
        }
    }
    (failures, tables)
}

fn assert_clean(failures: &[String]) {
    assert!(
        failures.is_empty(),
        "{} problems, first ones:\n{}",
        failures.len(),
        failures
            .iter()
            .take(20)
            .map(|f| f.chars().take(400).collect::<String>())
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn every_uid_the_reader_finds_in_a_corpus_output_is_the_snapshots() {
    if crate::test_support::corpus_dir().is_none() {
        return;
    }
    let bodies = super::tests::all_corpus_bodies();
    let (failures, tables) = check_all(&bodies);
    assert_clean(&failures);
    // The grid and shop pages of the corpus sessions are written as tables: read, not skipped.
    assert!(tables >= 10, "outputs with a table: {tables}");
}

#[test]
fn every_uid_the_reader_finds_in_our_own_pages_is_the_snapshots() {
    let bodies = own_bodies();
    assert!(bodies.len() >= 5, "own bodies: {}", bodies.len());
    let (failures, tables) = check_all(&bodies);
    assert_clean(&failures);
    assert!(tables >= 3, "outputs with a table: {tables}");
}

#[test]
fn the_reader_reads_a_table_back_into_its_nodes() {
    let line = "… table of 2 records, a line each: checkbox \"Select {name}\" | text | link \"{name}\" | combobox \"Plan\" [options \"Free\" \"Pro\": its next 2 uids] | button \"Edit {name}\" (uid 1_1…1_12): expand_snapshot uid=1_1 until=1_12";
    let (count, columns) = header_columns(line).expect("header");
    assert_eq!((count, columns.len()), (2, 5));
    let mut out = Vec::new();
    table_row(
        r#"1_1|10\|2|1_3 "Ava"|1_4 value=Pro|1_7"#,
        &columns,
        &mut out,
    )
    .expect("row");
    let names: Vec<(&str, &str, Option<&str>)> = out
        .iter()
        .map(|r| (r.uid.as_str(), r.role.as_str(), r.name.as_deref()))
        .collect();
    assert_eq!(
        names,
        [
            ("1_1", "checkbox", Some("Select Ava")),
            ("1_3", "link", Some("Ava")),
            ("1_5", "option", Some("Free")),
            ("1_6", "option", Some("Pro")),
            ("1_4", "combobox", Some("Plan")),
            ("1_7", "button", Some("Edit Ava")),
        ]
    );
    assert_eq!(
        out.get(3).map(|r| r.states.clone()),
        Some(vec!["selected".to_string()])
    );
}

/// What is wrong with a delta `out` of `body`, read against what the reader holds (each uid's
/// latest node read, `held`, updated here): every node it writes is the snapshot's, and every
/// run of table rows it names is what the reader holds, with the state it says changed
/// set.
fn delta_problems(body: &str, out: &str, held: &mut HashMap<String, Read>) -> Vec<String> {
    let (reads, runs) = match read_light_runs(out) {
        Ok(r) => r,
        Err(e) => return vec![e],
    };
    let mut problems = problems_against(body, reads.clone(), false);
    let mut implied = Vec::new();
    let raw = notation_of(body).parse(body, &mut implied);
    let order: Vec<&str> = raw
        .nodes
        .iter()
        .filter(|n| n.kind == NodeKind::Element && !n.uid.is_empty())
        .map(|n| n.uid)
        .collect();
    let mut claimed = Vec::new();
    for run in &runs {
        let at = |uid: &str| order.iter().position(|u| *u == uid);
        let (Some(a), Some(b)) = (at(&run.first), at(&run.last)) else {
            problems.push(format!("a run names uids not in the page: {run:?}"));
            continue;
        };
        for uid in order.get(a..=b).unwrap_or(&[]) {
            let Some(mut r) = held.get(*uid).cloned() else {
                continue;
            };
            // The cells of the run's column: its role, and its name as the header's pattern
            // says (the Edit and Delete buttons of a row are two columns).
            let fits = |r: &Read| match &run.column {
                Some((role, pattern)) => {
                    let name = r.name.as_deref().unwrap_or("");
                    *role == r.role
                        && match pattern.as_deref().map(|p| (p, p.split_once("{name}"))) {
                            None => true,
                            Some((_, Some((pre, suf)))) => {
                                name.starts_with(pre) && name.ends_with(suf)
                            }
                            Some((fixed, None)) => name == fixed,
                        }
                }
                None => false,
            };
            if let Some((on, word, _)) = &run.toggled {
                if fits(&r) {
                    match (on, r.states.iter().position(|s| s == word)) {
                        (true, None) => {
                            r.states.push(word.clone());
                            r.states.sort();
                        }
                        (false, Some(i)) => {
                            r.states.remove(i);
                        }
                        _ => {}
                    }
                }
            }
            claimed.push(r);
        }
    }
    problems.extend(problems_against(body, claimed.clone(), false));
    for r in reads.into_iter().chain(claimed) {
        held.insert(r.uid.clone(), r);
    }
    problems
}

/// The reader over a session's outputs with deltas: a full snapshot is read whole (what the
/// reader holds from then on), a delta against what it holds. Returns (deltas read, runs of
/// rows read, runs with a state changed).
fn read_session_outputs(
    outputs: &[(String, String)],
    name: &str,
    failures: &mut Vec<String>,
) -> (usize, usize, usize) {
    let mut held: HashMap<String, Read> = HashMap::new();
    let (mut deltas, mut runs, mut toggled) = (0, 0, 0);
    for (k, (body, out)) in outputs.iter().enumerate() {
        if out.contains("unchanged since snapshot") {
            continue;
        }
        if out.contains(": delta against snapshot ") {
            deltas += 1;
            runs += out.matches(" rows unchanged").count();
            toggled += out.matches(" rows unchanged but ").count();
            let ps = delta_problems(body, out, &mut held);
            if !ps.is_empty() && std::env::var_os("READER_DEBUG").is_some() {
                eprintln!(
                    "==== {name} {k}\n{}\n---- delta\n{out}\n---- raw\n{body}",
                    outputs[k - 1].1
                );
            }
            for p in ps {
                failures.push(format!("{name} output {k}: {p}"));
            }
            continue;
        }
        held.clear();
        if !out.starts_with("#snapshot-filter") {
            continue;
        }
        match read_light(out) {
            Ok(reads) => held.extend(reads.into_iter().map(|r| (r.uid.clone(), r))),
            Err(e) => failures.push(format!("{name} output {k}: {e}")),
        }
        for p in reader_problems(body, &SnapshotOptions::for_level(Level::Moderate)) {
            failures.push(format!("{name} output {k}: {p}"));
        }
    }
    (deltas, runs, toggled)
}

#[test]
fn the_reader_reads_deltas_with_tables_against_what_it_holds() {
    use crate::delta_tests::{body_of, read_session, send, session};
    let mut failures = Vec::new();
    let (mut deltas, mut runs, mut toggled) = (0, 0, 0);
    // Recorded sessions: ours, and the corpus's when present.
    let mut files = crate::test_support::files_under(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("__test__/fixtures/sessions"),
        &["jsonl"],
    );
    if let Some(corpus) = crate::test_support::corpus_dir() {
        files.extend(crate::test_support::files_under(
            &corpus.join("sessions"),
            &["jsonl"],
        ));
    }
    for file in &files {
        for level in [Level::Moderate, Level::Aggressive] {
            let mut s = session(level, true);
            let mut outputs = Vec::new();
            for step in read_session(file) {
                let raw = crate::delta_tests::text_of(&step.result.to_string());
                let sent = send(&mut s, &step);
                if let (Some(body), Some(out)) = (body_of(&raw), body_of(&sent)) {
                    if !out.starts_with("uid=") {
                        outputs.push((body.to_string(), out.to_string()));
                    }
                }
            }
            let name = format!("{} {level}", file.display());
            let (d, r, t) = read_session_outputs(&outputs, &name, &mut failures);
            (deltas, runs, toggled) = (deltas + d, runs + r, toggled + t);
        }
    }
    // Grids edited at random (the delta property test's pages).
    let mut rng = crate::test_support::XorShift(0x85eb_ca6b_c2b2_ae35);
    for page in 0..20 {
        let mut grid = crate::delta_prop_tests::Grid::random(&mut rng);
        let mut s = session(Level::Moderate, true);
        let mut outputs = Vec::new();
        for _ in 0..8 {
            let body = grid.page.text();
            let result = serde_json::json!({"content": [{"type": "text", "text":
                format!("# take_snapshot response\n## Latest page snapshot\n{body}")}]});
            let step = crate::delta_tests::Step {
                tool: "take_snapshot".into(),
                args: serde_json::json!({"pageId": 1}),
                result,
            };
            let sent = send(&mut s, &step);
            if let Some(out) = body_of(&sent) {
                outputs.push((body.clone(), out.to_string()));
            }
            grid.edit(&mut rng);
        }
        let (d, r, t) = read_session_outputs(&outputs, &format!("grid {page}"), &mut failures);
        (deltas, runs, toggled) = (deltas + d, runs + r, toggled + t);
    }
    assert_clean(&failures);
    eprintln!("{deltas} deltas read, {runs} runs of rows, {toggled} with a state changed");
    assert!(
        deltas > 50 && runs > 20 && toggled > 5,
        "{deltas} {runs} {toggled}"
    );
}
