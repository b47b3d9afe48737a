//! What roles and attributes mean to the passes: which nodes can be acted on (never dropped,
//! kept in place inside `main`), which are layout only, which are page landmarks.

use super::tree::Node;

// The word lists are `matches!` arms, not slices searched with `contains`: the passes ask
// them of every node, a slice search calls `memcmp` for each entry of the word's length, a
// `match` compares inline.

/// Roles an agent clicks, types into or toggles.
pub(super) fn is_interactive_role(word: &str) -> bool {
    matches!(
        word,
        "button"
            | "checkbox"
            | "combobox"
            | "DisclosureTriangle"
            | "link"
            | "listbox"
            | "menuitem"
            | "menuitemcheckbox"
            | "menuitemradio"
            | "option"
            | "radio"
            | "scrollbar"
            | "searchbox"
            | "slider"
            | "spinbutton"
            | "switch"
            | "tab"
            | "textbox"
            | "treeitem"
            | "Video"
            | "Audio"
    )
}

/// States that only exist on things one can act on.
fn is_interactive_attr(word: &str) -> bool {
    matches!(
        word,
        "focusable" | "focused" | "expandable" | "editable" | "checked" | "pressed"
    )
}

/// Roles that only lay out or style their children (verbose mode prints many of them).
fn is_layout_role(word: &str) -> bool {
    matches!(
        word,
        "generic"
            | "ignored"
            | "none"
            | "presentation"
            | "InlineTextBox"
            | "LayoutTable"
            | "LayoutTableRow"
            | "LayoutTableCell"
            | "emphasis"
            | "strong"
            | "superscript"
            | "subscript"
            | "paragraph"
            | "Abbr"
            | "LabelText"
            | "ListMarker"
    )
}

/// Page regions summarised at `moderate` (when outside `main`).
fn is_peripheral_role(word: &str) -> bool {
    matches!(
        word,
        "navigation" | "banner" | "contentinfo" | "complementary"
    )
}

/// Controls left visible inside summarised landmarks at `moderate` (a site search box).
fn is_kept_role(word: &str) -> bool {
    matches!(word, "searchbox" | "textbox" | "combobox")
}

/// Capability words printed for a false state: `disableable` alone means enabled.
pub const STATELESS_CAPABILITIES: &[(&str, &str)] = &[
    ("disableable", "disabled"),
    ("focusable", "focused"),
    ("selectable", "selected"),
];

pub fn is_interactive(node: &Node<'_>) -> bool {
    is_interactive_role(node.role) || node.attrs.iter().any(|a| is_interactive_attr(a.key))
}

/// A control whose meaning the text before it often carries (a form field, a button, a
/// toggle): interactive and not a link (a link's own name is its label).
pub fn is_labelled_control(node: &Node<'_>) -> bool {
    is_interactive(node) && is_labelled_if_interactive(node)
}

/// `is_labelled_control` of a node known to be interactive.
pub fn is_labelled_if_interactive(node: &Node<'_>) -> bool {
    node.role != "link"
}

/// Whether a node known not to be interactive (`is_interactive`: a control always has its
/// line) says nothing on its own line: layout roles without a name (InlineTextBox always: it
/// repeats its parent's text), and text that is only spaces or a separator.
pub fn is_decorative_if_inert(node: &Node<'_>) -> bool {
    if node.role == "InlineTextBox" || node.role == "LineBreak" {
        return true;
    }
    if is_layout_role(node.role) {
        return node.name_str().trim().is_empty();
    }
    if node.is_text() {
        let name = node.name_str();
        return name.chars().all(is_separator_char);
    }
    false
}

/// A space or a character that only separates (`·`, `|`, `—`, …): a text of these alone says
/// nothing. A `match`, not a search of a string of them: asked of every text node's first
/// character at least.
fn is_separator_char(c: char) -> bool {
    c.is_whitespace() || matches!(c, '·' | '•' | '|' | '/' | '-' | '–' | '—' | ',' | ';' | ':')
}

pub fn is_peripheral_landmark(node: &Node<'_>) -> bool {
    is_peripheral_role(node.role)
}

pub fn is_kept_in_landmark(node: &Node<'_>) -> bool {
    is_kept_role(node.role)
}

/// Attributes the light notation drops: a capability word without its state, on a role that is
/// interactive anyway (on a `generic`, `focusable` is what says it can be acted on: it stays).
pub fn is_stateless_capability(node: &Node<'_>, key: &str) -> bool {
    is_interactive_role(node.role)
        && STATELESS_CAPABILITIES
            .iter()
            .any(|&(cap, state)| cap == key && !node.has_attr(state))
}

/// An attribute holding a url: `url=` in one notation, a `/url:` property in the other.
pub fn is_url_attr(key: &str) -> bool {
    key == "url" || key == "/url"
}

/// An image: chrome-devtools-mcp writes the role `image`, Playwright `img`.
pub fn is_image(role: &str) -> bool {
    matches!(role, "image" | "img")
}

/// At the lossy levels a named link's or an image's `url` goes (search and expand show it):
/// the agent acts on the uid, and urls are a fifth of a snapshot's tokens.
pub fn url_is_droppable(node: &Node<'_>) -> bool {
    match node.role {
        "link" => !node.name_str().trim().is_empty(),
        role => is_image(role),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `match` of separators answers as the search of the string of them it replaced, over
    /// the Latin, punctuation and symbol blocks and a sample of the rest.
    #[test]
    fn separator_chars_match_the_listed_ones() {
        let listed = "·•|/-–—,;:";
        let sample = (0u32..0x3000).chain((0x3000..0x11_0000).step_by(97));
        for c in sample.filter_map(char::from_u32) {
            assert_eq!(
                is_separator_char(c),
                c.is_whitespace() || listed.contains(c),
                "{c:?}"
            );
        }
    }
}
