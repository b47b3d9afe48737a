//! Issue 24 item 6: deltas over random edits of pages made here (never the shared corpus):
//! rename, role change, check, swap, reverse, move to another parent, remove, add, at moderate
//! and aggressive. The oracle: what an agent rebuilds from the first full snapshot plus each
//! delta (the short form: what it held) equals the full filtered snapshot of the same step;
//! a delta's "layout nodes dropped" line is the full snapshot's; every uid shown is in the raw
//! snapshot. Under small token budgets, through a `Session`: every uid of the page stays
//! shown or reachable by the calls the output names. Bounded and deterministic (fixed seeds).

use std::collections::HashSet;

use serde_json::json;

use crate::level::Level;
use crate::session::{Session, SessionOptions};
use crate::snapshot::delta::{self, DeltaInput, Sent};
use crate::snapshot::marker::read_marker;
use crate::snapshot::SnapshotOptions;
use crate::stats::StatsMode;
use crate::test_support::XorShift;

use super::delta_tests::{contains_uid as mentions, text_of, UID_SPOT};

/// A node of a generated page: its uid (`<prefix>_<n>`), role, name, attributes, children.
#[derive(Debug, Clone)]
pub(crate) struct PageNode {
    pub uid: String,
    pub role: &'static str,
    pub name: Option<String>,
    pub attrs: Vec<String>,
    pub children: Vec<PageNode>,
}

const CONTAINERS: [&str; 6] = ["list", "navigation", "group", "generic", "region", "table"];
const LEAVES: [&str; 6] = [
    "button",
    "link",
    "StaticText",
    "checkbox",
    "heading",
    "listitem",
];
const WORDS: [&str; 8] = [
    "Invoice", "Pending", "Flights", "Refund", "Settings", "Report", "Status", "Archive",
];

/// A page of our own: lists long enough for records to be hidden, layout wrappers (`generic`
/// without a name, dropped at moderate), nested groups.
pub(crate) struct Page {
    pub roots: Vec<PageNode>,
    next: u32,
    prefix: u32,
}

impl Page {
    pub fn random(rng: &mut XorShift) -> Page {
        let mut page = Page {
            roots: Vec::new(),
            next: 1,
            prefix: 1,
        };
        let mut root = PageNode {
            uid: "1_0".into(),
            role: "RootWebArea",
            name: Some("Generated page".into()),
            attrs: vec!["url=\"http://127.0.0.1/app\"".into()],
            children: Vec::new(),
        };
        for _ in 0..2 + rng.below(4) {
            let child = page.subtree(rng, 1);
            root.children.push(child);
        }
        page.roots.push(root);
        page
    }

    fn uid(&mut self) -> String {
        let uid = format!("{}_{}", self.prefix, self.next);
        self.next += 1;
        uid
    }

    fn leaf(&mut self, rng: &mut XorShift) -> PageNode {
        let role = LEAVES[rng.below(LEAVES.len() as u64) as usize];
        let uid = self.uid();
        let name = format!("{} {}", rng.pick(&WORDS), uid);
        let mut attrs = Vec::new();
        if role == "link" {
            attrs.push(format!("url=\"http://127.0.0.1/{uid}\""));
        }
        PageNode {
            uid,
            role,
            name: Some(name),
            attrs,
            children: Vec::new(),
        }
    }

    fn subtree(&mut self, rng: &mut XorShift, depth: u32) -> PageNode {
        if depth > 3 || rng.below(3) == 0 {
            return self.leaf(rng);
        }
        let role = CONTAINERS[rng.below(CONTAINERS.len() as u64) as usize];
        let uid = self.uid();
        let name =
            (role != "generic" && rng.below(2) == 0).then(|| format!("{} {uid}", rng.pick(&WORDS)));
        let mut node = PageNode {
            uid,
            role,
            name,
            attrs: Vec::new(),
            children: Vec::new(),
        };
        // Some long runs of alike siblings (records), else a few mixed children.
        let n = if role == "list" || role == "table" {
            3 + rng.below(18)
        } else {
            1 + rng.below(5)
        };
        for _ in 0..n {
            let child = if role == "list" {
                let uid = self.uid();
                let mut item = PageNode {
                    uid,
                    role: "listitem",
                    name: None,
                    attrs: Vec::new(),
                    children: Vec::new(),
                };
                item.children.push(self.leaf(rng));
                item
            } else {
                self.subtree(rng, depth + 1)
            };
            node.children.push(child);
        }
        node
    }

