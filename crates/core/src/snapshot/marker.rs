//! Marker lines (their text; the notation's writer indents and frames it): where a lossy level
//! hid something, one line says what (roles and counts), which uids (a list, or the first…last range in document order, a uid counting where it first occurs, as a reader finds it) and how to get them back:
//!
//! `… 37 hidden (link 30, text 7; uid 7_120…7_410): expand_snapshot uid=7_120 until=7_400`
//! `… 3 text hidden (uid 7_120…7_140): expand_snapshot uid=7_100` (one role)
//! `… 3 text hidden: expand_snapshot uid=7_120 until=7_122` (the call names the same uids as
//! their range would: written once)
//! `… 35 more records hidden (12 nodes each: checkbox, text, link, text, …; uid 72_120…72_410):
//! expand_snapshot uid=72_120 until=72_400` (repeated records, one line)
//!
//! Every hidden uid is inside the subtree of the uid to expand, or of the siblings from `uid`
//! to `until`: markers name the smallest such thing. The parser reads these lines back as
//! `Marker` nodes, so filtering filtered output keeps them as they are.

use std::collections::HashSet;

use super::tree::{CondensedRun, NodeKind, RecordRun, Tree};

/// What a marker tells the agent to expand: the subtree of `uid`, or with `until` the run of
/// siblings from `uid` to `until`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExpandTarget<'a> {
    pub uid: &'a str,
    pub until: Option<&'a str>,
}

impl<'a> ExpandTarget<'a> {
    pub fn subtree(uid: &'a str) -> Self {
        ExpandTarget { uid, until: None }
    }

    /// The siblings of `run` themselves when they share a parent and their ends' uids find
    /// them (a repeated uid finds its first node, `until` the first later sibling with it);
    /// otherwise `fallback` (an ancestor of all of them).
    pub fn for_run(tree: &Tree<'a>, run: &[usize], fallback: &'a str) -> Self {
        let (Some(&first_id), Some(&last_id)) = (run.first(), run.last()) else {
            return ExpandTarget::subtree(fallback);
        };
        let node = |i: usize| tree.nodes.get(i);
        let Some(first) = node(first_id) else {
            return ExpandTarget::subtree(fallback);
        };
        let parent = first.parent;
        let siblings = run
            .iter()
            .all(|&i| tree.nodes.get(i).is_some_and(|n| n.parent == parent));
        if !siblings || first.kind != NodeKind::Element || first.uid.is_empty() {
            return ExpandTarget::subtree(fallback);
        }
        // When the ends' uids do not find them: the siblings' own parent, if its uid finds it.
        let parent_or_fallback = match parent {
            Some(p) if tree.uid_finds(p) => tree.nodes.get(p).map_or(fallback, |n| n.uid),
            _ => fallback,
        };
        if !tree.uid_finds(first_id) {
            return ExpandTarget::subtree(parent_or_fallback);
        }
        if run.len() == 1 {
            return ExpandTarget::subtree(first.uid);
        }
        // `until` ends the run at the first later sibling with its uid: `last`, or else the
        // first sibling from `last` on whose uid no earlier sibling of the run repeats (one
        // shown sibling more, far less than the parent).
        let all = tree.siblings_under(parent);
        // Children are in document order, ids ascending (`Tree::push`): a page of thousands of
        // siblings has a marker every few of them, and a scan from the first was quadratic.
        let from = all.binary_search(&first_id).unwrap_or(all.len());
        let rest = all.get(from..).unwrap_or(&[]);
        if let Some(until) = Self::fresh_after_last(tree, rest, last_id) {
            return ExpandTarget {
                uid: first.uid,
                until: Some(until),
            };
        }
        let mut seen: HashSet<&str> = HashSet::new();
        let mut reached_last = false;
        for &s in rest {
            let Some(n) = tree.nodes.get(s) else { continue };
            reached_last |= s == last_id;
            let fresh = n.kind == NodeKind::Element && !n.uid.is_empty() && !seen.contains(n.uid);
            if reached_last && fresh && s != first_id {
                return ExpandTarget {
                    uid: first.uid,
                    until: Some(n.uid),
                };
            }
            if n.kind == NodeKind::Element {
                seen.insert(n.uid);
            }
        }
        ExpandTarget::subtree(parent_or_fallback)
    }

