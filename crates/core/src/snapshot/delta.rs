//! Snapshot deltas: a later snapshot of a page the agent already holds, written as what changed
//! against what was last *sent* (the filtered tree at the level, not the raw one), in the same
//! notation as a full snapshot, through the one traversal (`render`).
//!
//! What is kept of a sent snapshot is a fingerprint ([`SentPage`]): per node its key (the uid;
//! uids are stable across snapshots of a page) and a hash of its own line; per *unit* of a
//! rendered frame (a visible node with its shown subtree, or one run of hidden siblings, as the
//! traversal cuts them) a hash of everything the unit writes, the frame it sat in and its
//! place there. Hashes are built bottom-up, so a changed text, name, role, attribute, state,
//! order, or a child added or removed anywhere changes every unit above it: a unit is
//! *unchanged* only when its key and hash match a unit of the same frame in what was sent.
//!
//! A delta writes, frame by frame from the roots, each run of unchanged units (consecutive in
//! both snapshots) as one line naming its uids and the expand call, every other unit as a full
//! snapshot would, and opens the frames of the visible ones among them (their ancestors are thus
//! the context of every change). Nodes that were sent and are gone are counted, with their
//! uids, in one line at the end of the frame they were in.
//!
//! The short form ("unchanged since") goes only when the hash of the whole shown tree equals the
//! one sent (a move or a reorder changes no node's own line but changes it). The header counts
//! shown nodes: added, changed, moved (another parent, or out of their siblings' sent order: the
//! nodes outside one longest run kept in order), no longer hidden, removed; changes behind a
//! marker (hidden runs, layout nodes dropped) are named with their uids and the call that shows
//! them. Frames behind a marker are not held: what the agent never saw is never "unchanged".

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, DefaultHasher, Hash, Hasher, RandomState};

use once_cell::sync::Lazy;

use super::identity::{self, Shape};
use super::marker::{hidden_run_end, write_run, ExpandTarget};
use super::render::{self, flatten};
use super::tree::{ColumnName, DeltaMarks, NodeKind, Table, TableDelta, Tree};
use super::{apply_passes, filter_tree, FilteredSnapshot, Notation, SnapshotOptions};
use crate::level::Level;

/// Deltas sent in a row before a full snapshot again: a client that drops old tool results
/// (Claude Code does in long sessions) is never more than this many snapshots from a whole page.
pub const MAX_DELTAS_IN_ROW: u32 = 8;

/// A delta is sent only when it is at most this share of the full snapshot (in bytes); above,
/// the full snapshot costs little more and reads without the earlier one. Picked by measurement
/// (`cargo run --release --example delta_shares` over the corpus's recorded sessions).
pub const MAX_DELTA_SHARE: f64 = 0.7;

/// Unchanged runs of childless nodes whose lines would be about this short are shown instead:
/// the run's line would cost more than they do.
const SHORT_RUN_CHARS: usize = 48;

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
    nodes: Vec<SentNode>,
    index: HashMap<String, u32>,
    units: HashMap<String, SentUnit>,
    /// The hash of the whole shown tree (every unit of the roots' frame, in order): the short
    /// form is sent only when the new one is equal.
    whole: u64,
    /// By the key of a shown table's first row: its header as written (see `TableView`).
    tables: HashMap<String, u64>,
    /// The token budget's step it was sent at, with its options (`crate::result::budget`):
    /// the page's next snapshot is compared at that step while it is held.
    pub budget_step: Option<(&'static str, SnapshotOptions)>,
    /// The raw tree's lines and lists, for identity (`None` where uids never renumber).
    shape: Option<Shape>,
}

