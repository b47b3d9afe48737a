//! Which `uid=` lines of a raw snapshot are believed to start a node (the parse module's doc).

use super::raw_attrs::line_complete;
use super::scan::{find_byte, scanned, split_indent, LineIndex};

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
pub(super) struct UidLines {
    /// For each line, the first later line that starts a believed node (the line count if none).
    next_believed: Vec<u32>,
    /// The `uid=` lines, in line order: what the scan read of them is not read again.
    pub(super) found: Vec<UidLine>,
}

/// One `uid=` line, for the scan.
pub(super) struct UidLine {
    pub(super) line: u32,
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
    pub(super) fn parts<'a>(&self, line: &'a str) -> Option<(usize, &'a str, &'a str)> {
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

impl UidLines {
    pub(super) fn scan(lines: &LineIndex<'_>) -> UidLines {
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
    pub(super) fn next_believed_after(&self, i: usize, len: usize) -> usize {
        self.next_believed
            .get(i)
            .map_or(len, |&j| (j as usize).min(len))
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

/// The uid (`DIGITS_DIGITS`, [`is_uid`](super::is_uid)) that `after` starts with, ended by a space or the end:
/// its length and its two numbers (saturating), read in one pass; `None` if `after` starts with
/// no uid.
pub(super) fn uid_numbers(after: &[u8]) -> Option<(usize, u64, u64)> {
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

#[cfg(test)]
#[path = "uid_lines_tests.rs"]
mod in_order_tests;