    /// The `until` of `for_run` without its set of the uids seen, when the index tells: the
    /// first sibling from `last` on (`siblings` start at the run's first) whose uid finds it
    /// and whose id is past every sibling before it: no earlier node, so no earlier sibling,
    /// has its uid. `None` when a sibling in the way cannot be told so (the set decides).
    fn fresh_after_last(tree: &Tree<'a>, siblings: &[usize], last_id: usize) -> Option<&'a str> {
        if tree.first_with_uid.len() != tree.nodes.len() {
            return None;
        }
        let mut before = None;
        let mut reached_last = false;
        for (i, &s) in siblings.iter().enumerate() {
            let n = tree.nodes.get(s)?;
            reached_last |= s == last_id;
            if reached_last && i > 0 && n.kind == NodeKind::Element && !n.uid.is_empty() {
                return (tree.uid_finds(s) && before.is_none_or(|b| b < s)).then_some(n.uid);
            }
            before = before.max(Some(s));
        }
        None
    }

    pub(crate) fn write(&self, out: &mut String) {
        if self.uid.is_empty() {
            return;
        }
        out.push_str(": expand_snapshot uid=");
        out.push_str(self.uid);
        if let Some(until) = self.until {
            out.push_str(" until=");
            out.push_str(until);
        }
    }
}

/// Uids listed one by one up to this many; beyond, a first…last range.
const MAX_LISTED_UIDS: usize = 2;
/// Roles named in a marker's summary.
const MAX_ROLES_NAMED: usize = 3;

struct Summary<'a> {
    total: usize,
    /// (role, count), in the order first seen (`write_counted` orders them).
    by_role: Vec<(&'a str, usize)>,
    /// Each role of `by_role`'s key (`RoleKey`), at the same index: every hidden node looks up
    /// its role, and on a big page most of it is hidden; comparing the roles' bytes (a memcmp
    /// call each) grew with what was hidden.
    role_keys: Vec<RoleKey>,
    /// How many uids, and the first `MAX_LISTED_UIDS + 1` of them in document order.
    uid_count: usize,
    uids: Vec<&'a str>,
    /// The uids whose first node (where a reader finds them) comes first and last in the
    /// document, with that node: the ends of a range, in document order even when a uid
    /// repeats (a repeated uid hidden last may first occur before the others).
    first: Option<(usize, &'a str)>,
    last: Option<(usize, &'a str)>,
}

/// A role's length and first bytes, compared as two words: equal keys of roles no longer than
/// `BYTES` are equal roles.
#[derive(Clone, Copy, PartialEq, Eq)]
struct RoleKey(usize, u64);

impl RoleKey {
    const BYTES: usize = 8;

    fn of(role: &str) -> RoleKey {
        let mut word = [0u8; RoleKey::BYTES];
        let head = role
            .as_bytes()
            .get(..RoleKey::BYTES)
            .unwrap_or(role.as_bytes());
        if let Some(dst) = word.get_mut(..head.len()) {
            dst.copy_from_slice(head);
        }
        RoleKey(role.len(), u64::from_le_bytes(word))
    }
}

impl<'a> Summary<'a> {
    fn new() -> Self {
        Summary {
            total: 0,
            by_role: Vec::new(),
            role_keys: Vec::new(),
            uid_count: 0,
            uids: Vec::new(),
            first: None,
            last: None,
        }
    }

    /// The nodes of `run` and everything under them.
    fn of_subtrees(tree: &Tree<'a>, run: &[usize]) -> Self {
        let mut summary = Summary::new();
        for &id in run {
            for sub in tree.subtree(id) {
                summary.add(tree, sub);
            }
        }
        summary
    }

    fn add(&mut self, tree: &Tree<'a>, id: usize) {
        let Some(node) = tree.nodes.get(id) else {
            return;
        };
        if node.kind != NodeKind::Element {
            return;
        }
        self.total += 1;
        let role = if node.role.is_empty() {
            "text"
        } else {
            node.role
        };
        let key = RoleKey::of(role);
        // Equal keys of roles past `RoleKey::BYTES` say they start alike only.
        let slot = self
            .role_keys
            .iter()
            .zip(self.by_role.iter_mut())
            .find(|(&k, (r, _))| k == key && (role.len() <= RoleKey::BYTES || *r == role));
        match slot {
            Some((_, (_, count))) => *count += 1,
            None => {
                self.by_role.push((role, 1));
                self.role_keys.push(key);
            }
        }
        if !node.uid.is_empty() {
            self.uid_count += 1;
            if self.uids.len() <= MAX_LISTED_UIDS {
                self.uids.push(node.uid);
            }
            let at = tree.first_with_uid(id);
            // (not `is_none_or`: the README promises Rust 1.80)
            if !matches!(self.first, Some((f, _)) if f <= at) {
                self.first = Some((at, node.uid));
            }
            if !matches!(self.last, Some((l, _)) if l >= at) {
                self.last = Some((at, node.uid));
            }
        }
    }

    /// Whether the expand call names exactly these uids (the one subtree root hidden alone, or
    /// a run whose first and last uids are its `uid` and `until`): the call says the range, and
    /// the marker does not write it twice.
    fn said_by(&self, expand: ExpandTarget<'_>) -> bool {
        let ends = match (self.uid_count, self.uids.as_slice()) {
            (0, _) => return false,
            (1, [one, ..]) => (*one, None),
            (2, [a, b, ..]) => (*a, Some(*b)),
            _ => match (self.first, self.last) {
                (Some((_, a)), Some((_, b))) => (a, Some(b)),
                _ => return false,
            },
        };
        !expand.uid.is_empty() && ends == (expand.uid, expand.until)
    }

    fn write_uids(&self, out: &mut String) {
        if self.uid_count > 0 {
            out.push_str("uid ");
            if self.uid_count <= MAX_LISTED_UIDS {
                out.push_str(&self.uids.join(", "));
            } else {
                out.push_str(self.first.map_or("", |(_, u)| u));
                out.push('…');
                out.push_str(self.last.map_or("", |(_, u)| u));
            }
        }
        out.push(')');
    }

    fn write(&self, out: &mut String, verb: &str, expand: ExpandTarget<'_>) {
        out.push_str("… ");
        self.write_counted(out, verb, expand);
    }

    /// `N role verb (uid …)`, or `N verb (role a, role b; uid …)`, then the expand call; without
    /// the `uid …` part when the call names the same uids (`… 3 text hidden: expand_snapshot
    /// uid=7_120 until=7_122`).
    fn write_counted(&self, out: &mut String, verb: &str, expand: ExpandTarget<'_>) {
        let mut roles = self.by_role.clone();
        // Most frequent first; ties by name so the output is deterministic.
        roles.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        let said = self.said_by(expand);
        out.push_str(&self.total.to_string());
        out.push(' ');
        if let [(role, _)] = roles.as_slice() {
            // One role: `… 3 text hidden (uids …)`.
            out.push_str(role);
            out.push(' ');
            out.push_str(verb);
            if said {
                expand.write(out);
                return;
            }
            out.push_str(" (");
        } else {
            out.push_str(verb);
            out.push_str(" (");
            for (i, (role, count)) in roles.iter().take(MAX_ROLES_NAMED).enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(role);
                out.push(' ');
                out.push_str(&count.to_string());
            }
            if roles.len() > MAX_ROLES_NAMED {
                out.push_str(", …");
            }
            if said {
                out.push(')');
                expand.write(out);
                return;
            }
            out.push_str("; ");
        }
        self.write_uids(out);
        expand.write(out);
    }
}

/// Roles of a record named in its marker.
const MAX_SHAPE_ROLES: usize = 4;

/// Writes the marker for hidden repeated records; returns the number of uids it hides.
pub fn write_records(
    out: &mut String,
    tree: &Tree<'_>,
    run: &[usize],
    records: &RecordRun<'_>,
    expand: ExpandTarget<'_>,
) -> usize {
    let summary = Summary::of_subtrees(tree, run);
    out.push_str("… ");
    out.push_str(&records.records.to_string());
    out.push_str(" more records hidden (");
    out.push_str(&records.shape.len().to_string());
    out.push_str(" nodes each: ");
    for (i, role) in records.shape.iter().take(MAX_SHAPE_ROLES).enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(role);
    }
    if records.shape.len() > MAX_SHAPE_ROLES {
        out.push_str(", …");
    }
    if summary.said_by(expand) {
        out.push(')');
    } else {
        out.push_str("; ");
        summary.write_uids(out);
    }
    expand.write(out);
    summary.uid_count
}

/// Writes the marker before condensed records (`… records 6–40 below: controls and labels
/// only, 140 hidden (text 105, image 35; uid …): expand_snapshot …`); returns the number of
/// uids it hides.
pub fn write_condensed(
    out: &mut String,
    tree: &Tree<'_>,
    run: &CondensedRun,
    expand: ExpandTarget<'_>,
) -> usize {
    let summary = Summary::of_subtrees(tree, &run.cells);
    out.push_str("… records ");
    out.push_str(&run.first_record.to_string());
    out.push('–');
    out.push_str(&(run.first_record + run.records - 1).to_string());
    out.push_str(" below: controls and labels only, ");
    summary.write_counted(out, "hidden", expand);
    summary.uid_count
}

/// Ends a table's header: the uids of the whole run (`(uid A…B)`, the ones its rows do not
/// write among them: text cells, options, images inside links) and the expand call that gives
/// the run back.
pub fn write_table_uids(
    out: &mut String,
    tree: &Tree<'_>,
    items: &[usize],
    expand: ExpandTarget<'_>,
) {
    let summary = Summary::of_subtrees(tree, items);
    // Nodes without uids (Playwright's ref-less options) leave no list, not an empty `()`.
    if summary.uid_count > 0 {
        out.push_str(" (");
        summary.write_uids(out);
    }
    expand.write(out);
}

/// Writes the marker for a run of hidden siblings (and their subtrees); returns the number of
/// uids it hides.
pub fn write_hidden(
    out: &mut String,
    tree: &Tree<'_>,
    run: &[usize],
    expand: ExpandTarget<'_>,
) -> usize {
    let summary = Summary::of_subtrees(tree, run);
    summary.write(out, "hidden", expand);
    summary.uid_count
}

/// The end (exclusive) of the run of hidden siblings that starts at `items[start]`: one marker
/// per run, however it was hidden (a run of records hidden next to other hidden siblings joins
/// them, so that a capped region gets one marker, not one per record run). Shared by every
/// notations (every line writer goes through `render::render_with`).
/// A run ends where condensed records start: their marker comes first.
pub fn hidden_run_end(tree: &Tree<'_>, items: &[usize], start: usize) -> usize {
    let mut end = start + 1;
    while items
        .get(end)
        .filter(|i| !tree.condensed_records.contains_key(i))
        .and_then(|&i| tree.nodes.get(i))
        .is_some_and(|n| n.hidden)
    {
        end += 1;
    }
    end
}

/// Writes the marker of one hidden run (as `hidden_run_end` cuts them): records or plain,
/// expanding to the run itself where it can, else to `fallback_uid`. Returns the uids hidden.
pub fn write_run(out: &mut String, tree: &Tree<'_>, run: &[usize], fallback_uid: &str) -> usize {
    let expand = ExpandTarget::for_run(tree, run, fallback_uid);
    // The records form only when the run is exactly one run of records.
    match run
        .first()
        .and_then(|id| tree.hidden_records.get(id))
        .filter(|rec| rec.siblings == run.len())
    {
        Some(rec) => write_records(out, tree, run, rec, expand),
        None => write_hidden(out, tree, run, expand),
    }
}

/// Writes the marker for layout nodes dropped under a root (their children were promoted).
pub fn write_dropped(
    out: &mut String,
    tree: &Tree<'_>,
    dropped: &[usize],
    expand_uid: &str,
) -> usize {
    let mut summary = Summary::new();
    let mut ids = dropped.to_vec();
    ids.sort_unstable();
    for id in ids {
        summary.add(tree, id);
    }
    summary.write(
        out,
        "layout nodes dropped",
        ExpandTarget::subtree(expand_uid),
    );
    summary.uid_count
}

/// What a marker line names: the uids it lists (a `first…last` range gives both ends) and
/// the uid to expand.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct MarkerRef<'a> {
    pub listed: Vec<&'a str>,
    pub range: Option<(&'a str, &'a str)>,
    pub expand_uid: Option<&'a str>,
    /// With `expand_uid`: the last sibling of the run to expand.
    pub until: Option<&'a str>,
}

