//! Splits the text of a chrome-devtools-mcp 1.11 result into its sections (a `## ` header line
//! each: `## Latest page snapshot`, `## Network requests`, …; see `SectionKind`) so that each
//! gets its own filter, and puts them back
//! byte-exactly: the sections are consecutive slices of the text, so concatenating them is the
//! text.
//!
//! Page text reaches the result raw (multi-line snapshot names, console messages, response
//! bodies), so a line is taken for a header only where upstream can print that header: after
//! the snapshot only the later sections, inside a console list or a detail nothing at all, and
//! never inside a ``` fence. When in doubt a section ends early, which only means that less
//! gets filtered.

/// What a section holds; only some kinds have a filter, the rest pass through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SectionKind {
    /// Tool message lines before any header ("Successfully clicked…", a script result).
    Message,
    /// `## Pages`.
    Pages,
    /// `# Open dialog`.
    Dialog,
    /// `## Latest page snapshot`: the accessibility tree.
    Snapshot,
    /// `## Heap Snapshot Data`: a memory snapshot, not an accessibility tree.
    HeapSnapshot,
    /// `## Request <url>` (get_network_request) or `ID: N` (get_console_message): never cut.
    Detail,
    /// `## Network requests`.
    NetworkList,
    /// `## Console messages`.
    ConsoleList,
    /// Any other `#`/`##` header (sections of later upstream versions); passed through.
    Other,
    /// The trailing `Error: <msg>` of an `isError` result, to the end of the text.
    Error,
}

/// One section: a slice of the result text, header line included.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Section<'a> {
    pub kind: SectionKind,
    pub text: &'a str,
}

pub const SNAPSHOT_HEADER: &str = "## Latest page snapshot";
const NETWORK_HEADER: &str = "## Network requests";
const CONSOLE_HEADER: &str = "## Console messages";

/// Splits `text` into sections. `is_error` is the result's `isError`: only then is a line
/// starting with `Error: ` (the last one) the error section.
pub fn split_sections(text: &str, is_error: bool) -> Vec<Section<'_>> {
    let error_start = if is_error {
        last_error_line(text)
    } else {
        None
    };
    let mut sections = Vec::new();
    let mut kind = SectionKind::Message;
    let mut start = 0;
    let mut in_fence = false;
    let mut seen_snapshot = false;
    for offset in line_starts(text) {
        if Some(offset) == error_start {
            push(&mut sections, kind, &text[start..offset]);
            sections.push(Section {
                kind: SectionKind::Error,
                text: &text[offset..],
            });
            return sections;
        }
        // Only a header (`#`), a console detail (`ID: `) or a fence changes the section
        // (`header_kind`): the lines of a tree are passed over by their first byte, and only
        // these few are read whole.
        if !matches!(text.as_bytes().get(offset), Some(b'#' | b'I' | b'`')) {
            continue;
        }
        let (content, end) = line_at(text, offset);
        if fence_tracked(kind) && content.starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        let next = (end < text.len()).then(|| line_at(text, end).0);
        let Some(header) = header_kind(content, next, kind, seen_snapshot) else {
            continue;
        };
        push(&mut sections, kind, &text[start..offset]);
        kind = header;
        start = offset;
        seen_snapshot |= header == SectionKind::Snapshot;
    }
    push(&mut sections, kind, &text[start..]);
    sections
}

fn push<'a>(sections: &mut Vec<Section<'a>>, kind: SectionKind, text: &'a str) {
    if !text.is_empty() {
        sections.push(Section { kind, text });
    }
}

/// The byte offset of every line of `text` (none for an empty text, nor after a final `\n`).
fn line_starts(text: &str) -> impl Iterator<Item = usize> + '_ {
    let first = (!text.is_empty()).then_some(0);
    first.into_iter().chain(
        crate::newlines::newlines(text.as_bytes())
            .map(|at| at + 1)
            .filter(move |&at| at < text.len()),
    )
}

/// The line starting at `offset`, without its `\n`, and the offset after that `\n` (the text's
/// length for the last line).
fn line_at(text: &str, offset: usize) -> (&str, usize) {
    let rest = &text[offset..];
    match rest.find('\n') {
        Some(at) => (&rest[..at], offset + at + 1),
        None => (rest, text.len()),
    }
}

fn last_error_line(text: &str) -> Option<usize> {
    line_starts(text)
        .filter(|&at| text[at..].starts_with("Error: "))
        .last()
}

/// Sections whose text may hold a fenced block (a script result, later upstream sections).
fn fence_tracked(kind: SectionKind) -> bool {
    matches!(kind, SectionKind::Message | SectionKind::Other)
}

/// The section a line starts, given the section it is in.
fn header_kind(
    line: &str,
    next: Option<&str>,
    current: SectionKind,
    seen_snapshot: bool,
) -> Option<SectionKind> {
    use SectionKind::*;
    match current {
        // Message text, details and the error may hold anything; console messages come last.
        ConsoleList | Detail | Error => return None,
        NetworkList => {
            return (line == CONSOLE_HEADER && list_follows(next)).then_some(ConsoleList);
        }
        _ => {}
    }
    if line == NETWORK_HEADER && list_follows(next) {
        return Some(NetworkList);
    }
    if line == CONSOLE_HEADER && list_follows(next) {
        return Some(ConsoleList);
    }
    if line == "## Heap Snapshot Data" {
        return Some(HeapSnapshot);
    }
    if line.starts_with("## Request ") || is_console_detail(line, next) {
        return Some(Detail);
    }
    if matches!(current, Snapshot | HeapSnapshot) {
        // Inside a tree only a `## ` line of a section that can follow it ends it (see module
        // doc); the headers upstream prints before the snapshot cannot.
        let earlier = line == "## Pages" || line == SNAPSHOT_HEADER;
        return (line.starts_with("## ") && line.len() > 3 && !earlier).then_some(Other);
    }
    if line == SNAPSHOT_HEADER && !seen_snapshot {
        return Some(Snapshot);
    }
    if seen_snapshot {
        return None;
    }
    if line == "## Pages" {
        return Some(Pages);
    }
    if line == "# Open dialog" {
        return Some(Dialog);
    }
    let is_header =
        (line.starts_with("## ") && line.len() > 3) || (line.starts_with("# ") && line.len() > 2);
    is_header.then_some(Other)
}

