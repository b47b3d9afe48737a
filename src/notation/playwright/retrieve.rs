//! Retrieval on Playwright snapshots: the shared `snapshot::retrieve` functions detect the YAML
//! format and call these for parsing and writing lines.

use super::parse::parse;
use super::writer::{element_line, render_siblings};
use crate::snapshot::tree::Tree;

/// Parses a YAML body; `implied` holds implied refs the tree borrows.
pub fn parse_tree<'a>(raw: &'a str, implied: &'a mut Vec<String>) -> Tree<'a> {
    parse(raw, implied)
}

/// The subtrees under `roots` (siblings, in order) in Playwright YAML, every ref written.
pub fn siblings_text(tree: &Tree<'_>, roots: &[usize]) -> String {
    render_siblings(tree, roots).text
}

/// One node's YAML line, for a search hit.
pub fn hit_line(tree: &Tree<'_>, id: usize) -> String {
    element_line(tree, id)
}
