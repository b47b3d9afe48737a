//! What the proxy knows of one upstream MCP server, as one table (its folder under `notation/`
//! fills it in): its tools, where its result texts hold a snapshot, the notation of its
//! snapshots, and the request arguments that carry a uid. `crate::notation::UPSTREAMS` lists
//! the tables: a new snapshot format is its folder plus a line there.

use crate::snapshot::{FilteredSnapshot, Notation};

/// One upstream's table.
pub struct Upstream {
    /// Its name, for messages.
    pub name: &'static str,
    /// Whether a tool is this upstream's, by its name.
    pub owns_tool: fn(&str) -> bool,
    /// Its tools whose results the filters read (`crate::result::tools::is_content_heavy`).
    pub content_heavy_tools: &'static [&'static str],
    /// The tool that answers with the page's snapshot (the proxy caches what it returns).
    pub snapshot_tool: &'static str,
    /// The notation of its snapshots, and whether a snapshot body is in it.
    pub notation: &'static (dyn Notation + Sync),
    pub is_body: fn(&str) -> bool,
    /// Where a result text holds its snapshot.
    pub sections: Sections,
    /// Its results may carry the snapshot's tree in `structuredContent.snapshot`
    /// (`crate::notation::cdp::structured`), read instead of the text.
    pub structured_snapshot: bool,
    /// Request arguments whose string value is a uid, and lists of objects whose `uid` is one:
    /// rewritten where the notation's uids renumber (`crate::uid_requests`).
    pub uid_args: &'static [&'static str],
    pub uid_lists: &'static [&'static str],
}

/// How an upstream's result text is laid out.
pub enum Sections {
    /// The `## …` sections of `crate::result::sections`: a snapshot, network and console lists,
    /// a script's result, each with its filter.
    Shared,
    /// Sections of its own, of which only the snapshot is filtered: `body`, the snapshot's body
    /// in a text; `filter`, the text with that body filtered by the function given (`None`: no
    /// snapshot, or nothing changed), and the uids it hid.
    Own {
        body: fn(&str) -> Option<&str>,
        filter: FilterOwn,
    },
}

/// `Sections::Own`'s filter of a result text.
pub type FilterOwn = fn(&str, &mut dyn FnMut(&str) -> FilteredSnapshot) -> Option<(String, usize)>;
