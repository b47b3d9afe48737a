//! chrome-devtools-mcp's snapshot text (`## Latest page snapshot`) and our light notation of
//! it: its parser (`parse`), its line writer (`writer`) and the tokens both share (`syntax`);
//! names and cells are escaped as in Playwright's (`crate::notation::escape`).
//!
//! `light` (lossless): `uid=` dropped, names escaped, childless siblings (texts, links, …)
//! written on one line one after the other, attribute values bare unless they hold a space,
//! quote or backslash, urls relative to the page, capability words without state dropped; a
//! one-line legend on top. Every uid, role, name and value reads back from the output.

pub mod parse;
pub mod structured;
pub mod syntax;
pub(crate) mod table;
#[cfg(test)]
pub(crate) mod tests;
#[cfg(test)]
mod trust_tests;
mod url;
pub mod writer;

use crate::notation::upstream::{Sections, Upstream};
use crate::snapshot::render::Rendered;
use crate::snapshot::tree::Tree;
use crate::snapshot::Notation;

/// What the proxy knows of chrome-devtools-mcp (`crate::notation::upstream`): every tool no
/// other upstream claims is taken for its.
pub static UPSTREAM: Upstream = Upstream {
    name: "chrome-devtools-mcp",
    owns_tool: |_| true,
    // chrome-devtools-mcp 1.11 tools whose text can carry a snapshot, a network or console
    // list, or a script result. Action tools carry a snapshot only with `includeSnapshot: true`
    // (the tools whose schema has that argument), but filtering a result without one costs a
    // section split and changes nothing. Page tools (`navigate_page`, `new_page`,
    // `select_page`, `close_page`) and `type_text` / `handle_dialog` print only a message and
    // `## Pages`: their results never cross.
    content_heavy_tools: &[
        "take_snapshot",
        "wait_for",
        "click",
        "click_at",
        "hover",
        "fill",
        "fill_form",
        "drag",
        "upload_file",
        "press_key",
        "list_network_requests",
        "list_console_messages",
        "evaluate_script",
    ],
    snapshot_tool: "take_snapshot",
    notation: &Cdp,
    is_body: |_| true,
    sections: Sections::Shared,
    structured_snapshot: true,
    uid_args: &["uid", "from_uid", "to_uid"],
    uid_lists: &["elements", "args"],
};

/// The chrome-devtools-mcp notation (and our light notation of it, which its parser reads).
#[derive(Debug, Clone, Copy, Default)]
pub struct Cdp;

impl Notation for Cdp {
    fn parse<'a>(&self, text: &'a str, _implied: &'a mut Vec<String>) -> Tree<'a> {
        parse::parse(text)
    }

    fn render(&self, tree: &Tree<'_>, lossy: bool) -> Rendered {
        writer::render(tree, lossy)
    }

    fn render_siblings(&self, tree: &Tree<'_>, roots: &[usize], lossy: bool) -> String {
        writer::render_siblings(tree, roots, lossy).text
    }

    fn hit_line(&self, tree: &Tree<'_>, id: usize) -> String {
        let mut line = String::new();
        writer::write_element_line(&mut line, tree, id);
        line
    }

    fn quote_name(&self, out: &mut String, name: &str) {
        crate::notation::escape::escape_into(out, name);
    }

    fn comment(&self, text: &str) -> String {
        format!("{} {text}", syntax::LEGEND_TAG)
    }

    fn render_delta(&self, tree: &Tree<'_>, first_line: &str) -> Rendered {
        writer::render_delta(tree, first_line)
    }

    /// chrome-devtools-mcp keeps a node's uid only from its page's previous snapshot.
    fn uids_renumber(&self) -> bool {
        true
    }

    fn light_units_at_least(&self, tree: &Tree<'_>, enough: usize) -> usize {
        writer::light_units_at_least(tree, enough)
    }

    fn writes_table(&self, _tree: &Tree<'_>, _table: &crate::snapshot::tree::Table<'_>) -> bool {
        true
    }

    fn writes_table_deltas(&self) -> bool {
        true
    }
}
