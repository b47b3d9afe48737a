//! The grammar of a raw node line's name and attributes: where a name printed raw closes, which
//! attribute lists upstream prints, and reading them into the node.

use std::borrow::Cow;

#[cfg(test)]
use super::scan::COMPLETE_ASKED;
use super::scan::{find_byte, find_either, rfind_byte, scanned, LineIndex};
use crate::snapshot::tree::{Attr, Node};

/// The DevTools selection suffix chrome-devtools-mcp appends to the selected node.
pub const DEVTOOLS_SELECTED: &str = " [selected in the DevTools Elements panel]";

/// Whether a node line's tail (after its uid and a space) leaves no string open: a name that
/// closes with a valid attribute list after it, or attributes that read as a list.
pub(super) fn line_complete(tail: &str) -> bool {
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

pub(in crate::notation::cdp) fn is_key(word: &str) -> bool {
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
pub(super) fn raw_name_close(piece: &str, min: usize) -> Option<usize> {
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
pub(super) fn read_plain_name<'a>(node: &mut Node<'a>, piece: &'a str) -> Option<usize> {
    let close = find_byte(piece, b'"')? + 1;
    read_plain_attrs(node, piece.get(close..)?).then_some(close)
}

/// Whether the attribute tail starting at `b` follows a `"`: a raw name can close there.
fn after_quote(bytes: &[u8], b: usize) -> bool {
    b.checked_sub(1).and_then(|q| bytes.get(q)) == Some(&b'"')
}

/// [`raw_name_close`] from 0, keeping every attribute start of `piece` (right to left) in
/// `starts` for [`parse_raw_attrs_after`]: the attributes after the close are not searched again.
pub(super) fn raw_name_close_keeping(piece: &str, starts: &mut Vec<usize>) -> Option<usize> {
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
pub(super) fn parse_raw_attrs_after<'a>(
    node: &mut Node<'a>,
    piece: &'a str,
    close: usize,
    starts: &[usize],
) {
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
pub(super) fn parse_raw_attrs<'a>(node: &mut Node<'a>, tail: &'a str) {
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
pub(super) fn read_plain_attrs<'a>(node: &mut Node<'a>, tail: &'a str) -> bool {
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

/// A node without a name: its attributes read as a list from the start.
pub(super) fn attrs_close(piece: &str) -> Option<usize> {
    if is_plain(piece) {
        return Some(0);
    }
    general_attrs_close(piece)
}

/// [`attrs_close`] by the general reading.
pub(super) fn general_attrs_close(piece: &str) -> Option<usize> {
    (AttrTailStarts::new(piece).last() == Some(0)).then_some(0)
}

/// The next line that could close a continued name or value, found by scanning forward on
/// demand. Lines are asked about in increasing order, so the cursor scans every line at most
/// once: reading continuation lines stays linear without examining every line of snapshots
/// that have none.
#[derive(Default)]
pub(super) struct Closes {
    any: NextLine,
}

impl Closes {
    pub(super) fn next_any(&mut self, lines: &LineIndex<'_>, j: usize) -> Option<usize> {
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

#[cfg(test)]
#[path = "raw_attrs_tests.rs"]
mod plain_tests;
