//! Reading a table of records back (the parser's side of `writer::write_table_lines`): the
//! header line names each column (`checkbox "Select {name}" | text | link "{name}" | …`), each
//! row line holds one record's cells split by `|`. A row reads back as the nodes of its uid
//! cells (role, name and attributes from the header and the row); text cells, cells without a
//! uid and a combobox's options are not nodes of the tree, and the header (a marker line) names
//! them all with the run's range and expand call.

use std::borrow::Cow;

use super::syntax::is_uid;
use crate::notation::escape::{
    read_escaped as quoted, split_outside_quotes, unescape, unescape_cell,
};
use crate::snapshot::tree::{Attr, Node, NodeKind};

/// How a header column names its cells.
#[derive(Debug)]
enum Name<'a> {
    /// No name in the header: the row writes it, or there is none.
    Row,
    Fixed(Cow<'a, str>),
    /// The record's name.
    Key,
    /// The record's name inside fixed words.
    Around(Cow<'a, str>, Cow<'a, str>),
}

#[derive(Debug)]
struct Column<'a> {
    /// `text` for text cells.
    role: &'a str,
    name: Name<'a>,
    fixed: Vec<Attr<'a>>,
    /// `value=*`: each row writes the value bare after the name.
    value: bool,
}

/// A table header read back: how many rows follow, and the columns.
#[derive(Debug)]
pub struct Header<'a> {
    pub rows: usize,
    columns: Vec<Column<'a>>,
}

const HEADER_START: &str = "… table of ";
const HEADER_MID: &str = " records, a line each: ";

/// Attributes `key=value`, `key="value"` and bare words, space-separated.
fn read_attrs<'a>(mut s: &'a str, out: &mut Vec<Attr<'a>>) -> Option<()> {
    loop {
        s = s.trim_start_matches(' ');
        if s.is_empty() {
            return Some(());
        }
        let end = s.find([' ', '=']).unwrap_or(s.len());
        let (key, rest) = s.split_at(end);
        if key.is_empty() {
            return None;
        }
        if let Some(v) = rest.strip_prefix("=\"") {
            let (value, r) = quoted(v)?;
            out.push(Attr {
                key,
                value: Some(unescape(value)),
            });
            s = r;
        } else if let Some(v) = rest.strip_prefix('=') {
            let e = v.find(' ').unwrap_or(v.len());
            out.push(Attr {
                key,
                value: Some(Cow::Borrowed(v.get(..e)?)),
            });
            s = v.get(e..)?;
        } else {
            out.push(Attr { key, value: None });
            s = rest;
        }
    }
}

/// Reads a table header (a marker line's text), `None` when it is no table header.
pub fn read_header(text: &str) -> Option<Header<'_>> {
    let rest = text.strip_prefix(HEADER_START)?;
    let (rows, rest) = rest.split_once(HEADER_MID)?;
    let rows: usize = rows.parse().ok()?;
    // The columns end at `; N text cells…` or at ` (uid …`, outside quotes.
    let cols = split_outside_quotes(rest, " (uid ");
    let cols = cols.first()?;
    let cols = split_outside_quotes(cols, "; ");
    let mut columns = Vec::new();
    // The first `"{name}"` column is the record's name; a later one repeats it.
    let mut keyed = false;
    for spec in split_outside_quotes(cols.first()?, " | ") {
        // Options are stated by the header (their uids follow the cell's): not nodes here.
        let spec = match split_outside_quotes(spec, " [options").first() {
            Some(s) => *s,
            None => spec,
        };
        let end = spec.find(' ').unwrap_or(spec.len());
        let (role, mut rest) = spec.split_at(end);
        let mut name = Name::Row;
        if let Some(q) = rest.strip_prefix(" \"") {
            let (raw, r) = quoted(q)?;
            name = match raw.split_once("{name}") {
                Some(("", "")) if !std::mem::replace(&mut keyed, true) => Name::Key,
                Some((pre, suf)) => Name::Around(unescape(pre), unescape(suf)),
                None => Name::Fixed(unescape(raw)),
            };
            rest = r;
        }
        let mut fixed = Vec::new();
        read_attrs(rest, &mut fixed)?;
        let value = fixed
            .iter()
            .position(|a| a.key == "value" && a.value.as_deref() == Some("*"));
        if let Some(at) = value {
            fixed.remove(at);
        }
        columns.push(Column {
            role: if role == "text" { "" } else { role },
            name,
            fixed,
            value: value.is_some(),
        });
    }
    (!columns.is_empty()).then_some(Header { rows, columns })
}

/// Reads one row into the nodes of its uid cells, in order (`None`: not a row of `header`).
/// The first node carries `line` as its raw text.
pub fn read_row<'a>(row: &'a str, line: &'a str, header: &Header<'a>) -> Option<Vec<Node<'a>>> {
    let cells = split_outside_quotes(row, "|");
    if cells.len() != header.columns.len() {
        return None;
    }
    let mut key: Option<Cow<'a, str>> = None;
    let mut nodes: Vec<(Node<'a>, &Column<'a>)> = Vec::new();
    for (col, cell) in header.columns.iter().zip(cells) {
        if col.role.is_empty() {
            if matches!(col.name, Name::Key) {
                key = Some(unescape_cell(cell));
            }
            continue;
        }
        let end = cell.find(' ').unwrap_or(cell.len());
        let (uid, mut rest) = cell.split_at(end);
        let mut node = Node::new(NodeKind::Element, None);
        node.role = col.role;
        if is_uid(uid) {
            node.uid = uid;
        } else {
            rest = cell;
        }
        if let Some(q) = rest.trim_start_matches(' ').strip_prefix('"') {
            let (raw, r) = quoted(q)?;
            node.name = Some(unescape(raw));
            rest = r;
        }
        if matches!(col.name, Name::Key) {
            key = node.name.clone();
        }
        if col.value {
            let r = rest.trim_start_matches(' ');
            let (value, after) = match r.strip_prefix('"') {
                Some(q) => {
                    let (raw, after) = quoted(q)?;
                    (unescape(raw), after)
                }
                None => {
                    let e = r.find(' ').unwrap_or(r.len());
                    (Cow::Borrowed(r.get(..e)?), r.get(e..)?)
                }
            };
            node.attrs.push(Attr {
                key: "value",
                value: Some(value),
            });
            rest = after;
        }
        node.attrs.extend(col.fixed.iter().cloned());
        read_attrs(rest, &mut node.attrs)?;
        nodes.push((node, col));
    }
    let mut out = Vec::with_capacity(nodes.len());
    for (mut node, col) in nodes {
        match &col.name {
            Name::Fixed(name) => node.name = Some(name.clone()),
            // A row writes the name itself where the pattern does not give it.
            Name::Around(pre, suf) if node.name.is_none() => {
                node.name = Some(Cow::Owned(format!(
                    "{pre}{}{suf}",
                    key.as_deref().unwrap_or("")
                )))
            }
            Name::Around(..) => {}
            Name::Key | Name::Row => {}
        }
        if node.uid.is_empty() {
            continue;
        }
        node.attrs.sort_by(|a, b| a.key.cmp(b.key));
        out.push(node);
    }
    if let Some(first) = out.first_mut() {
        first.raw = Some(line);
    }
    Some(out)
}
