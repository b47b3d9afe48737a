//! Marking a tree as a delta against a fingerprint: which units are unchanged, moved, added or
//! removed, row by row in tables, the lines of unchanged runs and the counts of the header.

use std::collections::{HashMap, HashSet};

use super::fingerprint::{frame_id, word_hash, Fingerprint, Frame, Seen, SentNode, SentPage, Unit};
use crate::snapshot::identity::{self, Shape};
use crate::snapshot::marker::ExpandTarget;
use crate::snapshot::tree::{DeltaMarks, NodeKind, Table, TableDelta, Tree};

/// Unchanged runs of childless nodes whose lines would be about this short are shown instead:
/// the run's line would cost more than they do.
const SHORT_RUN_CHARS: usize = 48;

/// What a delta holds, in counts (the header line) and the lines it names.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DeltaCounts {
    /// Shown nodes added, whose own line changed, removed, and moved (to another parent, or
    /// out of their siblings' order).
    pub added: usize,
    pub changed: usize,
    pub removed: usize,
    pub moved: usize,
    /// Nodes shown that were behind a marker.
    pub revealed: usize,
    /// Nodes added or changed behind a marker (named in the header with the call).
    pub behind: usize,
    /// The whole shown tree is what was sent (the short form).
    pub same_tree: bool,
    /// Unchanged-run lines written, and the nodes they stand for.
    pub unchanged_runs: usize,
    pub unchanged_nodes: usize,
}

impl DeltaCounts {
    pub fn is_empty(&self) -> bool {
        self.same_tree
            && self.added == 0
            && self.changed == 0
            && self.removed == 0
            && self.moved == 0
            && self.revealed == 0
            && self.behind == 0
    }
}

/// Marks `tree` for a delta against `sent`: the first item of each unchanged run carries the
/// run's line in `tree.delta`, every item of it `unchanged`; removed nodes get a line at the end
/// of the frame they were in. Returns the counts.
pub fn mark(tree: &mut Tree<'_>, fp: &Fingerprint, sent: &SentPage) -> DeltaCounts {
    mark_with(tree, fp, sent, true)
}

