//! Repeated records that are nodes of their own: Playwright's snapshots keep a grid's `row`s,
//! a list's `listitem`s and a shop's `article`s, each with its cells under it (checkbox, link,
//! texts, buttons), where chrome-devtools-mcp's flatten them into siblings (`records`). Inside
//! `main`, a run of more than `keep` sibling records of one role (or fewer, holding a control
//! other than a link) is written as a table when their cells (controls, and the leaves that
//! carry text, in document order) share one shape: the columns and their names as
//! `records::table_columns` makes them. The nodes between a record and its cells (`cell`, `group`, a heading around a link)
//! are not written; the table's header names their uids with the run's.

use super::prune::Facts;
use super::records::{cell_options, holds_form_control, table_columns, MIN_RECORDS};
use super::roles;
use super::tree::{NodeKind, NodeSet, Table, Tree};
use super::walk::{visible_children, Containers};

/// Cells a record needs to be a table's: one is a list of links, not a table.
const MIN_CELLS: usize = 2;

/// Whether a control's row cell says all there is under it: nothing, options its header can
/// state (`records::cell_options`), or what repeats or decorates its name (a text, an image)
/// on a control whose text is no value (not a textbox: Playwright writes a field's value as
/// its text).
fn control_cell(tree: &Tree<'_>, id: usize) -> bool {
    let Some(node) = tree.nodes.get(id) else {
        return false;
    };
    if tree.children(id).is_empty() {
        return true;
    }
    if matches!(node.role, "combobox" | "listbox") {
        return cell_options(tree, id).is_some_and(|o| !o.is_empty());
    }
    if matches!(node.role, "textbox" | "searchbox" | "spinbutton") {
        return false;
    }
    tree.subtree(id).skip(1).all(|d| {
        tree.nodes.get(d).is_some_and(|n| {
            n.kind == NodeKind::Element
                && !roles::is_interactive(n)
                && (n.dropped || n.role.is_empty() || roles::is_image(n.role))
        })
    })
}

/// Whether `name` is what a node under `id` shows already (a cell named by the option its
/// combobox selects, by the link it holds).
fn shown_below(tree: &Tree<'_>, id: usize, name: &str) -> bool {
    tree.subtree(id)
        .skip(1)
        .any(|d| tree.nodes.get(d).is_some_and(|n| n.name_str() == name))
}

/// The cells of the record `id`, in document order, into `out`; false when a row could not
/// say all that is shown under it (a hidden or unreadable node, a control without a uid or
/// with more under it than its cell states).
fn cells_of(tree: &Tree<'_>, id: usize, out: &mut Vec<usize>) -> bool {
    for c in visible_children(tree, id) {
        let Some(n) = tree.nodes.get(c) else {
            return false;
        };
        if n.kind != NodeKind::Element || n.hidden || n.devtools_selected {
            return false;
        }
        if roles::is_interactive(n) {
            if n.uid.is_empty() || !control_cell(tree, c) {
                return false;
            }
            out.push(c);
            continue;
        }
        if visible_children(tree, c).is_empty() {
            // A text, or a leaf whose name is its text (`cell "1000"`); an empty one says
            // nothing (its uid is in the header's range).
            if n.is_text() || !n.name_str().trim().is_empty() {
                out.push(c);
            }
            continue;
        }
        let name = n.name_str();
        if !name.trim().is_empty() && !shown_below(tree, c, name) {
            out.push(c);
        }
        if !cells_of(tree, c, out) {
            return false;
        }
    }
    true
}

/// A node that can be a record: a structural node with nothing of its own to write (no name,
/// no state) and a uid the header's range starts from.
fn record_node<'a>(tree: &Tree<'a>, id: usize) -> Option<&'a str> {
    let n = tree.nodes.get(id)?;
    let plain = n.kind == NodeKind::Element
        && !n.hidden
        && !n.role.is_empty()
        && n.role != "heading"
        && !roles::is_interactive(n)
        && n.name_str().is_empty()
        && n.attrs.iter().all(|a| a.key.starts_with('/'))
        && !n.uid.is_empty();
    plain.then_some(n.role)
}

