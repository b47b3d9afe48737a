//! Reads snapshot text into a [`Tree`]: the chrome-devtools-mcp 1.11 notation (`uid=… role
//! "name" attrs`, names printed raw with `"` and newlines) and our own light notation (marked by
//! the legend line, names escaped, markers). Indentation gives the depth; an explicit stack
//! builds the tree so any depth works. Nothing is dropped: unreadable lines become `Verbatim`
//! nodes and every node keeps its raw text.
//!
//! The raw notation is ambiguous wherever page text holds a quote and a line break: a textarea
//! value or a `<pre>` text can go on with lines such as `    uid=1_2 button "Keep my account
//! safe"`. Page text must never become structure, so a `uid=` line is believed only when the
//! snapshot allows it (see [`UidLines`]): its uid is not another node's (upstream repeats one uid,
//! on nodes without a DOM node: text, `InlineTextBox`, `ignored`, images), it keeps the order in
//! which upstream numbers the nodes of a snapshot (`<snapshot>_<n>`, `n` counting up in document
//! order; nodes kept from an earlier snapshot keep that one's order), its prefix is not older
//! than the root's, and it is at most one level deeper than the node before. A DOM node moved
//! keeps its uid and breaks that order: such lines are believed where the grammar leaves no
//! string open (see [`believe_moved_nodes`]). A line that is not believed, like any line without `uid=`, is
//! text of the string left open before it: the value or name of the last believed node. Values
//! of the page-text attributes (`value`, `description`, …) may hold quotes and line breaks; the
//! attribute list after them is checked against what upstream prints (sorted keys).

use std::borrow::Cow;

use super::escape::{unescape, unescape_link_text};
use super::syntax::{CHILDREN_SEPARATOR, LEGEND_TAG, SIBLING_SEPARATOR};
use crate::snapshot::tree::{Attr, Node, NodeKind, Tree};

/// The DevTools selection suffix chrome-devtools-mcp appends to the selected node.
pub const DEVTOOLS_SELECTED: &str = " [selected in the DevTools Elements panel]";

/// A multi-line name longer than this is not believed: the opening line is read on its own.
const MAX_CONTINUATION_LINES: usize = 4000;
const MAX_CONTINUATION_BYTES: usize = 1 << 20;

/// Parses a snapshot body (the lines after `## Latest page snapshot`).
pub fn parse(text: &str) -> Tree<'_> {
    let mut tree = Tree {
        trailing_newline: text.ends_with('\n'),
        ..Tree::default()
    };
    let body = text.strip_suffix('\n').unwrap_or(text);
    if body.is_empty() && text.is_empty() {
        return tree;
    }
    let lines = LineIndex::new(text, body);
    // About one node a line: no regrowth of the arena on big pages.
    tree.reserve(lines.len());
    let mut builder = Builder::default();
    let mut i = 0;
    // The next `uid=` line the scan read (lines are read in order).
    let mut next_uid_line = 0;
    if lines.line(0).is_some_and(|l| l.starts_with(LEGEND_TAG)) {
        tree.light_notation = true;
        i = 1;
    }
    let believed = if tree.light_notation {
        UidLines::default()
    } else {
        UidLines::scan(&lines)
    };
    while i < lines.len() {
        let consumed = if tree.light_notation {
            parse_light_line(&mut tree, &mut builder, &lines, i)
        } else {
            let found = believed.found.get(next_uid_line..).unwrap_or(&[]);
            let skip = found.iter().take_while(|f| (f.line as usize) < i).count();
            next_uid_line += skip;
            let uid_line = found.get(skip).filter(|f| f.line as usize == i);
            parse_raw_line(&mut tree, &mut builder, &lines, &believed, i, uid_line)
        };
        i += consumed.max(1);
    }
    tree.seal();
    tree
}

/// Roles of the nodes upstream gives one shared uid: those without a DOM node of their own (CSS
/// generated text, inline text boxes, ignored wrappers, images), all numbered with the id of the
/// first such node of the page.
fn is_shared_uid_role(role: &str) -> bool {
    // A `match`, not a slice search: asked of every uid line.
    matches!(
        role,
        "" | "InlineTextBox" | "StaticText" | "ignored" | "image" | "LineBreak" | "ListMarker"
    )
}

/// Which `uid=` lines of a raw snapshot can be believed to start a node (module doc).
#[derive(Default)]
struct UidLines {
    /// For each line, the first later line that starts a believed node (the line count if none).
    next_believed: Vec<u32>,
    /// The `uid=` lines, in line order: what the scan read of them is not read again.
    found: Vec<UidLine>,
}

/// One `uid=` line, for the scan.
struct UidLine {
    line: u32,
    prefix: u64,
    counter: u64,
    depth: u32,
    shared_role: bool,
    /// Where the uid starts and ends in the line (after `uid=`, before the space or line end).
    uid: (u32, u32),
    /// Where the line's tail (after its uid and a space) starts in it: whether its strings all
    /// close on it is asked of a few lines only (see [`believe_moved_nodes`]), so it is read
    /// then, not for every line.
    tail: u32,
}

impl UidLine {
    /// The line's depth, uid and what follows the uid (from its space on), as the scan read them
    /// in `line` (`None` if an offset did not fit the scan's numbers).
    fn parts<'a>(&self, line: &'a str) -> Option<(usize, &'a str, &'a str)> {
        let (start, end) = (self.uid.0 as usize, self.uid.1 as usize);
        let uid = line.get(start..end)?;
        let indent = start.checked_sub("uid=".len())?;
        // Offsets saturate on lines past 4 GiB: those are read again.
        u32::try_from(line.len())
            .is_ok()
            .then(|| (indent / 2, uid, line.get(end..).unwrap_or("")))
    }

    /// The line's strings all close on it (nothing it opens can run on to the next line).
    fn complete(&self, lines: &LineIndex<'_>) -> bool {
        let tail = lines
            .line(self.line as usize)
            .and_then(|l| l.get(self.tail as usize..))
            .unwrap_or("");
        line_complete(tail)
    }
}

