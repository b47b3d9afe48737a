//! Lossy passes that remove structure: layout nodes dropped (children promoted), peripheral
//! landmarks summarised, focus on `main`, depth and node caps. Passes set the `dropped` and
//! `hidden` flags; the renderer turns hidden runs into markers. Roots, markers and interactive
//! nodes are never dropped; roots and markers are never hidden.

use super::roles;
use super::tree::{NodeKind, NodeSet, Tree};
use super::walk::Containers;

/// Facts about every node, computed once in document order (parents come before children).
#[derive(Debug, Clone)]
pub struct Facts {
    pub in_main: Vec<bool>,
    /// Inside a `navigation` landmark (the landmark included).
    pub in_nav: Vec<bool>,
    pub contains_main: Vec<bool>,
    pub subtree_size: Vec<usize>,
    /// Per node, `CONTROL` and `LABELLED` (`roles::is_interactive`, `is_labelled_control`):
    /// passes ask them of node after node, and each asking read the node's attributes.
    control: Vec<u8>,
}

/// `Facts::control`'s bits.
const CONTROL: u8 = 1;
const LABELLED: u8 = 2;

impl Facts {
    pub fn new(tree: &Tree<'_>) -> Facts {
        let n = tree.nodes.len();
        let mut in_main = vec![false; n];
        let mut in_nav = vec![false; n];
        let mut contains_main = vec![false; n];
        let mut subtree_size = vec![1; n];
        let mut control = vec![0u8; n];
        let mut has_main = false;
        for (id, node) in tree.nodes.iter().enumerate() {
            has_main |= node.role == "main";
            if let (true, Some(slot)) = (roles::is_interactive(node), control.get_mut(id)) {
                *slot = if roles::is_labelled_if_interactive(node) {
                    CONTROL | LABELLED
                } else {
                    CONTROL
                };
            }
            let parent_in =
                |v: &[bool]| node.parent.and_then(|p| v.get(p).copied()).unwrap_or(false);
            let (main, nav) = (parent_in(&in_main), parent_in(&in_nav));
            if let Some(slot) = in_main.get_mut(id) {
                *slot = main || node.role == "main";
            }
            if let Some(slot) = in_nav.get_mut(id) {
                *slot = nav || node.role == "navigation";
            }
        }
        // A page without a `main` landmark (PostgreSQL's documentation, many old sites): its
        // content is what lies outside the page's landmarks, and is read as main, so its
        // controls and records stay in place as they would inside one.
        if !has_main {
            let mut outside = vec![false; n];
            for (id, node) in tree.nodes.iter().enumerate() {
                let parent_outside = node.parent.and_then(|p| outside.get(p).copied());
                let mine = parent_outside.unwrap_or(true) && !roles::is_peripheral_landmark(node);
                if let Some(slot) = outside.get_mut(id) {
                    *slot = mine;
                }
                if let Some(slot) = in_main.get_mut(id) {
                    *slot = mine;
                }
            }
        }
        for id in (0..n).rev() {
            let Some(node) = tree.nodes.get(id) else {
                continue;
            };
            let mine = contains_main.get(id).copied().unwrap_or(false) || node.role == "main";
            let size = subtree_size.get(id).copied().unwrap_or(1);
            if let Some(p) = node.parent {
                if let Some(slot) = contains_main.get_mut(p) {
                    *slot |= mine;
                }
                if let Some(slot) = subtree_size.get_mut(p) {
                    *slot += size;
                }
            }
            if let Some(slot) = contains_main.get_mut(id) {
                *slot = mine;
            }
        }
        Facts {
            in_main,
            in_nav,
            contains_main,
            subtree_size,
            control,
        }
    }

    /// `roles::is_interactive` of the node.
    pub fn is_control(&self, id: usize) -> bool {
        self.control.get(id).is_some_and(|c| c & CONTROL != 0)
    }

    /// `roles::is_labelled_control` of the node.
    pub fn is_labelled_control(&self, id: usize) -> bool {
        self.control.get(id).is_some_and(|c| c & LABELLED != 0)
    }

    pub fn in_main(&self, id: usize) -> bool {
        self.in_main.get(id).copied().unwrap_or(false)
    }

