//! Snapshot deltas: a later snapshot of a page the agent already holds, written as what changed
//! against what was last *sent* (the filtered tree at the level, not the raw one), in the same
//! notation as a full snapshot, through the one traversal (`render`).
//!
//! What is kept of a sent snapshot is a fingerprint ([`SentPage`]): per node its key (the uid;
//! uids are stable across snapshots of a page) and a hash of its own line; per *unit* of a
//! rendered frame (a visible node with its shown subtree, or one run of hidden siblings, as the
//! traversal cuts them) a hash of everything the unit writes, the frame it sat in and its
//! place there. Hashes are built bottom-up, so a changed text, name, role, attribute, state,
//! order, or a child added or removed anywhere changes every unit above it: a unit is
//! *unchanged* only when its key and hash match a unit of the same frame in what was sent.
//!
//! A delta writes, frame by frame from the roots, each run of unchanged units (consecutive in
//! both snapshots) as one line naming its uids and the expand call, every other unit as a full
//! snapshot would, and opens the frames of the visible ones among them (their ancestors are thus
//! the context of every change). Nodes that were sent and are gone are counted, with their
//! uids, in one line at the end of the frame they were in.
//!
//! The short form ("unchanged since") goes only when the hash of the whole shown tree equals the
//! one sent (a move or a reorder changes no node's own line but changes it). The header counts
//! shown nodes: added, changed, moved (another parent, or out of their siblings' sent order: the
//! nodes outside one longest run kept in order), no longer hidden, removed; changes behind a
//! marker (hidden runs, layout nodes dropped) are named with their uids and the call that shows
//! them. Frames behind a marker are not held: what the agent never saw is never "unchanged".

use super::identity::Shape;
use super::tree::{NodeKind, Table, Tree};
use super::{apply_passes, filter_tree, FilteredSnapshot, Notation, SnapshotOptions};
use crate::level::Level;

mod fingerprint;
mod mark;

pub use fingerprint::{Fingerprint, FullReason, SentPage, TableView};
use mark::identity_keys;
pub use mark::{mark, mark_with, DeltaCounts};

/// Deltas sent in a row before a full snapshot again: a client that drops old tool results
/// (Claude Code does in long sessions) is never more than this many snapshots from a whole page.
pub const MAX_DELTAS_IN_ROW: u32 = 8;

/// A delta is sent only when it is at most this share of the full snapshot (in bytes); above,
/// the full snapshot costs little more and reads without the earlier one. Picked by measurement
/// (`cargo run --release --example delta_shares` over the corpus's recorded sessions).
pub const MAX_DELTA_SHARE: f64 = 0.7;

/// What the agent holds of a page and which snapshot of it comes now.
#[derive(Debug, Clone, Copy)]
pub struct DeltaInput<'p> {
    /// What was sent last of this page, `None` when nothing is held (first, or evicted).
    pub sent: Option<&'p SentPage>,
    /// What was sent of it before that, kept where uids renumber: a page the last snapshot
    /// covered (a modal dialog's) is matched against it.
    pub earlier: Option<&'p SentPage>,
    /// The number of the snapshot being filtered (1 for the page's first).
    pub number: u64,
    /// Nothing is held because the upstream restarted or reconnected since the page's last
    /// snapshot (the full snapshot's header says so, rather than "first").
    pub upstream_reset: bool,
}

/// How a snapshot was sent with deltas on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sent {
    Delta { against: u64, counts: DeltaCounts },
    Full(FullReason),
}

/// A snapshot filtered with deltas on: the text sent, what the agent now holds (`None` below
/// `moderate`; a snapshot sent as it came holds the filtered tree's nodes and more), and the
/// bytes the full filtered snapshot would have taken.
#[derive(Debug, Clone)]
pub struct DeltaFiltered {
    pub filtered: FilteredSnapshot,
    pub holds: Option<SentPage>,
    pub sent: Option<Sent>,
    pub full_bytes: usize,
    /// Bytes of the delta when one was written, sent or not (what `MAX_DELTA_SHARE` judged).
    pub delta_bytes: Option<usize>,
}