/// `mark`; without `tables`, no table is marked to be written row by row (its rows go as
/// nodes, and unchanged runs go through it as through any siblings).
pub fn mark_with(
    tree: &mut Tree<'_>,
    fp: &Fingerprint,
    sent: &SentPage,
    tables: bool,
) -> DeltaCounts {
    let mut counts = DeltaCounts {
        same_tree: fp.whole == sent.whole,
        ..DeltaCounts::default()
    };
    let visibility = &fp.visibility;
    let mut behind: Vec<Vec<&str>> = vec![Vec::new(); visibility.calls.len()];
    let mut by_key: HashMap<&str, usize> = HashMap::with_capacity(fp.keys.len());
    for (id, key) in fp.keys.iter().enumerate() {
        by_key.insert(key.as_str(), id);
        let old = sent
            .index
            .get(key)
            .and_then(|&i| sent.nodes.get(i as usize));
        let parent = fp.frame_parent[id].and_then(|p| fp.keys.get(p));
        // Behind a marker now: new, changed, or shown (or elsewhere) before.
        let differs =
            old.is_none_or(|o| o.own != fp.own[id] || o.shown || o.parent.as_ref() != parent);
        match visibility.seen.get(id) {
            Some(Seen::Shown) => match old {
                None => counts.added += 1,
                Some(o) if o.own != fp.own[id] => counts.changed += 1,
                Some(o) if !o.shown => counts.revealed += 1,
                Some(o) if o.parent.as_ref() != parent => counts.moved += 1,
                Some(_) => {}
            },
            Some(&Seen::Behind(group)) if differs => {
                counts.behind += 1;
                if let (Some(list), Some(node)) =
                    (behind.get_mut(group as usize), tree.nodes.get(id))
                {
                    if !node.uid.is_empty() {
                        list.push(node.uid);
                    }
                }
            }
            _ => {}
        }
    }
    counts.moved += reordered(fp, sent, &visibility.seen);
    let mut marks = DeltaMarks {
        table_cover: fp.view.cover.clone(),
        ..DeltaMarks::default()
    };
    let mut notes = 0;
    for (list, call) in behind.iter().zip(&visibility.calls) {
        if list.is_empty() {
            continue;
        }
        notes += 1;
        if notes > 3 {
            marks.behind.push_str("; …");
            break;
        }
        marks.behind.push_str(&format!(
            "; behind a marker: {} added or changed (uid ",
            list.len()
        ));
        write_uid_list(&mut marks.behind, list);
        marks.behind.push(')');
        marks.behind.push_str(call);
    }
    let unnamed = counts.behind - behind.iter().map(Vec::len).sum::<usize>();
    if unnamed > 0 && notes == 0 {
        marks.behind.push_str(&format!(
            "; behind a marker: {unnamed} added or changed without a uid"
        ));
    }
    // Where removed nodes are counted: no table row may hold one (a row line has no place
    // for it).
    let anchors: HashSet<&str> = if !tables || tree.tables.is_empty() {
        HashSet::new()
    } else {
        sent.nodes
            .iter()
            .filter(|old| !by_key.contains_key(old.key.as_str()))
            .filter_map(|old| removed_anchor(sent, &by_key, old))
            .collect()
    };
    let mut opened: HashSet<Option<usize>> = HashSet::new();
    let mut unchanged_items: Vec<usize> = Vec::new();
    let mut stack: Vec<(Option<usize>, String)> = vec![(None, String::new())];
    while let Some((owner, expand_uid)) = stack.pop() {
        let Some(frame) = fp.frames.get(&owner) else {
            continue;
        };
        opened.insert(owner);
        let fid = frame_id(fp, owner);
        let key_of = |u: &Unit| {
            frame
                .items
                .get(u.start)
                .and_then(|&i| fp.keys.get(i))
                .map_or("", String::as_str)
        };
        let prev_of = |u: &Unit| {
            sent.units
                .get(key_of(u))
                .filter(|p| p.hash == u.hash && p.frame == fid)
        };
        // A unit sent as it is: its frame is compared in turn.
        let open = |unit: &Unit, stack: &mut Vec<(Option<usize>, String)>| {
            if !unit.opens {
                return;
            }
            if let Some(&id) = frame.items.get(unit.start) {
                // A repeated uid finds an earlier node: the nearest ancestor whose uid finds
                // it is expanded instead (as the renderer does for its markers).
                let next = match tree.nodes.get(id) {
                    Some(n) if tree.uid_finds(id) => n.uid.to_string(),
                    _ => expand_uid.clone(),
                };
                stack.push((Some(id), next));
            }
        };
        // Tables of this frame the agent does not hold as they are: written row by row (by a
        // notation that writes tables); the unchanged runs below stop at their ends.
        let mut bounds: Vec<usize> = Vec::new();
        // Tables written whole (a header the agent does not hold, no delta of its rows): by
        // the unit each starts at, the unit after it.
        let mut whole: HashMap<usize, usize> = HashMap::new();
        if !fp.view.spans.is_empty() {
            for (u, unit) in frame.units.iter().enumerate() {
                let Some(&id) = frame.items.get(unit.start) else {
                    continue;
                };
                let (Some(table), Some(&span)) = (tree.tables.get(&id), fp.view.spans.get(&id))
                else {
                    continue;
                };
                let Some(units) = frame.units.get(u..u + span) else {
                    continue;
                };
                // The header the agent holds is not this one (another count of records,
                // another range of uids, other columns): the header goes again.
                let stale = visibility.seen.get(id) == Some(&Seen::Shown)
                    && fp
                        .keys
                        .get(id)
                        .is_none_or(|k| sent.tables.get(k) != fp.view.headers.get(&id));
                let td = if tables {
                    table_delta(
                        tree,
                        fp,
                        sent,
                        fid,
                        table,
                        frame,
                        units,
                        &anchors,
                        &mut counts,
                        stale,
                    )
                } else {
                    None
                };
                if let Some(td) = td {
                    bounds.push(u);
                    bounds.push(u + span);
                    marks.tables.insert(id, td);
                } else if stale {
                    bounds.push(u);
                    bounds.push(u + span);
                    whole.insert(u, u + span);
                    marks.whole_tables.insert(id);
                }
            }
        }
        let mut i = 0;
        while let Some(unit) = frame.units.get(i) {
            if let Some(&end) = whole.get(&i) {
                // Written whole, as in a full snapshot.
                i = end.max(i + 1);
                continue;
            }
            let Some(first) = prev_of(unit) else {
                open(unit, &mut stack);
                i += 1;
                continue;
            };
            // The run: units unchanged and consecutive in the sent frame too.
            let mut end = i + 1;
            let mut last_index = first.index;
            while let Some(next) = frame.units.get(end).and_then(&prev_of) {
                if next.index != last_index + 1 || bounds.contains(&end) {
                    break;
                }
                last_index = next.index;
                end += 1;
            }
            let run_units = frame.units.get(i..end).unwrap_or(&[]);
            let (Some(first_unit), Some(last_unit)) = (run_units.first(), run_units.last()) else {
                break;
            };
            let items = frame
                .items
                .get(first_unit.start..last_unit.start + last_unit.len)
                .unwrap_or(&[]);
            if is_short(tree, items) {
                i = end;
                continue;
            }
            if ExpandTarget::for_run(tree, items, &expand_uid)
                .uid
                .is_empty()
            {
                // No call brings this run back (top-level siblings their own uids do not
                // find, and no ancestor to expand instead): sent as it is, not as unchanged.
                for unit in run_units {
                    open(unit, &mut stack);
                }
                i = end;
                continue;
            }
            let nodes: usize = items
                .iter()
                .map(|&id| fp.sizes.get(id).copied().unwrap_or(1))
                .sum();
            let text = unchanged_line(tree, items, nodes, &expand_uid);
            counts.unchanged_runs += 1;
            counts.unchanged_nodes += nodes;
            if let Some(&start) = items.first() {
                marks.runs.insert(start, (items.len(), text));
            }
            unchanged_items.extend_from_slice(items);
            i = end;
        }
    }
    // Removed: sent nodes not in the tree, counted at the nearest ancestor still there.
    let mut removed: HashMap<Option<usize>, Vec<&str>> = HashMap::new();
    let mut order: Vec<Option<usize>> = Vec::new();
    for old in &sent.nodes {
        if by_key.contains_key(old.key.as_str()) {
            continue;
        }
        counts.removed += 1;
        let anchor = removed_anchor(sent, &by_key, old);
        // The frame it is written in: the anchor's, or the nearest opened one above it.
        let mut at = anchor.and_then(|k| by_key.get(k).copied());
        while let Some(id) = at {
            if opened.contains(&Some(id)) {
                break;
            }
            at = tree.nodes.get(id).and_then(|n| n.parent);
        }
        let list = removed.entry(at).or_insert_with(|| {
            order.push(at);
            Vec::new()
        });
        if !old.uid.is_empty() {
            list.push(old.uid.as_str());
        }
    }
    for at in order {
        let uids = removed.remove(&at).unwrap_or_default();
        let mut text = String::from("… removed");
        if !uids.is_empty() {
            text.push_str(" (uid ");
            write_uid_list(&mut text, &uids);
            text.push(')');
        }
        marks.removed.insert(at, text);
    }
    for id in unchanged_items {
        if let Some(node) = tree.nodes.get_mut(id) {
            node.unchanged = true;
        }
    }
    tree.delta = Some(Box::new(marks));
    counts
}