#[cfg(test)]
thread_local! {
    /// Lines whose completeness the scan read (a test counts them).
    pub(super) static COMPLETE_ASKED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// Bytes the parser's searches looked at (a test counts them: reading stays linear).
    pub(super) static SCANNED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Counts `bytes` looked at by a search, in tests (`SCANNED`); nothing otherwise.
#[inline]
fn scanned(bytes: usize) {
    #[cfg(test)]
    SCANNED.with(|n| n.set(n.get() + bytes));
    #[cfg(not(test))]
    let _ = bytes;
}

impl UidLines {
    fn scan(lines: &LineIndex<'_>) -> UidLines {
        Self::scan_with(lines, in_order)
    }

    /// [`UidLines::scan`] with the order read by `in_order` (a test compares the general
    /// reading's answers with the fast one's).
    fn scan_with(lines: &LineIndex<'_>, in_order: fn(&[UidLine]) -> Vec<bool>) -> UidLines {
        let n = lines.len();
        let mut found: Vec<UidLine> = Vec::with_capacity(n);
        for i in 0..n {
            let Some(line) = lines.line(i) else { continue };
            let (indent, rest) = split_indent(line);
            let Some(after) = rest.strip_prefix("uid=") else {
                continue;
            };
            let Some((uid_len, prefix, counter)) = uid_numbers(after.as_bytes()) else {
                continue;
            };
            let tail = after.get(uid_len..).unwrap_or("");
            let uid_start = indent + "uid=".len();
            let uid_end = uid_start + uid_len;
            let tail = tail.strip_prefix(' ').unwrap_or("");
            let tail_start = line.len() - tail.len();
            let role = if tail.starts_with('"') {
                ""
            } else {
                tail.get(..find_byte(tail, b' ').unwrap_or(tail.len()))
                    .unwrap_or("")
            };
            found.push(UidLine {
                line: u32::try_from(i).unwrap_or(u32::MAX),
                prefix,
                counter,
                depth: u32::try_from(indent / 2).unwrap_or(u32::MAX),
                shared_role: is_shared_uid_role(role),
                uid: (
                    u32::try_from(uid_start).unwrap_or(u32::MAX),
                    u32::try_from(uid_end).unwrap_or(u32::MAX),
                ),
                tail: u32::try_from(tail_start).unwrap_or(u32::MAX),
            });
        }
        let mut believed = vec![false; n];
        depth_and_root(&found, &in_order(&found), &mut believed);
        believe_moved_nodes(lines, &found, &mut believed);
        let mut next_believed = vec![0u32; n];
        let mut next = u32::try_from(n).unwrap_or(u32::MAX);
        for (i, (slot, &ok)) in next_believed.iter_mut().zip(&believed).enumerate().rev() {
            *slot = next;
            if ok {
                next = u32::try_from(i).unwrap_or(u32::MAX);
            }
        }
        UidLines {
            next_believed,
            found,
        }
    }

    /// The first line after `i` that starts a believed node, or the line count.
    fn next_believed_after(&self, i: usize, len: usize) -> usize {
        self.next_believed
            .get(i)
            .map_or(len, |&j| (j as usize).min(len))
    }
}

/// Whether a node line's tail (after its uid and a space) leaves no string open: a name that
/// closes with a valid attribute list after it, or attributes that read as a list.
fn line_complete(tail: &str) -> bool {
    #[cfg(test)]
    COMPLETE_ASKED.with(|n| n.set(n.get() + 1));
    if tail.is_empty() {
        return true;
    }
    if let Some(quoted) = tail.strip_prefix('"') {
        return raw_name_close(quoted, 0).is_some();
    }
    let role_len = find_byte(tail, b' ').unwrap_or(tail.len());
    let (role, after_role) = tail.split_at(role_len);
    if role.contains('"') {
        return false;
    }
    match after_role.strip_prefix(" \"") {
        Some(quoted) => raw_name_close(quoted, 0).is_some(),
        None => !after_role.contains('"') || attrs_close(after_role).is_some(),
    }
}

/// A DOM node moved within the page keeps its uid, so its line is out of the counters' order
/// and the order rule leaves it unbelieved. The grammar tells it from page text: text sits in a
/// string left open, and a string is open across lines only when a line without `uid=` follows
/// (nothing else can hold it). So a run of unbelieved `uid=` lines is believed when it directly
/// follows a believed line that closes every string it opens, every line of the run does too,
/// and the run ends at a believed line or the end: no line of text anywhere from the node
/// before it to the node after it. Its uids must be on no other line (a planted line that ends
/// a value exactly could reuse a real uid) and it keeps the depth and root rules.
///
/// Completeness and the uids' line counts are read for the runs only: most snapshots have none.
fn believe_moved_nodes(lines: &LineIndex<'_>, found: &[UidLine], believed: &mut [bool]) {
    let mut lines_of: Option<std::collections::HashMap<(u64, u64), u32>> = None;
    let root_prefix = found.first().map_or(0, |f| f.prefix);
    let is_believed =
        |f: &UidLine, believed: &[bool]| believed.get(f.line as usize).copied().unwrap_or(false);
    let mut k = 0;
    while k < found.len() {
        let (Some(before), Some(first)) = (found.get(k), found.get(k + 1)) else {
            break;
        };
        let starts_run = is_believed(before, believed)
            && !is_believed(first, believed)
            && first.line == before.line + 1
            && before.complete(lines);
        if !starts_run {
            k += 1;
            continue;
        }
        // The run: consecutive lines, each a `uid=` line not believed.
        let mut end = k + 1;
        while let Some(f) = found.get(end) {
            let adjacent = found.get(end - 1).is_some_and(|p| f.line == p.line + 1);
            if !adjacent || is_believed(f, believed) {
                break;
            }
            end += 1;
        }
        let run = found.get(k + 1..end).unwrap_or(&[]);
        let last_line = run.last().map_or(before.line, |f| f.line);
        // What follows the run: a believed node line right after it, or the end of the body.
        let after = found.get(end);
        let closed_by_node = match after {
            Some(a) => a.line == last_line + 1 && is_believed(a, believed),
            None => usize::try_from(last_line).is_ok_and(|l| l + 1 == believed.len()),
        };
        let lines_of = lines_of.get_or_insert_with(|| {
            let mut map = std::collections::HashMap::with_capacity(found.len());
            for f in found {
                *map.entry((f.prefix, f.counter)).or_default() += 1;
            }
            map
        });
        let mut depth = before.depth;
        let mut fits = closed_by_node;
        for f in run {
            fits = fits
                && f.prefix >= root_prefix
                && f.depth <= depth.saturating_add(1)
                && lines_of.get(&(f.prefix, f.counter)) == Some(&1)
                && f.complete(lines);
            depth = f.depth;
        }
        fits &= after.is_none_or(|a| a.depth <= depth.saturating_add(1));
        if fits {
            for f in run {
                if let Some(flag) = believed.get_mut(f.line as usize) {
                    *flag = true;
                }
            }
        }
        k = end;
    }
}

/// The uid (`DIGITS_DIGITS`, [`is_uid`]) that `after` starts with, ended by a space or the end:
/// its length and its two numbers (saturating), read in one pass; `None` if `after` starts with
/// no uid.
fn uid_numbers(after: &[u8]) -> Option<(usize, u64, u64)> {
    let mut at = 0;
    let number = |at: &mut usize| {
        let start = *at;
        let mut n = 0u64;
        while let Some(digit) = after.get(*at).filter(|b| b.is_ascii_digit()) {
            n = n.saturating_mul(10).saturating_add(u64::from(digit - b'0'));
            *at += 1;
        }
        (*at > start).then_some(n)
    };
    let prefix = number(&mut at)?;
    if after.get(at) != Some(&b'_') {
        return None;
    }
    at += 1;
    let counter = number(&mut at)?;
    scanned(at + 1);
    matches!(after.get(at), None | Some(b' ')).then_some((at, prefix, counter))
}

/// For every `uid=` line (in line order), whether its uid keeps the counters' order or is
/// shared (module doc).
fn in_order(found: &[UidLine]) -> Vec<bool> {
    if all_in_order(found) {
        return vec![true; found.len()];
    }
    in_order_by_prefix(found)
}

/// Prefixes [`all_in_order`] follows; a snapshot has a few.
const FEW_PREFIXES: usize = 16;

/// A counter's lines so far, for [`all_in_order`]: none, one (with a shared role or not), or
/// several (all with a shared role or not).
#[derive(Clone, Copy, PartialEq)]
enum Seen {
    Never,
    OnceShared,
    Once,
    ManyShared,
    Many,
}

/// Whether [`in_order_by_prefix`] believes every line, found without its sorts: the usual
/// snapshot, whose counters count up but for the shared uids. There, a counter on several
/// lines of a prefix is behind on all but its first, so it is shared exactly when all its lines
/// have a shared role; the other lines are believed when their counters strictly count up (the
/// longest increasing run is then all of them). Counters are counted in a table per prefix, so
/// more than [`FEW_PREFIXES`] prefixes or counters far beyond the line count answer `false`
/// (not known: the general reading decides).
fn all_in_order(found: &[UidLine]) -> bool {
    // Each prefix's place in `counts` (its own range of counters, 0 to its largest).
    let mut prefixes: [(u64, u64); FEW_PREFIXES] = [(0, 0); FEW_PREFIXES];
    let mut known = 0;
    let mut slots: Vec<u8> = Vec::with_capacity(found.len());
    for f in found {
        let slot = match prefixes
            .get(..known)
            .and_then(|p| p.iter().position(|&(p, _)| p == f.prefix))
        {
            Some(slot) => slot,
            None => {
                let Some(new) = prefixes.get_mut(known) else {
                    return false;
                };
                *new = (f.prefix, 0);
                known += 1;
                known - 1
            }
        };
        if let Some((_, max)) = prefixes.get_mut(slot) {
            *max = (*max).max(f.counter);
        }
        slots.push(slot as u8);
    }
    // The table stays linear in the lines (counters run about as far as the nodes).
    let room = found.len().saturating_mul(8).saturating_add(1024);
    let mut offsets = [0usize; FEW_PREFIXES];
    let mut size = 0usize;
    for (offset, &(_, max)) in offsets.iter_mut().zip(prefixes.get(..known).unwrap_or(&[])) {
        *offset = size;
        match usize::try_from(max).ok().filter(|&m| m < room) {
            Some(max) => size += max + 1,
            None => return false,
        }
        if size > room {
            return false;
        }
    }
    let mut counts = vec![Seen::Never; size];
    let at = |f: &UidLine, slot: u8| {
        offsets.get(usize::from(slot)).copied().unwrap_or(0) + f.counter as usize
    };
    for (f, &slot) in found.iter().zip(&slots) {
        if let Some(seen) = counts.get_mut(at(f, slot)) {
            *seen = match (*seen, f.shared_role) {
                (Seen::Never, true) => Seen::OnceShared,
                (Seen::Never, false) => Seen::Once,
                (Seen::OnceShared | Seen::ManyShared, true) => Seen::ManyShared,
                _ => Seen::Many,
            };
        }
    }
    // The last counter of each prefix's lines that are not shared.
    let mut last: [Option<u64>; FEW_PREFIXES] = [None; FEW_PREFIXES];
    for (f, &slot) in found.iter().zip(&slots) {
        if counts.get(at(f, slot)) == Some(&Seen::ManyShared) {
            continue;
        }
        let Some(last) = last.get_mut(usize::from(slot)) else {
            return false;
        };
        if last.is_some_and(|l| f.counter <= l) {
            return false;
        }
        *last = Some(f.counter);
    }
    true
}

/// [`in_order`] for any lines: by prefix, the longest increasing run of counters.
fn in_order_by_prefix(found: &[UidLine]) -> Vec<bool> {
    let mut ok = vec![false; found.len()];
    // The lines of each prefix, in line order (a snapshot has a few prefixes).
    let mut by_prefix: Vec<usize> = (0..found.len()).collect();
    by_prefix.sort_by_key(|&k| found.get(k).map(|f| f.prefix));
    let counter = |k: usize| found.get(k).map_or(0, |f| f.counter);
    for run in by_prefix
        .chunk_by(|&a, &b| found.get(a).map(|f| f.prefix) == found.get(b).map(|f| f.prefix))
    {
        // Lines whose counter does not count up from the lines before: the only ones that can
        // repeat a uid or be out of order. Usually none.
        let mut max: Option<u64> = None;
        let mut behind: Vec<u64> = Vec::new();
        for &k in run {
            let c = counter(k);
            if max.is_some_and(|m| c <= m) {
                behind.push(c);
            } else {
                max = Some(c);
            }
        }
        if behind.is_empty() {
            for &k in run {
                if let Some(flag) = ok.get_mut(k) {
                    *flag = true;
                }
            }
            continue;
        }
        // A uid on several lines is shared (believed) when every one of those lines has a role
        // without a DOM node; the other lines keep their counters' order: the longest strictly
        // increasing run of them (in line order) is believed, the rest not. A uid on two lines
        // counts once at most.
        behind.sort_unstable();
        behind.dedup();
        let mut repeated: Vec<(u64, usize)> = run
            .iter()
            .map(|&k| (counter(k), k))
            .filter(|(c, _)| behind.binary_search(c).is_ok())
            .collect();
        repeated.sort_unstable();
        let mut shared = Vec::new();
        for same in repeated.chunk_by(|a, b| a.0 == b.0) {
            let all_shared = same
                .iter()
                .all(|&(_, k)| found.get(k).is_some_and(|f| f.shared_role));
            if same.len() > 1 && all_shared {
                shared.extend(same.iter().map(|&(_, k)| k));
            }
        }
        shared.sort_unstable();
        let ordered: Vec<usize> = run
            .iter()
            .copied()
            .filter(|k| shared.binary_search(k).is_err())
            .collect();
        let counters: Vec<u64> = ordered.iter().map(|&k| counter(k)).collect();
        let increasing = longest_increasing(&counters)
            .into_iter()
            .filter_map(|p| ordered.get(p).copied());
        for k in shared.iter().copied().chain(increasing) {
            if let Some(flag) = ok.get_mut(k) {
                *flag = true;
            }
        }
    }
    ok
}

/// `ok` (in order, or shared) narrowed by the root and depth rules, into `believed` (by line).
fn depth_and_root(found: &[UidLine], ok: &[bool], believed: &mut [bool]) {
    // Every node of a document is numbered in its snapshot or a later one: none has an older
    // snapshot's prefix than the root (the first line). A node is at most one level deeper
    // than the believed node before it.
    let root_prefix = found.first().map_or(0, |f| f.prefix);
    let mut last_depth: Option<u32> = None;
    for (f, &in_order) in found.iter().zip(ok) {
        let too_deep = last_depth.is_some_and(|d| f.depth > d.saturating_add(1));
        let ok = in_order && f.prefix >= root_prefix && !too_deep;
        if ok {
            last_depth = Some(f.depth);
        }
        if let Some(flag) = believed.get_mut(f.line as usize) {
            *flag = ok;
        }
    }
}

/// The positions of one longest strictly increasing subsequence of `keys` (patience sorting,
/// O(n log n)).
fn longest_increasing(keys: &[u64]) -> Vec<usize> {
    // tail_keys[l] / tail_pos[l]: the smallest last key of an increasing run of length l+1.
    let mut tail_keys: Vec<u64> = Vec::new();
    let mut tail_pos: Vec<usize> = Vec::new();
    let mut previous: Vec<Option<usize>> = vec![None; keys.len()];
    for (pos, &k) in keys.iter().enumerate() {
        // Mostly counting up: the key usually extends the longest run.
        let at = if tail_keys.last().is_none_or(|&t| t < k) {
            tail_keys.len()
        } else {
            tail_keys.partition_point(|&t| t < k)
        };
        if let Some(slot) = previous.get_mut(pos) {
            *slot = at.checked_sub(1).and_then(|a| tail_pos.get(a).copied());
        }
        if at == tail_keys.len() {
            tail_keys.push(k);
            tail_pos.push(pos);
        } else if let (Some(t), Some(p)) = (tail_keys.get_mut(at), tail_pos.get_mut(at)) {
            *t = k;
            *p = pos;
        }
    }
    let mut out = Vec::with_capacity(tail_pos.len());
    let mut cur = tail_pos.last().copied();
    while let Some(pos) = cur {
        out.push(pos);
        cur = previous.get(pos).copied().flatten();
    }
    out
}

/// Byte ranges of the lines of `body`, so multi-line names can be borrowed from the input.
struct LineIndex<'a> {
    text: &'a str,
    starts: Vec<usize>,
    ends: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    fn new(text: &'a str, body: &'a str) -> LineIndex<'a> {
        let bytes = body.as_bytes();
        scanned(bytes.len());
        // About one line in 32 bytes or more: few regrowths.
        let mut starts = Vec::with_capacity(bytes.len() / 32 + 2);
        let mut ends = Vec::with_capacity(bytes.len() / 32 + 2);
        starts.push(0);
        for at in crate::newlines::newlines(bytes) {
            ends.push(at);
            starts.push(at + 1);
        }
        ends.push(body.len());
        LineIndex { text, starts, ends }
    }

    fn len(&self) -> usize {
        self.starts.len()
    }

    fn line(&self, i: usize) -> Option<&'a str> {
        self.text.get(*self.starts.get(i)?..*self.ends.get(i)?)
    }

    fn start(&self, i: usize) -> usize {
        self.starts.get(i).copied().unwrap_or(self.text.len())
    }

    fn end(&self, i: usize) -> usize {
        self.ends.get(i).copied().unwrap_or(self.text.len())
    }
}

