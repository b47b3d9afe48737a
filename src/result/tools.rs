//! Which tools' results are worth filtering. Everything else passes through untouched: small
//! results gain nothing, and `get_network_request` / `get_console_message` details must never be
//! cut (they are how the agent gets back what a summary line hid).

/// chrome-devtools-mcp 1.11 tools whose text can carry a snapshot, a network or console list, or
/// a script result. Action tools carry a snapshot only with `includeSnapshot: true`, but filtering
/// a result without one costs a section split and changes nothing.
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
    "type_text",
    "handle_dialog",
    "navigate_page",
    "new_page",
    "select_page",
    "close_page",
    "list_network_requests",
    "list_console_messages",
    "evaluate_script",
];

/// The tool whose fenced JSON output gets the `evaluate` filter.
pub const EVALUATE_SCRIPT: &str = "evaluate_script";

/// True when the named tool's result goes through the section filters. Playwright's `browser_*`
/// results are not handled yet and pass through.
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
        assert!(!is_content_heavy("browser_snapshot"));
        assert!(!is_content_heavy("take_heapsnapshot"));
    }
}
