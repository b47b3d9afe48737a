//! The light notation's line writer. `render_raw` gives the input back byte for byte (the
//! `off` check of the parser); `render` writes the light notation through the core's one
//! traversal (`snapshot::render`), with markers for what passes hid.

use std::borrow::Cow;

use super::syntax::{CHILDREN_SEPARATOR, LEGEND_TAG, SIBLING_SEPARATOR};
use super::url::relative_to;
use crate::notation::escape::{escape_cell_into, escape_into, escape_link_text_into};
use crate::notation::table_header::{write_option_names, write_table_header, ColumnWords};
use crate::snapshot::marker::ExpandTarget;
use crate::snapshot::render::{push_indent, render_with, table_at, LineWriter, Rendered, Written};
use crate::snapshot::roles;
use crate::snapshot::tree::{Attr, Column, ColumnName, Node, NodeKind, Table, TableDelta, Tree};
use crate::tokens::utf16_len;

const LEGEND_LIGHT: &str = "#snapshot-filter light: uid role \"name\" attrs, | between siblings, children after >; links [name](url); urls relative to the page";
const LEGEND_LOSSY: &str = "#snapshot-filter: uid role \"name\" attrs, | between siblings, children after >; links [name](url); urls relative to the page; hidden: link/image urls, link descriptions, \"…\" lines, cut=N chars (expand_snapshot uid=U)";
const LEGEND_TABLES: &str = "#snapshot-filter: uid role \"name\" attrs, | between siblings, children after >; links [name](url); urls relative to the page; hidden: link/image urls, link descriptions, \"…\" lines, cut=N chars (expand_snapshot uid=U); \"… table\": one line per record below, cells by | as its header says, {name} the record's name";

/// The raw lines of every node, in order: the parser's input, unchanged.
pub fn render_raw(tree: &Tree<'_>) -> String {
    let mut out = String::new();
    let mut first = true;
    for node in &tree.nodes {
        if let Some(raw) = node.raw {
            if !first {
                out.push('\n');
            }
            first = false;
            out.push_str(raw);
        }
    }
    if tree.trailing_newline {
        out.push('\n');
    }
    out
}

/// Whether node `id` is written on the line of its previous sibling: nothing under it, an id
/// to start the segment, and no DevTools suffix (which only ends a line).
fn is_inline_leaf(tree: &Tree<'_>, id: usize) -> bool {
    tree.nodes.get(id).is_some_and(|node| {
        node.kind == NodeKind::Element
            && !node.hidden
            && !node.dropped
            && !node.unchanged
            && !node.uid.is_empty()
            && !node.devtools_selected
    }) && tree.children(id).is_empty()
}

/// Writes the leading run of inline leaves of `items` on the current line, split by `|`.
/// Returns (siblings passed, siblings written): the hidden nodes of condensed records (named by
/// their run's marker) are passed over without ending the line.
fn write_leaf_run(
    out: &mut String,
    tree: &Tree<'_>,
    items: &[usize],
    base: Option<&str>,
) -> (usize, usize) {
    let mut passed = 0;
    let mut written = 0;
    for &i in items {
        let Some(node) = tree.nodes.get(i) else { break };
        if node.hidden && tree.is_condensed_cell(i) {
            passed += 1;
            continue;
        }
        if !is_inline_leaf(tree, i) {
            break;
        }
        if written > 0 {
            out.push(SIBLING_SEPARATOR);
        }
        write_element(out, node, base);
        written += 1;
        passed += 1;
    }
    (passed, written)
}

/// Writes the tree in the light notation, honouring the passes' flags.
pub fn render(tree: &Tree<'_>, lossy: bool) -> Rendered {
    render_from(tree, &tree.roots, None, lossy, tree.trailing_newline)
}