/// `filter_with`, sending a delta against what the agent holds when the rules allow (see the
/// module doc and the README): full when nothing is held, the document is new, `MAX_DELTAS_IN_ROW`
/// deltas were sent in a row, or the delta is over `MAX_DELTA_SHARE` of the full snapshot.
pub fn filter_with_deltas<N: Notation + ?Sized>(
    notation: &N,
    text: &str,
    options: &SnapshotOptions,
    input: DeltaInput<'_>,
) -> DeltaFiltered {
    let mut implied = Vec::new();
    let mut tree = notation.parse(text, &mut implied);
    filter_tree_with_deltas(notation, text, &mut tree, options, input)
}

/// `filter_with_deltas` on a tree read already (from upstream's structured tree of `text`), as
/// parsed (`Tree::clear_marks`); the tree is left marked.
pub fn filter_tree_with_deltas<N: Notation + ?Sized>(
    notation: &N,
    text: &str,
    tree: &mut Tree<'_>,
    options: &SnapshotOptions,
    input: DeltaInput<'_>,
) -> DeltaFiltered {
    let passthrough = |filtered: FilteredSnapshot| DeltaFiltered {
        full_bytes: filtered.text.len(),
        filtered,
        holds: None,
        sent: None,
        delta_bytes: None,
    };
    if options.level < Level::Moderate || tree.nodes.is_empty() {
        return passthrough(filter_tree(notation, text, tree, options));
    }
    // Indexed as `filter_tree` indexes them: markers and unchanged lines name a repeated uid
    // only where it finds the node (`Tree::uid_finds`), which reads this index.
    let uids_in = tree.index_uids();
    apply_passes(tree, options);
    let full = notation.render(tree, true);
    let writes = |t: &Table<'_>| notation.writes_table(tree, t);
    // Where uids renumber, nodes are keyed by what the agent holds of them (`identity`), and
    // the delta goes against the held snapshot that holds more of the page.
    let shape = notation.uids_renumber().then(|| Shape::of(tree));
    let (against, fp) = match (&shape, input.sent) {
        (Some(shape), Some(sent)) => {
            let (against, keys) = identity_keys(tree, shape, sent, input.earlier);
            let view = TableView::of(tree, writes, &keys);
            (Some(against), Fingerprint::of_with(tree, view, &keys))
        }
        _ => (
            input.sent,
            Fingerprint::of_with(tree, TableView::of(tree, writes, &[]), &[]),
        ),
    };
    let input = DeltaInput {
        sent: against,
        ..input
    };
    // Filtering never grows a snapshot: where it would, a whole page goes as it came.
    let as_came = full.text.len() >= text.len();
    let full_of = |reason: FullReason, deltas_in_row: u32| {
        let mut out = notation.comment(&full_header(input.number, reason));
        out.push('\n');
        out.push_str(&full.text);
        (out, deltas_in_row)
    };
    let sent_as;
    let mut delta_bytes = None;
    let (text_out, deltas_in_row) = match input.sent {
        None => {
            let reason = if input.upstream_reset {
                FullReason::UpstreamReset
            } else {
                FullReason::First
            };
            sent_as = Some(Sent::Full(reason));
            full_of(reason, 0)
        }
        Some(prev) if fp.is_new_document(tree, prev) => {
            sent_as = Some(Sent::Full(FullReason::Navigated));
            full_of(FullReason::Navigated, 0)
        }
        Some(prev) if prev.deltas_in_row >= MAX_DELTAS_IN_ROW => {
            sent_as = Some(Sent::Full(FullReason::InRow));
            full_of(FullReason::InRow, 0)
        }
        Some(prev) => {
            let counts = mark_with(tree, &fp, prev, notation.writes_table_deltas());
            let mut header_text = delta_header(input.number, prev.number, &counts);
            if let Some(marks) = tree.delta.as_deref() {
                header_text.push_str(&marks.behind);
            }
            let header = notation.comment(&header_text);
            let delta = if counts.is_empty() {
                let mut short = header;
                if tree.trailing_newline {
                    short.push('\n');
                }
                short
            } else {
                shorter_delta(notation, tree, &fp, prev, &header)
            };
            delta_bytes = Some(delta.len());
            if delta.len() as f64 > MAX_DELTA_SHARE * full.text.len() as f64 {
                sent_as = Some(Sent::Full(FullReason::NotSmaller));
                full_of(FullReason::NotSmaller, 0)
            } else {
                sent_as = Some(Sent::Delta {
                    against: prev.number,
                    counts,
                });
                (delta, prev.deltas_in_row + 1)
            }
        }
    };
    let mut holds = fp.sent_page(tree, input.number, deltas_in_row);
    holds.shape = shape;
    if as_came && matches!(sent_as, Some(Sent::Full(_))) {
        // The agent then holds every node of the filtered tree and more: the page's next
        // snapshot is a delta against it all the same.
        let markers = tree
            .nodes
            .iter()
            .filter(|n| n.kind == NodeKind::Marker)
            .count();
        return DeltaFiltered {
            holds: Some(holds),
            ..passthrough(FilteredSnapshot {
                text: text.to_string(),
                uids_in,
                uids_shown: uids_in,
                uids_hidden: 0,
                markers,
            })
        };
    }
    DeltaFiltered {
        filtered: FilteredSnapshot {
            text: text_out,
            uids_in,
            uids_shown: full.uids_shown,
            uids_hidden: full.uids_hidden,
            markers: full.markers,
        },
        holds: Some(holds),
        sent: sent_as,
        full_bytes: full.text.len(),
        delta_bytes,
    }
}

