//! Getting back what a lossy level hid, from the raw (unfiltered) snapshot text:
//! `expand_subtree` renders the subtree under a uid at `light` (lossless), `expand_range` a run
//! of siblings (what one marker hid), `search_snapshot`
//! finds the nodes whose role, name or attributes match, best first (name or text, then role or
//! attributes, urls last), with where they matched and the path of their ancestors.
//! Each takes the [`Notation`] the raw text is in (the caller picks it; refs are uids).

use regex::{Regex, RegexBuilder};

use super::roles;
use super::tree::{Node, NodeKind, Tree};
use super::Notation;
use crate::error::FilterError;

/// Characters of an ancestor's name shown in a search hit's path.
const PATH_NAME_CHARS: usize = 40;
/// A compiled regex may use this much memory at most (a hostile pattern fails cleanly).
const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// The subtree under `uid`, rendered at `light`; with `depth`, nodes more than `depth` levels
/// below `uid` hide behind markers (which name what they hide, as in the lossy levels).
pub fn expand_subtree(
    notation: &dyn Notation,
    raw: &str,
    uid: &str,
    depth: Option<usize>,
) -> Result<String, FilterError> {
    expand_range(notation, raw, uid, None, depth)
}

/// The run of siblings from `from_uid` to `until_uid` (inclusive, in document order) with
/// their subtrees, rendered at `light`; without `until_uid`, the subtree of `from_uid` alone.
/// `depth` as in `expand_subtree`, counted from each sibling.
pub fn expand_range(
    notation: &dyn Notation,
    raw: &str,
    from_uid: &str,
    until_uid: Option<&str>,
    depth: Option<usize>,
) -> Result<String, FilterError> {
    let mut implied = Vec::new();
    let mut tree = notation.parse(raw, &mut implied);
    let roots = match until_uid.filter(|u| *u != from_uid) {
        None => vec![tree
            .find_uid(from_uid)
            .ok_or_else(|| unknown_uid(from_uid))?],
        Some(until_uid) => match sibling_range(&tree, from_uid, until_uid) {
            Some(run) => run,
            None => {
                tree.find_uid(from_uid)
                    .ok_or_else(|| unknown_uid(from_uid))?;
                tree.find_uid(until_uid)
                    .ok_or_else(|| unknown_uid(until_uid))?;
                return Err(FilterError::NotALaterSibling {
                    uid: from_uid.to_string(),
                    until: until_uid.to_string(),
                });
            }
        },
    };
    if let Some(max) = depth {
        // Markers will name what the depth hides: they need to know which uids repeat.
        tree.index_uids();
        let mut below: Vec<(usize, usize)> = roots.iter().map(|&r| (r, 0)).collect();
        while let Some((id, d)) = below.pop() {
            // The lists and the nodes are borrowed apart: the children are hidden as read.
            for &c in tree.child_lists.of(id) {
                if d + 1 > max {
                    if let Some(node) = tree.nodes.get_mut(c) {
                        node.hidden = true;
                    }
                } else {
                    below.push((c, d + 1));
                }
            }
        }
    }
    Ok(notation.render_siblings(&tree, &roots, depth.is_some()))
}

/// The siblings from a node with uid `from_uid` to the first later sibling with uid
/// `until_uid`, inclusive (upstream repeats a uid at times: the first such pair wins).
pub fn sibling_range(tree: &Tree<'_>, from_uid: &str, until_uid: &str) -> Option<Vec<usize>> {
    tree.nodes.iter().enumerate().find_map(|(id, node)| {
        if node.kind != NodeKind::Element || node.uid != from_uid {
            return None;
        }
        let siblings = tree.siblings_under(node.parent);
        let a = siblings.iter().position(|&s| s == id)?;
        let rest = siblings.get(a..)?;
        let b = rest.iter().position(|&s| {
            tree.nodes
                .get(s)
                .is_some_and(|n| n.kind == NodeKind::Element && n.uid == until_uid)
        })?;
        rest.get(..=b).map(<[usize]>::to_vec)
    })
}

fn unknown_uid(uid: &str) -> FilterError {
    FilterError::UnknownUid(uid.to_string())
}

/// Where a search hit matched, in the order hits are ranked: what a node says (its name or
/// text) first, then what it is (role, attributes), and a url last: on a page whose every link
/// carries the query in its url, those links would otherwise bury the nodes that name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Matched<'a> {
    Name,
    Text,
    Role,
    Attribute(&'a str),
    Url,
}

impl Matched<'_> {
    /// 0: name or text, 1: role or attribute, 2: url only.
    pub fn rank(self) -> usize {
        match self {
            Matched::Name | Matched::Text => 0,
            Matched::Role | Matched::Attribute(_) => 1,
            Matched::Url => 2,
        }
    }

    fn write(self, out: &mut String) {
        match self {
            Matched::Name => out.push_str("name"),
            Matched::Text => out.push_str("text"),
            Matched::Role => out.push_str("role"),
            Matched::Attribute(key) => {
                out.push_str("attribute ");
                out.push_str(key);
            }
            Matched::Url => out.push_str("url"),
        }
    }
}

/// What the ranks are called in a search's first line.
const RANK_NAMES: [&str; 3] = ["by name or text", "by role or attribute", "by url only"];

/// One node that matched a search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchHit {
    pub uid: String,
    /// The node's line in the light notation.
    pub line: String,
    /// Its ancestors, outermost first (`RootWebArea "Title" > main > navigation "Primary"`).
    pub path: String,
    /// The best field it matched in (the ranking's key).
    pub matched: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SearchHits {
    /// Nodes that matched, all of them (`hits` holds the best `limit`).
    pub total: usize,
    /// Of `total`, how many matched at best by name or text, by role or attribute, by url.
    pub by_rank: [usize; 3],
    pub hits: Vec<SearchHit>,
    /// The hits written for the agent.
    pub text: String,
}