/// Writes the subtrees of `roots` (siblings, in order) alone, in the light notation.
pub fn render_siblings(tree: &Tree<'_>, roots: &[usize], lossy: bool) -> Rendered {
    let Some(&root) = roots.first() else {
        return Rendered::default();
    };
    // Urls stay relative to the page the subtree belongs to.
    let base = std::iter::once(root)
        .chain(tree.ancestors(root))
        .filter_map(|a| tree.nodes.get(a))
        .find(|n| n.role == "RootWebArea")
        .and_then(|n| n.attr("url"))
        .and_then(|a| a.value.as_deref());
    render_from(tree, roots, base, lossy, false)
}

/// Writes the tree as a delta: `first_line` (the delta's header) instead of the legend, which
/// the full snapshot before it carried.
pub fn render_delta(tree: &Tree<'_>, first_line: &str) -> Rendered {
    render_lines(
        tree,
        &tree.roots,
        None,
        first_line,
        16,
        tree.trailing_newline,
    )
}

fn render_from<'t>(
    tree: &'t Tree<'_>,
    roots: &[usize],
    base: Option<&'t str>,
    lossy: bool,
    trailing_newline: bool,
) -> Rendered {
    // The table's sentence only where a table may be written.
    let legend = match (lossy, tree.tables.is_empty()) {
        (false, _) => LEGEND_LIGHT,
        (true, true) => LEGEND_LOSSY,
        (true, false) => LEGEND_TABLES,
    };
    render_lines(
        tree,
        roots,
        base,
        legend,
        if lossy { 16 } else { 48 },
        trailing_newline,
    )
}

fn render_lines<'t>(
    tree: &'t Tree<'_>,
    roots: &[usize],
    base: Option<&'t str>,
    first_line: &str,
    bytes_per_node: usize,
    trailing_newline: bool,
) -> Rendered {
    let mut r = Rendered::default();
    // Room for a typical line per node (fewer lines are written when lossy): few regrowths.
    r.text.reserve(tree.nodes.len() * bytes_per_node);
    r.text.push_str(first_line);
    render_with(tree, roots, base, &mut LightWriter, &mut r);
    if trailing_newline {
        r.text.push('\n');
    }
    r
}

/// At most the UTF-16 units `render(tree, false)` writes of a tree as parsed (no marks: no
/// node is hidden or dropped, no name cut, no table), or `enough` if that is less (it stops
/// counting there). The traversal writes every node it reaches from the roots, and each after
/// a character of its own (a line's newline, the `|` between siblings or the ` > ` before
/// children): an element as `write_element` begins it (its uid, then a link `[name](url)`
/// with a url of a character at least, or its role and `"name"`; a name escaped, which only
/// lengthens it), a line the parser could not read as it was.
pub fn light_units_at_least(tree: &Tree<'_>, enough: usize) -> usize {
    let mut units = 0usize;
    let mut stack: Vec<usize> = tree.roots.iter().rev().copied().collect();
    while let Some(id) = stack.pop() {
        if units >= enough {
            return enough;
        }
        let Some(node) = tree.nodes.get(id) else {
            continue;
        };
        units += 1;
        match node.kind {
            NodeKind::Element => {
                let space = usize::from(!node.uid.is_empty());
                let name = node.name.as_deref().map(utf16_len);
                units += utf16_len(node.uid);
                units += match (node.role, name) {
                    // `[name](url)`; as `link "name"` it is longer.
                    ("link", Some(name)) => space + name + 5,
                    (role, name) => {
                        let role = if role.is_empty() {
                            0
                        } else {
                            space + utf16_len(role)
                        };
                        role + name.map_or(0, |name| name + 3)
                    }
                };
                stack.extend(tree.children(id).iter().rev().copied());
            }
            NodeKind::Verbatim => units += node.raw.map_or(0, utf16_len),
            NodeKind::Marker => {}
        }
    }
    units.min(enough)
}

/// The light notation's lines, each after a newline (the legend is the first line). The
/// scope is the page url (of the nearest `RootWebArea`) that urls are written relative to.
struct LightWriter;