/// The key of the nearest frame owner of a removed node still in the tree (`None`: the roots).
fn removed_anchor<'s>(
    sent: &'s SentPage,
    by_key: &HashMap<&str, usize>,
    old: &'s SentNode,
) -> Option<&'s str> {
    let mut anchor = old.parent.as_deref();
    let mut guard = 0;
    while let Some(key) = anchor {
        if by_key.contains_key(key) || guard > sent.nodes.len() {
            break;
        }
        guard += 1;
        anchor = sent
            .index
            .get(key)
            .and_then(|&i| sent.nodes.get(i as usize))
            .and_then(|n| n.parent.as_deref());
    }
    anchor
}

/// Bare words a run of table rows may say changed in one column (the states a control takes).
const ROW_STATES: [&str; 7] = [
    "checked", "selected", "pressed", "expanded", "disabled", "required", "invalid",
];

/// Fewest rows in a run line of a table delta (one row is about as short written out).
const MIN_RUN_ROWS: usize = 2;

/// A row of a table against what was sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RowState {
    /// Written as a row.
    Changed,
    /// Every cell as sent, in the sent order: `first`..=`last` are its cells' sent indices.
    Same { first: u32, last: u32 },
    /// As `Same`, but the cell of column `col` gained (`on`) or lost the bare word `word`, and
    /// nothing else of it changed (a leaf then and now).
    Toggled {
        first: u32,
        last: u32,
        col: usize,
        word: &'static str,
        on: bool,
    },
}