    /// The page as chrome-devtools-mcp 1.11 prints it.
    pub fn text(&self) -> String {
        let mut out = String::new();
        let mut stack: Vec<(&PageNode, usize)> = self.roots.iter().rev().map(|r| (r, 0)).collect();
        while let Some((node, depth)) = stack.pop() {
            out.push_str(&"  ".repeat(depth));
            out.push_str("uid=");
            out.push_str(&node.uid);
            out.push(' ');
            out.push_str(node.role);
            if let Some(name) = &node.name {
                out.push_str(&format!(" \"{name}\""));
            }
            for a in &node.attrs {
                out.push(' ');
                out.push_str(a);
            }
            out.push('\n');
            stack.extend(node.children.iter().rev().map(|c| (c, depth + 1)));
        }
        out
    }

    /// Paths (child indexes from the first root) of every node but the root.
    fn paths(&self) -> Vec<Vec<usize>> {
        let mut out = Vec::new();
        let mut stack: Vec<(Vec<usize>, &PageNode)> = vec![(Vec::new(), &self.roots[0])];
        while let Some((path, node)) = stack.pop() {
            for (i, c) in node.children.iter().enumerate() {
                let mut p = path.clone();
                p.push(i);
                out.push(p.clone());
                stack.push((p, c));
            }
        }
        out.sort();
        out
    }

    fn at(&mut self, path: &[usize]) -> Option<&mut PageNode> {
        let mut node = self.roots.get_mut(0)?;
        for &i in path {
            node = node.children.get_mut(i)?;
        }
        Some(node)
    }

    /// One random edit; returns its name.
    pub fn edit(&mut self, rng: &mut XorShift) -> &'static str {
        let paths = self.paths();
        if paths.is_empty() {
            return "none";
        }
        let pick = |rng: &mut XorShift| paths[rng.below(paths.len() as u64) as usize].clone();
        let path = pick(rng);
        match rng.below(8) {
            0 => {
                if let Some(n) = self.at(&path) {
                    n.name = Some(format!("renamed {}", n.uid));
                }
                "rename"
            }
            1 => {
                let role = LEAVES[rng.below(LEAVES.len() as u64) as usize];
                if let Some(n) = self.at(&path) {
                    n.role = role;
                }
                "role"
            }
            2 => {
                if let Some(n) = self.at(&path) {
                    n.attrs.push("checked".into());
                }
                "check"
            }
            3 => {
                let (a, b) = (rng.below(8) as usize, rng.below(8) as usize);
                if let Some(n) = self.at(&path[..path.len() - 1]) {
                    let len = n.children.len();
                    if len > 1 {
                        n.children.swap(a % len, b % len);
                    }
                }
                "swap"
            }
            4 => {
                if let Some(n) = self.at(&path[..path.len() - 1]) {
                    n.children.reverse();
                }
                "reverse"
            }
            5 => {
                // Moved to another parent, keeping its uids (a DOM node moved).
                let Some(moved) = self.detach(&path) else {
                    return "none";
                };
                let targets = self.paths();
                let target = if targets.is_empty() || rng.below(4) == 0 {
                    Vec::new()
                } else {
                    targets[rng.below(targets.len() as u64) as usize].clone()
                };
                let at = rng.below(4) as usize;
                if let Some(t) = self.at(&target) {
                    let at = at.min(t.children.len());
                    t.children.insert(at, moved);
                }
                "move"
            }
            6 => {
                self.detach(&path);
                "remove"
            }
            _ => {
                // New nodes are numbered with a later snapshot's prefix.
                self.prefix = 2;
                let leaf = self.leaf(rng);
                let at = rng.below(4) as usize;
                if let Some(t) = self.at(&path[..path.len() - 1]) {
                    let at = at.min(t.children.len());
                    t.children.insert(at, leaf);
                }
                "add"
            }
        }
    }

    fn detach(&mut self, path: &[usize]) -> Option<PageNode> {
        let (&last, parent) = path.split_last()?;
        let p = self.at(parent)?;
        (last < p.children.len()).then(|| p.children.remove(last))
    }
}

