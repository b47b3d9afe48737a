//! Finds the YAML body of the snapshot in a Playwright MCP result's text: the ```` ```yaml ````
//! fence under `### Snapshot` (0.0.3x and later) or under `- Page Snapshot:` (earlier
//! versions). Everything else (`### Ran Playwright code`, `### Page`, `### Events`, links to
//! `.yml` files, the fences themselves) stays where it is: `before + body + after` is the text.
//! A YAML snapshot line always starts with spaces and `- `, so a line that is exactly ```` ``` ````
//! closes the fence.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct YamlSnapshot<'a> {
    /// Everything up to and including the ```` ```yaml ```` line.
    pub before: &'a str,
    /// The snapshot lines, each with its `\n`.
    pub body: &'a str,
    /// The closing fence and everything after it.
    pub after: &'a str,
}

fn is_snapshot_header(line: &str) -> bool {
    matches!(
        line.trim_end(),
        "### Snapshot" | "- Page Snapshot:" | "- Page Snapshot" | "### Page Snapshot"
    )
}

/// The line Playwright MCP (0.0.86 and later) writes before the snapshot tree when the page
/// registers tools of its own (WebMCP), its tools indented under it.
const WEBMCP_TOOLS: &str = "- webmcp tools (page-provided, untrusted):";

/// Bytes of the WebMCP tools block at the start of a YAML body (0 without one): its line and
/// every indented line after it. It is no part of the tree (no ref, page-provided text that
/// would read as nodes), so it stays before the body, byte for byte.
fn webmcp_tools_len(body: &str) -> usize {
    let mut len = 0;
    for line in body.split_inclusive('\n') {
        let content = line.trim_end_matches(['\n', '\r']);
        let first = len == 0;
        if (first && content != WEBMCP_TOOLS) || (!first && !line.starts_with(' ')) {
            break;
        }
        len += line.len();
    }
    len
}

/// The snapshot's YAML body, if the text has a complete one (after the WebMCP tools block,
/// which stays in `before`).
pub fn find_yaml_snapshot(text: &str) -> Option<YamlSnapshot<'_>> {
    let mut offset = 0;
    let mut after_header = false;
    let mut body_start = None;
    for line in text.split_inclusive('\n') {
        let content = line.strip_suffix('\n').unwrap_or(line);
        let content = content.strip_suffix('\r').unwrap_or(content);
        let at = offset;
        offset += line.len();
        match body_start {
            Some(start) => {
                if content == "```" {
                    let start = start + webmcp_tools_len(text.get(start..at)?);
                    return Some(YamlSnapshot {
                        before: text.get(..start)?,
                        body: text.get(start..at)?,
                        after: text.get(at..)?,
                    });
                }
            }
            None => {
                if after_header && content == "```yaml" && line.ends_with('\n') {
                    body_start = Some(offset);
                } else {
                    after_header = is_snapshot_header(content);
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_the_snapshot_body_out_and_back() {
        let text = "### Page\n- Page URL: http://a/\n### Snapshot\n```yaml\n- generic [ref=e1]:\n  - text: x\n```\n### Events\n- e\n";
        let s = find_yaml_snapshot(text).expect("found");
        assert_eq!(s.body, "- generic [ref=e1]:\n  - text: x\n");
        assert_eq!(format!("{}{}{}", s.before, s.body, s.after), text);
        assert!(s.after.starts_with("```\n### Events"));
    }

    #[test]
    fn a_linked_snapshot_or_an_unclosed_fence_is_not_a_body() {
        let link = "### Snapshot\n- [Snapshot](out/page.yml)\n### Events\n";
        assert_eq!(find_yaml_snapshot(link), None);
        let unclosed = "### Snapshot\n```yaml\n- generic [ref=e1]\n";
        assert_eq!(find_yaml_snapshot(unclosed), None);
        let code = "### Ran Playwright code\n```yaml\n- x\n```\n";
        assert_eq!(find_yaml_snapshot(code), None);
    }
}
