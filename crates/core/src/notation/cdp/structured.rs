//! The snapshot as chrome-devtools-mcp gives it beside its text with
//! `--experimentalStructuredContent` (`structuredContent.snapshot`: `id`, `role`, `name`, the
//! attributes, `children`): an exact tree where the text is ambiguous (page text holding quotes
//! and line breaks). Read into the same [`Tree`] as the text, node for node as upstream prints
//! the text: `StaticText` without a role, `none` as `ignored`, attributes sorted, capability words
//! as upstream writes them, an option's `value` left out when it repeats its name, and children
//! that only repeat their parent's name left out where the text leaves them out.
//!
//! The JSON is read once into a [`StructuredSnapshot`] (its nodes' members, strings borrowed from
//! the JSON text where they hold no escape), never into a `serde_json::Value`: a page's snapshot is
//! megabytes, and a `Value` of it costs more to build and drop than the filter that reads it.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::parse::{is_key, DEVTOOLS_SELECTED};
use super::syntax::is_uid;
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

/// The members of `structuredContent.snapshot` the tree is read from, node by node in document
/// order (the root first). A member repeated in one object: the last one counts (as in a
/// `Value`; `crate::result::structured` reads a repeated key through a `Value` anyway).
#[derive(Debug, Default)]
pub struct StructuredSnapshot<'j> {
    nodes: Vec<SNode<'j>>,
    /// Every node's children (indices into `nodes`), a range of it each.
    children: Vec<u32>,
    /// Every node's attribute members (those not in `NOT_ATTRIBUTES`), a range of it each.
    attrs: Vec<(Cow<'j, str>, Member<'j>)>,
    /// Children of the arrays being read, before they are moved to `children`.
    pending: Vec<u32>,
    /// Attribute members of the nodes being read (a node's children come between them), before
    /// they are moved to `attrs`.
    pending_attrs: Vec<(Cow<'j, str>, Member<'j>)>,
}

/// A value of `snapshot` where a node is expected: an object's members, or not an object.
#[derive(Debug, Default)]
struct SNode<'j> {
    object: bool,
    /// `id`, `role`, `name` when they are strings.
    id: Option<Cow<'j, str>>,
    role: Option<Cow<'j, str>>,
    name: Option<Cow<'j, str>>,
    /// `children` when it is an array (a range of `StructuredSnapshot::children`).
    children: Option<(u32, u32)>,
    attrs: (u32, u32),
}

/// An attribute member's value, as far as the tree tells them apart.
#[derive(Debug)]
enum Member<'j> {
    True,
    Str(Cow<'j, str>),
    Number(serde_json::Number),
    /// `false`, `null`, an array or an object: not written.
    Other,
}

