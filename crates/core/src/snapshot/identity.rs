//! Identity across snapshots of a page: which node of a later snapshot is a node the agent
//! holds, when the upstream gave it a new uid (chrome-devtools-mcp keeps a node's uid only
//! from its page's previous snapshot: a modal dialog's snapshot, or a re-render of the same
//! rows, renumbers the page).
//!
//! A node is matched to a held node only when that is certain:
//! - the upstream kept its uid (a uid is one element's for the upstream's life), or
//! - its parent is matched to the held node's parent, both have the same own line (role,
//!   name, every attribute and state; the uid aside), the same place among their siblings,
//!   and no other candidate: either that line is the only one of its kind among the siblings
//!   on both sides (an *anchor*), or the siblings from the anchor before it to the anchor
//!   after it (or the list's ends) are the same lines in both, place for place (states such
//!   as `focused` aside: a line whose state changed is not matched itself), and it is the
//!   only one of its line among them. Its place among its siblings is thus the same, counted
//!   from the unique lines around it. Two identical rows next to each other never match each
//!   other, and a button "Edit" in a flat list of cells matches only inside its own row,
//!   between the same unique lines.
//!
//! Roots are matched by their kept uid alone: nothing of a new document is ever matched to the
//! one before. Matching is one sweep of each tree plus a count per list of siblings: linear in
//! the page. The delta (`delta.rs`) keys each matched node by the held node's key, so a node
//! that only changed uid is unchanged; the proxy sends the agent's uid upstream as the node's
//! current one (`crate::held::Held::current_uid`).

use std::collections::HashMap;
use std::hash::{BuildHasher, Hash, Hasher, RandomState};

use once_cell::sync::Lazy;

use super::tree::{NodeKind, Tree};

/// Keys drawn once per process: a page cannot craft two different lines of one hash.
static KEYS: Lazy<RandomState> = Lazy::new(RandomState::new);

/// What identity needs of a tree: each node's own line hashed without its uid (its
/// signature), and the raw tree's lists of children.
#[derive(Debug, Clone, Default)]
pub struct Shape {
    sig: Vec<u64>,
    /// The signature without bare words (states such as `focused`, `expanded`, `checked`).
    weak: Vec<u64>,
    /// Children of node `i`: `list[start[i]..start[i + 1]]`; the roots are `roots`.
    start: Vec<u32>,
    list: Vec<u32>,
    roots: Vec<u32>,
    /// The snapshot shows only modal dialogs under its roots: chrome-devtools-mcp's snapshot
    /// while a modal is open, which covers the page the agent held before it.
    covered: bool,
}

impl Shape {
    /// The shape of `tree` (as parsed: passes change no line, only what is written).
    pub fn of(tree: &Tree<'_>) -> Shape {
        let n = tree.nodes.len();
        let mut sig = Vec::with_capacity(n);
        let mut weak = Vec::with_capacity(n);
        let mut start = Vec::with_capacity(n + 1);
        let mut list = Vec::with_capacity(n);
        for (id, node) in tree.nodes.iter().enumerate() {
            let mut h = KEYS.build_hasher();
            let mut w = KEYS.build_hasher();
            for h in [&mut h, &mut w] {
                (node.kind as u8).hash(h);
                match node.kind {
                    NodeKind::Element => {
                        node.role.hash(h);
                        node.name.as_deref().hash(h);
                    }
                    _ => node.raw.hash(h),
                }
            }
            if node.kind == NodeKind::Element {
                node.devtools_selected.hash(&mut h);
                for attr in &node.attrs {
                    attr.key.hash(&mut h);
                    attr.value.as_deref().hash(&mut h);
                    if attr.value.is_some() {
                        attr.key.hash(&mut w);
                        attr.value.as_deref().hash(&mut w);
                    }
                }
            }
            sig.push(h.finish());
            weak.push(w.finish());
            start.push(list.len() as u32);
            list.extend(tree.children(id).iter().map(|&c| c as u32));
        }
        start.push(list.len() as u32);
        let is_modal = |id: usize| {
            tree.nodes.get(id).is_some_and(|n| {
                matches!(n.role, "dialog" | "alertdialog")
                    && n.attrs
                        .iter()
                        .any(|a| a.key == "modal" && a.value.is_none())
            })
        };
        let mut under_roots = tree.roots.iter().flat_map(|&r| tree.children(r).iter());
        let covered = under_roots.clone().next().is_some() && under_roots.all(|&c| is_modal(c));
        Shape {
            sig,
            weak,
            start,
            list,
            roots: tree.roots.iter().map(|&r| r as u32).collect(),
            covered,
        }
    }

    /// See `covered`.
    pub fn is_covered(&self) -> bool {
        self.covered
    }