impl RowState {
    fn span(self) -> Option<(u32, u32)> {
        match self {
            RowState::Changed => None,
            RowState::Same { first, last } | RowState::Toggled { first, last, .. } => {
                Some((first, last))
            }
        }
    }
}

/// Row `cells` (one unit each) against what was sent in frame `fid`.
fn row_state(
    tree: &Tree<'_>,
    fp: &Fingerprint,
    sent: &SentPage,
    fid: u64,
    table: &Table<'_>,
    frame: &Frame,
    cells: &[Unit],
) -> RowState {
    let mut toggled = None;
    let mut indices = Vec::with_capacity(cells.len());
    for (c, unit) in cells.iter().enumerate() {
        let Some(&id) = frame.items.get(unit.start) else {
            return RowState::Changed;
        };
        let key = fp.keys.get(id).map_or("", String::as_str);
        let Some(held) = sent.units.get(key).filter(|p| p.frame == fid) else {
            return RowState::Changed;
        };
        indices.push(held.index);
        if held.hash == unit.hash {
            continue;
        }
        // Changed: by one bare word of a leaf, in a column the header writes?
        let old = sent
            .index
            .get(key)
            .and_then(|&i| sent.nodes.get(i as usize));
        let node = tree.nodes.get(id);
        let (Some(old), Some(node)) = (old, node) else {
            return RowState::Changed;
        };
        let shown_col = table
            .columns
            .get(c)
            .is_some_and(|col| col.shown && !col.role.is_empty());
        let leaves = !unit.opens
            && tree.children(id).is_empty()
            && held.hash == fp.leaf_hash(old.own, id)
            && unit.hash == fp.leaf_hash(fp.own[id], id);
        let diff = old.words ^ fp.words[id];
        let word = ROW_STATES.iter().copied().find(|w| word_hash(w) == diff);
        match word {
            Some(word) if toggled.is_none() && shown_col && leaves && old.bare == fp.bare[id] => {
                let on = node
                    .attrs
                    .iter()
                    .any(|a| a.key == word && a.value.is_none());
                toggled = Some((c, word, on));
            }
            _ => return RowState::Changed,
        }
    }
    if indices.windows(2).any(|w| w[1] != w[0] + 1) {
        return RowState::Changed;
    }
    let (Some(&first), Some(&last)) = (indices.first(), indices.last()) else {
        return RowState::Changed;
    };
    match toggled {
        None => RowState::Same { first, last },
        Some((col, word, on)) => RowState::Toggled {
            first,
            last,
            col,
            word,
            on,
        },
    }
}

