//! State the proxy keeps across one MCP session: the options, which tools declared an
//! `outputSchema`, and running totals for the stats.

use std::collections::HashSet;

use serde_json::Value;

use crate::describe::{self, CompressOptions};
use crate::error::FilterResult;
use crate::level::Level;
use crate::result::{self, ResultOptions};
use crate::snapshot::SnapshotLimits;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionOptions {
    pub level: Level,
    pub snapshot: SnapshotLimits,
    pub compact_schemas: bool,
}

impl SessionOptions {
    pub fn for_level(level: Level) -> SessionOptions {
        SessionOptions {
            level,
            snapshot: SnapshotLimits::for_level(level),
            compact_schemas: false,
        }
    }
}

/// Running totals over the filtered `tools/call` results of a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SessionTotals {
    pub calls: u64,
    pub bytes_in: u64,
    pub bytes_out: u64,
}

#[derive(Debug)]
pub struct Session {
    options: SessionOptions,
    tools_with_output_schema: HashSet<String>,
    totals: SessionTotals,
}

impl Session {
    pub fn new(options: SessionOptions) -> Session {
        Session {
            options,
            tools_with_output_schema: HashSet::new(),
            totals: SessionTotals::default(),
        }
    }

    pub fn options(&self) -> &SessionOptions {
        &self.options
    }

    pub fn totals(&self) -> SessionTotals {
        self.totals
    }

    /// Filters one `tools/call` result; `Ok(None)` means forward the original.
    /// `arguments_json` is the request's `arguments` (used to know which page a snapshot is of).
    pub fn filter_tool_result(
        &mut self,
        tool_name: &str,
        result_json: &str,
        _arguments_json: Option<&str>,
    ) -> FilterResult<Option<String>> {
        let options = ResultOptions {
            level: self.options.level,
            snapshot: self.options.snapshot.clone(),
            has_output_schema: self.tools_with_output_schema.contains(tool_name),
        };
        let filtered = result::filter_tool_result(tool_name, result_json, &options)?;
        Ok(filtered.map(|f| {
            self.totals.calls += 1;
            self.totals.bytes_in += f.text_bytes_in as u64;
            self.totals.bytes_out += f.text_bytes_out as u64;
            f.json
        }))
    }

    /// Compresses a list result; for `tools/list` it also remembers which tools declare an
    /// `outputSchema`, whatever the level.
    pub fn compress_list_result(
        &mut self,
        method: &str,
        result_json: &str,
    ) -> FilterResult<Option<String>> {
        if method == "tools/list" {
            self.remember_output_schemas(result_json);
        }
        let options = CompressOptions {
            level: self.options.level,
            compact_schemas: self.options.compact_schemas,
        };
        describe::compress_list_result(method, result_json, &options)
    }

    fn remember_output_schemas(&mut self, result_json: &str) {
        let Ok(result) = serde_json::from_str::<Value>(result_json) else {
            return;
        };
        let Some(tools) = result.get("tools").and_then(Value::as_array) else {
            return;
        };
        for tool in tools {
            if let Some(name) = tool.get("name").and_then(Value::as_str) {
                if tool.get("outputSchema").is_some_and(Value::is_object) {
                    self.tools_with_output_schema.insert(name.to_string());
                } else {
                    self.tools_with_output_schema.remove(name);
                }
            }
        }
    }

    /// One line for stderr when the proxy exits.
    pub fn summary(&self) -> String {
        let t = self.totals;
        format!(
            "session: {} filtered calls, {} bytes in, {} bytes out",
            t.calls, t.bytes_in, t.bytes_out
        )
    }
}
