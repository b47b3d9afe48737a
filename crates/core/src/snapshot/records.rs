//! Repeated records: chrome-devtools-mcp's non-verbose snapshots drop table, row, cell, list and
//! listitem nodes, so a 40-row grid arrives as one long run of siblings repeating a pattern of
//! roles (checkbox, text, link, …, button "Edit …", button "Delete …"). This pass finds such
//! periodic runs (from where the repetition really starts) and hides the records after the first
//! few behind one marker (`hidden_records`); the records it shows stay whole for later passes
//! (`record_members`, `record_labels`). With `max_condensed_records`, records inside `main`
//! after those show their controls and labels only, their other nodes behind one marker for the
//! run (`condensed_records`). Also: the options of a collapsed combobox or listbox beyond the
//! selected one.

use super::prune::Facts;
use super::roles;
use std::collections::{HashMap, HashSet};
use std::hash::BuildHasherDefault;

use super::tree::{Column, ColumnName, CondensedRun, NodeKind, RecordRun, Table, Tree, UidHasher};
use super::walk::{visible_children, Containers};

/// Longest record looked for (siblings per record).
const MAX_PERIOD: usize = 24;
/// Shortest record looked for: a single repeated role is `collapse_similar`'s job.
const MIN_PERIOD: usize = 2;
/// Repetitions that make a run of records.
pub(super) const MIN_RECORDS: usize = 3;
/// Hiding fewer siblings than this costs more as a marker than it saves.
const MIN_HIDDEN_SIBLINGS: usize = 4;

/// What a sibling contributes to a record's shape; `None` breaks a run (markers, unreadable
/// lines, headings, anything a pass hid already).
fn shape_of<'a>(tree: &Tree<'a>, id: usize) -> Option<&'a str> {
    let node = tree.nodes.get(id)?;
    if node.kind != NodeKind::Element || node.hidden || node.role == "heading" {
        return None;
    }
    Some(if node.role.is_empty() {
        "text"
    } else {
        node.role
    })
}

/// A sibling's shape as the search reads it: its role, or `None` (it breaks a run).
type Shape<R> = Option<R>;

/// What the search asks of a role besides equality.
trait Role: Copy + Eq {
    /// Role-less text.
    fn is_text(self) -> bool;
    /// A control other than a link: what a settings row or a card holds.
    fn is_form_control(self) -> bool;
}

impl Role for &str {
    fn is_text(self) -> bool {
        self == "text"
    }

    fn is_form_control(self) -> bool {
        self != "link" && roles::is_interactive_role(self)
    }
}

/// A role as a number (`RoleCodes`): the search compares every sibling's shape with others at
/// every period, and comparing role strings there was most of the pass on long pages of prose.
/// Equal roles have equal codes; the low bits carry what `Role` asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct RoleCode(u32);

impl RoleCode {
    /// The role's place among those numbered (`RoleCodes::names`).
    fn index(self) -> usize {
        (self.0 >> 2) as usize
    }
}

impl Role for RoleCode {
    fn is_text(self) -> bool {
        self.0 & 1 != 0
    }

    fn is_form_control(self) -> bool {
        self.0 & 2 != 0
    }
}

/// The roles of one pass's siblings, numbered as they are met.
#[derive(Default)]
struct RoleCodes<'a> {
    codes: HashMap<&'a str, RoleCode, BuildHasherDefault<UidHasher>>,
    names: Vec<&'a str>,
}

impl<'a> RoleCodes<'a> {
    fn code(&mut self, role: &'a str) -> RoleCode {
        if let Some(&code) = self.codes.get(role) {
            return code;
        }
        let flags = u32::from(role.is_text()) | u32::from(role.is_form_control()) << 1;
        let code = RoleCode((self.names.len() as u32) << 2 | flags);
        self.names.push(role);
        self.codes.insert(role, code);
        code
    }

    fn name(&self, code: RoleCode) -> &'a str {
        self.names.get(code.index()).copied().unwrap_or("")
    }
}

/// `a` equals `b` up to one substitution, insertion or deletion.
fn within_one_edit<R: Role>(a: &[Shape<R>], b: &[Shape<R>]) -> bool {
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let (a_rest, b_rest) = (
        a.get(prefix..).unwrap_or(&[]),
        b.get(prefix..).unwrap_or(&[]),
    );
    match a.len() as isize - b.len() as isize {
        0 => a_rest.is_empty() || a_rest.get(1..) == b_rest.get(1..),
        1 => a_rest.get(1..) == Some(b_rest),
        -1 => b_rest.get(1..) == Some(a_rest),
        _ => false,
    }
}

/// The length of the record starting at `start` that matches `template` (exactly, or up to
/// one edit after its head); with `next_head`, the sibling after it must start a record too.
fn record_len<R: Role>(
    shapes: &[Shape<R>],
    start: usize,
    template: &[Shape<R>],
    next_head: bool,
) -> Option<usize> {
    let head = template.first().copied().flatten()?;
    let p = template.len();
    for len in [p, p + 1, p - 1] {
        if len < MIN_PERIOD {
            continue;
        }
        let Some(seg) = shapes.get(start..start + len) else {
            continue;
        };
        if seg.first() != Some(&Some(head))
            || seg.iter().skip(1).any(|s| s.is_none() || *s == Some(head))
        {
            continue;
        }
        if next_head && shapes.get(start + len).copied().flatten() != Some(head) {
            continue;
        }
        if within_one_edit(seg, template) {
            return Some(len);
        }
    }
    None
}

/// The run of records starting at `start` with period `p`: where each record starts, and
/// where the run ends (at least `MIN_RECORDS` records).
fn records_at<R: Role>(shapes: &[Shape<R>], start: usize, p: usize) -> Option<(Vec<usize>, usize)> {
    let template = shapes.get(start..start + p)?;
    let head = template.first().copied().flatten()?;
    if template
        .iter()
        .skip(1)
        .any(|s| s.is_none() || *s == Some(head))
        || shapes.get(start + p).copied().flatten() != Some(head)
    {
        return None;
    }
    let mut starts = vec![start];
    let mut pos = start + p;
    loop {
        let len = record_len(shapes, pos, template, true);
        let last = len.is_none();
        let Some(len) = len.or_else(|| record_len(shapes, pos, template, false)) else {
            break;
        };
        starts.push(pos);
        pos += len;
        if last {
            break;
        }
    }
    (starts.len() >= MIN_RECORDS).then_some((starts, pos))
}

