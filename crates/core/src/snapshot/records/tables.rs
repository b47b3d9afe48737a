//! Runs of records written as a table: their columns, the options a cell states in its header,
//! and which runs make tables.

use std::collections::HashSet;
use std::hash::BuildHasherDefault;

use super::period::{Role, RoleCode, Shape, MIN_RECORDS};
use crate::snapshot::roles;
use crate::snapshot::tree::{Column, ColumnName, NodeKind, Table, Tree, UidHasher};

/// The number after a uid's last `_` (`1_75` → (`1`, 75)).
fn uid_number(uid: &str) -> Option<(&str, u64)> {
    let (prefix, n) = uid.rsplit_once('_')?;
    Some((prefix, n.parse().ok()?))
}

/// The options of a combobox or listbox cell when a table can state them in its header: leaf
/// options whose uids are the ones right after the cell's, and whose selected one (if any) is
/// the one the cell's value names; or options that have no uid at all (Playwright's), at most
/// one selected (the row names it). `Some(vec![])` for a cell without children.
pub(in crate::snapshot) fn cell_options<'t>(tree: &'t Tree<'_>, id: usize) -> Option<Vec<&'t str>> {
    let node = tree.nodes.get(id)?;
    let children = tree.children(id);
    if children.is_empty() {
        return Some(Vec::new());
    }
    if !matches!(node.role, "combobox" | "listbox") {
        // An image or text inside a link or button repeats or decorates it: not written.
        let decor = children.iter().all(|&c| {
            tree.nodes.get(c).is_some_and(|n| {
                n.kind == NodeKind::Element
                    && tree.children(c).is_empty()
                    && (n.role.is_empty() || roles::is_image(n.role))
            })
        });
        return decor.then(Vec::new);
    }
    let refless = children
        .iter()
        .all(|&c| tree.nodes.get(c).is_some_and(|o| o.uid.is_empty()));
    let (prefix, n) = if refless {
        ("", 0)
    } else {
        uid_number(node.uid)?
    };
    let value = node.attr("value").and_then(|a| a.value.as_deref());
    let mut names = Vec::new();
    let mut selected_count = 0;
    for (k, &c) in children.iter().enumerate() {
        let o = tree.nodes.get(c)?;
        let name = o.name.as_deref()?;
        let selected = o.has_attr("selected");
        let plain = o
            .attrs
            .iter()
            .all(|a| a.key == "selected" || roles::is_stateless_capability(o, a.key));
        if o.kind != NodeKind::Element
            || o.role != "option"
            || !tree.children(c).is_empty()
            || o.dropped
            || !plain
            || (!refless
                && (uid_number(o.uid)? != (prefix, n + 1 + k as u64)
                    || selected != (value == Some(name))))
        {
            return None;
        }
        selected_count += usize::from(selected);
        names.push(name);
    }
    (selected_count <= 1).then_some(names)
}

/// Whether a sibling can be one cell of a table row: visible, and (what `tables_of` asks
/// besides, reading them once) nothing under it but options the header can state
/// (`cell_options`).
fn tabular_node(tree: &Tree<'_>, id: usize) -> bool {
    tree.nodes.get(id).is_some_and(|n| {
        n.kind == NodeKind::Element && !n.hidden && !n.dropped && !n.devtools_selected
    })
}

/// The attributes a cell writes (what the line writers write of it: no stateless capability,
/// no url a pass dropped), as (key, value).
fn cell_attrs<'n, 'a: 'n>(
    node: &'n crate::snapshot::tree::Node<'a>,
) -> impl Iterator<Item = (&'a str, Option<&'n str>)> + 'n {
    node.attrs
        .iter()
        .filter(|a| !(roles::is_stateless_capability(node, a.key) || node.drops_attr(a.key)))
        .map(|a| (a.key, a.value.as_deref()))
}

