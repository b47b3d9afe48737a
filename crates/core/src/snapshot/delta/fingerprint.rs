//! What is kept of a sent snapshot (the delta module's doc): the page's fingerprint, its
//! frames and units, and the hashes they are matched by.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, DefaultHasher, Hash, Hasher, RandomState};

use once_cell::sync::Lazy;

use crate::snapshot::identity::Shape;
use crate::snapshot::marker::{hidden_run_end, write_run, ExpandTarget};
use crate::snapshot::render::{self, flatten};
use crate::snapshot::tree::{ColumnName, NodeKind, Table, Tree};
use crate::snapshot::SnapshotOptions;

/// What the agent holds of a page: the fingerprint of the last snapshot sent (full or delta,
/// the agent holds the whole page either way).
#[derive(Debug, Clone, Default)]
pub struct SentPage {
    /// The page's snapshot number of that snapshot (1 for the first).
    pub number: u64,
    /// Deltas sent since the last full snapshot.
    pub deltas_in_row: u32,
    /// The first root's key: a new one is a new document.
    root: Option<String>,
    /// Every node, in document order.
    pub(super) nodes: Vec<SentNode>,
    pub(super) index: HashMap<String, u32>,
    pub(super) units: HashMap<String, SentUnit>,
    /// The hash of the whole shown tree (every unit of the roots' frame, in order): the short
    /// form is sent only when the new one is equal.
    pub(super) whole: u64,
    /// By the key of a shown table's first row: its header as written (see `TableView`).
    pub(super) tables: HashMap<String, u64>,
    /// The token budget's step it was sent at, with its options (`crate::result::budget`):
    /// the page's next snapshot is compared at that step while it is held.
    pub budget_step: Option<(&'static str, SnapshotOptions)>,
    /// The raw tree's lines and lists, for identity (`None` where uids never renumber).
    pub(super) shape: Option<Shape>,
}

#[derive(Debug, Clone)]
pub(super) struct SentNode {
    pub(super) key: String,
    /// Empty for nodes without an id.
    pub(super) uid: String,
    pub(super) own: u64,
    /// See [`Own`].
    pub(super) bare: u64,
    pub(super) words: u64,
    /// The key of the node whose frame it is shown in (its raw parent inside hidden runs).
    pub(super) parent: Option<String>,
    /// Written as a line of its own (not behind a marker, not a layout node dropped).
    pub(super) shown: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct SentUnit {
    pub(super) hash: u64,
    pub(super) frame: u64,
    pub(super) index: u32,
}

impl SentPage {
    /// Rough heap bytes held (the cache counts them against its cap).
    pub fn approx_bytes(&self) -> usize {
        self.nodes
            .iter()
            .map(|n| 2 * n.key.len() + n.uid.len() + 112)
            .sum::<usize>()
            + self.units.len() * 48
            + self.shape.as_ref().map_or(0, Shape::approx_bytes)
    }

    /// The upstream uid the node the agent knows as `uid` has now: `Some` only when that
    /// node is in this snapshot under another uid (`uid` being one it was shown under:
    /// its key, or an older uid `aliases` names with its key). `None`: send `uid` as it is.
    pub fn current_uid<'s>(
        &'s self,
        uid: &str,
        aliases: &'s HashMap<String, String>,
    ) -> Option<&'s str> {
        if self.nodes.iter().any(|n| n.uid == uid) {
            return None;
        }
        let key = if self.index.contains_key(uid) {
            uid
        } else {
            aliases.get(uid)?.as_str()
        };
        let node = self.nodes.get(*self.index.get(key)? as usize)?;
        (!node.uid.is_empty() && node.uid != uid).then_some(node.uid.as_str())
    }

    /// Each node's uid as it is now, with the key the agent first knew it by, where they
    /// differ.
    pub fn renumbered(&self) -> impl Iterator<Item = (&str, &str)> {
        self.nodes
            .iter()
            .filter(|n| !n.uid.is_empty() && n.uid != n.key)
            .map(|n| (n.uid.as_str(), n.key.as_str()))
    }

    /// A modal dialog's snapshot, covering the page (`identity::Shape::is_covered`).
    pub fn is_covered(&self) -> bool {
        self.shape.as_ref().is_some_and(Shape::is_covered)
    }

