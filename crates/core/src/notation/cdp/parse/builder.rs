//! The open ancestors while the lines are read top to bottom.

use super::raw_attrs::Closes;
use crate::snapshot::tree::{Node, NodeKind, Tree};

/// The open ancestors while reading lines top to bottom.
#[derive(Default)]
pub(super) struct Builder {
    /// Where continued names close, found lazily (most snapshots have few such names).
    pub(super) closes: Closes,
    stack: Vec<(usize, usize)>,
    last_element: Option<usize>,
    /// The attribute starts of the last name read on its line (`raw_name_close_keeping`),
    /// reused from line to line.
    pub(super) attr_starts: Vec<usize>,
}

impl Builder {
    pub(super) fn parent_for(&mut self, depth: usize) -> Option<usize> {
        while self.stack.last().is_some_and(|&(d, _)| d >= depth) {
            self.stack.pop();
        }
        self.stack.last().map(|&(_, id)| id)
    }

    pub(super) fn add_element<'a>(
        &mut self,
        tree: &mut Tree<'a>,
        node: Node<'a>,
        depth: usize,
    ) -> usize {
        let parent = self.parent_for(depth);
        let id = tree.push(node, parent);
        self.stack.push((depth, id));
        self.last_element = Some(id);
        id
    }

    /// [`Builder::add_element`] of an element read from `raw`, left to be filled in place.
    pub(super) fn open_element<'a, 't>(
        &mut self,
        tree: &'t mut Tree<'a>,
        raw: &'a str,
        depth: usize,
    ) -> Option<&'t mut Node<'a>> {
        let id = self.add_element(tree, Node::new(NodeKind::Element, Some(raw)), depth);
        tree.nodes.get_mut(id)
    }

    pub(super) fn add_leaf<'a>(&mut self, tree: &mut Tree<'a>, node: Node<'a>, depth: usize) {
        let parent = self.parent_for(depth);
        tree.push(node, parent);
    }

    /// Unreadable lines go beside the last node read, without changing the open ancestors.
    pub(super) fn add_verbatim<'a>(&mut self, tree: &mut Tree<'a>, raw: &'a str) {
        tree.unreadable_lines += 1;
        let parent = self
            .last_element
            .and_then(|id| tree.nodes.get(id))
            .and_then(|n| n.parent);
        tree.push(Node::new(NodeKind::Verbatim, Some(raw)), parent);
    }
}
