//! A table of records in Playwright's YAML: every line one quoted list item, so the snapshot
//! stays valid YAML and reads as Playwright's. The header names the columns in Playwright's own
//! words (`checkbox "Select {name}" [ref] | cell | link "{name}" [ref] | combobox "Plan for
//! {name}" [ref] [options "Free" "Pro"] [selected=*] | button "Edit {name}" [ref]`), then one
//! item per record with its cells split by `|`:
//!
//! ```yaml
//! - '… table of 40 records, a line each: checkbox "Select {name}" [ref] | cell | … (uid f41e66…f41e800): expand_snapshot uid=f41e66 until=f41e800'
//! - 'f41e68|1000|f41e71 "Ava Hernandez"|Wonka|f41e75 Starter|Active|f41e81|f41e82'
//! ```
//!
//! - `[ref]`: each row writes the control's ref first (never implied);
//! - `{name}`: the record's name, the first `"{name}"` column's; a column such as
//!   `"Edit {name}"` takes its name from it unless the row writes its own (quoted, after the
//!   ref);
//! - `[options …] [selected=*]`: the combobox's options (Playwright gives them no ref), the
//!   row writing the selected one after the ref (none written: none selected);
//! - other cells are their text, bare (`|`, `"` and `\` escaped); a text cut ends in `…`;
//! - states that differ per row follow as Playwright writes them (`[checked]`).

use std::borrow::Cow;

use super::refs::split_ref;
use super::yaml::write_attr;
use crate::notation::escape::{
    escape_cell_into, escape_into, read_escaped, split_outside_quotes, unescape, unescape_cell,
};
use crate::notation::table_header::{write_option_names, write_table_header, ColumnWords};
use crate::snapshot::marker::ExpandTarget;
use crate::snapshot::render::push_indent;
use crate::snapshot::roles;
use crate::snapshot::tree::{Attr, Column, ColumnName, Node, NodeKind, Table, Tree};

/// `s` cut to `keep` characters and `…`, when a pass cut it.
fn cut(s: &str, keep: Option<usize>) -> Cow<'_, str> {
    match keep {
        Some(keep) => {
            let at = s.char_indices().nth(keep).map_or(s.len(), |(i, _)| i);
            format!("{}…", s.get(..at).unwrap_or("")).into()
        }
        None => s.into(),
    }
}

/// The option the combobox `id` selects (its child marked `[selected]`).
fn selected_option<'n>(tree: &'n Tree<'_>, id: usize) -> Option<&'n str> {
    tree.children(id)
        .iter()
        .filter_map(|&c| tree.nodes.get(c))
        .find(|o| o.role == "option" && o.has_attr("selected"))
        .map(|o| o.name_str())
}

/// Whether the attribute `key` of `node` is written in a table: not a property line (`/url`:
/// urls are hidden at the levels with tables), no stateless capability, no pointer cursor on
/// a control (the writer's own rule), no earlier cut (the row writes the whole count).
fn written_attr(node: &Node<'_>, key: &str, value: Option<&str>) -> bool {
    !(key.starts_with('/')
        || key == "cut"
        || roles::is_stateless_capability(node, key)
        || (key == "cursor" && value == Some("pointer") && roles::is_interactive(node))
        || (key == "selected" && node.role == "option"))
}

/// The cell writes a value of its own: a control's selected option.
fn selects(col: &Column<'_>) -> bool {
    col.uid && !col.options.is_empty()
}

/// Roles whose text after the colon (`- textbox "First name" [ref=e5]: Ada`) is the value the
/// control holds, not a label: a table writes it in the row (`[value=*]`).
const VALUE_ROLES: [&str; 4] = ["textbox", "searchbox", "spinbutton", "combobox"];