    pub fn in_nav(&self, id: usize) -> bool {
        self.in_nav.get(id).copied().unwrap_or(false)
    }

    fn contains_main(&self, id: usize) -> bool {
        self.contains_main.get(id).copied().unwrap_or(false)
    }
}

/// Whether `id` loses its line (its children move up): a layout-only node or empty text, or
/// an image inside a named link (the link's name says what it shows, mostly it is the image's
/// alt, and the agent clicks the link). Asked of every node by `apply_passes`, in its one sweep
/// of the per-node marks.
pub fn is_decorative_at(tree: &Tree<'_>, facts: &Facts, id: usize) -> bool {
    let Some(node) = tree.nodes.get(id) else {
        return false;
    };
    let image_in_link = || {
        node.role == "image"
            && node.children.is_empty()
            && node
                .parent
                .and_then(|p| tree.nodes.get(p))
                .is_some_and(|p| p.role == "link" && !p.name_str().trim().is_empty())
    };
    node.parent.is_some()
        && node.kind == NodeKind::Element
        && (!facts.is_control(id) && roles::is_decorative_if_inert(node) || image_in_link())
}

/// Navigation, banner, footer and sidebars outside `main`: their content hides behind one
/// marker each, except (unless `strict`) the form controls, and the controls of a navigation
/// (its links, menu items, buttons: what an agent follows to get anywhere), which stay where
/// they are. Their prose, images and decoration still hide.
pub fn summarise_landmarks(tree: &mut Tree<'_>, facts: &Facts, strict: bool) {
    let n = tree.nodes.len();
    // Subtrees holding a control to keep, bottom-up.
    let mut has_kept = vec![false; n];
    if !strict {
        for id in (0..n).rev() {
            let Some(node) = tree.nodes.get(id) else {
                continue;
            };
            let nav_control = facts.in_nav(id) && facts.is_control(id);
            let mine = has_kept.get(id).copied().unwrap_or(false)
                || roles::is_kept_in_landmark(node)
                || nav_control;
            if let Some(slot) = has_kept.get_mut(id) {
                *slot = mine;
            }
            if let (true, Some(p)) = (mine, node.parent) {
                if let Some(slot) = has_kept.get_mut(p) {
                    *slot = true;
                }
            }
        }
    }
    let mut summarised = vec![false; n];
    for id in 0..n {
        let Some(node) = tree.nodes.get(id) else {
            continue;
        };
        let parent_done = node
            .parent
            .and_then(|p| summarised.get(p).copied())
            .unwrap_or(false);
        if parent_done {
            if let Some(slot) = summarised.get_mut(id) {
                *slot = true;
            }
            continue;
        }
        if !roles::is_peripheral_landmark(node) || facts.in_main(id) || facts.contains_main(id) {
            continue;
        }
        if let Some(slot) = summarised.get_mut(id) {
            *slot = true;
        }
        // Hide every child subtree without a kept control, but a kept control's label (the
        // text right before it: "Search everything" before the site's search box); walk into
        // the others.
        let mut stack: Vec<usize> = vec![id];
        while let Some(parent) = stack.pop() {
            let children = tree
                .nodes
                .get(parent)
                .map(|n| n.children.clone())
                .unwrap_or_default();
            for (k, &c) in children.iter().enumerate() {
                if has_kept.get(c).copied().unwrap_or(false) {
                    stack.push(c);
                    continue;
                }
                let labels_kept = children
                    .get(k + 1)
                    .and_then(|&next| tree.nodes.get(next))
                    .is_some_and(roles::is_kept_in_landmark);
                if let Some(child) = tree.nodes.get_mut(c) {
                    if child.kind != NodeKind::Marker && !(labels_kept && child.is_text()) {
                        child.hidden = true;
                    }
                }
            }
        }
    }
}