/// The open ancestors while reading lines top to bottom.
#[derive(Default)]
struct Builder {
    /// Where continued names close, found lazily (most snapshots have few such names).
    closes: Closes,
    stack: Vec<(usize, usize)>,
    last_element: Option<usize>,
    /// The attribute starts of the last name read on its line (`raw_name_close_keeping`),
    /// reused from line to line.
    attr_starts: Vec<usize>,
}

impl Builder {
    fn parent_for(&mut self, depth: usize) -> Option<usize> {
        while self.stack.last().is_some_and(|&(d, _)| d >= depth) {
            self.stack.pop();
        }
        self.stack.last().map(|&(_, id)| id)
    }

    fn add_element<'a>(&mut self, tree: &mut Tree<'a>, node: Node<'a>, depth: usize) -> usize {
        let parent = self.parent_for(depth);
        let id = tree.push(node, parent);
        self.stack.push((depth, id));
        self.last_element = Some(id);
        id
    }

    /// [`Builder::add_element`] of an element read from `raw`, left to be filled in place.
    fn open_element<'a, 't>(
        &mut self,
        tree: &'t mut Tree<'a>,
        raw: &'a str,
        depth: usize,
    ) -> Option<&'t mut Node<'a>> {
        let id = self.add_element(tree, Node::new(NodeKind::Element, Some(raw)), depth);
        tree.nodes.get_mut(id)
    }

    fn add_leaf<'a>(&mut self, tree: &mut Tree<'a>, node: Node<'a>, depth: usize) {
        let parent = self.parent_for(depth);
        tree.push(node, parent);
    }

    /// Unreadable lines go beside the last node read, without changing the open ancestors.
    fn add_verbatim<'a>(&mut self, tree: &mut Tree<'a>, raw: &'a str) {
        tree.unreadable_lines += 1;
        let parent = self
            .last_element
            .and_then(|id| tree.nodes.get(id))
            .and_then(|n| n.parent);
        tree.push(Node::new(NodeKind::Verbatim, Some(raw)), parent);
    }
}