    /// Kept with the raw tree's lines, for identity.
    pub fn has_shape(&self) -> bool {
        self.shape.is_some()
    }

    /// True when the agent knows a node by `key`.
    pub fn has_key(&self, key: &str) -> bool {
        self.index.contains_key(key)
    }

    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }
}

/// Why a full snapshot was sent rather than a delta (the header line says it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FullReason {
    First,
    /// Nothing held of the page any more: the upstream restarted or reconnected since its last
    /// snapshot, and uids of before may name other elements now.
    UpstreamReset,
    Navigated,
    NotSmaller,
    InRow,
}

impl FullReason {
    pub fn text(self) -> &'static str {
        match self {
            FullReason::First => "first snapshot of this page",
            FullReason::UpstreamReset => {
                "the upstream restarted or reconnected since this page's last snapshot"
            }
            FullReason::Navigated => "the page navigated or reloaded",
            FullReason::NotSmaller => "a delta would not be much smaller",
            FullReason::InRow => "after 8 deltas in a row",
        }
    }
}

/// The fingerprint of a tree after the passes, and the frames a render walks.
pub struct Fingerprint {
    pub(super) keys: Vec<String>,
    pub(super) own: Vec<u64>,
    /// See [`Own`].
    pub(super) bare: Vec<u64>,
    pub(super) words: Vec<u64>,
    /// Nodes in each node's subtree (itself included).
    pub(super) sizes: Vec<usize>,
    /// The node whose frame each node is shown in.
    pub(super) frame_parent: Vec<Option<usize>>,
    /// Frames by owner (`None`: the roots), each its items and units.
    pub(super) frames: HashMap<Option<usize>, Frame>,
    /// See [`SentPage::whole`].
    pub(super) whole: u64,
    /// Where each node is for the agent (filled once, at the end of `of`).
    pub(super) visibility: Visibility,
    /// The tables the full snapshot writes as tables.
    pub(super) view: TableView,
}

/// What the full snapshot writes as tables (`Notation::writes_table`, the leading records a
/// pass left whole): a table holds its nodes otherwise than as lines of their own (text cells
/// without uids, columns not written, images inside cells not counted as layout), so what the
/// agent holds of a node depends on it, and so does the header the agent holds.
#[derive(Default)]
pub struct TableView {
    /// The siblings written as rows (a flat table's cells, a nested one's record nodes) and
    /// the cells of nested records: how each is written (`CELL_SHOWN`, `CELL_UNWRITTEN`,
    /// `RECORD`). Part of each one's hash: a node held as a cell is not held as a line.
    written_as: HashMap<usize, u8>,
    /// By a table's first sibling: its header as written (rows, columns, first and last uid).
    pub(super) headers: HashMap<usize, u64>,
    /// By a table's first sibling: the number of siblings its rows take in the frame.
    pub(super) spans: HashMap<usize, usize>,
    /// Every node under the rows (the table writes them, or names them in its header).
    pub cover: HashSet<usize>,
}

const CELL_SHOWN: u8 = 1;
const CELL_UNWRITTEN: u8 = 2;
const RECORD: u8 = 3;

