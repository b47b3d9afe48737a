//! Writes a tree back as text. `render_raw` gives the input back byte for byte (the `off`
//! check of the parser); `render` writes the light notation with markers for what passes hid.

use std::borrow::Cow;
use std::collections::BTreeMap;

use super::escape::{escape_into, escape_link_text_into};
use super::url::relative_to;
use crate::snapshot::collapse::promote_dropped_into;
use crate::snapshot::marker;
use crate::snapshot::roles;
use crate::snapshot::tree::{Node, NodeKind, Tree};

/// First characters of our legend line: the parser reads a text starting with it as light
/// notation.
pub const LEGEND_TAG: &str = "#snapshot-filter";
const LEGEND_LIGHT: &str = "#snapshot-filter light: uid role \"name\" attrs, | between siblings, children after >; links [name](url); urls relative to the page";
const LEGEND_LOSSY: &str = "#snapshot-filter: uid role \"name\" attrs, | between siblings, children after >; links [name](url); urls relative to the page; hidden: link/image urls, \"…\" lines, cut=N chars (expand_snapshot uid=U)";

/// Between siblings sharing a line. After a closing quote `"|` is one token, where `" ` and the
/// uid's own digits would be two.
pub const SIBLING_SEPARATOR: char = '|';
/// After a node whose children all share its line.
pub const CHILDREN_SEPARATOR: &str = " > ";

/// The raw lines of every node, in order: the parser's input, unchanged.
pub fn render_raw(tree: &Tree<'_>) -> String {
    let mut out = String::new();
    let mut first = true;
    for node in &tree.nodes {
        if let Some(raw) = node.raw {
            if !first {
                out.push('\n');
            }
            first = false;
            out.push_str(raw);
        }
    }
    if tree.trailing_newline {
        out.push('\n');
    }
    out
}

/// What a renderer wrote, for the stats (both notations).
#[derive(Debug, Default)]
pub struct Rendered {
    pub text: String,
    pub uids_shown: usize,
    pub uids_hidden: usize,
    pub markers: usize,
}

struct Frame<'t> {
    items: Vec<usize>,
    pos: usize,
    depth: usize,
    base: Option<&'t str>,
    /// The uid a marker in this frame tells the agent to expand.
    expand_uid: &'t str,
    /// The root whose subtree this frame closes (to write its dropped-nodes marker).
    closes_root: Option<usize>,
}

/// `children` with dropped nodes replaced by their own (visible) children; the dropped ones
/// are added to `dropped`.
pub(crate) fn flatten(tree: &Tree<'_>, children: &[usize], dropped: &mut Vec<usize>) -> Vec<usize> {
    let mut out = Vec::with_capacity(children.len());
    promote_dropped_into(tree, children, &mut out, &mut Vec::new(), Some(dropped));
    out
}

/// A node written on the line of its previous sibling: nothing under it, an id to start the
/// segment, and no DevTools suffix (which only ends a line).
fn is_inline_leaf(node: &Node<'_>) -> bool {
    node.kind == NodeKind::Element
        && !node.hidden
        && !node.dropped
        && node.children.is_empty()
        && !node.uid.is_empty()
        && !node.devtools_selected
}

/// Writes the leading run of inline leaves of `items` on the current line, split by `|`;
/// returns how many it wrote.
fn write_leaf_run(out: &mut String, tree: &Tree<'_>, items: &[usize], base: Option<&str>) -> usize {
    let mut written = 0;
    for node in items
        .iter()
        .map_while(|&i| tree.nodes.get(i).filter(|n| is_inline_leaf(n)))
    {
        if written > 0 {
            out.push(SIBLING_SEPARATOR);
        }
        write_element(out, node, base);
        written += 1;
    }
    written
}

pub(crate) fn push_indent(out: &mut String, depth: usize) {
    for _ in 0..depth {
        out.push_str("  ");
    }
}

/// Writes the tree in the light notation, honouring the passes' flags.
pub fn render(tree: &Tree<'_>, lossy: bool) -> Rendered {
    render_from(tree, &tree.roots, None, lossy, tree.trailing_newline)
}

/// Writes the subtree of `root` alone (as if it were the only root), in the light notation.
pub fn render_subtree(tree: &Tree<'_>, root: usize, lossy: bool) -> Rendered {
    render_siblings(tree, &[root], lossy)
}

/// Writes the subtrees of `roots` (siblings, in order) alone, in the light notation.
pub fn render_siblings(tree: &Tree<'_>, roots: &[usize], lossy: bool) -> Rendered {
    let Some(&root) = roots.first() else {
        return Rendered::default();
    };
    // Urls stay relative to the page the subtree belongs to.
    let base = std::iter::once(root)
        .chain(tree.ancestors(root))
        .filter_map(|a| tree.nodes.get(a))
        .find(|n| n.role == "RootWebArea")
        .and_then(|n| n.attr("url"))
        .and_then(|a| a.value.as_deref());
    render_from(tree, roots, base, lossy, false)
}

