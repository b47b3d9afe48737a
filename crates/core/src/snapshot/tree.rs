//! The node model shared by every snapshot format: an arena of nodes in document (pre-)order,
//! each with an optional id (`uid`, or a Playwright `ref`), role, name, attributes and the raw
//! line(s) it came from. Passes only flip the per-node flags; renderers read them.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// What a line of the snapshot is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeKind {
    /// An accessibility node (`uid=… role "name" attrs`), with or without a role.
    Element,
    /// A line the parser could not read (note lines before the tree, stray text): kept verbatim.
    Verbatim,
    /// A marker line written by a lossy level (`… N links hidden (uids …): expand_snapshot …`).
    Marker,
}

/// One attribute: `key="value"` or a bare word (`value` is `None`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attr<'a> {
    pub key: &'a str,
    pub value: Option<Cow<'a, str>>,
}

/// Laid out by hand (`repr(C)`), the fields every pass sweeps first: the passes walk all nodes
/// in order reading the flags, kind, parent and role, and on big pages the sweeps are bound by
/// memory, so those fields share the node's first cache line.
#[derive(Debug, Clone)]
#[repr(C)]
pub struct Node<'a> {
    pub kind: NodeKind,
    /// Set by passes: the node and its whole subtree are hidden behind a marker.
    pub hidden: bool,
    /// Set by passes: the node's own line is dropped, its children are promoted.
    pub dropped: bool,
    /// Set by passes: the `url` attribute is not written (nor a link's `description`: see
    /// [`Node::drops_attr`]).
    pub drop_url: bool,
    /// Set by a delta: the node is part of a run written as one unchanged line.
    pub unchanged: bool,
    /// Ended with the DevTools selection suffix `[selected in the DevTools Elements panel]`.
    pub devtools_selected: bool,
    pub parent: Option<usize>,
    /// Empty for role-less text nodes.
    pub role: &'a str,
    /// The node's id as printed (`29_3`), empty when it has none.
    pub uid: &'a str,
    pub name: Option<Cow<'a, str>>,
    pub attrs: Vec<Attr<'a>>,
    /// Set by passes: characters of the name to keep (the rest is cut behind `cut=N`).
    pub keep_chars: Option<usize>,
    /// The source line(s), continuation lines included, without the final newline. `None` for
    /// nodes that shared a line with a previous one (merged text runs of the light notation).
    pub raw: Option<&'a str>,
}

impl<'a> Node<'a> {
    pub fn new(kind: NodeKind, raw: Option<&'a str>) -> Node<'a> {
        Node {
            kind,
            uid: "",
            role: "",
            name: None,
            attrs: Vec::new(),
            devtools_selected: false,
            raw,
            parent: None,
            hidden: false,
            dropped: false,
            keep_chars: None,
            drop_url: false,
            unchanged: false,
        }
    }

    pub fn attr(&self, key: &str) -> Option<&Attr<'a>> {
        self.attrs.iter().find(|a| a.key == key)
    }

    pub fn has_attr(&self, key: &str) -> bool {
        self.attr(key).is_some()
    }

    /// A role-less node holding only text (no attributes).
    pub fn is_text(&self) -> bool {
        self.kind == NodeKind::Element && self.role.is_empty() && self.attrs.is_empty()
    }

    /// Whether a lossy pass dropped the attribute `key`: a named link's or an image's url, and a
    /// link's `description` (its title: a tooltip's prose beside the name the agent clicks by,
    /// a twentieth of a documentation page's tokens). Search and expand still show them.
    pub fn drops_attr(&self, key: &str) -> bool {
        self.drop_url
            && (key == "url" || key == "/url" || (key == "description" && self.role == "link"))
    }

    pub fn name_str(&self) -> &str {
        self.name.as_deref().unwrap_or("")
    }
}

/// Where a render may give up: once what it wrote is over `tokens` estimated tokens or `chars`
/// UTF-16 units, the rest is not written (`render::Rendered::gave_up`). The budget's ladder sets it,
/// with the slack of `crate::tokens::MAX_TOKENS_LOST_AT_SEAM` per seam, for a step that is not
/// its last: any text holding what was written is over the budget, so that step is rejected
/// whatever the rest would have been.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutputCap {
    pub tokens: usize,
    pub chars: usize,
}