/// The run of records starting at `start` that repeat the `p` siblings there exactly, for
/// records whose every role recurs inside them (a settings row: its text, a switch, the
/// switch's label, a second switch and its label), which `records_at` cannot find: it needs
/// a head that opens each record once. Exact repetition needs none. `repeat_end` is
/// `repeat_end(shapes, start, p)`.
fn exact_records_at<R: Role>(
    shapes: &[Shape<R>],
    start: usize,
    p: usize,
    repeat_end: usize,
) -> Option<(Vec<usize>, usize)> {
    // The cheap test first: this runs for every sibling and period where the sibling's shape
    // recurs (text and links running through prose), and most fail here.
    if repeat_end < start + (MIN_RECORDS - 1) * p {
        return None;
    }
    let template = shapes.get(start..start + p)?;
    // A template repeating a shorter one (a run of texts) is the shorter run's, or
    // `collapse_similar`'s for a single role.
    let repeats_shorter = (1..p).any(|d| {
        p.is_multiple_of(d)
            && template
                .iter()
                .zip(template.iter().skip(d))
                .all(|(a, b)| a == b)
    });
    // Only for rows of form controls: links running through prose keep the runs a head finds.
    let controls = template.iter().flatten().any(|&r| r.is_form_control());
    if repeats_shorter || !controls {
        return None;
    }
    // Record r repeats the first while every sibling before it equals the one `p` later.
    let records = 1 + (repeat_end - start) / p;
    let starts = (0..records).map(|r| start + r * p).collect();
    Some((starts, start + records * p))
}

/// The first sibling from `from` on that is a break or differs from the one `p` after it: the
/// siblings in `from..repeat_end` are roles, each repeated `p` siblings later.
fn repeat_end<R: Role>(shapes: &[Shape<R>], from: usize, p: usize) -> usize {
    let mut j = from;
    while shapes.get(j).copied().flatten().is_some() && shapes.get(j + p) == shapes.get(j) {
        j += 1;
    }
    j
}

/// `repeat_end` at each period for a search that only moves forward: an end at or past the
/// search's sibling holds there too, so each sibling is compared with the one `p` later once
/// per period rather than at every start before it.
struct RepeatEnds([Option<usize>; MAX_PERIOD + 1]);

impl RepeatEnds {
    fn new() -> RepeatEnds {
        RepeatEnds([None; MAX_PERIOD + 1])
    }

    fn at<R: Role>(&mut self, shapes: &[Shape<R>], from: usize, p: usize) -> usize {
        match self.0.get_mut(p) {
            Some(Some(end)) if *end >= from => *end,
            Some(slot) => *slot.insert(repeat_end(shapes, from, p)),
            None => repeat_end(shapes, from, p),
        }
    }
}

/// Moves a run back to where its first record really starts. The search needs a head that
/// occurs once per record, and that is not always a record's first node: a product card opens
/// with its image link and its name link, so the run was found from the card's checkbox, and
/// each record held one card's controls and the next card's name and prices (the last card's
/// controls shown, its name hidden). When the siblings before the run repeat the end of its
/// first record (from `floor` on), every record starts that much earlier; the last one ends
/// where the siblings after the run still follow the first record's start.
fn align_start<R: Role>(shapes: &[Shape<R>], floor: usize, starts: &mut [usize], end: &mut usize) {
    let (Some(&start), Some(&second)) = (starts.first(), starts.get(1)) else {
        return;
    };
    let p = second - start;
    let matches = |a: usize, b: usize, k: usize| {
        let (Some(x), Some(y)) = (shapes.get(a..a + k), shapes.get(b..b + k)) else {
            return false;
        };
        x == y && x.iter().all(Option::is_some)
    };
    let Some(back) = (1..p)
        .rev()
        .find(|&k| start >= floor + k && matches(start - k, start + p - k, k))
    else {
        // Nothing before it repeats a record's end; does the start of a record dangle after
        // it (an inbox's toolbar button taken as the first row's head, the last row's Reply
        // left over)? Then every record starts that much later; never past a label onto its
        // control (a settings list's "Weekly summary", checkbox: the label opens the row).
        let labels = shapes.get(start).copied().flatten().is_some_and(R::is_text)
            && shapes
                .get(start + 1)
                .copied()
                .flatten()
                .is_some_and(R::is_form_control);
        if let Some(fwd) = (1..p).rev().find(|&f| !labels && matches(*end, start, f)) {
            for s in starts.iter_mut() {
                *s += fwd;
            }
            *end += fwd;
        }
        return;
    };
    for s in starts.iter_mut() {
        *s -= back;
    }
    // The last record's end moved into the next record's place: does a record follow there?
    *end = if matches(*end, start, p - back) {
        *end - back + p
    } else {
        *end - back
    };
}

/// What one run of records found under a container does (item indices).
struct FoundRun {
    starts: Vec<usize>,
    end: usize,
    period: usize,
}

/// Whether `id` or a node under it is something to act on.
fn holds_control(tree: &Tree<'_>, id: usize) -> bool {
    holds(tree, id, roles::is_interactive)
}

/// Whether `id` or a node under it is a control other than a link: what makes records a
/// board's cards or a settings list's rows, not links running through prose.
pub(super) fn holds_form_control(tree: &Tree<'_>, id: usize) -> bool {
    holds(tree, id, roles::is_labelled_control)
}

fn holds(tree: &Tree<'_>, id: usize, control: fn(&super::tree::Node<'_>) -> bool) -> bool {
    // Stops at the first one: records inside `main` are asked this for every run.
    let mut stack = vec![id];
    while let Some(d) = stack.pop() {
        let Some(node) = tree.nodes.get(d) else {
            continue;
        };
        if control(node) {
            return true;
        }
        stack.extend(tree.children(d).iter().copied());
    }
    false
}

