//! Reads a Playwright MCP ARIA snapshot (the YAML inside `### Snapshot`) into the shared
//! [`Tree`]: one node per `- role "name" [attr] [ref=e12]: text` line, the inline text as a
//! role-less child, `- text: …` lines as role-less nodes, `- /url: …` lines as attributes of
//! their element (key `/url`, so the renderer writes them back as property lines), refs as
//! uids. Our own output reads back too: the legend comment turns on implied refs (see
//! `render`), `- '… N hidden …'` lines are markers. Lines that are none of these stay verbatim.
//! An explicit stack builds the tree, so any depth works.

use std::borrow::Cow;

use super::refs::{next_ref, ref_implicable, NOREF};
use super::table;
use super::yaml::{read_double_quoted, read_single_quoted, read_value};
use crate::snapshot::tree::{Attr, Node, NodeKind, Tree};

/// First characters of our legend comment: a body starting with it is our own output.
pub const LEGEND_TAG: &str = "# snapshot-filter";
enum Item<'a> {
    Element {
        node: Node<'a>,
        inline_text: Option<Cow<'a, str>>,
        noref: bool,
    },
    Prop {
        key: &'a str,
        value: Cow<'a, str>,
    },
    Text(Cow<'a, str>),
    Marker(Cow<'a, str>),
    /// A table row of ours: the nodes of its ref cells (a combobox's options after it).
    Row(Vec<Node<'a>>),
    Verbatim,
}

struct Line<'a> {
    depth: usize,
    raw: &'a str,
    item: Item<'a>,
}

/// A snapshot's lines, read one at a time as they are linked into a tree (`Scan::lines`):
/// never held all at once, since a big page's lines, each with its node, cost more memory than
/// the tree they make.
pub struct Scan<'a> {
    /// The lines after the legend, without the final newline; `None` when there are none
    /// (`Some("")` is one empty line).
    body: Option<&'a str>,
    /// The body carried our legend line: refs may be implied.
    light: bool,
    legend: Option<&'a str>,
    trailing_newline: bool,
}

/// Parses a snapshot body; implied refs (our own output) are written into `implied`, which the
/// tree borrows.
pub fn parse<'a>(text: &'a str, implied: &'a mut Vec<String>) -> Tree<'a> {
    let scan = scan(text);
    *implied = scan.implied_refs();
    let implied: &'a Vec<String> = implied;
    scan.build(implied)
}

pub fn scan(text: &str) -> Scan<'_> {
    let trailing_newline = text.ends_with('\n');
    let body = text.strip_suffix('\n').unwrap_or(text);
    let first = body.split('\n').next().unwrap_or(body);
    let legend = first.starts_with(LEGEND_TAG).then_some(first);
    let body = match legend {
        _ if text.is_empty() => None,
        Some(_) => body.split_once('\n').map(|(_, rest)| rest),
        None => Some(body),
    };
    Scan {
        body,
        light: legend.is_some(),
        legend,
        trailing_newline,
    }
}

/// The lines of a body (see `Scan::lines`).
struct Lines<'a> {
    /// `None` once the body is read (an empty body has no line).
    rest: Option<&'a str>,
    /// The header of the table whose rows follow, and how many are left.
    table: Option<(table::Header<'a>, usize)>,
}

impl<'a> Iterator for Lines<'a> {
    type Item = Line<'a>;

    fn next(&mut self) -> Option<Line<'a>> {
        let rest = self.rest?;
        let raw = match rest.split_once('\n') {
            Some((raw, after)) => {
                self.rest = Some(after);
                raw
            }
            None => {
                self.rest = None;
                rest
            }
        };
        let (depth, item) = read_line(raw);
        if let Some((header, left)) = self.table.as_mut().filter(|(_, left)| *left > 0) {
            *left -= 1;
            let row = table::item_text(raw).and_then(|t| table::read_row(t, header));
            if let Some(nodes) = row {
                let item = Item::Row(nodes);
                return Some(Line { depth, raw, item });
            }
        }
        if matches!(item, Item::Marker(_)) {
            self.table = table::item_text(raw).and_then(table::read_header).map(|h| {
                let rows = h.rows;
                (h, rows)
            });
        }
        Some(Line { depth, raw, item })
    }
}

