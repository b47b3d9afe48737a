//! `tools/call` results (`CallToolResult` JSON): which tools are content-heavy, how their text
//! splits into sections, and which filter each section gets.
//!
//! SKELETON: the section splitter and the network/console/evaluate filters land with the
//! whole-response issue; until then only the snapshot section of known tools is filtered.

use serde_json::Value;

use crate::error::{FilterError, FilterResult};
use crate::level::Level;
use crate::snapshot::{self, SnapshotLimits, SnapshotOptions};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResultOptions {
    pub level: Level,
    pub snapshot: SnapshotLimits,
    /// The tool declared an `outputSchema` in `tools/list`: `structuredContent` must stay valid
    /// against it.
    pub has_output_schema: bool,
}

impl ResultOptions {
    pub fn for_level(level: Level) -> ResultOptions {
        ResultOptions {
            level,
            snapshot: SnapshotLimits::for_level(level),
            has_output_schema: false,
        }
    }
}

/// A filtered result and the figures the stats line is made of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilteredResult {
    pub json: String,
    /// UTF-8 bytes of the text blocks before and after.
    pub text_bytes_in: usize,
    pub text_bytes_out: usize,
    pub uids_hidden: usize,
}

const SNAPSHOT_HEADER: &str = "## Latest page snapshot\n";

/// Filters a `CallToolResult`; `Ok(None)` when nothing changed (the caller forwards the original).
pub fn filter_tool_result(
    _tool_name: &str,
    result_json: &str,
    options: &ResultOptions,
) -> FilterResult<Option<FilteredResult>> {
    if options.level == Level::Off {
        return Ok(None);
    }
    let mut result: Value = serde_json::from_str(result_json)
        .map_err(|e| FilterError::InvalidArgument(format!("result is not JSON: {e}")))?;
    let Some(content) = result.get_mut("content").and_then(Value::as_array_mut) else {
        return Ok(None);
    };
    let snapshot_options = SnapshotOptions {
        level: options.level,
        limits: options.snapshot.clone(),
    };
    let (mut bytes_in, mut bytes_out, mut hidden, mut changed) = (0, 0, 0, false);
    for block in content.iter_mut() {
        if block.get("type").and_then(Value::as_str) != Some("text") {
            continue;
        }
        let Some(text) = block.get("text").and_then(Value::as_str) else {
            continue;
        };
        bytes_in += text.len();
        let Some(start) = text.find(SNAPSHOT_HEADER) else {
            bytes_out += text.len();
            continue;
        };
        let body_start = start + SNAPSHOT_HEADER.len();
        let filtered = snapshot::filter_snapshot(&text[body_start..], &snapshot_options);
        let new_text = format!("{}{}", &text[..body_start], filtered.text);
        bytes_out += new_text.len();
        hidden += filtered.uids_hidden;
        if new_text != text {
            changed = true;
            block["text"] = Value::String(new_text);
        }
    }
    if !changed {
        return Ok(None);
    }
    Ok(Some(FilteredResult {
        json: result.to_string(),
        text_bytes_in: bytes_in,
        text_bytes_out: bytes_out,
        uids_hidden: hidden,
    }))
}
