//! Accessibility snapshots as chrome-devtools-mcp 1.11 prints them (`## Latest page snapshot`).
//!
//! SKELETON: the parser, the passes and the renderer land with the snapshot-core issue; until
//! then `filter_snapshot` returns the text unchanged.

pub mod retrieve;

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
    /// Characters of a text node or name shown before it is cut.
    pub max_text_length: usize,
}

impl SnapshotLimits {
    pub fn for_level(level: Level) -> SnapshotLimits {
        match level {
            Level::Off | Level::Light => SnapshotLimits {
                max_nodes: usize::MAX,
                max_depth: usize::MAX,
                max_similar_siblings: usize::MAX,
                max_text_length: usize::MAX,
            },
            Level::Moderate => SnapshotLimits {
                max_nodes: 1500,
                max_depth: 30,
                max_similar_siblings: 8,
                max_text_length: 300,
            },
            Level::Aggressive => SnapshotLimits {
                max_nodes: 500,
                max_depth: 20,
                max_similar_siblings: 4,
                max_text_length: 120,
            },
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotOptions {
    pub level: Level,
    pub limits: SnapshotLimits,
}

impl SnapshotOptions {
    pub fn for_level(level: Level) -> SnapshotOptions {
        SnapshotOptions {
            level,
            limits: SnapshotLimits::for_level(level),
        }
    }
}

/// What `filter_snapshot` produced, with the counts the stats and `measure` report.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FilteredSnapshot {
    pub text: String,
    /// Distinct uids in the input.
    pub uids_in: usize,
    /// Uids rendered as nodes in the output.
    pub uids_shown: usize,
    /// Uids not rendered as nodes, each named by a marker.
    pub uids_hidden: usize,
    /// Marker lines written.
    pub markers: usize,
}

/// Filters the body of a `## Latest page snapshot` section (the lines after the header).
pub fn filter_snapshot(text: &str, _options: &SnapshotOptions) -> FilteredSnapshot {
    FilteredSnapshot {
        text: text.to_string(),
        ..FilteredSnapshot::default()
    }
}