/// The value a control shows as its one text child (Playwright's `: text` after its key).
fn inline_value<'n>(tree: &'n Tree<'_>, id: usize) -> Option<&'n str> {
    let node = tree.nodes.get(id)?;
    if !VALUE_ROLES.contains(&node.role) {
        return None;
    }
    match tree.children(id) {
        [only] => tree
            .nodes
            .get(*only)
            .filter(|t| {
                t.kind == NodeKind::Element
                    && t.role.is_empty()
                    && t.uid.is_empty()
                    && tree.children(*only).is_empty()
            })
            .and_then(|t| t.name.as_deref()),
        _ => None,
    }
}

/// Whether column `c` of `table` writes each row's value (`[value=*]`): a column of controls
/// whose cells show a value as text, in some record at least (the others write `""`).
fn writes_values(tree: &Tree<'_>, table: &Table<'_>, c: usize) -> bool {
    table
        .columns
        .get(c)
        .is_some_and(|col| col.uid && !selects(col))
        && (0..table.records()).any(|r| {
            table
                .record(r)
                .get(c)
                .is_some_and(|&i| inline_value(tree, i).is_some())
        })
}

/// Whether `s` goes bare as `write_word` writes it.
fn is_bare_word(s: &str) -> bool {
    !s.is_empty()
        && !s
            .bytes()
            .any(|b| matches!(b, b' ' | b'"' | b'\\' | b'|' | b'[' | b'\n' | b'\r'))
}

/// Playwright's words in a table header: names cut then escaped, states as `[key=value]`,
/// `[ref]`, the options (no refs of their own), `[selected=*]` and `[value=*]` (`values`: per
/// column, `writes_values`).
struct PlaywrightColumns<'v> {
    values: &'v [bool],
}

impl ColumnWords for PlaywrightColumns<'_> {
    fn write_name(&self, out: &mut String, name: &str, keep: Option<usize>) {
        escape_into(out, &cut(name, keep));
    }

    fn write_fixed_attr(&self, out: &mut String, head: &Node<'_>, attr: &Attr<'_>) {
        if written_attr(head, attr.key, attr.value.as_deref()) {
            write_attr(out, attr.key, attr.value.as_deref());
        }
    }

    fn write_column_end(&self, out: &mut String, col: &Column<'_>, c: usize) {
        if col.uid {
            write_attr(out, "ref", None);
        }
        if !col.options.is_empty() {
            write_option_names(out, &col.options);
            out.push(']');
        }
        if selects(col) {
            write_attr(out, "selected", Some("*"));
        }
        if self.values.get(c).copied().unwrap_or(false) {
            write_attr(out, "value", Some("*"));
        }
    }
}

/// A bare word in a row: nothing a reader could take for a quote, a state or the next cell.
fn write_word(out: &mut String, s: &str) {
    if is_bare_word(s) {
        out.push_str(s);
    } else {
        out.push('"');
        escape_into(out, s);
        out.push('"');
    }
}

/// One cell of a row, node `id` (see the module's rules). Returns the refs written.
fn write_cell(
    out: &mut String,
    tree: &Tree<'_>,
    id: usize,
    node: &Node<'_>,
    col: &Column<'_>,
    key: &str,
    values: bool,
) -> usize {
    let name = node.name_str();
    let own_name = match &col.name {
        ColumnName::Key | ColumnName::Varies => true,
        ColumnName::Around(pre, suf) => {
            node.keep_chars.is_some()
                || name.len() != pre.len() + key.len() + suf.len()
                || !name.starts_with(pre.as_str())
                || !name.ends_with(suf.as_str())
                || name.get(pre.len()..pre.len() + key.len()) != Some(key)
        }
        ColumnName::None | ColumnName::Fixed => false,
    };
    // What the row writes after the ref and name: the selected option, or the value.
    let value = if selects(col) {
        selected_option(tree, id)
    } else if values {
        Some(inline_value(tree, id).unwrap_or(""))
    } else {
        None
    };
    // A quoted value right after the ref would read as the cell's name (a textbox "Pro plan"
    // holding "required" against a required one holding "Pro plan"): the name goes first.
    let own_name = own_name || value.is_some_and(|v| !is_bare_word(v));
    let states: Vec<(&str, Option<&str>)> = node
        .attrs
        .iter()
        .filter(|a| !col.fixed.contains(&a.key) && written_attr(node, a.key, a.value.as_deref()))
        .map(|a| (a.key, a.value.as_deref()))
        .collect();
    if !col.uid {
        if own_name {
            let text = cut(name, node.keep_chars);
            if states.is_empty() {
                escape_cell_into(out, &text);
            } else {
                // Quoted, so that the states after it read as states.
                out.push('"');
                escape_into(out, &text);
                out.push('"');
            }
        }
        for (k, v) in states {
            write_attr(out, k, v);
        }
        return 0;
    }
    out.push_str(node.uid);
    if own_name {
        out.push_str(" \"");
        escape_into(out, &cut(name, node.keep_chars));
        out.push('"');
    }
    if let Some(value) = value {
        out.push(' ');
        write_word(out, value);
    }
    for (k, v) in states {
        write_attr(out, k, v);
    }
    if let (Some(keep), true) = (node.keep_chars, own_name) {
        let n = name.chars().count().saturating_sub(keep);
        write_attr(out, "cut", Some(&n.to_string()));
    }
    1
}