impl<'j> StructuredSnapshot<'j> {
    /// The snapshot of `json`, the text of `structuredContent.snapshot`; `None` when it is not
    /// JSON (the caller has checked it is).
    pub fn read(json: &'j str) -> Option<StructuredSnapshot<'j>> {
        let mut de = serde_json::Deserializer::from_str(json);
        let snapshot = Self::from_deserializer(&mut de).ok()?;
        de.end().ok()?;
        Some(snapshot)
    }

    /// The snapshot of `value` (read the same way, strings borrowed from it).
    pub fn of_value(value: &'j Value) -> Option<StructuredSnapshot<'j>> {
        Self::from_deserializer(value).ok()
    }

    fn from_deserializer<D: Deserializer<'j>>(de: D) -> Result<StructuredSnapshot<'j>, D::Error> {
        SnapshotSeed(&mut ()).deserialize(de)
    }

    /// Its root is an object (a snapshot's is).
    pub fn root_is_object(&self) -> bool {
        self.nodes.first().is_some_and(|root| root.object)
    }

    /// The same, its strings copied (no longer borrowed from the JSON).
    pub fn into_owned(self) -> StructuredSnapshot<'static> {
        let owned = |s: Option<Cow<'_, str>>| s.map(|s| Cow::Owned(s.into_owned()));
        StructuredSnapshot {
            nodes: self
                .nodes
                .into_iter()
                .map(|n| SNode {
                    object: n.object,
                    id: owned(n.id),
                    role: owned(n.role),
                    name: owned(n.name),
                    children: n.children,
                    attrs: n.attrs,
                })
                .collect(),
            children: self.children,
            attrs: self
                .attrs
                .into_iter()
                .map(|(k, v)| (Cow::Owned(k.into_owned()), v.into_owned()))
                .collect(),
            pending: Vec::new(),
            pending_attrs: Vec::new(),
        }
    }

    fn children_of(&self, node: &SNode<'j>) -> Option<&[u32]> {
        node.children
            .map(|(start, end)| &self.children[start as usize..end as usize])
    }

    /// The tree of this snapshot, read beside `text`, the snapshot's text body (what it gives
    /// that the tree does not: the note lines before the tree, the DevTools selection suffix,
    /// which text children it prints). `None` when it is not a snapshot tree as upstream writes
    /// it (every id `N_M`, roles and attribute keys plain words): the text is read instead.
    pub fn tree<'a>(&'a self, text: &'a str) -> Option<Tree<'a>> {
        let root = self.nodes.first()?;
        if !root.object {
            return None;
        }
        root.uid()?;
        let printed = TextFacts::of(text);
        let mut tree = Tree {
            trailing_newline: text.ends_with('\n'),
            ..Tree::default()
        };
        // At most a node each, and the note lines.
        tree.reserve(self.nodes.len() + printed.note_lines.len());
        for &line in &printed.note_lines {
            tree.push(Node::new(NodeKind::Verbatim, Some(line)), None);
        }
        // Explicit stack (trees may be thousands of levels deep): (node, parent id, depth).
        let mut stack: Vec<(usize, Option<usize>, usize)> = vec![(0, None, 0)];
        while let Some((index, parent, depth)) = stack.pop() {
            let fields = self.nodes.get(index)?;
            // Not a node: its subtree is not read (the text fallback would be no better).
            if !fields.object {
                return None;
            }
            let uid = fields.uid()?;
            let mut node = Node::new(NodeKind::Element, None);
            node.uid = uid;
            let role = fields.role.as_deref().unwrap_or("");
            if !is_role(role) {
                return None;
            }
            node.role = match role {
                "StaticText" => "",
                "none" => "ignored",
                other => other,
            };
            let name = fields.name.as_deref().filter(|n| !n.is_empty());
            node.name = name.map(Cow::Borrowed);
            let (start, end) = fields.attrs;
            node.attrs = attributes(&self.attrs[start as usize..end as usize], role, name)?;
            node.devtools_selected = printed.selected == Some(uid);
            let id = tree.push(node, parent);
            if let Some(children) = self
                .children_of(fields)
                .filter(|c| printed.shows_children(self, name, c, depth + 1))
            {
                for &child in children.iter().rev() {
                    stack.push((child as usize, Some(id), depth + 1));
                }
            }
        }
        tree.seal();
        Some(tree)
    }

    /// The name of a childless `StaticText` node (`""` when it has none); `None` for any other
    /// node.
    fn text_leaf_name(&self, index: u32) -> Option<&str> {
        let node = self.nodes.get(index as usize)?;
        let leaf = self.children_of(node).is_none_or(<[u32]>::is_empty);
        (node.object && node.role.as_deref() == Some("StaticText") && leaf)
            .then(|| node.name.as_deref().unwrap_or(""))
    }
}

impl SNode<'_> {
    fn uid(&self) -> Option<&str> {
        self.id.as_deref().filter(|id| is_uid(id))
    }
}