#[derive(Debug, Clone)]
struct SentNode {
    key: String,
    /// Empty for nodes without an id.
    uid: String,
    own: u64,
    /// See [`Own`].
    bare: u64,
    words: u64,
    /// The key of the node whose frame it is shown in (its raw parent inside hidden runs).
    parent: Option<String>,
    /// Written as a line of its own (not behind a marker, not a layout node dropped).
    shown: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct SentUnit {
    hash: u64,
    frame: u64,
    index: u32,
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
    keys: Vec<String>,
    own: Vec<u64>,
    /// See [`Own`].
    bare: Vec<u64>,
    words: Vec<u64>,
    /// Nodes in each node's subtree (itself included).
    sizes: Vec<usize>,
    /// The node whose frame each node is shown in.
    frame_parent: Vec<Option<usize>>,
    /// Frames by owner (`None`: the roots), each its items and units.
    frames: HashMap<Option<usize>, Frame>,
    /// See [`SentPage::whole`].
    whole: u64,
    /// Where each node is for the agent (filled once, at the end of `of`).
    visibility: Visibility,
    /// The tables the full snapshot writes as tables.
    view: TableView,
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
    headers: HashMap<usize, u64>,
    /// By a table's first sibling: the number of siblings its rows take in the frame.
    spans: HashMap<usize, usize>,
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

struct Frame {
    items: Vec<usize>,
    units: Vec<Unit>,
}

#[derive(Clone, Copy)]
struct Unit {
    /// Position of the unit's first item in the frame's items.
    start: usize,
    len: usize,
    hash: u64,
    /// A visible element that opens a frame of its own.
    opens: bool,
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

fn frame_id(fp: &Fingerprint, owner: Option<usize>) -> u64 {
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

fn word_hash(word: &str) -> u64 {
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
    fn leaf_hash(&self, own: u64, id: usize) -> u64 {
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
enum Seen {
    Shown,
    /// Behind the marker whose call is `calls[group]`.
    Behind(u32),
    Unseen,
}

#[derive(Default)]
struct Visibility {
    seen: Vec<Seen>,
    calls: Vec<String>,
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

/// What a delta holds, in counts (the header line) and the lines it names.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DeltaCounts {
    /// Shown nodes added, whose own line changed, removed, and moved (to another parent, or
    /// out of their siblings' order).
    pub added: usize,
    pub changed: usize,
    pub removed: usize,
    pub moved: usize,
    /// Nodes shown that were behind a marker.
    pub revealed: usize,
    /// Nodes added or changed behind a marker (named in the header with the call).
    pub behind: usize,
    /// The whole shown tree is what was sent (the short form).
    pub same_tree: bool,
    /// Unchanged-run lines written, and the nodes they stand for.
    pub unchanged_runs: usize,
    pub unchanged_nodes: usize,
}

impl DeltaCounts {
    pub fn is_empty(&self) -> bool {
        self.same_tree
            && self.added == 0
            && self.changed == 0
            && self.removed == 0
            && self.moved == 0
            && self.revealed == 0
            && self.behind == 0
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

/// Marks `tree` for a delta against `sent`: the first item of each unchanged run carries the
/// run's line in `tree.delta`, every item of it `unchanged`; removed nodes get a line at the end
/// of the frame they were in. Returns the counts.
pub fn mark(tree: &mut Tree<'_>, fp: &Fingerprint, sent: &SentPage) -> DeltaCounts {
    mark_with(tree, fp, sent, true)
}

/// `mark`; without `tables`, no table is marked to be written row by row (its rows go as
/// nodes, and unchanged runs go through it as through any siblings).
pub fn mark_with(
    tree: &mut Tree<'_>,
    fp: &Fingerprint,
    sent: &SentPage,
    tables: bool,
) -> DeltaCounts {
    let mut counts = DeltaCounts {
        same_tree: fp.whole == sent.whole,
        ..DeltaCounts::default()
    };
    let visibility = &fp.visibility;
    let mut behind: Vec<Vec<&str>> = vec![Vec::new(); visibility.calls.len()];
    let mut by_key: HashMap<&str, usize> = HashMap::with_capacity(fp.keys.len());
    for (id, key) in fp.keys.iter().enumerate() {
        by_key.insert(key.as_str(), id);
        let old = sent
            .index
            .get(key)
            .and_then(|&i| sent.nodes.get(i as usize));
        let parent = fp.frame_parent[id].and_then(|p| fp.keys.get(p));
        // Behind a marker now: new, changed, or shown (or elsewhere) before.
        let differs =
            old.is_none_or(|o| o.own != fp.own[id] || o.shown || o.parent.as_ref() != parent);
        match visibility.seen.get(id) {
            Some(Seen::Shown) => match old {
                None => counts.added += 1,
                Some(o) if o.own != fp.own[id] => counts.changed += 1,
                Some(o) if !o.shown => counts.revealed += 1,
                Some(o) if o.parent.as_ref() != parent => counts.moved += 1,
                Some(_) => {}
            },
            Some(&Seen::Behind(group)) if differs => {
                counts.behind += 1;
                if let (Some(list), Some(node)) =
                    (behind.get_mut(group as usize), tree.nodes.get(id))
                {
                    if !node.uid.is_empty() {
                        list.push(node.uid);
                    }
                }
            }
            _ => {}
        }
    }
    counts.moved += reordered(fp, sent, &visibility.seen);
    let mut marks = DeltaMarks {
        table_cover: fp.view.cover.clone(),
        ..DeltaMarks::default()
    };
    let mut notes = 0;
    for (list, call) in behind.iter().zip(&visibility.calls) {
        if list.is_empty() {
            continue;
        }
        notes += 1;
        if notes > 3 {
            marks.behind.push_str("; …");
            break;
        }
        marks.behind.push_str(&format!(
            "; behind a marker: {} added or changed (uid ",
            list.len()
        ));
        write_uid_list(&mut marks.behind, list);
        marks.behind.push(')');
        marks.behind.push_str(call);
    }
    let unnamed = counts.behind - behind.iter().map(Vec::len).sum::<usize>();
    if unnamed > 0 && notes == 0 {
        marks.behind.push_str(&format!(
            "; behind a marker: {unnamed} added or changed without a uid"
        ));
    }
    // Where removed nodes are counted: no table row may hold one (a row line has no place
    // for it).
    let anchors: HashSet<&str> = if !tables || tree.tables.is_empty() {
        HashSet::new()
    } else {
        sent.nodes
            .iter()
            .filter(|old| !by_key.contains_key(old.key.as_str()))
            .filter_map(|old| removed_anchor(sent, &by_key, old))
            .collect()
    };
    let mut opened: HashSet<Option<usize>> = HashSet::new();
    let mut unchanged_items: Vec<usize> = Vec::new();
    let mut stack: Vec<(Option<usize>, String)> = vec![(None, String::new())];
    while let Some((owner, expand_uid)) = stack.pop() {
        let Some(frame) = fp.frames.get(&owner) else {
            continue;
        };
        opened.insert(owner);
        let fid = frame_id(fp, owner);
        let key_of = |u: &Unit| {
            frame
                .items
                .get(u.start)
                .and_then(|&i| fp.keys.get(i))
                .map_or("", String::as_str)
        };
        let prev_of = |u: &Unit| {
            sent.units
                .get(key_of(u))
                .filter(|p| p.hash == u.hash && p.frame == fid)
        };
        // A unit sent as it is: its frame is compared in turn.
        let open = |unit: &Unit, stack: &mut Vec<(Option<usize>, String)>| {
            if !unit.opens {
                return;
            }
            if let Some(&id) = frame.items.get(unit.start) {
                // A repeated uid finds an earlier node: the nearest ancestor whose uid finds
                // it is expanded instead (as the renderer does for its markers).
                let next = match tree.nodes.get(id) {
                    Some(n) if tree.uid_finds(id) => n.uid.to_string(),
                    _ => expand_uid.clone(),
                };
                stack.push((Some(id), next));
            }
        };
        // Tables of this frame the agent does not hold as they are: written row by row (by a
        // notation that writes tables); the unchanged runs below stop at their ends.
        let mut bounds: Vec<usize> = Vec::new();
        // Tables written whole (a header the agent does not hold, no delta of its rows): by
        // the unit each starts at, the unit after it.
        let mut whole: HashMap<usize, usize> = HashMap::new();
        if !fp.view.spans.is_empty() {
            for (u, unit) in frame.units.iter().enumerate() {
                let Some(&id) = frame.items.get(unit.start) else {
                    continue;
                };
                let (Some(table), Some(&span)) = (tree.tables.get(&id), fp.view.spans.get(&id))
                else {
                    continue;
                };
                let Some(units) = frame.units.get(u..u + span) else {
                    continue;
                };
                // The header the agent holds is not this one (another count of records,
                // another range of uids, other columns): the header goes again.
                let stale = visibility.seen.get(id) == Some(&Seen::Shown)
                    && fp
                        .keys
                        .get(id)
                        .is_none_or(|k| sent.tables.get(k) != fp.view.headers.get(&id));
                let td = if tables {
                    table_delta(
                        tree,
                        fp,
                        sent,
                        fid,
                        table,
                        frame,
                        units,
                        &anchors,
                        &mut counts,
                        stale,
                    )
                } else {
                    None
                };
                if let Some(td) = td {
                    bounds.push(u);
                    bounds.push(u + span);
                    marks.tables.insert(id, td);
                } else if stale {
                    bounds.push(u);
                    bounds.push(u + span);
                    whole.insert(u, u + span);
                    marks.whole_tables.insert(id);
                }
            }
        }
        let mut i = 0;
        while let Some(unit) = frame.units.get(i) {
            if let Some(&end) = whole.get(&i) {
                // Written whole, as in a full snapshot.
                i = end.max(i + 1);
                continue;
            }
            let Some(first) = prev_of(unit) else {
                open(unit, &mut stack);
                i += 1;
                continue;
            };
            // The run: units unchanged and consecutive in the sent frame too.
            let mut end = i + 1;
            let mut last_index = first.index;
            while let Some(next) = frame.units.get(end).and_then(&prev_of) {
                if next.index != last_index + 1 || bounds.contains(&end) {
                    break;
                }
                last_index = next.index;
                end += 1;
            }
            let run_units = frame.units.get(i..end).unwrap_or(&[]);
            let (Some(first_unit), Some(last_unit)) = (run_units.first(), run_units.last()) else {
                break;
            };
            let items = frame
                .items
                .get(first_unit.start..last_unit.start + last_unit.len)
                .unwrap_or(&[]);
            if is_short(tree, items) {
                i = end;
                continue;
            }
            if ExpandTarget::for_run(tree, items, &expand_uid)
                .uid
                .is_empty()
            {
                // No call brings this run back (top-level siblings their own uids do not
                // find, and no ancestor to expand instead): sent as it is, not as unchanged.
                for unit in run_units {
                    open(unit, &mut stack);
                }
                i = end;
                continue;
            }
            let nodes: usize = items
                .iter()
                .map(|&id| fp.sizes.get(id).copied().unwrap_or(1))
                .sum();
            let text = unchanged_line(tree, items, nodes, &expand_uid);
            counts.unchanged_runs += 1;
            counts.unchanged_nodes += nodes;
            if let Some(&start) = items.first() {
                marks.runs.insert(start, (items.len(), text));
            }
            unchanged_items.extend_from_slice(items);
            i = end;
        }
    }
    // Removed: sent nodes not in the tree, counted at the nearest ancestor still there.
    let mut removed: HashMap<Option<usize>, Vec<&str>> = HashMap::new();
    let mut order: Vec<Option<usize>> = Vec::new();
    for old in &sent.nodes {
        if by_key.contains_key(old.key.as_str()) {
            continue;
        }
        counts.removed += 1;
        let anchor = removed_anchor(sent, &by_key, old);
        // The frame it is written in: the anchor's, or the nearest opened one above it.
        let mut at = anchor.and_then(|k| by_key.get(k).copied());
        while let Some(id) = at {
            if opened.contains(&Some(id)) {
                break;
            }
            at = tree.nodes.get(id).and_then(|n| n.parent);
        }
        let list = removed.entry(at).or_insert_with(|| {
            order.push(at);
            Vec::new()
        });
        if !old.uid.is_empty() {
            list.push(old.uid.as_str());
        }
    }
    for at in order {
        let uids = removed.remove(&at).unwrap_or_default();
        let mut text = String::from("… removed");
        if !uids.is_empty() {
            text.push_str(" (uid ");
            write_uid_list(&mut text, &uids);
            text.push(')');
        }
        marks.removed.insert(at, text);
    }
    for id in unchanged_items {
        if let Some(node) = tree.nodes.get_mut(id) {
            node.unchanged = true;
        }
    }
    tree.delta = Some(Box::new(marks));
    counts
}

/// The key of the nearest frame owner of a removed node still in the tree (`None`: the roots).
fn removed_anchor<'s>(
    sent: &'s SentPage,
    by_key: &HashMap<&str, usize>,
    old: &'s SentNode,
) -> Option<&'s str> {
    let mut anchor = old.parent.as_deref();
    let mut guard = 0;
    while let Some(key) = anchor {
        if by_key.contains_key(key) || guard > sent.nodes.len() {
            break;
        }
        guard += 1;
        anchor = sent
            .index
            .get(key)
            .and_then(|&i| sent.nodes.get(i as usize))
            .and_then(|n| n.parent.as_deref());
    }
    anchor
}

/// Bare words a run of table rows may say changed in one column (the states a control takes).
const ROW_STATES: [&str; 7] = [
    "checked", "selected", "pressed", "expanded", "disabled", "required", "invalid",
];

/// Fewest rows in a run line of a table delta (one row is about as short written out).
const MIN_RUN_ROWS: usize = 2;

/// A row of a table against what was sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RowState {
    /// Written as a row.
    Changed,
    /// Every cell as sent, in the sent order: `first`..=`last` are its cells' sent indices.
    Same { first: u32, last: u32 },
    /// As `Same`, but the cell of column `col` gained (`on`) or lost the bare word `word`, and
    /// nothing else of it changed (a leaf then and now).
    Toggled {
        first: u32,
        last: u32,
        col: usize,
        word: &'static str,
        on: bool,
    },
}

impl RowState {
    fn span(self) -> Option<(u32, u32)> {
        match self {
            RowState::Changed => None,
            RowState::Same { first, last } | RowState::Toggled { first, last, .. } => {
                Some((first, last))
            }
        }
    }
}

/// Row `cells` (one unit each) against what was sent in frame `fid`.
fn row_state(
    tree: &Tree<'_>,
    fp: &Fingerprint,
    sent: &SentPage,
    fid: u64,
    table: &Table<'_>,
    frame: &Frame,
    cells: &[Unit],
) -> RowState {
    let mut toggled = None;
    let mut indices = Vec::with_capacity(cells.len());
    for (c, unit) in cells.iter().enumerate() {
        let Some(&id) = frame.items.get(unit.start) else {
            return RowState::Changed;
        };
        let key = fp.keys.get(id).map_or("", String::as_str);
        let Some(held) = sent.units.get(key).filter(|p| p.frame == fid) else {
            return RowState::Changed;
        };
        indices.push(held.index);
        if held.hash == unit.hash {
            continue;
        }
        // Changed: by one bare word of a leaf, in a column the header writes?
        let old = sent
            .index
            .get(key)
            .and_then(|&i| sent.nodes.get(i as usize));
        let node = tree.nodes.get(id);
        let (Some(old), Some(node)) = (old, node) else {
            return RowState::Changed;
        };
        let shown_col = table
            .columns
            .get(c)
            .is_some_and(|col| col.shown && !col.role.is_empty());
        let leaves = !unit.opens
            && tree.children(id).is_empty()
            && held.hash == fp.leaf_hash(old.own, id)
            && unit.hash == fp.leaf_hash(fp.own[id], id);
        let diff = old.words ^ fp.words[id];
        let word = ROW_STATES.iter().copied().find(|w| word_hash(w) == diff);
        match word {
            Some(word) if toggled.is_none() && shown_col && leaves && old.bare == fp.bare[id] => {
                let on = node
                    .attrs
                    .iter()
                    .any(|a| a.key == word && a.value.is_none());
                toggled = Some((c, word, on));
            }
            _ => return RowState::Changed,
        }
    }
    if indices.windows(2).any(|w| w[1] != w[0] + 1) {
        return RowState::Changed;
    }
    let (Some(&first), Some(&last)) = (indices.first(), indices.last()) else {
        return RowState::Changed;
    };
    match toggled {
        None => RowState::Same { first, last },
        Some((col, word, on)) => RowState::Toggled {
            first,
            last,
            col,
            word,
            on,
        },
    }
}

/// A table of `frame` (`units`: the cells of its whole rows, one unit each) as a delta of its
/// rows: every row written, but runs of rows held as sent (or held but for one state of one
/// column, the same in every row of the run) in one line each. `None` when the agent holds
/// the table as it is (an unchanged run covers it), or when a row cannot say what changed
/// (a removed node counted inside it). With `stale` (the agent holds another header), a
/// table held row by row still goes, its header first.
#[allow(clippy::too_many_arguments)]
fn table_delta(
    tree: &Tree<'_>,
    fp: &Fingerprint,
    sent: &SentPage,
    fid: u64,
    table: &Table<'_>,
    frame: &Frame,
    units: &[Unit],
    anchors: &HashSet<&str>,
    counts: &mut DeltaCounts,
    stale: bool,
) -> Option<TableDelta> {
    let w = table.columns.len();
    // Rows that are nodes of their own (`record_nodes`) have no run lines.
    if w == 0 || units.is_empty() || !table.record_nodes.is_empty() {
        return None;
    }
    let items = frame
        .items
        .get(units.first()?.start..units.last()?.start + 1)?;
    // One unit per cell, in place (whole rows are visible siblings).
    if items.len() != units.len() || units.iter().any(|u| u.len != 1) {
        return None;
    }
    if items.iter().any(|&i| {
        tree.subtree(i)
            .into_iter()
            .any(|d| fp.keys.get(d).is_some_and(|k| anchors.contains(k.as_str())))
    }) {
        return None;
    }
    let rows = units.len() / w;
    let states: Vec<RowState> = units
        .chunks(w)
        .map(|cells| row_state(tree, fp, sent, fid, table, frame, cells))
        .collect();
    let follows = |a: RowState, b: RowState| match (a.span(), b.span()) {
        (Some((_, last)), Some((first, _))) => first == last + 1,
        _ => false,
    };
    let held_whole = states.iter().all(|s| matches!(s, RowState::Same { .. }))
        && states.windows(2).all(|p| follows(p[0], p[1]));
    if held_whole && !stale {
        return None;
    }
    // Shown columns before each column: a run names a column by its place in the header.
    let place = |col: usize| table.columns.iter().take(col).filter(|c| c.shown).count() + 1;
    let mut td = TableDelta {
        rows,
        runs: HashMap::new(),
    };
    // A row held as sent agrees with "WORD in column C" (or "not WORD") when its cell says so.
    let agrees = |k: usize, claim: (usize, &str, bool)| {
        let (col, word, on) = claim;
        match states.get(k) {
            Some(RowState::Toggled {
                col: c,
                word: w,
                on: o,
                ..
            }) => (*c, *w, *o) == claim,
            Some(RowState::Same { .. }) => items
                .get(k * w + col)
                .and_then(|&i| tree.nodes.get(i))
                .is_some_and(|n| n.attrs.iter().any(|a| a.key == word && a.value.is_none()) == on),
            _ => false,
        }
    };
    let mut r = 0;
    while let Some(&state) = states.get(r) {
        if state == RowState::Changed {
            r += 1;
            continue;
        }
        // The rows from here held in order; the first one toggled gives the run its claim.
        let mut stretch = r + 1;
        while let (Some(&prev), Some(&next)) = (states.get(stretch - 1), states.get(stretch)) {
            if !follows(prev, next) {
                break;
            }
            stretch += 1;
        }
        let claim = states
            .get(r..stretch)
            .unwrap_or(&[])
            .iter()
            .find_map(|s| match *s {
                RowState::Toggled { col, word, on, .. } => Some((col, word, on)),
                _ => None,
            });
        let claim = claim.filter(|&c| agrees(r, c));
        let mut end = r + 1;
        while end < stretch
            && match claim {
                Some(c) => agrees(end, c),
                None => matches!(states.get(end), Some(RowState::Same { .. })),
            }
        {
            end += 1;
        }
        if end - r >= MIN_RUN_ROWS {
            let run = items.get(r * w..end * w).unwrap_or(&[]);
            let uids: Vec<&str> = run
                .iter()
                .filter_map(|&i| tree.nodes.get(i))
                .filter(|n| n.kind == NodeKind::Element && !n.uid.is_empty())
                .map(|n| n.uid)
                .collect();
            let mut line = format!("… {} rows unchanged", end - r);
            if let Some((col, word, on)) = claim {
                let not = if on { "" } else { "not " };
                line.push_str(&format!(" but {not}{word} in column {}", place(col)));
            }
            line.push_str(" (uid ");
            write_uid_list(&mut line, &uids);
            line.push(')');
            counts.unchanged_runs += 1;
            counts.unchanged_nodes += run
                .iter()
                .map(|&id| fp.sizes.get(id).copied().unwrap_or(1))
                .sum::<usize>();
            td.runs.insert(r, (end - r, line));
        }
        r = end;
    }
    Some(td)
}

/// Shown nodes still under the parent they were shown under, out of the order they were sent
/// in: in each frame, those outside one longest run kept in the sent order.
fn reordered(fp: &Fingerprint, sent: &SentPage, seen: &[Seen]) -> usize {
    let mut moved = 0;
    for (&owner, frame) in &fp.frames {
        let parent = owner.and_then(|o| fp.keys.get(o));
        let sent_order: Vec<u64> = frame
            .items
            .iter()
            .filter(|&&id| seen.get(id) == Some(&Seen::Shown))
            .filter_map(|&id| {
                let key = fp.keys.get(id)?;
                let i = *sent.index.get(key)?;
                let old = sent.nodes.get(i as usize)?;
                (old.shown && old.parent.as_ref() == parent && old.own == fp.own[id])
                    .then_some(u64::from(i))
            })
            .collect();
        if sent_order.windows(2).all(|w| w[0] < w[1]) {
            continue;
        }
        moved += sent_order.len() - longest_increasing_len(&sent_order);
    }
    moved
}

/// The length of a longest strictly increasing subsequence (patience sorting).
fn longest_increasing_len(keys: &[u64]) -> usize {
    let mut tails: Vec<u64> = Vec::new();
    for &k in keys {
        let at = tails.partition_point(|&t| t < k);
        match tails.get_mut(at) {
            Some(t) => *t = k,
            None => tails.push(k),
        }
    }
    tails.len()
}

/// Identity keys of `tree`'s nodes against `sent`, or against `earlier` when that holds more
/// of the page (a modal dialog's snapshot covered the page the agent held before it), with
/// the snapshot they are the keys of.
fn identity_keys<'s>(
    tree: &Tree<'_>,
    shape: &Shape,
    sent: &'s SentPage,
    earlier: Option<&'s SentPage>,
) -> (&'s SentPage, Vec<Option<&'s str>>) {
    let against = |held: &'s SentPage| -> (Vec<Option<&'s str>>, usize) {
        let Some(held_shape) = held.shape.as_ref() else {
            return (Vec::new(), 0);
        };
        let uids: Vec<&str> = held.nodes.iter().map(|n| n.uid.as_str()).collect();
        let side = identity::HeldSide {
            shape: held_shape,
            uids: &uids,
        };
        let (matched, count) = identity::match_nodes(tree, shape, &side);
        let keys = matched
            .into_iter()
            .map(|m| {
                m.and_then(|h| held.nodes.get(h as usize))
                    .map(|n| n.key.as_str())
            })
            .collect();
        (keys, count)
    };
    let (keys, count) = against(sent);
    let with_uid = tree.nodes.iter().filter(|n| !n.uid.is_empty()).count();
    if let Some(earlier) = earlier.filter(|_| 2 * count < with_uid) {
        let (earlier_keys, earlier_count) = against(earlier);
        if earlier_count > count {
            return (earlier, earlier_keys);
        }
    }
    (sent, keys)
}

/// What the agent holds of a page and which snapshot of it comes now.
#[derive(Debug, Clone, Copy)]
pub struct DeltaInput<'p> {
    /// What was sent last of this page, `None` when nothing is held (first, or evicted).
    pub sent: Option<&'p SentPage>,
    /// What was sent of it before that, kept where uids renumber: a page the last snapshot
    /// covered (a modal dialog's) is matched against it.
    pub earlier: Option<&'p SentPage>,
    /// The number of the snapshot being filtered (1 for the page's first).
    pub number: u64,
    /// Nothing is held because the upstream restarted or reconnected since the page's last
    /// snapshot (the full snapshot's header says so, rather than "first").
    pub upstream_reset: bool,
}

/// How a snapshot was sent with deltas on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sent {
    Delta { against: u64, counts: DeltaCounts },
    Full(FullReason),
}

/// A snapshot filtered with deltas on: the text sent, what the agent now holds (`None` below
/// `moderate`; a snapshot sent as it came holds the filtered tree's nodes and more), and the
/// bytes the full filtered snapshot would have taken.
#[derive(Debug, Clone)]
pub struct DeltaFiltered {
    pub filtered: FilteredSnapshot,
    pub holds: Option<SentPage>,
    pub sent: Option<Sent>,
    pub full_bytes: usize,
    /// Bytes of the delta when one was written, sent or not (what `MAX_DELTA_SHARE` judged).
    pub delta_bytes: Option<usize>,
}

/// `filter_with`, sending a delta against what the agent holds when the rules allow (see the
/// module doc and the README): full when nothing is held, the document is new, `MAX_DELTAS_IN_ROW`
/// deltas were sent in a row, or the delta is over `MAX_DELTA_SHARE` of the full snapshot.
pub fn filter_with_deltas<N: Notation + ?Sized>(
    notation: &N,
    text: &str,
    options: &SnapshotOptions,
    input: DeltaInput<'_>,
) -> DeltaFiltered {
    let mut implied = Vec::new();
    let mut tree = notation.parse(text, &mut implied);
    filter_tree_with_deltas(notation, text, &mut tree, options, input)
}

/// `filter_with_deltas` on a tree read already (from upstream's structured tree of `text`), as
/// parsed (`Tree::clear_marks`); the tree is left marked.
pub fn filter_tree_with_deltas<N: Notation + ?Sized>(
    notation: &N,
    text: &str,
    tree: &mut Tree<'_>,
    options: &SnapshotOptions,
    input: DeltaInput<'_>,
) -> DeltaFiltered {
    let passthrough = |filtered: FilteredSnapshot| DeltaFiltered {
        full_bytes: filtered.text.len(),
        filtered,
        holds: None,
        sent: None,
        delta_bytes: None,
    };
    if options.level < Level::Moderate || tree.nodes.is_empty() {
        return passthrough(filter_tree(notation, text, tree, options));
    }
    // Indexed as `filter_tree` indexes them: markers and unchanged lines name a repeated uid
    // only where it finds the node (`Tree::uid_finds`), which reads this index.
    let uids_in = tree.index_uids();
    apply_passes(tree, options);
    let full = notation.render(tree, true);
    let writes = |t: &Table<'_>| notation.writes_table(tree, t);
    // Where uids renumber, nodes are keyed by what the agent holds of them (`identity`), and
    // the delta goes against the held snapshot that holds more of the page.
    let shape = notation.uids_renumber().then(|| Shape::of(tree));
    let (against, fp) = match (&shape, input.sent) {
        (Some(shape), Some(sent)) => {
            let (against, keys) = identity_keys(tree, shape, sent, input.earlier);
            let view = TableView::of(tree, writes, &keys);
            (Some(against), Fingerprint::of_with(tree, view, &keys))
        }
        _ => (
            input.sent,
            Fingerprint::of_with(tree, TableView::of(tree, writes, &[]), &[]),
        ),
    };
    let input = DeltaInput {
        sent: against,
        ..input
    };
    // Filtering never grows a snapshot: where it would, a whole page goes as it came.
    let as_came = full.text.len() >= text.len();
    let full_of = |reason: FullReason, deltas_in_row: u32| {
        let mut out = notation.comment(&full_header(input.number, reason));
        out.push('\n');
        out.push_str(&full.text);
        (out, deltas_in_row)
    };
    let sent_as;
    let mut delta_bytes = None;
    let (text_out, deltas_in_row) = match input.sent {
        None => {
            let reason = if input.upstream_reset {
                FullReason::UpstreamReset
            } else {
                FullReason::First
            };
            sent_as = Some(Sent::Full(reason));
            full_of(reason, 0)
        }
        Some(prev) if fp.is_new_document(tree, prev) => {
            sent_as = Some(Sent::Full(FullReason::Navigated));
            full_of(FullReason::Navigated, 0)
        }
        Some(prev) if prev.deltas_in_row >= MAX_DELTAS_IN_ROW => {
            sent_as = Some(Sent::Full(FullReason::InRow));
            full_of(FullReason::InRow, 0)
        }
        Some(prev) => {
            let counts = mark_with(tree, &fp, prev, notation.writes_table_deltas());
            let mut header_text = delta_header(input.number, prev.number, &counts);
            if let Some(marks) = tree.delta.as_deref() {
                header_text.push_str(&marks.behind);
            }
            let header = notation.comment(&header_text);
            let delta = if counts.is_empty() {
                let mut short = header;
                if tree.trailing_newline {
                    short.push('\n');
                }
                short
            } else {
                shorter_delta(notation, tree, &fp, prev, &header)
            };
            delta_bytes = Some(delta.len());
            if delta.len() as f64 > MAX_DELTA_SHARE * full.text.len() as f64 {
                sent_as = Some(Sent::Full(FullReason::NotSmaller));
                full_of(FullReason::NotSmaller, 0)
            } else {
                sent_as = Some(Sent::Delta {
                    against: prev.number,
                    counts,
                });
                (delta, prev.deltas_in_row + 1)
            }
        }
    };
    let mut holds = fp.sent_page(tree, input.number, deltas_in_row);
    holds.shape = shape;
    if as_came && matches!(sent_as, Some(Sent::Full(_))) {
        // The agent then holds every node of the filtered tree and more: the page's next
        // snapshot is a delta against it all the same.
        let markers = tree
            .nodes
            .iter()
            .filter(|n| n.kind == NodeKind::Marker)
            .count();
        return DeltaFiltered {
            holds: Some(holds),
            ..passthrough(FilteredSnapshot {
                text: text.to_string(),
                uids_in,
                uids_shown: uids_in,
                uids_hidden: 0,
                markers,
            })
        };
    }
    DeltaFiltered {
        filtered: FilteredSnapshot {
            text: text_out,
            uids_in,
            uids_shown: full.uids_shown,
            uids_hidden: full.uids_hidden,
            markers: full.markers,
        },
        holds: Some(holds),
        sent: sent_as,
        full_bytes: full.text.len(),
        delta_bytes,
    }
}

/// The delta of a marked tree: with its changed tables written row by row, or, when that is
/// longer (a table's header costs more than a few changed nodes), marked again with their rows
/// as nodes (the tree is left marked as the delta returned).
fn shorter_delta<N: Notation + ?Sized>(
    notation: &N,
    tree: &mut Tree<'_>,
    fp: &Fingerprint,
    sent: &SentPage,
    header: &str,
) -> String {
    let with_tables = notation.render_delta(tree, header).text;
    if tree.delta.as_deref().is_none_or(|d| d.tables.is_empty()) {
        return with_tables;
    }
    let marks = tree.delta.take();
    let unchanged: Vec<bool> = tree.nodes.iter().map(|n| n.unchanged).collect();
    for node in &mut tree.nodes {
        node.unchanged = false;
    }
    mark_with(tree, fp, sent, false);
    let as_nodes = notation.render_delta(tree, header).text;
    if as_nodes.len() < with_tables.len() {
        return as_nodes;
    }
    tree.delta = marks;
    for (node, was) in tree.nodes.iter_mut().zip(unchanged) {
        node.unchanged = was;
    }
    with_tables
}

/// Childless visible nodes whose lines are about as short as an unchanged line: shown instead.
fn is_short(tree: &Tree<'_>, items: &[usize]) -> bool {
    let mut chars = 0;
    for &id in items {
        let Some(node) = tree.nodes.get(id) else {
            return false;
        };
        if node.hidden || !tree.children(id).is_empty() || node.kind != NodeKind::Element {
            return false;
        }
        chars += node.uid.len() + node.role.len() + 4;
        chars += node
            .keep_chars
            .unwrap_or(node.name_str().len())
            .min(node.name_str().len());
        chars += node
            .attrs
            .iter()
            .map(|a| a.key.len() + a.value.as_deref().map_or(0, str::len) + 2)
            .sum::<usize>();
    }
    chars <= SHORT_RUN_CHARS
}

/// `… 12 unchanged (uid 1_5…1_40): expand_snapshot uid=1_5 until=1_40`.
fn unchanged_line(tree: &Tree<'_>, items: &[usize], nodes: usize, fallback: &str) -> String {
    let uids: Vec<&str> = items
        .iter()
        .filter_map(|&i| tree.nodes.get(i))
        .filter(|n| n.kind == NodeKind::Element && !n.uid.is_empty())
        .map(|n| n.uid)
        .collect();
    let mut text = format!("… {nodes} unchanged");
    if !uids.is_empty() {
        text.push_str(" (uid ");
        write_uid_list(&mut text, &uids);
        text.push(')');
    }
    ExpandTarget::for_run(tree, items, fallback).write(&mut text);
    text
}

fn write_uid_list(out: &mut String, uids: &[&str]) {
    match uids {
        [] => {}
        [one] => out.push_str(one),
        [a, b] => {
            out.push_str(a);
            out.push_str(", ");
            out.push_str(b);
        }
        [first, .., last] => {
            out.push_str(first);
            out.push('…');
            out.push_str(last);
        }
    }
}

/// The header line of a delta (without the notation's comment tag).
pub fn delta_header(number: u64, against: u64, counts: &DeltaCounts) -> String {
    if counts.is_empty() {
        return format!(
            "snapshot {number}: unchanged since snapshot {against}; expand_snapshot without uid shows it"
        );
    }
    let mut moved = String::new();
    if counts.moved > 0 {
        moved.push_str(&format!(", {} moved", counts.moved));
    }
    if counts.revealed > 0 {
        moved.push_str(&format!(", {} no longer hidden", counts.revealed));
    }
    format!(
        "snapshot {number}: delta against snapshot {against}, {} added, {} changed{moved}, {} removed; \"… unchanged\" lines: as in snapshot {against} (whole page: expand_snapshot without uid)",
        counts.added, counts.changed, counts.removed
    )
}

/// The header line of a full snapshot sent while deltas are on.
pub fn full_header(number: u64, reason: FullReason) -> String {
    format!("snapshot {number}, full: {}", reason.text())
}
