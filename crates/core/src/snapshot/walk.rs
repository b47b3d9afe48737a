//! The one walk of "the visible children of every container" that the lossy passes and the
//! renderers share: a dropped node's line is not written, so its children take its place (at
//! any depth). Each pass keeps only its own rule:
//!
//! ```text
//! let mut containers = Containers::new().skip_hidden();
//! while let Some((parent, items)) = containers.next(tree) {
//!     // items: the visible children of `parent`, in order; `tree` is free to mutate here.
//! }
//! ```

use super::tree::Tree;

/// `children` in order, each dropped node replaced by its own children (at any depth); the
/// dropped nodes passed over go to `dropped` when given (the renderers name them in a marker).
/// `out` and `stack` are cleared first.
pub(crate) fn promote_dropped_into(
    tree: &Tree<'_>,
    children: &[usize],
    out: &mut Vec<usize>,
    stack: &mut Vec<usize>,
    mut dropped: Option<&mut Vec<usize>>,
) {
    out.clear();
    stack.clear();
    // The children before the first dropped one are items as they are, copied at once: most
    // containers have no dropped child, and the passes walk every container.
    let opens = |c: usize| match tree.nodes.get(c) {
        Some(n) => n.dropped && !n.hidden,
        // Not a node: passed over below.
        None => true,
    };
    let plain = children
        .iter()
        .position(|&c| opens(c))
        .unwrap_or(children.len());
    let (items, rest) = children.split_at(plain);
    out.extend_from_slice(items);
    stack.extend(rest.iter().rev().copied());
    while let Some(c) = stack.pop() {
        let Some(node) = tree.nodes.get(c) else {
            continue;
        };
        if node.dropped && !node.hidden {
            if let Some(dropped) = dropped.as_deref_mut() {
                dropped.push(c);
            }
            stack.extend(tree.children(c).iter().rev().copied());
        } else {
            out.push(c);
        }
    }
}

/// The children of `id` as rendered (dropped nodes replaced by their children).
pub fn visible_children(tree: &Tree<'_>, id: usize) -> Vec<usize> {
    let mut out = Vec::new();
    promote_dropped_into(tree, tree.children(id), &mut out, &mut Vec::new(), None);
    out
}

/// Every container in document order with its visible children: a lending iterator (`next`
/// borrows the tree only for the call, so a pass mutates it between two containers). A
/// container is a node with children that is not dropped (its children are some other
/// container's). The buffers are reused: the passes visit every node, and allocating per
/// container showed in the profile.
#[derive(Debug, Default)]
pub struct Containers {
    next: usize,
    skip_hidden: bool,
    min_children: usize,
    items: Vec<usize>,
    stack: Vec<usize>,
}

impl Containers {
    pub fn new() -> Self {
        Containers {
            min_children: 1,
            ..Containers::default()
        }
    }

    /// Hidden containers are passed over too (their subtree is behind a marker already).
    pub fn skip_hidden(mut self) -> Self {
        self.skip_hidden = true;
        self
    }

    /// Containers with fewer raw children than `n` are passed over (a cheap pre-check: the
    /// visible children can still be fewer).
    pub fn min_children(mut self, n: usize) -> Self {
        self.min_children = n.max(1);
        self
    }

    /// The next container and its visible children.
    pub fn next(&mut self, tree: &Tree<'_>) -> Option<(usize, &[usize])> {
        while let Some(node) = tree.nodes.get(self.next) {
            let parent = self.next;
            self.next += 1;
            let children = tree.children(parent);
            if node.dropped
                || (self.skip_hidden && node.hidden)
                || children.len() < self.min_children
            {
                continue;
            }
            promote_dropped_into(tree, children, &mut self.items, &mut self.stack, None);
            return Some((parent, &self.items));
        }
        None
    }
}
