//! Reads snapshot text into a [`Tree`]: the chrome-devtools-mcp 1.11 notation (`uid=… role
//! "name" attrs`, names printed raw with `"` and newlines) and our own light notation (marked by
//! the legend line, names escaped, markers). Indentation gives the depth; an explicit stack
//! builds the tree so any depth works. Nothing is dropped: unreadable lines become `Verbatim`
//! nodes and every node keeps its raw text.
//!
//! The raw notation is ambiguous wherever page text holds a quote and a line break: a textarea
//! value or a `<pre>` text can go on with lines such as `    uid=1_2 button "Keep my account
//! safe"`. Page text must never become structure, so a `uid=` line is believed only when the
//! snapshot allows it (see [`UidLines`]): its uid is not another node's (upstream repeats one uid,
//! on nodes without a DOM node: text, `InlineTextBox`, `ignored`, images), it keeps the order in
//! which upstream numbers the nodes of a snapshot (`<snapshot>_<n>`, `n` counting up in document
//! order; nodes kept from an earlier snapshot keep that one's order), its prefix is not older
//! than the root's, and it is at most one level deeper than the node before. A DOM node moved
//! keeps its uid and breaks that order: such lines are believed where the grammar leaves no
//! string open (see [`believe_moved_nodes`](uid_lines::believe_moved_nodes)). A line that is not believed, like any line without `uid=`, is
//! text of the string left open before it: the value or name of the last believed node. Values
//! of the page-text attributes (`value`, `description`, …) may hold quotes and line breaks; the
//! attribute list after them is checked against what upstream prints (sorted keys).

mod builder;
mod light_line;
mod raw_attrs;
mod raw_line;
mod scan;
mod uid_lines;

use super::syntax::LEGEND_TAG;
use crate::snapshot::tree::Tree;
use builder::Builder;
use light_line::parse_light_line;
pub(super) use raw_attrs::is_key;
pub use raw_attrs::DEVTOOLS_SELECTED;
use raw_line::parse_raw_line;
use scan::LineIndex;
#[cfg(test)]
pub(super) use scan::{COMPLETE_ASKED, SCANNED};
use uid_lines::UidLines;

/// Parses a snapshot body (the lines after `## Latest page snapshot`).
pub fn parse(text: &str) -> Tree<'_> {
    let mut tree = Tree {
        trailing_newline: text.ends_with('\n'),
        ..Tree::default()
    };
    let body = text.strip_suffix('\n').unwrap_or(text);
    if body.is_empty() && text.is_empty() {
        return tree;
    }
    let lines = LineIndex::new(text, body);
    // About one node a line: no regrowth of the arena on big pages.
    tree.reserve(lines.len());
    let mut builder = Builder::default();
    let mut i = 0;
    // The next `uid=` line the scan read (lines are read in order).
    let mut next_uid_line = 0;
    if lines.line(0).is_some_and(|l| l.starts_with(LEGEND_TAG)) {
        tree.light_notation = true;
        i = 1;
    }
    let believed = if tree.light_notation {
        UidLines::default()
    } else {
        UidLines::scan(&lines)
    };
    while i < lines.len() {
        let consumed = if tree.light_notation {
            parse_light_line(&mut tree, &mut builder, &lines, i)
        } else {
            let found = believed.found.get(next_uid_line..).unwrap_or(&[]);
            let skip = found.iter().take_while(|f| (f.line as usize) < i).count();
            next_uid_line += skip;
            let uid_line = found.get(skip).filter(|f| f.line as usize == i);
            parse_raw_line(&mut tree, &mut builder, &lines, &believed, i, uid_line)
        };
        i += consumed.max(1);
    }
    tree.seal();
    tree
}