/// A parsed snapshot: nodes in document order; `roots` are the top-level ones.
#[derive(Debug, Clone, Default)]
pub struct Tree<'a> {
    pub nodes: Vec<Node<'a>>,
    pub roots: Vec<usize>,
    /// Each node's children (`Tree::children`), built from the parents when the tree is sealed
    /// (`Tree::seal`), and kept beside the nodes: a pass that flips flags on children while it
    /// reads their list borrows the two apart.
    pub child_lists: ChildLists,
    /// The input was in the light notation (it carried our legend line).
    pub light_notation: bool,
    /// The notation keeps each record's own node (a row, a list item) with its cells under
    /// it (Playwright's snapshots do; chrome-devtools-mcp's flatten them into siblings): its
    /// runs of such nodes inside `main` can be tables (`nested::collapse_nested`).
    pub nested_records: bool,
    /// The input ended with a newline.
    pub trailing_newline: bool,
    /// Lines the parser could not read as structure (kept verbatim).
    pub unreadable_lines: usize,
    /// Runs of repeated records hidden by a pass, keyed by the first hidden sibling: the
    /// renderer writes one marker per run saying what a record is.
    pub hidden_records: BTreeMap<usize, RecordRun<'a>>,
    /// Runs of repeated records shown by their controls and labels only, keyed by the first
    /// sibling of their first record: the renderer writes one marker before them naming the
    /// nodes they hide (`condensed_cells`).
    pub condensed_records: BTreeMap<usize, CondensedRun>,
    /// The nodes hidden inside condensed records: named by their run's marker, not one each.
    pub condensed_cells: NodeSet,
    /// The siblings of the records a run shows (whole, or condensed to their controls and
    /// labels): later passes leave them, so a row shows as a whole, never its buttons without
    /// the cells that name it.
    pub record_members: NodeSet,
    /// The texts that name a record shown (its labels, its first text when no link names it):
    /// the text budget leaves them.
    pub record_labels: NodeSet,
    /// Runs of records written as a table (`records::collapse_records`), keyed by the first
    /// sibling of their first record: the renderer writes a header and one line per record.
    pub tables: BTreeMap<usize, Table<'a>>,
    /// Set when the tree is written as a delta (`snapshot::delta`): the lines it adds.
    pub delta: Option<Box<DeltaMarks>>,
    /// Per node, the first element with the same uid (filled by `index_uids`; empty before):
    /// upstream repeats some uids, and a reader who looks one up finds its first node only.
    pub first_with_uid: Vec<usize>,
    /// How many different uids `first_with_uid` found.
    pub(crate) distinct_uids: usize,
    /// Where a render of this tree may give up (`OutputCap`; set by the budget's
    /// ladder for a step that will not fit).
    pub output_cap: Option<OutputCap>,
    /// `snapshot::filter_tree`'s render of the tree stopped at `output_cap`: what it returned
    /// is the start of the output only.
    pub gave_up: bool,
    /// What the lossy passes keep of this tree for its next filtering (`snapshot::PassMemo`),
    /// on a tree filtered at several steps; `clear_marks` leaves it: it reads the tree as
    /// parsed.
    pub(crate) pass_memo: Option<Box<super::PassMemo<'a>>>,
}

/// The marks of a tree's lossy passes (what `clear_marks` takes back, but a delta's), kept to
/// be set again (`Tree::set_marks`): each marked node's flags, and the maps.
#[derive(Debug, Clone, Default)]
pub struct Marks<'a> {
    /// (id, hidden, dropped, drop_url, keep_chars) of each node with a mark, ascending.
    nodes: Vec<(usize, bool, bool, bool, Option<usize>)>,
    hidden_records: BTreeMap<usize, RecordRun<'a>>,
    condensed_records: BTreeMap<usize, CondensedRun>,
    condensed_cells: NodeSet,
    record_members: NodeSet,
    record_labels: NodeSet,
    tables: BTreeMap<usize, Table<'a>>,
}

/// A set of node ids, a bit per id: the passes ask their sets about node after node, and a
/// hash set hashed each id and, on a big page, missed the cache at each lookup; the bits of
/// half a million nodes fit in 64 KB.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeSet {
    words: Vec<u64>,
    len: usize,
}

impl NodeSet {
    pub fn new() -> NodeSet {
        NodeSet::default()
    }

    /// Adds `id`; whether it was not in the set.
    pub fn insert(&mut self, id: usize) -> bool {
        let (word, bit) = (id / 64, 1u64 << (id % 64));
        if self.words.len() <= word {
            self.words.resize(word + 1, 0);
        }
        let Some(w) = self.words.get_mut(word) else {
            return false;
        };
        let new = *w & bit == 0;
        *w |= bit;
        self.len += usize::from(new);
        new
    }

    pub fn contains(&self, id: &usize) -> bool {
        self.words
            .get(id / 64)
            .is_some_and(|w| w & (1u64 << (id % 64)) != 0)
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn clear(&mut self) {
        self.words.clear();
        self.len = 0;
    }

    /// The ids in the set, ascending.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.words.iter().enumerate().flat_map(|(k, &w)| {
            let mut rest = w;
            std::iter::from_fn(move || {
                if rest == 0 {
                    return None;
                }
                let bit = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                Some(k * 64 + bit)
            })
        })
    }
}