/// A table of `frame` (`units`: the cells of its whole rows, one unit each) as a delta of its
/// rows: every row written, but runs of rows held as sent (or held but for one state of one
/// column, the same in every row of the run) in one line each. `None` when the agent holds
/// the table as it is (an unchanged run covers it), or when a row cannot say what changed
/// (a removed node counted inside it). With `stale` (the agent holds another header), a
/// table held row by row still goes, its header first.
#[allow(clippy::too_many_arguments)]
fn table_delta(
    tree: &Tree<'_>,
    fp: &Fingerprint,
    sent: &SentPage,
    fid: u64,
    table: &Table<'_>,
    frame: &Frame,
    units: &[Unit],
    anchors: &HashSet<&str>,
    counts: &mut DeltaCounts,
    stale: bool,
) -> Option<TableDelta> {
    let w = table.columns.len();
    // Rows that are nodes of their own (`record_nodes`) have no run lines.
    if w == 0 || units.is_empty() || !table.record_nodes.is_empty() {
        return None;
    }
    let items = frame
        .items
        .get(units.first()?.start..units.last()?.start + 1)?;
    // One unit per cell, in place (whole rows are visible siblings).
    if items.len() != units.len() || units.iter().any(|u| u.len != 1) {
        return None;
    }
    if items.iter().any(|&i| {
        tree.subtree(i)
            .into_iter()
            .any(|d| fp.keys.get(d).is_some_and(|k| anchors.contains(k.as_str())))
    }) {
        return None;
    }
    let rows = units.len() / w;
    let states: Vec<RowState> = units
        .chunks(w)
        .map(|cells| row_state(tree, fp, sent, fid, table, frame, cells))
        .collect();
    let follows = |a: RowState, b: RowState| match (a.span(), b.span()) {
        (Some((_, last)), Some((first, _))) => first == last + 1,
        _ => false,
    };
    let held_whole = states.iter().all(|s| matches!(s, RowState::Same { .. }))
        && states.windows(2).all(|p| follows(p[0], p[1]));
    if held_whole && !stale {
        return None;
    }
    // Shown columns before each column: a run names a column by its place in the header.
    let place = |col: usize| table.columns.iter().take(col).filter(|c| c.shown).count() + 1;
    let mut td = TableDelta {
        rows,
        runs: HashMap::new(),
    };
    // A row held as sent agrees with "WORD in column C" (or "not WORD") when its cell says so.
    let agrees = |k: usize, claim: (usize, &str, bool)| {
        let (col, word, on) = claim;
        match states.get(k) {
            Some(RowState::Toggled {
                col: c,
                word: w,
                on: o,
                ..
            }) => (*c, *w, *o) == claim,
            Some(RowState::Same { .. }) => items
                .get(k * w + col)
                .and_then(|&i| tree.nodes.get(i))
                .is_some_and(|n| n.attrs.iter().any(|a| a.key == word && a.value.is_none()) == on),
            _ => false,
        }
    };
    let mut r = 0;
    while let Some(&state) = states.get(r) {
        if state == RowState::Changed {
            r += 1;
            continue;
        }
        // The rows from here held in order; the first one toggled gives the run its claim.
        let mut stretch = r + 1;
        while let (Some(&prev), Some(&next)) = (states.get(stretch - 1), states.get(stretch)) {
            if !follows(prev, next) {
                break;
            }
            stretch += 1;
        }
        let claim = states
            .get(r..stretch)
            .unwrap_or(&[])
            .iter()
            .find_map(|s| match *s {
                RowState::Toggled { col, word, on, .. } => Some((col, word, on)),
                _ => None,
            });
        let claim = claim.filter(|&c| agrees(r, c));
        let mut end = r + 1;
        while end < stretch
            && match claim {
                Some(c) => agrees(end, c),
                None => matches!(states.get(end), Some(RowState::Same { .. })),
            }
        {
            end += 1;
        }
        if end - r >= MIN_RUN_ROWS {
            let run = items.get(r * w..end * w).unwrap_or(&[]);
            let uids: Vec<&str> = run
                .iter()
                .filter_map(|&i| tree.nodes.get(i))
                .filter(|n| n.kind == NodeKind::Element && !n.uid.is_empty())
                .map(|n| n.uid)
                .collect();
            let mut line = format!("… {} rows unchanged", end - r);
            if let Some((col, word, on)) = claim {
                let not = if on { "" } else { "not " };
                line.push_str(&format!(" but {not}{word} in column {}", place(col)));
            }
            line.push_str(" (uid ");
            write_uid_list(&mut line, &uids);
            line.push(')');
            counts.unchanged_runs += 1;
            counts.unchanged_nodes += run
                .iter()
                .map(|&id| fp.sizes.get(id).copied().unwrap_or(1))
                .sum::<usize>();
            td.runs.insert(r, (end - r, line));
        }
        r = end;
    }
    Some(td)
}

/// Shown nodes still under the parent they were shown under, out of the order they were sent
/// in: in each frame, those outside one longest run kept in the sent order.
fn reordered(fp: &Fingerprint, sent: &SentPage, seen: &[Seen]) -> usize {
    let mut moved = 0;
    for (&owner, frame) in &fp.frames {
        let parent = owner.and_then(|o| fp.keys.get(o));
        let sent_order: Vec<u64> = frame
            .items
            .iter()
            .filter(|&&id| seen.get(id) == Some(&Seen::Shown))
            .filter_map(|&id| {
                let key = fp.keys.get(id)?;
                let i = *sent.index.get(key)?;
                let old = sent.nodes.get(i as usize)?;
                (old.shown && old.parent.as_ref() == parent && old.own == fp.own[id])
                    .then_some(u64::from(i))
            })
            .collect();
        if sent_order.windows(2).all(|w| w[0] < w[1]) {
            continue;
        }
        moved += sent_order.len() - longest_increasing_len(&sent_order);
    }
    moved
}

