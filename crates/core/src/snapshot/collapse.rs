//! Lossy passes that shorten content: long names cut (`cut=N`), text beyond a budget per
//! container hidden, and runs of similar siblings collapsed after the first few.

use super::prune::Facts;
use super::records;
use super::tree::{Node, NodeKind, NodeSet, Tree};
use super::walk::Containers;

/// Whether `node`'s name is longer than `max_chars` (it keeps its first `max_chars`
/// characters). Asked of every node by `apply_passes`, in its one sweep of the per-node marks.
pub fn name_is_long(node: &Node<'_>, max_chars: usize) -> bool {
    if node.kind != NodeKind::Element || node.role == "RootWebArea" {
        return false;
    }
    node.name
        .as_deref()
        .is_some_and(|n| more_chars_than(n, max_chars.saturating_add(1)))
}

/// Whether `text` has more than `n` characters. A character is one byte or more, so a name of
/// `n` bytes or fewer (most names) has at most `n` characters and is not decoded; the rest are
/// counted up to `n + 1`: linear even on a 10 MB name.
fn more_chars_than(text: &str, n: usize) -> bool {
    if text.len() <= n {
        return false;
    }
    chars_up_to(text, n.saturating_add(1)) > n
}

/// `text.chars().take(limit).count()`: the characters of `text`, counted up to `limit`. A
/// character is one to four bytes: a text of `4 * limit` bytes or more has `limit` characters
/// at least, and one shorter is counted whole, `chars().count()` counting a word at a time
/// where `take` decodes each character.
fn chars_up_to(text: &str, limit: usize) -> usize {
    if text.len() >= limit.saturating_mul(4) {
        limit
    } else {
        text.chars().count().min(limit)
    }
}

/// A text this short with a control among the next `TITLE_REACH` siblings is the title of the
/// section that control is in (a form section's "Notifications" before its prose and toggles):
/// the text budget leaves it.
const SHORT_TEXT_CHARS: usize = 40;
const TITLE_REACH: usize = 3;

/// The text budget and the collapse of similar siblings, in one walk of the containers: each
/// container's items are nobody else's, and neither pass reads what the other writes in
/// another container (the budget hides role-less texts, which the collapse passes over), so one
/// walk gives what two did, and on big pages the walks over the node array are what costs.
pub fn budget_and_collapse(
    tree: &mut Tree<'_>,
    facts: &Facts,
    budget: usize,
    keep: usize,
    keep_nav: usize,
    keep_main_controls: bool,
) {
    // The records of a nested table (and the cells under them) are its rows: written one line
    // each, never collapsed (a grid row holds ten `cell`s in a row).
    let rows: NodeSet = tree
        .tables
        .values()
        .flat_map(|t| t.record_nodes.iter().flat_map(|&r| tree.subtree(r)))
        .collect();
    let mut containers = Containers::new();
    let mut scratch = Scratch::default();
    while let Some((parent, items)) = containers.next(tree) {
        budget_items(tree, facts, items, budget, &mut scratch);
        // A closed select's options are capped by `records::summarise_options` alone.
        if tree.nodes.get(parent).is_some_and(records::is_closed_list) {
            continue;
        }
        collapse_items(
            tree,
            items,
            facts,
            (keep, keep_nav),
            keep_main_controls,
            &rows,
            &mut scratch,
        );
    }
}

/// Buffers reused from one container to the next.
#[derive(Default)]
struct Scratch {
    control: Vec<bool>,
    protected: Vec<bool>,
    to_hide: Vec<usize>,
}

