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
pub(super) struct Read {
    pub(super) uid: String,
    pub(super) role: String,
    name: Option<String>,
    value: Option<String>,
    /// Bare words (`checked`, `disabled`, …), sorted.
    pub(super) states: Vec<String>,
    /// The header's column it was read in (a table row's cell), from 0.
    column: Option<usize>,
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

/// A bare text cell of a table row: every backslash escapes the character after it
/// (`\|`, `\"`, `\\`, a leading `\…`), `\n` and `\r` are line breaks.
fn unescape_cell(s: &str) -> String {
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
            Some(other) => out.push(other),
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
    for (k, (col, cell_text)) in columns.iter().zip(&cells).enumerate() {
        // The first `"{name}"` column holds the record's name; a later one repeats it.
        let is_key = col.pattern.as_deref() == Some("{name}") && record_name.is_none();
        if col.role == "text" {
            if is_key {
                record_name = Some(unescape_cell(cell_text));
            }
            continue;
        }
        let with_value = col.fixed.value.as_deref() == Some("*");
        let mut node = cell(cell_text, with_value)?;
        node.column = Some(k);
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
                    column: None,
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
pub(super) fn read_light(text: &str) -> Result<Vec<Read>, String> {
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

/// Roles a Playwright ref is never implied for (the legend's "a link, button or control"),
/// and the states that make a node one to act on: kept here apart from the writer's own list.
const YAML_CONTROLS: [&str; 18] = [
    "link",
    "button",
    "checkbox",
    "radio",
    "combobox",
    "listbox",
    "option",
    "textbox",
    "searchbox",
    "slider",
    "spinbutton",
    "switch",
    "tab",
    "menuitem",
    "menuitemcheckbox",
    "menuitemradio",
    "treeitem",
    "scrollbar",
];
const YAML_ACTIVE_STATES: [&str; 7] = [
    "cursor", "checked", "pressed", "expanded", "selected", "active", "disabled",
];

/// `e12` → `e13` (`f3e9` → `f3e10`).
fn next_yaml_ref(r: &str) -> Option<String> {
    let digits = r.len() - r.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    let (prefix, n) = r.split_at(r.len() - digits);
    Some(format!("{prefix}{}", n.parse::<u64>().ok()? + 1))
}

/// One YAML list item's key and what follows it, the key unquoted (`'…'` with `''` for `'`).
fn yaml_key(line: &str) -> Option<(String, &str)> {
    let item = line.trim_start().strip_prefix("- ")?;
    if let Some(q) = item.strip_prefix('\'') {
        let mut k = 0;
        let b = q.as_bytes();
        while k < b.len() {
            if b[k] == b'\'' {
                if b.get(k + 1) == Some(&b'\'') {
                    k += 2;
                    continue;
                }
                return Some((q[..k].replace("''", "'"), &q[k + 1..]));
            }
            k += 1;
        }
        return None;
    }
    if item.starts_with('"') {
        return None;
    }
    match item.find(": ") {
        Some(at) => Some((item[..at].to_string(), &item[at..])),
        None => Some(match item.strip_suffix(':') {
            Some(k) => (k.to_string(), ":"),
            None => (item.to_string(), ""),
        }),
    }
}

/// `role "name" [state] [key=v] [ref=e12]` → the node (its ref empty when none is written),
/// and whether it says `[noref]`.
fn yaml_node(key: &str) -> Option<(Read, bool)> {
    let end = key.find(' ').unwrap_or(key.len());
    let role = &key[..end];
    if role.is_empty() || !role.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
        return None;
    }
    let mut node = Read {
        role: role.to_string(),
        ..Read::default()
    };
    let mut rest = &key[end..];
    if let Some(q) = rest.strip_prefix(" \"") {
        let (name, after) = quoted(q, '"')?;
        node.name = Some(name);
        rest = after;
    }
    let mut noref = false;
    let mut active = false;
    for part in rest.split(" [").skip(1) {
        let word = part.strip_suffix(']')?;
        let (k, v) = match word.split_once('=') {
            Some((k, v)) => (k, Some(v)),
            None => (word, None),
        };
        active |= YAML_ACTIVE_STATES.contains(&k);
        match (k, v) {
            ("ref", Some(r)) => node.uid = r.to_string(),
            ("noref", None) => noref = true,
            (_, None) => node.states.push(k.to_string()),
            _ => {}
        }
    }
    node.states.sort();
    // A node the legend lets imply a ref gets none when it says `[noref]`.
    let implicable = !active && !YAML_CONTROLS.contains(&role);
    Some((node, noref || !implicable))
}

/// A column of a Playwright table header: role, name pattern, fixed states, whether rows
/// write the ref first (`[ref]`), the options and whether rows write the selected one.
#[derive(Debug, Default)]
struct YamlColumn {
    role: String,
    pattern: Option<String>,
    states: Vec<String>,
    with_ref: bool,
    options: Vec<String>,
    selected: bool,
    /// `[value=*]`: rows write the control's value (its text) after the name.
    valued: bool,
}

fn yaml_header(line: &str) -> Option<(usize, Vec<YamlColumn>)> {
    let rest = line.strip_prefix("… table of ")?;
    let (count, rest) = rest.split_once(" records, a line each: ")?;
    let parts = split_outside(rest, " (uid ", false);
    let cols = parts.first()?;
    let cols = split_outside(cols, "; ", false);
    let mut columns = Vec::new();
    for spec in split_outside(cols.first()?, " | ", false) {
        let mut col = YamlColumn::default();
        let e = spec.find(' ').unwrap_or(spec.len());
        col.role = spec[..e].to_string();
        let mut rest = &spec[e..];
        if let Some(q) = rest.strip_prefix(" \"") {
            let (name, after) = quoted(q, '"')?;
            col.pattern = Some(name);
            rest = after;
        }
        while let Some(t) = rest.strip_prefix(" [") {
            if let Some(o) = t.strip_prefix("options") {
                let mut o = o;
                while let Some(q) = o.strip_prefix(" \"") {
                    let (name, after) = quoted(q, '"')?;
                    col.options.push(name);
                    o = after;
                }
                rest = o.strip_prefix(']')?;
                continue;
            }
            let close = t.find(']')?;
            let word = &t[..close];
            rest = &t[close + 1..];
            match word.split_once('=') {
                Some(("selected", "*")) => col.selected = true,
                Some(("value", "*")) => col.valued = true,
                Some(_) => {}
                None if word == "ref" => col.with_ref = true,
                None => col.states.push(word.to_string()),
            }
        }
        if !rest.is_empty() {
            return None;
        }
        columns.push(col);
    }
    Some((count.parse().ok()?, columns))
}

/// Reads `[state]` words after a cell's ref, name and value.
fn cell_states(mut s: &str, node: &mut Read) -> Option<()> {
    while let Some(t) = s.strip_prefix(" [") {
        let close = t.find(']')?;
        let word = &t[..close];
        if !word.contains('=') {
            node.states.push(word.to_string());
        }
        s = &t[close + 1..];
    }
    s.is_empty().then_some(())
}

/// One row of a Playwright table into the nodes of its ref cells.
fn yaml_row(line: &str, columns: &[YamlColumn], out: &mut Vec<Read>) -> Option<()> {
    let cells = split_outside(line, "|", false);
    if cells.len() != columns.len() {
        return None;
    }
    let key_at = columns
        .iter()
        .position(|c| c.pattern.as_deref() == Some("{name}"));
    let mut record_name = None;
    let mut reads = Vec::new();
    for (k, (col, cell)) in columns.iter().zip(&cells).enumerate() {
        if !col.with_ref {
            if Some(k) == key_at {
                let text = match cell.strip_prefix('"') {
                    Some(q) => quoted(q, '"')?.0,
                    None => unescape_cell(cell),
                };
                record_name = Some(text);
            }
            continue;
        }
        let end = cell.find(' ').unwrap_or(cell.len());
        let uid = &cell[..end];
        if !is_uid(uid) {
            return None;
        }
        let mut node = Read {
            uid: uid.to_string(),
            role: col.role.clone(),
            ..Read::default()
        };
        let mut rest = &cell[end..];
        if let Some(q) = rest.strip_prefix(" \"") {
            let (name, after) = quoted(q, '"')?;
            node.name = Some(name);
            rest = after;
        }
        if col.selected || col.valued {
            let (value, after) = match rest.strip_prefix(" \"") {
                Some(q) => quoted(q, '"')?,
                None => match rest.strip_prefix(' ').filter(|r| !r.starts_with('[')) {
                    Some(r) => {
                        let e = r.find(' ').unwrap_or(r.len());
                        (r[..e].to_string(), &r[e..])
                    }
                    None => (String::new(), rest),
                },
            };
            node.value = Some(value);
            rest = after;
        }
        cell_states(rest, &mut node)?;
        node.states.extend(col.states.iter().cloned());
        node.states.sort();
        if Some(k) == key_at {
            record_name = node.name.clone();
        }
        reads.push((k, col, node));
    }
    for (k, col, mut node) in reads {
        if let (Some(p), None) = (&col.pattern, &node.name) {
            node.name = Some(match (p.split_once("{name}"), &record_name) {
                (Some((pre, suf)), Some(name)) if Some(k) != key_at => {
                    format!("{pre}{name}{suf}")
                }
                _ => p.clone(),
            });
        }
        out.push(node);
    }
    Some(())
}

/// Every node with a ref that our Playwright YAML shows: lines with `[ref=…]`, structural
/// lines whose ref the legend implies (the one after the previous ref), and table rows (quoted
/// items after a `… table of` header). After a table no ref is implied: the rows end the
/// chain, so a structural line there without its ref is an error.
pub(super) fn read_yaml(text: &str) -> Result<Vec<Read>, String> {
    let mut out = Vec::new();
    let mut lines = text.lines();
    // `Some(None)`: after a table, where no ref may be implied.
    let mut prev: Option<Option<String>> = None;
    let ours = text.starts_with("# snapshot-filter");
    while let Some(line) = lines.next() {
        let Some((key, after)) = yaml_key(line) else {
            continue;
        };
        let quoted_item = line.trim_start().starts_with("- '") && after.is_empty();
        if quoted_item && key.starts_with('…') {
            if let Some((count, columns)) = yaml_header(&key) {
                for _ in 0..count {
                    let row = lines
                        .next()
                        .and_then(yaml_key)
                        .filter(|(_, after)| after.is_empty())
                        .ok_or("table ends early")?;
                    yaml_row(&row.0, &columns, &mut out)
                        .ok_or_else(|| format!("unreadable row: {}", row.0))?;
                }
                prev = Some(None);
            }
            continue;
        }
        if key == "text" || key.starts_with('/') {
            continue;
        }
        let Some((mut node, no_implied)) = yaml_node(&key) else {
            continue;
        };
        if !node.uid.is_empty() {
            prev = Some(Some(node.uid.clone()));
        } else if ours && !no_implied {
            match &prev {
                Some(Some(p)) => {
                    let Some(next) = next_yaml_ref(p) else {
                        return Err(format!("no ref follows {p}: {line}"));
                    };
                    node.uid = next.clone();
                    prev = Some(Some(next));
                }
                Some(None) => return Err(format!("a ref implied after a table: {line}")),
                None => {}
            }
        }
        if !node.uid.is_empty() {
            out.push(node);
        }
    }
    Ok(out)
}

/// What is wrong with the output of `body` at `options`: each node read whose role, name,
/// value or states differ from the raw snapshot's node with that uid.
pub(super) fn reader_problems(body: &str, options: &SnapshotOptions) -> Vec<String> {
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
            match node_problem(&r, &raw, id, node, yaml) {
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

/// How `node`, node `id` of the raw snapshot, differs from what the reader read of it, if it
/// does.
fn node_problem(
    r: &Read,
    raw: &crate::snapshot::tree::Tree<'_>,
    id: usize,
    node: &crate::snapshot::tree::Node<'_>,
    yaml: bool,
) -> Option<String> {
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
        // Playwright gives a combobox no value: it marks its selected option; a textbox's
        // value is its text (`- textbox "Name" [ref=e5]: Ada`), one child without a role.
        let children: Vec<_> = raw
            .children(id)
            .iter()
            .filter_map(|&c| raw.nodes.get(c))
            .collect();
        let selected = children
            .iter()
            .find(|o| o.role == "option" && o.attrs.iter().any(|a| a.key == "selected"))
            .or(match children.as_slice() {
                [only] if only.role.is_empty() => Some(only),
                _ => None,
            })
            .map_or("", |o| o.name.as_deref().unwrap_or(""));
        let value = if yaml {
            r.value.as_ref().map(|_| selected)
        } else {
            node.attr("value").and_then(|a| a.value.as_deref())
        };
        let value_ok = r.value.is_none() && value.is_none()
            || r.value.as_deref() == value
            || r.value
                .as_deref()
                .zip(value)
                .is_some_and(|(s, v)| s.strip_suffix('…').is_some_and(|p| v.starts_with(p)));
        if role != r.role
            || !name_ok
            || states.iter().collect::<Vec<_>>() != shown_states
            || !value_ok
        {
            return Some(format!(
                "{}: read {:?} {:?} value={:?} {:?}, snapshot has {:?} {:?} value={:?} {:?}",
                r.uid, r.role, r.name, r.value, r.states, node.role, node.name, value, states
            ));
        }
    }
    None
}

/// Snapshot bodies of our own recorded pages (`__test__/fixtures/sessions/*.jsonl`) and our
/// own Playwright captures (`__test__/fixtures/playwright*/**.json`), either notation.
fn own_bodies() -> Vec<(String, String)> {
    let root = crate::test_support::shipped("__test__/fixtures");
    let mut files = crate::test_support::files_under(&root.join("sessions"), &["jsonl"]);
    files.extend(crate::test_support::files_under(
        &root.join("playwright-own"),
        &["json"],
    ));
    files.extend(crate::test_support::files_under(
        &root.join("playwright"),
        &["json"],
    ));
    let mut out = Vec::new();
    for path in files {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let values: Vec<serde_json::Value> = if path.extension().is_some_and(|e| e == "jsonl") {
            text.lines()
                .filter_map(|l| serde_json::from_str(l).ok())
                .collect()
        } else {
            serde_json::from_str(&text).into_iter().collect()
        };
        for v in values {
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
    // Every level, and the budget's lean step (its node cap as a page over the budget scales
    // it).
    let mut steps: Vec<(String, SnapshotOptions)> = Level::ALL
        .into_iter()
        .map(|level| (level.to_string(), SnapshotOptions::for_level(level)))
        .collect();
    steps.push(("lean".to_string(), crate::test_support::lean_step_options()));
    for (name, body) in bodies {
        for (step, options) in &steps {
            tables += usize::from(filter_snapshot(body, options).text.contains("… table of "));
            for p in reader_problems(body, options) {
                failures.push(format!("{name} {step}: {p}"));
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

#[test]
fn the_reader_reads_a_playwright_table_back() {
    let header = "… table of 2 records, a line each: checkbox \"Select {name}\" [ref] | cell | link \"{name}\" [ref] | combobox \"Plan for {name}\" [ref] [options \"Free\" \"Pro\"] [selected=*] | button \"Edit {name}\" [ref] (uid e1…e20): expand_snapshot uid=e1 until=e11";
    let (count, columns) = yaml_header(header).expect("header");
    assert_eq!((count, columns.len()), (2, 5));
    let mut out = Vec::new();
    yaml_row(
        r#"e3 [checked]|10\|2|e5 "Ava"|e6 Pro|e9"#,
        &columns,
        &mut out,
    )
    .expect("row");
    type Seen<'r> = (
        &'r str,
        &'r str,
        Option<&'r str>,
        Option<&'r str>,
        Vec<String>,
    );
    let read: Vec<Seen<'_>> = out
        .iter()
        .map(|r| {
            (
                r.uid.as_str(),
                r.role.as_str(),
                r.name.as_deref(),
                r.value.as_deref(),
                r.states.clone(),
            )
        })
        .collect();
    assert_eq!(
        read,
        [
            (
                "e3",
                "checkbox",
                Some("Select Ava"),
                None,
                vec!["checked".to_string()]
            ),
            ("e5", "link", Some("Ava"), None, vec![]),
            ("e6", "combobox", Some("Plan for Ava"), Some("Pro"), vec![]),
            ("e9", "button", Some("Edit Ava"), None, vec![]),
        ]
    );
    // No ref is implied after a table: its rows end the chain of refs.
    let text = format!("# snapshot-filter: legend\n- list [ref=e1]:\n  - '{header}'\n  - 'e3|1|e5 \"A\"|e6|e9'\n  - 'e13|2|e15 \"B\"|e16|e19'\n- listitem\n");
    assert!(read_yaml(&text).is_err());
}

/// `read_yaml` or `read_light`.
fn read_all_of(text: &str, yaml: bool) -> Result<Vec<Read>, String> {
    if yaml {
        read_yaml(text)
    } else {
        read_light(text)
    }
}

/// The interactive uids inside `main` of a raw body (either notation).
fn controls_in_main(body: &str) -> Vec<String> {
    let mut implied = Vec::new();
    let raw = notation_of(body).parse(body, &mut implied);
    let mut out = Vec::new();
    for (id, n) in raw.nodes.iter().enumerate() {
        let in_main = std::iter::once(id)
            .chain(raw.ancestors(id))
            .any(|a| raw.nodes.get(a).is_some_and(|m| m.role == "main"));
        if in_main && !n.uid.is_empty() && crate::snapshot::roles::is_interactive(n) {
            out.push(n.uid.to_string());
        }
    }
    out
}

#[test]
fn our_own_playwright_pages_of_records_show_every_control_in_main_in_place_at_moderate() {
    let dir = crate::test_support::shipped("__test__/fixtures/playwright-own");
    let mut tables = 0;
    let mut pages = 0;
    for path in crate::test_support::files_under(&dir, &["json"]) {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) else {
            continue;
        };
        let mut texts = Vec::new();
        super::tests::collect_texts(&v, &mut texts);
        for body in texts.iter().flat_map(|t| super::tests::bodies_of(t)) {
            let out = filter_snapshot(&body, &SnapshotOptions::for_level(Level::Moderate)).text;
            // Pages of records (a documentation index is a long list of links instead).
            if !out.contains("'… table of ") {
                continue;
            }
            tables += out.matches("'… table of ").count();
            let read: std::collections::HashSet<String> = read_yaml(&out)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
                .into_iter()
                .map(|r| r.uid)
                .collect();
            let controls = controls_in_main(&body);
            pages += usize::from(!controls.is_empty());
            let missing: Vec<&String> = controls.iter().filter(|u| !read.contains(*u)).collect();
            assert!(
                missing.is_empty(),
                "{}: controls in main not in place: {missing:?}",
                path.display()
            );
        }
    }
    assert!(pages >= 3, "own Playwright pages with a table: {pages}");
    // The users table, the product cards and the admin grid.
    assert!(tables >= 3, "tables written: {tables}");
}

#[test]
fn a_playwright_delta_reads_back_against_the_new_snapshot() {
    use crate::snapshot::delta::{self, DeltaInput, Sent};
    let path = crate::test_support::shipped(
        "__test__/fixtures/playwright-own/users/browser_snapshot.json",
    );
    let text = std::fs::read_to_string(path).expect("users fixture");
    let v: serde_json::Value = serde_json::from_str(&text).expect("json");
    let mut texts = Vec::new();
    super::tests::collect_texts(&v, &mut texts);
    let body = texts
        .iter()
        .flat_map(|t| super::tests::bodies_of(t))
        .next()
        .expect("a snapshot");
    // One row's cell changes, one row's checkbox is ticked: a delta of those rows.
    let edited = body
        .replacen("- cell \"Invited\"", "- cell \"Active\"", 1)
        .replacen(
            "checkbox \"Select Grace Knuth\" [ref=",
            "checkbox \"Select Grace Knuth\" [checked] [ref=",
            1,
        );
    assert_ne!(edited, body);
    let options = SnapshotOptions::for_level(Level::Moderate);
    let pw = crate::notation::playwright::Playwright;
    let first = delta::filter_with_deltas(
        &pw,
        &body,
        &options,
        DeltaInput {
            earlier: None,
            sent: None,
            number: 1,
            upstream_reset: false,
        },
    );
    assert!(first.filtered.text.contains("'… table of "));
    let holds = first.holds.expect("the first snapshot is held");
    let out = delta::filter_with_deltas(
        &pw,
        &edited,
        &options,
        DeltaInput {
            earlier: None,
            sent: Some(&holds),
            number: 2,
            upstream_reset: false,
        },
    );
    assert!(
        matches!(out.sent, Some(Sent::Delta { .. })),
        "{}",
        out.filtered.text
    );
    let read = read_yaml(&out.filtered.text).expect("readable delta");
    let mut implied = Vec::new();
    let raw = notation_of(&edited).parse(&edited, &mut implied);
    let checked = read
        .iter()
        .find(|r| r.name.as_deref() == Some("Select Grace Knuth"))
        .expect("the changed row's checkbox is in the delta");
    assert_eq!(checked.states, ["checked"]);
    for r in &read {
        let (id, node) = raw
            .nodes
            .iter()
            .enumerate()
            .find(|(_, n)| n.uid == r.uid)
            .unwrap_or_else(|| panic!("{} is no ref of the snapshot", r.uid));
        assert_eq!(node_problem(r, &raw, id, node, true), None);
    }
}

/// What is wrong with a delta `out` of `body`, read against what the reader holds (each uid's
/// latest node read, `held`, updated here): every node it writes is the snapshot's, and every
/// run of table rows it names is what the reader holds, with the state it says changed
/// set.
pub(super) fn delta_problems(
    body: &str,
    out: &str,
    held: &mut HashMap<String, Read>,
) -> Vec<String> {
    delta_problems_resolving(body, out, held, &Renumbered::new()).0
}

/// Per uid of the page now, the uids the agent was shown for the same node before the page
/// renumbered it: the proxy's resolution (what a request naming them sends upstream).
type Renumbered = HashMap<String, Vec<String>>;

/// `delta_problems`, with a run's nodes the page renumbered found by the uid the agent holds
/// them by (`renumbered`), then checked as the page shows them now; also returns how many were.
fn delta_problems_resolving(
    body: &str,
    out: &str,
    held: &mut HashMap<String, Read>,
    renumbered: &Renumbered,
) -> (Vec<String>, usize) {
    let mut resolved = 0;
    let (reads, runs) = match read_light_runs(out) {
        Ok(r) => r,
        Err(e) => return (vec![e], 0),
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
            // A node the page renumbered: the agent holds it by an older uid; as held, it must
            // be the node the page now gives this uid.
            let older = || {
                renumbered
                    .get(*uid)?
                    .iter()
                    .find_map(|old| held.get(old))
                    .map(|r| Read {
                        uid: uid.to_string(),
                        ..r.clone()
                    })
            };
            let mut r = match held.get(*uid) {
                Some(r) => r.clone(),
                None => match older() {
                    Some(r) => {
                        resolved += 1;
                        r
                    }
                    None => continue,
                },
            };
            // The cells of the run's column: its role, and its name as the header's pattern
            // says (the Edit and Delete buttons of a row are two columns).
            let fits = |r: &Read| match &run.column {
                // Read as a cell of a row: its column by place.
                Some(_) if r.column.is_some() => {
                    r.column == run.toggled.as_ref().map(|(_, _, c)| *c)
                }
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
    (problems, resolved)
}

/// The reader over a session's outputs with deltas: a full snapshot is read whole (what the
/// reader holds from then on), a delta against what it holds. Returns (deltas read, runs of
/// rows read, runs with a state changed).
fn read_session_outputs(
    outputs: &[(String, String, Renumbered)],
    name: &str,
    failures: &mut Vec<String>,
) -> (usize, usize, usize, usize) {
    let mut held: HashMap<String, Read> = HashMap::new();
    let (mut deltas, mut runs, mut toggled, mut resolved) = (0, 0, 0, 0);
    for (k, (body, out, renumbered)) in outputs.iter().enumerate() {
        if out.contains("unchanged since snapshot") {
            continue;
        }
        if out.contains(": delta against snapshot ") {
            deltas += 1;
            runs += out.matches(" rows unchanged").count();
            toggled += out.matches(" rows unchanged but ").count();
            let (ps, r) = delta_problems_resolving(body, out, &mut held, renumbered);
            resolved += r;
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
    (deltas, runs, toggled, resolved)
}

/// Every uid written in `out` (the light notation's `1_23`), for `renumbered_now`.
fn uids_written(out: &str, into: &mut std::collections::HashSet<String>) {
    for word in out.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
        let mut parts = word.split('_');
        let digits = |p: Option<&str>| {
            p.is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        };
        if digits(parts.next()) && digits(parts.next()) && parts.next().is_none() {
            into.insert(word.to_string());
        }
    }
}

/// Which uids of those `shown` the session now resolves to another uid of the page it
/// snapshotted last (current uid -> the agent's).
fn renumbered_now(
    s: &crate::session::Session,
    shown: &std::collections::HashSet<String>,
) -> Renumbered {
    let mut out = Renumbered::new();
    let Some(page) = s.held().latest_page() else {
        return out;
    };
    for uid in shown {
        if let Some(current) = s.held().current_uid(&page, uid).filter(|c| c != uid) {
            out.entry(current.to_string())
                .or_default()
                .push(uid.clone());
        }
    }
    out
}

#[test]
fn the_reader_reads_deltas_with_tables_against_what_it_holds() {
    use crate::delta_tests::{body_of, read_session, send, session};
    let mut failures = Vec::new();
    let (mut deltas, mut runs, mut toggled, mut resolved) = (0, 0, 0, 0);
    // Recorded sessions: ours, and the corpus's when present.
    let mut files = crate::test_support::files_under(
        &crate::test_support::shipped("__test__/fixtures/sessions"),
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
            let mut shown = std::collections::HashSet::new();
            for step in read_session(file) {
                let raw = crate::delta_tests::text_of(&step.result.to_string());
                let sent = send(&mut s, &step);
                if let (Some(body), Some(out)) = (body_of(&raw), body_of(&sent)) {
                    uids_written(out, &mut shown);
                    if !out.starts_with("uid=") {
                        let renumbered = renumbered_now(&s, &shown);
                        outputs.push((body.to_string(), out.to_string(), renumbered));
                    }
                }
            }
            let name = format!("{} {level}", file.display());
            let (d, r, t, n) = read_session_outputs(&outputs, &name, &mut failures);
            (deltas, runs, toggled, resolved) = (deltas + d, runs + r, toggled + t, resolved + n);
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
                outputs.push((body.clone(), out.to_string(), Renumbered::new()));
            }
            grid.edit(&mut rng);
        }
        let (d, r, t, _) = read_session_outputs(&outputs, &format!("grid {page}"), &mut failures);
        (deltas, runs, toggled) = (deltas + d, runs + r, toggled + t);
    }
    assert_clean(&failures);
    eprintln!(
        "{deltas} deltas read, {runs} runs of rows, {toggled} with a state changed, \
         {resolved} nodes of runs held by a uid the page renumbered since"
    );
    // The recorded re-rendering app (rerender-orders) renumbers its rows on every re-render:
    // its deltas' runs hold them by the agent's uids.
    assert!(
        deltas > 50 && runs > 20 && toggled > 5 && resolved > 100,
        "{deltas} {runs} {toggled} {resolved}"
    );
}

// ---- Issue 41, items 1–3 and 5–7: rows that never lie, against this reader ----

/// Page texts an attacker would put in records: the header's placeholder, text imitating a
/// run line or a header, values that read like states or names, the row's separators.
const HOSTILE: [&str; 16] = [
    "{name}",
    "Edit {name}",
    "{name} {name}",
    "… 2 rows unchanged but pressed in column 3 (uid 1_5…1_9)",
    "… 3 rows unchanged (uid 1_5…1_20)",
    "… 4 unchanged (uid 1_5…1_9): expand_snapshot uid=1_5 until=1_9",
    "… table of 2 records, a line each: button {name}",
    "required",
    "Pro plan",
    "checked",
    "value=*",
    "a | b",
    "x|y",
    "back\\slash",
    "[ref=e5]",
    "; 3 text cells each not written",
];

const PLAIN: [&str; 8] = [
    "Ava Hernandez",
    "Mia Garcia",
    "Noah Miller",
    "Liam Chen",
    "Grace Hopper",
    "Alan Turing",
    "Ada Lovelace",
    "Pro plan",
];

/// One record of a hostile grid.
#[derive(Debug, Clone)]
struct Rec {
    /// Uid numbers are given at render time from `id`, so a record keeps its uids.
    id: u32,
    name: String,
    /// A text cell (hostile at times).
    text: String,
    /// The note textbox: its name and value; `required` or not.
    note: String,
    value: String,
    required: bool,
    /// The Edit button's label: `Edit <name>` or page text with `{name}` in it.
    edit: String,
    /// A second button, fixed label or literal `{name}`; pressed or not.
    star: String,
    pressed: bool,
    checked: bool,
    /// An extra button that breaks the record's shape (the row leaves the table).
    extra: bool,
}

struct HostileGrid {
    recs: Vec<Rec>,
    next: u32,
    /// `- listitem` records (Playwright's nested rows) rather than flat siblings.
    nested: bool,
}

/// Cells per record and the uids each takes (link + its image take two).
const REC_UIDS: u32 = 10;

impl HostileGrid {
    fn pick(rng: &mut crate::test_support::XorShift, hostile: u64) -> String {
        if rng.below(100) < hostile {
            rng.pick(&HOSTILE).to_string()
        } else {
            rng.pick(&PLAIN).to_string()
        }
    }

    fn rec(&mut self, rng: &mut crate::test_support::XorShift) -> Rec {
        let name = Self::pick(rng, 20);
        let id = self.next;
        self.next += 1;
        Rec {
            id,
            text: Self::pick(rng, 40),
            note: if rng.below(3) == 0 {
                Self::pick(rng, 50)
            } else {
                format!("Note for {name}")
            },
            value: Self::pick(rng, 50),
            required: rng.below(2) == 0,
            edit: match rng.below(3) {
                0 => format!("Edit {{name}} {name}"),
                _ => format!("Edit {name}"),
            },
            star: if rng.below(4) == 0 {
                "{name}".into()
            } else {
                "Star".into()
            },
            pressed: rng.below(3) == 0,
            checked: rng.below(3) == 0,
            extra: false,
            name,
        }
    }

    fn random(rng: &mut crate::test_support::XorShift, nested: bool) -> HostileGrid {
        let mut g = HostileGrid {
            recs: Vec::new(),
            next: 0,
            nested,
        };
        for _ in 0..4 + rng.below(8) {
            let r = g.rec(rng);
            g.recs.push(r);
        }
        g
    }

    /// chrome-devtools-mcp's text: the records' cells as siblings under `main`, after a
    /// layout wrapper (dropped at moderate) holding the heading.
    fn cdp(&self) -> String {
        let mut out = String::from(
            "uid=1_0 RootWebArea \"Users\" url=\"http://127.0.0.1/app/users\"\n  uid=1_1 main\n    uid=1_2 generic\n      uid=1_3 heading \"Users\" level=\"1\"\n",
        );
        for r in &self.recs {
            let u = |k: u32| format!("2_{}", r.id * REC_UIDS + k);
            let mut line = |k: u32, depth: usize, rest: String| {
                out.push_str(&format!("{}uid={} {rest}\n", "  ".repeat(depth), u(k)));
            };
            let checked = if r.checked { " checked" } else { "" };
            line(3, 2, format!("\"{}\"", r.text));
            line(0, 2, format!("checkbox \"Select {}\"{checked}", r.name));
            line(1, 2, format!("link \"{}\"", r.name));
            line(2, 3, format!("image \"{}\"", r.name));
            let required = if r.required { " required" } else { "" };
            line(
                4,
                2,
                format!("textbox \"{}\"{required} value=\"{}\"", r.note, r.value),
            );
            line(5, 2, format!("button \"{}\"", r.edit));
            let pressed = if r.pressed { " pressed" } else { "" };
            line(6, 2, format!("button \"{}\"{pressed}", r.star));
            if r.extra {
                line(7, 2, "button \"More\"".to_string());
            }
        }
        out
    }

    /// Playwright's YAML of the same records: flat siblings under `main`, or one `listitem`
    /// per record.
    fn yaml(&self) -> String {
        let q = |s: &str| s.replace('\\', "\\\\").replace('"', "\\\"");
        let mut out = String::from(
            "- generic [ref=e1]:\n  - main [ref=e2]:\n    - generic [ref=e3]:\n      - heading \"Users\" [level=1] [ref=e4]\n",
        );
        let base = if self.nested { 6 } else { 4 };
        if self.nested {
            out.push_str("    - list [ref=e5]:\n");
        }
        let pad = " ".repeat(base);
        for r in &self.recs {
            let u = |k: u32| format!("e{}", 100 + r.id * REC_UIDS + k);
            let mut pad = pad.clone();
            if self.nested {
                out.push_str(&format!("{pad}- listitem [ref={}]:\n", u(9)));
                pad.push_str("  ");
            }
            let checked = if r.checked { " [checked]" } else { "" };
            out.push_str(&format!("{pad}- text: \"{}\"\n", q(&r.text)));
            out.push_str(&format!(
                "{pad}- checkbox \"Select {}\"{checked} [ref={}]\n",
                q(&r.name),
                u(0)
            ));
            out.push_str(&format!(
                "{pad}- link \"{}\" [ref={}] [cursor=pointer]:\n{pad}  - /url: \"#u{}\"\n",
                q(&r.name),
                u(1),
                r.id,
            ));
            let required = if r.required { " [required]" } else { "" };
            out.push_str(&format!(
                "{pad}- textbox \"{}\"{required} [ref={}]: \"{}\"\n",
                q(&r.note),
                u(4),
                q(&r.value)
            ));
            out.push_str(&format!(
                "{pad}- button \"{}\" [ref={}]\n",
                q(&r.edit),
                u(5)
            ));
            let pressed = if r.pressed { " [pressed]" } else { "" };
            out.push_str(&format!(
                "{pad}- button \"{}\"{pressed} [ref={}]\n",
                q(&r.star),
                u(6)
            ));
            if r.extra {
                out.push_str(&format!("{pad}- button \"More\" [ref={}]\n", u(7)));
            }
        }
        out
    }

    fn text(&self, yaml: bool) -> String {
        if yaml {
            self.yaml()
        } else {
            self.cdp()
        }
    }

    /// One edit a grid sees; its name.
    fn edit(&mut self, rng: &mut crate::test_support::XorShift) -> &'static str {
        let n = self.recs.len();
        let r = rng.below(n as u64) as usize;
        match rng.below(9) {
            0 => {
                self.recs[r].checked ^= true;
                "check one"
            }
            1 => {
                let on = rng.below(2) == 0;
                for rec in &mut self.recs {
                    rec.pressed = on;
                }
                "press all"
            }
            2 => {
                self.recs[r].value = Self::pick(rng, 60);
                "value changed"
            }
            3 => {
                self.recs[r].text = Self::pick(rng, 70);
                "text changed"
            }
            4 if n > 4 => {
                self.recs.remove(r);
                "row removed"
            }
            5 => {
                let rec = self.rec(rng);
                self.recs.insert(r, rec);
                "row added"
            }
            6 => {
                // The first row (or another) breaks the shape: it leaves the table.
                let k = if rng.below(2) == 0 { 0 } else { r };
                self.recs[k].extra ^= true;
                "row reshaped"
            }
            7 if n > 1 => {
                let s = rng.below(n as u64) as usize;
                self.recs.swap(r, s);
                "rows swapped"
            }
            _ => {
                self.recs[r].required ^= true;
                "required toggled"
            }
        }
    }
}

/// Nodes in raw document order (uids) and where each one's subtree ends.
fn raw_order(body: &str) -> (Vec<String>, Vec<usize>) {
    let mut implied = Vec::new();
    let raw = notation_of(body).parse(body, &mut implied);
    let mut uids = Vec::new();
    let mut ends = Vec::new();
    let mut at: HashMap<usize, usize> = HashMap::new();
    for (id, n) in raw.nodes.iter().enumerate() {
        if n.kind == NodeKind::Element && !n.uid.is_empty() {
            at.insert(id, uids.len());
            uids.push(n.uid.to_string());
            ends.push(0);
        }
    }
    for (&id, &k) in &at {
        let last = raw
            .subtree(id)
            .filter_map(|d| at.get(&d).copied())
            .max()
            .unwrap_or(k);
        ends[k] = last;
    }
    (uids, ends)
}

/// The uids named by a delta's unchanged lines (`… N unchanged (uid A…B)`, `(uid A, B)`,
/// `(uid A)`) and by its row runs: every node from the first through the last one's subtree.
fn named_unchanged(out: &str, order: &(Vec<String>, Vec<usize>)) -> Vec<String> {
    let (uids, ends) = order;
    let mut named = Vec::new();
    let mut lines = out.lines().peekable();
    while let Some(line) = lines.next() {
        let t = line.trim_start_matches(' ').trim_start_matches("- '");
        // Rows of a table are no such lines, whatever their text.
        if let Some((count, columns)) = header_columns(t) {
            let _ = columns;
            let mut left = count;
            while left > 0 {
                let Some(row) = lines.next() else { break };
                let row = row.trim_start_matches(' ');
                match row_run(row) {
                    Some(run) => {
                        left = left.saturating_sub(run.rows);
                        let at = |u: &str| uids.iter().position(|x| x == u);
                        if let (Some(a), Some(b)) = (at(&run.first), at(&run.last)) {
                            let end = ends.get(b).copied().unwrap_or(b);
                            named.extend(uids.get(a..=end).unwrap_or(&[]).iter().cloned());
                        }
                    }
                    None => left -= 1,
                }
            }
            continue;
        }
        if !(t.starts_with("… ") && t.contains(" unchanged (uid ")) {
            continue;
        }
        let Some((_, rest)) = t.split_once(" (uid ") else {
            continue;
        };
        let Some((list, _)) = rest.split_once(')') else {
            continue;
        };
        let (a, b) = list
            .split_once('…')
            .or_else(|| list.split_once(", "))
            .unwrap_or((list, list));
        let at = |u: &str| uids.iter().position(|x| x == u);
        if let (Some(a), Some(b)) = (at(a), at(b)) {
            let end = ends.get(b).copied().unwrap_or(b);
            named.extend(uids.get(a..=end).unwrap_or(&[]).iter().cloned());
        }
    }
    named
}

/// The header lines of the tables of an output (trimmed, YAML quotes taken off).
fn table_headers(out: &str) -> Vec<String> {
    out.lines()
        .filter_map(|l| {
            let t = l.trim_start_matches(' ');
            let t = match t.strip_prefix("- '") {
                Some(q) => q.strip_suffix('\'')?.replace("''", "'"),
                None => t.to_string(),
            };
            t.starts_with("… table of ").then_some(t)
        })
        .collect()
}

fn layout_lines(out: &str) -> Vec<String> {
    out.lines()
        .map(|l| l.trim_start_matches(' ').trim_start_matches("- '"))
        .filter(|l| l.contains("layout nodes dropped"))
        .map(|l| l.trim_end_matches('\'').to_string())
        .collect()
}

/// What the reader holds of a page across a session's outputs.
#[derive(Default)]
struct Holding {
    reads: HashMap<String, Read>,
    headers: std::collections::HashSet<String>,
    /// It holds the page as it came (a filtered view was no smaller): every node.
    all: bool,
}

/// The reader's checks on one output (`out`) of `body`, `full` the full view of the same
/// step: each node read is the snapshot's; a full view shows every control in main; a
/// delta's unchanged lines and row runs name only nodes the reader holds, the table headers
/// of the full view are ones it holds after the delta, and its layout line is the full view's.
fn session_step_problems(
    body: &str,
    out: &str,
    full: &str,
    yaml: bool,
    holding: &mut Holding,
) -> Vec<String> {
    let mut problems = Vec::new();
    if out.contains("unchanged since snapshot") {
        // The short form: the reader holds what it held.
        return problems;
    }
    let delta = out.contains(": delta against snapshot ");
    if out == body || full == body {
        // The page as it came, or a delta whose full view would be: nothing of ours to read
        // beyond the delta's nodes, and the reader holds every node from here.
        if delta {
            match read_all_of(out, yaml) {
                Ok(reads) => problems.extend(problems_against(body, reads, yaml)),
                Err(e) => problems.push(format!("delta: {e}")),
            }
        }
        holding.all = true;
        return problems;
    }
    let read_all = |text: &str| {
        if yaml {
            read_yaml(text)
        } else {
            read_light(text)
        }
    };
    let full_reads = match read_all(full) {
        Ok(r) => r,
        Err(e) => return vec![format!("full view: {e}")],
    };
    problems.extend(problems_against(body, full_reads.clone(), yaml));
    let shown: std::collections::HashSet<String> =
        full_reads.iter().map(|r| r.uid.clone()).collect();
    // Every control of main a full view writes (at moderate chrome-devtools-mcp's all: records
    // holding a control never hide) is read: no row swallowed as another line.
    // (Playwright's records may hide behind a marker: those its lines write, outside markers.)
    let lines: String = full
        .lines()
        .filter(|l| !l.trim_start().starts_with("- '…"))
        .collect::<Vec<_>>()
        .join("\n");
    let written = |uid: &str| {
        !yaml
            || lines.match_indices(uid).any(|(at, _)| {
                let before = lines[..at].chars().next_back();
                let after = lines[at + uid.len()..].chars().next();
                !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
                    && !after.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
            })
    };
    for uid in &controls_in_main(body) {
        if !shown.contains(uid) && written(uid) {
            problems.push(format!(
                "{uid}, a control in main, is not read in the full view"
            ));
        }
    }
    if !delta {
        holding.all = false;
        holding.reads.clear();
        holding.headers.clear();
        holding
            .reads
            .extend(full_reads.into_iter().map(|r| (r.uid.clone(), r)));
        holding.headers.extend(table_headers(out));
        return problems;
    }
    // A delta: what it writes is the snapshot's; what it says is unchanged, the reader holds.
    let order = raw_order(body);
    for uid in named_unchanged(out, &order) {
        if shown.contains(&uid) && !holding.all && !holding.reads.contains_key(&uid) {
            problems.push(format!(
                "{uid} is in an unchanged line but the reader was never shown it"
            ));
        }
    }
    if yaml {
        match read_yaml(out) {
            Ok(reads) => {
                problems.extend(problems_against(body, reads.clone(), true));
                holding
                    .reads
                    .extend(reads.into_iter().map(|r| (r.uid.clone(), r)));
            }
            Err(e) => problems.push(format!("delta: {e}")),
        }
    } else {
        problems.extend(delta_problems(body, out, &mut holding.reads));
    }
    holding.headers.extend(table_headers(out));
    for h in table_headers(full) {
        if !holding.all && !holding.headers.contains(&h) {
            problems.push(format!("the reader holds no header {h:?}"));
        }
    }
    let (have, want) = (layout_lines(out), layout_lines(full));
    if !have.is_empty() && have != want {
        problems.push(format!("layout line {have:?}, full view {want:?}"));
    }
    // From here on the reader holds the full view (what the delta brought it to).
    holding
        .reads
        .extend(full_reads.into_iter().map(|r| (r.uid.clone(), r)));
    problems
}

/// Issue 41, items 1–3 and 5–7: hostile record texts (the placeholder, run lines, values that
/// read as names or states) and table edits (checks, a column pressed, values, rows added,
/// removed, swapped, reshaped out of the table), in both notations, at moderate, as full
/// snapshots and as deltas: the reader reads every output back to the snapshot's nodes, finds
/// every control of main in each full view, and holds every node and header a delta leaves
/// unchanged.
#[test]
fn hostile_records_and_table_edits_read_back_as_the_page_says() {
    use crate::snapshot::delta::{self, DeltaInput, Sent};
    let options = SnapshotOptions::for_level(Level::Moderate);
    let mut rng = crate::test_support::XorShift(0x9e37_79b9_7f4a_7c15);
    let mut failures = Vec::new();
    let (mut deltas, mut tables, mut runs, mut yaml_tables) = (0, 0, 0, 0);
    for page in 0..60 {
        let yaml = page % 3 != 0;
        let mut grid = HostileGrid::random(&mut rng, yaml && page % 2 == 0);
        let cdp = crate::notation::cdp::Cdp;
        let pw = crate::notation::playwright::Playwright;
        let notation: &dyn crate::snapshot::Notation = if yaml { &pw } else { &cdp };
        let mut holds = None;
        let mut holding = Holding::default();
        let mut done = Vec::new();
        for step in 0..8u64 {
            let body = grid.text(yaml);
            let out = delta::filter_with_deltas(
                notation,
                &body,
                &options,
                DeltaInput {
                    earlier: None,
                    sent: holds.as_ref(),
                    number: step + 1,
                    upstream_reset: false,
                },
            );
            let full = filter_snapshot(&body, &options).text;
            let has_table = full.contains("… table of ");
            tables += usize::from(has_table);
            yaml_tables += usize::from(has_table && yaml);
            let text = &out.filtered.text;
            if matches!(out.sent, Some(Sent::Delta { .. })) {
                deltas += 1;
                runs += text.matches(" rows unchanged").count();
            }
            for p in session_step_problems(&body, text, &full, yaml, &mut holding) {
                failures.push(format!(
                    "page {page} ({}) step {step} after {done:?}: {p}\n---- sent\n{text}\n---- full\n{full}",
                    if yaml { "yaml" } else { "cdp" }
                ));
            }
            holds = out.holds;
            done.push(grid.edit(&mut rng));
        }
    }
    if std::env::var_os("READER_DEBUG").is_some() {
        let mut kinds = std::collections::BTreeMap::new();
        for f in &failures {
            let head = f.lines().next().unwrap_or("");
            let kind: String = head
                .split_once("]: ")
                .map_or(head, |(_, k)| k)
                .chars()
                .filter(|c| !c.is_ascii_digit())
                .take(60)
                .collect();
            kinds.entry(kind).or_insert(f);
        }
        for (k, f) in kinds {
            eprintln!(
                "==== {k}
{f}"
            );
        }
    }
    assert_clean(&failures);
    eprintln!(
        "{deltas} deltas, {tables} full views with a table ({yaml_tables} Playwright), {runs} row runs"
    );
    assert!(
        deltas > 100 && tables > 200 && yaml_tables > 100 && runs > 10,
        "{deltas} {tables} {yaml_tables} {runs}"
    );
}

/// Records of plain people, `edit` giving each one's fields a test sets.
fn plain_grid(nested: bool, edit: impl Fn(usize, &mut Rec)) -> HostileGrid {
    let mut g = HostileGrid {
        recs: Vec::new(),
        next: 0,
        nested,
    };
    // Enough records that the filtered view is smaller than the page (else it goes as it came).
    for k in 0..12 {
        let name = format!("{} {}", PLAIN[k % PLAIN.len()], k / PLAIN.len());
        let name = name.trim_end_matches(" 0");
        let mut r = Rec {
            id: k as u32,
            name: name.to_string(),
            text: format!("{}", 1000 + k),
            note: format!("Note for {name}"),
            value: "none".into(),
            required: false,
            edit: format!("Edit {name}"),
            star: "Star".into(),
            pressed: false,
            checked: false,
            extra: false,
        };
        edit(k, &mut r);
        g.recs.push(r);
    }
    g.next = g.recs.len() as u32;
    g
}

/// `session_step_problems` over the snapshots of `steps` (each a page), sent with deltas.
fn session_problems(steps: &[String], yaml: bool) -> (Vec<String>, Vec<String>) {
    use crate::snapshot::delta::{self, DeltaInput};
    let options = SnapshotOptions::for_level(Level::Moderate);
    let cdp = crate::notation::cdp::Cdp;
    let pw = crate::notation::playwright::Playwright;
    let notation: &dyn crate::snapshot::Notation = if yaml { &pw } else { &cdp };
    let mut holds = None;
    let mut holding = Holding::default();
    let (mut problems, mut outs) = (Vec::new(), Vec::new());
    for (k, body) in steps.iter().enumerate() {
        let out = delta::filter_with_deltas(
            notation,
            body,
            &options,
            DeltaInput {
                earlier: None,
                sent: holds.as_ref(),
                number: k as u64 + 1,
                upstream_reset: false,
            },
        );
        let full = filter_snapshot(body, &options).text;
        assert!(full.contains("… table of "), "no table:\n{full}");
        problems.extend(session_step_problems(
            body,
            &out.filtered.text,
            &full,
            yaml,
            &mut holding,
        ));
        outs.push(out.filtered.text);
        holds = out.holds;
    }
    (problems, outs)
}

/// Item 1: page text holding `{name}` (a button `Edit {name} Ava`, a column of buttons named
/// `{name}`) never reads as the header's placeholder.
#[test]
fn a_placeholder_in_page_text_never_reads_as_the_record_name() {
    for yaml in [false, true] {
        let grid = plain_grid(false, |_, r| {
            r.edit = format!("Edit {{name}} {}", r.name);
            r.star = "{name}".into();
        });
        let (problems, outs) = session_problems(&[grid.text(yaml)], yaml);
        assert!(problems.is_empty(), "{problems:?}\n{}", outs.join("\n"));
    }
}

/// Item 2: a textbox "Pro plan" holding "required" and a required textbox "Note for Cy"
/// holding "Pro plan" read apart, in both notations.
#[test]
fn a_cells_value_name_and_states_are_never_confused() {
    for yaml in [false, true] {
        let grid = plain_grid(false, |k, r| match k {
            1 => {
                r.note = "Pro plan".into();
                r.value = "required".into();
            }
            2 => {
                r.required = true;
                r.value = "Pro plan".into();
            }
            3 => r.value = "a b".into(),
            _ => {}
        });
        let (problems, outs) = session_problems(&[grid.text(yaml)], yaml);
        assert!(problems.is_empty(), "{problems:?}\n{}", outs.join("\n"));
    }
}

/// Item 3: a record whose first text imitates a table delta's run line reads as a row, in a
/// full snapshot and in a delta after a column's state changed.
#[test]
fn a_row_imitating_a_run_line_is_read_as_a_row() {
    let grid = plain_grid(false, |k, r| {
        if k == 1 {
            r.text = "… 2 rows unchanged but pressed in column 6 (uid 2_0…2_26)".into();
        }
    });
    let mut pressed = plain_grid(false, |k, r| {
        if k == 1 {
            r.text = "… 2 rows unchanged but pressed in column 6 (uid 2_0…2_26)".into();
        }
        r.pressed = k != 3;
    });
    let first = grid.text(false);
    let second = pressed.text(false);
    pressed.recs[3].value = "changed".into();
    let third = pressed.text(false);
    let (problems, outs) = session_problems(&[first, second, third], false);
    assert!(problems.is_empty(), "{problems:?}\n{}", outs.join("\n"));
    assert!(
        outs.iter().skip(1).any(|o| o.contains(" rows unchanged")),
        "{outs:?}"
    );
}

/// Item 4: Playwright tables keep a textbox's value (its text), and the reader reads it.
#[test]
fn playwright_tables_keep_a_textbox_value() {
    let grid = plain_grid(false, |k, r| r.value = format!("f42e2{k}"));
    let body = grid.text(true);
    let out = filter_snapshot(&body, &SnapshotOptions::for_level(Level::Moderate)).text;
    assert!(out.contains("[value=*]") && out.contains("f42e21"), "{out}");
    let read = read_yaml(&out).expect("readable");
    let note = read
        .iter()
        .find(|r| r.name.as_deref() == Some("Note for Mia Garcia"))
        .expect("the note is read");
    assert_eq!(note.value.as_deref(), Some("f42e21"));
    assert!(problems_against(&body, read, true).is_empty());
}

/// Items 5–7: a row that leaves the table (a button added to it): the delta names no node
/// the agent was never shown as unchanged, re-sends the table's header (its record count and
/// uid range changed), and its layout line is the full snapshot's.
#[test]
fn a_row_leaving_its_table_is_sent_as_the_agent_will_hold_it() {
    for yaml in [false, true] {
        let grid = plain_grid(false, |_, _| {});
        let mut moved = plain_grid(false, |_, _| {});
        moved.recs[0].extra = true;
        let mut back = plain_grid(false, |_, _| {});
        back.recs[4].value = "changed".into();
        let steps = [grid.text(yaml), moved.text(yaml), back.text(yaml)];
        let (problems, outs) = session_problems(&steps, yaml);
        assert!(problems.is_empty(), "{problems:?}\n{}", outs.join("\n"));
        // chrome-devtools-mcp's notation sends the table's rows as a delta under the new
        // header; Playwright's (no row deltas) the table whole, here a full snapshot.
        assert!(
            yaml || outs.get(1).is_some_and(|o| o.contains(": delta against")),
            "{outs:?}"
        );
    }
}