/// Under every container inside `main`, runs of more than `keep` sibling records of one role
/// (or of at least `MIN_RECORDS` holding a control other than a link) whose cells share one
/// shape (roles, and a combobox's options) become tables, at least `MIN_RECORDS` records each; records that break the shape stay nodes. `max_text` is the
/// tables' text budget per record (0: no text cells; `None`: no tables).
pub fn collapse_nested(tree: &mut Tree<'_>, facts: &Facts, keep: usize, max_text: Option<usize>) {
    let Some(max_text) = max_text.filter(|_| tree.nested_records) else {
        return;
    };
    let mut found: Vec<Table<'_>> = Vec::new();
    // Every container: records often sit in a layout node dropped (a `generic` holding the
    // cards), whose parent has fewer raw children than records.
    let mut containers = Containers::new().skip_hidden();
    let mut members = NodeSet::new();
    while let Some((parent, items)) = containers.next(tree) {
        if items.len() < MIN_RECORDS || !facts.in_main(parent) || members.contains(&parent) {
            continue;
        }
        let mut k = 0;
        while k < items.len() {
            let Some(role) = items.get(k).and_then(|&i| record_node(tree, i)) else {
                k += 1;
                continue;
            };
            let mut end = k + 1;
            while items
                .get(end)
                .and_then(|&i| record_node(tree, i))
                .is_some_and(|r| r == role)
            {
                end += 1;
            }
            let run = items.get(k..end).unwrap_or(&[]);
            k = end;
            // Short runs too when they hold a control other than a link (five cards of a
            // board): a table keeps them in place as cheaply.
            let acts = || run.iter().any(|&r| holds_form_control(tree, r));
            if run.len() < MIN_RECORDS || run.len() <= keep && !acts() {
                continue;
            }
            let cells: Vec<Option<Vec<usize>>> = run
                .iter()
                .map(|&r| {
                    let mut out = Vec::new();
                    (cells_of(tree, r, &mut out) && out.len() >= MIN_CELLS).then_some(out)
                })
                .collect();
            let shape = |c: &[usize]| -> Vec<(&str, Option<Vec<&str>>)> {
                c.iter()
                    .map(|&i| {
                        let role = tree.nodes.get(i).map_or("", |n| n.role);
                        (role, cell_options(tree, i))
                    })
                    .collect()
            };
            let mut s = 0;
            while s < run.len() {
                let Some(head) = cells.get(s).and_then(Option::as_deref) else {
                    s += 1;
                    continue;
                };
                let head_shape = shape(head);
                let mut e = s + 1;
                while cells
                    .get(e)
                    .and_then(Option::as_deref)
                    .is_some_and(|c| shape(c) == head_shape)
                {
                    e += 1;
                }
                if e - s >= MIN_RECORDS {
                    let records: Vec<&[usize]> = (s..e)
                        .filter_map(|r| cells.get(r).and_then(Option::as_deref))
                        .collect();
                    let record_nodes = run.get(s..e).unwrap_or(&[]).to_vec();
                    for &r in &record_nodes {
                        members.extend(tree.subtree(r));
                    }
                    found.push(Table {
                        items: records.iter().flat_map(|r| r.iter().copied()).collect(),
                        columns: table_columns(tree, &records, max_text, true),
                        record_nodes,
                    });
                }
                s = e;
            }
        }
    }
    for table in found {
        let labels: Vec<usize> = table
            .items
            .iter()
            .copied()
            .filter(|&c| tree.nodes.get(c).is_some_and(|n| n.is_text()))
            .collect();
        tree.record_labels.extend(labels);
        if let Some(&first) = table.record_nodes.first() {
            tree.tables.insert(first, table);
        }
    }
    tree.record_members.extend(members.iter());
}
