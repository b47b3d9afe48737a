//! Writes a tree back as a Playwright-style ARIA snapshot: valid YAML, the same line shapes
//! Playwright prints, with what the passes changed:
//!
//! - a legend comment on top (`# snapshot-filter …`);
//! - `[ref=…]` left out on a structural node (no link, button, control, clickable or stateful
//!   node) whose ref is the one after the previous ref written or implied, in document order:
//!   `- row:` after `[ref=e41]` is e42. A structural node without any ref says `[noref]`;
//! - `[cursor=pointer]` left out on roles that are interactive anyway (links, buttons, …);
//! - at the lossy levels, hidden runs as one quoted list item each (the shared marker text,
//!   so the same words and uid lists as in chrome-devtools-mcp snapshots):
//!   `- '… 12 hidden (link 6, text 4, listitem 2; uid e40…e77): expand_snapshot uid=e39'`;
//!   names cut at `max_text_length` end in `…` and carry `[cut=N]`, texts just end in `…`;
//!   link urls (`/url`) of named links dropped.

use super::refs::{next_ref, ref_implicable, NOREF};
use super::yaml::{write_attr, write_json_string, write_key, write_value};
use crate::snapshot::marker::ExpandTarget;
use crate::snapshot::render::{push_indent, render_with, LineWriter, Rendered, Written};
use crate::snapshot::roles;
use crate::snapshot::tree::{Node, NodeKind, Table, Tree};

const LEGEND_LIGHT: &str = "# snapshot-filter light: a node shown without [ref=…] (not a link, button or control) has the ref after the previous one; [cursor=pointer] left out on links, buttons and controls";
const LEGEND_LOSSY: &str = "# snapshot-filter: a node shown without [ref=…] (not a link, button or control) has the ref after the previous one; [cursor=pointer] left out on links, buttons and controls; '… N hidden' items, link urls, text cut at … ([cut=N] chars): expand_snapshot uid=<ref>";

/// How refs are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefStyle {
    /// Structural refs implied where they follow the previous one (filtered snapshots).
    Implied,
    /// Every ref written (expand and search answers).
    Explicit,
}

/// Property lines (`/url`, `/placeholder`) are attributes whose key starts with `/`.
fn is_prop(key: &str) -> bool {
    key.starts_with('/')
}

fn shown_props<'n>(node: &'n Node<'_>) -> impl Iterator<Item = (&'n str, &'n str)> + 'n {
    node.attrs
        .iter()
        .filter(move |a| is_prop(a.key) && !node.drops_attr(a.key))
        .map(|a| (a.key, a.value.as_deref().unwrap_or("")))
}

fn is_text(node: &Node<'_>) -> bool {
    node.kind == NodeKind::Element && node.role.is_empty()
}

/// The text of a text node, cut where a pass said.
fn text_of<'n>(node: &'n Node<'_>) -> std::borrow::Cow<'n, str> {
    let name = node.name_str();
    match node.keep_chars {
        Some(keep) => {
            let cut_at = name.char_indices().nth(keep).map_or(name.len(), |(i, _)| i);
            let mut s = name.get(..cut_at).unwrap_or("").to_string();
            s.push('…');
            s.into()
        }
        None => name.into(),
    }
}

/// Said in the legend only when the snapshot has such a node (Playwright MCP gives a ref to
/// nearly every node, so most snapshots need not pay for it).
const LEGEND_NOREF: &str = "; [noref]: a node Playwright gave no ref";
/// Said in the legend only when a table is written (`table`).
const LEGEND_TABLE: &str = "; '… table' items: one item per record below, cells by | as its header says, [ref] columns start with the ref, {name} the record's name";

/// Writes the whole tree (with the legend line).
pub fn render(tree: &Tree<'_>, lossy: bool) -> Rendered {
    let legend = if lossy { LEGEND_LOSSY } else { LEGEND_LIGHT };
    let (mut r, writer) = render_lines(tree, legend);
    // What the legend explains, as the writer wrote it (never read back from the text, where
    // page text could hold the same words).
    let mut more = String::new();
    if writer.wrote_table {
        more.push_str(LEGEND_TABLE);
    }
    if writer.wrote_noref {
        more.push_str(LEGEND_NOREF);
    }
    r.text.insert_str(legend.len(), &more);
    r
}