impl Extend<usize> for NodeSet {
    fn extend<I: IntoIterator<Item = usize>>(&mut self, ids: I) {
        for id in ids {
            self.insert(id);
        }
    }
}

impl FromIterator<usize> for NodeSet {
    fn from_iter<I: IntoIterator<Item = usize>>(ids: I) -> NodeSet {
        let mut set = NodeSet::new();
        set.extend(ids);
        set
    }
}

/// The lines a delta adds to a render (`render::render_with` writes them).
#[derive(Debug, Clone, Default)]
pub struct DeltaMarks {
    /// By the first item of a run of unchanged siblings: the run's length in its frame and its
    /// line.
    pub runs: HashMap<usize, (usize, String)>,
    /// By the node whose frame ends with it (`None`: the roots): the line of the nodes removed
    /// there.
    pub removed: HashMap<Option<usize>, String>,
    /// Changes no shown line holds (inside hidden runs, in layout nodes dropped), for the
    /// header: `; behind markers: 1 added or changed (uid 1_214): expand_snapshot uid=1_200`.
    pub behind: String,
    /// By a table's first item: the table written as a delta of its rows (by a notation that
    /// writes tables; `runs` above still cover its items, for one that does not).
    pub tables: HashMap<usize, TableDelta>,
    /// By a table's first item: a table written whole, as in a full snapshot (its header is
    /// not the one the agent holds, and no delta of its rows is written).
    pub whole_tables: HashSet<usize>,
    /// Every node under the rows of the tables the full snapshot writes: their layout nodes
    /// dropped are not the full snapshot's to count, nor the delta's.
    pub table_cover: HashSet<usize>,
}

/// A table in a delta: its header, then each row that changed as a row, each run of rows the
/// agent holds as one line.
#[derive(Debug, Clone, Default)]
pub struct TableDelta {
    /// The records written (the leading ones left whole, as in the full snapshot).
    pub rows: usize,
    /// By the index of a run's first row: the rows in the run and its line.
    pub runs: HashMap<usize, (usize, String)>,
}

/// Repeated records (rows of a grid flattened into siblings) hidden after the first few.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordRun<'a> {
    /// Siblings hidden (all the hidden records together).
    pub siblings: usize,
    /// Records hidden.
    pub records: usize,
    /// The roles of one record, in order (`text` for role-less nodes).
    pub shape: Vec<&'a str>,
}

/// A run of records of one exact shape, written as a table: a header naming each column (its
/// role, its name when fixed or made of the record's name, the attributes every record has
/// alike, the options of a combobox), then one line per record with what varies: every
/// control's uid, the names, texts, values and states that differ.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table<'a> {
    /// The cells of the run, record after record (`columns.len()` each): the siblings
    /// themselves, or the nodes under each of `record_nodes`.
    pub items: Vec<usize>,
    pub columns: Vec<Column<'a>>,
    /// Empty when a record is a run of siblings (chrome-devtools-mcp flattens rows); else the
    /// node of each record (a Playwright `row`, `listitem`, `article`), siblings, its cells
    /// under it (`nested::collapse_nested`).
    pub record_nodes: Vec<usize>,
}

impl Table<'_> {
    pub fn records(&self) -> usize {
        self.items.len() / self.columns.len().max(1)
    }

    /// The cells of record `r`.
    pub fn record(&self, r: usize) -> &[usize] {
        let w = self.columns.len();
        self.items.get(r * w..(r + 1) * w).unwrap_or(&[])
    }

    /// The siblings that make record `r` in its parent's children.
    pub fn siblings(&self, r: usize) -> &[usize] {
        if self.record_nodes.is_empty() {
            self.record(r)
        } else {
            self.record_nodes.get(r..r + 1).unwrap_or(&[])
        }
    }
}

/// One column of a table: what every record has at that place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column<'a> {
    /// Empty for text cells.
    pub role: &'a str,
    pub name: ColumnName,
    /// The attributes (keys) every record's cell has with the same value: in the header.
    pub fixed: Vec<&'a str>,
    /// A combobox's or listbox's options, the same names in every record, their uids the ones
    /// right after the cell's own (`N_k+1`, `N_k+2`, …): in the header, never in the rows.
    pub options: Vec<String>,
    /// The cell's uid is written in each row (a control); text cells go without theirs.
    pub uid: bool,
    /// Every record's cell has a `value`, not all the same: each row writes it bare after the
    /// uid and name (`value=*` in the header).
    pub value: bool,
    /// Written at all: text columns past the row's text budget are not (the header's marker
    /// gives them back).
    pub shown: bool,
}