enum Matcher {
    Substring(String),
    Pattern(Regex),
}

impl Matcher {
    fn new(query: &str, regex: bool) -> Result<Matcher, FilterError> {
        if query.is_empty() {
            return Err(FilterError::EmptyQuery);
        }
        if !regex {
            return Ok(Matcher::Substring(query.to_lowercase()));
        }
        RegexBuilder::new(query)
            .case_insensitive(true)
            .size_limit(REGEX_SIZE_LIMIT)
            .build()
            .map(Matcher::Pattern)
            .map_err(|e| FilterError::InvalidRegex {
                query: query.to_string(),
                reason: e.to_string(),
            })
    }

    fn matches(&self, haystack: &str) -> bool {
        match self {
            Matcher::Substring(q) => haystack.to_lowercase().contains(q.as_str()),
            Matcher::Pattern(re) => re.is_match(haystack),
        }
    }
}

/// The best field of `node` that matches: its name (text, for a role-less node), its role, an
/// attribute (`key=value`, or the bare word), a url attribute; not the uid itself. Each field
/// is matched alone, so a regex's `^` and `$` are the field's ends.
fn best_match<'a>(matcher: &Matcher, node: &Node<'a>, buf: &mut String) -> Option<Matched<'a>> {
    if node.name.as_deref().is_some_and(|n| matcher.matches(n)) {
        return Some(if node.role.is_empty() {
            Matched::Text
        } else {
            Matched::Name
        });
    }
    if !node.role.is_empty() && matcher.matches(node.role) {
        return Some(Matched::Role);
    }
    let mut url = false;
    for attr in &node.attrs {
        buf.clear();
        buf.push_str(attr.key);
        if let Some(v) = &attr.value {
            buf.push('=');
            buf.push_str(v);
        }
        if matcher.matches(buf) {
            if !roles::is_url_attr(attr.key) {
                return Some(Matched::Attribute(attr.key));
            }
            url = true;
        }
    }
    url.then_some(Matched::Url)
}

fn path_of(notation: &dyn Notation, tree: &Tree<'_>, id: usize) -> String {
    let mut parts: Vec<String> = tree
        .ancestors(id)
        .filter_map(|a| tree.nodes.get(a))
        .filter(|n| !n.role.is_empty() && n.role != "generic" && n.role != "ignored")
        .map(|n| {
            let name = n.name_str();
            if name.is_empty() {
                n.role.to_string()
            } else {
                let short: String = name.chars().take(PATH_NAME_CHARS).collect();
                let ellipsis = if short.len() < name.len() { "…" } else { "" };
                let mut quoted = String::new();
                notation.quote_name(&mut quoted, &short);
                format!("{} \"{quoted}{ellipsis}\"", n.role)
            }
        })
        .collect();
    parts.reverse();
    parts.join(" > ")
}

/// Nodes of the raw snapshot whose role, name or attributes contain `query` (case-insensitive;
/// a regex when `regex`), ranked by where they match (`Matched`; document order within a
/// rank), the best `limit` with their line, where they matched and their ancestors' path.
pub fn search_snapshot(
    notation: &dyn Notation,
    raw: &str,
    query: &str,
    regex: bool,
    limit: usize,
) -> Result<SearchHits, FilterError> {
    let matcher = Matcher::new(query, regex)?;
    let mut implied = Vec::new();
    let tree = notation.parse(raw, &mut implied);
    let mut result = SearchHits::default();
    // The best `limit` of each rank, in document order: enough to fill `limit` best first.
    let mut best: [Vec<(usize, Matched<'_>)>; 3] = Default::default();
    let mut buf = String::new();
    for (id, node) in tree.nodes.iter().enumerate() {
        if node.kind != NodeKind::Element || node.uid.is_empty() {
            continue;
        }
        let Some(matched) = best_match(&matcher, node, &mut buf) else {
            continue;
        };
        result.total += 1;
        let rank = matched.rank();
        if let Some(count) = result.by_rank.get_mut(rank) {
            *count += 1;
        }
        if let Some(kept) = best.get_mut(rank).filter(|k| k.len() < limit) {
            kept.push((id, matched));
        }
    }
    for (id, matched) in best.into_iter().flatten().take(limit) {
        let mut label = String::new();
        matched.write(&mut label);
        result.hits.push(SearchHit {
            uid: tree.nodes.get(id).map_or("", |n| n.uid).to_string(),
            line: notation.hit_line(&tree, id),
            path: path_of(notation, &tree, id),
            matched: label,
        });
    }
    let mut text = format!(
        "{} node{} match {query:?}",
        result.total,
        if result.total == 1 { "" } else { "s" }
    );
    let ranks: Vec<String> = result
        .by_rank
        .iter()
        .zip(RANK_NAMES)
        .filter(|(n, _)| **n > 0)
        .map(|(n, name)| format!("{n} {name}"))
        .collect();
    if !ranks.is_empty() {
        text.push_str(" (");
        text.push_str(&ranks.join(", "));
        if result.total > result.hits.len() {
            text.push_str(&format!("; best {} shown", result.hits.len()));
        }
        text.push(')');
    }
    text.push(':');
    for hit in &result.hits {
        text.push('\n');
        text.push_str(&hit.line);
        text.push_str("\n  matched ");
        text.push_str(&hit.matched);
        if !hit.path.is_empty() {
            text.push_str("; in ");
            text.push_str(&hit.path);
        }
    }
    result.text = text;
    Ok(result)
}