fn uids_of(body: &str) -> HashSet<String> {
    let mut implied = Vec::new();
    crate::notation::notation_of(body)
        .parse(body, &mut implied)
        .uids()
        .map(str::to_string)
        .collect()
}

/// Every uid an output shows or names (but for its removed lines) is one of the page's.
fn assert_uids_in_page(out: &str, page: &str, what: &str) {
    let raw_uids = uids_of(page);
    for line in out.lines() {
        if line.trim_start().starts_with("… removed") {
            continue;
        }
        for m in UID_SPOT.captures_iter(line) {
            let uid = m.get(1).map_or("", |g| g.as_str());
            assert!(raw_uids.contains(uid), "{uid} not in the page: {what}");
        }
    }
}

fn dropped_lines(text: &str) -> Vec<&str> {
    text.lines()
        .map(str::trim_start)
        .filter(|l| l.contains("layout nodes dropped"))
        .collect()
}

#[test]
fn deltas_of_random_edits_on_generated_pages_rebuild_the_full_snapshot() {
    use super::delta_tests::rebuild::Held;
    let cdp = crate::notation::cdp::Cdp;
    let mut rng = XorShift(0x2545_f491_4f6c_dd1d);
    let (mut deltas, mut short, mut moved_seen) = (0, 0, 0);
    for _page in 0..30 {
        let mut page = Page::random(&mut rng);
        for level in [Level::Moderate, Level::Aggressive] {
            let options = SnapshotOptions::for_level(level);
            let mut page = Page {
                roots: page.roots.clone(),
                next: page.next,
                prefix: page.prefix,
            };
            let mut text = page.text();
            let first = delta::filter_with_deltas(
                &cdp,
                &text,
                &options,
                DeltaInput {
                    earlier: None,
                    sent: None,
                    number: 1,
                    upstream_reset: false,
                },
            );
            let Some(mut holds) = first.holds else {
                panic!("no fingerprint at {level}");
            };
            let mut held = Held::of(&cdp, &text, &options);
            let mut done = Vec::new();
            let mut prev_text = text.clone();
            for round in 0..8u64 {
                for _ in 0..1 + rng.below(2) {
                    done.push(page.edit(&mut rng));
                }
                text = page.text();
                let out = delta::filter_with_deltas(
                    &cdp,
                    &text,
                    &options,
                    DeltaInput {
                        earlier: None,
                        sent: Some(&holds),
                        number: 2 + round,
                        upstream_reset: false,
                    },
                );
                let expected = Held::of(&cdp, &text, &options);
                let what = format!(
                    "{level} round {round} after {done:?}\n{}",
                    out.filtered.text
                );
                assert_uids_in_page(&out.filtered.text, &text, &what);
                if let Some(Sent::Delta { counts, .. }) = out.sent {
                    deltas += 1;
                    if counts.moved > 0 {
                        moved_seen += 1;
                    }
                    if counts.is_empty() {
                        short += 1;
                        assert_eq!(held, expected, "called unchanged: {what}");
                    } else {
                        if std::env::var_os("DELTA_DEBUG").is_some() {
                            let prev = crate::notation::filter_snapshot(&prev_text, &options).text;
                            eprintln!("PREVIOUS\n{prev}\nDELTA {what}");
                        }
                        let got = held.apply(&cdp, &text, &options, &holds);
                        assert_eq!(got, expected, "{what}");
                        // The dropped line, where the delta writes one, is the full view's;
                        // it is there wherever the delta opens the root's frame.
                        let full = crate::notation::filter_snapshot(&text, &options).text;
                        let want = dropped_lines(&full);
                        let have = dropped_lines(&out.filtered.text);
                        let root_open = out.filtered.text.lines().any(|l| l.starts_with("1_0 "));
                        if root_open || !have.is_empty() {
                            assert_eq!(have, want, "layout nodes dropped: {what}");
                        }
                    }
                }
                held = expected;
                holds = out.holds.expect("a fingerprint");
                prev_text = text.clone();
            }
        }
        let _ = &mut page;
    }
    eprintln!("{deltas} deltas checked, {short} short forms, {moved_seen} with moves counted");
    assert!(
        deltas > 200 && short > 0 && moved_seen > 20,
        "{deltas} {short} {moved_seen}"
    );
}

