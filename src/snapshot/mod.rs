//! Accessibility snapshots as chrome-devtools-mcp 1.11 prints them (`## Latest page snapshot`):
//! parsed into a [`tree::Tree`], thinned by the passes of the level, written back in the light
//! notation with markers for whatever was hidden (see `marker`), and retrievable from the raw
//! text (`retrieve`).
//!
//! - `off`: the text unchanged.
//! - `light` (lossless): `uid=` dropped, names escaped, childless siblings (texts, links, …)
//!   written on one line one after the other, attribute values bare unless they hold a space,
//!   quote or backslash, urls relative to the page, capability words without state dropped; a
//!   one-line legend on top. Every uid, role, name and value reads back from the output.
//! - `moderate`: light, plus layout nodes dropped, peripheral landmarks summarised, repeated
//!   records (grid rows flattened into siblings) cut after 5 behind one marker, options of a
//!   collapsed combobox/listbox beyond 4 reduced to the selected one, long names cut, text per
//!   container and runs of similar siblings capped, depth and node caps. A hidden run of leaves
//!   shorter than its marker is shown instead.
//! - `aggressive`: moderate with tighter limits (2 records, 2 options, 120 nodes, …), focus on
//!   `main`, and the few plain leaves between two hidden runs hidden with them (one marker per
//!   section of text instead of one per gap between links).
//!
//! Consecutive hidden siblings always share one marker, whatever hid them; the records form
//! of the marker is used when the run is exactly one run of records.
//! Markers name the smallest thing that gives back what they hide: the hidden siblings
//! themselves (`expand_snapshot uid=FIRST until=LAST`), or an ancestor when they are not
//! siblings in the raw tree.

mod collapse;
pub mod escape;
pub mod marker;
pub mod params;
pub mod parse;
mod prune;
mod records;
pub mod render;
pub mod retrieve;
pub(crate) mod roles;
pub mod structured;
#[cfg(test)]
mod tests;
pub mod tree;
#[cfg(test)]
mod trust_tests;
mod url;

use crate::level::Level;

pub use params::SnapshotLimits;

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

/// Visible siblings between two hidden runs that aggressive hides to write one marker, not two.
const AGGRESSIVE_MAX_GAP: usize = 3;

/// Applies the lossy passes of `options` to a parsed tree (nothing at `off`/`light`).
pub fn apply_passes(tree: &mut tree::Tree<'_>, options: &SnapshotOptions) {
    if options.level < Level::Moderate {
        return;
    }
    let limits = &options.limits;
    let aggressive = options.level >= Level::Aggressive;
    let facts = prune::Facts::new(tree);
    prune::drop_decorative(tree);
    for node in tree.nodes.iter_mut() {
        node.drop_url = roles::url_is_droppable(node);
    }
    if aggressive {
        prune::focus_main(tree, &facts);
    }
    prune::summarise_landmarks(tree, &facts, aggressive);
    records::collapse_records(tree, limits.max_records);
    records::summarise_options(tree, limits.max_options);
    collapse::cut_long_names(tree, limits.max_text_length);
    collapse::budget_text(tree, limits.max_text_per_container);
    collapse::collapse_similar(tree, &facts, limits.max_similar_siblings, !aggressive);
    prune::cap_depth(tree, limits.max_depth);
    prune::cap_nodes(tree, limits.max_nodes);
    if aggressive {
        prune::coalesce_hidden_runs(tree, AGGRESSIVE_MAX_GAP);
    }
    prune::show_short_hidden_runs(tree);
}

/// Filters the body of a `## Latest page snapshot` section (the lines after the header).
/// A Playwright YAML body goes to `crate::playwright` (same passes, its own notation).
pub fn filter_snapshot(text: &str, options: &SnapshotOptions) -> FilteredSnapshot {
    if crate::playwright::is_yaml_snapshot(text) {
        return crate::playwright::filter_yaml_snapshot(text, options);
    }
    filter_parsed(text, parse::parse(text), options, render::render)
}

/// The level's passes over a parsed snapshot, written by `render` (the notation of its
/// format). The input comes back unchanged at `off`, and whenever the output would not be
/// shorter (tiny pages, text filtered already): filtering never grows a snapshot.
pub(crate) fn filter_parsed(
    text: &str,
    mut tree: tree::Tree<'_>,
    options: &SnapshotOptions,
    render: fn(&tree::Tree<'_>, bool) -> render::Rendered,
) -> FilteredSnapshot {
    let uids_in = tree.distinct_uid_count();
    let unchanged = |markers| FilteredSnapshot {
        text: text.to_string(),
        uids_in,
        uids_shown: uids_in,
        uids_hidden: 0,
        markers,
    };
    if options.level == Level::Off || tree.nodes.is_empty() {
        return unchanged(0);
    }
    apply_passes(&mut tree, options);
    let rendered = render(&tree, options.level >= Level::Moderate);
    if rendered.text.len() >= text.len() {
        let markers = tree
            .nodes
            .iter()
            .filter(|n| n.kind == tree::NodeKind::Marker)
            .count();
        return unchanged(markers);
    }
    FilteredSnapshot {
        text: rendered.text,
        uids_in,
        uids_shown: rendered.uids_shown,
        uids_hidden: rendered.uids_hidden,
        markers: rendered.markers,
    }
}