/// What else is done with the JSON a snapshot is read from, told each piece as it is read, so
/// that the JSON is read once (the measure of `structuredContent`: `crate::result::structured`).
/// `()` does nothing.
pub(crate) trait Echo<'j> {
    /// `{` or `[` opens: an error past the nesting allowed.
    fn open(&mut self, bracket: u8) -> Result<(), String>;
    /// `}` or `]` closes: an error when a key repeats in the object.
    fn close(&mut self, bracket: u8) -> Result<(), String>;
    /// An object's member starts, with its key (the first member or not). A `Cow`: the echo
    /// may keep the key, a borrowed one without copying it.
    #[allow(clippy::ptr_arg)]
    fn key(&mut self, key: &Cow<'j, str>, first: bool);
    /// An array's element starts (the first or not).
    fn element(&mut self, first: bool);
    /// A string, number, boolean or null.
    fn scalar(&mut self, scalar: Scalar<'_>);
    /// A value the tree does not read, read whole here.
    fn whole<D: Deserializer<'j>>(&mut self, de: D) -> Result<(), D::Error>;
}

/// A JSON scalar as read.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Scalar<'a> {
    /// A string, and whether it was read without an escape.
    Str(&'a str, bool),
    Bool(bool),
    U64(u64),
    I64(i64),
    F64(f64),
    Null,
}

impl<'j> Echo<'j> for () {
    fn open(&mut self, _: u8) -> Result<(), String> {
        Ok(())
    }
    fn close(&mut self, _: u8) -> Result<(), String> {
        Ok(())
    }
    fn key(&mut self, _: &Cow<'j, str>, _: bool) {}
    fn element(&mut self, _: bool) {}
    fn scalar(&mut self, _: Scalar<'_>) {}
    fn whole<D: Deserializer<'j>>(&mut self, de: D) -> Result<(), D::Error> {
        <IgnoredAny as serde::Deserialize>::deserialize(de).map(|_| ())
    }
}

/// `StructuredSnapshot::read`'s seed, telling `echo` what it reads.
pub(crate) struct SnapshotSeed<'e, E>(pub &'e mut E);

impl<'j, E: Echo<'j>> DeserializeSeed<'j> for SnapshotSeed<'_, E> {
    type Value = StructuredSnapshot<'j>;

    fn deserialize<D: Deserializer<'j>>(self, de: D) -> Result<Self::Value, D::Error> {
        let mut snapshot = StructuredSnapshot::default();
        NodeSeed {
            snapshot: &mut snapshot,
            echo: self.0,
            element: None,
        }
        .deserialize(de)?;
        Ok(snapshot)
    }
}

fn echoed<E: serde::de::Error>(result: Result<(), String>) -> Result<(), E> {
    result.map_err(E::custom)
}

/// An array read whole into `echo`.
fn echo_seq<'j, A: SeqAccess<'j>>(echo: &mut impl Echo<'j>, mut seq: A) -> Result<(), A::Error> {
    echoed(echo.open(b'['))?;
    let mut first = true;
    while seq
        .next_element_seed(Whole {
            echo: &mut *echo,
            element: Some(first),
        })?
        .is_some()
    {
        first = false;
    }
    echoed(echo.close(b']'))
}

/// An object read whole into `echo`.
fn echo_map<'j, A: MapAccess<'j>>(echo: &mut impl Echo<'j>, mut map: A) -> Result<(), A::Error> {
    echoed(echo.open(b'{'))?;
    let mut first = true;
    while let Some(key) = map.next_key_seed(CowStr)? {
        echo.key(&key, first);
        first = false;
        map.next_value_seed(Whole {
            echo: &mut *echo,
            element: None,
        })?;
    }
    echoed(echo.close(b'}'))
}

/// A value the tree does not read (an array element when `element`), read whole into `echo`.
struct Whole<'e, E> {
    echo: &'e mut E,
    element: Option<bool>,
}

impl<'j, E: Echo<'j>> DeserializeSeed<'j> for Whole<'_, E> {
    type Value = ();

    fn deserialize<D: Deserializer<'j>>(self, de: D) -> Result<(), D::Error> {
        if let Some(first) = self.element {
            self.echo.element(first);
        }
        self.echo.whole(de)
    }
}

/// Reads one node (any value where a node is expected, an array element when `element`) into
/// the snapshot; its index.
struct NodeSeed<'s, 'j, E> {
    snapshot: &'s mut StructuredSnapshot<'j>,
    echo: &'s mut E,
    element: Option<bool>,
}