fn split_indent(line: &str) -> (usize, &str) {
    // Eight bytes at a time: nodes sit tens of spaces deep.
    let bytes = line.as_bytes();
    let mut indent = 0;
    while let Some(word) = bytes.get(indent..).and_then(|rest| rest.first_chunk::<8>()) {
        let other = u64::from_le_bytes(*word) ^ u64::from_le_bytes([b' '; 8]);
        if other != 0 {
            // The lowest byte that is not a space.
            indent += other.trailing_zeros() as usize / 8;
            break;
        }
        indent += 8;
    }
    // The last bytes (none when the loop found the end of the indent).
    let indent = indent
        + bytes
            .get(indent..)
            .unwrap_or(&[])
            .iter()
            .position(|&b| b != b' ')
            .unwrap_or(bytes.len().saturating_sub(indent));
    scanned(indent + 1);
    (indent, line.get(indent..).unwrap_or(""))
}

/// Byte offset of the first `b` (an ASCII byte, so a char boundary) in `s` ([`find_either`]
/// of one byte).
fn find_byte(s: &str, b: u8) -> Option<usize> {
    find_either(s.as_bytes(), 0, b, b)
}

/// Byte offset of the last `b` (an ASCII byte) in `s`: eight bytes at a time from the end (names
/// and values run to tens of bytes), then the rest one by one.
fn rfind_byte(s: &str, b: u8) -> Option<usize> {
    let bytes = s.as_bytes();
    let mut end = bytes.len();
    let at = loop {
        let Some(word) = end.checked_sub(8).and_then(|from| bytes.get(from..end)) else {
            break bytes
                .get(..end)
                .and_then(|rest| rest.iter().rposition(|&c| c == b));
        };
        let word = word
            .first_chunk::<8>()
            .map_or(0, |w| u64::from_le_bytes(*w));
        let hits = crate::newlines::bytes_equal(word, b);
        if hits != 0 {
            // The highest hit is the last byte equal to `b`.
            break Some(end - 8 + (63 - hits.leading_zeros() as usize) / 8);
        }
        end -= 8;
    };
    scanned(at.map_or(s.len(), |p| s.len() - p));
    at
}

pub(super) fn is_key(word: &str) -> bool {
    let mut bytes = word.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_lowercase())
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Attribute keys whose value is page text, printed raw by upstream: it may hold quotes, and
/// (all but `url`, which a URL parser keeps on one line) line breaks.
const PAGE_TEXT_KEYS: [&str; 6] = [
    "description",
    "keyshortcuts",
    "roledescription",
    "url",
    "value",
    "valuetext",
];

/// Longest attribute key upstream prints (`multiselectable`, `roledescription`), with room.
const MAX_KEY_LEN: usize = 24;

/// Where `key` sorts among the attributes of a line: upstream prints them by key, a capability
/// word (`disableable`) at the place of the state it stands for (`disabled`), just before it.
fn sort_key(key: &str) -> (&str, u8) {
    match key {
        "disableable" => ("disabled", 0),
        "expandable" => ("expanded", 0),
        "focusable" => ("focused", 0),
        "selectable" => ("selected", 0),
        other => (other, 1),
    }
}

/// Positions in `s` where a valid attribute tail (` key="v"`, ` word`, the DevTools suffix)
/// starts, right to left, `s.len()` first. Linear in `s`; an iterator so that the per-line
/// callers allocate nothing.
struct AttrTailStarts<'s> {
    s: &'s str,
    /// The last position yielded; `None` before the first.
    pos: Option<usize>,
    /// The key of the attribute starting at `pos`.
    key: Option<&'s str>,
    done: bool,
}

impl<'s> AttrTailStarts<'s> {
    fn new(s: &'s str) -> AttrTailStarts<'s> {
        AttrTailStarts {
            s,
            pos: None,
            key: None,
            done: false,
        }
    }

    /// The attribute that ends `seg`: where it starts (its space) and its key.
    fn step(seg: &'s str, right: Option<&str>) -> Option<(usize, &'s str)> {
        if let Some(inner) = seg.strip_suffix('"') {
            // key="value" (a value holding no quote); a value holding one needs a quote too.
            let q = rfind_byte(inner, b'"')?;
            let plain = inner.get(..q)?.strip_suffix('=').and_then(|before| {
                let space = rfind_byte(before, b' ')?;
                let key = before.get(space + 1..)?;
                let breaks = inner.get(q..).is_some_and(|v| v.contains('\n'));
                (is_key(key) && (!breaks || allows_line_breaks(key))).then_some((space, key))
            });
            plain.or_else(|| page_text_value_start(inner, right))
        } else {
            let space = rfind_byte(seg, b' ')?;
            let word = seg.get(space + 1..)?;
            is_key(word).then_some((space, word))
        }
    }
}

fn allows_line_breaks(key: &str) -> bool {
    key != "url" && PAGE_TEXT_KEYS.contains(&key)
}

/// Where a page-text value holding quotes starts in `inner` (the attribute without its closing
/// quote): the last ` key="` of a page-text key that sorts before the attribute to its right and
/// follows a closed name or value or a bare word. Linear: each `="` is looked at once, with a
/// bounded look back.
fn page_text_value_start<'s>(inner: &'s str, right: Option<&str>) -> Option<(usize, &'s str)> {
    let bytes = inner.as_bytes();
    let mut last_break = None;
    let mut end = bytes.len();
    while let Some(eq) = bytes.get(..end)?.windows(2).rposition(|w| w == b"=\"") {
        scanned(end - eq);
        end = eq;
        let window = eq.saturating_sub(MAX_KEY_LEN + 1);
        let Some(space) = bytes
            .get(window..eq)
            .and_then(|w| w.iter().rposition(|&b| b == b' '))
            .map(|p| p + window)
        else {
            continue;
        };
        let Some(key) = inner.get(space + 1..eq) else {
            continue;
        };
        if !PAGE_TEXT_KEYS.contains(&key) || right.is_some_and(|r| sort_key(key) >= sort_key(r)) {
            continue;
        }
        // A url stays on one line (looked for once, only when a url could start here).
        let one_line = allows_line_breaks(key)
            || last_break
                .get_or_insert_with(|| rfind_byte(inner, b'\n'))
                .is_none_or(|lb| lb < eq);
        if one_line && attribute_may_follow(inner.get(..space)?) {
            return Some((space, key));
        }
    }
    None
}