impl<'a> Scan<'a> {
    /// The lines after the legend, read as they come.
    fn lines(&self) -> Lines<'a> {
        Lines {
            rest: self.body,
            table: None,
        }
    }

    /// The refs our renderer left implied, in document order (empty unless `light`).
    pub fn implied_refs(&self) -> Vec<String> {
        let mut out = Vec::new();
        if !self.light {
            return out;
        }
        let mut prev: Option<String> = None;
        for line in self.lines() {
            let Item::Element { node, noref, .. } = &line.item else {
                continue;
            };
            if !node.uid.is_empty() {
                prev = Some(node.uid.to_string());
            } else if !noref && ref_implicable(node) {
                if let Some(next) = prev.as_deref().and_then(next_ref) {
                    out.push(next.clone());
                    prev = Some(next);
                }
            }
        }
        out
    }

    /// Links the lines into a tree; `implied` is what `implied_refs` returned.
    pub fn build<'b>(self, implied: &'b [String]) -> Tree<'b>
    where
        'a: 'b,
    {
        let mut tree = Tree {
            trailing_newline: self.trailing_newline,
            light_notation: self.light,
            // Playwright keeps rows, list items and cards as nodes with their cells under them.
            nested_records: true,
            ..Tree::default()
        };
        let mut implied = implied.iter();
        let mut prev_set = false;
        let mut stack: Vec<(usize, usize)> = Vec::new();
        let parent_for = |stack: &mut Vec<(usize, usize)>, depth: usize| {
            while stack.last().is_some_and(|&(d, _)| d >= depth) {
                stack.pop();
            }
            stack.last().map(|&(_, id)| id)
        };
        // About one node a line (inline texts add some, `/url` lines none): the arena is sized
        // once instead of regrown, each regrowth a copy of it.
        let lines = self
            .body
            .map_or(0, |b| b.bytes().filter(|&c| c == b'\n').count() + 1);
        tree.reserve(lines);
        for line in self.lines() {
            let depth = line.depth;
            match line.item {
                Item::Element {
                    mut node,
                    inline_text,
                    noref,
                } => {
                    node.raw = Some(line.raw);
                    if !node.uid.is_empty() {
                        prev_set = true;
                    } else if self.light && prev_set && !noref && ref_implicable(&node) {
                        if let Some(r) = implied.next() {
                            node.uid = r.as_str();
                        }
                    }
                    let parent = parent_for(&mut stack, depth);
                    let id = tree.push(node, parent);
                    stack.push((depth, id));
                    if let Some(text) = inline_text {
                        let mut child = Node::new(NodeKind::Element, None);
                        child.name = Some(text);
                        tree.push(child, Some(id));
                    }
                }
                Item::Prop { key, value } => {
                    let owner = parent_for(&mut stack, depth);
                    match owner.and_then(|o| tree.nodes.get_mut(o)) {
                        Some(node) => node.attrs.push(Attr {
                            key,
                            value: Some(value),
                        }),
                        None => {
                            tree.unreadable_lines += 1;
                            tree.push(Node::new(NodeKind::Verbatim, Some(line.raw)), owner);
                        }
                    }
                }
                Item::Text(text) => {
                    let parent = parent_for(&mut stack, depth);
                    let mut node = Node::new(NodeKind::Element, Some(line.raw));
                    node.name = Some(text);
                    tree.push(node, parent);
                }
                Item::Marker(text) => {
                    let parent = parent_for(&mut stack, depth);
                    let mut node = Node::new(NodeKind::Marker, Some(line.raw));
                    node.name = Some(text);
                    tree.push(node, parent);
                }
                Item::Row(nodes) => {
                    // Siblings where the row stands; options under their combobox.
                    let parent = parent_for(&mut stack, depth);
                    let mut owner = parent;
                    let mut raw = Some(line.raw);
                    for mut node in nodes {
                        // Options and a control's value text: under their control.
                        if node.uid.is_empty() {
                            tree.push(node, owner);
                            continue;
                        }
                        node.raw = raw.take();
                        owner = Some(tree.push(node, parent));
                    }
                }
                Item::Verbatim => {
                    tree.unreadable_lines += 1;
                    let parent = parent_for(&mut stack, depth);
                    tree.push(Node::new(NodeKind::Verbatim, Some(line.raw)), parent);
                }
            }
        }
        tree.seal();
        tree
    }

    pub fn legend(&self) -> Option<&'a str> {
        self.legend
    }
}

fn read_line(raw: &str) -> (usize, Item<'_>) {
    let rest = raw.trim_start_matches(' ');
    let depth = (raw.len() - rest.len()) / 2;
    let Some(item) = rest.strip_prefix("- ") else {
        return (depth, Item::Verbatim);
    };
    (depth, read_item(item).unwrap_or(Item::Verbatim))
}