impl<'j, E: Echo<'j>> DeserializeSeed<'j> for NodeSeed<'_, 'j, E> {
    type Value = u32;

    fn deserialize<D: Deserializer<'j>>(self, de: D) -> Result<u32, D::Error> {
        if let Some(first) = self.element {
            self.echo.element(first);
        }
        de.deserialize_any(self)
    }
}

impl<E> NodeSeed<'_, '_, E> {
    /// A value that is not an object where a node is expected: recorded as not a node.
    fn push_other(self) -> u32 {
        self.snapshot.nodes.push(SNode::default());
        (self.snapshot.nodes.len() - 1) as u32
    }
}

/// Scalars where a node is expected: told to the echo, recorded as not a node.
macro_rules! scalar_not_a_node {
    ($($name:ident: $t:ty => $scalar:expr),*) => {$(
        fn $name<Er: serde::de::Error>(self, v: $t) -> Result<u32, Er> {
            self.echo.scalar($scalar(v));
            Ok(self.push_other())
        }
    )*};
}

impl<'j, E: Echo<'j>> Visitor<'j> for NodeSeed<'_, 'j, E> {
    type Value = u32;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a snapshot node")
    }

    scalar_not_a_node!(
        visit_bool: bool => Scalar::Bool,
        visit_i64: i64 => Scalar::I64,
        visit_u64: u64 => Scalar::U64,
        visit_f64: f64 => Scalar::F64,
        visit_str: &str => |s| Scalar::Str(s, false),
        visit_borrowed_str: &'j str => |s| Scalar::Str(s, true)
    );

    fn visit_unit<Er: serde::de::Error>(self) -> Result<u32, Er> {
        self.echo.scalar(Scalar::Null);
        Ok(self.push_other())
    }

    fn visit_seq<A: SeqAccess<'j>>(self, seq: A) -> Result<u32, A::Error> {
        echo_seq(&mut *self.echo, seq)?;
        Ok(self.push_other())
    }

    fn visit_map<A: MapAccess<'j>>(self, mut map: A) -> Result<u32, A::Error> {
        let (snapshot, echo) = (self.snapshot, self.echo);
        echoed(echo.open(b'{'))?;
        let index = snapshot.nodes.len();
        snapshot.nodes.push(SNode {
            object: true,
            ..SNode::default()
        });
        let mark = snapshot.pending_attrs.len();
        let mut node = SNode {
            object: true,
            ..SNode::default()
        };
        let mut first = true;
        while let Some(key) = map.next_key_seed(CowStr)? {
            echo.key(&key, first);
            first = false;
            let member = MemberSeed { echo: &mut *echo };
            match &*key {
                "id" => node.id = map.next_value_seed(member)?.into_str(),
                "role" => node.role = map.next_value_seed(member)?.into_str(),
                "name" => node.name = map.next_value_seed(member)?.into_str(),
                "children" => {
                    node.children = map.next_value_seed(ChildrenSeed {
                        snapshot: &mut *snapshot,
                        echo: member.echo,
                    })?;
                }
                k if NOT_ATTRIBUTES.contains(&k) => map.next_value_seed(Whole {
                    echo: member.echo,
                    element: None,
                })?,
                _ => {
                    let value = map.next_value_seed(member)?;
                    snapshot.pending_attrs.push((key, value));
                }
            }
        }
        echoed(echo.close(b'}'))?;
        let start = snapshot.attrs.len() as u32;
        snapshot.attrs.extend(snapshot.pending_attrs.drain(mark..));
        node.attrs = (start, snapshot.attrs.len() as u32);
        snapshot.nodes[index] = node;
        Ok(index as u32)
    }
}

/// `children`: its nodes when it is an array, else `None`.
struct ChildrenSeed<'s, 'j, E> {
    snapshot: &'s mut StructuredSnapshot<'j>,
    echo: &'s mut E,
}

impl<'j, E: Echo<'j>> DeserializeSeed<'j> for ChildrenSeed<'_, 'j, E> {
    type Value = Option<(u32, u32)>;

    fn deserialize<D: Deserializer<'j>>(self, de: D) -> Result<Self::Value, D::Error> {
        de.deserialize_any(self)
    }
}