/// The siblings of one condensed record (`record`, item ids) that hide: every node that is
/// not a control, holds none and is not a label (the text right before a control other than
/// a link), and not the record's first text when no named link names the record.
fn condensed_cells(tree: &Tree<'_>, record: &[usize], out: &mut Vec<usize>) {
    let node = |id: usize| tree.nodes.get(id);
    let named_link = record
        .iter()
        .any(|&c| node(c).is_some_and(|n| n.role == "link" && !n.name_str().trim().is_empty()));
    let mut first_text = !named_link;
    for (k, &c) in record.iter().enumerate() {
        let Some(n) = node(c) else { continue };
        if holds_control(tree, c) {
            inner_cells(tree, c, out);
            continue;
        }
        let text = n.kind == NodeKind::Element && n.role.is_empty();
        if is_label(tree, c, record.get(k + 1).copied())
            || (text && std::mem::take(&mut first_text))
        {
            continue;
        }
        out.push(c);
    }
}

/// Inside a kept node of a condensed record: what holds no control and labels none hides too
/// (the image of a product link, which repeats the link's name).
fn inner_cells(tree: &Tree<'_>, id: usize, out: &mut Vec<usize>) {
    let mut stack = vec![id];
    while let Some(parent) = stack.pop() {
        let children = tree.children(parent);
        for (k, &c) in children.iter().enumerate() {
            if holds_control(tree, c) {
                stack.push(c);
            } else if !is_label(tree, c, children.get(k + 1).copied()) {
                out.push(c);
            }
        }
    }
}

/// A text whose next sibling is a control other than a link: that control's label.
fn is_label(tree: &Tree<'_>, id: usize, next: Option<usize>) -> bool {
    tree.nodes
        .get(id)
        .is_some_and(|n| n.kind == NodeKind::Element && n.role.is_empty())
        && next
            .and_then(|c| tree.nodes.get(c))
            .is_some_and(roles::is_labelled_control)
}

/// The number after a uid's last `_` (`1_75` → (`1`, 75)).
fn uid_number(uid: &str) -> Option<(&str, u64)> {
    let (prefix, n) = uid.rsplit_once('_')?;
    Some((prefix, n.parse().ok()?))
}

/// The options of a combobox or listbox cell when a table can state them in its header: leaf
/// options whose uids are the ones right after the cell's, and whose selected one (if any) is
/// the one the cell's value names; or options that have no uid at all (Playwright's), at most
/// one selected (the row names it). `Some(vec![])` for a cell without children.
pub(super) fn cell_options<'t>(tree: &'t Tree<'_>, id: usize) -> Option<Vec<&'t str>> {
    let node = tree.nodes.get(id)?;
    let children = tree.children(id);
    if children.is_empty() {
        return Some(Vec::new());
    }
    if !matches!(node.role, "combobox" | "listbox") {
        // An image or text inside a link or button repeats or decorates it: not written.
        let decor = children.iter().all(|&c| {
            tree.nodes.get(c).is_some_and(|n| {
                n.kind == NodeKind::Element
                    && tree.children(c).is_empty()
                    && (n.role.is_empty() || roles::is_image(n.role))
            })
        });
        return decor.then(Vec::new);
    }
    let refless = children
        .iter()
        .all(|&c| tree.nodes.get(c).is_some_and(|o| o.uid.is_empty()));
    let (prefix, n) = if refless {
        ("", 0)
    } else {
        uid_number(node.uid)?
    };
    let value = node.attr("value").and_then(|a| a.value.as_deref());
    let mut names = Vec::new();
    let mut selected_count = 0;
    for (k, &c) in children.iter().enumerate() {
        let o = tree.nodes.get(c)?;
        let name = o.name.as_deref()?;
        let selected = o.has_attr("selected");
        let plain = o
            .attrs
            .iter()
            .all(|a| a.key == "selected" || roles::is_stateless_capability(o, a.key));
        if o.kind != NodeKind::Element
            || o.role != "option"
            || !tree.children(c).is_empty()
            || o.dropped
            || !plain
            || (!refless
                && (uid_number(o.uid)? != (prefix, n + 1 + k as u64)
                    || selected != (value == Some(name))))
        {
            return None;
        }
        selected_count += usize::from(selected);
        names.push(name);
    }
    (selected_count <= 1).then_some(names)
}

/// Whether a sibling can be one cell of a table row: visible, and (what `tables_of` asks
/// besides, reading them once) nothing under it but options the header can state
/// (`cell_options`).
fn tabular_node(tree: &Tree<'_>, id: usize) -> bool {
    tree.nodes.get(id).is_some_and(|n| {
        n.kind == NodeKind::Element && !n.hidden && !n.dropped && !n.devtools_selected
    })
}

/// The attributes a cell writes (what the line writers write of it: no stateless capability,
/// no url a pass dropped), as (key, value).
fn cell_attrs<'n, 'a: 'n>(
    node: &'n super::tree::Node<'a>,
) -> impl Iterator<Item = (&'a str, Option<&'n str>)> + 'n {
    node.attrs
        .iter()
        .filter(|a| !(roles::is_stateless_capability(node, a.key) || node.drops_attr(a.key)))
        .map(|a| (a.key, a.value.as_deref()))
}