impl<'t> LineWriter<'t> for LightWriter {
    type Scope = Option<&'t str>;

    fn marker(&mut self, out: &mut String, depth: usize, text: &str) {
        out.push('\n');
        push_indent(out, depth);
        out.push_str(text);
    }

    fn verbatim(&mut self, out: &mut String, raw: &str) {
        out.push('\n');
        write_verbatim(out, raw);
    }

    fn writes_tables(&self) -> bool {
        true
    }

    fn table(
        &mut self,
        out: &mut String,
        tree: &'t Tree<'_>,
        table: &Table<'_>,
        rows: usize,
        depth: usize,
        base: Option<&'t str>,
        expand: ExpandTarget<'_>,
    ) -> usize {
        let mut lines = String::new();
        let shown = write_table_lines(&mut lines, tree, table, rows, base, expand);
        for line in lines.lines() {
            out.push('\n');
            push_indent(out, depth);
            out.push_str(line);
        }
        shown
    }

    fn table_delta(
        &mut self,
        out: &mut String,
        tree: &'t Tree<'_>,
        table: &Table<'_>,
        delta: &TableDelta,
        depth: usize,
        base: Option<&'t str>,
        expand: ExpandTarget<'_>,
    ) -> usize {
        let mut lines = String::new();
        let shown = write_table_delta_lines(&mut lines, tree, table, delta, base, expand);
        for line in lines.lines() {
            out.push('\n');
            push_indent(out, depth);
            out.push_str(line);
        }
        shown
    }

    fn element(
        &mut self,
        out: &mut String,
        tree: &'t Tree<'_>,
        items: &[usize],
        depth: usize,
        base: Option<&'t str>,
        children: &[usize],
    ) -> Written<Option<&'t str>> {
        let mut written = Written {
            siblings: 1,
            uids_shown: 0,
            children: None,
        };
        let Some((&id, node)) = items.first().and_then(|i| Some((i, tree.nodes.get(*i)?))) else {
            return written;
        };
        out.push('\n');
        push_indent(out, depth);
        if depth > 0 && is_inline_leaf(tree, id) {
            // Siblings without children share one line: a newline and an indent less each.
            let (passed, n) = write_leaf_run(out, tree, items, base);
            written.siblings = passed;
            written.uids_shown = n;
            return written;
        }
        write_element(out, node, base);
        if !node.uid.is_empty() {
            written.uids_shown += 1;
        }
        if tree.children(id).is_empty() {
            return written;
        }
        let base = if node.role == "RootWebArea" {
            node.attr("url").and_then(|a| a.value.as_deref())
        } else {
            base
        };
        // Children that are all childless go on the node's own line: a line (newline and
        // indent) less. Not for roots, whose frame writes the marker of their dropped nodes,
        // nor after the DevTools suffix, which ends a line.
        let leaves = depth > 0
            && !node.devtools_selected
            && !children.is_empty()
            && children
                .iter()
                .all(|&i| is_inline_leaf(tree, i) && table_at(tree, i).is_none());
        if leaves {
            out.push_str(CHILDREN_SEPARATOR);
            written.uids_shown += write_leaf_run(out, tree, children, base).1;
        } else {
            written.children = Some(base);
        }
        written
    }
}

/// Unreadable lines stay as they are, behind a `\` when they could pass for structure.
fn write_verbatim(out: &mut String, raw: &str) {
    let rest = raw.trim_start_matches(' ');
    let looks_structural = rest.starts_with(|c: char| c.is_ascii_digit() || c == '\\')
        || rest.starts_with('…')
        || raw.starts_with(LEGEND_TAG);
    if looks_structural {
        out.push('\\');
    }
    out.push_str(raw);
}