impl TableView {
    /// The tables of `tree` (after the passes) that a notation writes as tables (`writes`).
    /// `identity`: the key each node is held by, where the page renumbered it (the header
    /// names its first and last rows as the agent knows them).
    pub fn of(
        tree: &Tree<'_>,
        writes: impl Fn(&Table<'_>) -> bool,
        identity: &[Option<&str>],
    ) -> TableView {
        let mut view = TableView::default();
        let mut scratch = Vec::new();
        for (&first, table) in &tree.tables {
            if !writes(table) {
                continue;
            }
            // The frame the table is written in: its parent's children as the render walks
            // them (layout nodes dropped, their children promoted).
            let mut owner = tree.nodes.get(first).and_then(|n| n.parent);
            while let Some(p) = owner.filter(|&p| tree.nodes.get(p).is_some_and(|n| n.dropped)) {
                owner = tree.nodes.get(p).and_then(|n| n.parent);
            }
            let items = match owner {
                Some(p) => {
                    scratch.clear();
                    flatten(tree, tree.children(p), &mut scratch)
                }
                None => tree.roots.clone(),
            };
            let Some(at) = items.iter().position(|&i| i == first) else {
                continue;
            };
            let rows = render::table_rows(tree, table, items.get(at..).unwrap_or(&[]));
            if rows == 0 {
                continue;
            }
            let nested = !table.record_nodes.is_empty();
            let mut h = new_hasher();
            rows.hash(&mut h);
            format!("{:?}", table.columns).hash(&mut h);
            let mut span = 0;
            for r in 0..rows {
                let siblings = table.siblings(r);
                span += siblings.len();
                for (c, &id) in table.record(r).iter().enumerate() {
                    let shown = table.columns.get(c).is_some_and(|col| col.shown);
                    let how = if shown { CELL_SHOWN } else { CELL_UNWRITTEN };
                    view.written_as.insert(id, how);
                }
                for &id in siblings {
                    if nested {
                        view.written_as.insert(id, RECORD);
                    }
                    view.cover.extend(tree.subtree(id));
                }
            }
            // What the header takes from the first row: a fixed column's name, the values of
            // the attributes every row has alike (a state of row 1 alone is the row's).
            for (col, &id) in table.columns.iter().zip(table.record(0)) {
                let Some(node) = tree.nodes.get(id) else {
                    continue;
                };
                if col.name == ColumnName::Fixed {
                    node.name_str().hash(&mut h);
                }
                for key in &col.fixed {
                    node.attr(key).map(|a| a.value.as_deref()).hash(&mut h);
                }
            }
            let uid = |r: usize| {
                table
                    .siblings(r)
                    .iter()
                    .filter_map(|&i| {
                        let n = tree.nodes.get(i)?;
                        let known = identity.get(i).copied().flatten();
                        Some(known.filter(|_| !n.uid.is_empty()).unwrap_or(n.uid))
                    })
                    .find(|u| !u.is_empty())
                    .unwrap_or("")
            };
            (uid(0), uid(rows - 1)).hash(&mut h);
            view.headers.insert(first, h.finish());
            view.spans.insert(first, span);
        }
        view
    }
}

pub(super) struct Frame {
    pub(super) items: Vec<usize>,
    pub(super) units: Vec<Unit>,
}

#[derive(Clone, Copy)]
pub(super) struct Unit {
    /// Position of the unit's first item in the frame's items.
    pub(super) start: usize,
    pub(super) len: usize,
    pub(super) hash: u64,
    /// A visible element that opens a frame of its own.
    pub(super) opens: bool,
}

/// The first root that is an element (the page's root node).
fn first_root(tree: &Tree<'_>) -> Option<usize> {
    tree.roots.iter().copied().find(|&r| {
        tree.nodes
            .get(r)
            .is_some_and(|n| n.kind == NodeKind::Element)
    })
}

/// Keys drawn once per process: a page cannot craft a changed subtree whose hash equals the
/// one sent (with fixed keys a 64-bit collision is a birthday search away), and a delta then
/// call it unchanged. Outputs do not depend on the keys, only on which hashes are equal.
static HASH_KEYS: Lazy<RandomState> = Lazy::new(RandomState::new);

fn new_hasher() -> DefaultHasher {
    HASH_KEYS.build_hasher()
}

fn hash_of<T: Hash>(value: T) -> u64 {
    let mut h = new_hasher();
    value.hash(&mut h);
    h.finish()
}

pub(super) fn frame_id(fp: &Fingerprint, owner: Option<usize>) -> u64 {
    match owner {
        None => 0,
        Some(id) => hash_of(fp.keys.get(id).map_or("", String::as_str)) | 1,
    }
}

/// What a node's own line says, hashed (passes' cuts and dropped urls included; where it sits
/// and what is under it are its unit's hash). A notation may write a url relative to the
/// page's (`scope`: the first root's url without its fragment), so a node with a url shown
/// hashes the page's too: a page url changed in the same document (`pushState`) changes it.
#[derive(Debug, Clone, Copy, Default)]
struct Own {
    /// The whole line.
    all: u64,
    /// The line without its bare words (`checked`, `disabled`: attributes without a value).
    bare: u64,
    /// The bare words, as a set: `word_hash` of each, xor-ed. Two lines whose `bare` are equal
    /// and whose `words` differ by one `word_hash(w)` differ by `w` alone.
    words: u64,
}

pub(super) fn word_hash(word: &str) -> u64 {
    hash_of(("word", word))
}

/// `key` stands for the uid: a node known by an older uid hashes as it was sent.
fn own_hash(tree: &Tree<'_>, id: usize, key: &str, scope: Option<&str>) -> Own {
    let Some(node) = tree.nodes.get(id) else {
        return Own::default();
    };
    let mut h = new_hasher();
    let mut bare = new_hasher();
    let mut words = 0u64;
    (node.kind as u8).hash(&mut h);
    (node.kind as u8).hash(&mut bare);
    match node.kind {
        NodeKind::Verbatim => node.raw.hash(&mut h),
        NodeKind::Marker => node.name_str().hash(&mut h),
        NodeKind::Element => {
            for h in [&mut h, &mut bare] {
                key.hash(h);
                node.role.hash(h);
                node.name.as_deref().hash(h);
                node.keep_chars.hash(h);
                node.devtools_selected.hash(h);
            }
            for attr in &node.attrs {
                let is_url = attr.key == "url" || attr.key == "/url";
                if node.drops_attr(attr.key) {
                    continue;
                }
                attr.key.hash(&mut h);
                attr.value.as_deref().hash(&mut h);
                if is_url {
                    scope.hash(&mut h);
                }
                if attr.value.is_none() {
                    words ^= word_hash(attr.key);
                } else {
                    attr.key.hash(&mut bare);
                    attr.value.as_deref().hash(&mut bare);
                    if is_url {
                        scope.hash(&mut bare);
                    }
                }
            }
        }
    }
    Own {
        all: h.finish(),
        bare: bare.finish(),
        words,
    }
}

impl Fingerprint {
    /// Fingerprints a tree after the passes, in O(nodes): nodes are in document order, so in
    /// reverse order every node's descendants are done before it.
    pub fn of(tree: &Tree<'_>) -> Fingerprint {
        Fingerprint::of_with(tree, TableView::default(), &[])
    }

