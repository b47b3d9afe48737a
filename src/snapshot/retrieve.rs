//! Getting back what a lossy level hid, from the raw (unfiltered) snapshot text:
//! `expand_subtree` renders the subtree under a uid at `light` (lossless), `expand_range` a run
//! of siblings (what one marker hid), `search_snapshot`
//! finds the nodes whose role, name or attributes match, with the path of their ancestors.
//! Each takes the [`Notation`] the raw text is in (the caller picks it; refs are uids).

use regex::{Regex, RegexBuilder};

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
                return Err(FilterError::InvalidArgument(format!(
                    "uid {until_uid:?} is not a later sibling of uid {from_uid:?}: pass the uid \
                     and until of one marker, or expand a single uid"
                )));
            }
        },
    };
    if let Some(max) = depth {
        // Markers will name what the depth hides: they need to know which uids repeat.
        tree.index_uids();
        let mut below: Vec<(usize, usize)> = roots.iter().map(|&r| (r, 0)).collect();
        while let Some((id, d)) = below.pop() {
            let children = tree
                .nodes
                .get(id)
                .map(|n| n.children.clone())
                .unwrap_or_default();
            for c in children {
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
        let siblings = match node.parent.and_then(|p| tree.nodes.get(p)) {
            Some(p) => p.children.as_slice(),
            None => tree.roots.as_slice(),
        };
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
    FilterError::InvalidArgument(format!(
        "uid {uid:?} is not in the latest snapshot: take a new snapshot, or use a uid it shows"
    ))
}

/// One node that matched a search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchHit {
    pub uid: String,
    /// The node's line in the light notation.
    pub line: String,
    /// Its ancestors, outermost first (`RootWebArea "Title" > main > navigation "Primary"`).
    pub path: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SearchHits {
    /// Nodes that matched, all of them (`hits` holds the first `limit`).
    pub total: usize,
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
            return Err(FilterError::InvalidArgument(
                "search query is empty".to_string(),
            ));
        }
        if !regex {
            return Ok(Matcher::Substring(query.to_lowercase()));
        }
        RegexBuilder::new(query)
            .case_insensitive(true)
            .size_limit(REGEX_SIZE_LIMIT)
            .build()
            .map(Matcher::Pattern)
            .map_err(|e| FilterError::InvalidArgument(format!("invalid regex {query:?}: {e}")))
    }

    fn matches(&self, haystack: &str) -> bool {
        match self {
            Matcher::Substring(q) => haystack.to_lowercase().contains(q.as_str()),
            Matcher::Pattern(re) => re.is_match(haystack),
        }
    }
}

/// What a search looks at: role, name and attribute values (not the uid itself).
fn searchable(node: &Node<'_>) -> String {
    let mut s = String::from(node.role);
    for part in node.name.iter().map(|n| n.as_ref()) {
        s.push('\n');
        s.push_str(part);
    }
    for attr in &node.attrs {
        s.push('\n');
        s.push_str(attr.key);
        if let Some(v) = &attr.value {
            s.push('=');
            s.push_str(v);
        }
    }
    s
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
/// a regex when `regex`), the first `limit` with their line and ancestors' path.
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
    for (id, node) in tree.nodes.iter().enumerate() {
        if node.kind != NodeKind::Element || node.uid.is_empty() {
            continue;
        }
        if !matcher.matches(&searchable(node)) {
            continue;
        }
        result.total += 1;
        if result.hits.len() < limit {
            let line = notation.hit_line(&tree, id);
            result.hits.push(SearchHit {
                uid: node.uid.to_string(),
                line,
                path: path_of(notation, &tree, id),
            });
        }
    }
    let mut text = format!(
        "{} node{} match {query:?}",
        result.total,
        if result.total == 1 { "" } else { "s" }
    );
    if result.total > result.hits.len() {
        text.push_str(&format!(" (first {} shown)", result.hits.len()));
    }
    text.push(':');
    for hit in &result.hits {
        text.push('\n');
        text.push_str(&hit.line);
        if !hit.path.is_empty() {
            text.push_str("\n  in ");
            text.push_str(&hit.path);
        }
    }
    result.text = text;
    Ok(result)
}
