//! One node line of the chrome-devtools-mcp notation, with the lines its strings run on to.

use std::borrow::Cow;

use super::super::syntax::is_uid;
use super::super::syntax::SIBLING_SEPARATOR;
use super::builder::Builder;
use super::raw_attrs::{
    attrs_close, general_attrs_close, parse_raw_attrs, parse_raw_attrs_after, raw_name_close,
    raw_name_close_keeping, read_plain_attrs, read_plain_name,
};
use super::scan::{find_byte, scanned, split_indent, LineIndex};
use super::uid_lines::{UidLine, UidLines};
use crate::snapshot::tree::{Node, Tree};

/// A multi-line name longer than this is not believed: the opening line is read on its own.
const MAX_CONTINUATION_LINES: usize = 4000;
const MAX_CONTINUATION_BYTES: usize = 1 << 20;

/// One node of the chrome-devtools-mcp notation with its continuation lines: the lines a string
/// opened on its line runs on (the line cannot close it), then every line up to the next
/// believed node line (see [`UidLines`]), which can only be text of its last string. Returns the
/// number of lines consumed.
pub(super) fn parse_raw_line<'a>(
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