    /// `of`, with the tables the full snapshot writes (`view`): how a node is written (a line,
    /// a cell shown or not) is part of its hash, and the agent holds each table's header. Each
    /// node with a uid is keyed by `identity[id]` when that is `Some` (the key of the held node
    /// it is: `identity`), else by its uid; keys stay unique (a key taken already falls back
    /// to the uid).
    pub fn of_with(tree: &Tree<'_>, view: TableView, identity: &[Option<&str>]) -> Fingerprint {
        let n = tree.nodes.len();
        let mut keys: Vec<String> = Vec::with_capacity(n);
        let mut seen: HashMap<&str, usize> = HashMap::with_capacity(n);
        let mut taken: HashSet<&str> = HashSet::new();
        // What each node's own line hashes for its uid: the held key it is known by, or its uid.
        let mut known_as: Vec<&str> = Vec::with_capacity(n);
        for (id, node) in tree.nodes.iter().enumerate() {
            // A key with `#` names a repeated uid: no one's identity.
            let held = identity
                .get(id)
                .copied()
                .flatten()
                .filter(|k| !node.uid.is_empty() && !k.contains('#'));
            known_as.push(node.uid);
            let key = if let Some(k) = held.filter(|k| taken.insert(k)) {
                if let Some(last) = known_as.last_mut() {
                    *last = k;
                }
                k.to_string()
            } else if node.kind == NodeKind::Element && !node.uid.is_empty() {
                let count = seen.entry(node.uid).or_default();
                *count += 1;
                if *count == 1 && taken.insert(node.uid) {
                    node.uid.to_string()
                } else {
                    // The upstream repeats a uid at times: each occurrence its own key.
                    format!("{}#{}", node.uid, count)
                }
            } else {
                let parent = node
                    .parent
                    .and_then(|p| keys.get(p))
                    .map_or("", String::as_str);
                let siblings = tree.siblings_under(node.parent);
                let place = siblings.iter().position(|&c| c == id).unwrap_or(0);
                format!("{parent}/{place}")
            };
            keys.push(key);
        }
        let scope = first_root(tree)
            .and_then(|r| tree.nodes.get(r))
            .and_then(|n| n.attr("url"))
            .and_then(|a| a.value.as_deref())
            .map(|u| u.split('#').next().unwrap_or(u));
        let owns: Vec<Own> = (0..n)
            .map(|id| own_hash(tree, id, known_as.get(id).copied().unwrap_or(""), scope))
            .collect();
        let own: Vec<u64> = owns.iter().map(|o| o.all).collect();
        let mut deep = vec![0u64; n];
        let mut sizes = vec![1usize; n];
        let mut shown = vec![0u64; n];
        let mut frame_parent: Vec<Option<usize>> = tree.nodes.iter().map(|n| n.parent).collect();
        let mut frames = HashMap::new();
        let mut dropped = Vec::new();
        for id in (0..n).rev() {
            let Some(node) = tree.nodes.get(id) else {
                continue;
            };
            let mut h = new_hasher();
            own[id].hash(&mut h);
            let children = tree.children(id);
            for &c in children {
                deep.get(c).hash(&mut h);
                sizes[id] += sizes.get(c).copied().unwrap_or(0);
            }
            deep[id] = h.finish();
            if node.hidden || node.dropped || node.kind != NodeKind::Element {
                continue;
            }
            dropped.clear();
            let items = flatten(tree, children, &mut dropped);
            let frame = Frame::of(tree, items, &own, &deep, &shown, node.uid, &known_as);
            let mut h = new_hasher();
            own[id].hash(&mut h);
            // How the full snapshot writes it (a line, a table's cell): `leaf_hash` for a leaf.
            view.written_as.get(&id).hash(&mut h);
            for unit in &frame.units {
                unit.hash.hash(&mut h);
            }
            for &d in &dropped {
                own[d].hash(&mut h);
                keys[d].hash(&mut h);
            }
            shown[id] = h.finish();
            for &item in &frame.items {
                frame_parent[item] = Some(id);
            }
            if !frame.items.is_empty() {
                frames.insert(Some(id), frame);
            }
        }
        let roots = Frame::of(tree, tree.roots.clone(), &own, &deep, &shown, "", &known_as);
        for &item in &roots.items {
            frame_parent[item] = None;
        }
        let mut h = new_hasher();
        for unit in &roots.units {
            unit.hash.hash(&mut h);
        }
        let mut headers: Vec<u64> = view.headers.values().copied().collect();
        headers.sort_unstable();
        headers.hash(&mut h);
        let whole = h.finish();
        frames.insert(None, roots);
        let mut fp = Fingerprint {
            keys,
            own,
            bare: owns.iter().map(|o| o.bare).collect(),
            words: owns.iter().map(|o| o.words).collect(),
            sizes,
            frame_parent,
            frames,
            whole,
            visibility: Visibility::default(),
            view,
        };
        fp.visibility = fp.visibility_of(tree);
        fp
    }

