//! The tokens of the light notation that its parser reads and its writer writes.

/// First characters of our legend line: the parser reads a text starting with it as light
/// notation.
pub const LEGEND_TAG: &str = "#snapshot-filter";

/// Between siblings sharing a line. After a closing quote `"|` is one token, where `" ` and the
/// uid's own digits would be two.
pub const SIBLING_SEPARATOR: char = '|';
/// After a node whose children all share its line.
pub const CHILDREN_SEPARATOR: &str = " > ";

/// `DIGITS_DIGITS`.
pub(super) fn is_uid(token: &str) -> bool {
    let bytes = token.as_bytes();
    let Some(sep) = bytes.iter().position(|&c| !c.is_ascii_digit()) else {
        return false;
    };
    let (a, b) = bytes.split_at(sep);
    match b.split_first() {
        Some((b'_', b)) => !a.is_empty() && !b.is_empty() && b.iter().all(|c| c.is_ascii_digit()),
        _ => false,
    }
}
