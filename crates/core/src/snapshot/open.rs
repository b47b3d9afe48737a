//! What the agent opened stays in view (issue 43, item 1): the one owner of "open" as a reason
//! to keep a node. A node that is expanded or focused, a dialog or alertdialog (modal or not),
//! a menu or tooltip (the accessibility tree holds one only while it is shown), what an
//! expanded control opened, and the ancestors that place them are never hidden by a pass that
//! hides whole subtrees or runs: a summarised landmark, `aggressive`'s focus on `main`, the
//! depth and node caps, the collapse of similar siblings, the text budget, the options summary
//! (`prune::Facts::stays_open` is what the passes ask). It is what the agent is about to use.
//!
//! What an expanded control opened (and the form a focused field is in): its own subtree, and
//! after it among its siblings either the
//! popup right after it (a listbox, menu, tree, grid, dialog or tooltip: chrome-devtools-mcp
//! writes a combobox's or menu button's popup as its next sibling) or, outside `main`, the
//! controls of the siblings up to the next heading, landmark or control that expands (a
//! footer's disclosure: its list's nodes are flattened into siblings of the button; the
//! buttons after a focused textbox in a sidebar). Inside
//! `main` controls stay in place anyway, and there the section's prose is left to the level;
//! there an expanded control is open only when what it opened is a popup (`opens_popup`). A
//! control kept open keeps its label (the text right before it).

use super::roles;
use super::tree::{Node, NodeKind, Tree};

/// Roles whose whole subtree is open while the node is in the tree at all.
fn opens_by_role(node: &Node<'_>) -> bool {
    matches!(node.role, "dialog" | "alertdialog" | "menu" | "tooltip")
}

/// Roles of a popup an expanded control opens, written right after it.
fn is_popup_role(node: &Node<'_>) -> bool {
    matches!(
        node.role,
        "listbox" | "menu" | "tree" | "grid" | "dialog" | "alertdialog" | "tooltip"
    )
}

/// A boolean state as both notations write it: a bare word (`expanded`; chrome-devtools-mcp's
/// state word after its capability word, Playwright's `[expanded]`), or `=true`.
fn has_state(node: &Node<'_>, key: &str) -> bool {
    node.attr(key)
        .is_some_and(|a| a.value.as_deref().is_none_or(|v| v == "true"))
}

/// Expanded: `expanded` in both notations.
pub fn is_expanded(node: &Node<'_>) -> bool {
    node.kind == NodeKind::Element && has_state(node, "expanded")
}

/// Focused: chrome-devtools-mcp's `focused`, Playwright's `[active]`. The page itself (the
/// root, focused whenever nothing else is) is not: it would keep nothing but itself anyway.
fn is_focused(node: &Node<'_>) -> bool {
    node.kind == NodeKind::Element
        && node.parent.is_some()
        && (has_state(node, "focused") || has_state(node, "active"))
}

/// A control whose expanded state is a popup it opened (a combobox's listbox, a menu button's
/// menu). Inside `main`, only such an expanded control is open: there `expanded` is mostly a
/// section left open (rustdoc's hundreds of `details` blocks), whose controls stay in place
/// anyway.
fn opens_popup(node: &Node<'_>) -> bool {
    node.role == "combobox"
        || node
            .attr("haspopup")
            .is_some_and(|a| a.value.as_deref() != Some("false"))
}

/// A field the agent types into or picks in: focused, its section's controls are the form it
/// is filling (the note's "Save" after its textbox).
fn is_field(node: &Node<'_>) -> bool {
    matches!(
        node.role,
        "textbox" | "searchbox" | "combobox" | "spinbutton"
    )
}

/// A control that expands (`expandable`, `haspopup`): the way into a section or popup. It stops
/// an expanded control's section, and a summarised landmark keeps it in place (a banner's
/// account menu button, a footer's disclosure) at `moderate`, as it keeps form fields.
pub fn is_opener(node: &Node<'_>) -> bool {
    expands(node)
}

fn expands(node: &Node<'_>) -> bool {
    node.has_attr("expandable") || node.has_attr("haspopup") || is_expanded(node)
}

