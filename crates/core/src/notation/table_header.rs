//! The header line of a table of records, one writer for both notations: `… table of N records,
//! a line each: ` then each shown column (its role, `text` for text cells; its name: fixed,
//! `"{name}"` for the record's, or `"Edit {name}"` inside fixed words; the attributes every
//! record has alike; what each row adds), the count of text columns not written, and the uids
//! the records hold with the call that expands them. Each notation gives its own words for
//! names, attributes and a column's end (`ColumnWords`); the rows stay each notation's own.

use super::escape::escape_into;
use crate::snapshot::marker::{write_table_uids, ExpandTarget};
use crate::snapshot::tree::{Attr, Column, ColumnName, Node, Table, Tree};

/// How a notation writes the parts of a header column that differ between notations.
pub trait ColumnWords {
    /// A name between the quotes, cut to `keep` characters (then `…`) when a pass cut it.
    fn write_name(&self, out: &mut String, name: &str, keep: Option<usize>);
    /// An attribute every record's cell has alike (`head`'s), with its leading space, or
    /// nothing when the notation does not write it.
    fn write_fixed_attr(&self, out: &mut String, head: &Node<'_>, attr: &Attr<'_>);
    /// What closes column `c` (its index in `table.columns`): what each row writes besides the
    /// name (uid, value, selected option) and the options.
    fn write_column_end(&self, out: &mut String, col: &Column<'_>, c: usize);
}

/// Writes the header line of the first `rows` records of `table` (no indent, no line break);
/// `items`: the nodes whose uids it lists.
pub fn write_table_header(
    out: &mut String,
    tree: &Tree<'_>,
    table: &Table<'_>,
    rows: usize,
    items: &[usize],
    expand: ExpandTarget<'_>,
    words: &impl ColumnWords,
) {
    out.push_str("… table of ");
    out.push_str(&rows.to_string());
    out.push_str(" records, a line each: ");
    let mut sep = "";
    let mut unwritten = 0;
    for (c, (col, &id)) in table.columns.iter().zip(table.record(0)).enumerate() {
        if !col.shown {
            unwritten += 1;
            continue;
        }
        out.push_str(sep);
        sep = " | ";
        write_column(out, tree.nodes.get(id), col, c, words);
    }
    if unwritten > 0 {
        out.push_str("; ");
        out.push_str(&unwritten.to_string());
        out.push_str(" text cells each not written");
    }
    write_table_uids(out, tree, items, expand);
}

/// Column `c` of the header, `head` its cell in the first record.
fn write_column(
    out: &mut String,
    head: Option<&Node<'_>>,
    col: &Column<'_>,
    c: usize,
    words: &impl ColumnWords,
) {
    out.push_str(if col.role.is_empty() {
        "text"
    } else {
        col.role
    });
    let Some(head) = head else { return };
    match &col.name {
        ColumnName::Fixed => {
            out.push_str(" \"");
            words.write_name(out, head.name_str(), head.keep_chars);
            out.push('"');
        }
        ColumnName::Key => out.push_str(" \"{name}\""),
        ColumnName::Around(pre, suf) => {
            out.push_str(" \"");
            escape_into(out, pre);
            out.push_str("{name}");
            escape_into(out, suf);
            out.push('"');
        }
        ColumnName::None | ColumnName::Varies => {}
    }
    for key in &col.fixed {
        if let Some(attr) = head.attr(key) {
            words.write_fixed_attr(out, head, attr);
        }
    }
    words.write_column_end(out, col, c);
}

/// The start of a column's options, ` [options "Free" "Pro"`, left open for the notation to
/// close.
pub fn write_option_names(out: &mut String, options: &[String]) {
    out.push_str(" [options");
    for name in options {
        out.push_str(" \"");
        escape_into(out, name);
        out.push('"');
    }
}