    /// Where each node is, for the agent: a line of its own, or behind which marker (with the
    /// call that shows it), walked from the roots as the render walks frames.
    fn visibility_of(&self, tree: &Tree<'_>) -> Visibility {
        let n = self.keys.len();
        let mut seen = vec![Seen::Unseen; n];
        let mut calls: Vec<String> = Vec::new();
        let mut stack: Vec<(Option<usize>, String)> = vec![(None, String::new())];
        while let Some((owner, expand_uid)) = stack.pop() {
            let Some(frame) = self.frames.get(&owner) else {
                continue;
            };
            for unit in &frame.units {
                let items = frame
                    .items
                    .get(unit.start..unit.start + unit.len)
                    .unwrap_or(&[]);
                let Some(&first) = items.first() else {
                    continue;
                };
                let hidden = tree.nodes.get(first).is_some_and(|n| n.hidden);
                if hidden {
                    let mut call = String::new();
                    ExpandTarget::for_run(tree, items, &expand_uid).write(&mut call);
                    let group = calls.len() as u32;
                    calls.push(call);
                    for &id in items {
                        let end = id + self.sizes.get(id).copied().unwrap_or(1);
                        for slot in seen.get_mut(id..end).unwrap_or(&mut []) {
                            *slot = Seen::Behind(group);
                        }
                    }
                    continue;
                }
                if let Some(slot) = seen.get_mut(first) {
                    *slot = Seen::Shown;
                }
                if unit.opens {
                    let next = match tree.nodes.get(first) {
                        Some(n) if tree.uid_finds(first) => n.uid.to_string(),
                        _ => expand_uid.clone(),
                    };
                    stack.push((Some(first), next));
                }
            }
        }
        // Layout nodes dropped are named by their document's marker, which expands the
        // document (a root or an iframe).
        let mut documents: HashMap<usize, u32> = HashMap::new();
        for id in 0..n {
            let Some(node) = tree.nodes.get(id) else {
                continue;
            };
            if !node.dropped || seen.get(id) != Some(&Seen::Unseen) {
                continue;
            }
            let mut doc = id;
            let mut at = node.parent;
            while let Some(p) = at {
                doc = p;
                let Some(pn) = tree.nodes.get(p) else { break };
                if render::opens_frame(tree, p) {
                    break;
                }
                at = pn.parent;
            }
            let group = *documents.entry(doc).or_insert_with(|| {
                let mut call = String::new();
                let uid = tree.nodes.get(doc).map_or("", |d| d.uid);
                ExpandTarget::subtree(uid).write(&mut call);
                calls.push(call);
                calls.len() as u32 - 1
            });
            if let Some(slot) = seen.get_mut(id) {
                *slot = Seen::Behind(group);
            }
        }
        Visibility { seen, calls }
    }