    fn children(&self, id: usize) -> &[u32] {
        let (Some(&a), Some(&b)) = (self.start.get(id), self.start.get(id + 1)) else {
            return &[];
        };
        self.list.get(a as usize..b as usize).unwrap_or(&[])
    }

    pub fn approx_bytes(&self) -> usize {
        self.sig.len() * 20 + self.list.len() * 4 + self.roots.len() * 4
    }
}

/// The held side of a match: a snapshot's shape and each of its nodes' uid (document order,
/// as the tree's nodes).
pub struct HeldSide<'h> {
    pub shape: &'h Shape,
    pub uids: &'h [&'h str],
}

/// For each node of the new tree, the index of the held node it is certainly, if any; and how
/// many nodes with a uid were matched.
pub fn match_nodes(
    tree: &Tree<'_>,
    shape: &Shape,
    held: &HeldSide<'_>,
) -> (Vec<Option<u32>>, usize) {
    let n = tree.nodes.len();
    let mut matched: Vec<Option<u32>> = vec![None; n];
    let mut claimed = vec![false; held.uids.len()];
    // Kept uids first: the upstream's own word. A uid repeated on either side is no one's.
    let mut held_uid: HashMap<&str, Option<u32>> = HashMap::with_capacity(held.uids.len());
    for (i, &uid) in held.uids.iter().enumerate() {
        if !uid.is_empty() {
            held_uid
                .entry(uid)
                .and_modify(|e| *e = None)
                .or_insert(Some(i as u32));
        }
    }
    let mut new_uid: HashMap<&str, u32> = HashMap::with_capacity(n);
    for node in &tree.nodes {
        if node.kind == NodeKind::Element && !node.uid.is_empty() {
            *new_uid.entry(node.uid).or_default() += 1;
        }
    }
    for (id, node) in tree.nodes.iter().enumerate() {
        if node.kind != NodeKind::Element || new_uid.get(node.uid) != Some(&1) {
            continue;
        }
        if let Some(&Some(h)) = held_uid.get(node.uid) {
            if let Some(slot) = claimed.get_mut(h as usize) {
                *slot = true;
                matched[id] = Some(h);
            }
        }
    }
    // Then down from every matched node, parents before children (document order).
    let mut lists = ListMatcher::default();
    for id in 0..n {
        let Some(h) = matched[id] else { continue };
        let new_children = tree.children(id);
        let held_children = held.shape.children(h as usize);
        lists.pair(
            new_children,
            held_children,
            (&shape.sig, &shape.weak),
            (&held.shape.sig, &held.shape.weak),
            |c, hc| {
                // A uid the upstream repeats is no one's identity, on either side.
                let repeated = tree
                    .nodes
                    .get(c)
                    .is_some_and(|n| new_uid.get(n.uid).is_some_and(|&k| k > 1))
                    || held
                        .uids
                        .get(hc as usize)
                        .is_some_and(|u| matches!(held_uid.get(u), Some(None)));
                let (Some(slot), Some(taken)) = (matched.get_mut(c), claimed.get_mut(hc as usize))
                else {
                    return;
                };
                if slot.is_none() && !*taken && !repeated {
                    *slot = Some(hc);
                    *taken = true;
                }
            },
        );
    }
    let count = matched
        .iter()
        .zip(&tree.nodes)
        .filter(|(m, node)| m.is_some() && !node.uid.is_empty())
        .count();
    (matched, count)
}

/// Scratch space for matching lists of siblings (reused: one allocation per page).
#[derive(Default)]
struct ListMatcher {
    /// Per line: how many times in the new list, in the held one, and its last held place.
    counts: HashMap<u64, (u32, u32, u32)>,
    new_in_segment: HashMap<u64, u32>,
    held_in_segment: HashMap<u64, u32>,
    /// Anchors: (new place, held place), in the new list's order.
    anchors: Vec<(usize, usize)>,
}

