//! Playwright's refs (`e12`, `f43e12`): how they number, which nodes our writer leaves theirs
//! implied, and the attribute that says a node has none. Read by the parser, written by the
//! writer and the table rows.

use crate::snapshot::roles;
use crate::snapshot::tree::{Node, NodeKind};

/// The attribute written on a structural node that has no ref where one would be implied.
pub const NOREF: &str = "noref";

/// A structural node: one whose ref our renderer leaves implied when it follows the previous
/// ref. Links, buttons, form controls and anything marked clickable always show theirs.
pub fn ref_implicable(node: &Node<'_>) -> bool {
    node.kind == NodeKind::Element
        && !node.role.is_empty()
        && !roles::is_interactive(node)
        && !node.attrs.iter().any(|a| {
            matches!(
                a.key,
                "cursor" | "checked" | "pressed" | "expanded" | "selected" | "active" | "disabled"
            )
        })
}

/// `f43e12` → (`f43e`, 12).
pub fn split_ref(r: &str) -> Option<(&str, u64)> {
    let digits = r.len() - r.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 || digits == r.len() || digits > 18 {
        return None;
    }
    let (prefix, number) = r.split_at(r.len() - digits);
    Some((prefix, number.parse().ok()?))
}

/// The ref after `r` in document order, if the numbering continued.
pub fn next_ref(r: &str) -> Option<String> {
    let (prefix, n) = split_ref(r)?;
    Some(format!("{prefix}{}", n + 1))
}
