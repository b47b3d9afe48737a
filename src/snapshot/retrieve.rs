//! Getting back what a lossy level hid, from the raw (unfiltered) snapshot text:
//! `expand_subtree` renders the subtree under a uid at `light` (lossless), `search_snapshot`
//! finds the nodes whose role, name or attributes match, with the path of their ancestors.
//! Both work on chrome-devtools-mcp text and on Playwright YAML (detected; refs are uids).

use regex::{Regex, RegexBuilder};

use super::parse::parse;
use super::render::{render_subtree, write_element_line};
use super::tree::{Node, NodeKind, Tree};
use crate::error::FilterError;
use crate::playwright;

/// Characters of an ancestor's name shown in a search hit's path.
const PATH_NAME_CHARS: usize = 40;
/// A compiled regex may use this much memory at most (a hostile pattern fails cleanly).
const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// The subtree under `uid`, rendered at `light`; with `depth`, nodes more than `depth` levels
/// below `uid` hide behind markers (which name what they hide, as in the lossy levels).
pub fn expand_subtree(raw: &str, uid: &str, depth: Option<usize>) -> Result<String, FilterError> {
    let yaml = playwright::is_yaml_snapshot(raw);
    let mut implied = Vec::new();
    let mut tree = if yaml {
        playwright::retrieve::parse_tree(raw, &mut implied)
    } else {
        parse(raw)
    };
    let root = tree.find_uid(uid).ok_or_else(|| unknown_uid(uid))?;
    if let Some(max) = depth {
        let mut below = vec![(root, 0usize)];
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
    if yaml {
        return Ok(playwright::retrieve::subtree_text(&tree, root));
    }
    Ok(render_subtree(&tree, root, depth.is_some()).text)
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

fn path_of(tree: &Tree<'_>, id: usize) -> String {
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
                super::escape::escape_into(&mut quoted, &short);
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
    raw: &str,
    query: &str,
    regex: bool,
    limit: usize,
) -> Result<SearchHits, FilterError> {
    let matcher = Matcher::new(query, regex)?;
    let yaml = playwright::is_yaml_snapshot(raw);
    let mut implied = Vec::new();
    let tree = if yaml {
        playwright::retrieve::parse_tree(raw, &mut implied)
    } else {
        parse(raw)
    };
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
            let line = if yaml {
                playwright::retrieve::hit_line(&tree, id)
            } else {
                let mut line = String::new();
                write_element_line(&mut line, &tree, id);
                line
            };
            result.hits.push(SearchHit {
                uid: node.uid.to_string(),
                line,
                path: path_of(&tree, id),
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
