//! `## Console messages` (list_console_messages): records `msgid=N [type] text (K args)`, with
//! ` [N times]` when upstream grouped repeats, `msgid=N [issue] title (count: n)` for issues, and
//! with `includeStackTraces` indented `  at …` / `  --- … ---` lines. Message text may span lines.
//!
//! Messages are judged by the bracketed type only, never by words in the text. Errors, warnings,
//! issues and assertions always stay. Everything hidden or trimmed is named by msgid in one
//! summary line; `get_console_message` still returns each in full.

use once_cell::sync::Lazy;
use regex::Regex;

use super::ids::format_id_ranges;
use super::lines::{split_last_newline, ListFiltered};

/// Per-level limits of the console filter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsoleLimits {
    /// Hide `debug` and `verbose` messages.
    pub hide_debug: bool,
    /// Hide a message that repeats the one before it (same type, same text up to numbers).
    pub collapse_similar: bool,
    /// Log-like messages (log, info, table, count, …) kept at most, the most recent ones.
    pub max_log_messages: usize,
    /// Stack trace lines kept per message before the rest is cut.
    pub max_stack_lines: usize,
}

impl Default for ConsoleLimits {
    /// Changes nothing.
    fn default() -> ConsoleLimits {
        ConsoleLimits {
            hide_debug: false,
            collapse_similar: false,
            max_log_messages: usize::MAX,
            max_stack_lines: usize::MAX,
        }
    }
}

static MESSAGE_LINE: Lazy<Regex> =
    Lazy::new(|| Regex::new(r"^msgid=(\d+) \[([A-Za-z]+)\]").expect("static regex"));
static TIMES_SUFFIX: Lazy<Regex> =
    Lazy::new(|| Regex::new(r" \[\d+ times\]$").expect("static regex"));
static DIGITS: Lazy<Regex> = Lazy::new(|| Regex::new(r"\d+").expect("static regex"));

const STACK_NOTE: &str = "Note: stack trace line and column numbers use 1-based indexing";

/// Types that always stay, whatever the level.
pub fn always_kept(message_type: &str) -> bool {
    matches!(
        message_type,
        "error" | "warn" | "warning" | "issue" | "assert"
    )
}

fn is_debug(message_type: &str) -> bool {
    matches!(message_type, "debug" | "verbose")
}

/// A stack line as upstream prints it (two spaces, then `at ` or `--- `).
fn is_stack_line(line: &str) -> bool {
    line.starts_with("  at ") || line.starts_with("  --- ")
}

struct Record<'a> {
    id: u64,
    message_type: &'a str,
    lines: Vec<&'a str>,
}