/// Whether a row of `table` writes something: a ref, or a name or text of its own.
pub fn rows_say_something(table: &Table<'_>) -> bool {
    table
        .columns
        .iter()
        .any(|c| c.shown && (c.uid || matches!(c.name, ColumnName::Key | ColumnName::Varies)))
}

/// One YAML item holding `line` (single-quoted, `'` doubled).
fn write_item(out: &mut String, depth: usize, line: &str) {
    push_indent(out, depth);
    out.push_str("- '");
    out.push_str(&line.replace('\'', "''"));
    out.push_str("'\n");
}

/// Writes the first `rows` records of `table` at `depth`: the header item, then one item per
/// record. Returns the refs its rows write.
pub fn write_table(
    out: &mut String,
    tree: &Tree<'_>,
    table: &Table<'_>,
    rows: usize,
    depth: usize,
    expand: ExpandTarget<'_>,
) -> usize {
    let values: Vec<bool> = (0..table.columns.len())
        .map(|c| writes_values(tree, table, c))
        .collect();
    let siblings: Vec<usize> = (0..rows)
        .flat_map(|r| table.siblings(r).iter().copied())
        .collect();
    let mut line = String::new();
    let words = PlaywrightColumns { values: &values };
    write_table_header(&mut line, tree, table, rows, &siblings, expand, &words);
    write_item(out, depth, &line);
    let key_column = table.columns.iter().position(|c| c.name == ColumnName::Key);
    let mut shown = 0;
    for r in 0..rows {
        let record = table.record(r);
        // The record's name as the row writes it (cut, when cut): what `{name}` stands for.
        let key = key_column
            .and_then(|c| record.get(c))
            .and_then(|&i| tree.nodes.get(i))
            .map(|k| cut(k.name_str(), k.keep_chars).into_owned())
            .unwrap_or_default();
        let mut line = String::new();
        let mut sep = "";
        for ((col, &id), &v) in table.columns.iter().zip(record).zip(&values) {
            let Some(node) = tree.nodes.get(id) else {
                continue;
            };
            if !col.shown {
                continue;
            }
            line.push_str(sep);
            sep = "|";
            shown += write_cell(&mut line, tree, id, node, col, &key, v);
        }
        write_item(out, depth, &line);
    }
    shown
}

/// How a header column names its cells (read back).
#[derive(Debug)]
enum Name<'a> {
    /// Each row writes it, or there is none.
    Row,
    Fixed(Cow<'a, str>),
    /// The record's name.
    Key,
    /// The record's name inside fixed words.
    Around(String, String),
}

#[derive(Debug)]
struct ReadColumn<'a> {
    role: &'a str,
    name: Name<'a>,
    fixed: Vec<Attr<'a>>,
    with_ref: bool,
    options: Vec<Cow<'a, str>>,
    selected: bool,
    /// `[value=*]`: each row writes the control's value (its text child) after the name.
    valued: bool,
}

