//! Repeated records: chrome-devtools-mcp's non-verbose snapshots drop table, row, cell, list and
//! listitem nodes, so a 40-row grid arrives as one long run of siblings repeating a pattern of
//! roles (checkbox, text, link, …, button "Edit …", button "Delete …"). This pass finds such
//! periodic runs and hides the records after the first few behind one marker (`hidden_records`).
//! Also: the options of a collapsed combobox or listbox beyond the selected one.

use super::tree::{NodeKind, RecordRun, Tree};
use super::walk::{visible_children, Containers};

/// Longest record looked for (siblings per record).
const MAX_PERIOD: usize = 24;
/// Shortest record looked for: a single repeated role is `collapse_similar`'s job.
const MIN_PERIOD: usize = 2;
/// Repetitions that make a run of records.
const MIN_RECORDS: usize = 3;
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

type Shape<'a> = Option<&'a str>;

/// `a` equals `b` up to one substitution, insertion or deletion.
fn within_one_edit(a: &[Shape<'_>], b: &[Shape<'_>]) -> bool {
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
fn record_len(
    shapes: &[Shape<'_>],
    start: usize,
    template: &[Shape<'_>],
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

/// The run of records starting at `start` with period `p`: the number of records, where
/// record `keep` starts (if there are that many) and where the run ends.
fn records_at(
    shapes: &[Shape<'_>],
    start: usize,
    p: usize,
    keep: usize,
) -> Option<(usize, Option<usize>, usize)> {
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
    let mut count = 1;
    let mut keep_start = (keep == 0).then_some(start);
    let mut pos = start + p;
    loop {
        let len = record_len(shapes, pos, template, true);
        let last = len.is_none();
        let Some(len) = len.or_else(|| record_len(shapes, pos, template, false)) else {
            break;
        };
        if count == keep {
            keep_start = Some(pos);
        }
        count += 1;
        pos += len;
        if last {
            break;
        }
    }
    (count >= MIN_RECORDS).then_some((count, keep_start, pos))
}

/// Under every container, runs of at least three records of 2..=24 siblings repeating the same
/// shape keep their first `keep` records; the others hide behind one marker.
pub fn collapse_records<'a>(tree: &mut Tree<'a>, keep: usize) {
    let mut runs: Vec<(usize, RecordRun<'a>, Vec<usize>)> = Vec::new();
    let mut shapes = Vec::new();
    let mut containers = Containers::new()
        .skip_hidden()
        .min_children(MIN_PERIOD * MIN_RECORDS);
    while let Some((_, items)) = containers.next(tree) {
        if items.len() < MIN_PERIOD * MIN_RECORDS {
            continue;
        }
        shapes.clear();
        shapes.extend(items.iter().map(|&c| shape_of(tree, c)));
        let mut i = 0;
        while i + MIN_PERIOD * MIN_RECORDS <= shapes.len() {
            // The period covering most siblings from here (the shortest on ties).
            let mut best: Option<(usize, Option<usize>, usize, usize)> = None;
            if shapes.get(i).copied().flatten().is_some() {
                for p in MIN_PERIOD..=MAX_PERIOD {
                    if i + p * MIN_RECORDS > shapes.len() {
                        break;
                    }
                    if shapes.get(i + p) != shapes.get(i) {
                        continue;
                    }
                    if let Some((count, keep_start, end)) = records_at(&shapes, i, p, keep) {
                        if best.is_none_or(|b| end > b.2) {
                            best = Some((count, keep_start, end, p));
                        }
                    }
                }
            }
            let Some((count, keep_start, end, p)) = best else {
                i += 1;
                continue;
            };
            if let Some(from) = keep_start {
                let hidden: Vec<usize> = items.get(from..end).unwrap_or(&[]).to_vec();
                if hidden.len() >= MIN_HIDDEN_SIBLINGS {
                    let shape = shapes
                        .get(i..i + p)
                        .unwrap_or(&[])
                        .iter()
                        .flatten()
                        .copied()
                        .collect();
                    let run = RecordRun {
                        siblings: hidden.len(),
                        records: count - keep,
                        shape,
                    };
                    runs.push((hidden.first().copied().unwrap_or(0), run, hidden));
                }
            }
            i = end;
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
}

/// The options of a combobox or listbox that is not expanded, when there are more than
/// `max_options`: every one but the selected one hides (the control's value names it too).
pub fn summarise_options(tree: &mut Tree<'_>, max_options: usize) {
    for id in 0..tree.nodes.len() {
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
        if node.children.is_empty() {
            continue;
        }
        let options: Vec<usize> = visible_children(tree, id)
            .into_iter()
            .filter(|&c| {
                tree.nodes
                    .get(c)
                    .is_some_and(|n| n.role == "option" && !n.hidden && n.children.is_empty())
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
        let v =
            |x: &[&'static str]| -> Vec<Shape<'static>> { x.iter().map(|s| Some(*s)).collect() };
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
    fn finds_records_with_an_optional_node() {
        let row = [Some("checkbox"), Some("text"), Some("link"), Some("button")];
        let mut shapes: Vec<Shape<'_>> = vec![None];
        for k in 0..6 {
            shapes.extend(row);
            if k == 2 {
                shapes.push(Some("image"));
            }
        }
        shapes.push(Some("text"));
        // Six records (the third with an extra image), the fourth starting at 14.
        assert_eq!(records_at(&shapes, 1, 4, 3), Some((6, Some(14), 26)));
        // Two records are not a run; a break (None) ends one.
        let two: Vec<Shape<'_>> = row.iter().chain(&row).copied().collect();
        assert!(records_at(&two, 0, 4, 1).is_none());
        let mut broken = two.clone();
        broken.push(None);
        broken.extend(row);
        assert!(records_at(&broken, 0, 4, 1).is_none());
    }
}
