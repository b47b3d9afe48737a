//! The tokens of the light notation that its parser reads and its writer writes.

/// First characters of our legend line: the parser reads a text starting with it as light
/// notation.
pub const LEGEND_TAG: &str = "#snapshot-filter";

/// Between siblings sharing a line. After a closing quote `"|` is one token, where `" ` and the
/// uid's own digits would be two.
pub const SIBLING_SEPARATOR: char = '|';
/// After a node whose children all share its line.
pub const CHILDREN_SEPARATOR: &str = " > ";