/// A table header read back (the writer's `write_table`): rows that follow, and the columns.
#[derive(Debug)]
pub struct Header<'a> {
    pub rows: usize,
    columns: Vec<ReadColumn<'a>>,
}

/// The text inside a quoted YAML item (`- '…'`, `''` still doubled), without indent.
pub fn item_text(raw: &str) -> Option<&str> {
    raw.trim_start_matches(' ')
        .strip_prefix("- '")?
        .strip_suffix('\'')
}

/// A `"…"` string at the start of `s` (after the opening quote), decoded: `''` and escapes.
fn read_quoted(s: &str) -> Option<(Cow<'_, str>, &str)> {
    let (raw, rest) = read_escaped(s)?;
    let text = match unescape(raw) {
        Cow::Borrowed(b) if b.contains("''") => Cow::Owned(b.replace("''", "'")),
        Cow::Borrowed(b) => Cow::Borrowed(b),
        Cow::Owned(o) => Cow::Owned(o.replace("''", "'")),
    };
    Some((text, rest))
}

/// `[key=value]` and `[key]` attributes, as `write_attr` writes them; `None` on anything else.
fn read_attrs<'a>(mut s: &'a str, out: &mut Vec<Attr<'a>>) -> Option<()> {
    while let Some(t) = s.strip_prefix(" [") {
        let close = t.find(']')?;
        let word = t.get(..close)?;
        s = t.get(close + 1..)?;
        out.push(match word.split_once('=') {
            Some((key, value)) => Attr {
                key,
                value: Some(Cow::Borrowed(value)),
            },
            None => Attr {
                key: word,
                value: None,
            },
        });
    }
    s.is_empty().then_some(())
}

/// Reads a table header (the text of a quoted item, `''` doubled), `None` when it is none.
pub fn read_header(text: &str) -> Option<Header<'_>> {
    let rest = text.strip_prefix("… table of ")?;
    let (rows, rest) = rest.split_once(" records, a line each: ")?;
    let rows: usize = rows.parse().ok()?;
    let cols = split_outside_quotes(rest, " (uid ");
    let cols = split_outside_quotes(cols.first()?, "; ");
    let mut columns = Vec::new();
    let mut keyed = false;
    for spec in split_outside_quotes(cols.first()?, " | ") {
        let end = spec.find(' ').unwrap_or(spec.len());
        let (role, mut rest) = spec.split_at(end);
        let mut name = Name::Row;
        if let Some(q) = rest.strip_prefix(" \"") {
            let (raw, r) = read_quoted(q)?;
            name = match raw.split_once("{name}") {
                Some(("", "")) if !std::mem::replace(&mut keyed, true) => Name::Key,
                Some((pre, suf)) => Name::Around(pre.to_string(), suf.to_string()),
                None => Name::Fixed(raw),
            };
            rest = r;
        }
        let mut options = Vec::new();
        if let Some((before, after)) = rest.split_once(" [options") {
            let mut o = after;
            while let Some(q) = o.strip_prefix(" \"") {
                let (option, r) = read_quoted(q)?;
                options.push(option);
                o = r;
            }
            let tail = o.strip_prefix(']')?;
            // Only `[selected=*]` follows the options.
            let selected = match tail {
                "" => false,
                " [selected=*]" => true,
                _ => return None,
            };
            let mut fixed = Vec::new();
            read_attrs(before, &mut fixed)?;
            let with_ref = take_word(&mut fixed, "ref");
            columns.push(ReadColumn {
                role,
                name,
                fixed,
                with_ref,
                options,
                selected,
                valued: false,
            });
            continue;
        }
        let mut fixed = Vec::new();
        read_attrs(rest, &mut fixed)?;
        let with_ref = take_word(&mut fixed, "ref");
        let at = fixed
            .iter()
            .position(|a| a.key == "value" && a.value.as_deref() == Some("*"));
        if let Some(at) = at {
            fixed.remove(at);
        }
        columns.push(ReadColumn {
            role: if role == "text" { "" } else { role },
            name,
            fixed,
            with_ref,
            options,
            selected: false,
            valued: at.is_some(),
        });
    }
    (!columns.is_empty()).then_some(Header { rows, columns })
}