/// An attribute can start after `left`: the start of the tail, a closing quote (of the name or
/// of a value), or a bare word.
fn attribute_may_follow(left: &str) -> bool {
    if left.is_empty() || left.ends_with('"') {
        return true;
    }
    let from = left.len().saturating_sub(MAX_KEY_LEN + 1);
    let tail = left.get(from..).unwrap_or("");
    rfind_byte(tail, b' ').is_some_and(|space| tail.get(space + 1..).is_some_and(is_key))
}

impl Iterator for AttrTailStarts<'_> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        if self.done {
            return None;
        }
        let next = match self.pos {
            None => Some((self.s.len(), None)),
            Some(pos) if pos == self.s.len() && self.s.ends_with(DEVTOOLS_SELECTED) => {
                Some((pos - DEVTOOLS_SELECTED.len(), None))
            }
            Some(pos) => self
                .s
                .get(..pos)
                .and_then(|seg| Self::step(seg, self.key))
                .map(|(p, k)| (p, Some(k))),
        };
        match next {
            Some((p, key)) => {
                self.pos = Some(p);
                self.key = key;
            }
            None => self.done = true,
        }
        next.map(|(p, _)| p)
    }
}

/// Where a raw name closes on this piece: the leftmost `"` followed by a valid attribute tail.
fn raw_name_close(piece: &str, min: usize) -> Option<usize> {
    match plain_name_close(piece).filter(|&close| close > min) {
        Some(close) => Some(close),
        None => general_name_close(piece, min),
    }
}

/// [`raw_name_close`] by the general reading.
fn general_name_close(piece: &str, min: usize) -> Option<usize> {
    let bytes = piece.as_bytes();
    AttrTailStarts::new(piece)
        .filter(|&b| b > min && after_quote(bytes, b))
        .last()
}

/// [`raw_name_close`] where the first `"` of `piece` is followed by a plain attribute tail (the
/// usual name): the general reading's starts run through the tail's, and none left of that
/// quote follows one.
fn plain_name_close(piece: &str) -> Option<usize> {
    let close = find_byte(piece, b'"')? + 1;
    is_plain(piece.get(close..)?).then_some(close)
}

/// [`plain_name_close`], the tail read into `node` ([`read_plain_attrs`]).
fn read_plain_name<'a>(node: &mut Node<'a>, piece: &'a str) -> Option<usize> {
    let close = find_byte(piece, b'"')? + 1;
    read_plain_attrs(node, piece.get(close..)?).then_some(close)
}

/// Whether the attribute tail starting at `b` follows a `"`: a raw name can close there.
fn after_quote(bytes: &[u8], b: usize) -> bool {
    b.checked_sub(1).and_then(|q| bytes.get(q)) == Some(&b'"')
}

/// [`raw_name_close`] from 0, keeping every attribute start of `piece` (right to left) in
/// `starts` for [`parse_raw_attrs_after`]: the attributes after the close are not searched again.
fn raw_name_close_keeping(piece: &str, starts: &mut Vec<usize>) -> Option<usize> {
    starts.clear();
    starts.extend(AttrTailStarts::new(piece));
    let bytes = piece.as_bytes();
    // The leftmost: the starts run right to left.
    starts
        .iter()
        .copied()
        .rfind(|&b| b > 0 && after_quote(bytes, b))
}

/// [`parse_raw_attrs`] of `piece[close..]`, from the starts [`raw_name_close_keeping`] found in
/// `piece` (`close` one of them). Those at or right of `close` are the tail's own: each was
/// found looking no further left than the attribute it starts.
fn parse_raw_attrs_after<'a>(node: &mut Node<'a>, piece: &'a str, close: usize, starts: &[usize]) {
    let tail = piece.get(close..).unwrap_or("");
    let stripped = tail.strip_suffix(DEVTOOLS_SELECTED);
    // The piece's starts step over one suffix only, the tail's own reading over two.
    if stripped.is_some_and(|t| t.ends_with(DEVTOOLS_SELECTED)) {
        parse_raw_attrs(node, tail);
        return;
    }
    // Read without the suffix, the tail's starts begin at the piece's second one.
    let skip = usize::from(stripped.is_some());
    let starts = starts
        .iter()
        .skip(skip)
        .take_while(|&&b| b >= close)
        .map(|&b| b - close);
    read_raw_attrs(node, stripped.unwrap_or(tail), stripped.is_some(), starts);
}

/// Parses a raw attribute tail (already checked or not): ` key="value"`, bare words, suffix.
fn parse_raw_attrs<'a>(node: &mut Node<'a>, tail: &'a str) {
    if !read_plain_attrs(node, tail) {
        general_raw_attrs(node, tail);
    }
}

/// [`parse_raw_attrs`] by the general reading.
fn general_raw_attrs<'a>(node: &mut Node<'a>, tail: &'a str) {
    let (list, selected) = without_selected(tail);
    read_raw_attrs(node, list, selected, AttrTailStarts::new(list));
}

/// `tail` without one DevTools suffix, and whether it had one.
fn without_selected(tail: &str) -> (&str, bool) {
    match tail.strip_suffix(DEVTOOLS_SELECTED) {
        Some(list) => (list, true),
        None => (tail, false),
    }
}

/// An attribute tail as upstream prints it when no value holds a quote: ` key="value"` (a value
/// without `"` or a line break) and bare ` word`s, then at most one DevTools suffix. Most tails
/// are such; they are read forward in one pass, and every other tail by the general reading
/// ([`AttrTailStarts`], right to left), which reads a plain tail the same: each of its steps finds
/// the space before the token to its left (a value's opening quote is the last `"` before its
/// closing one). A test holds the two readings to each other.
fn is_plain(tail: &str) -> bool {
    plain_tokens(without_selected(tail).0, |_| {}).is_some()
}

/// Reads a plain tail ([`is_plain`]) into `node`; `false`, `node` as it was, if `tail` is not
/// plain.
fn read_plain_attrs<'a>(node: &mut Node<'a>, tail: &'a str) -> bool {
    let (list, selected) = without_selected(tail);
    let first = node.attrs.len();
    if plain_tokens(list, |attr| node.attrs.push(attr)).is_none() {
        node.attrs.truncate(first);
        return false;
    }
    node.devtools_selected |= selected;
    true
}