impl Record<'_> {
    /// Text after the type, without the repeat count and with numbers blanked.
    fn similarity_key(&self) -> String {
        let first = self.lines.first().copied().unwrap_or("");
        let text = first.split_once("] ").map_or("", |(_, t)| t);
        let text = TIMES_SUFFIX.replace(text, "");
        DIGITS.replace_all(&text, "#").into_owned()
    }

    /// Lines of the trailing stack trace.
    fn stack_len(&self) -> usize {
        self.lines
            .iter()
            .skip(1)
            .rev()
            .take_while(|l| is_stack_line(l))
            .count()
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Fate {
    Kept,
    HiddenDebug,
    HiddenSimilar,
    HiddenBeyondCap,
}

/// Filters a `## Console messages` section (header line included).
pub fn filter_console_list(section: &str, limits: &ConsoleLimits) -> Option<ListFiltered> {
    let (body, trailing_newline) = split_last_newline(section);
    let mut all_lines: Vec<&str> = body.split('\n').collect();
    let footer = if all_lines.len() > 1 && all_lines.last() == Some(&STACK_NOTE) {
        all_lines.pop()
    } else {
        None
    };
    let mut header: Vec<&str> = Vec::new();
    let mut records: Vec<Record> = Vec::new();
    for line in all_lines {
        if let Some(caps) = MESSAGE_LINE.captures(line) {
            let parsed = caps.get(1).and_then(|m| m.as_str().parse::<u64>().ok());
            if let (Some(id), Some(ty)) = (parsed, caps.get(2)) {
                records.push(Record {
                    id,
                    message_type: ty.as_str(),
                    lines: vec![line],
                });
                continue;
            }
        }
        match records.last_mut() {
            Some(record) => record.lines.push(line),
            None => header.push(line),
        }
    }

    let fates = decide_fates(&records, limits);
    let mut out: Vec<String> = header.iter().map(|s| s.to_string()).collect();
    let mut trimmed: Vec<u64> = Vec::new();
    for (record, fate) in records.iter().zip(&fates) {
        if *fate != Fate::Kept {
            continue;
        }
        let stack = record.stack_len();
        // Replacing a single line by a marker line saves nothing.
        if stack > limits.max_stack_lines.saturating_add(1) {
            let keep = record.lines.len() - stack + limits.max_stack_lines;
            out.extend(record.lines[..keep].iter().map(|s| s.to_string()));
            out.push(format!(
                "  … {} more stack lines",
                stack - limits.max_stack_lines
            ));
            trimmed.push(record.id);
        } else {
            out.extend(record.lines.iter().map(|s| s.to_string()));
        }
    }
    let hidden_of = |wanted: Fate| -> Vec<u64> {
        records
            .iter()
            .zip(&fates)
            .filter(|&(_, f)| *f == wanted)
            .map(|(r, _)| r.id)
            .collect()
    };
    let debug = hidden_of(Fate::HiddenDebug);
    let similar = hidden_of(Fate::HiddenSimilar);
    let beyond_cap = hidden_of(Fate::HiddenBeyondCap);
    if debug.is_empty() && similar.is_empty() && beyond_cap.is_empty() && trimmed.is_empty() {
        return None;
    }
    let hidden_count = debug.len() + similar.len() + beyond_cap.len();
    let mut parts = Vec::new();
    let mut name = |label: String, ids: &[u64]| {
        if !ids.is_empty() {
            parts.push(format!("{label} msgid={}", format_id_ranges(ids)));
        }
    };
    name(format!("{} debug/verbose", debug.len()), &debug);
    name(format!("{} repeats", similar.len()), &similar);
    name(
        format!(
            "{} older log/info (latest {} kept)",
            beyond_cap.len(),
            limits.max_log_messages
        ),
        &beyond_cap,
    );
    name("stack traces cut".to_string(), &trimmed);
    out.push(format!(
        "[hidden {} of {} messages: {}; get_console_message shows any in full]",
        hidden_count,
        records.len(),
        parts.join("; ")
    ));
    if let Some(note) = footer {
        out.push(note.to_string());
    }
    let mut text = out.join("\n");
    text.push_str(trailing_newline);
    let mut hidden_ids = debug;
    hidden_ids.extend(similar);
    hidden_ids.extend(beyond_cap);
    Some(ListFiltered { text, hidden_ids })
}

fn decide_fates(records: &[Record], limits: &ConsoleLimits) -> Vec<Fate> {
    let mut fates = vec![Fate::Kept; records.len()];
    let mut previous_key: Option<(&str, String)> = None;
    for (index, record) in records.iter().enumerate() {
        let key = (record.message_type, record.similarity_key());
        if always_kept(record.message_type) {
            previous_key = Some(key);
            continue;
        }
        if limits.hide_debug && is_debug(record.message_type) {
            fates[index] = Fate::HiddenDebug;
        } else if limits.collapse_similar && previous_key.as_ref() == Some(&key) {
            fates[index] = Fate::HiddenSimilar;
        }
        previous_key = Some(key);
    }
    // The cap keeps the most recent log-like messages: the ones the agent's last action caused.
    let log_like: Vec<usize> = (0..records.len())
        .filter(|&i| fates[i] == Fate::Kept)
        .filter(|&i| records.get(i).is_some_and(|r| !always_kept(r.message_type)))
        .collect();
    if log_like.len() > limits.max_log_messages {
        let excess = log_like.len() - limits.max_log_messages;
        for &i in &log_like[..excess] {
            fates[i] = Fate::HiddenBeyondCap;
        }
    }
    fates
}

#[cfg(test)]
mod tests {
    use super::*;

    fn moderate() -> ConsoleLimits {
        ConsoleLimits {
            hide_debug: true,
            collapse_similar: true,
            max_log_messages: usize::MAX,
            max_stack_lines: 2,
        }
    }

    #[test]
    fn filters_by_bracketed_type_only() {
        // The words "debug" and "trace" in an error's text change nothing.
        let section = "## Console messages\nShowing 1-3 of 3 (Page 1 of 1).\n\
            msgid=1 [error] debug trace failed (0 args)\n\
            msgid=2 [debug] poll 1 (2 args)\n\
            msgid=3 [log] [debug] not a debug message (1 args)";
        let out = filter_console_list(section, &moderate()).expect("filtered");
        assert_eq!(
            out.text,
            "## Console messages\nShowing 1-3 of 3 (Page 1 of 1).\n\
             msgid=1 [error] debug trace failed (0 args)\n\
             msgid=3 [log] [debug] not a debug message (1 args)\n\
             [hidden 1 of 3 messages: 1 debug/verbose msgid=2; get_console_message shows any in full]"
        );
        assert_eq!(out.hidden_ids, vec![2]);
    }

    #[test]
    fn collapses_repeats_but_never_errors() {
        let section = "## Console messages\n\
            msgid=1 [count] render: 1 (1 args)\nmsgid=2 [count] render: 2 (1 args)\n\
            msgid=3 [error] x 1 (0 args)\nmsgid=4 [error] x 2 (0 args)\n";
        let out = filter_console_list(section, &moderate()).expect("filtered");
        assert!(out.text.contains("msgid=1 [count]"));
        assert!(!out.text.contains("msgid=2 [count]"));
        assert!(out.text.contains("msgid=3 [error]") && out.text.contains("msgid=4 [error]"));
        assert!(out.text.ends_with("in full]\n"));
        assert_eq!(out.hidden_ids, vec![2]);
    }

    #[test]
    fn trims_long_stack_traces_and_keeps_the_footer_last() {
        let section = "## Console messages\nmsgid=7 [error] boom (0 args)\n  at a (x.js:1:1)\n\
            \x20 --- setTimeout ----\n  at b (x.js:2:2)\n  at c (x.js:3:3)\n  at d (x.js:4:4)\n\
            Note: stack trace line and column numbers use 1-based indexing";
        let out = filter_console_list(section, &moderate()).expect("filtered");
        assert_eq!(
            out.text,
            "## Console messages\nmsgid=7 [error] boom (0 args)\n  at a (x.js:1:1)\n\
             \x20 --- setTimeout ----\n  … 3 more stack lines\n\
             [hidden 0 of 1 messages: stack traces cut msgid=7; get_console_message shows any in full]\n\
             Note: stack trace line and column numbers use 1-based indexing"
        );
        assert!(out.hidden_ids.is_empty());
    }

    #[test]
    fn caps_log_messages_keeping_the_latest() {
        let mut section = String::from("## Console messages");
        for id in 1..=5 {
            section.push_str(&format!(
                "\nmsgid={id} [log] step {} of many {id}x",
                "a".repeat(id)
            ));
        }
        let limits = ConsoleLimits {
            max_log_messages: 2,
            ..moderate()
        };
        let out = filter_console_list(&section, &limits).expect("filtered");
        assert_eq!(out.hidden_ids, vec![1, 2, 3]);
        assert!(out.text.contains("msgid=4 ") && out.text.contains("msgid=5 "));
        assert!(filter_console_list(&section, &ConsoleLimits::default()).is_none());
    }
}