impl<'j, E: Echo<'j>> Visitor<'j> for ChildrenSeed<'_, 'j, E> {
    type Value = Option<(u32, u32)>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("children")
    }

    fn visit_seq<A: SeqAccess<'j>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let (snapshot, echo) = (self.snapshot, self.echo);
        echoed(echo.open(b'['))?;
        let mark = snapshot.pending.len();
        let mut first = true;
        while let Some(child) = seq.next_element_seed(NodeSeed {
            snapshot: &mut *snapshot,
            echo: &mut *echo,
            element: Some(first),
        })? {
            snapshot.pending.push(child);
            first = false;
        }
        echoed(echo.close(b']'))?;
        let start = snapshot.children.len() as u32;
        snapshot.children.extend(snapshot.pending.drain(mark..));
        Ok(Some((start, snapshot.children.len() as u32)))
    }

    fn visit_map<A: MapAccess<'j>>(self, map: A) -> Result<Self::Value, A::Error> {
        echo_map(self.echo, map)?;
        Ok(None)
    }

    fn visit_bool<Er>(self, v: bool) -> Result<Self::Value, Er> {
        self.echo.scalar(Scalar::Bool(v));
        Ok(None)
    }
    fn visit_i64<Er>(self, v: i64) -> Result<Self::Value, Er> {
        self.echo.scalar(Scalar::I64(v));
        Ok(None)
    }
    fn visit_u64<Er>(self, v: u64) -> Result<Self::Value, Er> {
        self.echo.scalar(Scalar::U64(v));
        Ok(None)
    }
    fn visit_f64<Er>(self, v: f64) -> Result<Self::Value, Er> {
        self.echo.scalar(Scalar::F64(v));
        Ok(None)
    }
    fn visit_str<Er>(self, v: &str) -> Result<Self::Value, Er> {
        self.echo.scalar(Scalar::Str(v, false));
        Ok(None)
    }
    fn visit_borrowed_str<Er>(self, v: &'j str) -> Result<Self::Value, Er> {
        self.echo.scalar(Scalar::Str(v, true));
        Ok(None)
    }
    fn visit_unit<Er>(self) -> Result<Self::Value, Er> {
        self.echo.scalar(Scalar::Null);
        Ok(None)
    }
}

/// A string, borrowed where the JSON holds it without escapes.
pub(crate) struct CowStr;

impl<'j> DeserializeSeed<'j> for CowStr {
    type Value = Cow<'j, str>;

    fn deserialize<D: Deserializer<'j>>(self, de: D) -> Result<Self::Value, D::Error> {
        de.deserialize_str(self)
    }
}

impl<'j> Visitor<'j> for CowStr {
    type Value = Cow<'j, str>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_borrowed_str<E>(self, s: &'j str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(s))
    }

    fn visit_str<E>(self, s: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(s.to_string()))
    }

    fn visit_string<E>(self, s: String) -> Result<Self::Value, E> {
        Ok(Cow::Owned(s))
    }
}

impl<'j> Member<'j> {
    /// A string member (`id`, `role`, `name`): `None` when it is not a string.
    fn into_str(self) -> Option<Cow<'j, str>> {
        match self {
            Member::Str(s) => Some(s),
            _ => None,
        }
    }

    fn into_owned(self) -> Member<'static> {
        match self {
            Member::True => Member::True,
            Member::Str(s) => Member::Str(Cow::Owned(s.into_owned())),
            Member::Number(n) => Member::Number(n),
            Member::Other => Member::Other,
        }
    }
}

/// A member's value, told to the echo.
struct MemberSeed<'e, E> {
    echo: &'e mut E,
}

impl<'j, E: Echo<'j>> DeserializeSeed<'j> for MemberSeed<'_, E> {
    type Value = Member<'j>;

    fn deserialize<D: Deserializer<'j>>(self, de: D) -> Result<Self::Value, D::Error> {
        de.deserialize_any(self)
    }
}