fn write_element(out: &mut String, node: &Node<'_>, base: Option<&str>) {
    out.push_str(node.uid);
    let link_url = link_url(node, base);
    if let Some(url) = &link_url {
        // A link as markdown writes it: `[name](url)`, what models read best, in fewer tokens
        // than `link "name" url=…`.
        if !node.uid.is_empty() {
            out.push(' ');
        }
        out.push('[');
        write_cut(out, node.name_str(), node.keep_chars, escape_link_text_into);
        out.push_str("](");
        out.push_str(url);
        out.push(')');
    } else if !node.role.is_empty() {
        if !node.uid.is_empty() {
            out.push(' ');
        }
        out.push_str(node.role);
    } else if node.name.is_none()
        && !node.attrs.is_empty()
        && node.attrs.iter().all(|a| super::parse::is_key(a.key))
    {
        // A text node without a name: an empty one, or its first attribute reads as a role.
        out.push_str(" \"\"");
    }
    if let (Some(name), None) = (&node.name, &link_url) {
        out.push_str(" \"");
        write_cut(out, name, node.keep_chars, escape_into);
        out.push('"');
    }
    let mut cut_total = node.keep_chars.map(|keep| {
        node.name
            .as_deref()
            .map_or(0, |n| n.chars().count().saturating_sub(keep))
    });
    for attr in &node.attrs {
        if roles::is_stateless_capability(node, attr.key)
            || node.drops_attr(attr.key)
            || (attr.key == "url" && link_url.is_some())
        {
            continue;
        }
        if attr.key == "cut" {
            // An earlier cut: add its count to this one.
            let earlier = attr
                .value
                .as_deref()
                .and_then(|v| v.parse::<usize>().ok())
                .unwrap_or(0);
            if let Some(total) = cut_total.as_mut() {
                *total += earlier;
                continue;
            }
        }
        out.push(' ');
        out.push_str(attr.key);
        if let Some(value) = &attr.value {
            out.push('=');
            let relative = match (attr.key, base) {
                ("url", Some(base)) if node.role != "RootWebArea" => relative_to(value, base),
                _ => None,
            };
            write_value(out, relative.as_deref().unwrap_or(value));
        }
    }
    if let Some(total) = cut_total {
        out.push_str(" cut=");
        out.push_str(&total.to_string());
    }
    if node.devtools_selected {
        out.push_str(super::parse::DEVTOOLS_SELECTED);
    }
}

/// The name of a node, cut to `keep` characters (then `…`) when a pass said so.
fn write_cut(out: &mut String, name: &str, keep: Option<usize>, escape: fn(&mut String, &str)) {
    match keep {
        Some(keep) => {
            let cut_at = name.char_indices().nth(keep).map_or(name.len(), |(i, _)| i);
            escape(out, name.get(..cut_at).unwrap_or(""));
            out.push('…');
        }
        None => escape(out, name),
    }
}

/// A text cell of a table row: its text, cut when a pass cut it, escaped for a cell.
fn write_cell_text(out: &mut String, text: &str, keep: Option<usize>) {
    write_cut(out, text, keep, escape_cell_into);
}

/// The url a link is written with as `[name](url)` (relative to the page when it can be), or
/// `None` to write it as `link "name" url=…`: when it has no url, a pass hid it, it holds what
/// would end it early or be misread (a space, a quote, a backslash, a `|`, unbalanced
/// parentheses), or it has no name (`[]` would read back as an empty name).
fn link_url<'n>(node: &'n Node<'_>, base: Option<&str>) -> Option<Cow<'n, str>> {
    if node.role != "link" || node.drop_url || node.name.is_none() {
        return None;
    }
    let value = node.attr("url")?.value.as_deref()?;
    let url = match base.and_then(|base| relative_to(value, base)) {
        Some(relative) => Cow::Owned(relative),
        None => Cow::Borrowed(value),
    };
    let mut open = 0usize;
    for b in url.bytes() {
        match b {
            b'(' => open += 1,
            b')' => open = open.checked_sub(1)?,
            b' ' | b'"' | b'\\' | b'|' | b'\n' | b'\r' | b'\t' => return None,
            _ => {}
        }
    }
    (open == 0 && !url.is_empty()).then_some(url)
}

