//! Retrieval on Playwright snapshots: the shared `snapshot::retrieve` functions detect the YAML
//! format and call these for parsing and writing lines.

use super::parse::parse;
use super::render::{element_line, render_subtree};
use crate::snapshot::tree::Tree;

/// Parses a YAML body; `implied` holds implied refs the tree borrows.
pub fn parse_tree<'a>(raw: &'a str, implied: &'a mut Vec<String>) -> Tree<'a> {
    parse(raw, implied)
}

/// The subtree under `root` in Playwright YAML, every ref written.
pub fn subtree_text(tree: &Tree<'_>, root: usize) -> String {
    render_subtree(tree, root).text
}

/// One node's YAML line, for a search hit.
pub fn hit_line(tree: &Tree<'_>, id: usize) -> String {
    element_line(tree, id)
}
