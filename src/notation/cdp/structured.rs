//! The snapshot as chrome-devtools-mcp gives it beside its text with
//! `--experimentalStructuredContent` (`structuredContent.snapshot`: `id`, `role`, `name`, the
//! attributes, `children`): an exact tree where the text is ambiguous (page text holding quotes
//! and line breaks). Read into the same [`Tree`] as the text, node for node as upstream prints
//! the text: `StaticText` without a role, `none` as `ignored`, attributes sorted, capability words
//! as upstream writes them, an option's `value` left out when it repeats its name, and children
//! that only repeat their parent's name left out where the text leaves them out.

use std::borrow::Cow;
use std::collections::HashSet;

use serde_json::{Map, Value};

use super::parse::{is_key, is_uid, DEVTOOLS_SELECTED};
use crate::snapshot::tree::{Attr, Node, NodeKind, Tree};

/// Keys of a structured node that are not attributes.
const NOT_ATTRIBUTES: [&str; 7] = [
    "id",
    "role",
    "name",
    "children",
    "elementHandle",
    "backendNodeId",
    "loaderId",
];

/// The tree of `snapshot` (the value of `structuredContent.snapshot`), read beside `text`, the
/// snapshot's text body (what it gives that the tree does not: the note lines before the tree,
/// the DevTools selection suffix, which text children it prints). `None` when `snapshot` is not a
/// snapshot tree as upstream writes it (every id `N_M`, roles and attribute keys plain words):
/// the text is read instead.
pub fn tree_from_structured<'a>(snapshot: &'a Value, text: &'a str) -> Option<Tree<'a>> {
    let root = snapshot.as_object()?;
    uid_of(root)?;
    let printed = TextFacts::of(text);
    let mut tree = Tree {
        trailing_newline: text.ends_with('\n'),
        ..Tree::default()
    };
    for &line in &printed.note_lines {
        tree.push(Node::new(NodeKind::Verbatim, Some(line)), None);
    }
    // Explicit stack (trees may be thousands of levels deep): (node, parent id, depth).
    let mut stack: Vec<(&'a Map<String, Value>, Option<usize>, usize)> = vec![(root, None, 0)];
    while let Some((object, parent, depth)) = stack.pop() {
        let fields = Fields::of(object);
        let Some(uid) = fields.uid() else {
            // Not a node: its subtree is not read (the text fallback would be no better).
            return None;
        };
        let mut node = Node::new(NodeKind::Element, None);
        node.uid = uid;
        let role = fields.role.unwrap_or("");
        if !is_role(role) {
            return None;
        }
        node.role = match role {
            "StaticText" => "",
            "none" => "ignored",
            other => other,
        };
        let name = fields.name.filter(|n| !n.is_empty());
        node.name = name.map(Cow::Borrowed);
        node.attrs = attributes(fields.attrs, role, name)?;
        node.devtools_selected = printed.selected == Some(uid);
        let id = tree.push(node, parent);
        if let Some(children) = fields
            .children
            .filter(|c| printed.shows_children(name, c, depth + 1))
        {
            for child in children.iter().rev() {
                stack.push((child.as_object()?, Some(id), depth + 1));
            }
        }
    }
    Some(tree)
}

/// The members of a structured node, read in one pass over them (a page has tens of
/// thousands of nodes: a lookup per member would hash every key again).
struct Fields<'a> {
    id: Option<&'a str>,
    role: Option<&'a str>,
    name: Option<&'a str>,
    children: Option<&'a [Value]>,
    /// The members that are not in `NOT_ATTRIBUTES`, in their order.
    attrs: Vec<(&'a str, &'a Value)>,
}

impl<'a> Fields<'a> {
    fn of(object: &'a Map<String, Value>) -> Fields<'a> {
        let mut fields = Fields {
            id: None,
            role: None,
            name: None,
            children: None,
            attrs: Vec::with_capacity(object.len().saturating_sub(3)),
        };
        // Keys are unique in a `Map`: each slot is set once at most.
        for (key, value) in object {
            match key.as_str() {
                "id" => fields.id = value.as_str(),
                "role" => fields.role = value.as_str(),
                "name" => fields.name = value.as_str(),
                "children" => fields.children = value.as_array().map(Vec::as_slice),
                k if NOT_ATTRIBUTES.contains(&k) => {}
                k => fields.attrs.push((k, value)),
            }
        }
        fields
    }

    fn uid(&self) -> Option<&'a str> {
        self.id.filter(|id| is_uid(id))
    }
}