/// The columns of a table over `records` (cell ids, one slice per record, all of one shape),
/// texts limited to `max_text` characters per record. Text cells are role-less nodes; with
/// `nested` (records that are nodes of their own, `nested::collapse_nested`) also every cell
/// without a uid written (a Playwright `cell "1000"`).
pub(super) fn table_columns<'a>(
    tree: &Tree<'a>,
    records: &[&[usize]],
    max_text: usize,
    nested: bool,
) -> Vec<Column<'a>> {
    let node = |id: usize| tree.nodes.get(id);
    let Some(first) = records.first() else {
        return Vec::new();
    };
    let width = first.len();
    // Each column's names, read once: the search for the key below compares every column
    // with every other.
    let by_column: Vec<Vec<&str>> = (0..width)
        .map(|c| {
            records
                .iter()
                .map(|r| r.get(c).and_then(|&i| node(i)).map_or("", |n| n.name_str()))
                .collect()
        })
        .collect();
    let names = |c: usize| by_column.get(c).map_or(&[][..], Vec::as_slice);
    // The record's name: the column whose names vary and make the most other columns'
    // names (`Edit Ava Hernandez`), a link first on ties. A column takes the pattern its
    // first record shows when at least half the records follow it; a row whose name does not
    // follow it writes its own.
    let around = |c: usize, key: &[&str]| -> Option<(&str, &str)> {
        let col = names(c);
        let (k0, n0) = (key.first()?, col.first()?);
        if k0.is_empty() {
            return None;
        }
        let at = n0.find(k0)?;
        let (pre, suf) = (n0.get(..at)?, n0.get(at + k0.len()..)?);
        let follow = |n: &str, k: &str| {
            !k.is_empty()
                && n.len() == pre.len() + k.len() + suf.len()
                && n.starts_with(pre)
                && n.ends_with(suf)
                && n.get(pre.len()..n.len() - suf.len()) == Some(k)
        };
        // Counted until half the records follow or cannot any more: the search for the key
        // asks this of every pair of columns.
        let (mut follows, mut left) = (0usize, col.len().min(key.len()));
        for (n, k) in col.iter().zip(key) {
            if follows * 2 >= col.len() || (follows + left) * 2 < col.len() {
                break;
            }
            left -= 1;
            follows += usize::from(follow(n, k));
        }
        (follows * 2 >= col.len()).then_some((pre, suf))
    };
    let varying: Vec<bool> = (0..width)
        .map(|c| {
            let col = names(c);
            col.iter().all(|n| !n.is_empty()) && col.iter().any(|n| Some(n) != col.first())
        })
        .collect();
    let varies = |c: usize| varying.get(c).copied().unwrap_or(false);
    let mut key: Option<(usize, usize)> = None;
    for c in (0..width).filter(|&c| varies(c)) {
        let k = names(c);
        let made = (0..width)
            .filter(|&j| j != c && varies(j) && around(j, k).is_some())
            .count();
        let link = first
            .get(c)
            .and_then(|&i| node(i))
            .is_some_and(|n| n.role == "link");
        let better = match key {
            None => true,
            Some((best, made_best)) => {
                made > made_best
                    || (made == made_best
                        && link
                        && first
                            .get(best)
                            .and_then(|&i| node(i))
                            .is_some_and(|n| n.role != "link"))
            }
        };
        if better {
            key = Some((c, made));
        }
    }
    let key_names = key.map(|(c, _)| names(c));
    let mut columns: Vec<Column<'a>> = (0..width)
        .map(|c| {
            let cells: Vec<&super::tree::Node<'a>> = records
                .iter()
                .filter_map(|r| r.get(c).and_then(|&i| node(i)))
                .collect();
            let col = names(c);
            let name = if cells.iter().all(|n| n.name.is_none()) {
                ColumnName::None
            } else if cells.iter().all(|n| n.name.is_some())
                && col.iter().all(|n| Some(n) == col.first())
            {
                ColumnName::Fixed
            } else if key.is_some_and(|(k, _)| k == c) {
                ColumnName::Key
            } else if let Some((pre, suf)) = key_names.and_then(|k| around(c, k)) {
                ColumnName::Around(pre.to_string(), suf.to_string())
            } else {
                ColumnName::Varies
            };
            let head = cells.first();
            let fixed: Vec<&str> = head
                .map(|h| {
                    cell_attrs(h)
                        .filter(|attr| cells.iter().all(|n| cell_attrs(n).any(|a| a == *attr)))
                        .map(|(k, _)| k)
                        .collect()
                })
                .unwrap_or_default();
            let options = first
                .get(c)
                .and_then(|&i| cell_options(tree, i))
                .unwrap_or_default()
                .into_iter()
                .map(str::to_string)
                .collect();
            let values: Vec<Option<&str>> = cells
                .iter()
                .map(|n| n.attr("value").and_then(|a| a.value.as_deref()))
                .collect();
            let value = values.iter().all(Option::is_some) && !fixed.contains(&"value");
            Column {
                value,
                role: head.map_or("", |h| h.role),
                name,
                fixed,
                options,
                uid: cells
                    .iter()
                    .all(|n| roles::is_interactive(n) && !n.uid.is_empty()),
                shown: true,
            }
        })
        .collect();
    // A header names a column `"Edit {name}"` with the placeholder: page text holding
    // `{name}` itself (a button labelled `{name}`, or `Edit {name} Ava`) would read as more
    // placeholders there, so such a column's rows write their own names.
    for (c, col) in columns.iter_mut().enumerate() {
        let literal = match &col.name {
            ColumnName::Fixed => names(c).first().is_some_and(|n| n.contains(PLACEHOLDER)),
            ColumnName::Around(pre, suf) => pre.contains(PLACEHOLDER) || suf.contains(PLACEHOLDER),
            _ => false,
        };
        if literal {
            col.name = ColumnName::Varies;
        }
    }
    // Readers take the first `{name}` column for the record's name: one that only repeats it
    // (`Around("", "")`) before the key writes its names.
    if let Some((k, _)) = key {
        for col in columns.iter_mut().take(k) {
            if matches!(&col.name, ColumnName::Around(p, s) if p.is_empty() && s.is_empty()) {
                col.name = ColumnName::Varies;
            }
        }
    }
    // Text cells within the budget, what says most per character first: a column of few
    // values (a status, a plan) or of short ones (an id) before unique long ones (an email, a
    // blurb), which repeat what the record's name says or what an agent needs least.
    let mut texts: Vec<(usize, usize, usize)> = columns
        .iter()
        .enumerate()
        .filter(|(_, col)| {
            (col.role.is_empty() || nested && !col.uid) && matches!(col.name, ColumnName::Varies)
        })
        .map(|(c, _)| {
            let col = names(c);
            let chars = col.iter().map(|n| n.chars().count()).sum::<usize>() / col.len().max(1);
            // Counted in a set, not by sorting the names (comparing each many times).
            let distinct: HashSet<&str, BuildHasherDefault<UidHasher>> =
                col.iter().copied().collect();
            (chars * distinct.len() / col.len().max(1), chars, c)
        })
        .collect();
    texts.sort_unstable();
    let mut used = 0usize;
    for &(_, chars, c) in &texts {
        used = used.saturating_add(chars);
        if used > max_text {
            if let Some(col) = columns.get_mut(c) {
                col.shown = false;
            }
        }
    }
    tell_rows_apart(
        tree,
        records,
        &mut columns,
        texts.iter().map(|&(_, _, c)| c),
    );
    columns
}

