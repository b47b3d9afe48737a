//! Lossy passes that remove structure: layout nodes dropped (children promoted), peripheral
//! landmarks summarised, focus on `main`, depth and node caps. Passes set the `dropped` and
//! `hidden` flags; the renderer turns hidden runs into markers. Roots, markers and interactive
//! nodes are never dropped; roots and markers are never hidden.

use super::open;
use std::collections::HashMap;

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
    /// Per node, `CONTROL` and `LABELLED` (`roles::is_interactive`, `is_labelled_control`):
    /// passes ask them of node after node, and each asking read the node's attributes.
    control: Vec<u8>,
    /// The nodes of a few roles, ascending: the passes that act on them alone start from
    /// these instead of asking every node its role. `main` landmarks:
    mains: Vec<usize>,
    /// Peripheral landmarks (`roles::is_peripheral_landmark`).
    landmarks: Vec<usize>,
    /// Comboboxes and listboxes.
    lists: Vec<usize>,
    /// Per node, `open::OPEN` and `open::HOLDS` (empty when nothing is open).
    open: Vec<u8>,
}

/// `Facts::control`'s bits.
const CONTROL: u8 = 1;
const LABELLED: u8 = 2;

impl Facts {
    pub fn new(tree: &Tree<'_>) -> Facts {
        let n = tree.nodes.len();
        let mut in_main = vec![false; n];
        let mut in_nav = vec![false; n];
        // Outside every peripheral landmark: what `in_main` is on a page without `main`.
        let mut outside = vec![false; n];
        let mut control = vec![0u8; n];
        let (mut mains, mut landmarks, mut lists) = (Vec::new(), Vec::new(), Vec::new());
        for (id, node) in tree.nodes.iter().enumerate() {
            let main = node.role == "main";
            let peripheral = roles::is_peripheral_landmark(node);
            if main {
                mains.push(id);
            }
            if peripheral {
                landmarks.push(id);
            }
            if matches!(node.role, "combobox" | "listbox") {
                lists.push(id);
            }
            if let (true, Some(slot)) = (roles::is_interactive(node), control.get_mut(id)) {
                *slot = if roles::is_labelled_if_interactive(node) {
                    CONTROL | LABELLED
                } else {
                    CONTROL
                };
            }
            let parent_in =
                |v: &[bool]| node.parent.and_then(|p| v.get(p).copied()).unwrap_or(false);
            let (in_parent_main, in_parent_nav) = (parent_in(&in_main), parent_in(&in_nav));
            let parent_outside = node.parent.and_then(|p| outside.get(p).copied());
            if let Some(slot) = in_main.get_mut(id) {
                *slot = in_parent_main || main;
            }
            if let Some(slot) = in_nav.get_mut(id) {
                *slot = in_parent_nav || node.role == "navigation";
            }
            if let Some(slot) = outside.get_mut(id) {
                *slot = parent_outside.unwrap_or(true) && !peripheral;
            }
        }
        // A page without a `main` landmark (PostgreSQL's documentation, many old sites): its
        // content is what lies outside the page's landmarks, and is read as main, so its
        // controls and records stay in place as they would inside one.
        if mains.is_empty() {
            in_main = outside;
        }
        // Each main and its ancestors (up to one marked already: its own are too).
        let mut contains_main = vec![false; n];
        for &main in &mains {
            let mut at = Some(main);
            while let Some(slot) = at.and_then(|id| contains_main.get_mut(id)) {
                if std::mem::replace(slot, true) {
                    break;
                }
                at = at.and_then(|id| tree.nodes.get(id)).and_then(|n| n.parent);
            }
        }
        let open = open::marks(
            tree,
            |id| in_main.get(id).copied().unwrap_or(false),
            |id| control.get(id).is_some_and(|c| c & CONTROL != 0),
        );
        Facts {
            in_main,
            in_nav,
            contains_main,
            control,
            mains,
            landmarks,
            lists,
            open,
        }
    }

    /// Open itself or inside something open (`open`): never hidden, nor anything under it
    /// that is open too.
    pub fn is_open(&self, id: usize) -> bool {
        self.open.get(id).is_some_and(|m| m & open::OPEN != 0)
    }

    /// Open, or an ancestor of something open: a pass hides it never (an ancestor's other
    /// children may hide).
    pub fn stays_open(&self, id: usize) -> bool {
        self.open
            .get(id)
            .is_some_and(|m| m & (open::OPEN | open::HOLDS) != 0)
    }

    fn anything_open(&self) -> bool {
        !self.open.is_empty()
    }