fn read_item(item: &str) -> Option<Item<'_>> {
    // The key (quoted or plain), and what follows it: nothing, `:` or `: value`.
    let (key, raw_inner, after): (Cow<'_, str>, &str, &str) = if item.starts_with('\'') {
        let (key, after) = read_single_quoted(item)?;
        let inner_len = item.len() - after.len() - 2;
        (key, item.get(1..1 + inner_len)?, after)
    } else if item.starts_with('"') {
        let (key, after) = read_double_quoted(item)?;
        let inner_len = item.len() - after.len() - 2;
        (key, item.get(1..1 + inner_len)?, after)
    } else {
        let end = item
            .find(": ")
            .or_else(|| item.ends_with(':').then(|| item.len() - 1))
            .unwrap_or(item.len());
        let key = item.get(..end)?;
        (Cow::Borrowed(key), key, item.get(end..)?)
    };
    let value = match after {
        "" | ":" => None,
        _ => Some(read_value(after.strip_prefix(": ")?)),
    };
    if key.starts_with('…') && after.is_empty() && item.starts_with('\'') {
        return Some(Item::Marker(key));
    }
    if let Some(prop) = raw_inner.strip_prefix('/') {
        let valid = !prop.is_empty()
            && prop
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
            && key.as_ref() == raw_inner;
        return valid.then(|| Item::Prop {
            key: raw_inner,
            value: value.unwrap_or(Cow::Borrowed("")),
        });
    }
    if key.as_ref() == "text" && after != ":" {
        return value.map(Item::Text);
    }
    let (node, noref) = read_key(&key, raw_inner)?;
    Some(Item::Element {
        node,
        inline_text: value,
        noref,
    })
}

fn is_role(s: &str) -> bool {
    let mut bytes = s.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_alphabetic())
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// `role "name" [attr] [ref=e1]`. `key` is the decoded key, `raw_inner` the same text as it
/// stands in the line (they differ only inside the name when the key was quoted).
fn read_key<'a>(key: &Cow<'a, str>, raw_inner: &'a str) -> Option<(Node<'a>, bool)> {
    let k: &str = key.as_ref();
    let role_len = k.find(' ').unwrap_or(k.len());
    let role = raw_inner.get(..role_len)?;
    if !is_role(role) || k.get(..role_len)? != role {
        return None;
    }
    let mut node = Node::new(NodeKind::Element, None);
    node.role = role;
    let rest = k.get(role_len..)?;
    let attrs_text: &str =
        if let Some(quoted) = rest.strip_prefix(' ').filter(|r| r.starts_with('"')) {
            let (name, after) = read_double_quoted(quoted)?;
            node.name = Some(match key {
                Cow::Borrowed(b) => {
                    let start = b.len() - quoted.len();
                    read_double_quoted(b.get(start..)?)?.0
                }
                Cow::Owned(_) => Cow::Owned(name.into_owned()),
            });
            after
        } else if let Some(regex) = rest.strip_prefix(" /") {
            // A name Playwright wrote unquoted because it starts and ends with '/'.
            let end = regex.find("/ [").map(|e| e + 1).unwrap_or_else(|| {
                if regex.ends_with('/') {
                    regex.len()
                } else {
                    usize::MAX
                }
            });
            let name = regex.get(..end)?;
            let full = format!("/{name}");
            node.name = Some(match key {
                Cow::Borrowed(b) => {
                    let start = b.len() - rest.len() + 1;
                    Cow::Borrowed(b.get(start..start + full.len())?)
                }
                Cow::Owned(_) => Cow::Owned(full),
            });
            regex.get(end..)?
        } else {
            rest
        };
    // Attribute tokens hold no quote, so they read the same in the raw line.
    let raw_attrs = raw_inner.get(raw_inner.len().checked_sub(attrs_text.len())?..)?;
    if raw_attrs != attrs_text {
        return None;
    }
    let mut noref = false;
    let mut s = raw_attrs;
    while !s.is_empty() {
        let token = s.strip_prefix(" [")?;
        let end = token.find(']')?;
        let inner = token.get(..end)?;
        s = token.get(end + 1..)?;
        match inner.split_once('=') {
            Some(("ref", r)) if !r.is_empty() && node.uid.is_empty() => node.uid = r,
            // A second (or empty) ref is no line Playwright writes: kept verbatim, it cannot
            // become the node's ref in the output (fuzz/, `fuzz_regressions`).
            Some(("ref", _)) => return None,
            Some((k, v)) if is_role(k) => node.attrs.push(Attr {
                key: k,
                value: Some(Cow::Borrowed(v)),
            }),
            None if inner == NOREF => noref = true,
            None if is_role(inner) => node.attrs.push(Attr {
                key: inner,
                value: None,
            }),
            _ => return None,
        }
    }
    Some((node, noref))
}