/// Per node: `OPEN`, itself open or inside something open; `HOLDS`, an ancestor of such a node.
pub(super) const OPEN: u8 = 1;
pub(super) const HOLDS: u8 = 2;
/// Its children are open too (a dialog, a menu, an expanded node, or inside one); a focused
/// node alone is open itself only.
const SUBTREE: u8 = 4;

/// The `OPEN` and `HOLDS` bits of every node; `in_main` and `is_control` as `prune::Facts`
/// reads them. Empty (no node open) on most pages: then nothing is allocated per node.
pub(super) fn marks(
    tree: &Tree<'_>,
    in_main: impl Fn(usize) -> bool,
    is_control: impl Fn(usize) -> bool,
) -> Vec<u8> {
    let n = tree.nodes.len();
    let mut marks: Vec<u8> = Vec::new();
    let set = |marks: &mut Vec<u8>, id: usize, bits: u8| {
        if marks.is_empty() {
            *marks = vec![0; n];
        }
        if let Some(m) = marks.get_mut(id) {
            *m |= bits;
        }
    };
    // Parents come before their children (`Tree::push`): a subtree opened above is read from
    // the parent's mark, which is set by then.
    // Expanded controls and focused fields: their sections are read after the sweep.
    let mut sections = Vec::new();
    for (id, node) in tree.nodes.iter().enumerate() {
        let parent_open = node
            .parent
            .and_then(|p| marks.get(p))
            .is_some_and(|m| m & SUBTREE != 0);
        let expanded = is_expanded(node) && (!in_main(id) || opens_popup(node));
        if parent_open || opens_by_role(node) || expanded {
            set(&mut marks, id, OPEN | SUBTREE);
        } else if is_focused(node) {
            set(&mut marks, id, OPEN);
        }
        if (expanded || is_focused(node) && is_field(node)) && node.parent.is_some() {
            sections.push(id);
        }
    }
    for id in sections {
        let parent = tree.nodes.get(id).and_then(|n| n.parent);
        let siblings = tree.siblings_under(parent);
        let after = siblings
            .iter()
            .position(|&s| s == id)
            .map_or(&[][..], |k| siblings.get(k + 1..).unwrap_or(&[]));
        let Some(&next) = after.first() else {
            continue;
        };
        if tree.nodes.get(next).is_some_and(is_popup_role) {
            for d in tree.subtree(next) {
                set(&mut marks, d, OPEN | SUBTREE);
            }
            continue;
        }
        if in_main(id) {
            continue;
        }
        for &s in after {
            let Some(node) = tree.nodes.get(s) else {
                continue;
            };
            if node.role == "heading" || roles::is_peripheral_landmark(node) || expands(node) {
                break;
            }
            for d in tree.subtree(s) {
                if is_control(d) {
                    set(&mut marks, d, OPEN);
                }
            }
        }
    }
    if marks.is_empty() {
        return marks;
    }
    // A control kept open keeps its label: the text right before it (a focused "Accept all"
    // after its cookie notice).
    for id in 0..n {
        if marks.get(id).is_none_or(|m| m & OPEN == 0) || !is_control(id) {
            continue;
        }
        let parent = tree.nodes.get(id).and_then(|node| node.parent);
        let siblings = tree.siblings_under(parent);
        let before = siblings
            .iter()
            .position(|&s| s == id)
            .and_then(|k| k.checked_sub(1))
            .and_then(|k| siblings.get(k).copied());
        if let Some(label) = before.filter(|&b| tree.nodes.get(b).is_some_and(Node::is_text)) {
            set(&mut marks, label, OPEN);
        }
    }
    // Every ancestor of an open node holds it (up to one marked already: its own are too).
    for id in 0..n {
        if marks.get(id).is_none_or(|m| m & OPEN == 0) {
            continue;
        }
        let mut at = tree.nodes.get(id).and_then(|node| node.parent);
        while let Some(p) = at {
            match marks.get_mut(p) {
                Some(m) if *m & HOLDS == 0 => *m |= HOLDS,
                _ => break,
            }
            at = tree.nodes.get(p).and_then(|node| node.parent);
        }
    }
    marks
}

#[cfg(test)]
#[path = "open_tests.rs"]
mod tests;