/// The columns of a table over `records` (cell ids, one slice per record, all of one shape),
/// texts limited to `max_text` characters per record. Text cells are role-less nodes; with
/// `nested` (records that are nodes of their own, `nested::collapse_nested`) also every cell
/// without a uid written (a Playwright `cell "1000"`).
pub(in crate::snapshot) fn table_columns<'a>(
    tree: &Tree<'a>,
    records: &[&[usize]],
    max_text: usize,
    nested: bool,
) -> Vec<Column<'a>> {
    let node = |id: usize| tree.nodes.get(id);
    let Some(first) = records.first() else {
        return Vec::new();
    };
    let width = first.len();
    // Each column's names, read once: the search for the key below compares every column
    // with every other.
    let by_column: Vec<Vec<&str>> = (0..width)
        .map(|c| {
            records
                .iter()
                .map(|r| r.get(c).and_then(|&i| node(i)).map_or("", |n| n.name_str()))
                .collect()
        })
        .collect();
    let names = |c: usize| by_column.get(c).map_or(&[][..], Vec::as_slice);
    // The record's name: the column whose names vary and make the most other columns'
    // names (`Edit Ava Hernandez`), a link first on ties. A column takes the pattern its
    // first record shows when at least half the records follow it; a row whose name does not
    // follow it writes its own.
    let around = |c: usize, key: &[&str]| -> Option<(&str, &str)> {
        let col = names(c);
        let (k0, n0) = (key.first()?, col.first()?);
        if k0.is_empty() {
            return None;
        }
        let at = n0.find(k0)?;
        let (pre, suf) = (n0.get(..at)?, n0.get(at + k0.len()..)?);
        let follow = |n: &str, k: &str| {
            !k.is_empty()
                && n.len() == pre.len() + k.len() + suf.len()
                && n.starts_with(pre)
                && n.ends_with(suf)
                && n.get(pre.len()..n.len() - suf.len()) == Some(k)
        };
        // Counted until half the records follow or cannot any more: the search for the key
        // asks this of every pair of columns.
        let (mut follows, mut left) = (0usize, col.len().min(key.len()));
        for (n, k) in col.iter().zip(key) {
            if follows * 2 >= col.len() || (follows + left) * 2 < col.len() {
                break;
            }
            left -= 1;
            follows += usize::from(follow(n, k));
        }
        (follows * 2 >= col.len()).then_some((pre, suf))
    };
    let varying: Vec<bool> = (0..width)
        .map(|c| {
            let col = names(c);
            col.iter().all(|n| !n.is_empty()) && col.iter().any(|n| Some(n) != col.first())
        })
        .collect();
    let varies = |c: usize| varying.get(c).copied().unwrap_or(false);
    let mut key: Option<(usize, usize)> = None;
    for c in (0..width).filter(|&c| varies(c)) {
        let k = names(c);
        let made = (0..width)
            .filter(|&j| j != c && varies(j) && around(j, k).is_some())
            .count();
        let link = first
            .get(c)
            .and_then(|&i| node(i))
            .is_some_and(|n| n.role == "link");
        let better = match key {
            None => true,
            Some((best, made_best)) => {
                made > made_best
                    || (made == made_best
                        && link
                        && first
                            .get(best)
                            .and_then(|&i| node(i))
                            .is_some_and(|n| n.role != "link"))
            }
        };
        if better {
            key = Some((c, made));
        }
    }
    let key_names = key.map(|(c, _)| names(c));
    let mut columns: Vec<Column<'a>> = (0..width)
        .map(|c| {
            let cells: Vec<&crate::snapshot::tree::Node<'a>> = records
                .iter()
                .filter_map(|r| r.get(c).and_then(|&i| node(i)))
                .collect();
            let col = names(c);
            let name = if cells.iter().all(|n| n.name.is_none()) {
                ColumnName::None
            } else if cells.iter().all(|n| n.name.is_some())
                && col.iter().all(|n| Some(n) == col.first())
            {
                ColumnName::Fixed
            } else if key.is_some_and(|(k, _)| k == c) {
                ColumnName::Key
            } else if let Some((pre, suf)) = key_names.and_then(|k| around(c, k)) {
                ColumnName::Around(pre.to_string(), suf.to_string())
            } else {
                ColumnName::Varies
            };
            let head = cells.first();
            let fixed: Vec<&str> = head
                .map(|h| {
                    cell_attrs(h)
                        .filter(|attr| cells.iter().all(|n| cell_attrs(n).any(|a| a == *attr)))
                        .map(|(k, _)| k)
                        .collect()
                })
                .unwrap_or_default();
            let options = first
                .get(c)
                .and_then(|&i| cell_options(tree, i))
                .unwrap_or_default()
                .into_iter()
                .map(str::to_string)
                .collect();
            let values: Vec<Option<&str>> = cells
                .iter()
                .map(|n| n.attr("value").and_then(|a| a.value.as_deref()))
                .collect();
            let value = values.iter().all(Option::is_some) && !fixed.contains(&"value");
            Column {
                value,
                role: head.map_or("", |h| h.role),
                name,
                fixed,
                options,
                uid: cells
                    .iter()
                    .all(|n| roles::is_interactive(n) && !n.uid.is_empty()),
                shown: true,
            }
        })
        .collect();
    // A header names a column `"Edit {name}"` with the placeholder: page text holding
    // `{name}` itself (a button labelled `{name}`, or `Edit {name} Ava`) would read as more
    // placeholders there, so such a column's rows write their own names.
    for (c, col) in columns.iter_mut().enumerate() {
        let literal = match &col.name {
            ColumnName::Fixed => names(c).first().is_some_and(|n| n.contains(PLACEHOLDER)),
            ColumnName::Around(pre, suf) => pre.contains(PLACEHOLDER) || suf.contains(PLACEHOLDER),
            _ => false,
        };
        if literal {
            col.name = ColumnName::Varies;
        }
    }
    // Readers take the first `{name}` column for the record's name: one that only repeats it
    // (`Around("", "")`) before the key writes its names.
    if let Some((k, _)) = key {
        for col in columns.iter_mut().take(k) {
            if matches!(&col.name, ColumnName::Around(p, s) if p.is_empty() && s.is_empty()) {
                col.name = ColumnName::Varies;
            }
        }
    }
    // Text cells within the budget, what says most per character first: a column of few
    // values (a status, a plan) or of short ones (an id) before unique long ones (an email, a
    // blurb), which repeat what the record's name says or what an agent needs least.
    let mut texts: Vec<(usize, usize, usize)> = columns
        .iter()
        .enumerate()
        .filter(|(_, col)| {
            (col.role.is_empty() || nested && !col.uid) && matches!(col.name, ColumnName::Varies)
        })
        .map(|(c, _)| {
            let col = names(c);
            let chars = col.iter().map(|n| n.chars().count()).sum::<usize>() / col.len().max(1);
            // Counted in a set, not by sorting the names (comparing each many times).
            let distinct: HashSet<&str, BuildHasherDefault<UidHasher>> =
                col.iter().copied().collect();
            (chars * distinct.len() / col.len().max(1), chars, c)
        })
        .collect();
    texts.sort_unstable();
    let mut used = 0usize;
    for &(_, chars, c) in &texts {
        used = used.saturating_add(chars);
        if used > max_text {
            if let Some(col) = columns.get_mut(c) {
                col.shown = false;
            }
        }
    }
    tell_rows_apart(
        tree,
        records,
        &mut columns,
        texts.iter().map(|&(_, _, c)| c),
    );
    columns
}