/// The attributes of a plain attribute list (see [`is_plain`]), left to right, to `each`; their
/// number, or `None` (at the first token that is not plain) if `list` is not plain.
fn plain_tokens<'a>(list: &'a str, mut each: impl FnMut(Attr<'a>)) -> Option<usize> {
    let bytes = list.as_bytes();
    let mut at = 0;
    let mut count = 0;
    while at < bytes.len() {
        // ` key`: a space, a lowercase letter, then letters, digits, `-` and `_` (`is_key`).
        if bytes.get(at) != Some(&b' ') || !bytes.get(at + 1)?.is_ascii_lowercase() {
            return None;
        }
        let key_start = at + 1;
        let key_len = bytes
            .get(key_start..)?
            .iter()
            .position(|&b| !(b.is_ascii_alphanumeric() || b == b'-' || b == b'_'))
            .unwrap_or(bytes.len() - key_start);
        let key_end = key_start + key_len;
        let key = list.get(key_start..key_end)?;
        let value = match bytes.get(key_end) {
            None | Some(b' ') => {
                at = key_end;
                None
            }
            Some(b'=') if bytes.get(key_end + 1) == Some(&b'"') => {
                let start = key_end + 2;
                let end = find_either(bytes, start, b'"', b'\n')?;
                // A closing quote, not a line break (the next token's space is read next).
                if bytes.get(end) != Some(&b'"') {
                    return None;
                }
                at = end + 1;
                Some(Cow::Borrowed(list.get(start..end)?))
            }
            _ => return None,
        };
        scanned(at - key_start + 1);
        each(Attr { key, value });
        count += 1;
    }
    Some(count)
}

/// The first `a` or `b` (ASCII bytes) in `bytes` from `from` on: eight bytes at a time (values
/// and names run to tens of bytes), then the rest one by one.
fn find_either(bytes: &[u8], from: usize, a: u8, b: u8) -> Option<usize> {
    let mut at = from;
    let found = loop {
        let Some(word) = bytes.get(at..).and_then(|rest| rest.first_chunk::<8>()) else {
            break bytes
                .get(at..)
                .and_then(|rest| rest.iter().position(|&c| c == a || c == b))
                .map(|p| at + p);
        };
        let word = u64::from_le_bytes(*word);
        let hits = crate::newlines::bytes_equal(word, a) | crate::newlines::bytes_equal(word, b);
        if hits != 0 {
            // The lowest hit is the first byte equal to `a` or `b`.
            break Some(at + hits.trailing_zeros() as usize / 8);
        }
        at += 8;
    };
    scanned(found.map_or(bytes.len(), |f| f + 1).saturating_sub(from));
    found
}

/// The attributes of `tail` (its suffix taken off: `selected`) at `starts`, right to left.
fn read_raw_attrs<'a>(
    node: &mut Node<'a>,
    tail: &'a str,
    selected: bool,
    mut starts: impl Iterator<Item = usize>,
) {
    if selected {
        node.devtools_selected = true;
    }
    // The starts come right to left: attributes are pushed last first, then put in order.
    let first_attr = node.attrs.len();
    let mut prev = starts.next().unwrap_or(tail.len());
    let mut leftmost = prev;
    for a in starts {
        leftmost = a;
        if a == prev {
            continue;
        }
        let b = std::mem::replace(&mut prev, a);
        let Some(token) = tail.get(a + 1..b) else {
            continue;
        };
        match token.split_once('=') {
            Some((key, value)) => node.attrs.push(Attr {
                key,
                value: Some(Cow::Borrowed(
                    value
                        .strip_prefix('"')
                        .and_then(|v| v.strip_suffix('"'))
                        .unwrap_or(value),
                )),
            }),
            None => node.attrs.push(Attr {
                key: token,
                value: None,
            }),
        }
    }
    if leftmost != 0 && !tail.is_empty() {
        // Not an attribute list: keep it whole so nothing is lost.
        node.attrs.truncate(first_attr);
        node.attrs.push(Attr {
            key: tail.strip_prefix(' ').unwrap_or(tail),
            value: None,
        });
        return;
    }
    if let Some(attrs) = node.attrs.get_mut(first_attr..) {
        attrs.reverse();
    }
}

/// One node of the chrome-devtools-mcp notation with its continuation lines: the lines a string
/// opened on its line runs on (the line cannot close it), then every line up to the next
/// believed node line (see [`UidLines`]), which can only be text of its last string. Returns the
/// number of lines consumed.
fn parse_raw_line<'a>(
    tree: &mut Tree<'a>,
    builder: &mut Builder,
    lines: &LineIndex<'a>,
    believed: &UidLines,
    i: usize,
    uid_line: Option<&UidLine>,
) -> usize {
    let Some(line) = lines.line(i) else { return 1 };
    // The scan read the line's uid: taken from it, else read here (a line it did not take).
    let Some((depth, uid, tail)) = uid_line
        .and_then(|f| f.parts(line))
        .or_else(|| read_uid(line))
    else {
        builder.add_verbatim(tree, line);
        return 1;
    };
    // A role holding the light notation's sibling separator or a quote could not be written
    // back (`uid=1_1 x|2_0 RootWebArea` would read as a second node 2_0; `li"` would open a name
    // that swallows the siblings written after it on its line); upstream's roles are plain words.
    // The role's length is read once, in the same pass.
    let role_len = match tail.strip_prefix(' ').filter(|t| !t.starts_with('"')) {
        Some(t) => {
            let bytes = t.as_bytes();
            let end = bytes
                .iter()
                .position(|&b| b == b' ' || b == b'"' || b == SIBLING_SEPARATOR as u8)
                .unwrap_or(bytes.len());
            scanned(end + 1);
            if bytes.get(end).is_some_and(|&b| b != b' ') {
                builder.add_verbatim(tree, line);
                return 1;
            }
            end
        }
        None => 0,
    };
    // Every way on adds the node: it is added first and filled in place (a node is large).
    let Some(node) = builder.open_element(tree, line, depth) else {
        return 1;
    };
    node.uid = uid;
    let Some(tail) = tail.strip_prefix(' ') else {
        return 1;
    };
    // Where this node's strings run: after the name's opening quote, or the attributes of a
    // node without a name.
    let (named, piece) = if let Some(quoted) = tail.strip_prefix('"') {
        (true, quoted)
    } else {
        let (role, after_role) = tail.split_at(role_len);
        node.role = role;
        match after_role.strip_prefix(" \"") {
            Some(quoted) => (true, quoted),
            None => (false, after_role),
        }
    };
    let holds_string = named || piece.contains('"');
    // Without a string nothing can run on: the attributes are read once, below. A plain tail
    // (the usual one) is read as it is found, into the node (`read`: taken back if the node runs
    // on past its line). Another name's attribute starts are kept: a name closing on its line
    // reads its attributes from them.
    let mut read = false;
    let first_close = if named {
        match read_plain_name(node, piece) {
            Some(close) => {
                read = true;
                Some(close)
            }
            None => raw_name_close_keeping(piece, &mut builder.attr_starts),
        }
    } else if holds_string {
        read = read_plain_attrs(node, piece);
        if read {
            Some(0)
        } else {
            general_attrs_close(piece)
        }
    } else {
        Some(0)
    };
    let within = |j: usize| {
        j < lines.len()
            && j - i <= MAX_CONTINUATION_LINES
            && lines.start(j) - lines.start(i) <= MAX_CONTINUATION_BYTES
    };
    // The line that closes the string left open on this one.
    let closing = if first_close.is_some() || !holds_string {
        Some(i)
    } else {
        builder.closes.next_any(lines, i + 1).filter(|&j| within(j))
    };
    let Some(closing) = closing else {
        // Never closes: the opening line alone, its name unclosed.
        if named {
            node.name = Some(Cow::Borrowed(piece));
        } else {
            parse_raw_attrs(node, piece);
        }
        return 1;
    };
    let piece_start = lines.start(i) + (line.len() - piece.len());
    let next = believed.next_believed_after(closing, lines.len());
    let mut last = closing;
    let mut unclosed = false;
    if holds_string && next > closing + 1 {
        // Lines no node can start: text of the last string, which closes on the last of them.
        last = next - 1;
        unclosed = lines
            .line(last)
            .and_then(|l| raw_name_close(l, 0))
            .is_none();
    }
    let span = lines.text.get(piece_start..lines.end(last)).unwrap_or("");
    if !named && last > i && attrs_close(span).is_none() {
        // Not an attribute list across lines: the line is read alone.
        if !read {
            parse_raw_attrs(node, piece);
        }
        return 1;
    }
    if last > i {
        node.raw = lines.text.get(lines.start(i)..lines.end(last));
        if read {
            // Read from the opening line alone: the node's strings run on, it is read below.
            node.attrs.clear();
            node.devtools_selected = false;
            read = false;
        }
    }
    if !named {
        if !read {
            parse_raw_attrs(node, span);
        }
    } else if unclosed {
        node.name = Some(Cow::Borrowed(span));
    } else {
        // The close that leaves a valid attribute list, else the last line's own.
        let close = if last == i { first_close } else { None };
        if let Some(close) = close {
            node.name = lines
                .text
                .get(piece_start..piece_start + close - 1)
                .map(Cow::Borrowed);
            if !read {
                parse_raw_attrs_after(node, piece, close, &builder.attr_starts);
            }
            return 1;
        }
        let close = close.or_else(|| raw_name_close(span, 0)).or_else(|| {
            let own = raw_name_close(lines.line(last)?, 0)?;
            (lines.start(last) + own).checked_sub(piece_start)
        });
        match close {
            Some(close) => {
                let tail = span.get(close..).unwrap_or("");
                set_raw_name(node, lines, piece_start, piece_start + close - 1, tail);
            }
            None => node.name = Some(Cow::Borrowed(span)),
        }
    }
    last - i + 1
}