/// At `aggressive`: everything beside the chain of ancestors of the largest `main` is hidden.
pub fn focus_main(tree: &mut Tree<'_>, facts: &Facts) {
    let main = tree
        .nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| n.role == "main")
        .max_by_key(|(id, _)| {
            (
                facts.subtree_size.get(*id).copied().unwrap_or(0),
                usize::MAX - id,
            )
        })
        .map(|(id, _)| id);
    let Some(main) = main else { return };
    let chain: Vec<usize> = std::iter::once(main).chain(tree.ancestors(main)).collect();
    for pair in chain.windows(2) {
        let (keep, ancestor) = (pair[0], pair[1]);
        let siblings = tree
            .nodes
            .get(ancestor)
            .map(|n| n.children.clone())
            .unwrap_or_default();
        for s in siblings {
            if s == keep {
                continue;
            }
            if let Some(node) = tree.nodes.get_mut(s) {
                // Headings outside main (the page title) are cheap and orient the agent.
                if node.kind == NodeKind::Element && node.role != "heading" {
                    node.hidden = true;
                }
            }
        }
    }
}

/// Subtrees rendered deeper than `max_depth` hide behind a marker at that depth.
pub fn cap_depth(tree: &mut Tree<'_>, max_depth: usize) {
    let n = tree.nodes.len();
    let mut depth = vec![0usize; n];
    for id in 0..n {
        let Some(node) = tree.nodes.get(id) else {
            continue;
        };
        let d = match node
            .parent
            .and_then(|p| tree.nodes.get(p).map(|pn| (p, pn.dropped)))
        {
            Some((p, dropped)) => depth.get(p).copied().unwrap_or(0) + usize::from(!dropped),
            None => 0,
        };
        if let Some(slot) = depth.get_mut(id) {
            *slot = d;
        }
        let parent_depth = node.parent.and_then(|p| depth.get(p).copied()).unwrap_or(0);
        if d > max_depth && parent_depth <= max_depth && node.kind != NodeKind::Marker {
            if let Some(node) = tree.nodes.get_mut(id) {
                node.hidden = true;
            }
        }
    }
}

/// After `max_nodes` rendered lines (document order), the rest hides behind markers. The lines
/// of a navigation outside `main` (a sidebar of 250 links before the content) get what the
/// rest of the page leaves of the cap, so they never push the page's own content out.
pub fn cap_nodes(tree: &mut Tree<'_>, facts: &Facts, max_nodes: usize) {
    let n = tree.nodes.len();
    // The nodes between a nested table's records and their cells (`cell`, `group`) get no
    // line: the table writes its rows' cells only.
    let mut unwritten = NodeSet::new();
    for table in tree.tables.values() {
        let cells: NodeSet = table.items.iter().copied().collect();
        for &r in &table.record_nodes {
            unwritten.extend(tree.subtree(r).skip(1).filter(|d| !cells.contains(d)));
        }
    }
    let side = |id: usize| facts.in_nav(id) && !facts.in_main(id);
    // The lines the rest of the page writes, uncapped: the navigations get what they leave.
    let mut eff = vec![false; n];
    let mut rest = 0usize;
    for id in 0..n {
        let Some(node) = tree.nodes.get(id) else {
            continue;
        };
        let hidden = node.hidden || node.parent.and_then(|p| eff.get(p).copied()) == Some(true);
        if !hidden
            && !node.dropped
            && node.kind != NodeKind::Marker
            && !unwritten.contains(&id)
            && !side(id)
        {
            rest += 1;
            // The navigations get nothing whatever the rest.
            if rest >= max_nodes {
                break;
            }
        }
        if let Some(slot) = eff.get_mut(id) {
            *slot = hidden;
        }
    }
    let side_cap = max_nodes.saturating_sub(rest);
    eff.fill(false);
    let (mut shown, mut side_shown) = (0usize, 0usize);
    for id in 0..n {
        let Some(node) = tree.nodes.get(id) else {
            continue;
        };
        let parent_hidden = node
            .parent
            .and_then(|p| eff.get(p).copied())
            .unwrap_or(false);
        let mut hidden = parent_hidden || node.hidden;
        let counts =
            !hidden && !node.dropped && node.kind != NodeKind::Marker && !unwritten.contains(&id);
        if counts {
            let over = if side(id) {
                side_shown += 1;
                side_shown > side_cap
            } else {
                shown += 1;
                shown > max_nodes
            };
            if over && node.parent.is_some() {
                hidden = true;
                if let Some(node) = tree.nodes.get_mut(id) {
                    node.hidden = true;
                }
            }
        }
        if let Some(slot) = eff.get_mut(id) {
            *slot = hidden;
        }
    }
}

