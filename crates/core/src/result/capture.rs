//! The session's side of filtering a result's snapshot (deltas, the raw body kept).

use super::ParsedTrees;
use crate::snapshot::delta::{
    filter_tree_with_deltas, filter_with_deltas, DeltaInput, Sent, SentPage,
};
use crate::snapshot::tree::OutputCap;
use crate::snapshot::tree::Tree;
use crate::snapshot::{FilteredSnapshot, SnapshotOptions};

/// The session's side of filtering a result's snapshot: in, what the agent holds of the page
/// (deltas on when given); out, the raw body (for the proxy's cache) and, with deltas, what the
/// agent holds once this result is sent.
#[derive(Debug, Default)]
pub struct SnapshotCapture<'p> {
    pub deltas: Option<DeltaInput<'p>>,
    /// The result's trees read already (the budget's ladder), else each body is parsed.
    pub trees: Option<&'p ParsedTrees<'p>>,
    /// A step of the budget's ladder that is not its last: a render of one of `trees` (without
    /// deltas) may give up here, the step then over the budget (`gave_up`).
    pub cap: Option<OutputCap>,
    pub gave_up: bool,
    /// No copy of the raw snapshot is made: the caller keeps none (no session), or this is a
    /// step of the budget's ladder after the one whose raw the ladder keeps (`budget::fit`).
    pub skip_raw: bool,
    pub raw: Option<String>,
    pub holds: Option<SentPage>,
    pub sent: Option<Sent>,
    /// Bytes of the full filtered snapshot and of what was sent instead (a delta).
    pub full_bytes: usize,
    pub sent_bytes: usize,
    /// No caller reads the figures (`filter_tool_result_json`): their token estimates are made
    /// only where the budget decides by them, and `structuredContent` is not measured; what
    /// they would say is left 0. Outputs are the same either way.
    pub tokens_unread: bool,
}

impl SnapshotCapture<'_> {
    /// Filters a snapshot body in whichever notation, as a delta where the rules allow.
    pub fn filter(&mut self, body: &str, options: &SnapshotOptions) -> FilteredSnapshot {
        let notation = crate::notation::notation_of(body);
        if !self.skip_raw {
            self.raw = Some(body.to_string());
        }
        let parsed = self.trees.and_then(|t| Some((t, t.text_tree(body)?)));
        let out = match (self.deltas, parsed) {
            (None, None) => return crate::notation::filter_snapshot(body, options),
            (None, Some((trees, mut tree))) => {
                tree.output_cap = self.cap;
                let mut out = crate::snapshot::filter_tree(notation, body, &mut tree, options);
                tree.output_cap = None;
                if tree.gave_up {
                    match self.cap {
                        Some(cap) if trees.over_after_giving_up(body, cap) => self.gave_up = true,
                        // Not sure to be over: rendered whole.
                        _ => {
                            tree.clear_marks();
                            out = crate::snapshot::filter_tree(notation, body, &mut tree, options);
                        }
                    }
                }
                return out;
            }
            (Some(input), None) => filter_with_deltas(notation, body, options, input),
            (Some(input), Some((_, mut tree))) => {
                filter_tree_with_deltas(notation, body, &mut tree, options, input)
            }
        };
        self.keep(out)
    }

    /// `filter` on a chrome-devtools-mcp tree read already (from structuredContent), as parsed;
    /// the caller keeps what the proxy tools read for it (`filter_exact_tree`).
    pub fn filter_tree(
        &mut self,
        body: &str,
        tree: &mut Tree<'_>,
        options: &SnapshotOptions,
    ) -> FilteredSnapshot {
        let cdp = &crate::notation::cdp::Cdp;
        let Some(input) = self.deltas else {
            return crate::snapshot::filter_tree(cdp, body, tree, options);
        };
        let out = filter_tree_with_deltas(cdp, body, tree, options, input);
        self.keep(out)
    }

    fn keep(&mut self, out: crate::snapshot::delta::DeltaFiltered) -> FilteredSnapshot {
        self.holds = out.holds;
        self.sent = out.sent;
        self.full_bytes = out.full_bytes;
        self.sent_bytes = out.filtered.text.len();
        out.filtered
    }
}