/// A raw node line's depth, uid and what follows its uid (from the space on); `None` when the
/// line does not start with a uid.
fn read_uid(line: &str) -> Option<(usize, &str, &str)> {
    let (indent, rest) = split_indent(line);
    let after = rest.strip_prefix("uid=")?;
    let uid_len = find_byte(after, b' ').unwrap_or(after.len());
    let (uid, tail) = after.split_at(uid_len);
    is_uid(uid).then_some((indent / 2, uid, tail))
}

/// A node without a name: its attributes read as a list from the start.
fn attrs_close(piece: &str) -> Option<usize> {
    if is_plain(piece) {
        return Some(0);
    }
    general_attrs_close(piece)
}

/// [`attrs_close`] by the general reading.
fn general_attrs_close(piece: &str) -> Option<usize> {
    (AttrTailStarts::new(piece).last() == Some(0)).then_some(0)
}

/// The next line that could close a continued name or value, found by scanning forward on
/// demand. Lines are asked about in increasing order, so the cursor scans every line at most
/// once: reading continuation lines stays linear without examining every line of snapshots
/// that have none.
#[derive(Default)]
struct Closes {
    any: NextLine,
}

impl Closes {
    fn next_any(&mut self, lines: &LineIndex<'_>, j: usize) -> Option<usize> {
        self.any.find(lines, j, |k| {
            lines.line(k).and_then(|l| raw_name_close(l, 0)).is_some()
        })
    }
}

/// A forward cursor over the lines: the first line at or after `from` that passes a test.
#[derive(Default)]
struct NextLine {
    /// The query the cached answer holds for.
    from: usize,
    /// Lines before `scanned` (from `from` on) were tested.
    scanned: usize,
    /// The first passing line in `from..scanned`, if any.
    found: Option<usize>,
}

impl NextLine {
    fn find(
        &mut self,
        lines: &LineIndex<'_>,
        j: usize,
        passes: impl Fn(usize) -> bool,
    ) -> Option<usize> {
        if j < self.from {
            // Not asked in order: start over (still correct, just not cached).
            *self = NextLine::default();
        }
        // No line in `from..found` (or `from..scanned`) passes: answers for any `j >= from`.
        if let Some(k) = self.found.filter(|&k| k >= j) {
            return Some(k);
        }
        let mut k = j.max(self.scanned);
        self.from = j;
        self.found = None;
        while k < lines.len() {
            if passes(k) {
                self.scanned = k + 1;
                self.found = Some(k);
                return Some(k);
            }
            k += 1;
        }
        self.scanned = lines.len();
        None
    }
}

fn set_raw_name<'a>(
    node: &mut Node<'a>,
    lines: &LineIndex<'a>,
    start: usize,
    end: usize,
    tail: &'a str,
) {
    node.name = lines.text.get(start..end).map(Cow::Borrowed);
    parse_raw_attrs(node, tail);
}