impl<'j, E: Echo<'j>> Visitor<'j> for MemberSeed<'_, E> {
    type Value = Member<'j>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a value")
    }

    fn visit_bool<Er>(self, b: bool) -> Result<Self::Value, Er> {
        self.echo.scalar(Scalar::Bool(b));
        Ok(if b { Member::True } else { Member::Other })
    }
    // Numbers as a `Value` holds them (and writes them: `attributes`).
    fn visit_i64<Er>(self, n: i64) -> Result<Self::Value, Er> {
        self.echo.scalar(Scalar::I64(n));
        Ok(Member::Number(n.into()))
    }
    fn visit_u64<Er>(self, n: u64) -> Result<Self::Value, Er> {
        self.echo.scalar(Scalar::U64(n));
        Ok(Member::Number(n.into()))
    }
    fn visit_f64<Er>(self, n: f64) -> Result<Self::Value, Er> {
        self.echo.scalar(Scalar::F64(n));
        Ok(serde_json::Number::from_f64(n).map_or(Member::Other, Member::Number))
    }
    fn visit_borrowed_str<Er>(self, s: &'j str) -> Result<Self::Value, Er> {
        self.echo.scalar(Scalar::Str(s, true));
        Ok(Member::Str(Cow::Borrowed(s)))
    }
    fn visit_str<Er>(self, s: &str) -> Result<Self::Value, Er> {
        self.echo.scalar(Scalar::Str(s, false));
        Ok(Member::Str(Cow::Owned(s.to_string())))
    }
    fn visit_unit<Er>(self) -> Result<Self::Value, Er> {
        self.echo.scalar(Scalar::Null);
        Ok(Member::Other)
    }
    fn visit_seq<A: SeqAccess<'j>>(self, seq: A) -> Result<Self::Value, A::Error> {
        echo_seq(self.echo, seq)?;
        Ok(Member::Other)
    }
    fn visit_map<A: MapAccess<'j>>(self, map: A) -> Result<Self::Value, A::Error> {
        echo_map(self.echo, map)?;
        Ok(Member::Other)
    }
}

/// A role as upstream prints them: one word (`RootWebArea`, `doc-noteref`).
fn is_role(role: &str) -> bool {
    role.bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// The attributes as upstream prints them: keys sorted (a capability word sorts just before its
/// state word, as upstream places it), `true` as a bare word, strings and numbers as values.
fn attributes<'a>(
    members: &'a [(Cow<'_, str>, Member<'_>)],
    role: &str,
    name: Option<&str>,
) -> Option<Vec<Attr<'a>>> {
    let mut members: Vec<&'a (Cow<'_, str>, Member<'_>)> = members.iter().collect();
    // Keys are unique (a repeated one is read through a `Value`): sorted by key alone.
    members.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    let option = role == "option";
    let mut attrs = Vec::with_capacity(members.len());
    for (key, value) in members {
        let key: &'a str = key;
        if !is_key(key) {
            return None;
        }
        let value = match value {
            Member::True if !(option && key == "selectable") => None,
            Member::Str(s) if !(option && key == "value" && Some(&**s) == name) => {
                Some(Cow::Borrowed(&**s))
            }
            Member::Number(n) => Some(Cow::Owned(n.to_string())),
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
    fn shows_children(
        &self,
        snapshot: &StructuredSnapshot<'_>,
        name: Option<&str>,
        children: &[u32],
        depth: usize,
    ) -> bool {
        let repeats_name = name.is_some_and(|name| {
            let visible = |c: &char| !c.is_whitespace();
            children
                .iter()
                .all(|&c| snapshot.text_leaf_name(c).is_some())
                && children
                    .iter()
                    .filter_map(|&c| snapshot.text_leaf_name(c))
                    .flat_map(str::chars)
                    .filter(visible)
                    .eq(name.chars().filter(visible))
        });
        if !repeats_name || children.is_empty() {
            return true;
        }
        children
            .first()
            .and_then(|&c| snapshot.nodes.get(c as usize))
            .filter(|c| c.object)
            .and_then(SNode::uid)
            .is_some_and(|uid| self.line_uids.contains(&(uid, depth)))
    }
}