/// Under each container, text nodes past `budget` characters hide (interactive nodes, headings
/// and the rest stay): the start of each block of text stays readable. What an agent acting on
/// the page needs is ranked first: a control's label (the text right before it) and a short
/// title a few siblings before a control are never hidden here and spend nothing; the budget
/// goes to prose, in order, counted as shown (a name `cut_long_names` cut counts its kept
/// characters only).
fn budget_items(
    tree: &mut Tree<'_>,
    facts: &Facts,
    items: &[usize],
    budget: usize,
    scratch: &mut Scratch,
) {
    // Whether each item is a labelled control, asked once per item (not once per text within
    // reach of it).
    let control = &mut scratch.control;
    control.clear();
    control.extend(items.iter().map(|&c| facts.is_labelled_control(c)));
    let is_control = |k: usize| control.get(k).copied().unwrap_or(false);
    let protected = &mut scratch.protected;
    protected.clear();
    protected.extend(items.iter().enumerate().map(|(k, &c)| {
        let Some(node) = tree.nodes.get(c) else {
            return false;
        };
        // Its name counted last, for a text near a control only.
        let short = || {
            node.name
                .as_deref()
                .is_some_and(|n| !more_chars_than(n, SHORT_TEXT_CHARS))
        };
        is_control(k + 1) || (k + 1..k + 1 + TITLE_REACH).any(is_control) && short()
    }));
    let mut used = 0usize;
    for (k, &c) in items.iter().enumerate() {
        let leaf = tree.child_lists.of(c).is_empty();
        let Some(node) = tree.nodes.get_mut(c) else {
            continue;
        };
        if !node.is_text() || node.hidden || !leaf {
            continue;
        }
        // The texts naming a record shown are the record's, not prose.
        let labels_record = !tree.record_labels.is_empty() && tree.record_labels.contains(&c);
        // What the agent opened (a dialog's or tooltip's text) is not prose to ration.
        if protected.get(k).copied().unwrap_or(false) || labels_record || facts.stays_open(c) {
            continue;
        }
        if used >= budget {
            node.hidden = true;
        } else {
            let shown = node.keep_chars.unwrap_or(usize::MAX);
            used += node.name.as_deref().map_or(0, |n| chars_up_to(n, shown));
        }
    }
}

/// Runs of consecutive siblings with the same role past `keep` hide behind one marker, past
/// `keep_nav` in a navigation outside `main`. With `keep_main_controls`, controls inside `main`
/// are never collapsed (they stay in place), nor is what a navigation inside `main` shows (its
/// controls and what holds them: a menu's items, a table of contents' entries; the rest of it a
/// summarised landmark hid already); one outside `main` keeps `keep_nav` of a run (all of it at
/// `moderate`).
fn collapse_items(
    tree: &mut Tree<'_>,
    items: &[usize],
    facts: &Facts,
    (keep, keep_nav): (usize, usize),
    keep_main_controls: bool,
    rows: &NodeSet,
    scratch: &mut Scratch,
) {
    let mut run_role: Option<&str> = None;
    let mut run_len = 0usize;
    let to_hide = &mut scratch.to_hide;
    to_hide.clear();
    for &c in items {
        let Some(node) = tree.nodes.get(c) else {
            continue;
        };
        // A navigation outside `main` (a sidebar) keeps `keep_nav` of a run.
        let side_nav = facts.in_nav(c) && !facts.in_main(c);
        let eligible = node.kind == NodeKind::Element
            && !node.role.is_empty()
            && !node.hidden
            && node.role != "heading"
            && !rows.contains(&c)
            && !facts.stays_open(c)
            && !(keep_main_controls
                && !side_nav
                && (facts.in_nav(c) || facts.in_main(c) && facts.is_control(c)));
        if !eligible {
            run_role = None;
            run_len = 0;
            continue;
        }
        if run_role == Some(node.role) {
            run_len += 1;
        } else {
            run_role = Some(node.role);
            run_len = 1;
        }
        if run_len > if side_nav { keep_nav } else { keep } {
            to_hide.push(c);
        }
    }
    for &c in to_hide.iter() {
        if let Some(node) = tree.nodes.get_mut(c) {
            node.hidden = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The test by byte length answers as counting every character would, on names of one-
    /// to four-byte characters around each bound.
    #[test]
    fn more_chars_than_agrees_with_a_count() {
        for unit in ["a", "é", "—", "😀"] {
            for len in 0..30 {
                let text = unit.repeat(len);
                for n in 0..30 {
                    assert_eq!(
                        more_chars_than(&text, n),
                        text.chars().count() > n,
                        "{unit} {len} {n}"
                    );
                }
            }
        }
        let mixed = "a—é😀b".repeat(7);
        for n in 0..40 {
            assert_eq!(more_chars_than(&mixed, n), mixed.chars().count() > n);
        }
    }
}