/// The delta of a marked tree: with its changed tables written row by row, or, when that is
/// longer (a table's header costs more than a few changed nodes), marked again with their rows
/// as nodes (the tree is left marked as the delta returned).
fn shorter_delta<N: Notation + ?Sized>(
    notation: &N,
    tree: &mut Tree<'_>,
    fp: &Fingerprint,
    sent: &SentPage,
    header: &str,
) -> String {
    let with_tables = notation.render_delta(tree, header).text;
    if tree.delta.as_deref().is_none_or(|d| d.tables.is_empty()) {
        return with_tables;
    }
    let marks = tree.delta.take();
    let unchanged: Vec<bool> = tree.nodes.iter().map(|n| n.unchanged).collect();
    for node in &mut tree.nodes {
        node.unchanged = false;
    }
    mark_with(tree, fp, sent, false);
    let as_nodes = notation.render_delta(tree, header).text;
    if as_nodes.len() < with_tables.len() {
        return as_nodes;
    }
    tree.delta = marks;
    for (node, was) in tree.nodes.iter_mut().zip(unchanged) {
        node.unchanged = was;
    }
    with_tables
}

/// The header line of a delta (without the notation's comment tag).
pub fn delta_header(number: u64, against: u64, counts: &DeltaCounts) -> String {
    if counts.is_empty() {
        return format!(
            "snapshot {number}: unchanged since snapshot {against}; expand_snapshot without uid shows it"
        );
    }
    let mut moved = String::new();
    if counts.moved > 0 {
        moved.push_str(&format!(", {} moved", counts.moved));
    }
    if counts.revealed > 0 {
        moved.push_str(&format!(", {} no longer hidden", counts.revealed));
    }
    format!(
        "snapshot {number}: delta against snapshot {against}, {} added, {} changed{moved}, {} removed; \"… unchanged\" lines: as in snapshot {against} (whole page: expand_snapshot without uid)",
        counts.added, counts.changed, counts.removed
    )
}

/// The header line of a full snapshot sent while deltas are on.
pub fn full_header(number: u64, reason: FullReason) -> String {
    format!("snapshot {number}, full: {}", reason.text())
}