fn budget_session(level: Level, max_tokens: usize) -> Session {
    let mut options = SessionOptions::for_level(level);
    options.stats = StatsMode::Off;
    options.snapshot_deltas = true;
    options.max_tokens = max_tokens;
    Session::new(options)
}

/// `text` with every `read_result id=… offset=…` it names read on (bounded).
fn read_on(s: &mut Session, text: String) -> String {
    let pattern = regex::Regex::new(r"read_result id=(r\d+) offset=(\d+)").expect("regex");
    let mut all = text.clone();
    let mut next = text;
    for _ in 0..200 {
        let Some(c) = pattern.captures(&next) else {
            break;
        };
        let args = json!({"id": &c[1], "offset": c[2].parse::<u64>().unwrap_or(0)});
        let answer = s
            .call_proxy_tool("read_result", Some(&args.to_string()))
            .unwrap_or_default();
        next = text_of(&answer);
        all.push('\n');
        all.push_str(&next);
    }
    all
}

#[test]
fn under_small_budgets_every_uid_of_generated_pages_stays_reachable() {
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    let mut checked = 0;
    for _page in 0..12 {
        let base = Page::random(&mut rng);
        for (level, max_tokens) in [(Level::Moderate, 400), (Level::Aggressive, 250)] {
            let mut page = Page {
                roots: base.roots.clone(),
                next: base.next,
                prefix: base.prefix,
            };
            let mut s = budget_session(level, max_tokens);
            for round in 0..5 {
                if round > 0 {
                    page.edit(&mut rng);
                }
                let body = page.text();
                let result = json!({"content": [{"type": "text", "text":
                    format!("# take_snapshot response\n## Latest page snapshot\n{body}")}]});
                let out = s
                    .filter_tool_result(
                        "take_snapshot",
                        &result.to_string(),
                        Some(r#"{"pageId":1}"#),
                    )
                    .ok()
                    .flatten()
                    .unwrap_or_else(|| result.to_string());
                let sent = read_on(&mut s, text_of(&out));
                let uids = uids_of(&body);
                let mut covered: HashSet<String> = HashSet::new();
                let mut short = false;
                for line in sent.lines() {
                    let t = line.trim_start();
                    if t.contains("unchanged since snapshot") {
                        short = true;
                    }
                    for m in UID_SPOT.captures_iter(t) {
                        covered.insert(m[1].to_string());
                    }
                    if !t.starts_with('…') {
                        continue;
                    }
                    let m = read_marker(t);
                    let Some(uid) = m.expand_uid else { continue };
                    let mut args = json!({"uid": uid, "pageId": 1});
                    if let Some(until) = m.until {
                        args["until"] = json!(until);
                    }
                    let answer = s
                        .call_proxy_tool("expand_snapshot", Some(&args.to_string()))
                        .unwrap_or_default();
                    let got = read_on(&mut s, text_of(&answer));
                    covered.extend(uids.iter().filter(|u| mentions(&got, u)).cloned());
                }
                if short || sent.contains("delta against snapshot") {
                    // What the delta does not write the agent holds: the whole page is one
                    // call away (and read on under the budget).
                    let answer = s
                        .call_proxy_tool("expand_snapshot", Some(r#"{"pageId":1}"#))
                        .unwrap_or_default();
                    let whole = read_on(&mut s, text_of(&answer));
                    let want =
                        crate::notation::filter_snapshot(&body, &SnapshotOptions::for_level(level))
                            .text;
                    for uid in uids_of(&want) {
                        assert!(
                            mentions(&whole, &uid),
                            "{uid} not in the whole page: {whole}"
                        );
                    }
                    checked += 1;
                    continue;
                }
                let missing: Vec<&String> = uids.iter().filter(|u| !covered.contains(*u)).collect();
                assert!(
                    missing.is_empty(),
                    "{level} budget {max_tokens}: {missing:?} unreachable\n{sent}"
                );
                checked += 1;
            }
        }
    }
    eprintln!("{checked} budgeted snapshots checked");
    assert!(checked > 100, "{checked}");
}

const PEOPLE: [&str; 10] = [
    "Ada Lovelace",
    "Grace Hopper",
    "Alan Turing",
    "Edsger Dijkstra",
    "Barbara Liskov",
    "Ken Thompson",
    "Radia Perlman",
    "Donald Knuth",
    "Frances Allen",
    "John Backus",
];
const PLANS: [&str; 4] = ["Free", "Starter", "Pro", "Enterprise"];

/// A page of records as chrome-devtools-mcp flattens a grid (rows and cells dropped, each
/// row's cells siblings under `main`): a header row of controls, then rows of a checkbox, the
/// name, a plan, an Edit and a Delete button; a pager after them.
pub(crate) struct Grid {
    pub page: Page,
}

impl Grid {
    pub fn random(rng: &mut XorShift) -> Grid {
        let mut page = Page {
            roots: Vec::new(),
            next: 1,
            prefix: 1,
        };
        let mut main = PageNode {
            uid: page.uid(),
            role: "main",
            name: None,
            attrs: Vec::new(),
            children: Vec::new(),
        };
        let leaf = |page: &mut Page, role: &'static str, name: &str| PageNode {
            uid: page.uid(),
            role,
            name: Some(name.to_string()),
            attrs: Vec::new(),
            children: Vec::new(),
        };
        main.children.push(leaf(&mut page, "heading", "Users"));
        main.children
            .push(leaf(&mut page, "checkbox", "Select all"));
        for _ in 0..4 + rng.below(30) {
            let row = Grid::row(&mut page, rng);
            main.children.extend(row);
        }
        let mut pager = PageNode {
            uid: page.uid(),
            role: "navigation",
            name: Some("Pagination".into()),
            attrs: Vec::new(),
            children: Vec::new(),
        };
        for label in ["Previous", "1", "2", "Next"] {
            pager.children.push(leaf(&mut page, "button", label));
        }
        main.children.push(pager);
        page.roots.push(PageNode {
            uid: "1_0".into(),
            role: "RootWebArea",
            name: Some("Users".into()),
            attrs: vec!["url=\"http://127.0.0.1/app/users\"".into()],
            children: vec![main],
        });
        Grid { page }
    }

    /// One record's cells (five siblings).
    fn row(page: &mut Page, rng: &mut XorShift) -> Vec<PageNode> {
        let name = rng.pick(&PEOPLE).to_string();
        let mut cell = |role: &'static str, name: String, attrs: Vec<String>| PageNode {
            uid: page.uid(),
            role,
            name: Some(name),
            attrs,
            children: Vec::new(),
        };
        let mut checkbox = cell("checkbox", format!("Select {name}"), Vec::new());
        if rng.below(4) == 0 {
            checkbox.attrs.push("checked".into());
        }
        vec![
            checkbox,
            cell("StaticText", name.clone(), Vec::new()),
            cell("StaticText", rng.pick(&PLANS).to_string(), Vec::new()),
            cell("button", format!("Edit {name}"), Vec::new()),
            cell("button", format!("Delete {name}"), Vec::new()),
        ]
    }

    fn main(&mut self) -> &mut PageNode {
        &mut self.page.roots[0].children[0]
    }

    /// The rows' cells: main's children after the heading and the select-all box, before the
    /// pager.
    fn rows(&mut self) -> &mut Vec<PageNode> {
        &mut self.main().children
    }

    fn row_count(&mut self) -> usize {
        (self.rows().len() - 3) / 5
    }

    /// Cell `c` of row `r`.
    fn cell(&mut self, r: usize, c: usize) -> &mut PageNode {
        &mut self.rows()[2 + r * 5 + c]
    }

    fn set_word(node: &mut PageNode, word: &str, on: bool) {
        node.attrs.retain(|a| a != word);
        if on {
            node.attrs.push(word.to_string());
        }
    }

    /// One edit of the kind a grid sees; returns its name.
    pub fn edit(&mut self, rng: &mut XorShift) -> &'static str {
        let rows = self.row_count();
        if rows == 0 {
            return "none";
        }
        let r = rng.below(rows as u64) as usize;
        match rng.below(10) {
            0 => {
                let renamed = rng.below(3) == 0;
                let cell = self.cell(r, 0);
                let on = !cell.attrs.iter().any(|a| a == "checked");
                Grid::set_word(cell, "checked", on);
                if renamed {
                    // A state and the name at once: no run may call it the state alone.
                    cell.name = cell.name.take().map(|n| n + " (new)");
                }
                "check one"
            }
            1 if rng.below(2) == 0 => {
                self.cell(r, 2).name = Some(rng.pick(&PLANS).to_string());
                "plan changed"
            }
            1 => {
                // Every row's state toggled, and one row's name too: that row's change is not
                // the state alone.
                let on = !self.cell(r, 0).attrs.iter().any(|a| a == "checked");
                for k in 0..rows {
                    Grid::set_word(self.cell(k, 0), "checked", on);
                }
                let cell = self.cell(r, 0);
                cell.name = cell.name.take().map(|n| n + " (new)");
                "all toggled, one renamed"
            }
            2 | 3 => {
                // Select all, or none.
                let on = rng.below(2) == 0;
                Grid::set_word(self.cell_outside(), "checked", on);
                for k in 0..rows {
                    Grid::set_word(self.cell(k, 0), "checked", on);
                }
                if on {
                    "select all"
                } else {
                    "select none"
                }
            }
            4 => {
                self.page.prefix = 2;
                let row = Grid::row(&mut self.page, rng);
                let at = 2 + rng.below(rows as u64 + 1) as usize * 5;
                let cells = self.rows();
                for (k, c) in row.into_iter().enumerate() {
                    cells.insert(at + k, c);
                }
                "row added"
            }
            5 => {
                let at = 2 + r * 5;
                self.rows().drain(at..at + 5);
                "row removed"
            }
            6 => {
                let s = rng.below(rows as u64) as usize;
                let (a, b) = (2 + r.min(s) * 5, 2 + r.max(s) * 5);
                if a != b {
                    let cells = self.rows();
                    for k in 0..5 {
                        cells.swap(a + k, b + k);
                    }
                }
                "rows swapped"
            }
            7 => {
                let cells = self.rows();
                let end = cells.len() - 1;
                let mut records: Vec<Vec<PageNode>> = cells
                    .drain(2..end)
                    .collect::<Vec<_>>()
                    .chunks(5)
                    .map(<[_]>::to_vec)
                    .collect();
                records.reverse();
                for (k, c) in records.into_iter().flatten().enumerate() {
                    cells.insert(2 + k, c);
                }
                "rows reversed"
            }
            8 => {
                // Focus on a row's Edit button (two words: focusable focused).
                let cell = self.cell(r, 3);
                let on = !cell.attrs.iter().any(|a| a == "focused");
                Grid::set_word(cell, "focusable", on);
                Grid::set_word(cell, "focused", on);
                "focus moved"
            }
            _ => {
                // Every Delete button disabled or enabled (a column's state, all rows).
                let on = rng.below(2) == 0;
                for k in 0..rows {
                    Grid::set_word(self.cell(k, 4), "disabled", on);
                }
                "deletes disabled"
            }
        }
    }

    fn cell_outside(&mut self) -> &mut PageNode {
        &mut self.rows()[1]
    }
}