/// The length of a longest strictly increasing subsequence (patience sorting).
fn longest_increasing_len(keys: &[u64]) -> usize {
    let mut tails: Vec<u64> = Vec::new();
    for &k in keys {
        let at = tails.partition_point(|&t| t < k);
        match tails.get_mut(at) {
            Some(t) => *t = k,
            None => tails.push(k),
        }
    }
    tails.len()
}

/// Identity keys of `tree`'s nodes against `sent`, or against `earlier` when that holds more
/// of the page (a modal dialog's snapshot covered the page the agent held before it), with
/// the snapshot they are the keys of.
pub(super) fn identity_keys<'s>(
    tree: &Tree<'_>,
    shape: &Shape,
    sent: &'s SentPage,
    earlier: Option<&'s SentPage>,
) -> (&'s SentPage, Vec<Option<&'s str>>) {
    let against = |held: &'s SentPage| -> (Vec<Option<&'s str>>, usize) {
        let Some(held_shape) = held.shape.as_ref() else {
            return (Vec::new(), 0);
        };
        let uids: Vec<&str> = held.nodes.iter().map(|n| n.uid.as_str()).collect();
        let side = identity::HeldSide {
            shape: held_shape,
            uids: &uids,
        };
        let (matched, count) = identity::match_nodes(tree, shape, &side);
        let keys = matched
            .into_iter()
            .map(|m| {
                m.and_then(|h| held.nodes.get(h as usize))
                    .map(|n| n.key.as_str())
            })
            .collect();
        (keys, count)
    };
    let (keys, count) = against(sent);
    let with_uid = tree.nodes.iter().filter(|n| !n.uid.is_empty()).count();
    if let Some(earlier) = earlier.filter(|_| 2 * count < with_uid) {
        let (earlier_keys, earlier_count) = against(earlier);
        if earlier_count > count {
            return (earlier, earlier_keys);
        }
    }
    (sent, keys)
}

/// Childless visible nodes whose lines are about as short as an unchanged line: shown instead.
fn is_short(tree: &Tree<'_>, items: &[usize]) -> bool {
    let mut chars = 0;
    for &id in items {
        let Some(node) = tree.nodes.get(id) else {
            return false;
        };
        if node.hidden || !tree.children(id).is_empty() || node.kind != NodeKind::Element {
            return false;
        }
        chars += node.uid.len() + node.role.len() + 4;
        chars += node
            .keep_chars
            .unwrap_or(node.name_str().len())
            .min(node.name_str().len());
        chars += node
            .attrs
            .iter()
            .map(|a| a.key.len() + a.value.as_deref().map_or(0, str::len) + 2)
            .sum::<usize>();
    }
    chars <= SHORT_RUN_CHARS
}

/// `… 12 unchanged (uid 1_5…1_40): expand_snapshot uid=1_5 until=1_40`.
fn unchanged_line(tree: &Tree<'_>, items: &[usize], nodes: usize, fallback: &str) -> String {
    let uids: Vec<&str> = items
        .iter()
        .filter_map(|&i| tree.nodes.get(i))
        .filter(|n| n.kind == NodeKind::Element && !n.uid.is_empty())
        .map(|n| n.uid)
        .collect();
    let mut text = format!("… {nodes} unchanged");
    if !uids.is_empty() {
        text.push_str(" (uid ");
        write_uid_list(&mut text, &uids);
        text.push(')');
    }
    ExpandTarget::for_run(tree, items, fallback).write(&mut text);
    text
}

fn write_uid_list(out: &mut String, uids: &[&str]) {
    match uids {
        [] => {}
        [one] => out.push_str(one),
        [a, b] => {
            out.push_str(a);
            out.push_str(", ");
            out.push_str(b);
        }
        [first, .., last] => {
            out.push_str(first);
            out.push('…');
            out.push_str(last);
        }
    }
}