/// One line of the light notation: a node (or a run of text nodes), a marker, or an escaped
/// verbatim line.
fn parse_light_line<'a>(
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
        let Some(header) = super::table::read_header(rest) else {
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
            let Some(nodes) = super::table::read_row(row, row_line, &header) else {
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

/// `DIGITS_DIGITS`.
pub(super) fn is_uid(token: &str) -> bool {
    let bytes = token.as_bytes();
    let Some(sep) = bytes.iter().position(|&c| !c.is_ascii_digit()) else {
        return false;
    };
    let (a, b) = bytes.split_at(sep);
    match b.split_first() {
        Some((b'_', b)) => !a.is_empty() && !b.is_empty() && b.iter().all(|c| c.is_ascii_digit()),
        _ => false,
    }
}

/// Reads an escaped quoted string at the start of `s` (which starts after the opening quote):
/// returns the raw content and the rest after the closing quote.
pub(crate) fn read_escaped(s: &str) -> Option<(&str, &str)> {
    let bytes = s.as_bytes();
    let mut k = 0;
    while let Some(&b) = bytes.get(k) {
        match b {
            b'\\' => k += 2,
            b'"' => return Some((s.get(..k)?, s.get(k + 1..)?)),
            _ => k += 1,
        }
    }
    None
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

#[cfg(test)]
mod in_order_tests {
    use super::*;
    use crate::test_support::XorShift;

    /// Random `uid=` lines: counters counting up per prefix, shared uids (a high counter on
    /// many lines, as upstream prints them), repeats with roles of their own, moved nodes,
    /// huge counters and many prefixes.
    fn random_lines(rng: &mut XorShift) -> Vec<UidLine> {
        let prefixes = match rng.below(6) {
            0 => 1 + rng.below(30),
            _ => 1 + rng.below(3),
        };
        let shared_counter = rng.below(100);
        let mut next = vec![0u64; prefixes as usize];
        let n = rng.below(60) as usize;
        (0..n)
            .map(|line| {
                let p = rng.below(prefixes);
                let counter = match rng.below(12) {
                    0 | 1 => shared_counter,
                    2 => rng.below(100),
                    3 if rng.below(8) == 0 => u64::MAX - rng.below(2),
                    4 if rng.below(8) == 0 => 1 << 40,
                    _ => {
                        let slot = next.get_mut(p as usize).map_or(0, |c| {
                            *c += 1 + rng.below(3);
                            *c
                        });
                        slot
                    }
                };
                UidLine {
                    line: line as u32,
                    prefix: 20 + p,
                    counter,
                    depth: 0,
                    shared_role: rng.below(5) != 0,
                    uid: (0, 0),
                    tail: 0,
                }
            })
            .collect()
    }

    /// Within its table (few prefixes, counters not far beyond the lines), the fast reading
    /// says "all believed" exactly when the general one believes every line; beyond it, never
    /// where the general one does not.
    #[test]
    fn the_fast_reading_agrees_with_the_general_one() {
        let mut rng = XorShift(0x0bad_5eed_c0de);
        let (mut all_believed, mut some_not) = (0, 0);
        for case in 0..20_000 {
            let found = random_lines(&mut rng);
            let general = in_order_by_prefix(&found);
            let all = general.iter().all(|&b| b);
            let fast = all_in_order(&found);
            // Each prefix's largest counter: the table holds them all.
            let mut largest = std::collections::BTreeMap::new();
            for f in &found {
                let max = largest.entry(f.prefix).or_insert(0);
                *max = f.counter.max(*max);
            }
            let table: u64 = largest
                .values()
                .map(|m| m.saturating_add(1))
                .fold(0, u64::saturating_add);
            let in_table = largest.len() <= FEW_PREFIXES && table <= found.len() as u64 * 8 + 1024;
            if in_table {
                assert_eq!(fast, all, "case {case}");
            } else {
                assert!(!fast || all, "case {case}");
            }
            assert_eq!(in_order(&found), general, "case {case}");
            if fast {
                all_believed += 1;
            } else if !all {
                some_not += 1;
            }
        }
        // Both answers came up often.
        assert!(
            all_believed > 2000 && some_not > 2000,
            "{all_believed} {some_not}"
        );
    }

    /// Whole texts: the believed lines are the same read either way.
    #[test]
    fn the_fast_reading_believes_the_same_lines_in_texts() {
        const ROLES: &[&str] = &[
            "",
            "InlineTextBox",
            "StaticText",
            "link",
            "generic",
            "ignored",
        ];
        const WORDS: &[&str] = &["a", "\"", "\n", "\" url=\"x", "\n  uid=20_3 link \"x\""];
        let mut rng = XorShift(0x7e57_7e57);
        for case in 0..3000 {
            let mut text = String::new();
            let mut depth = 0usize;
            for f in random_lines(&mut rng) {
                depth = match rng.below(4) {
                    0 => depth + 1,
                    1 => depth.saturating_sub(1 + rng.below(3) as usize),
                    _ => depth,
                };
                text.push_str(&"  ".repeat(depth));
                text.push_str(&format!(
                    "uid={}_{} {}",
                    f.prefix,
                    f.counter,
                    rng.pick(ROLES)
                ));
                if rng.below(2) == 0 {
                    text.push_str(" \"");
                    for _ in 0..rng.below(3) {
                        text.push_str(rng.pick(WORDS));
                    }
                    text.push('"');
                }
                text.push('\n');
                if rng.below(20) == 0 {
                    text.push_str("page text\n");
                }
            }
            let body = text.strip_suffix('\n').unwrap_or(&text);
            let lines = LineIndex::new(&text, body);
            assert_eq!(
                UidLines::scan(&lines).next_believed,
                UidLines::scan_with(&lines, in_order_by_prefix).next_believed,
                "case {case}\n{text}"
            );
        }
    }
}

#[cfg(test)]
mod plain_tests {
    use super::*;
    use crate::test_support::XorShift;

    /// Random attribute tails and names: mostly plain lists, with the tokens that make a tail
    /// not plain (quotes in values and names, line breaks, stray `=`, keys that are not keys, the
    /// DevTools suffix in and out of place).
    fn random_piece(rng: &mut XorShift) -> String {
        const TOKENS: &[&str] = &[
            " level=\"1\"",
            " focusable",
            " disableable disabled",
            " url=\"http://h/p?a=b c\"",
            " value=\"\"",
            " description=\"say \"hi\"\"",
            " value=\"a\nb\"",
            " url=\"a\nb\"",
            " k=v",
            " Key",
            " x-y_2",
            " é",
            "\"",
            " ",
            "=",
            "\n",
            "a",
            " [selected in the DevTools Elements panel]",
        ];
        let mut piece = String::new();
        if rng.below(2) == 0 {
            // A name and its closing quote.
            for _ in 0..rng.below(3) {
                piece.push_str(rng.pick(&["a", "b c", "\"", " x=\"", "\n"]));
            }
            piece.push('"');
        }
        for _ in 0..rng.below(5) {
            let plain = rng.below(3) != 0;
            piece.push_str(if plain {
                rng.pick(TOKENS.get(..5).unwrap_or(TOKENS))
            } else {
                rng.pick(TOKENS)
            });
        }
        if rng.below(8) == 0 {
            piece.push_str(DEVTOOLS_SELECTED);
        }
        piece
    }

    /// The one-pass reads of a line's indent and uid read what the token rules say.
    #[test]
    fn indents_and_uids_read_as_their_rules_say() {
        let mut rng = XorShift(0x1d_e47);
        for case in 0..20_000 {
            let mut line = " ".repeat(rng.below(40) as usize);
            for _ in 0..rng.below(5) {
                line.push_str(rng.pick(&["1", "0", "_", " ", "x", "é", "99999999999", "\""]));
            }
            let indent = line.bytes().take_while(|&b| b == b' ').count();
            assert_eq!(split_indent(&line).0, indent, "case {case}: {line:?}");
            let after = line.trim_start_matches(' ');
            let uid = after.split(' ').next().unwrap_or("");
            let expected = is_uid(uid).then(|| {
                let number = |d: &str| {
                    d.bytes().fold(0u64, |n, b| {
                        n.saturating_mul(10).saturating_add(u64::from(b - b'0'))
                    })
                };
                let (prefix, counter) = uid.split_once('_').unwrap_or_default();
                (uid.len(), number(prefix), number(counter))
            });
            assert_eq!(
                uid_numbers(after.as_bytes()),
                expected,
                "case {case}: {line:?}"
            );
        }
    }

    /// The forward reading of plain tails reads what the general one does, for names and
    /// attribute lists alike, and plain tails come up often.
    #[test]
    fn plain_tails_read_as_the_general_reading_reads_them() {
        let mut rng = XorShift(0x91a1_7a11);
        let (mut plain_names, mut plain_lists) = (0, 0);
        for case in 0..20_000 {
            let piece = random_piece(&mut rng);
            let piece = piece.as_str();
            let general = general_name_close(piece, 0);
            assert_eq!(raw_name_close(piece, 0), general, "case {case}: {piece:?}");
            // Read into a node, or the node left as it was.
            let mut read = Node::new(NodeKind::Element, None);
            let close = read_plain_name(&mut read, piece);
            assert_eq!(close, plain_name_close(piece), "case {case}: {piece:?}");
            if close.is_none() {
                assert!(
                    read.attrs.is_empty() && !read.devtools_selected,
                    "case {case}"
                );
            }
            if let Some(close) = close {
                plain_names += 1;
                let mut starts = Vec::new();
                assert_eq!(
                    raw_name_close_keeping(piece, &mut starts),
                    Some(close),
                    "case {case}: {piece:?}"
                );
                let (mut fast, mut slow) = (
                    Node::new(NodeKind::Element, None),
                    Node::new(NodeKind::Element, None),
                );
                assert_eq!(read_plain_name(&mut fast, piece), Some(close));
                parse_raw_attrs_after(&mut slow, piece, close, &starts);
                assert_eq!(fast.attrs, slow.attrs, "case {case}: {piece:?}");
                assert_eq!(
                    fast.devtools_selected, slow.devtools_selected,
                    "case {case}"
                );
            }
            assert_eq!(
                attrs_close(piece),
                general_attrs_close(piece),
                "case {case}: {piece:?}"
            );
            let (mut fast, mut slow) = (
                Node::new(NodeKind::Element, None),
                Node::new(NodeKind::Element, None),
            );
            parse_raw_attrs(&mut fast, piece);
            general_raw_attrs(&mut slow, piece);
            assert_eq!(fast.attrs, slow.attrs, "case {case}: {piece:?}");
            assert_eq!(
                fast.devtools_selected, slow.devtools_selected,
                "case {case}"
            );
            plain_lists += usize::from(is_plain(piece));
        }
        assert!(
            plain_names > 3000 && plain_lists > 3000,
            "{plain_names} {plain_lists}"
        );
    }
}