/// Deltas of a grid's rows (issue 26: a changed cell inside a table row is a delta of that row):
/// one cell changed, every row toggled, rows added, removed, swapped, reversed. The oracle as
/// above (what the agent rebuilds from the held lines and the delta equals the full view),
/// with the delta's tables written as tables and as nodes; run lines naming rows name whole
/// rows the agent holds, and their uids are the page's.
#[test]
fn deltas_of_edited_grids_rebuild_the_full_snapshot() {
    use super::delta_tests::rebuild::{in_word_order, Held, Tables};
    let cdp = crate::notation::cdp::Cdp;
    let mut rng = XorShift(0x1b87_3593_cc9e_2d51);
    let (mut table_deltas, mut toggled_runs, mut row_runs) = (0, 0, 0);
    let mut kinds: HashSet<&str> = HashSet::new();
    for _page in 0..40 {
        let mut grid = Grid::random(&mut rng);
        let options = SnapshotOptions::for_level(Level::Moderate);
        let mut text = grid.page.text();
        let first = delta::filter_with_deltas(
            &cdp,
            &text,
            &options,
            DeltaInput {
                earlier: None,
                sent: None,
                number: 1,
                upstream_reset: false,
            },
        );
        let mut holds = first.holds.expect("a fingerprint");
        let mut held = Held::of(&cdp, &text, &options);
        let mut done = Vec::new();
        for round in 0..8u64 {
            for _ in 0..1 + rng.below(2) {
                let kind = grid.edit(&mut rng);
                kinds.insert(kind);
                done.push(kind);
            }
            text = grid.page.text();
            let out = delta::filter_with_deltas(
                &cdp,
                &text,
                &options,
                DeltaInput {
                    earlier: None,
                    sent: Some(&holds),
                    number: 2 + round,
                    upstream_reset: false,
                },
            );
            let expected = Held::of(&cdp, &text, &options);
            let what = format!("round {round} after {done:?}\n{}", out.filtered.text);
            assert_uids_in_page(&out.filtered.text, &text, &what);
            if let Some(Sent::Delta { counts, .. }) = out.sent {
                if counts.is_empty() {
                    assert_eq!(held, expected, "called unchanged: {what}");
                } else {
                    for tables in [Tables::Rows, Tables::Ignored, Tables::Nodes] {
                        let got = held.apply_tables(&cdp, &text, &options, &holds, tables);
                        assert_eq!(
                            in_word_order(&got),
                            in_word_order(&expected),
                            "tables {tables:?}: {what}"
                        );
                    }
                    let sent = &out.filtered.text;
                    if sent.contains("… table of ") {
                        table_deltas += 1;
                    }
                    toggled_runs += sent.matches(" rows unchanged but ").count();
                    row_runs += sent.matches(" rows unchanged (uid ").count();
                }
            }
            held = expected;
            holds = out.holds.expect("a fingerprint");
        }
    }
    eprintln!(
        "{table_deltas} table deltas, {toggled_runs} runs with a state changed, {row_runs} runs of rows; edits {kinds:?}"
    );
    assert!(
        table_deltas > 40 && toggled_runs > 10 && row_runs > 10 && kinds.len() == 11,
        "{table_deltas} {toggled_runs} {row_runs} {kinds:?}"
    );
}