/// Whether `write_value` writes `value` bare: nothing in it could end it early or be misread
/// (a space, a quote, a backslash, a line break, the sibling separator).
fn is_bare_value(value: &str) -> bool {
    !value.is_empty()
        && !value
            .bytes()
            .any(|b| matches!(b, b' ' | b'"' | b'\\' | b'\n' | b'\r' | b'|'))
}

/// An attribute value, bare when it can be (`is_bare_value`), else quoted and escaped.
fn write_value(out: &mut String, value: &str) {
    if is_bare_value(value) {
        out.push_str(value);
    } else {
        out.push('"');
        escape_into(out, value);
        out.push('"');
    }
}

/// The light line of one node (urls relative to its page), for search hits.
pub fn write_element_line(out: &mut String, tree: &Tree<'_>, id: usize) {
    let Some(node) = tree.nodes.get(id) else {
        return;
    };
    let base = tree
        .ancestors(id)
        .filter_map(|a| tree.nodes.get(a))
        .find(|n| n.role == "RootWebArea")
        .and_then(|n| n.attr("url"))
        .and_then(|a| a.value.as_deref());
    write_element(out, node, base);
}

/// The light notation's words in a table header: names escaped then cut, ` key=value`
/// attributes, ` value=*` and the options with the uids they take.
struct LightColumns;

impl ColumnWords for LightColumns {
    fn write_name(&self, out: &mut String, name: &str, keep: Option<usize>) {
        write_cut(out, name, keep, escape_into);
    }

    fn write_fixed_attr(&self, out: &mut String, _head: &Node<'_>, attr: &Attr<'_>) {
        out.push(' ');
        out.push_str(attr.key);
        if let Some(value) = &attr.value {
            out.push('=');
            write_value(out, value);
        }
    }

    fn write_column_end(&self, out: &mut String, col: &Column<'_>, _c: usize) {
        if col.value {
            out.push_str(" value=*");
        }
        if !col.options.is_empty() {
            write_option_names(out, &col.options);
            out.push_str(": its next ");
            out.push_str(&col.options.len().to_string());
            out.push_str(" uids]");
        }
    }
}

/// One cell of a table row: a control's uid, the name when the header does not give it
/// (quoted; bare for a text cell), the attributes not in the header. Returns the uids written.
fn write_cell(
    out: &mut String,
    node: &Node<'_>,
    col: &Column<'_>,
    base: Option<&str>,
    key: &str,
) -> usize {
    let own_name = match &col.name {
        ColumnName::Key | ColumnName::Varies => true,
        // Written when the pattern does not give it back.
        ColumnName::Around(pre, suf) => {
            node.keep_chars.is_some()
                || node.name_str().len() != pre.len() + key.len() + suf.len()
                || !node.name_str().starts_with(pre.as_str())
                || !node.name_str().ends_with(suf.as_str())
                || node.name_str().get(pre.len()..pre.len() + key.len()) != Some(key)
        }
        ColumnName::None | ColumnName::Fixed => false,
    };
    // Under `value=*` a quoted value right after the uid would read as the cell's name (a
    // textbox "Pro plan" holding "required" and a required one holding "Pro plan" both
    // `"Pro plan" required`): a row whose value is quoted writes the name before it.
    let value = col
        .value
        .then(|| node.attr("value").and_then(|a| a.value.as_deref()))
        .flatten();
    let own_name = own_name || value.is_some_and(|v| !is_bare_value(v));
    if col.role.is_empty() {
        if own_name {
            write_cell_text(out, node.name_str(), node.keep_chars);
        }
        return 0;
    }
    let mut written = 0;
    let mut space = "";
    if col.uid {
        out.push_str(node.uid);
        written = 1;
        space = " ";
    }
    if own_name {
        out.push_str(space);
        out.push('"');
        write_cut(out, node.name_str(), node.keep_chars, escape_into);
        out.push('"');
        space = " ";
    }
    if let Some(value) = value {
        out.push_str(space);
        space = " ";
        write_value(out, value);
    }
    for attr in &node.attrs {
        if col.fixed.contains(&attr.key)
            || (col.value && attr.key == "value")
            || roles::is_stateless_capability(node, attr.key)
            || node.drops_attr(attr.key)
        {
            continue;
        }
        out.push_str(space);
        space = " ";
        out.push_str(attr.key);
        if let Some(value) = &attr.value {
            out.push('=');
            let relative = match (attr.key, base) {
                ("url", Some(base)) => relative_to(value, base),
                _ => None,
            };
            write_value(out, relative.as_deref().unwrap_or(value));
        }
    }
    if let (Some(keep), true) = (node.keep_chars, own_name) {
        let cut = node.name_str().chars().count().saturating_sub(keep);
        out.push_str(" cut=");
        out.push_str(&cut.to_string());
    }
    written
}