/// Removes the bare attribute `word` from `attrs`; whether it was there.
fn take_word(attrs: &mut Vec<Attr<'_>>, word: &str) -> bool {
    let at = attrs
        .iter()
        .position(|a| a.key == word && a.value.is_none());
    if let Some(at) = at {
        attrs.remove(at);
    }
    at.is_some()
}

/// Reads one row (the text of a quoted item) into the nodes of its ref cells, in order, each
/// combobox with its options (`None`: not a row of `header`).
pub fn read_row<'a>(row: &'a str, header: &Header<'a>) -> Option<Vec<Node<'a>>> {
    let cells = split_outside_quotes(row, "|");
    if cells.len() != header.columns.len() {
        return None;
    }
    let mut key: Option<Cow<'a, str>> = None;
    let mut nodes: Vec<(Node<'a>, &ReadColumn<'a>, Option<Cow<'a, str>>)> = Vec::new();
    for (col, cell) in header.columns.iter().zip(cells) {
        if !col.with_ref {
            if matches!(col.name, Name::Key) {
                key = Some(match cell.strip_prefix('"') {
                    Some(q) => read_quoted(q)?.0,
                    None => match unescape_cell(cell) {
                        Cow::Borrowed(b) if !b.contains("''") => Cow::Borrowed(b),
                        other => Cow::Owned(other.replace("''", "'")),
                    },
                });
            }
            continue;
        }
        let end = cell.find(' ').unwrap_or(cell.len());
        let (uid, mut rest) = cell.split_at(end);
        split_ref(uid)?;
        let mut node = Node::new(NodeKind::Element, None);
        node.role = col.role;
        node.uid = uid;
        if let Some(q) = rest.strip_prefix(" \"") {
            let (name, r) = read_quoted(q)?;
            node.name = Some(name);
            rest = r;
        }
        let mut selected = None;
        if col.selected || col.valued {
            if let Some(q) = rest.strip_prefix(" \"") {
                let (option, r) = read_quoted(q)?;
                selected = Some(option);
                rest = r;
            } else if let Some(r) = rest.strip_prefix(' ').filter(|r| !r.starts_with('[')) {
                let e = r.find(' ').unwrap_or(r.len());
                selected = Some(Cow::Borrowed(r.get(..e)?));
                rest = r.get(e..)?;
            }
        }
        node.attrs.extend(col.fixed.iter().cloned());
        read_attrs(rest, &mut node.attrs)?;
        if matches!(col.name, Name::Key) {
            key = node.name.clone();
        }
        nodes.push((node, col, selected));
    }
    let mut out = Vec::with_capacity(nodes.len());
    for (mut node, col, selected) in nodes {
        match &col.name {
            Name::Fixed(name) => node.name = Some(name.clone()),
            Name::Around(pre, suf) if node.name.is_none() => {
                node.name = Some(Cow::Owned(format!(
                    "{pre}{}{suf}",
                    key.as_deref().unwrap_or("")
                )));
            }
            Name::Around(..) | Name::Key | Name::Row => {}
        }
        out.push(node);
        if col.valued {
            // The value is the control's text child, as Playwright writes it after the key.
            if let Some(value) = selected.clone().filter(|v| !v.is_empty()) {
                let mut text = Node::new(NodeKind::Element, None);
                text.name = Some(value);
                out.push(text);
            }
        }
        for option in &col.options {
            let mut o = Node::new(NodeKind::Element, None);
            o.role = "option";
            o.name = Some(option.clone());
            if selected.as_deref() == Some(option.as_ref()) {
                o.attrs.push(Attr {
                    key: "selected",
                    value: None,
                });
            }
            out.push(o);
        }
    }
    Some(out)
}