    /// The comboboxes and listboxes, ascending.
    pub fn lists(&self) -> &[usize] {
        &self.lists
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
        roles::is_image(node.role)
            && tree.children(id).is_empty()
            && node
                .parent
                .and_then(|p| tree.nodes.get(p))
                .is_some_and(|p| p.role == "link" && !p.name_str().trim().is_empty())
    };
    node.parent.is_some()
        && node.kind == NodeKind::Element
        && (!facts.is_control(id) && roles::is_decorative_if_inert(node) || image_in_link())
}

/// Decoration a page over the token budget loses before its text cells and its way around
/// (`SnapshotLimits::decoration`): an image or a separator that is no control, holds none and
/// is no layout node dropped already.
pub fn is_decoration(tree: &Tree<'_>, facts: &Facts, id: usize) -> bool {
    tree.nodes.get(id).is_some_and(|node| {
        node.parent.is_some()
            && node.kind == NodeKind::Element
            && matches!(node.role, "image" | "img" | "separator" | "graphics-symbol")
            && !facts.is_control(id)
            && tree.children(id).is_empty()
    })
}

/// The navigations outside `main` short enough to be one line (`collapse::ONE_LINE_CHARS`
/// for their controls written `uid role "name"`): a pager, a breadcrumb, a book's previous
/// and next. At `aggressive` they stay with `main`, controls in place: they are the way from
/// this page to the next.
pub fn short_navs(tree: &Tree<'_>, facts: &Facts) -> NodeSet {
    let mut out = NodeSet::new();
    for &id in &facts.landmarks {
        let is_nav = tree.nodes.get(id).is_some_and(|n| n.role == "navigation");
        if !is_nav || facts.in_main(id) || facts.contains_main(id) {
            continue;
        }
        let mut chars = 0usize;
        let mut controls = 0usize;
        for d in tree.subtree(id) {
            if facts.is_control(d) {
                controls += 1;
                chars = chars.saturating_add(tree.nodes.get(d).map_or(0, |n| {
                    n.uid.len() + n.role.len() + n.name.as_deref().map_or(0, str::len) + 5
                }));
            }
            if chars > super::collapse::ONE_LINE_CHARS {
                break;
            }
        }
        if controls > 0 && chars <= super::collapse::ONE_LINE_CHARS {
            for d in tree.subtree(id) {
                out.insert(d);
            }
        }
    }
    out
}