/// Rows that read alike in what the table writes (two people of one name, `Alan Hamilton |
/// Member | Invited` twice) leave an agent told "edit the row of alan.h@…" no way to choose
/// between their controls: hidden text columns are shown again, in the budget's order, each
/// one that tells more rows apart, until no two rows read alike or none is left.
fn tell_rows_apart(
    tree: &Tree<'_>,
    records: &[&[usize]],
    columns: &mut [Column<'_>],
    hidden_in_order: impl Iterator<Item = usize>,
) {
    let cell = |r: &[usize], c: usize| -> (&str, &str) {
        r.get(c)
            .and_then(|&i| tree.nodes.get(i))
            .map_or(("", ""), |n| {
                let value = n.attr("value").and_then(|a| a.value.as_deref());
                (n.name_str(), value.unwrap_or(""))
            })
    };
    // Rows alike under the shown columns plus `extra`: pairs counted through a sorted key list.
    let alike = |columns: &[Column<'_>], extra: Option<usize>| -> usize {
        let mut keys: Vec<Vec<(&str, &str)>> = records
            .iter()
            .map(|r| {
                (0..columns.len())
                    .filter(|&c| columns.get(c).is_some_and(|col| col.shown) || extra == Some(c))
                    .map(|c| cell(r, c))
                    .collect()
            })
            .collect();
        keys.sort_unstable();
        keys.windows(2).filter(|w| w[0] == w[1]).count()
    };
    let mut now = alike(columns, None);
    for c in hidden_in_order {
        if now == 0 {
            break;
        }
        if columns.get(c).is_some_and(|col| col.shown) {
            continue;
        }
        let with = alike(columns, Some(c));
        if with < now {
            if let Some(col) = columns.get_mut(c) {
                col.shown = true;
            }
            now = with;
        }
    }
}

/// The tables of one run of records (`records`, sibling slices): the longest stretches of at
/// least `MIN_RECORDS` records of the first record's exact shape whose every sibling is a cell
/// (`tabular_node`, with options), and whose options agree. Records between them stay nodes.
/// `shapes` are the records' shapes (`shape_of`, coded), one slice per record.
fn tables_of<'a>(
    tree: &Tree<'a>,
    records: &[&[usize]],
    shapes: &[&[Shape<RoleCode>]],
    max_text: usize,
) -> Vec<Table<'a>> {
    let role = |i: usize| tree.nodes.get(i).map(|n| n.role);
    let shape = |r: usize, c: usize| shapes.get(r).and_then(|s| s.get(c)).copied().flatten();
    // Whether cell `c` of record `r` has the role of the head's (record `k`): by the codes of
    // their shapes, not by the role strings, which lie in the text far from the nodes. One
    // code stands for role-less text and the role `text`, which differ in length.
    let same_role =
        |r: usize, k: usize, c: usize, i: usize, h: usize| match (shape(r, c), shape(k, c)) {
            (Some(a), Some(b)) if a != b => false,
            (Some(a), Some(_)) if !a.is_text() => true,
            (Some(_), Some(_)) => role(i).map(str::len) == role(h).map(str::len),
            _ => role(i) == role(h),
        };
    let mut head_options = Vec::new();
    let mut out = Vec::new();
    let mut k = 0;
    while k < records.len() {
        let Some(&head) = records.get(k) else { break };
        // The head's options once, not once per record compared with it.
        head_options.clear();
        head_options.extend(head.iter().map(|&i| cell_options(tree, i)));
        // Cell by cell: a table's cell (`tabular_node`, with options), of the head cell's role
        // and options.
        let fits = |at: usize, r: &[usize]| {
            r.len() == head.len()
                && r.iter().zip(head).zip(&head_options).enumerate().all(
                    |(c, ((&i, &h), options))| {
                        tabular_node(tree, i) && same_role(at, k, c, i, h) && {
                            let mine = cell_options(tree, i);
                            mine.is_some() && mine == *options
                        }
                    },
                )
        };
        if !fits(k, head) {
            k += 1;
            continue;
        }
        let mut end = k + 1;
        while records.get(end).is_some_and(|r| fits(end, r)) {
            end += 1;
        }
        if end - k >= MIN_RECORDS {
            let stretch = records.get(k..end).unwrap_or(&[]);
            out.push(Table {
                items: stretch.iter().flat_map(|r| r.iter().copied()).collect(),
                columns: table_columns(tree, stretch, max_text, false),
                record_nodes: Vec::new(),
            });
        }
        k = end;
    }
    out
}

/// What a table's header writes for the record's name in a column's pattern.
pub const PLACEHOLDER: &str = "{name}";

/// Characters a marker line costs, about: condensing that hides less than this shows it all.
const MARKER_CHARS: usize = 80;

fn chars_of(tree: &Tree<'_>, ids: &[usize]) -> usize {
    ids.iter()
        .flat_map(|&id| tree.subtree(id))
        .filter_map(|d| tree.nodes.get(d))
        .map(|n| n.uid.len() + n.role.len() + n.name.as_deref().map_or(0, str::len) + 4)
        .sum()
}