/// Characters a marker line costs, about: a hidden run of leaves shorter than this is shown.
const MARKER_CHARS: usize = 80;

/// A run of hidden childless siblings that would print shorter than its marker is shown
/// instead (a cut text or a run of hidden records always stays hidden).
pub fn show_short_hidden_runs(tree: &mut Tree<'_>) {
    let mut containers = Containers::new().skip_hidden();
    while let Some((_, items)) = containers.next(tree) {
        let mut k = 0;
        while k < items.len() {
            // A condensed record's hidden nodes stay hidden: their run's marker is written
            // anyway.
            let hidden_at = |k: usize| {
                items
                    .get(k)
                    .filter(|&&c| !tree.is_condensed_cell(c))
                    .and_then(|&c| tree.nodes.get(c))
                    .is_some_and(|n| n.hidden)
            };
            if !hidden_at(k) {
                k += 1;
                continue;
            }
            let start = k;
            let mut chars = 0usize;
            let mut leaves = true;
            while hidden_at(k) {
                let c = items.get(k).copied().unwrap_or(0);
                if let Some(n) = tree.nodes.get(c) {
                    leaves &= n.children.is_empty()
                        && n.keep_chars.is_none()
                        && n.kind == NodeKind::Element
                        && !tree.hidden_records.contains_key(&c);
                    // Bytes bound the characters: no need to count them.
                    chars += n.uid.len() + n.role.len() + n.name.as_deref().map_or(0, str::len) + 4;
                    for a in n.attrs.iter().filter(|a| !(n.drop_url && a.key == "url")) {
                        chars += a.key.len() + a.value.as_deref().map_or(0, str::len) + 4;
                    }
                }
                k += 1;
            }
            if leaves && (chars <= MARKER_CHARS || k - start == 1) {
                for &c in items.get(start..k).unwrap_or(&[]) {
                    if let Some(n) = tree.nodes.get_mut(c) {
                        n.hidden = false;
                    }
                }
            }
        }
    }
}

/// Hides the few childless siblings (not headings) left between two hidden runs, so that the
/// runs and the gap share one marker: at aggressive, a marker costs more than the gap is worth.
pub fn coalesce_hidden_runs(tree: &mut Tree<'_>, max_gap: usize) {
    let mut containers = Containers::new().skip_hidden();
    while let Some((_, items)) = containers.next(tree) {
        let hidden = |tree: &Tree<'_>, k: usize| {
            items
                .get(k)
                .filter(|&&c| !tree.is_condensed_cell(c))
                .and_then(|&c| tree.nodes.get(c))
                .is_some_and(|n| n.hidden)
        };
        let mut k = 0;
        while k < items.len() {
            if !hidden(tree, k) {
                k += 1;
                continue;
            }
            // After a hidden run: is the gap to the next one short and made of plain leaves?
            while hidden(tree, k) {
                k += 1;
            }
            let gap_start = k;
            while k < items.len() && !hidden(tree, k) && k - gap_start <= max_gap {
                k += 1;
            }
            let gap = items.get(gap_start..k).unwrap_or(&[]);
            let closes = k < items.len() && hidden(tree, k) && !gap.is_empty();
            // (Not a record shown: its row stays whole.)
            let plain = gap.iter().all(|&c| {
                !tree.record_members.contains(&c)
                    && tree.nodes.get(c).is_some_and(|n| {
                        n.kind == NodeKind::Element
                            && n.children.is_empty()
                            && !n.dropped
                            && n.role != "heading"
                    })
            });
            if closes && plain {
                for &c in gap {
                    if let Some(n) = tree.nodes.get_mut(c) {
                        n.hidden = true;
                    }
                }
            } else {
                k = gap_start.max(k.min(items.len()));
                while k < items.len() && !hidden(tree, k) {
                    k += 1;
                }
            }
        }
    }
}