/// How a column's names read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ColumnName {
    /// No record's cell has a name.
    None,
    /// The same name in every record: in the header.
    Fixed,
    /// The record's name (`{name}` in the header): in each row.
    Key,
    /// The record's name inside the same words (`Edit {name}`); a row whose name reads
    /// otherwise (or whose name the row cuts) writes it.
    Around(String, String),
    /// Written in each row.
    Varies,
}

/// Repeated records shown by their controls and labels only (see `records::collapse_records`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CondensedRun {
    /// The ordinal of the first condensed record in its run (1-based).
    pub first_record: usize,
    /// Records condensed.
    pub records: usize,
    /// The last sibling of the last condensed record.
    pub last: usize,
    /// The siblings hidden in them, in order.
    pub cells: Vec<usize>,
}

/// The children of every node of a tree, ascending, in one array: node `id`'s are
/// `ids[starts[id]..starts[id + 1]]` (compressed sparse rows). A list per node cost an
/// allocation each, grown while parsing and freed with the tree, and a reader of a container
/// went to the heap for it; these are two arrays read in document order.
#[derive(Debug, Clone, Default)]
pub struct ChildLists {
    /// Sealed: one per node and one more, where each node's children start in `ids`. While
    /// the tree is built: one per node, how many children it has so far.
    starts: Vec<usize>,
    ids: Vec<usize>,
    /// While the tree is built: each node's parent (`NO_PARENT` for a root), read by the seal
    /// from this array rather than from the nodes (a sweep of the whole arena, on a big page
    /// a cache miss a node).
    parents: Vec<usize>,
}

/// A root's entry in `ChildLists::parents`.
const NO_PARENT: usize = usize::MAX;

impl ChildLists {
    fn reserve(&mut self, nodes: usize) {
        self.starts.reserve(nodes + 1);
        self.parents.reserve(nodes);
    }

    /// Counts the next node under `parent` (an earlier node: `Tree::push` makes it so; any
    /// other lists it nowhere, so the seal places only the children it counted).
    fn push(&mut self, parent: Option<usize>) {
        let parent = match parent.and_then(|p| Some((p, self.starts.get_mut(p)?))) {
            Some((p, count)) => {
                *count += 1;
                p
            }
            None => NO_PARENT,
        };
        self.starts.push(0);
        self.parents.push(parent);
    }

    /// Turns the counts into lists: sums them into where each list ends, then places the
    /// children from the last one back, so each list fills from its end, ascending.
    fn seal(&mut self) {
        self.starts.push(0);
        let mut end = 0;
        for slot in &mut self.starts {
            end += *slot;
            *slot = end;
        }
        let mut ids = vec![0usize; end];
        for (id, &parent) in self.parents.iter().enumerate().rev() {
            let Some(next) = self.starts.get_mut(parent) else {
                continue;
            };
            *next -= 1;
            if let Some(slot) = ids.get_mut(*next) {
                *slot = id;
            }
        }
        self.ids = ids;
        self.parents = Vec::new();
    }

    /// Whether `seal` made the lists of `nodes` nodes.
    fn sealed(&self, nodes: usize) -> bool {
        self.starts.len() == nodes + 1
    }

    /// The children of `id`, ascending (empty for a leaf, or an id past the tree).
    pub fn of(&self, id: usize) -> &[usize] {
        match self.starts.get(id..).and_then(|s| s.get(..2)) {
            Some(&[start, end]) => self.ids.get(start..end).unwrap_or(&[]),
            _ => &[],
        }
    }
}

impl<'a> Tree<'a> {
    /// Adds `node` under `parent` (a root when `None`, or when `parent` is no earlier node, so
    /// every node is reached from a root and parents precede their children). Ids are given in
    /// order, so each `children` list and `roots` ascend, which readers may binary-search. Its
    /// parent's children are read once the tree is sealed (`seal`).
    pub fn push(&mut self, mut node: Node<'a>, parent: Option<usize>) -> usize {
        let id = self.nodes.len();
        debug_assert!(!self.child_lists.sealed(id), "node pushed on a sealed tree");
        let parent = parent.filter(|&p| p < id);
        node.parent = parent;
        self.nodes.push(node);
        self.child_lists.push(parent);
        if parent.is_none() {
            self.roots.push(id);
        }
        id
    }

    /// Room for `nodes` more nodes (a parser's estimate): the arena and the child lists' counts
    /// are sized once instead of regrown, each regrowth a copy.
    pub fn reserve(&mut self, nodes: usize) {
        self.nodes.reserve(nodes);
        self.child_lists.reserve(nodes);
    }