impl ListMatcher {
    /// Calls `pair(new, held)` for each certain pair of the two lists of siblings (see the
    /// module doc): every anchor (a line once in each list), then, between two anchors
    /// (or a list's ends) with the same lines between them in both lists but for their
    /// states, each line that is once in that stretch on both sides, at the same offset.
    fn pair(
        &mut self,
        new: &[usize],
        held: &[u32],
        (new_sig, new_weak): (&[u64], &[u64]),
        (held_sig, held_weak): (&[u64], &[u64]),
        mut pair: impl FnMut(usize, u32),
    ) {
        let weak_new = |i: usize| new.get(i).and_then(|&c| new_weak.get(c)).copied();
        let weak_held = |i: usize| {
            held.get(i)
                .and_then(|&c| held_weak.get(c as usize))
                .copied()
        };
        if new.is_empty() || held.is_empty() {
            return;
        }
        let sig_new = |i: usize| new.get(i).and_then(|&c| new_sig.get(c)).copied();
        let sig_held = |i: usize| held.get(i).and_then(|&c| held_sig.get(c as usize)).copied();
        self.counts.clear();
        for i in 0..new.len() {
            if let Some(s) = sig_new(i) {
                self.counts.entry(s).or_default().0 += 1;
            }
        }
        for i in 0..held.len() {
            if let Some(s) = sig_held(i) {
                let e = self.counts.entry(s).or_default();
                e.1 += 1;
                e.2 = i as u32;
            }
        }
        self.anchors.clear();
        for i in 0..new.len() {
            let Some(&(1, 1, at)) = sig_new(i).and_then(|s| self.counts.get(&s)) else {
                continue;
            };
            self.anchors.push((i, at as usize));
            if let (Some(&c), Some(&h)) = (new.get(i), held.get(at as usize)) {
                pair(c, h);
            }
        }
        // The stretches between anchors: from just after one (or the start) to just before
        // the next (or the end), on both sides.
        let mut from = (0, 0);
        let ends = self
            .anchors
            .iter()
            .map(|&(a, h)| (a, h, true))
            .chain(std::iter::once((new.len(), held.len(), false)));
        let bounds: Vec<(usize, usize, bool)> = ends.collect();
        for (to_new, to_held, is_anchor) in bounds {
            let (from_new, from_held) = from;
            if is_anchor {
                from = (to_new + 1, to_held + 1);
            }
            // Anchors out of order, or a stretch of another length: nothing in it is certain.
            if to_new < from_new || to_held < from_held || to_new - from_new != to_held - from_held
            {
                continue;
            }
            let len = to_new - from_new;
            // Another line anywhere in the stretch (a row replaced by another): none of it.
            if len == 0 || (0..len).any(|t| weak_new(from_new + t) != weak_held(from_held + t)) {
                continue;
            }
            self.new_in_segment.clear();
            self.held_in_segment.clear();
            for t in 0..len {
                if let Some(s) = sig_new(from_new + t) {
                    *self.new_in_segment.entry(s).or_default() += 1;
                }
                if let Some(s) = sig_held(from_held + t) {
                    *self.held_in_segment.entry(s).or_default() += 1;
                }
            }
            for t in 0..len {
                let (Some(s), Some(hs)) = (sig_new(from_new + t), sig_held(from_held + t)) else {
                    continue;
                };
                let once = self.new_in_segment.get(&s) == Some(&1)
                    && self.held_in_segment.get(&s) == Some(&1);
                if s == hs && once {
                    if let (Some(&c), Some(&h)) = (new.get(from_new + t), held.get(from_held + t)) {
                        pair(c, h);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notation::cdp::Cdp;
    use crate::snapshot::Notation;

    /// New uid -> held uid, for each match of `new` against `old` (both chrome-devtools-mcp
    /// text).
    fn matches(old: &str, new: &str) -> Vec<(String, String)> {
        let mut implied_old = Vec::new();
        let old_tree = Cdp.parse(old, &mut implied_old);
        let mut implied_new = Vec::new();
        let new_tree = Cdp.parse(new, &mut implied_new);
        let old_shape = Shape::of(&old_tree);
        let uids: Vec<&str> = old_tree.nodes.iter().map(|n| n.uid).collect();
        let held = HeldSide {
            shape: &old_shape,
            uids: &uids,
        };
        let (m, _) = match_nodes(&new_tree, &Shape::of(&new_tree), &held);
        m.iter()
            .enumerate()
            .filter_map(|(id, h)| {
                let h = (*h)?;
                let new_uid = new_tree.nodes.get(id)?.uid;
                let old_uid = old_tree.nodes.get(h as usize)?.uid;
                (!new_uid.is_empty()).then(|| (new_uid.to_string(), old_uid.to_string()))
            })
            .collect()
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    const ROWS: &str = "uid=1_0 RootWebArea \"Orders\"
  uid=1_1 main
    uid=1_2 \"#1\"
    uid=1_3 \"Ada\"
    uid=1_4 button \"Edit\"
    uid=1_5 \"#2\"
    uid=1_6 \"Bob\"
    uid=1_7 button \"Edit\"
";

    #[test]
    fn a_re_render_of_the_same_rows_matches_every_node() {
        let new = ROWS
            .replace("1_2", "4_2")
            .replace("1_4", "4_4")
            .replace("1_7", "4_7");
        assert_eq!(
            matches(ROWS, &new),
            pairs(&[
                ("1_0", "1_0"),
                ("1_1", "1_1"),
                ("4_2", "1_2"),
                ("1_3", "1_3"),
                ("4_4", "1_4"),
                ("1_5", "1_5"),
                ("1_6", "1_6"),
                ("4_7", "1_7"),
            ])
        );
    }

    /// Rows swapped: each Edit stands where the other row's stood. Neither is matched (the
    /// lines around them are not as they were), only the lines unique on both sides.
    #[test]
    fn rows_reordered_never_match_a_button_to_the_other_rows() {
        let new = "uid=1_0 RootWebArea \"Orders\"
  uid=1_1 main
    uid=5_0 \"#2\"
    uid=5_1 \"Bob\"
    uid=5_2 button \"Edit\"
    uid=5_3 \"#1\"
    uid=5_4 \"Ada\"
    uid=5_5 button \"Edit\"
";
        assert_eq!(
            matches(ROWS, new),
            pairs(&[
                ("1_0", "1_0"),
                ("1_1", "1_1"),
                ("5_0", "1_5"),
                ("5_1", "1_6"),
                ("5_3", "1_2"),
                ("5_4", "1_3"),
            ])
        );
    }

    /// A line inserted in one row (a disclosure opened) shifts every place after it: the rows
    /// after it are matched all the same, the row that changed length is not.
    #[test]
    fn a_node_inserted_in_one_row_leaves_the_other_rows_matched() {
        let new = "uid=1_0 RootWebArea \"Orders\"
  uid=1_1 main
    uid=8_0 \"#1\"
    uid=8_1 \"Ada\"
    uid=8_9 \"2 items\"
    uid=8_2 button \"Edit\"
    uid=8_3 \"#2\"
    uid=8_4 \"Bob\"
    uid=8_5 button \"Edit\"
";
        assert_eq!(
            matches(ROWS, new),
            pairs(&[
                ("1_0", "1_0"),
                ("1_1", "1_1"),
                ("8_0", "1_2"),
                ("8_1", "1_3"),
                ("8_3", "1_5"),
                ("8_4", "1_6"),
                ("8_5", "1_7"),
            ])
        );
    }

    #[test]
    fn identical_rows_never_match_each_other() {
        let old = "uid=1_0 RootWebArea \"Gifts\"
  uid=1_1 main
    uid=1_2 \"Gift card\"
    uid=1_3 button \"Edit\"
    uid=1_4 \"Gift card\"
    uid=1_5 button \"Edit\"
";
        let new = old
            .replace("1_2", "6_2")
            .replace("1_3", "6_3")
            .replace("1_4", "6_4")
            .replace("1_5", "6_5");
        assert_eq!(matches(old, &new), pairs(&[("1_0", "1_0"), ("1_1", "1_1")]));
    }

    /// A state changed (focus): that line is not matched, the lines around it are.
    #[test]
    fn a_changed_state_leaves_the_rest_of_its_row_matched() {
        let old = "uid=1_0 RootWebArea \"Orders\"
  uid=1_1 main
    uid=1_2 \"#1\"
    uid=1_3 \"Paid\"
    uid=1_4 button \"Edit\"
    uid=1_5 button \"Refund\"
    uid=1_6 \"#2\"
    uid=1_7 \"Paid\"
    uid=1_8 button \"Edit\"
    uid=1_9 button \"Refund\"
";
        let new = old
            .replace(
                "1_4 button \"Edit\"",
                "1_4 button \"Edit\" focusable focused",
            )
            .replace("uid=1_3", "uid=2_3")
            .replace("uid=1_4", "uid=2_4")
            .replace("uid=1_5", "uid=2_5");
        assert_eq!(
            matches(old, &new),
            pairs(&[
                ("1_0", "1_0"),
                ("1_1", "1_1"),
                ("1_2", "1_2"),
                ("2_3", "1_3"),
                ("2_5", "1_5"),
                ("1_6", "1_6"),
                ("1_7", "1_7"),
                ("1_8", "1_8"),
                ("1_9", "1_9"),
            ])
        );
    }

    #[test]
    fn a_new_document_matches_nothing() {
        let new = ROWS.replace("1_", "9_");
        assert_eq!(matches(ROWS, &new), Vec::new());
    }

    #[test]
    fn a_changed_name_leaves_its_row_unmatched() {
        // Row 1's name changed: the row may be another one now, so its Edit is not matched;
        // row 2's is.
        let new = "uid=1_0 RootWebArea \"Orders\"
  uid=1_1 main
    uid=7_0 \"#1\"
    uid=7_1 \"Ada L.\"
    uid=7_2 button \"Edit\"
    uid=7_3 \"#2\"
    uid=7_4 \"Bob\"
    uid=7_5 button \"Edit\"
";
        assert_eq!(
            matches(ROWS, new),
            pairs(&[
                ("1_0", "1_0"),
                ("1_1", "1_1"),
                ("7_0", "1_2"),
                ("7_3", "1_5"),
                ("7_4", "1_6"),
                ("7_5", "1_7"),
            ])
        );
    }
}