/// Writes the tree as a delta: `first_line` (the delta's header) instead of the legend.
pub fn render_delta(tree: &Tree<'_>, first_line: &str) -> Rendered {
    render_lines(tree, first_line).0
}

fn render_lines(tree: &Tree<'_>, first_line: &str) -> (Rendered, YamlWriter) {
    let mut r = Rendered::default();
    r.text.push_str(first_line);
    r.text.push('\n');
    let mut writer = YamlWriter::new(RefStyle::Implied);
    render_with(tree, &tree.roots, (), &mut writer, &mut r);
    if !tree.trailing_newline && r.text.ends_with('\n') {
        r.text.pop();
    }
    (r, writer)
}

/// Writes the subtrees of `roots` (siblings, in order) alone, every ref explicit, no legend.
pub fn render_siblings(tree: &Tree<'_>, roots: &[usize]) -> Rendered {
    let mut r = Rendered::default();
    render_with(
        tree,
        roots,
        (),
        &mut YamlWriter::new(RefStyle::Explicit),
        &mut r,
    );
    if r.text.ends_with('\n') {
        r.text.pop();
    }
    r
}

/// Playwright's YAML lines, each ended by a newline. Refs are implied against the previous ref
/// written, so the writer keeps it.
struct YamlWriter {
    style: RefStyle,
    prev_ref: Option<String>,
    /// A `[noref]` was written (the legend explains it).
    wrote_noref: bool,
    /// A table was written (the legend explains it).
    wrote_table: bool,
}

impl YamlWriter {
    fn new(style: RefStyle) -> Self {
        YamlWriter {
            style,
            prev_ref: None,
            wrote_noref: false,
            wrote_table: false,
        }
    }
}

impl<'t> LineWriter<'t> for YamlWriter {
    type Scope = ();

    fn marker(&mut self, out: &mut String, depth: usize, text: &str) {
        push_indent(out, depth);
        out.push_str("- '");
        // Playwright nodes without refs (options) leave the shared marker's ref list empty.
        let text = text.replace(" ()", "");
        out.push_str(&text.replace('\'', "''"));
        out.push_str("'\n");
    }

    fn verbatim(&mut self, out: &mut String, raw: &str) {
        out.push_str(raw);
        out.push('\n');
    }

    /// A text node is one `- text:` line, whatever is under it.
    fn opens_children(&self, node: &Node<'_>) -> bool {
        !is_text(node)
    }

    fn writes_tables(&self) -> bool {
        true
    }

    /// A table whose rows would write nothing (every cell fixed by its header) says less
    /// than its records as nodes.
    fn writes_table(&self, _tree: &Tree<'_>, table: &Table<'_>) -> bool {
        super::table::rows_say_something(table)
    }

    fn table(
        &mut self,
        out: &mut String,
        tree: &'t Tree<'_>,
        table: &Table<'_>,
        rows: usize,
        depth: usize,
        _scope: (),
        expand: ExpandTarget<'_>,
    ) -> usize {
        let shown = super::table::write_table(out, tree, table, rows, depth, expand);
        self.wrote_table = true;
        // The node after a table writes its ref: "the ref after the previous one" would
        // point into the rows. `Some` still writes `[noref]` where a node has none.
        self.prev_ref = Some(String::new());
        shown
    }