/// A table's lines without indent, split by `\n`: the header (a marker line), then one line per
/// record. Returns the uids the rows write. (Playwright writes its own rows, each a YAML item,
/// under the same header writer: `notation::table_header`.)
fn write_table_lines(
    out: &mut String,
    tree: &Tree<'_>,
    table: &Table<'_>,
    rows: usize,
    base: Option<&str>,
    expand: ExpandTarget<'_>,
) -> usize {
    write_header(out, tree, table, rows, expand);
    let mut shown = 0;
    let mut key = String::new();
    for r in 0..rows {
        out.push('\n');
        shown += write_table_row(out, tree, table, r, base, &mut key);
    }
    shown
}

/// A table of a delta, lines without indent as `write_table_lines`: the header, then each row
/// `delta` does not put in a run, and each run's line. Returns the uids the rows write.
fn write_table_delta_lines(
    out: &mut String,
    tree: &Tree<'_>,
    table: &Table<'_>,
    delta: &TableDelta,
    base: Option<&str>,
    expand: ExpandTarget<'_>,
) -> usize {
    write_header(out, tree, table, delta.rows, expand);
    let mut shown = 0;
    let mut key = String::new();
    let mut r = 0;
    while r < delta.rows {
        out.push('\n');
        if let Some((len, line)) = delta.runs.get(&r) {
            out.push_str(line);
            r += (*len).max(1);
            continue;
        }
        shown += write_table_row(out, tree, table, r, base, &mut key);
        r += 1;
    }
    shown
}

/// A table's header line (a marker line: the columns, the uids of its first `rows` records and
/// the call that expands them).
fn write_header(
    out: &mut String,
    tree: &Tree<'_>,
    table: &Table<'_>,
    rows: usize,
    expand: ExpandTarget<'_>,
) {
    let items = table.items.get(..rows * table.columns.len()).unwrap_or(&[]);
    write_table_header(out, tree, table, rows, items, expand, &LightColumns);
}

/// Record `r`'s line (`key`: scratch for the record's name). Returns the uids it writes.
fn write_table_row(
    out: &mut String,
    tree: &Tree<'_>,
    table: &Table<'_>,
    r: usize,
    base: Option<&str>,
    key: &mut String,
) -> usize {
    let key_column = table.columns.iter().position(|c| c.name == ColumnName::Key);
    let record = table.record(r);
    // The record's name as the row writes it (cut, when cut): what `{name}` stands for.
    key.clear();
    if let Some(k) = key_column
        .and_then(|c| record.get(c))
        .and_then(|&i| tree.nodes.get(i))
    {
        write_cut(key, k.name_str(), k.keep_chars, |o, s| o.push_str(s));
    }
    let mut shown = 0;
    let mut sep = "";
    for (col, &id) in table.columns.iter().zip(record) {
        let Some(node) = tree.nodes.get(id) else {
            continue;
        };
        if !col.shown {
            continue;
        }
        out.push_str(sep);
        sep = "|";
        shown += write_cell(out, node, col, base, key);
    }
    shown
}
