//! Which tools' results are worth filtering. Everything else passes through untouched: small
//! results gain nothing, and `get_network_request` / `get_console_message` details must never be
//! cut (they are how the agent gets back what a summary line hid).

/// chrome-devtools-mcp 1.11 tools whose text can carry a snapshot, a network or console list, or
/// a script result. Action tools carry a snapshot only with `includeSnapshot: true` (the tools
/// whose schema has that argument), but filtering a result without one costs a section split and
/// changes nothing. Page tools (`navigate_page`, `new_page`, `select_page`, `close_page`) and
/// `type_text` / `handle_dialog` print only a message and `## Pages`: their results never cross.
const CONTENT_HEAVY_TOOLS: &[&str] = &[
    "take_snapshot",
    "wait_for",
    "click",
    "click_at",
    "hover",
    "fill",
    "fill_form",
    "drag",
    "upload_file",
    "press_key",
    "list_network_requests",
    "list_console_messages",
    "evaluate_script",
    // Playwright MCP: `browser_snapshot` returns the YAML inline; action tools did in versions
    // before 0.0.3x (now they link a `.yml` file, and the result passes untouched).
    "browser_snapshot",
    "browser_navigate",
    "browser_navigate_back",
    "browser_click",
    "browser_type",
    "browser_hover",
    "browser_drag",
    "browser_drop",
    "browser_select_option",
    "browser_press_key",
    "browser_fill_form",
    "browser_file_upload",
    "browser_handle_dialog",
    "browser_wait_for",
    "browser_tabs",
];

/// The tool whose fenced JSON output gets the `evaluate` filter.
pub const EVALUATE_SCRIPT: &str = "evaluate_script";

/// True when the named tool's result goes through the section filters (for Playwright's
/// `browser_*` tools: the snapshot filter only).
pub fn is_content_heavy(tool_name: &str) -> bool {
    CONTENT_HEAVY_TOOLS.contains(&tool_name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn knows_the_heavy_tools_and_nothing_else() {
        assert!(is_content_heavy("take_snapshot"));
        assert!(is_content_heavy("list_console_messages"));
        assert!(is_content_heavy(EVALUATE_SCRIPT));
        assert!(!is_content_heavy("get_network_request"));
        assert!(!is_content_heavy("get_console_message"));
        assert!(is_content_heavy("browser_snapshot"));
        assert!(!is_content_heavy("browser_network_requests"));
        assert!(!is_content_heavy("browser_find"));
        assert!(!is_content_heavy("take_heapsnapshot"));
        assert!(!is_content_heavy("navigate_page"));
        assert!(!is_content_heavy("take_screenshot"));
    }
}