/// Navigation, banner, footer and sidebars outside `main`: their content hides behind one
/// marker each, except (unless `strict`) the form controls, and the controls of a navigation
/// (its links, menu items, buttons: what an agent follows to get anywhere), which stay where
/// they are. Their prose, images and decoration still hide.
pub fn summarise_landmarks(tree: &mut Tree<'_>, facts: &Facts, strict: bool) {
    // A short navigation keeps its controls even where the rest are strict (`short_navs`).
    let short = if strict {
        short_navs(tree, facts)
    } else {
        NodeSet::new()
    };
    // Per node of a landmark summarised: whether its subtree holds a control to keep (filled
    // bottom-up, landmark by landmark: the page's other nodes are never asked).
    let mut has_kept: Vec<bool> = Vec::new();
    let mut order: Vec<usize> = Vec::new();
    // The landmarks summarised so far, ascending: one inside them hides with them.
    let mut summarised: Vec<usize> = Vec::new();
    for &id in &facts.landmarks {
        if tree
            .ancestors(id)
            .any(|a| summarised.binary_search(&a).is_ok())
            || facts.in_main(id)
            || facts.contains_main(id)
        {
            continue;
        }
        summarised.push(id);
        // Strict keeps no controls but a short navigation's; what is open stays either way.
        let keeps_controls = !strict || short.contains(&id);
        if keeps_controls || facts.anything_open() {
            if has_kept.is_empty() {
                has_kept = vec![false; tree.nodes.len()];
            }
            order.clear();
            order.extend(tree.subtree(id));
            for &d in order.iter().rev() {
                let Some(node) = tree.nodes.get(d) else {
                    continue;
                };
                let nav_control = facts.in_nav(d) && facts.is_control(d);
                let kept_control = keeps_controls
                    && (roles::is_kept_in_landmark(node)
                        || nav_control
                        || facts.is_control(d) && open::is_opener(node));
                let mine =
                    has_kept.get(d).copied().unwrap_or(false) || kept_control || facts.is_open(d);
                if let Some(slot) = has_kept.get_mut(d) {
                    *slot = mine;
                }
                if let (true, Some(p)) = (mine, node.parent) {
                    if let Some(slot) = has_kept.get_mut(p) {
                        *slot = true;
                    }
                }
            }
        }
        // Hide every child subtree without a kept control, but a kept control's label (the
        // text right before it: "Search everything" before the site's search box); walk into
        // the others.
        let mut stack: Vec<usize> = vec![id];
        while let Some(parent) = stack.pop() {
            // The lists and the nodes are borrowed apart: the children are hidden as read.
            let children = tree.child_lists.of(parent);
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
    // The largest (the first of the largest): a page has one mostly, whose size is not counted.
    let main = match facts.mains.as_slice() {
        [] => None,
        [one] => Some(*one),
        mains => {
            let sizes = subtree_sizes(tree);
            mains
                .iter()
                .map(|&id| (id, sizes.get(id).copied().unwrap_or(0)))
                .max_by_key(|&(id, size)| (size, usize::MAX - id))
                .map(|(id, _)| id)
        }
    };
    let Some(main) = main else { return };
    let short = short_navs(tree, facts);
    let chain: Vec<usize> = std::iter::once(main).chain(tree.ancestors(main)).collect();
    for pair in chain.windows(2) {
        let (keep, ancestor) = (pair[0], pair[1]);
        let beside: Vec<usize> = tree
            .child_lists
            .of(ancestor)
            .iter()
            .copied()
            .filter(|&s| s != keep && !short.contains(&s))
            .collect();
        hide_beside_open(tree, facts, &beside);
    }
}

/// `focus_main`'s hiding of `nodes`, but for what is open (`Facts::stays_open`): an open node
/// stays with its subtree, one that holds an open node stays and its other children hide.
fn hide_beside_open(tree: &mut Tree<'_>, facts: &Facts, nodes: &[usize]) {
    let mut stack: Vec<usize> = nodes.to_vec();
    while let Some(s) = stack.pop() {
        if facts.is_open(s) {
            continue;
        }
        if facts.stays_open(s) {
            stack.extend(tree.child_lists.of(s).iter().copied());
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

/// Per node, how many nodes its subtree holds (itself too), in one sweep of the parents from
/// the last node back: walking each subtree through its children read them all from memory in
/// no order, and a page's mains together hold most of it. A node's parent comes before it
/// (`Tree::push` gives ids in order); a parent that does not (none a push set) is not counted.
fn subtree_sizes(tree: &Tree<'_>) -> Vec<usize> {
    let mut sizes = vec![1usize; tree.nodes.len()];
    for (id, node) in tree.nodes.iter().enumerate().rev() {
        let size = sizes.get(id).copied().unwrap_or(0);
        if let Some(slot) = node
            .parent
            .filter(|&p| p < id)
            .and_then(|p| sizes.get_mut(p))
        {
            *slot += size;
        }
    }
    sizes
}

/// Subtrees rendered deeper than `max_depth` hide behind a marker at that depth.
pub fn cap_depth(tree: &mut Tree<'_>, facts: &Facts, max_depth: usize) {
    let n = tree.nodes.len();
    // Per node, its rendered depth and its children's (one more unless it is dropped): a node
    // reads its parent's here, not the parent node's flag (on a big page a trip to memory).
    // A parent's entry is set before its children read it: `Tree::push` gives ids in document
    // order, parents first (as `subtree_sizes` relies on too).
    let mut depth = vec![(0usize, 0usize); n];
    for id in 0..n {
        let Some(node) = tree.nodes.get(id) else {
            continue;
        };
        let (parent_depth, d) = node
            .parent
            .and_then(|p| depth.get(p).copied())
            .unwrap_or((0, 0));
        if let Some(slot) = depth.get_mut(id) {
            *slot = (d, d + usize::from(!node.dropped));
        }
        // Below an open node past the depth (`Facts::stays_open`, never hidden), the first of
        // its other children hide.
        let below_kept = node.parent.is_some_and(|p| facts.stays_open(p));
        if d > max_depth
            && (parent_depth <= max_depth || below_kept)
            && node.kind != NodeKind::Marker
            && !facts.stays_open(id)
        {
            if let Some(node) = tree.nodes.get_mut(id) {
                node.hidden = true;
            }
        }
    }
}

/// After `max_nodes` rendered lines (document order), the rest hides behind markers. The lines
/// of a navigation outside `main` (a sidebar of 250 links before the content) get what the
/// rest of the page leaves of the cap, so they never push the page's own content out.
pub fn cap_nodes(tree: &mut Tree<'_>, facts: &Facts, max_nodes: usize, keep_short_navs: bool) {
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
    // A flat table's record is one line: its first cell counts for it, its other cells and
    // what lies under any cell (a combobox's options, written in the row) count nothing, and
    // hide with the first cell when the cap hides it (a row is written whole or not at all).
    let mut row_of: HashMap<usize, usize> = HashMap::new();
    for table in tree.tables.values().filter(|t| t.record_nodes.is_empty()) {
        for r in 0..table.records() {
            let record = table.record(r);
            let Some(&head) = record.first() else {
                continue;
            };
            for &cell in record {
                for d in tree.subtree(cell).filter(|&d| d != head) {
                    unwritten.insert(d);
                    row_of.insert(d, head);
                }
            }
        }
    }
    // At `aggressive`, a short navigation kept beside `main` (`short_navs`) is outside the
    // cap: at most one line, it never pushes `main` out, nor goes for want of room.
    let short = if keep_short_navs {
        short_navs(tree, facts)
    } else {
        NodeSet::new()
    };
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
            && !short.contains(&id)
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
        let row_hidden = || {
            row_of
                .get(&id)
                .is_some_and(|&head| eff.get(head).copied().unwrap_or(false))
        };
        let has_parent = node.parent.is_some();
        let mut hidden = parent_hidden || node.hidden;
        let row_hides = !hidden && row_hidden();
        hidden |= row_hides;
        let counts = !hidden
            && !node.dropped
            && node.kind != NodeKind::Marker
            && !unwritten.contains(&id)
            && !short.contains(&id);
        if row_hides {
            if let Some(node) = tree.nodes.get_mut(id) {
                node.hidden = true;
            }
        }
        if counts {
            let over = if side(id) {
                side_shown += 1;
                side_shown > side_cap
            } else {
                shown += 1;
                shown > max_nodes
            };
            if over && has_parent && !facts.stays_open(id) {
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

/// The last passes, in one walk of the containers: at `aggressive` (`coalesce_gap`), the few
/// leaves between two hidden runs hidden with them (`coalesce_hidden_runs`), then everywhere
/// a hidden run shorter than its marker shown (`show_short_hidden_runs`). One walk gives what
/// two did: each changes the hidden flag of childless items of the container it is at only,
/// which no other container's items nor the set of containers depend on.
pub fn settle_hidden_runs(tree: &mut Tree<'_>, facts: &Facts, coalesce_gap: Option<usize>) {
    let mut containers = Containers::new().skip_hidden();
    while let Some((_, items)) = containers.next(tree) {
        if let Some(max_gap) = coalesce_gap {
            coalesce_hidden_runs(tree, facts, items, max_gap);
        }
        show_short_hidden_runs(tree, items);
    }
}

/// `coalesce_hidden_runs` in every container, alone (`settle_hidden_runs` shows short runs
/// too, which only the last pass may).
pub fn join_hidden_runs(tree: &mut Tree<'_>, facts: &Facts, max_gap: usize) {
    let mut containers = Containers::new().skip_hidden();
    while let Some((_, items)) = containers.next(tree) {
        coalesce_hidden_runs(tree, facts, items, max_gap);
    }
}

/// A run of hidden childless siblings (of `items`, a container's) that would print shorter
/// than its marker is shown instead (a cut text or a run of hidden records always stays
/// hidden).
fn show_short_hidden_runs(tree: &mut Tree<'_>, items: &[usize]) {
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
            // Past two items and the marker's length, or past a node that is not a leaf, the
            // run stays hidden: the rest of it is only walked over (a long run of a big page
            // read each item's attributes).
            let decided = !leaves || (chars > MARKER_CHARS && k - start >= 2);
            if let Some(n) = tree.nodes.get(c).filter(|_| !decided) {
                leaves &= tree.children(c).is_empty()
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

/// Hides the few childless siblings (not headings; of `items`, a container's) left between
/// two hidden runs, so that the runs and the gap share one marker: at aggressive, a marker
/// costs more than the gap is worth.
fn coalesce_hidden_runs(tree: &mut Tree<'_>, facts: &Facts, items: &[usize], max_gap: usize) {
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
        // (Not a record shown: its row stays whole; nor what is open; nor a navigation's
        // control: the way around, not words of prose; nor a list's selected option: in
        // Playwright's notation it is the control's only value.)
        let plain = gap.iter().all(|&c| {
            let kept_apart = tree.record_members.contains(&c)
                || facts.stays_open(c)
                || facts.in_nav(c) && facts.is_control(c);
            !kept_apart
                && tree.nodes.get(c).is_some_and(|n| {
                    n.kind == NodeKind::Element
                        && tree.children(c).is_empty()
                        && !n.dropped
                        && n.role != "heading"
                        && !(n.role == "option" && n.has_attr("selected"))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::tree::Node;
    use crate::snapshot::walk::{promote_dropped_into, visible_children};
    use crate::test_support::XorShift;

    /// Random trees of landmarks, controls and layout nodes, some dropped and some hidden.
    fn random_tree(rng: &mut XorShift, size: usize) -> Tree<'static> {
        const ROLES: &[&str] = &[
            "main",
            "navigation",
            "banner",
            "contentinfo",
            "complementary",
            "link",
            "button",
            "textbox",
            "combobox",
            "listbox",
            "generic",
            "",
        ];
        let mut tree = Tree::default();
        for id in 0..size {
            let mut node = Node::new(NodeKind::Element, None);
            node.role = rng.pick(ROLES);
            node.dropped = rng.below(4) == 0;
            node.hidden = rng.below(6) == 0;
            let parent = (id > 0 && rng.below(8) != 0).then(|| rng.below(id as u64) as usize);
            tree.push(node, parent);
        }
        tree.seal();
        tree
    }

    /// What `Facts` keeps answers as the definitions read node by node: a `main` in the
    /// subtree, under a `main` (or, on a page without one, under no peripheral landmark),
    /// the lists.
    #[test]
    fn facts_agree_with_their_definitions() {
        let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
        for case in 0..300 {
            let tree = random_tree(&mut rng, 1 + case % 40);
            let facts = Facts::new(&tree);
            let role = |id: usize| tree.nodes[id].role;
            let has_main = tree.nodes.iter().any(|n| n.role == "main");
            for id in 0..tree.nodes.len() {
                let up: Vec<usize> = std::iter::once(id).chain(tree.ancestors(id)).collect();
                let in_main = if has_main {
                    up.iter().any(|&a| role(a) == "main")
                } else {
                    !up.iter()
                        .any(|&a| roles::is_peripheral_landmark(&tree.nodes[a]))
                };
                assert_eq!(facts.in_main(id), in_main, "case {case} node {id}");
                let contains = tree.subtree(id).any(|d| role(d) == "main");
                assert_eq!(facts.contains_main(id), contains, "case {case} node {id}");
            }
            let lists: Vec<usize> = (0..tree.nodes.len())
                .filter(|&id| matches!(role(id), "combobox" | "listbox"))
                .collect();
            assert_eq!(facts.lists(), lists.as_slice(), "case {case}");
        }
    }

    /// The sizes of one sweep of the parents are the subtrees' counted through their children,
    /// on trees whose subtrees are not runs of ids.
    #[test]
    fn subtree_sizes_agree_with_the_subtrees() {
        let mut rng = XorShift(0x6a09_e667_f3bc_c908);
        for case in 0..300 {
            let tree = random_tree(&mut rng, 1 + case % 40);
            let sizes = subtree_sizes(&tree);
            for (id, &size) in sizes.iter().enumerate() {
                assert_eq!(size, tree.subtree(id).count(), "case {case} node {id}");
            }
        }
    }

    /// The walk's children copied at once up to the first dropped one give what opening them
    /// one by one gives: each dropped, shown node replaced by its visible children.
    #[test]
    fn visible_children_agree_with_their_definition() {
        fn opened(tree: &Tree<'_>, children: &[usize], out: &mut Vec<usize>) {
            for &c in children {
                let n = &tree.nodes[c];
                if n.dropped && !n.hidden {
                    opened(tree, tree.children(c), out);
                } else {
                    out.push(c);
                }
            }
        }
        let mut rng = XorShift(0x2545_f491_4f6c_dd1d);
        for case in 0..300 {
            let tree = random_tree(&mut rng, 1 + case % 40);
            for id in 0..tree.nodes.len() {
                let mut expected = Vec::new();
                opened(&tree, tree.children(id), &mut expected);
                assert_eq!(
                    visible_children(&tree, id),
                    expected,
                    "case {case} node {id}"
                );
                let (mut out, mut stack, mut dropped) = (Vec::new(), Vec::new(), Vec::new());
                let children = tree.children(id);
                promote_dropped_into(&tree, children, &mut out, &mut stack, Some(&mut dropped));
                let opened_ids: Vec<usize> = tree
                    .subtree(id)
                    .skip(1)
                    .filter(|&d| {
                        let n = &tree.nodes[d];
                        n.dropped
                            && !n.hidden
                            && tree.ancestors(d).take_while(|&a| a != id).all(|a| {
                                let an = &tree.nodes[a];
                                an.dropped && !an.hidden
                            })
                    })
                    .collect();
                assert_eq!(out, expected, "case {case} node {id}");
                assert_eq!(dropped, opened_ids, "case {case} node {id}");
            }
        }
    }
}
