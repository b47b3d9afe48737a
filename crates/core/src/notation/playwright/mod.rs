//! Playwright MCP (`@playwright/mcp`) results: the ARIA snapshot in YAML under `### Snapshot`.
//! Parsed into the same [`Tree`] as chrome-devtools-mcp
//! snapshots (refs are the uids), thinned by the same passes at the same level parameters, and
//! written back as Playwright-style YAML (`writer` documents the notation) through the core's
//! one traversal. Everything in the result but the YAML body passes byte for byte
//! (`sections`). This module holds the parser (`parse`, `yaml`) and the line writer.
//!
//! [`Tree`]: crate::snapshot::tree::Tree

pub mod parse;
mod refs;
pub mod sections;
mod table;
#[cfg(test)]
mod tests;
pub mod writer;
pub mod yaml;

use crate::notation::escape::escape_into;
use crate::notation::upstream::{Sections, Upstream};
use crate::snapshot::render::Rendered;
use crate::snapshot::tree::Tree;
use crate::snapshot::{filter_with, FilteredSnapshot, Notation, SnapshotOptions};

/// Playwright's ARIA snapshot YAML.
#[derive(Debug, Clone, Copy, Default)]
pub struct Playwright;

impl Notation for Playwright {
    fn parse<'a>(&self, text: &'a str, implied: &'a mut Vec<String>) -> Tree<'a> {
        parse::parse(text, implied)
    }

    fn render(&self, tree: &Tree<'_>, lossy: bool) -> Rendered {
        writer::render(tree, lossy)
    }

    /// Every ref written; `lossy` changes nothing here (the markers say what hid).
    fn render_siblings(&self, tree: &Tree<'_>, roots: &[usize], _lossy: bool) -> String {
        writer::render_siblings(tree, roots).text
    }

    fn hit_line(&self, tree: &Tree<'_>, id: usize) -> String {
        writer::element_line(tree, id)
    }

    /// Search paths quote names as chrome-devtools-mcp hits do: one path form for both.
    fn quote_name(&self, out: &mut String, name: &str) {
        escape_into(out, name);
    }

    fn comment(&self, text: &str) -> String {
        format!("{} {text}", parse::LEGEND_TAG)
    }

    fn render_delta(&self, tree: &Tree<'_>, first_line: &str) -> Rendered {
        writer::render_delta(tree, first_line)
    }

    fn writes_table(&self, _tree: &Tree<'_>, table: &crate::snapshot::tree::Table<'_>) -> bool {
        table::rows_say_something(table)
    }
}

/// What the proxy knows of Playwright MCP (`crate::notation::upstream`).
pub static UPSTREAM: Upstream = Upstream {
    name: "Playwright MCP",
    owns_tool: is_playwright_tool,
    // `browser_snapshot` returns the YAML inline; action tools did in versions before 0.0.3x
    // (now they link a `.yml` file, and the result passes untouched).
    content_heavy_tools: &[
        "browser_snapshot",
        "browser_navigate",
        "browser_navigate_back",
        "browser_click",
        "browser_type",
        "browser_hover",
        "browser_drag",
        "browser_drop",
        "browser_select_option",
        "browser_press_key",
        "browser_fill_form",
        "browser_file_upload",
        "browser_handle_dialog",
        "browser_wait_for",
        "browser_tabs",
    ],
    snapshot_tool: "browser_snapshot",
    notation: &Playwright,
    is_body: is_yaml_snapshot,
    sections: Sections::Own {
        body: |text| sections::find_yaml_snapshot(text).map(|found| found.body),
        filter: |text, filter| filter_result_text(text, filter),
    },
    structured_snapshot: false,
    // Refs do not renumber: requests pass as they are.
    uid_args: &[],
    uid_lists: &[],
};

/// Tools of Playwright MCP are named `browser_*`.
pub fn is_playwright_tool(tool_name: &str) -> bool {
    tool_name.starts_with("browser_")
}

/// True when a snapshot body is Playwright YAML (or our YAML rendering of one) rather than the
/// chrome-devtools-mcp notation: its first line is a YAML list item or our legend comment.
pub fn is_yaml_snapshot(body: &str) -> bool {
    let first = body.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    first.starts_with(parse::LEGEND_TAG) || first.trim_start().starts_with("- ")
}

/// Filters the YAML body of a `### Snapshot` section (the lines inside the fence).
pub fn filter_yaml_snapshot(text: &str, options: &SnapshotOptions) -> FilteredSnapshot {
    filter_with(&Playwright, text, options)
}

/// Filters the snapshot inside a Playwright result's text; `None` when the text has none or
/// the filter changed nothing. `filter` filters the YAML body (the caller's: it may also keep
/// the raw body, or send a delta); returns the new text with the uids hidden.
pub fn filter_result_text(
    text: &str,
    filter: impl FnOnce(&str) -> FilteredSnapshot,
) -> Option<(String, usize)> {
    let found = sections::find_yaml_snapshot(text)?;
    if found.body.is_empty() {
        return None;
    }
    let filtered = filter(found.body);
    if filtered.text == found.body {
        return None;
    }
    let mut out =
        String::with_capacity(found.before.len() + filtered.text.len() + found.after.len() + 1);
    out.push_str(found.before);
    out.push_str(&filtered.text);
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(found.after);
    Some((out, filtered.uids_hidden))
}
