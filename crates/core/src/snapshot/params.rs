//! The per-level parameters of the lossy passes: one table, overridable field by field through
//! `FilterOptions`. `usize::MAX` means "no limit". The token budget's defaults and the limits
//! of its steps past `aggressive` are here too.

use crate::level::Level;

/// Per-level limits of the lossy passes. One table (`for_level`), overridable field by field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotLimits {
    /// Nodes rendered at most before the rest is hidden behind markers.
    pub max_nodes: usize,
    /// Depth below which subtrees are hidden behind markers.
    pub max_depth: usize,
    /// Similar siblings shown before the run is collapsed.
    pub max_similar_siblings: usize,
    /// Similar siblings shown of a navigation outside `main` (a sidebar's links) before the run
    /// is collapsed; `usize::MAX` at `moderate`, where a navigation keeps its controls in place.
    pub max_nav_controls: usize,
    /// Characters of a text node or name shown before it is cut.
    pub max_text_length: usize,
    /// Characters of text shown per container (the text nodes of one parent) before the
    /// following text nodes are hidden.
    pub max_text_per_container: usize,
    /// Records shown whole of a run of repeated records (grid rows flattened into siblings).
    pub max_records: usize,
    /// Records inside `main` after those that show only their controls and their labels
    /// (every row stays actionable in place; their other nodes go behind one marker for the
    /// run); the records after these hide whole behind one marker. 0 at both lossy levels:
    /// on the corpus' grid and shop pages it costs more than the savings targets allow
    /// (README, "What a lossy level keeps when it must choose").
    pub max_condensed_records: usize,
    /// Options of a closed combobox or listbox shown (one line after the control); past it,
    /// the first fifth and the selected one, a marker for the rest
    /// (`records::summarise_options`).
    pub max_options: usize,
    /// Runs of records inside `main` are written as a table (every record's controls in place,
    /// one line each) showing at most this many characters of text cells per record, the
    /// shortest columns first (a status or a price before an email or a blurb); 0: no tables,
    /// records past `max_records` hide.
    pub max_table_text: usize,
}

impl SnapshotLimits {
    pub fn for_level(level: Level) -> SnapshotLimits {
        match level {
            Level::Off | Level::Light => SnapshotLimits {
                max_nodes: usize::MAX,
                max_depth: usize::MAX,
                max_similar_siblings: usize::MAX,
                max_nav_controls: usize::MAX,
                max_text_length: usize::MAX,
                max_text_per_container: usize::MAX,
                max_records: usize::MAX,
                max_condensed_records: usize::MAX,
                max_options: usize::MAX,
                max_table_text: usize::MAX,
            },
            Level::Moderate => SnapshotLimits {
                max_nodes: 1000,
                max_depth: 30,
                max_similar_siblings: 8,
                max_nav_controls: usize::MAX,
                max_text_length: 80,
                max_text_per_container: 200,
                max_records: 5,
                max_condensed_records: 0,
                max_options: 50,
                max_table_text: 20,
            },
            Level::Aggressive => SnapshotLimits {
                max_nodes: 120,
                max_depth: 20,
                max_similar_siblings: 3,
                max_nav_controls: 3,
                max_text_length: 60,
                max_text_per_container: 60,
                max_records: 2,
                max_condensed_records: 0,
                max_options: 10,
                max_table_text: 0,
            },
        }
    }
}

/// The default token budget of one result (`--max-tokens`): Claude Code refuses a tool result
/// over `MAX_MCP_OUTPUT_TOKENS`, 25,000 by default.
pub const DEFAULT_MAX_TOKENS: usize = 25_000;

/// Tokens a result's filters leave free under the budget for what the session appends after
/// them: the stats line (about 50 estimated tokens with the budget note) and the raw snapshot
/// file's line.
pub const RESERVE_TOKENS: usize = 150;

/// The default character bound of one result's text (`--max-chars`, UTF-16 code units): Claude
/// Code writes a text result over 50,000 characters to a file and shows the model a path and a
/// preview instead; under the bound every result stays inline.
pub const DEFAULT_MAX_CHARS: usize = 50_000;

/// Characters left free under the character bound for the session's lines after the filters.
pub const RESERVE_CHARS: usize = 500;

/// The token budget's step between `moderate` and `aggressive` (`lean`): a page over the
/// budget at `moderate` first gives way on what an agent acting on it needs least, keeping
/// `main`'s controls in place: each run of a navigation outside `main` collapsed after the
/// first `max_similar_siblings` (a marker names the rest), half the prose per container, and
/// the node cap scaled to the budget (`crate::result::budget`).
pub fn lean_limits() -> SnapshotLimits {
    let moderate = SnapshotLimits::for_level(Level::Moderate);
    SnapshotLimits {
        max_nav_controls: moderate.max_similar_siblings,
        max_text_per_container: moderate.max_text_per_container / 2,
        ..moderate
    }
}

/// The limits of the token budget's steps past the lossy levels (`crate::result::budget`):
/// fewer nodes and a shallower depth (whole subtrees behind one marker each), tighter script
/// and console limits. Plain numbers: the result filters set them on their own limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoarseLimits {
    pub snapshot: SnapshotLimits,
    /// evaluate_script: array items, string characters and depth shown.
    pub max_array_items: usize,
    pub max_string_chars: usize,
    pub max_script_depth: usize,
    /// Console: log messages and stack lines shown.
    pub max_log_messages: usize,
    pub max_stack_lines: usize,
}

/// The budget's steps after `aggressive`, in order: (name, limits).
pub fn coarse_steps() -> [(&'static str, CoarseLimits); 2] {
    let step = |nodes, depth, text, items, chars, script_depth, messages| CoarseLimits {
        snapshot: SnapshotLimits {
            max_nodes: nodes,
            max_depth: depth,
            max_similar_siblings: 2,
            max_nav_controls: 2,
            max_text_length: text,
            max_text_per_container: text,
            max_records: 1,
            max_condensed_records: 0,
            max_options: 1,
            max_table_text: 0,
        },
        max_array_items: items,
        max_string_chars: chars,
        max_script_depth: script_depth,
        max_log_messages: messages,
        max_stack_lines: 1,
    };
    [
        ("coarser", step(60, 12, 40, 5, 80, 4, 5)),
        ("coarsest", step(25, 6, 30, 2, 40, 3, 2)),
    ]
}
