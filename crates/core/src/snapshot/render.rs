//! The one traversal that writes any tree, through a notation's [`LineWriter`]: it walks the
//! visible nodes in document order, gives each run of hidden siblings one marker (records or
//! plain, see `marker`), names the layout nodes dropped in each document (a root, or an
//! iframe's content) in one marker at the end of that document, and leaves every line's shape
//! to the writer.

use std::collections::BTreeMap;

use super::marker;
use super::tree::{Node, NodeKind, OutputCap, Table, TableDelta, Tree};
use super::walk::promote_dropped_into;

/// What a renderer wrote, for the stats (every notation).
#[derive(Debug, Default)]
pub struct Rendered {
    pub text: String,
    pub uids_shown: usize,
    pub uids_hidden: usize,
    pub markers: usize,
    /// The render stopped at its tree's `output_cap`: `text` is the start of the output only.
    pub gave_up: bool,
}

/// Bytes written between two looks at the cap.
const CAP_STRIDE: usize = 4096;

/// The cap and what was counted of the output so far.
struct CapCheck {
    cap: OutputCap,
    counted: usize,
    tokens: crate::tokens::TokenCount,
    units: usize,
}

impl CapCheck {
    /// Whether `text` (the output so far, of which `counted` bytes were counted before) is
    /// over the cap; looks every `CAP_STRIDE` bytes.
    fn over(&mut self, text: &str) -> bool {
        if text.len() < self.counted + CAP_STRIDE {
            return false;
        }
        // `counted` was the text's length: a character boundary.
        let new = text.get(self.counted..).unwrap_or_default();
        self.tokens.add(new.as_bytes());
        self.units += crate::tokens::utf16_len(new);
        self.counted = text.len();
        self.tokens.tokens() > self.cap.tokens || self.units > self.cap.chars
    }
}

pub fn push_indent(out: &mut String, depth: usize) {
    for _ in 0..depth {
        out.push_str("  ");
    }
}

/// What a line writer did with an element.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Written<S> {
    /// Siblings written, the element's included (a writer may put the next ones on its line).
    pub siblings: usize,
    /// Uids shown by what it wrote.
    pub uids_shown: usize,
    /// `Some(scope)`: the element's visible children follow as lines of their own one level
    /// deeper, in a frame with `scope`. `None`: they are written already (on its line) or it
    /// has none.
    pub children: Option<S>,
}

/// How one notation writes lines; [`render_with`] decides which lines there are.
pub trait LineWriter<'t> {
    /// What a frame hands down to its children's lines (chrome-devtools-mcp: the page url that
    /// link urls are written relative to).
    type Scope: Copy;

    /// A marker line at `depth`; `text` is the marker without indent.
    fn marker(&mut self, out: &mut String, depth: usize, text: &str);

    /// A line the parser could not read, kept as it was.
    fn verbatim(&mut self, out: &mut String, raw: &str);

    /// Whether `node`'s children are the traversal's to walk (false: the writer's `element`
    /// ignores them, and so do the dropped-nodes markers).
    fn opens_children(&self, _node: &Node<'_>) -> bool {
        true
    }

    /// Whether the notation writes tables (`table`); if not, their records are written as
    /// nodes.
    fn writes_tables(&self) -> bool {
        false
    }

    /// Whether this table is written as one (`writes_tables` unless a notation judges it by
    /// what its rows would write).
    fn writes_table(&self, _tree: &Tree<'_>, _table: &Table<'_>) -> bool {
        self.writes_tables()
    }

    /// Writes the first `rows` records of `table` at `depth`: a header line (ended by
    /// `marker::write_table_uids` with `expand`), then one line per record. Returns the uids
    /// its rows write. Asked only of a notation whose `writes_tables` is true.
    #[allow(clippy::too_many_arguments)]
    fn table(
        &mut self,
        _out: &mut String,
        _tree: &'t Tree<'_>,
        _table: &Table<'_>,
        _rows: usize,
        _depth: usize,
        _scope: Self::Scope,
        _expand: marker::ExpandTarget<'_>,
    ) -> usize {
        0
    }

    /// Writes a table of a delta at `depth` (`delta`: its rows and the runs of rows the agent
    /// holds): the header line as `table` writes it, then, row by row, a row's line as `table`
    /// writes it or a run's line. Returns the uids its rows write. Asked only of a notation
    /// whose `writes_tables` is true.
    #[allow(clippy::too_many_arguments)]
    fn table_delta(
        &mut self,
        _out: &mut String,
        _tree: &'t Tree<'_>,
        _table: &Table<'_>,
        _delta: &TableDelta,
        _depth: usize,
        _scope: Self::Scope,
        _expand: marker::ExpandTarget<'_>,
    ) -> usize {
        0
    }

    /// Writes the element `items[0]` at `depth`, and at will the siblings after it on its line
    /// (`items` runs to the end of the frame). `children` are its visible children (dropped
    /// nodes promoted), empty when `opens_children` said no.
    fn element(
        &mut self,
        out: &mut String,
        tree: &'t Tree<'_>,
        items: &[usize],
        depth: usize,
        scope: Self::Scope,
        children: &[usize],
    ) -> Written<Self::Scope>;
}