fn render_from<'t>(
    tree: &'t Tree<'_>,
    roots: &[usize],
    base: Option<&'t str>,
    lossy: bool,
    trailing_newline: bool,
) -> Rendered {
    let mut r = Rendered::default();
    let out = &mut r.text;
    // Room for a typical line per node (fewer lines are written when lossy): few regrowths.
    out.reserve(tree.nodes.len() * if lossy { 16 } else { 48 });
    out.push_str(if lossy { LEGEND_LOSSY } else { LEGEND_LIGHT });
    let mut dropped_by_root: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    let mut scratch = Vec::new();
    let mut stack = vec![Frame {
        items: roots.to_vec(),
        pos: 0,
        depth: 0,
        base,
        expand_uid: "",
        closes_root: None,
    }];
    let mut root_of_frame: Option<usize> = None;
    while let Some(frame) = stack.last_mut() {
        let Some(&id) = frame.items.get(frame.pos) else {
            if let Some(root) = frame.closes_root {
                if let Some(dropped) = dropped_by_root.remove(&root) {
                    let uid = tree.nodes.get(root).map_or("", |n| n.uid);
                    out.push('\n');
                    r.uids_hidden += marker::write_dropped(out, tree, &dropped, frame.depth, uid);
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
        if node.hidden {
            // One marker per run of hidden siblings; a run of hidden records gets its own.
            let start = frame.pos;
            frame.pos = marker::hidden_run_end(tree, &frame.items, start);
            let run = frame.items.get(start..frame.pos).unwrap_or(&[]);
            out.push('\n');
            r.uids_hidden += marker::write_run(out, tree, run, depth, frame.expand_uid);
            r.markers += 1;
            continue;
        }
        out.push('\n');
        match node.kind {
            NodeKind::Verbatim => {
                write_verbatim(out, node.raw.unwrap_or(""));
                frame.pos += 1;
            }
            NodeKind::Marker => {
                push_indent(out, depth);
                out.push_str(node.name_str());
                r.markers += 1;
                frame.pos += 1;
            }
            NodeKind::Element if depth > 0 && is_inline_leaf(node) => {
                // Siblings without children share one line: a newline and an indent less each.
                push_indent(out, depth);
                let rest = frame.items.get(frame.pos..).unwrap_or(&[]);
                let written = write_leaf_run(out, tree, rest, frame.base);
                r.uids_shown += written;
                frame.pos += written;
            }
            NodeKind::Element => {
                push_indent(out, depth);
                write_element(out, node, frame.base);
                if !node.uid.is_empty() {
                    r.uids_shown += 1;
                }
                frame.pos += 1;
                if !node.children.is_empty() {
                    let base = if node.role == "RootWebArea" {
                        node.attr("url").and_then(|a| a.value.as_deref())
                    } else {
                        frame.base
                    };
                    let expand_uid = if node.uid.is_empty() {
                        frame.expand_uid
                    } else {
                        node.uid
                    };
                    scratch.clear();
                    let items = flatten(tree, &node.children, &mut scratch);
                    if !scratch.is_empty() {
                        if let Some(root) = root_of_frame {
                            dropped_by_root.entry(root).or_default().extend(&scratch);
                        }
                    }
                    // Children that are all childless go on the node's own line: a line
                    // (newline and indent) less. Not for roots, whose frame writes the marker of
                    // their dropped nodes, nor after the DevTools suffix, which ends a line.
                    let leaves = depth > 0
                        && !node.devtools_selected
                        && !items.is_empty()
                        && items
                            .iter()
                            .all(|&i| tree.nodes.get(i).is_some_and(is_inline_leaf));
                    if leaves {
                        out.push_str(CHILDREN_SEPARATOR);
                        r.uids_shown += write_leaf_run(out, tree, &items, base);
                        continue;
                    }
                    let closes_root = (depth == 0).then_some(id);
                    stack.push(Frame {
                        items,
                        pos: 0,
                        depth: depth + 1,
                        base,
                        expand_uid,
                        closes_root,
                    });
                } else if depth == 0 {
                    if let Some(dropped) = dropped_by_root.remove(&id) {
                        out.push('\n');
                        r.uids_hidden +=
                            marker::write_dropped(out, tree, &dropped, depth + 1, node.uid);
                        r.markers += 1;
                    }
                }
            }
        }
    }
    // Dropped nodes whose root has no children left to close it.
    for (root, dropped) in dropped_by_root {
        let uid = tree.nodes.get(root).map_or("", |n| n.uid);
        out.push('\n');
        r.uids_hidden += marker::write_dropped(out, tree, &dropped, 1, uid);
        r.markers += 1;
    }
    if trailing_newline {
        out.push('\n');
    }
    r
}

/// Unreadable lines stay as they are, behind a `\` when they could pass for structure.
fn write_verbatim(out: &mut String, raw: &str) {
    let rest = raw.trim_start_matches(' ');
    let looks_structural = rest.starts_with(|c: char| c.is_ascii_digit() || c == '\\')
        || rest.starts_with('…')
        || raw.starts_with(LEGEND_TAG);
    if looks_structural {
        out.push('\\');
    }
    out.push_str(raw);
}

fn write_element(out: &mut String, node: &Node<'_>, base: Option<&str>) {
    out.push_str(node.uid);
    let link_url = link_url(node, base);
    if let Some(url) = &link_url {
        // A link as markdown writes it: `[name](url)`, what models read best, in fewer tokens
        // than `link "name" url=…`.
        if !node.uid.is_empty() {
            out.push(' ');
        }
        out.push('[');
        write_cut(out, node.name_str(), node.keep_chars, escape_link_text_into);
        out.push_str("](");
        out.push_str(url);
        out.push(')');
    } else if !node.role.is_empty() {
        if !node.uid.is_empty() {
            out.push(' ');
        }
        out.push_str(node.role);
    }
    if let (Some(name), None) = (&node.name, &link_url) {
        out.push_str(" \"");
        write_cut(out, name, node.keep_chars, escape_into);
        out.push('"');
    }
    let mut cut_total = node.keep_chars.map(|keep| {
        node.name
            .as_deref()
            .map_or(0, |n| n.chars().count().saturating_sub(keep))
    });
    for attr in &node.attrs {
        if roles::is_stateless_capability(node, attr.key)
            || (attr.key == "url" && (node.drop_url || link_url.is_some()))
        {
            continue;
        }
        if attr.key == "cut" {
            // An earlier cut: add its count to this one.
            let earlier = attr
                .value
                .as_deref()
                .and_then(|v| v.parse::<usize>().ok())
                .unwrap_or(0);
            if let Some(total) = cut_total.as_mut() {
                *total += earlier;
                continue;
            }
        }
        out.push(' ');
        out.push_str(attr.key);
        if let Some(value) = &attr.value {
            out.push('=');
            let relative = match (attr.key, base) {
                ("url", Some(base)) if node.role != "RootWebArea" => relative_to(value, base),
                _ => None,
            };
            write_value(out, relative.as_deref().unwrap_or(value));
        }
    }
    if let Some(total) = cut_total {
        out.push_str(" cut=");
        out.push_str(&total.to_string());
    }
    if node.devtools_selected {
        out.push_str(super::parse::DEVTOOLS_SELECTED);
    }
}

/// The name of a node, cut to `keep` characters (then `…`) when a pass said so.
fn write_cut(out: &mut String, name: &str, keep: Option<usize>, escape: fn(&mut String, &str)) {
    match keep {
        Some(keep) => {
            let cut_at = name.char_indices().nth(keep).map_or(name.len(), |(i, _)| i);
            escape(out, name.get(..cut_at).unwrap_or(""));
            out.push('…');
        }
        None => escape(out, name),
    }
}

/// The url a link is written with as `[name](url)` (relative to the page when it can be), or
/// `None` to write it as `link "name" url=…`: when it has no url, a pass hid it, it holds what
/// would end it early or be misread (a space, a quote, a backslash, a `|`, unbalanced
/// parentheses), or it has no name (`[]` would read back as an empty name).
fn link_url<'n>(node: &'n Node<'_>, base: Option<&str>) -> Option<Cow<'n, str>> {
    if node.role != "link" || node.drop_url || node.name.is_none() {
        return None;
    }
    let value = node.attr("url")?.value.as_deref()?;
    let url = match base.and_then(|base| relative_to(value, base)) {
        Some(relative) => Cow::Owned(relative),
        None => Cow::Borrowed(value),
    };
    let mut open = 0usize;
    for b in url.bytes() {
        match b {
            b'(' => open += 1,
            b')' => open = open.checked_sub(1)?,
            b' ' | b'"' | b'\\' | b'|' | b'\n' | b'\r' | b'\t' => return None,
            _ => {}
        }
    }
    (open == 0 && !url.is_empty()).then_some(url)
}

/// An attribute value, bare when nothing in it could end it early or be misread (a space, a
/// quote, a backslash, a line break, the sibling separator), else quoted and escaped.
fn write_value(out: &mut String, value: &str) {
    let bare = !value.is_empty()
        && !value
            .bytes()
            .any(|b| matches!(b, b' ' | b'"' | b'\\' | b'\n' | b'\r' | b'|'));
    if bare {
        out.push_str(value);
    } else {
        out.push('"');
        escape_into(out, value);
        out.push('"');
    }
}

/// The light line of one node (urls relative to its page), for search hits.
pub fn write_element_line(out: &mut String, tree: &Tree<'_>, id: usize) {
    let Some(node) = tree.nodes.get(id) else {
        return;
    };
    let base = tree
        .ancestors(id)
        .filter_map(|a| tree.nodes.get(a))
        .find(|n| n.role == "RootWebArea")
        .and_then(|n| n.attr("url"))
        .and_then(|a| a.value.as_deref());
    write_element(out, node, base);
}