/// Under every container, runs of at least three records of 2..=24 siblings repeating the same
/// shape keep their first `keep` records whole. The next `condense` records show their
/// controls and labels only (an agent on a 40-row grid acts on any row without a round trip;
/// it does not need every row's email and date): their other nodes go behind one marker for
/// the run (`condensed_records`). The records after those hide whole behind one marker.
/// Inside `main` at a level that writes tables (`max_table_text` > 0), records holding a
/// control other than a link never hide: tables where they share one shape, else nodes.
pub fn collapse_records<'a>(
    tree: &mut Tree<'a>,
    facts: &Facts,
    keep: usize,
    condense: usize,
    max_table_text: usize,
) {
    let mut tables: Vec<(usize, Table<'a>)> = Vec::new();
    let mut runs: Vec<(usize, RecordRun<'a>, Vec<usize>)> = Vec::new();
    let mut condensed: Vec<(usize, CondensedRun)> = Vec::new();
    let mut codes = RoleCodes::default();
    let mut shapes = Vec::new();
    let mut same_until: Vec<usize> = Vec::new();
    let mut next_same: Vec<usize> = Vec::new();
    let mut next_control: Vec<usize> = Vec::new();
    let mut last_at: Vec<usize> = Vec::new();
    let mut cells = Vec::new();
    let mut members = Vec::new();
    let mut labels = Vec::new();
    let mut scratch = Vec::new();
    let mut containers = Containers::new()
        .skip_hidden()
        .min_children(MIN_PERIOD * MIN_RECORDS);
    while let Some((parent, items)) = containers.next(tree) {
        // Inside a record a nested table holds already, its cells are that table's.
        if items.len() < MIN_PERIOD * MIN_RECORDS || tree.record_members.contains(&parent) {
            continue;
        }
        // Inside `main` only, where the agent acts (as `collapse_similar` keeps main's controls).
        let condense = if facts.in_main(parent) { condense } else { 0 };
        // Inside `main` at a level that writes tables: records stay in place, and rows are
        // found by exact repetition too (`exact_records_at`).
        let tables_here = max_table_text > 0 && facts.in_main(parent);
        shapes.clear();
        shapes.extend(
            items
                .iter()
                .map(|&c| shape_of(tree, c).map(|role| codes.code(role))),
        );
        // Where the run of one shape from each sibling ends: a template inside one repeats a
        // shorter one (`exact_records_at` finds none there), told without comparing its roles
        // at every sibling and period of a long run of texts.
        same_until.clear();
        same_until.resize(shapes.len(), 0);
        for k in (0..shapes.len()).rev() {
            same_until[k] = match shapes.get(k + 1) {
                Some(next) if *next == shapes[k] => same_until[k + 1],
                _ => k + 1,
            };
        }
        // The next sibling of each one's shape: a run `records_at` finds from a sibling has
        // that distance for its period (the head opens each record once), so no other period
        // is tried there.
        next_same.clear();
        next_same.resize(shapes.len(), usize::MAX);
        last_at.clear();
        last_at.resize(codes.names.len(), usize::MAX);
        for (k, shape) in shapes.iter().enumerate().rev() {
            if let Some(last) = shape.and_then(|code| last_at.get_mut(code.index())) {
                if let Some(next) = next_same.get_mut(k) {
                    *next = *last;
                }
                *last = k;
            }
        }
        // The next sibling from each on that is a control other than a link (`exact_records_at`
        // finds no run without one in its template).
        next_control.clear();
        next_control.resize(shapes.len(), usize::MAX);
        let mut next = usize::MAX;
        for (k, shape) in shapes.iter().enumerate().rev() {
            if shape.is_some_and(|r| r.is_form_control()) {
                next = k;
            }
            if let Some(slot) = next_control.get_mut(k) {
                *slot = next;
            }
        }
        let mut i = 0;
        let mut floor = 0;
        let mut repeat_ends = RepeatEnds::new();
        while i + MIN_PERIOD * MIN_RECORDS <= shapes.len() {
            // The period covering most siblings from here (the shortest on ties).
            let mut best: Option<FoundRun> = None;
            // The periods tried are the distances to the later siblings of this one's shape
            // (a record repeats its first sibling), shortest first: along `next_same`.
            let first = next_same.get(i).copied().unwrap_or(usize::MAX);
            let same_end = same_until.get(i).copied().unwrap_or(0);
            // The shortest period whose template from here holds such a control.
            let exact_from = match next_control.get(i) {
                Some(&c) if tables_here && c != usize::MAX => c - i + 1,
                _ => usize::MAX,
            };
            let mut later = first;
            while let Some(p) = later.checked_sub(i).filter(|&p| p <= MAX_PERIOD) {
                later = next_same.get(later).copied().unwrap_or(usize::MAX);
                if p < MIN_PERIOD {
                    continue;
                }
                if i + p * MIN_RECORDS > shapes.len() {
                    break;
                }
                let head_period = first == i + p;
                // Past the head's period only exact repetition finds a run, of a template
                // holding a control other than a link: shorter periods are not tried, nor any
                // where there is no such control ahead or none is looked for.
                if !head_period && p < exact_from {
                    if exact_from > MAX_PERIOD {
                        break;
                    }
                    continue;
                }
                let uniform = same_end >= i + p;
                let found = head_period
                    .then(|| records_at(&shapes, i, p))
                    .flatten()
                    .or_else(|| {
                        (tables_here && !uniform)
                            .then(|| exact_records_at(&shapes, i, p, repeat_ends.at(&shapes, i, p)))
                            .flatten()
                    });
                if let Some((starts, end)) = found {
                    if best.as_ref().is_none_or(|b| end > b.end) {
                        best = Some(FoundRun {
                            starts,
                            end,
                            period: p,
                        });
                    }
                }
            }
            let Some(mut found) = best else {
                i += 1;
                continue;
            };
            align_start(&shapes, floor, &mut found.starts, &mut found.end);
            let (starts, end) = (&found.starts, found.end.min(items.len()));
            let count = starts.len();
            let bounds = |r: usize| {
                let from = starts.get(r).copied().unwrap_or(end);
                (from, starts.get(r + 1).copied().unwrap_or(end))
            };
            let record = |r: usize| {
                let (from, to) = bounds(r);
                items.get(from..to).unwrap_or(&[])
            };
            // Records inside `main` holding a control other than a link (cards, settings rows;
            // not links running through prose) never hide at a level that writes tables: they
            // stay in place, as a table where they share one exact shape, as nodes where they
            // break it.
            let mut keep = keep;
            let all: Vec<&[usize]> = if tables_here {
                (0..count).map(record).collect()
            } else {
                Vec::new()
            };
            // Their shapes, alongside (`shapes` runs parallel to `items`).
            let all_shapes: Vec<&[Shape<RoleCode>]> = if tables_here {
                (0..count)
                    .map(|r| {
                        let (from, to) = bounds(r);
                        shapes.get(from..to).unwrap_or(&[])
                    })
                    .collect()
            } else {
                Vec::new()
            };
            let in_place = all
                .iter()
                .any(|r| r.iter().any(|&c| holds_form_control(tree, c)));
            if in_place || tables_here && count > keep {
                let found = tables_of(tree, &all, &all_shapes, max_table_text);
                if !found.is_empty() {
                    for r in &all {
                        members.extend(r.iter().copied());
                        labels.extend(
                            r.iter()
                                .copied()
                                .filter(|&c| tree.nodes.get(c).is_some_and(|n| n.is_text())),
                        );
                    }
                    for table in found {
                        if let Some(&first) = table.items.first() {
                            tables.push((first, table));
                        }
                    }
                    i = end.max(i + 1);
                    floor = i;
                    continue;
                }
                if in_place {
                    keep = count;
                }
            }
            let condensed_end = keep.saturating_add(condense).min(count);
            for r in 0..condensed_end {
                let items = record(r);
                members.extend(items.iter().copied());
                scratch.clear();
                condensed_cells(tree, items, &mut scratch);
                labels.extend(items.iter().copied().filter(|c| {
                    !scratch.contains(c) && tree.nodes.get(*c).is_some_and(|n| n.is_text())
                }));
            }
            if keep < condensed_end {
                cells.clear();
                for r in keep..condensed_end {
                    condensed_cells(tree, record(r), &mut cells);
                }
                let last = record(condensed_end - 1).last().copied();
                if let (Some(&first), Some(last)) = (record(keep).first(), last) {
                    if chars_of(tree, &cells) > MARKER_CHARS {
                        let run = CondensedRun {
                            first_record: keep + 1,
                            records: condensed_end - keep,
                            last,
                            cells: cells.clone(),
                        };
                        condensed.push((first, run));
                    }
                }
            }
            if let Some(&from) = starts.get(condensed_end) {
                let hidden: Vec<usize> = items.get(from..end).unwrap_or(&[]).to_vec();
                if hidden.len() >= MIN_HIDDEN_SIBLINGS {
                    let first = starts.first().copied().unwrap_or(0);
                    let shape = shapes
                        .get(first..first + found.period)
                        .unwrap_or(&[])
                        .iter()
                        .flatten()
                        .map(|&code| codes.name(code))
                        .collect();
                    let run = RecordRun {
                        siblings: hidden.len(),
                        records: count - condensed_end,
                        shape,
                    };
                    runs.push((hidden.first().copied().unwrap_or(0), run, hidden));
                }
            }
            i = end.max(i + 1);
            floor = i;
        }
    }
    for (first, run, hidden) in runs {
        for id in hidden {
            if let Some(node) = tree.nodes.get_mut(id) {
                node.hidden = true;
            }
        }
        tree.hidden_records.insert(first, run);
    }
    tree.record_members.extend(members);
    tree.record_labels.extend(labels);
    tree.tables.extend(tables);
    for (first, run) in condensed {
        for &id in &run.cells {
            if let Some(node) = tree.nodes.get_mut(id) {
                node.hidden = true;
            }
            tree.condensed_cells.insert(id);
        }
        tree.condensed_records.insert(first, run);
    }
}

/// The options of a combobox or listbox that is not expanded, when there are more than
/// `max_options`: every one but the selected one hides (the control's value names it too).
pub fn summarise_options(tree: &mut Tree<'_>, facts: &Facts, max_options: usize) {
    for &id in facts.lists() {
        let Some(node) = tree.nodes.get(id) else {
            continue;
        };
        let is_list = node.kind == NodeKind::Element
            && matches!(node.role, "combobox" | "listbox")
            && !node.has_attr("expanded")
            && !node.hidden;
        if !is_list {
            continue;
        }
        if tree.children(id).is_empty() {
            continue;
        }
        let options: Vec<usize> = visible_children(tree, id)
            .into_iter()
            .filter(|&c| {
                tree.nodes
                    .get(c)
                    .is_some_and(|n| n.role == "option" && !n.hidden)
                    && tree.children(c).is_empty()
            })
            .collect();
        if options.len() <= max_options {
            continue;
        }
        for c in options {
            if let Some(n) = tree.nodes.get_mut(c) {
                if !n.has_attr("selected") {
                    n.hidden = true;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_edit_apart() {
        let t = [Some("checkbox"), Some("text"), Some("link"), Some("button")];
        let v = |x: &[&'static str]| -> Vec<Shape<&'static str>> {
            x.iter().map(|s| Some(*s)).collect()
        };
        assert!(within_one_edit(&t, &t));
        assert!(within_one_edit(
            &v(&["checkbox", "text", "text", "button"]),
            &t
        ));
        assert!(within_one_edit(&v(&["checkbox", "text", "button"]), &t));
        assert!(within_one_edit(
            &v(&["checkbox", "text", "link", "image", "button"]),
            &t
        ));
        assert!(!within_one_edit(
            &v(&["checkbox", "link", "text", "image"]),
            &t
        ));
        assert!(!within_one_edit(&v(&["checkbox", "button"]), &t));
    }

    #[test]
    fn a_run_starts_where_its_records_start() {
        let v = |x: &[&'static str]| -> Vec<Shape<&'static str>> {
            x.iter().map(|s| Some(*s)).collect()
        };
        // Cards: link, link, text, checkbox, button; found from the checkbox (the first role
        // that occurs once per card), three cards before a heading.
        let card = ["link", "link", "text", "checkbox", "button"];
        let mut shapes: Vec<Shape<&str>> = vec![None];
        for _ in 0..3 {
            shapes.extend(v(&card));
        }
        shapes.push(None);
        let (mut starts, mut end) = (vec![4, 9], 14);
        align_start(&shapes, 0, &mut starts, &mut end);
        assert_eq!((starts, end), (vec![1, 6], 16));
        // Nothing before the run may be taken from an earlier run (`floor`): the start of a
        // card dangling after it moves the records later instead.
        let (mut starts, mut end) = (vec![4, 9], 14);
        align_start(&shapes, 4, &mut starts, &mut end);
        assert_eq!((starts, end), (vec![6, 11], 16));
        // An inbox: a toolbar button taken as the first row's head, the last row's button
        // left over after the run: every row starts one later.
        let mut shapes = v(&["button", "button"]);
        for _ in 0..3 {
            shapes.extend(v(&["checkbox", "text", "text", "button"]));
        }
        let (mut starts, mut end) = (vec![1, 5, 9], 13);
        align_start(&shapes, 0, &mut starts, &mut end);
        assert_eq!((starts, end), (vec![2, 6, 10], 14));
        // A settings list: label, checkbox, three times, then a section title. The title
        // repeats a record's start, but a row opens with its label: nothing moves.
        let mut shapes = v(&["text"]);
        for _ in 0..3 {
            shapes.extend(v(&["text", "checkbox"]));
        }
        shapes.extend(v(&["text", "text", "combobox"]));
        let (mut starts, mut end) = (vec![1, 3, 5], 7);
        align_start(&shapes, 0, &mut starts, &mut end);
        assert_eq!((starts, end), (vec![1, 3, 5], 7));
    }

    #[test]
    fn rows_whose_roles_recur_are_found_by_exact_repetition() {
        let v = |x: &[&'static str]| -> Vec<Shape<&'static str>> {
            x.iter().map(|s| Some(*s)).collect()
        };
        // A settings row: its text, a switch and its label, a second switch and its label.
        let row = ["text", "switch", "text", "switch", "text"];
        let mut shapes = v(&["heading"]);
        for _ in 0..4 {
            shapes.extend(v(&row));
        }
        shapes.push(None);
        assert_eq!(records_at(&shapes, 1, 5), None);
        assert_eq!(
            exact_records_at(&shapes, 1, 5, repeat_end(&shapes, 1, 5)),
            Some((vec![1, 6, 11, 16], 21))
        );
        // Links through prose, or a run of one repeated pair, are not rows of this kind.
        let prose = v(&["text", "link", "text", "link", "text"].repeat(4));
        assert_eq!(
            exact_records_at(&prose, 0, 5, repeat_end(&prose, 0, 5)),
            None
        );
        let pairs = v(&["text", "switch"].repeat(6));
        assert_eq!(
            exact_records_at(&pairs, 0, 4, repeat_end(&pairs, 0, 4)),
            None
        );
    }

    /// The ends kept per period answer as a scan from each sibling would, for a search moving
    /// forward by one and by jumps, over breaks and over repeats of every period.
    #[test]
    fn repeat_ends_kept_forward_match_a_fresh_scan() {
        let roles = ["text", "link", "button", "checkbox"];
        let mut seed = 7u64;
        let mut shapes: Vec<Shape<&str>> = Vec::new();
        for k in 0..400 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let pick = (seed >> 33) as usize;
            // Stretches that repeat with a period of 3, 5 or 7, then noise and breaks.
            let shape = match (k / 60) % 3 {
                0 => Some(roles[(k % 3) % roles.len()]),
                1 if !pick.is_multiple_of(11) => Some(roles[(k % 5) % roles.len()]),
                _ => (!pick.is_multiple_of(5)).then(|| roles[pick % roles.len()]),
            };
            shapes.push(shape);
        }
        let mut ends = RepeatEnds::new();
        let mut i = 0;
        let mut step = 0;
        while i < shapes.len() {
            for p in MIN_PERIOD..=MAX_PERIOD {
                assert_eq!(ends.at(&shapes, i, p), repeat_end(&shapes, i, p), "{i} {p}");
            }
            step += 1;
            i += if step % 4 == 0 { 9 } else { 1 };
        }
    }

    /// `tables_of` compares roles by their shapes' codes: it finds the tables a comparison of
    /// the role strings finds (shapes unknown), a role `text` apart from role-less text.
    #[test]
    fn tables_by_role_codes_match_tables_by_role_strings() {
        use super::super::tree::Node;
        let rows: &[&[&str]] = &[
            &["button", "", "link"],
            &["button", "", "link"],
            &["button", "text", "link"],
            &["button", "", "link"],
            &["button", "", "link"],
            &["button", "", "link"],
            &["button", "", "checkbox"],
            &["button", "", "checkbox"],
            &["button", "", "checkbox"],
        ];
        let uids: Vec<String> = (0..rows.len() * 3)
            .map(|k| format!("1_{}", k + 2))
            .collect();
        let mut tree = Tree::default();
        let parent = tree.push(Node::new(NodeKind::Element, None), None);
        let mut records: Vec<Vec<usize>> = Vec::new();
        for (r, roles) in rows.iter().enumerate() {
            let mut record = Vec::new();
            for (c, role) in roles.iter().enumerate() {
                let mut node = Node::new(NodeKind::Element, None);
                node.role = role;
                node.uid = &uids[r * 3 + c];
                node.name = Some(format!("cell {r} {c}").into());
                record.push(tree.push(node, Some(parent)));
            }
            records.push(record);
        }
        tree.seal();
        let mut codes = RoleCodes::default();
        let coded: Vec<Vec<Shape<RoleCode>>> = records
            .iter()
            .map(|r| {
                r.iter()
                    .map(|&c| shape_of(&tree, c).map(|role| codes.code(role)))
                    .collect()
            })
            .collect();
        let unknown: Vec<Vec<Shape<RoleCode>>> =
            records.iter().map(|r| vec![None; r.len()]).collect();
        let records: Vec<&[usize]> = records.iter().map(Vec::as_slice).collect();
        let by_code = tables_of(
            &tree,
            &records,
            &coded.iter().map(Vec::as_slice).collect::<Vec<_>>(),
            20,
        );
        let by_string = tables_of(
            &tree,
            &records,
            &unknown.iter().map(Vec::as_slice).collect::<Vec<_>>(),
            20,
        );
        assert_eq!(by_code, by_string);
        // Rows 3..6 (after the row with a role `text`) and 6..9 (another shape).
        let firsts: Vec<usize> = by_code
            .iter()
            .filter_map(|t| t.items.first().copied())
            .collect();
        assert_eq!(firsts, vec![records[3][0], records[6][0]]);
    }

    #[test]
    fn finds_records_with_an_optional_node() {
        let row = [Some("checkbox"), Some("text"), Some("link"), Some("button")];
        let mut shapes: Vec<Shape<&str>> = vec![None];
        for k in 0..6 {
            shapes.extend(row);
            if k == 2 {
                shapes.push(Some("image"));
            }
        }
        shapes.push(Some("text"));
        // Six records (the third with an extra image), the fourth starting at 14.
        assert_eq!(
            records_at(&shapes, 1, 4),
            Some((vec![1, 5, 9, 14, 18, 22], 26))
        );
        // Two records are not a run; a break (None) ends one.
        let two: Vec<Shape<&str>> = row.iter().chain(&row).copied().collect();
        assert!(records_at(&two, 0, 4).is_none());
        let mut broken = two.clone();
        broken.push(None);
        broken.extend(row);
        assert!(records_at(&broken, 0, 4).is_none());
    }
}