    fn element(
        &mut self,
        out: &mut String,
        tree: &'t Tree<'_>,
        items: &[usize],
        depth: usize,
        _scope: (),
        children: &[usize],
    ) -> Written<()> {
        let mut written = Written {
            siblings: 1,
            uids_shown: 0,
            children: None,
        };
        let Some(node) = items.first().and_then(|&i| tree.nodes.get(i)) else {
            return written;
        };
        push_indent(out, depth);
        if is_text(node) {
            out.push_str("- text: ");
            write_value(out, &text_of(node));
            out.push('\n');
            return written;
        }
        out.push_str("- ");
        let mut key = String::new();
        self.wrote_noref |= write_element_key(&mut key, node, self.style, &mut self.prev_ref);
        write_key(out, &key);
        if !node.uid.is_empty() {
            written.uids_shown += 1;
        }
        let has_props = shown_props(node).next().is_some();
        let inline = match children {
            [only] if !has_props => tree.nodes.get(*only).filter(|c| {
                is_text(c) && !c.hidden && !c.unchanged && tree.children(*only).is_empty()
            }),
            _ => None,
        };
        if let Some(text) = inline {
            out.push_str(": ");
            write_value(out, &text_of(text));
            out.push('\n');
            return written;
        }
        if has_props || !children.is_empty() {
            out.push_str(":\n");
            for (k, v) in shown_props(node) {
                push_indent(out, depth + 1);
                out.push_str("- ");
                out.push_str(k);
                out.push_str(": ");
                write_value(out, v);
                out.push('\n');
            }
        } else {
            out.push('\n');
        }
        written.children = Some(());
        written
    }
}

/// `role "name" [attrs] [ref=…] [cursor=…]`, before YAML quoting. Returns whether it wrote
/// `[noref]`.
fn write_element_key(
    out: &mut String,
    node: &Node<'_>,
    style: RefStyle,
    prev: &mut Option<String>,
) -> bool {
    out.push_str(node.role);
    let mut cut = None;
    if let Some(name) = &node.name {
        out.push(' ');
        let shown = match node.keep_chars {
            Some(keep) => {
                let cut_at = name.char_indices().nth(keep).map_or(name.len(), |(i, _)| i);
                cut = Some(name.get(cut_at..).unwrap_or("").chars().count());
                let mut s = name.get(..cut_at).unwrap_or("").to_string();
                s.push('…');
                std::borrow::Cow::Owned(s)
            }
            None => std::borrow::Cow::Borrowed(name.as_ref()),
        };
        if shown.len() > 1 && shown.starts_with('/') && shown.ends_with('/') {
            out.push_str(&shown);
        } else {
            write_json_string(out, &shown);
        }
    }
    let interactive_role = {
        let mut probe = Node::new(NodeKind::Element, None);
        probe.role = node.role;
        roles::is_interactive(&probe)
    };
    let mut cursor = None;
    for attr in &node.attrs {
        if is_prop(attr.key) {
            continue;
        }
        if attr.key == "cursor" {
            if !(interactive_role && attr.value.as_deref() == Some("pointer")) {
                cursor = Some(attr);
            }
            continue;
        }
        if attr.key == "cut" {
            let earlier = attr.value.as_deref().and_then(|v| v.parse::<usize>().ok());
            if let (Some(total), Some(earlier)) = (cut.as_mut(), earlier) {
                *total += earlier;
                continue;
            }
        }
        write_attr(out, attr.key, attr.value.as_deref());
    }
    let implicable = ref_implicable(node);
    let mut noref = false;
    if node.uid.is_empty() {
        if style == RefStyle::Implied && implicable && prev.is_some() {
            write_attr(out, NOREF, None);
            noref = true;
        }
    } else {
        let implied = style == RefStyle::Implied
            && implicable
            && prev.as_deref().and_then(next_ref).as_deref() == Some(node.uid);
        if !implied {
            write_attr(out, "ref", Some(node.uid));
        }
        *prev = Some(node.uid.to_string());
    }
    if let Some(attr) = cursor {
        write_attr(out, attr.key, attr.value.as_deref());
    }
    if let Some(n) = cut {
        write_attr(out, "cut", Some(&n.to_string()));
    }
    noref
}

/// One node's line (every ref explicit), for search hits.
pub fn element_line(tree: &Tree<'_>, id: usize) -> String {
    let mut r = Rendered::default();
    let Some(node) = tree.nodes.get(id) else {
        return String::new();
    };
    let mut key = String::new();
    write_element_key(&mut key, node, RefStyle::Explicit, &mut None);
    r.text.push_str("- ");
    write_key(&mut r.text, &key);
    let text_child = tree
        .children(id)
        .iter()
        .filter_map(|&c| tree.nodes.get(c))
        .find(|c| is_text(c) && c.raw.is_none());
    if let Some(t) = text_child {
        r.text.push_str(": ");
        write_value(&mut r.text, t.name_str());
    }
    r.text
}