pub fn read_marker(line: &str) -> MarkerRef<'_> {
    let mut r = MarkerRef::default();
    let text = line.trim_start_matches(' ');
    if let Some((_, expand)) = text.rsplit_once(": expand_snapshot uid=") {
        match expand.split_once(" until=") {
            Some((uid, until)) => {
                r.expand_uid = Some(uid.trim());
                r.until = Some(until.trim());
            }
            None => r.expand_uid = Some(expand.trim()),
        }
    }
    if let Some((_, after)) = text.rsplit_once("uid ") {
        let list = after.split(')').next().unwrap_or("");
        if let Some((a, b)) = list.split_once('…') {
            r.range = Some((a, b));
        } else {
            r.listed = list.split(", ").filter(|s| !s.is_empty()).collect();
        }
    } else if let Some(uid) = r.expand_uid {
        // No `uid …` part: the call names the uids (`Summary::said_by`), unless the marker
        // hides no uid at all (its list then is empty: `()` or `; )`).
        let head = text.split(": expand_snapshot").next().unwrap_or("");
        if !head.ends_with("()") && !head.ends_with("; )") {
            match r.until {
                Some(until) => r.range = Some((uid, until)),
                None => r.listed = vec![uid],
            }
        }
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notation::cdp::parse::parse;

    const PAGE: &str = "uid=1_0 RootWebArea \"p\"\n  uid=1_1 \"a\"\n  uid=1_2 \"b\"\n  uid=1_3 \"c\"\n  uid=1_4 generic\n    uid=1_5 \"d\"\n";

    fn marker_of(uids: &[&str]) -> String {
        let tree = parse(PAGE);
        let run: Vec<usize> = uids.iter().filter_map(|u| tree.find_uid(u)).collect();
        let mut out = String::new();
        write_run(&mut out, &tree, &run, "1_0");
        out
    }

    #[test]
    fn a_range_the_expand_call_names_is_written_once() {
        assert_eq!(
            marker_of(&["1_1", "1_2", "1_3"]),
            "… 3 text hidden: expand_snapshot uid=1_1 until=1_3"
        );
        assert_eq!(
            marker_of(&["1_2"]),
            "… 1 text hidden: expand_snapshot uid=1_2"
        );
        // The last sibling's subtree goes past `until`: the range says where the uids end.
        assert_eq!(
            marker_of(&["1_3", "1_4"]),
            "… 3 hidden (text 2, generic 1; uid 1_3…1_5): expand_snapshot uid=1_3 until=1_4"
        );
        let m = marker_of(&["1_1", "1_2", "1_3"]);
        // Read back, it names the same range.
        let r = read_marker(&m);
        assert_eq!((r.expand_uid, r.until), (Some("1_1"), Some("1_3")));
        assert_eq!(r.range, Some(("1_1", "1_3")));
        assert_eq!(read_marker(&marker_of(&["1_2"])).listed, vec!["1_2"]);
    }
}