/// A list header is real when the next line is what upstream prints under it.
fn list_follows(next: Option<&str>) -> bool {
    match next {
        None => true,
        Some(line) => {
            line.starts_with("Showing ")
                || line.starts_with("Invalid page number")
                || line.starts_with("reqid=")
                || line.starts_with("msgid=")
                || line == "No requests found."
                || line == "<no console messages found>"
        }
    }
}

/// `ID: 12` followed by `Message: …` or `Title: …` opens a get_console_message detail.
fn is_console_detail(line: &str, next: Option<&str>) -> bool {
    let Some(id) = line.strip_prefix("ID: ") else {
        return false;
    };
    !id.is_empty()
        && id.bytes().all(|b| b.is_ascii_digit())
        && next.is_some_and(|n| n.starts_with("Message: ") || n.starts_with("Title: "))
}

/// Concatenates sections (or their replacements) back into one text.
pub fn reassemble<'a>(parts: impl IntoIterator<Item = &'a str>) -> String {
    parts.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str, is_error: bool) -> Vec<SectionKind> {
        split_sections(text, is_error)
            .iter()
            .map(|s| s.kind)
            .collect()
    }

    #[test]
    fn splits_every_kind_in_upstream_order_and_reassembles_exactly() {
        let text = "Successfully clicked on the element\n## Pages\n1: A (http://a) [selected]\n\
                    ## Latest page snapshot\nuid=1_0 RootWebArea \"A\"\n  uid=1_1 \"x\"\n\
                    ## Network requests\nShowing 1-1 of 1 (Page 1 of 1).\nreqid=1 GET http://a [200]\n\
                    ## Console messages\nShowing 1-1 of 1 (Page 1 of 1).\nmsgid=1 [log] hi (1 args)\n\
                    Error: boom";
        let sections = split_sections(text, true);
        use SectionKind::*;
        assert_eq!(
            sections.iter().map(|s| s.kind).collect::<Vec<_>>(),
            vec![Message, Pages, Snapshot, NetworkList, ConsoleList, Error]
        );
        assert_eq!(reassemble(sections.iter().map(|s| s.text)), text);
        assert_eq!(sections[5].text, "Error: boom");
    }

    #[test]
    fn page_text_that_looks_like_a_header_stays_inside_its_section() {
        // A multi-line name whose continuation reads "## Pages" and "# Open dialog" is snapshot
        // text; a console message mentioning "## Network requests" stays a console message.
        let snapshot =
            "## Latest page snapshot\nuid=1_0 \"first\n## Pages\n# Open dialog\nError: x\"\n";
        assert_eq!(kinds(snapshot, false), vec![SectionKind::Snapshot]);
        let console = "## Console messages\nShowing 1-1 of 1 (Page 1 of 1).\nmsgid=1 [log] a\n\
                       ## Network requests\nShowing 1-1 of 1 (Page 1 of 1).\n";
        assert_eq!(kinds(console, false), vec![SectionKind::ConsoleList]);
    }

    #[test]
    fn a_heap_snapshot_header_is_not_an_accessibility_tree() {
        let text = "## Heap Snapshot Data\nStatistics: {}\n";
        assert_eq!(kinds(text, false), vec![SectionKind::HeapSnapshot]);
    }

    #[test]
    fn headers_inside_a_fence_are_not_headers() {
        let text = "Script ran on page and returned:\n```json\n## Pages\n```\n";
        assert_eq!(kinds(text, false), vec![SectionKind::Message]);
    }

    #[test]
    fn error_line_only_counts_on_error_results() {
        let text = "Successfully clicked\nError: not really\n";
        assert_eq!(kinds(text, false), vec![SectionKind::Message]);
        assert_eq!(
            kinds(text, true),
            vec![SectionKind::Message, SectionKind::Error]
        );
    }

    #[test]
    fn list_header_without_its_pagination_line_is_text() {
        let text = "## Latest page snapshot\nuid=1_0 \"a\n## Network requests\nhello\"\n";
        assert_eq!(
            kinds(text, false),
            vec![SectionKind::Snapshot, SectionKind::Other]
        );
    }

    #[test]
    fn line_starts_and_line_at_read_the_lines_as_split_does() {
        for text in [
            "",
            "\n",
            "\n\n",
            "one",
            "one\n",
            "one\ntwo",
            "## Pages\n\n# x\nI\n`\n",
            &"uid=1_2 \"é\"\n  ".repeat(40),
        ] {
            let mut offset = 0;
            let mut expected = Vec::new();
            for line in text.split_inclusive('\n') {
                expected.push((offset, line.strip_suffix('\n').unwrap_or(line)));
                offset += line.len();
            }
            let starts: Vec<usize> = line_starts(text).collect();
            assert_eq!(starts, expected.iter().map(|e| e.0).collect::<Vec<_>>());
            for (k, &(at, line)) in expected.iter().enumerate() {
                let next = expected.get(k + 1).map_or(text.len(), |e| e.0);
                assert_eq!(line_at(text, at), (line, next), "{text:?} at {at}");
            }
        }
    }
}
