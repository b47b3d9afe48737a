//! Which upstream tool a result came from, told by its text alone: the sections the filters
//! read (`sections.rs` for chrome-devtools-mcp, the Playwright `### Snapshot` fence). For
//! `mcp-snapshot-filter measure` on a bare `CallToolResult`, which names no tool; exported as
//! `inferTool` so that the bin does not sniff the same headers a second way.

use super::evaluate::MESSAGE_PREFIX;
use super::sections::{split_sections, SectionKind};
use crate::notation::upstream::Sections;

/// The accessibility tree of a chrome-devtools-mcp result text: its snapshot section without
/// the `## Latest page snapshot` line, or `None` when it has none.
pub fn snapshot_body(text: &str) -> Option<&str> {
    let section = split_sections(text, false)
        .into_iter()
        .find(|s| s.kind == SectionKind::Snapshot)?;
    Some(section.text.split_once('\n').map_or("", |(_, body)| body))
}

/// The tool whose result `text` is, or `None` when no section says.
pub fn tool_of_text(text: &str) -> Option<&'static str> {
    for section in split_sections(text, false) {
        let tool = match section.kind {
            SectionKind::Snapshot => crate::notation::cdp::UPSTREAM.snapshot_tool,
            SectionKind::NetworkList => "list_network_requests",
            SectionKind::ConsoleList => "list_console_messages",
            SectionKind::Detail if section.text.starts_with("## Request ") => "get_network_request",
            SectionKind::Detail => "get_console_message",
            SectionKind::Message if section.text.starts_with(MESSAGE_PREFIX) => "evaluate_script",
            _ => continue,
        };
        return Some(tool);
    }
    crate::notation::UPSTREAMS
        .iter()
        .find_map(|u| match u.sections {
            Sections::Own { body, .. } => body(text).map(|_| u.snapshot_tool),
            Sections::Shared => None,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_result_kind_is_told_by_its_sections() {
        let cases = [
            ("## Latest page snapshot\nuid=1_0 RootWebArea \"x\"\n", Some("take_snapshot")),
            ("Successfully clicked on the element\n## Latest page snapshot\nuid=1_0 RootWebArea \"x\"\n", Some("take_snapshot")),
            ("## Network requests\nShowing 1-1 of 1 (Page 1 of 1).\nreqid=1 GET http://a/ [200]\n", Some("list_network_requests")),
            ("## Console messages\nShowing 1-1 of 1 (Page 1 of 1).\nmsgid=1 [log] hi\n", Some("list_console_messages")),
            ("## Request http://a/\nStatus: 200\n", Some("get_network_request")),
            ("ID: 3\nMessage: log> hi\n", Some("get_console_message")),
            ("Script ran on page and returned:\n```json\n[1]\n```\n", Some("evaluate_script")),
            ("### Page\n- Page URL: http://a/\n### Snapshot\n```yaml\n- generic [ref=e1]\n```\n", Some("browser_snapshot")),
            ("Successfully navigated to http://a/.\n", None),
            // Page text quoting a header inside a script's fence is no section.
            ("Script ran on page and returned:\n```json\n\"## Network requests\"\n```\n", Some("evaluate_script")),
        ];
        for (text, tool) in cases {
            assert_eq!(tool_of_text(text), tool, "{text:?}");
        }
    }

    #[test]
    fn the_snapshot_body_is_the_section_after_its_header() {
        let text =
            "Clicked\n## Latest page snapshot\nuid=1_0 RootWebArea \"x\"\n  uid=1_1 button \"b\"\n";
        assert_eq!(
            snapshot_body(text),
            Some("uid=1_0 RootWebArea \"x\"\n  uid=1_1 button \"b\"\n")
        );
        assert_eq!(snapshot_body("## Latest page snapshot"), Some(""));
        assert_eq!(
            snapshot_body(
                "Script ran on page and returned:\n```json\n\"## Latest page snapshot\"\n```\n"
            ),
            None
        );
    }
}
