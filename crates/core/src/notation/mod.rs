//! The upstream notations of an accessibility snapshot, each only its parser and its line
//! writer (`cdp`: chrome-devtools-mcp's text; `playwright`: Playwright MCP's YAML), and the
//! choice of one for a given text: the entry points below detect the notation and hand it to
//! the format-neutral core (`crate::snapshot`), which names neither. `escape`: the escaping of
//! names and cells that both notations' outputs share; `table_header`: the header line of a
//! table of records, one writer over each notation's words.

pub mod cdp;
pub mod escape;
pub mod playwright;
pub mod table_header;
pub mod upstream;

use crate::error::FilterError;
use crate::snapshot::retrieve::{self, SearchHits};
use crate::snapshot::{filter_with, FilteredSnapshot, Notation, SnapshotOptions};
use upstream::Upstream;

/// Every upstream the proxy knows, a line each (`upstream`): the first that claims a tool or
/// a snapshot body is its upstream; chrome-devtools-mcp, last, claims every one left.
pub static UPSTREAMS: [&Upstream; 2] = [&playwright::UPSTREAM, &cdp::UPSTREAM];

/// The upstream a tool is of (chrome-devtools-mcp for any tool no other claims).
pub fn upstream_of_tool(tool_name: &str) -> &'static Upstream {
    UPSTREAMS
        .iter()
        .find(|u| (u.owns_tool)(tool_name))
        .copied()
        .unwrap_or(&cdp::UPSTREAM)
}

/// The upstream a snapshot body is of: Playwright YAML (or our YAML rendering of one), else
/// chrome-devtools-mcp text (or our light notation of it).
pub fn upstream_of_body(text: &str) -> &'static Upstream {
    UPSTREAMS
        .iter()
        .find(|u| (u.is_body)(text))
        .copied()
        .unwrap_or(&cdp::UPSTREAM)
}

/// The notation a snapshot body is in (`upstream_of_body`).
pub fn notation_of(text: &str) -> &'static dyn Notation {
    upstream_of_body(text).notation
}

/// Filters a snapshot body (the lines after `## Latest page snapshot`, or inside Playwright's
/// fence), in whichever notation it is.
pub fn filter_snapshot(text: &str, options: &SnapshotOptions) -> FilteredSnapshot {
    filter_with(notation_of(text), text, options)
}

/// `snapshot::retrieve::expand_subtree` on a raw body in either notation.
pub fn expand_subtree(raw: &str, uid: &str, depth: Option<usize>) -> Result<String, FilterError> {
    retrieve::expand_subtree(notation_of(raw), raw, uid, depth)
}

/// `snapshot::retrieve::expand_range` on a raw body in either notation.
pub fn expand_range(
    raw: &str,
    from_uid: &str,
    until_uid: Option<&str>,
    depth: Option<usize>,
) -> Result<String, FilterError> {
    retrieve::expand_range(notation_of(raw), raw, from_uid, until_uid, depth)
}

/// `snapshot::retrieve::search_snapshot` on a raw body in either notation.
pub fn search_snapshot(
    raw: &str,
    query: &str,
    regex: bool,
    limit: usize,
) -> Result<SearchHits, FilterError> {
    retrieve::search_snapshot(notation_of(raw), raw, query, regex, limit)
}

#[cfg(test)]
mod reader_tests;
#[cfg(test)]
mod select_tests;
#[cfg(test)]
mod tests;