/// Rows that read alike in what the table writes (two people of one name, `Alan Hamilton |
/// Member | Invited` twice) leave an agent told "edit the row of alan.h@…" no way to choose
/// between their controls: hidden text columns are shown again, in the budget's order, each
/// one that tells more rows apart, until no two rows read alike or none is left.
fn tell_rows_apart(
    tree: &Tree<'_>,
    records: &[&[usize]],
    columns: &mut [Column<'_>],
    hidden_in_order: impl Iterator<Item = usize>,
) {
    let cell = |r: &[usize], c: usize| -> (&str, &str) {
        r.get(c)
            .and_then(|&i| tree.nodes.get(i))
            .map_or(("", ""), |n| {
                let value = n.attr("value").and_then(|a| a.value.as_deref());
                (n.name_str(), value.unwrap_or(""))
            })
    };
    // Rows alike under the shown columns plus `extra`: pairs counted through a sorted key list.
    let alike = |columns: &[Column<'_>], extra: Option<usize>| -> usize {
        let mut keys: Vec<Vec<(&str, &str)>> = records
            .iter()
            .map(|r| {
                (0..columns.len())
                    .filter(|&c| columns.get(c).is_some_and(|col| col.shown) || extra == Some(c))
                    .map(|c| cell(r, c))
                    .collect()
            })
            .collect();
        keys.sort_unstable();
        keys.windows(2).filter(|w| w[0] == w[1]).count()
    };
    let mut now = alike(columns, None);
    for c in hidden_in_order {
        if now == 0 {
            break;
        }
        if columns.get(c).is_some_and(|col| col.shown) {
            continue;
        }
        let with = alike(columns, Some(c));
        if with < now {
            if let Some(col) = columns.get_mut(c) {
                col.shown = true;
            }
            now = with;
        }
    }
}

/// The tables of one run of records (`records`, sibling slices): the longest stretches of at
/// least `MIN_RECORDS` records of the first record's exact shape whose every sibling is a cell
/// (`tabular_node`, with options), and whose options agree. Records between them stay nodes.
/// `shapes` are the records' shapes (`shape_of`, coded), one slice per record.
pub(super) fn tables_of<'a>(
    tree: &Tree<'a>,
    records: &[&[usize]],
    shapes: &[&[Shape<RoleCode>]],
    max_text: usize,
) -> Vec<Table<'a>> {
    let role = |i: usize| tree.nodes.get(i).map(|n| n.role);
    let shape = |r: usize, c: usize| shapes.get(r).and_then(|s| s.get(c)).copied().flatten();
    // Whether cell `c` of record `r` has the role of the head's (record `k`): by the codes of
    // their shapes, not by the role strings, which lie in the text far from the nodes. One
    // code stands for role-less text and the role `text`, which differ in length.
    let same_role =
        |r: usize, k: usize, c: usize, i: usize, h: usize| match (shape(r, c), shape(k, c)) {
            (Some(a), Some(b)) if a != b => false,
            (Some(a), Some(_)) if !a.is_text() => true,
            (Some(_), Some(_)) => role(i).map(str::len) == role(h).map(str::len),
            _ => role(i) == role(h),
        };
    let mut head_options = Vec::new();
    let mut out = Vec::new();
    let mut k = 0;
    while k < records.len() {
        let Some(&head) = records.get(k) else { break };
        // The head's options once, not once per record compared with it.
        head_options.clear();
        head_options.extend(head.iter().map(|&i| cell_options(tree, i)));
        // Cell by cell: a table's cell (`tabular_node`, with options), of the head cell's role
        // and options.
        let fits = |at: usize, r: &[usize]| {
            r.len() == head.len()
                && r.iter().zip(head).zip(&head_options).enumerate().all(
                    |(c, ((&i, &h), options))| {
                        tabular_node(tree, i) && same_role(at, k, c, i, h) && {
                            let mine = cell_options(tree, i);
                            mine.is_some() && mine == *options
                        }
                    },
                )
        };
        if !fits(k, head) {
            k += 1;
            continue;
        }
        let mut end = k + 1;
        while records.get(end).is_some_and(|r| fits(end, r)) {
            end += 1;
        }
        if end - k >= MIN_RECORDS {
            let stretch = records.get(k..end).unwrap_or(&[]);
            out.push(Table {
                items: stretch.iter().flat_map(|r| r.iter().copied()).collect(),
                columns: table_columns(tree, stretch, max_text, false),
                record_nodes: Vec::new(),
            });
        }
        k = end;
    }
    out
}

/// What a table's header writes for the record's name in a column's pattern.
pub const PLACEHOLDER: &str = "{name}";