    /// Builds every node's children from the parents counted by `push`, once the last node is
    /// pushed: a parser's last step (nothing reads children while parsing), and before a
    /// hand-built tree is read.
    pub fn seal(&mut self) {
        if !self.child_lists.sealed(self.nodes.len()) {
            self.child_lists.seal();
        }
    }

    /// The children of `id`, in document order: ids ascend, so readers may binary-search.
    pub fn children(&self, id: usize) -> &[usize] {
        debug_assert!(
            self.nodes.is_empty() || self.child_lists.sealed(self.nodes.len()),
            "children read before the tree was sealed"
        );
        self.child_lists.of(id)
    }

    /// The children of `parent`, or the roots for `None`: a node's siblings, itself among them.
    pub fn siblings_under(&self, parent: Option<usize>) -> &[usize] {
        match parent {
            Some(p) => self.children(p),
            None => &self.roots,
        }
    }

    /// Ids of `root` and everything under it, in document order (explicit stack: trees may be
    /// thousands of levels deep).
    pub fn subtree(&self, root: usize) -> impl Iterator<Item = usize> + '_ {
        let mut stack = vec![root];
        std::iter::from_fn(move || {
            let id = stack.pop()?;
            stack.extend(self.children(id).iter().rev().copied());
            Some(id)
        })
    }

    /// Ancestors of `id`, nearest first.
    pub fn ancestors(&self, id: usize) -> impl Iterator<Item = usize> + '_ {
        let mut next = self.nodes.get(id).and_then(|n| n.parent);
        std::iter::from_fn(move || {
            let cur = next?;
            next = self.nodes.get(cur).and_then(|n| n.parent);
            Some(cur)
        })
    }

    /// The first element with this uid. An empty uid names nothing: nodes without an id
    /// (Playwright's structural nodes) are not looked up by it.
    pub fn find_uid(&self, uid: &str) -> Option<usize> {
        if uid.is_empty() {
            return None;
        }
        self.nodes
            .iter()
            .position(|n| n.kind == NodeKind::Element && n.uid == uid)
    }

    /// Fills `first_with_uid` (once: the passes leave uids and nodes as parsed, so a tree
    /// filtered again, `clear_marks`, keeps its index); returns how many different uids the
    /// tree holds.
    pub fn index_uids(&mut self) -> usize {
        if !self.nodes.is_empty() && self.first_with_uid.len() == self.nodes.len() {
            return self.distinct_uids;
        }
        if let Some((index, count)) = self.index_ascending_uids() {
            self.first_with_uid = index;
            self.distinct_uids = count;
            return count;
        }
        let mut first: HashMap<&str, usize, BuildHasherDefault<UidHasher>> =
            HashMap::with_capacity_and_hasher(self.nodes.len(), Default::default());
        let mut index = Vec::with_capacity(self.nodes.len());
        for (id, node) in self.nodes.iter().enumerate() {
            if node.kind == NodeKind::Element && !node.uid.is_empty() {
                index.push(*first.entry(node.uid).or_insert(id));
            } else {
                index.push(id);
            }
        }
        self.first_with_uid = index;
        self.distinct_uids = first.len();
        self.distinct_uids
    }

    /// The index of the uids read in document order, where most numbers come past the last of
    /// their prefix (`1_` 7 then `1_` 9; `e` 5, `f1e` 1, `e` 6): each such one is new and finds
    /// itself. Upstream numbers its ids in document order, so this holds for what it writes,
    /// but for the one uid it gives the nodes without a DOM node of their own (a few repeats).
    /// Those few are looked up among the earlier numbers of their prefix (ascending, so a
    /// binary search), instead of hashing every uid into a map of the whole page (whose misses
    /// showed on big snapshots). `None` when a uid has no canonical number (`e01` is not `e1`),
    /// the prefixes are too many or the numbers too often out of order: the map decides.
    fn index_ascending_uids(&self) -> Option<(Vec<usize>, usize)> {
        // A page has a few prefixes (one per frame).
        const MAX_PREFIXES: usize = 32;
        let max_behind = self.nodes.len() / 16 + 64;
        // Per prefix: its nodes that came in order, (node, number) by number ascending; the
        // last one's number is what the next uid of the prefix must pass.
        let mut prefixes: Vec<(&str, Vec<(usize, u64)>)> = Vec::new();
        // Nodes whose number is not past the last of their prefix: (node, prefix slot, number).
        let mut behind: Vec<(usize, usize, u64)> = Vec::new();
        let mut current = 0;
        let mut count = 0;
        for (id, node) in self.nodes.iter().enumerate() {
            if node.kind != NodeKind::Element || node.uid.is_empty() {
                continue;
            }
            let (prefix, number) = split_canonical_number(node.uid)?;
            if prefixes.get(current).is_none_or(|(p, _)| *p != prefix) {
                match prefixes.iter().position(|(p, _)| *p == prefix) {
                    Some(at) => current = at,
                    None if prefixes.len() < MAX_PREFIXES => {
                        prefixes.push((prefix, vec![(id, number)]));
                        current = prefixes.len() - 1;
                        count += 1;
                        continue;
                    }
                    None => return None,
                }
            }
            let (_, in_order) = prefixes.get_mut(current)?;
            if in_order.last().is_some_and(|&(_, last)| number <= last) {
                if behind.len() >= max_behind {
                    return None;
                }
                behind.push((id, current, number));
                continue;
            }
            in_order.push((id, number));
            count += 1;
        }
        let mut index: Vec<usize> = (0..self.nodes.len()).collect();
        // The first of each behind uid that no node in order holds (a few).
        let mut first_behind: HashMap<(usize, u64), usize> = HashMap::new();
        for (id, at, number) in behind {
            let in_order = prefixes
                .get(at)
                .map_or(&[][..], |(_, nodes)| nodes.as_slice());
            let first = match in_order.binary_search_by_key(&number, |&(_, n)| n) {
                // In order ones with a number not past it all came before this node.
                Ok(k) => in_order.get(k).map_or(id, |&(first, _)| first),
                Err(_) => *first_behind.entry((at, number)).or_insert_with(|| {
                    count += 1;
                    id
                }),
            };
            if let Some(slot) = index.get_mut(id) {
                *slot = first;
            }
        }
        Some((index, count))
    }

    /// Takes back everything the lossy passes and a delta set (`snapshot::apply_passes`,
    /// `snapshot::delta`): the tree reads as parsed again, its uid index kept, so that the
    /// budget's ladder filters one parse at each step instead of a copy of it. The passes
    /// change only these flags and maps (`clear_marks_gives_back_the_parsed_tree` checks it).
    pub fn clear_marks(&mut self) {
        for node in &mut self.nodes {
            node.hidden = false;
            node.dropped = false;
            node.drop_url = false;
            node.unchanged = false;
            node.keep_chars = None;
        }
        self.hidden_records.clear();
        self.condensed_records.clear();
        self.condensed_cells.clear();
        self.record_members.clear();
        self.record_labels.clear();
        self.tables.clear();
        self.delta = None;
        self.gave_up = false;
    }

    /// The marks the lossy passes set so far (not a delta's).
    pub fn marks(&self) -> Marks<'a> {
        let nodes = self
            .nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.hidden || n.dropped || n.drop_url || n.keep_chars.is_some())
            .map(|(id, n)| (id, n.hidden, n.dropped, n.drop_url, n.keep_chars))
            .collect();
        Marks {
            nodes,
            hidden_records: self.hidden_records.clone(),
            condensed_records: self.condensed_records.clone(),
            condensed_cells: self.condensed_cells.clone(),
            record_members: self.record_members.clone(),
            record_labels: self.record_labels.clone(),
            tables: self.tables.clone(),
        }
    }

    /// Sets `marks` (taken by `marks` of this tree) on the tree as parsed (`clear_marks`): it
    /// reads as it did when they were taken, but for a delta's marks.
    pub fn set_marks(&mut self, marks: &Marks<'a>) {
        debug_assert!(
            self.nodes
                .iter()
                .all(|n| !(n.hidden || n.dropped || n.drop_url || n.keep_chars.is_some())),
            "marks set on a marked tree"
        );
        for &(id, hidden, dropped, drop_url, keep_chars) in &marks.nodes {
            if let Some(node) = self.nodes.get_mut(id) {
                node.hidden = hidden;
                node.dropped = dropped;
                node.drop_url = drop_url;
                node.keep_chars = keep_chars;
            }
        }
        self.hidden_records.clone_from(&marks.hidden_records);
        self.condensed_records.clone_from(&marks.condensed_records);
        self.condensed_cells.clone_from(&marks.condensed_cells);
        self.record_members.clone_from(&marks.record_members);
        self.record_labels.clone_from(&marks.record_labels);
        self.tables.clone_from(&marks.tables);
    }

    /// The node a reader finds for `id`'s uid (`id` itself when the tree is not indexed).
    pub fn first_with_uid(&self, id: usize) -> usize {
        self.first_with_uid.get(id).copied().unwrap_or(id)
    }

    /// Whether looking up `id`'s uid finds `id`: it has a uid, and no earlier node has it.
    pub fn uid_finds(&self, id: usize) -> bool {
        self.nodes
            .get(id)
            .is_some_and(|n| n.kind == NodeKind::Element && !n.uid.is_empty())
            && self.first_with_uid(id) == id
    }

    /// Whether `id` is hidden inside a condensed record (its run's marker names it).
    pub fn is_condensed_cell(&self, id: usize) -> bool {
        !self.condensed_cells.is_empty() && self.condensed_cells.contains(&id)
    }

    /// The uids of every element node, in document order.
    pub fn uids(&self) -> impl Iterator<Item = &'a str> + '_ {
        self.nodes
            .iter()
            .filter(|n| n.kind == NodeKind::Element && !n.uid.is_empty())
            .map(|n| n.uid)
    }
}

