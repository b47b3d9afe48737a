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

use super::tree::{CondensedRun, NodeKind, RecordRun, Table, Tree};
use super::walk::{visible_children, Containers};

mod period;
mod tables;

pub(super) use period::MIN_RECORDS;
use period::{
    align_start, exact_records_at, records_at, shape_of, RepeatEnds, Role, RoleCode, RoleCodes,
    Shape, MAX_PERIOD, MIN_PERIOD,
};
use tables::tables_of;
pub(super) use tables::{cell_options, table_columns};

/// Hiding fewer siblings than this costs more as a marker than it saves.
const MIN_HIDDEN_SIBLINGS: usize = 4;

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

/// The options of a combobox or listbox that is not expanded, past `max_options`: the first
/// `options_past_cap(max_options)` and the selected ones stay, the others hide (behind the
/// markers of their runs, which `expand_snapshot` gives back). Up to the cap every option
/// stays: childless siblings, they share one line after the control (` > `), so the agent
/// picks one by the uid or the name it sees.
pub fn summarise_options(tree: &mut Tree<'_>, facts: &Facts, max_options: usize) {
    let head = options_past_cap(max_options);
    for &id in facts.lists() {
        let Some(node) = tree.nodes.get(id) else {
            continue;
        };
        // What the agent opened (a popup listbox, a select in a dialog) keeps every option.
        if !is_closed_list(node) || node.hidden || facts.is_open(id) {
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
        for c in options.into_iter().skip(head) {
            if let Some(n) = tree.nodes.get_mut(c) {
                if !n.has_attr("selected") {
                    n.hidden = true;
                }
            }
        }
    }
}

/// A combobox or listbox that is not expanded: `summarise_options` alone decides which of its
/// options show (the collapse of similar siblings leaves them).
pub fn is_closed_list(node: &super::tree::Node<'_>) -> bool {
    node.kind == NodeKind::Element
        && matches!(node.role, "combobox" | "listbox")
        && !node.has_attr("expanded")
}

/// The options shown first of a list past its cap: a fifth of the cap. Such a list is data
/// (languages, time zones) the agent names by its text (`fill` picks an option by it); the
/// first ones show how its names read, `search_snapshot` finds any other.
pub fn options_past_cap(max_options: usize) -> usize {
    max_options / 5
}

#[cfg(test)]
#[path = "records_tests.rs"]
mod tests;