fn uid_of(object: &Map<String, Value>) -> Option<&str> {
    object
        .get("id")
        .and_then(Value::as_str)
        .filter(|id| is_uid(id))
}

/// A role as upstream prints them: one word (`RootWebArea`, `doc-noteref`).
fn is_role(role: &str) -> bool {
    role.bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// The attributes as upstream prints them: keys sorted (a capability word sorts just before its
/// state word, as upstream places it), `true` as a bare word, strings and numbers as values.
fn attributes<'a>(
    mut members: Vec<(&'a str, &'a Value)>,
    role: &str,
    name: Option<&str>,
) -> Option<Vec<Attr<'a>>> {
    // Keys are unique (`Fields::of`): sorted by key alone.
    members.sort_unstable_by_key(|&(key, _)| key);
    let option = role == "option";
    let mut attrs = Vec::with_capacity(members.len());
    for (key, value) in members {
        if !is_key(key) {
            return None;
        }
        let value = match value {
            Value::Bool(true) if !(option && key == "selectable") => None,
            Value::String(s) if !(option && key == "value" && Some(s.as_str()) == name) => {
                Some(Cow::Borrowed(s.as_str()))
            }
            Value::Number(n) => Some(Cow::Owned(n.to_string())),
            _ => continue,
        };
        attrs.push(Attr { key, value });
    }
    Some(attrs)
}

/// What the text of the same snapshot says that the tree does not.
struct TextFacts<'a> {
    /// Lines before the first node line (upstream's note about a selected element).
    note_lines: Vec<&'a str>,
    /// The uid of the line ending with the DevTools selection suffix.
    selected: Option<&'a str>,
    /// Uids that start a line of the text, with the depth of the line.
    line_uids: HashSet<(&'a str, usize)>,
}

impl<'a> TextFacts<'a> {
    fn of(text: &'a str) -> TextFacts<'a> {
        let body = text.strip_suffix('\n').unwrap_or(text);
        let mut facts = TextFacts {
            note_lines: Vec::new(),
            selected: None,
            // A set per line, sized at once: growing it rehashes every uid again.
            line_uids: HashSet::with_capacity(body.bytes().filter(|&b| b == b'\n').count() + 1),
        };
        let mut in_tree = false;
        for line in body.split('\n') {
            let rest = line.trim_start_matches(' ');
            let depth = (line.len() - rest.len()) / 2;
            let Some(after) = rest.strip_prefix("uid=") else {
                if !in_tree && !body.is_empty() {
                    facts.note_lines.push(line);
                }
                continue;
            };
            in_tree = true;
            let uid = after
                .get(..after.find(' ').unwrap_or(after.len()))
                .unwrap_or("");
            facts.line_uids.insert((uid, depth));
            if line.ends_with(DEVTOOLS_SELECTED) && facts.selected.is_none() {
                facts.selected = Some(uid);
            }
        }
        facts
    }

    /// Upstream leaves out the children of a named node when they are all childless text
    /// that only repeats its name (unless the snapshot is verbose): the text says which, by a
    /// line of the first child's uid at the children's depth.
    fn shows_children(&self, name: Option<&str>, children: &[Value], depth: usize) -> bool {
        let repeats_name = name.is_some_and(|name| {
            let visible = |c: &char| !c.is_whitespace();
            children.iter().all(|c| text_leaf_name(c).is_some())
                && children
                    .iter()
                    .filter_map(text_leaf_name)
                    .flat_map(str::chars)
                    .filter(visible)
                    .eq(name.chars().filter(visible))
        });
        if !repeats_name || children.is_empty() {
            return true;
        }
        children
            .first()
            .and_then(Value::as_object)
            .and_then(|c| uid_of(c))
            .is_some_and(|uid| self.line_uids.contains(&(uid, depth)))
    }
}

/// The name of a childless `StaticText` node (`""` when it has none), read in one pass over its
/// members; `None` for any other node.
fn text_leaf_name(node: &Value) -> Option<&str> {
    let (mut role, mut name, mut leaf) = (None, None, true);
    for (key, value) in node.as_object()? {
        match key.as_str() {
            "role" => role = value.as_str(),
            "name" => name = value.as_str(),
            "children" => leaf = value.as_array().is_none_or(|c| c.is_empty()),
            _ => {}
        }
    }
    (role == Some("StaticText") && leaf).then_some(name.unwrap_or(""))
}