    /// What the agent holds once this tree is sent.
    pub fn sent_page(&self, tree: &Tree<'_>, number: u64, deltas_in_row: u32) -> SentPage {
        let seen = &self.visibility.seen;
        let mut nodes = Vec::with_capacity(self.keys.len());
        let mut index = HashMap::with_capacity(self.keys.len());
        for (id, key) in self.keys.iter().enumerate() {
            let node = tree.nodes.get(id);
            index.insert(key.clone(), nodes.len() as u32);
            nodes.push(SentNode {
                key: key.clone(),
                uid: node.map_or("", |n| n.uid).to_string(),
                own: self.own[id],
                bare: self.bare[id],
                words: self.words[id],
                parent: self.frame_parent[id]
                    .and_then(|p| self.keys.get(p))
                    .cloned(),
                shown: seen.get(id) == Some(&Seen::Shown),
            });
        }
        let mut units = HashMap::new();
        for (&owner, frame) in &self.frames {
            // Frames behind a marker were not sent: nothing in them is held as it is.
            if owner.is_some_and(|o| seen.get(o) != Some(&Seen::Shown)) {
                continue;
            }
            let fid = frame_id(self, owner);
            for (i, unit) in frame.units.iter().enumerate() {
                if let Some(key) = frame.items.get(unit.start).and_then(|&f| self.keys.get(f)) {
                    units.insert(
                        key.clone(),
                        SentUnit {
                            hash: unit.hash,
                            frame: fid,
                            index: i as u32,
                        },
                    );
                }
            }
        }
        // The headers of the tables the agent was shown.
        let tables = self
            .view
            .headers
            .iter()
            .filter(|(&id, _)| seen.get(id) == Some(&Seen::Shown))
            .filter_map(|(&id, &h)| Some((self.keys.get(id)?.clone(), h)))
            .collect();
        SentPage {
            number,
            deltas_in_row,
            root: self.root(tree),
            nodes,
            index,
            units,
            whole: self.whole,
            tables,
            budget_step: None,
            shape: None,
        }
    }

    /// The hash of a shown leaf whose own line hashes to `own`, written as node `id` is now.
    pub(super) fn leaf_hash(&self, own: u64, id: usize) -> u64 {
        let mut h = new_hasher();
        own.hash(&mut h);
        self.view.written_as.get(&id).hash(&mut h);
        h.finish()
    }

    fn root(&self, tree: &Tree<'_>) -> Option<String> {
        self.keys.get(first_root(tree)?).cloned()
    }

