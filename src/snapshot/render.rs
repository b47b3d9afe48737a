//! The one traversal that writes any tree, through a notation's [`LineWriter`]: it walks the
//! visible nodes in document order, gives each run of hidden siblings one marker (records or
//! plain, see `marker`), names the layout nodes dropped under each root in one marker at the
//! end of that root, and leaves every line's shape to the writer.

use std::collections::BTreeMap;

use super::marker;
use super::tree::{Node, NodeKind, Tree};
use super::walk::promote_dropped_into;

/// What a renderer wrote, for the stats (every notation).
#[derive(Debug, Default)]
pub struct Rendered {
    pub text: String,
    pub uids_shown: usize,
    pub uids_hidden: usize,
    pub markers: usize,
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
    /// The root whose subtree this frame closes (to write its dropped-nodes marker).
    closes_root: Option<usize>,
    /// The node whose children the frame holds (`None`: the roots).
    owner: Option<usize>,
}

/// `children` with dropped nodes replaced by their own (visible) children; the dropped ones
/// are added to `dropped`.
pub fn flatten(tree: &Tree<'_>, children: &[usize], dropped: &mut Vec<usize>) -> Vec<usize> {
    let mut out = Vec::with_capacity(children.len());
    promote_dropped_into(tree, children, &mut out, &mut Vec::new(), Some(dropped));
    out
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
    let mut dropped_by_root: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    let mut scratch = Vec::new();
    let mut marker_text = String::new();
    let mut stack = vec![Frame {
        items: roots.to_vec(),
        pos: 0,
        depth: 0,
        scope,
        expand_uid: "",
        closes_root: None,
        owner: None,
    }];
    let delta = tree.delta.as_deref();
    let mut root_of_frame: Option<usize> = None;
    while let Some(frame) = stack.last_mut() {
        let Some(&id) = frame.items.get(frame.pos) else {
            if let Some(line) = delta.and_then(|d| d.removed.get(&frame.owner)) {
                writer.marker(&mut r.text, frame.depth, line);
                r.markers += 1;
            }
            if let Some(root) = frame.closes_root {
                if let Some(dropped) = dropped_by_root.remove(&root) {
                    marker_text.clear();
                    r.uids_hidden +=
                        marker::write_dropped(&mut marker_text, tree, &dropped, uid_of(root));
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
        if frame.depth == 0 {
            root_of_frame = Some(id);
        }
        let depth = frame.depth;
        if let Some((len, line)) = delta.and_then(|d| d.runs.get(&id)) {
            // A delta's run of siblings unchanged since the snapshot it is against.
            writer.marker(&mut r.text, depth, line);
            r.markers += 1;
            frame.pos += (*len).max(1);
            continue;
        }
        if node.hidden {
            // One marker per run of hidden siblings; a run of hidden records gets its own.
            let start = frame.pos;
            frame.pos = marker::hidden_run_end(tree, &frame.items, start);
            let run = frame.items.get(start..frame.pos).unwrap_or(&[]);
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
                let rest = frame.items.get(frame.pos..).unwrap_or(&[]);
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
                let items = if node.children.is_empty() {
                    Vec::new()
                } else {
                    scratch.clear();
                    let items = flatten(tree, &node.children, &mut scratch);
                    if !scratch.is_empty() {
                        if let Some(root) = root_of_frame {
                            dropped_by_root.entry(root).or_default().extend(&scratch);
                        }
                    }
                    items
                };
                let w = writer.element(&mut r.text, tree, rest, depth, frame.scope, &items);
                r.uids_shown += w.uids_shown;
                frame.pos += w.siblings.max(1);
                match w.children {
                    Some(scope) if !items.is_empty() => {
                        let expand_uid = if node.uid.is_empty() {
                            frame.expand_uid
                        } else {
                            node.uid
                        };
                        stack.push(Frame {
                            items,
                            pos: 0,
                            depth: depth + 1,
                            scope,
                            expand_uid,
                            closes_root: (depth == 0).then_some(id),
                            owner: Some(id),
                        });
                    }
                    _ if removed_here.is_some() || depth == 0 => {
                        if let Some(line) = removed_here {
                            writer.marker(&mut r.text, depth + 1, line);
                            r.markers += 1;
                        }
                        // A root with no frame of children closes here.
                        if let Some(dropped) = dropped_by_root.remove(&id) {
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
    // Dropped nodes whose root has no children left to close it.
    for (root, dropped) in dropped_by_root {
        marker_text.clear();
        r.uids_hidden += marker::write_dropped(&mut marker_text, tree, &dropped, uid_of(root));
        writer.marker(&mut r.text, 1, &marker_text);
        r.markers += 1;
    }
}