/// `f1e12` → (`f1e`, 12): a uid's trailing digits as a number, `None` without any (or too
/// many for a `u64`). Two uids alike split alike, so different splits are different uids.
fn split_canonical_number(uid: &str) -> Option<(&str, u64)> {
    // Bytes, not chars: the digits are ASCII, and a prefix ends at a non-digit byte either way.
    let bytes = uid.as_bytes();
    let start = bytes
        .iter()
        .rposition(|b| !b.is_ascii_digit())
        .map_or(0, |p| p + 1);
    let digits = bytes.get(start..)?;
    // Two uids are alike exactly when prefix and number are: not so with leading zeros.
    let canonical = digits.first() != Some(&b'0') || digits.len() == 1;
    if digits.is_empty() || digits.len() > 19 || !canonical {
        return None;
    }
    let number = digits
        .iter()
        .fold(0u64, |n, &d| n * 10 + u64::from(d - b'0'));
    Some((uid.get(..start)?, number))
}

/// A multiply-rotate hash (FxHash's) for short strings of one snapshot (uids, roles):
/// SipHash's flooding resistance buys nothing when counting the uids of one snapshot, and it
/// is several times slower.
#[derive(Default)]
pub(super) struct UidHasher(u64);

impl Hasher for UidHasher {
    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.0 = (self.0.rotate_left(5) ^ u64::from_le_bytes(word)).wrapping_mul(K);
        }
        for &b in chunks.remainder() {
            self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(K);
        }
    }

    /// The multiply leaves the low bits depending on the first bytes of each word only, and
    /// hashbrown picks the bucket by the low bits: uids of 8 bytes and more (`1_100000`) fell
    /// into a few dozen buckets, making the index quadratic. A final avalanche (murmur3's
    /// fmix64) mixes every bit into the low ones.
    fn finish(&self) -> u64 {
        let mut x = self.0;
        x ^= x >> 33;
        x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
        x ^= x >> 33;
        x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        x ^ (x >> 33)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;
    use std::hash::BuildHasher;

    /// hashbrown picks a bucket from a hash's low bits: if those depend on a few bytes of the
    /// uid only, a big snapshot's uids share buckets and every lookup compares against a long
    /// chain (filtering went superlinear past 100 000 uids, when counters reach six digits and
    /// a uid fills a whole 8-byte word).
    #[test]
    fn uid_hashes_spread_over_the_low_bits() {
        const BITS: u32 = 16;
        let build = BuildHasherDefault::<UidHasher>::default();
        for shape in ["1_{}", "15_{}", "{}", "f6e{}", "e{}"] {
            let mut buckets = HashSet::new();
            let count = 100_000u32;
            for k in 0..count {
                let uid = shape.replace("{}", &(100_000 + k).to_string());
                buckets.insert(build.hash_one(uid.as_str()) & ((1 << BITS) - 1));
            }
            // 100 000 keys thrown at random into 65 536 buckets fill about 78% of them.
            let filled = buckets.len() as f64 / f64::from(1u32 << BITS);
            assert!(filled > 0.7, "{shape}: {filled:.3} of the buckets used");
        }
    }

    /// Uids read in order by their numbers (`index_ascending_uids`, a few repeats looked up) or
    /// through the map index alike: each node finds the first node with its uid, whichever way
    /// the uids come.
    #[test]
    fn index_uids_agrees_with_a_scan_for_the_first_node() {
        let cases: &[&[&str]] = &[
            &["1_1", "1_2", "", "1_10", "1_11"],
            &["e1", "e2", "f1e1", "f1e2", "e3", "f2e1", "e4"],
            &["e1", "e2", "f1e1", "e2", "e3"],
            &["e5", "e3", "e4", "e3"],
            &["e1", "e01", "e2"],
            &["e0", "e00", "e0", "e1"],
            &[
                "1_1", "1_5", "2_1", "1_5", "1_3", "1_3", "2_1", "1_6", "1_1",
            ],
            &["a", "b", "a", "1"],
            &["7", "8", "9"],
            &["e1", "e99999999999999999999", "e99999999999999999999"],
        ];
        for uids in cases {
            let mut tree = Tree::default();
            for uid in *uids {
                let mut node = Node::new(NodeKind::Element, None);
                node.uid = uid;
                tree.push(node, None);
            }
            let distinct: HashSet<&str> = uids.iter().copied().filter(|u| !u.is_empty()).collect();
            assert_eq!(tree.index_uids(), distinct.len(), "{uids:?}");
            for (id, uid) in uids.iter().enumerate() {
                let first = if uid.is_empty() {
                    id
                } else {
                    uids.iter().position(|u| u == uid).unwrap_or(id)
                };
                assert_eq!(tree.first_with_uid(id), first, "{uids:?} at {id}");
            }
        }
        // Prefixes past the few a page has: the map takes over, still right.
        let many: Vec<String> = (0..100).map(|k| format!("f{k}e1")).collect();
        let mut tree = Tree::default();
        for uid in many.iter().chain(many.iter().take(1)) {
            let mut node = Node::new(NodeKind::Element, None);
            node.uid = uid;
            tree.push(node, None);
        }
        assert_eq!(tree.index_uids(), 100);
        assert_eq!(tree.first_with_uid(100), 0);
    }

    /// A sealed tree's children are, per node, the later nodes pushed under it, in id order;
    /// the roots and an id past the tree have none.
    #[test]
    fn sealed_children_are_the_nodes_pushed_under_each() {
        // Parents picked by a fixed pseudo-random sequence: deep chains, wide fans, roots.
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for size in [0usize, 1, 2, 7, 64, 300] {
            let mut tree = Tree::default();
            let mut parents = Vec::new();
            for id in 0..size {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let parent =
                    (id > 0 && !state.is_multiple_of(5)).then(|| (state >> 8) as usize % id);
                parents.push(parent);
                tree.push(Node::new(NodeKind::Element, None), parent);
            }
            tree.seal();
            for id in 0..size {
                let expected: Vec<usize> = (0..size).filter(|&c| parents[c] == Some(id)).collect();
                assert_eq!(tree.children(id), expected, "size {size} node {id}");
            }
            let roots: Vec<usize> = (0..size).filter(|&c| parents[c].is_none()).collect();
            assert_eq!(tree.roots, roots);
            assert!(tree.children(size).is_empty());
        }
    }

    /// A node pushed under no earlier node (itself, a later id) is a root, as one pushed under
    /// none: every node stays reachable, and no list holds a child that precedes its parent.
    #[test]
    fn a_parent_that_is_no_earlier_node_makes_a_root() {
        let mut tree = Tree::default();
        let a = tree.push(Node::new(NodeKind::Element, None), None);
        let b = tree.push(Node::new(NodeKind::Element, None), Some(a));
        let c = tree.push(Node::new(NodeKind::Element, None), Some(2));
        let d = tree.push(Node::new(NodeKind::Element, None), Some(9));
        tree.seal();
        assert_eq!(tree.roots, vec![a, c, d]);
        assert_eq!(tree.children(a), [b]);
        assert!(tree.children(c).is_empty() && tree.children(d).is_empty());
        assert_eq!((tree.nodes[c].parent, tree.nodes[d].parent), (None, None));
    }

    /// A node set answers as a hash set of the same ids would, and lists them ascending.
    #[test]
    fn node_set_holds_what_was_inserted() {
        let ids = [0usize, 63, 64, 65, 1000, 7, 64, 129, 0];
        let mut set: NodeSet = ids.iter().copied().collect();
        let expected: std::collections::BTreeSet<usize> = ids.iter().copied().collect();
        assert_eq!(set.len(), expected.len());
        assert_eq!(
            set.iter().collect::<Vec<_>>(),
            expected.iter().copied().collect::<Vec<_>>()
        );
        for id in 0..1100 {
            assert_eq!(set.contains(&id), expected.contains(&id), "{id}");
        }
        assert!(!set.insert(63) && set.insert(62) && set.contains(&62));
        set.clear();
        assert!(set.is_empty() && !set.contains(&0) && set.iter().next().is_none());
    }

    /// The index of a big snapshot's uids, ids renumbered past six digits, finds each first node.
    #[test]
    fn index_uids_on_many_long_uids() {
        let uids: Vec<String> = (0..200_000).map(|k| format!("1_{}", 100_000 + k)).collect();
        let mut tree = Tree::default();
        for uid in &uids {
            let mut node = Node::new(NodeKind::Element, None);
            node.uid = uid;
            tree.push(node, None);
        }
        let mut again = Node::new(NodeKind::Element, None);
        again.uid = &uids[7];
        let repeat = tree.push(again, None);
        assert_eq!(tree.index_uids(), uids.len());
        assert_eq!(tree.first_with_uid(repeat), 7);
        assert!(tree.uid_finds(199_999) && !tree.uid_finds(repeat));
    }
}
