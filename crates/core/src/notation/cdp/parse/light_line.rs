//! One line of our light notation.

use std::borrow::Cow;

use super::super::syntax::is_uid;
use super::super::syntax::{CHILDREN_SEPARATOR, SIBLING_SEPARATOR};
use super::builder::Builder;
use super::raw_attrs::{is_key, DEVTOOLS_SELECTED};
use super::scan::{split_indent, LineIndex};
use crate::notation::escape::{read_escaped, unescape, unescape_link_text};
use crate::snapshot::tree::{Attr, Node, NodeKind, Tree};

/// One line of the light notation: a node (or a run of text nodes), a marker, or an escaped
/// verbatim line.
pub(super) fn parse_light_line<'a>(
    tree: &mut Tree<'a>,
    builder: &mut Builder,
    lines: &LineIndex<'a>,
    i: usize,
) -> usize {
    let Some(line) = lines.line(i) else { return 1 };
    let (indent, rest) = split_indent(line);
    let depth = indent / 2;
    if rest.starts_with('…') {
        let mut marker = Node::new(NodeKind::Marker, Some(line));
        marker.name = Some(Cow::Borrowed(rest));
        builder.add_leaf(tree, marker, depth);
        // A table's header: its rows follow at its indent, each the nodes of its uid cells.
        let Some(header) = super::super::table::read_header(rest) else {
            return 1;
        };
        let mut consumed = 1;
        while consumed <= header.rows {
            let Some(row_line) = lines.line(i + consumed) else {
                break;
            };
            // A row at the header's indent (its first cell may be a text with spaces of its own).
            let Some(row) = row_line.strip_prefix(line.get(..indent).unwrap_or("")) else {
                break;
            };
            let Some(nodes) = super::super::table::read_row(row, row_line, &header) else {
                break;
            };
            for node in nodes {
                builder.add_element(tree, node, depth);
            }
            consumed += 1;
        }
        return consumed;
    }
    if let Some(verbatim) = rest.strip_prefix('\\') {
        tree.unreadable_lines += 1;
        let parent = builder.parent_for(depth);
        tree.push(Node::new(NodeKind::Verbatim, Some(verbatim)), parent);
        return 1;
    }
    match read_light_nodes(rest, line) {
        Some(nodes) => {
            for (node, is_child) in nodes {
                builder.add_element(tree, node, depth + usize::from(is_child));
            }
        }
        None => builder.add_verbatim(tree, line),
    }
    1
}

/// Where a uid, role or bare value ends: at a space, the sibling separator or the line's end.
fn token_end(s: &str) -> usize {
    s.bytes()
        .position(|b| b == b' ' || b == SIBLING_SEPARATOR as u8)
        .unwrap_or(s.len())
}

/// What follows a node on a light line.
enum Next<'a> {
    /// A sibling (after `|`), the rest starting at its uid.
    Sibling(&'a str),
    /// The node's first child (after ` > `), the rest starting at its uid.
    Children(&'a str),
}

/// `s` starts with `|UID` or ` > UID`: the next node of the line.
fn next_node(s: &str) -> Option<Next<'_>> {
    let starts_with_uid = |t: &str| t.get(..token_end(t)).is_some_and(is_uid);
    if let Some(t) = s.strip_prefix(SIBLING_SEPARATOR) {
        return starts_with_uid(t).then_some(Next::Sibling(t));
    }
    let t = s.strip_prefix(CHILDREN_SEPARATOR)?;
    starts_with_uid(t).then_some(Next::Children(t))
}