    /// True when `tree` is another document than the one `sent` was taken of: its first root
    /// has another uid. A new document gives every node a new uid, the root's included, so a
    /// reload to the same url is told too, and a url changed in the same document (a fragment,
    /// `pushState`) is not; a share of uids kept would not do (a filtered grid re-renders most
    /// of its rows under new uids, in the same document).
    pub fn is_new_document(&self, tree: &Tree<'_>, sent: &SentPage) -> bool {
        self.root(tree) != sent.root
    }
}

/// Where a node is for the agent (see [`Fingerprint::visibility`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Seen {
    Shown,
    /// Behind the marker whose call is `calls[group]`.
    Behind(u32),
    Unseen,
}

#[derive(Default)]
pub(super) struct Visibility {
    pub(super) seen: Vec<Seen>,
    pub(super) calls: Vec<String>,
}

impl Frame {
    /// `known_as`: what each node's uid hashes as (see `Fingerprint::of_with`).
    fn of(
        tree: &Tree<'_>,
        items: Vec<usize>,
        own: &[u64],
        deep: &[u64],
        shown: &[u64],
        owner_uid: &str,
        known_as: &[&str],
    ) -> Frame {
        let mut units = Vec::new();
        let mut pos = 0;
        let mut marker = String::new();
        // The node whose uid `owner_uid` is (markers may expand it instead of their run).
        let owner: Option<usize> = items
            .first()
            .and_then(|&i| tree.nodes.get(i))
            .and_then(|n| n.parent)
            .filter(|&p| tree.nodes.get(p).is_some_and(|n| n.uid == owner_uid));
        while let Some(&id) = items.get(pos) {
            let Some(node) = tree.nodes.get(id) else {
                pos += 1;
                continue;
            };
            if node.hidden {
                let end = hidden_run_end(tree, &items, pos);
                let mut h = new_hasher();
                "hidden".hash(&mut h);
                let run = items.get(pos..end).unwrap_or(&[]);
                for &i in run {
                    deep.get(i).hash(&mut h);
                }
                // And its marker as written: its summary reads the records around it.
                marker.clear();
                write_run(&mut marker, tree, run, owner_uid);
                // With the uids it names as the agent knows their nodes: a marker the agent
                // holds still shows that run (the proxy's tools take those uids too).
                let renamed: Vec<(&str, &str)> = run
                    .iter()
                    .chain(owner.iter())
                    .filter_map(|&i| {
                        let uid = tree.nodes.get(i)?.uid;
                        let known = *known_as.get(i)?;
                        (uid != known && !uid.is_empty()).then_some((uid, known))
                    })
                    .collect();
                if renamed.is_empty() {
                    marker.hash(&mut h);
                } else {
                    words_replaced(&marker, &renamed).hash(&mut h);
                }
                units.push(Unit {
                    start: pos,
                    len: end - pos,
                    hash: h.finish(),
                    opens: false,
                });
                pos = end;
                continue;
            }
            let element = node.kind == NodeKind::Element && !node.dropped;
            let hash = if element {
                shown.get(id).copied().unwrap_or(0)
            } else {
                hash_of((node.kind as u8, own.get(id)))
            };
            units.push(Unit {
                start: pos,
                len: 1,
                hash,
                opens: element && !tree.children(id).is_empty(),
            });
            pos += 1;
        }
        Frame { items, units }
    }
}

/// `text` with each of `pairs`' first words, where it stands as a word of its own, replaced
/// by the second.
fn words_replaced(text: &str, pairs: &[(&str, &str)]) -> String {
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    'scan: while let Some(c) = rest.chars().next() {
        if !out.chars().next_back().is_some_and(is_word) {
            for &(from, to) in pairs {
                let ends = rest
                    .get(from.len()..)
                    .is_some_and(|r| !r.chars().next().is_some_and(is_word));
                if rest.starts_with(from) && ends {
                    out.push_str(to);
                    rest = rest.get(from.len()..).unwrap_or("");
                    continue 'scan;
                }
            }
        }
        out.push(c);
        rest = rest.get(c.len_utf8()..).unwrap_or("");
    }
    out
}