struct Frame<'t, S> {
    items: Vec<usize>,
    pos: usize,
    depth: usize,
    scope: S,
    /// The uid a marker in this frame tells the agent to expand.
    expand_uid: &'t str,
    /// The document (a root or an iframe) whose dropped-nodes marker takes the layout nodes
    /// dropped in this frame; `None` in the frame of the roots.
    document: Option<usize>,
    /// The document whose subtree this frame closes (to write its dropped-nodes marker).
    closes_document: Option<usize>,
    /// The node whose children the frame holds (`None`: the roots).
    owner: Option<usize>,
    /// The first item past `pos` that starts condensed records or a table (`items.len()`:
    /// none), found once for the items up to it rather than at each of them.
    next_stop: usize,
}

/// A node whose subtree is a document of its own: a root, or an iframe a reader finds by its
/// uid. Its dropped layout nodes are named at its end, expanding it (Playwright numbers an
/// iframe's refs apart, so one range never spans two documents).
fn opens_document(tree: &Tree<'_>, id: usize, depth: usize) -> bool {
    depth == 0 || opens_frame(tree, id)
}

/// Whether `id` is an iframe whose uid finds it: a document of its own inside the page.
pub(crate) fn opens_frame(tree: &Tree<'_>, id: usize) -> bool {
    tree.nodes
        .get(id)
        .is_some_and(|n| n.role.eq_ignore_ascii_case("iframe") && tree.uid_finds(id))
}

/// Fewest records a table is written for (fewer are written as nodes).
const MIN_TABLE_ROWS: usize = 3;

/// The table that starts at sibling `id`, when one does and is written as one: in a delta,
/// only a table the delta writes row by row (`DeltaMarks::tables`; one the agent holds as it
/// is goes in an unchanged line).
pub fn table_at<'t, 'a>(tree: &'t Tree<'a>, id: usize) -> Option<&'t Table<'a>> {
    if tree.tables.is_empty() {
        return None;
    }
    if let Some(delta) = tree.delta.as_deref() {
        if !delta.tables.contains_key(&id) && !delta.whole_tables.contains(&id) {
            return None;
        }
    }
    tree.tables.get(&id)
}

/// How many records of `table` are written as rows from the start of `rest` (the frame's
/// items from the table's first): the leading records a later pass left whole, in place.
pub(crate) fn table_rows(tree: &Tree<'_>, table: &Table<'_>, rest: &[usize]) -> usize {
    let w = table.siblings(0).len();
    let mut rows = 0;
    while rows < table.records() {
        let record = table.record(rows);
        let siblings = table.siblings(rows);
        let whole = rest.get(rows * w..(rows + 1) * w) == Some(siblings)
            && record
                .iter()
                .chain(siblings)
                .all(|&i| tree.nodes.get(i).is_some_and(|n| !n.hidden && !n.dropped));
        if !whole {
            break;
        }
        rows += 1;
    }
    if rows < MIN_TABLE_ROWS {
        0
    } else {
        rows
    }
}