/// A link's `[text](url)` at the start of `s` (which starts after the `[`): the raw text, the
/// url (balanced parentheses) and the rest.
fn read_link(s: &str) -> Option<(&str, &str, &str)> {
    let bytes = s.as_bytes();
    let mut k = 0;
    let close = loop {
        match bytes.get(k)? {
            b'\\' => k += 2,
            b']' => break k,
            _ => k += 1,
        }
    };
    let url_start = close + 2;
    if bytes.get(close + 1) != Some(&b'(') {
        return None;
    }
    let mut open = 1usize;
    let mut j = url_start;
    while open > 0 {
        match bytes.get(j)? {
            b'(' => open += 1,
            b')' => open -= 1,
            _ => {}
        }
        j += 1;
    }
    Some((s.get(..close)?, s.get(url_start..j - 1)?, s.get(j..)?))
}

/// The nodes of one light line: `uid role "name" attrs` (a link: `uid [name](url) attrs`),
/// siblings after `|`, and after ` > ` the first node's children (flagged `true`).
fn read_light_nodes<'a>(rest: &'a str, line: &'a str) -> Option<Vec<(Node<'a>, bool)>> {
    let mut nodes = Vec::new();
    let mut s = rest;
    let mut children = false;
    loop {
        let (uid, after) = s.split_at(token_end(s));
        if !is_uid(uid) {
            return None;
        }
        let mut node = Node::new(
            NodeKind::Element,
            if nodes.is_empty() { Some(line) } else { None },
        );
        node.uid = uid;
        s = after;
        if let Some(link) = s.strip_prefix(" [") {
            let (name, url, r) = read_link(link)?;
            node.role = "link";
            node.name = Some(unescape_link_text(name));
            node.attrs.push(Attr {
                key: "url",
                value: Some(Cow::Borrowed(url)),
            });
            s = r;
        } else {
            if let Some(t) = s.strip_prefix(' ').filter(|_| next_node(s).is_none()) {
                let (role, r) = t.split_at(token_end(t));
                if !t.starts_with('"') && !role.is_empty() {
                    node.role = role;
                    s = r;
                }
            }
            if let Some(quoted) = s.strip_prefix(" \"") {
                let (name, r) = read_escaped(quoted)?;
                node.name = Some(unescape(name));
                s = r;
            }
        }
        let next = parse_light_attrs(&mut node, s);
        nodes.push((node, children));
        match next {
            Some(Next::Sibling(t)) => s = t,
            Some(Next::Children(t)) if !children && nodes.len() == 1 => {
                children = true;
                s = t;
            }
            Some(Next::Children(_)) => return None,
            None => return Some(nodes),
        }
    }
}

/// Reads the attributes of one node; returns where the next node of the line starts.
fn parse_light_attrs<'a>(node: &mut Node<'a>, tail: &'a str) -> Option<Next<'a>> {
    let mut s = tail;
    loop {
        if s == DEVTOOLS_SELECTED {
            node.devtools_selected = true;
            return None;
        }
        if let Some(next) = next_node(s) {
            return Some(next);
        }
        let Some(t) = s.strip_prefix(' ') else {
            break;
        };
        let key_len = t
            .bytes()
            .position(|b| b == b' ' || b == b'=' || b == SIBLING_SEPARATOR as u8)
            .unwrap_or(t.len());
        let (key, r) = t.split_at(key_len);
        if !is_key(key) {
            break;
        }
        if let Some(quoted) = r.strip_prefix("=\"") {
            match read_escaped(quoted) {
                Some((value, r2)) => {
                    node.attrs.push(Attr {
                        key,
                        value: Some(unescape(value)),
                    });
                    s = r2;
                }
                None => break,
            }
        } else if let Some(r2) = r.strip_prefix('=') {
            // A bare value: up to the next space or sibling.
            let v_len = token_end(r2);
            let (value, r3) = r2.split_at(v_len);
            node.attrs.push(Attr {
                key,
                value: Some(Cow::Borrowed(value)),
            });
            s = r3;
        } else {
            node.attrs.push(Attr { key, value: None });
            s = r;
        }
    }
    if !s.is_empty() {
        node.attrs.push(Attr {
            key: s.strip_prefix(' ').unwrap_or(s),
            value: None,
        });
    }
    None
}
