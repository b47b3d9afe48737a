//! Which tools' results are worth filtering. Everything else passes through untouched: small
//! results gain nothing, and `get_network_request` / `get_console_message` details must never be
//! cut (they are how the agent gets back what a summary line hid). Each upstream's table lists
//! its own (`crate::notation::upstream`).

/// The tool whose fenced JSON output gets the `evaluate` filter.
pub const EVALUATE_SCRIPT: &str = "evaluate_script";

/// True when the named tool's result goes through the section filters (for Playwright's
/// `browser_*` tools: the snapshot filter only).
pub fn is_content_heavy(tool_name: &str) -> bool {
    crate::notation::UPSTREAMS
        .iter()
        .any(|u| u.content_heavy_tools.contains(&tool_name))
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