/// `children` with dropped nodes replaced by their own (visible) children; the dropped ones
/// are added to `dropped`.
pub fn flatten(tree: &Tree<'_>, children: &[usize], dropped: &mut Vec<usize>) -> Vec<usize> {
    let mut out = Vec::with_capacity(children.len());
    promote_dropped_into(tree, children, &mut out, &mut Vec::new(), Some(dropped));
    out
}

/// The layout nodes dropped in the subtrees of `items` that the traversal would walk (visible
/// elements, iframes a reader finds excepted: they name their own), added to `out`.
fn dropped_under(
    tree: &Tree<'_>,
    items: &[usize],
    opens_children: impl Fn(&Node<'_>) -> bool,
    out: &mut Vec<usize>,
) {
    let mut stack: Vec<usize> = items.to_vec();
    let mut scratch = Vec::new();
    // The full snapshot writes these as table rows and counts nothing under them.
    let cover = tree.delta.as_deref().map(|d| &d.table_cover);
    while let Some(id) = stack.pop() {
        if cover.is_some_and(|c| c.contains(&id)) {
            continue;
        }
        let Some(node) = tree.nodes.get(id) else {
            continue;
        };
        let walked = node.kind == NodeKind::Element
            && !node.hidden
            && !node.dropped
            && !tree.children(id).is_empty()
            && opens_children(node);
        if !walked || opens_document(tree, id, 1) {
            continue;
        }
        scratch.clear();
        let visible = flatten(tree, tree.children(id), &mut scratch);
        out.extend_from_slice(&scratch);
        stack.extend(visible);
    }
}

/// Writes the subtrees of `roots` (siblings, in order) through `writer` into `r`, honouring the
/// passes' flags. `scope` is the roots' frame scope.
pub fn render_with<'t, W: LineWriter<'t>>(
    tree: &'t Tree<'_>,
    roots: &[usize],
    scope: W::Scope,
    writer: &mut W,
    r: &mut Rendered,
) {
    let uid_of = |id: usize| tree.nodes.get(id).map_or("", |n| n.uid);
    let mut dropped_by_doc: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    let mut scratch = Vec::new();
    let mut marker_text = String::new();
    let mut stack = vec![Frame {
        items: roots.to_vec(),
        pos: 0,
        depth: 0,
        scope,
        expand_uid: "",
        document: None,
        closes_document: None,
        owner: None,
        next_stop: 0,
    }];
    let delta = tree.delta.as_deref();
    let mut cap = tree.output_cap.map(|cap| CapCheck {
        cap,
        counted: 0,
        tokens: crate::tokens::TokenCount::default(),
        units: 0,
    });
    while let Some(frame) = stack.last_mut() {
        if cap.as_mut().is_some_and(|c| c.over(&r.text)) {
            r.gave_up = true;
            return;
        }
        let Some(&id) = frame.items.get(frame.pos) else {
            if let Some(line) = delta.and_then(|d| d.removed.get(&frame.owner)) {
                writer.marker(&mut r.text, frame.depth, line);
                r.markers += 1;
            }
            if let Some(doc) = frame.closes_document {
                if let Some(dropped) = dropped_by_doc.remove(&doc) {
                    marker_text.clear();
                    r.uids_hidden +=
                        marker::write_dropped(&mut marker_text, tree, &dropped, uid_of(doc));
                    writer.marker(&mut r.text, frame.depth, &marker_text);
                    r.markers += 1;
                }
            }
            stack.pop();
            continue;
        };
        let Some(node) = tree.nodes.get(id) else {
            frame.pos += 1;
            continue;
        };
        let depth = frame.depth;
        let table_delta = delta
            .and_then(|d| d.tables.get(&id))
            .filter(|_| writer.writes_tables());
        if let (Some(td), Some(table)) = (table_delta, tree.tables.get(&id)) {
            // A table of a delta: its changed rows as rows, the others in runs (`mark` cut the
            // frame's unchanged runs at the table's ends).
            let end = frame.pos + td.rows * table.columns.len();
            let items = frame.items.get(frame.pos..end).unwrap_or(&[]);
            let expand = marker::ExpandTarget::for_run(tree, items, frame.expand_uid);
            r.uids_shown +=
                writer.table_delta(&mut r.text, tree, table, td, depth, frame.scope, expand);
            r.markers += 1 + td.runs.len();
            frame.pos = end.max(frame.pos + 1);
            continue;
        }
        if let Some((len, line)) = delta.and_then(|d| d.runs.get(&id)) {
            // A delta's run of siblings unchanged since the snapshot it is against.
            writer.marker(&mut r.text, depth, line);
            r.markers += 1;
            let run = frame
                .items
                .get(frame.pos..frame.pos + (*len).max(1))
                .unwrap_or(&[]);
            if let Some(doc) = frame.document {
                // Its layout nodes dropped are still named by the document's marker, as in
                // the full snapshot.
                scratch.clear();
                dropped_under(tree, run, |n| writer.opens_children(n), &mut scratch);
                if !scratch.is_empty() {
                    dropped_by_doc.entry(doc).or_default().extend(&scratch);
                }
            }
            frame.pos += (*len).max(1);
            continue;
        }
        if let Some(condensed) = tree.condensed_records.get(&id) {
            // Condensed records: one marker before them names what they hide.
            let run = frame.items.get(frame.pos..).unwrap_or(&[]);
            let run = match run.iter().position(|&i| i == condensed.last) {
                Some(last) => run.get(..=last).unwrap_or(&[]),
                None => &[],
            };
            let expand = marker::ExpandTarget::for_run(tree, run, frame.expand_uid);
            marker_text.clear();
            r.uids_hidden += marker::write_condensed(&mut marker_text, tree, condensed, expand);
            writer.marker(&mut r.text, depth, &marker_text);
            r.markers += 1;
        }
        if let Some(table) = table_at(tree, id).filter(|t| writer.writes_table(tree, t)) {
            let rest = frame.items.get(frame.pos..).unwrap_or(&[]);
            let rows = table_rows(tree, table, rest);
            if rows > 0 {
                let items = rest.get(..rows * table.siblings(0).len()).unwrap_or(&[]);
                let expand = marker::ExpandTarget::for_run(tree, items, frame.expand_uid);
                let shown =
                    writer.table(&mut r.text, tree, table, rows, depth, frame.scope, expand);
                let mut all = std::collections::HashSet::new();
                for &i in items {
                    all.extend(tree.subtree(i).filter_map(|d| {
                        tree.nodes
                            .get(d)
                            .filter(|n| n.kind == NodeKind::Element && !n.uid.is_empty())
                            .map(|n| n.uid)
                    }));
                }
                r.uids_shown += shown;
                r.uids_hidden += all.len().saturating_sub(shown);
                r.markers += 1;
                frame.pos += items.len();
                continue;
            }
        }
        if node.hidden {
            // One marker per run of hidden siblings; a run of hidden records gets its own.
            let start = frame.pos;
            frame.pos = marker::hidden_run_end(tree, &frame.items, start);
            let run = frame.items.get(start..frame.pos).unwrap_or(&[]);
            if run.iter().all(|&i| tree.is_condensed_cell(i)) {
                // Named by the condensed records' marker.
                continue;
            }
            marker_text.clear();
            r.uids_hidden += marker::write_run(&mut marker_text, tree, run, frame.expand_uid);
            writer.marker(&mut r.text, depth, &marker_text);
            r.markers += 1;
            continue;
        }
        match node.kind {
            NodeKind::Verbatim => {
                writer.verbatim(&mut r.text, node.raw.unwrap_or(""));
                frame.pos += 1;
            }
            NodeKind::Marker => {
                writer.marker(&mut r.text, depth, node.name_str());
                r.markers += 1;
                frame.pos += 1;
            }
            NodeKind::Element => {
                let mut rest = frame.items.get(frame.pos..).unwrap_or(&[]);
                if !tree.condensed_records.is_empty() || !tree.tables.is_empty() {
                    // A line of siblings ends before condensed records (their marker) and
                    // before a table (its header).
                    if frame.next_stop <= frame.pos {
                        frame.next_stop = rest
                            .iter()
                            .skip(1)
                            .position(|&i| {
                                tree.condensed_records.contains_key(&i)
                                    || table_at(tree, i).is_some()
                            })
                            .map_or(frame.items.len(), |stop| frame.pos + 1 + stop);
                    }
                    if frame.next_stop < frame.items.len() {
                        rest = rest.get(..frame.next_stop - frame.pos).unwrap_or(rest);
                    }
                }
                // A delta's removed line for a node whose children get no frame of their own.
                let removed_here = delta.and_then(|d| d.removed.get(&Some(id)));
                if !writer.opens_children(node) {
                    let w = writer.element(&mut r.text, tree, rest, depth, frame.scope, &[]);
                    r.uids_shown += w.uids_shown;
                    frame.pos += w.siblings.max(1);
                    if let Some(line) = removed_here {
                        writer.marker(&mut r.text, depth + 1, line);
                        r.markers += 1;
                    }
                    continue;
                }
                let own_doc = opens_document(tree, id, depth);
                let document = if own_doc { Some(id) } else { frame.document };
                let children = tree.children(id);
                let items = if children.is_empty() {
                    Vec::new()
                } else {
                    scratch.clear();
                    let items = flatten(tree, children, &mut scratch);
                    if let Some(d) = delta {
                        // Rows the full snapshot writes as a table, written here as nodes:
                        // what it drops under them is not its layout to count.
                        scratch.retain(|i| !d.table_cover.contains(i));
                    }
                    if !scratch.is_empty() {
                        if let Some(doc) = document {
                            dropped_by_doc.entry(doc).or_default().extend(&scratch);
                        }
                    }
                    items
                };
                let w = writer.element(&mut r.text, tree, rest, depth, frame.scope, &items);
                r.uids_shown += w.uids_shown;
                frame.pos += w.siblings.max(1);
                match w.children {
                    Some(scope) if !items.is_empty() => {
                        // A repeated uid finds an earlier node: expand the nearest ancestor
                        // whose uid finds it instead.
                        let expand_uid = if tree.uid_finds(id) {
                            node.uid
                        } else {
                            frame.expand_uid
                        };
                        stack.push(Frame {
                            items,
                            pos: 0,
                            depth: depth + 1,
                            scope,
                            expand_uid,
                            document,
                            closes_document: own_doc.then_some(id),
                            owner: Some(id),
                            next_stop: 0,
                        });
                    }
                    _ if own_doc && depth > 0 => {
                        if let Some(line) = removed_here {
                            writer.marker(&mut r.text, depth + 1, line);
                            r.markers += 1;
                        }
                        // An iframe written on one line: its dropped nodes join the enclosing
                        // document's marker (no line can follow its children here).
                        if let (Some(dropped), Some(outer)) =
                            (dropped_by_doc.remove(&id), frame.document)
                        {
                            dropped_by_doc.entry(outer).or_default().extend(dropped);
                        }
                    }
                    _ if removed_here.is_some() || depth == 0 => {
                        if let Some(line) = removed_here {
                            writer.marker(&mut r.text, depth + 1, line);
                            r.markers += 1;
                        }
                        // A root with no frame of children closes here.
                        if let Some(dropped) = dropped_by_doc.remove(&id) {
                            marker_text.clear();
                            r.uids_hidden +=
                                marker::write_dropped(&mut marker_text, tree, &dropped, node.uid);
                            writer.marker(&mut r.text, depth + 1, &marker_text);
                            r.markers += 1;
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    // Dropped nodes whose document has no children left to close it.
    for (doc, dropped) in dropped_by_doc {
        marker_text.clear();
        r.uids_hidden += marker::write_dropped(&mut marker_text, tree, &dropped, uid_of(doc));
        writer.marker(&mut r.text, 1, &marker_text);
        r.markers += 1;
    }
}
