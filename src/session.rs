//! State the proxy keeps across one MCP session: the options, which tools declared an
//! `outputSchema`, and running totals for the stats (`crate::stats`).

use std::collections::HashSet;

use serde_json::Value;

use crate::describe::{self, CompressOptions};
use crate::error::FilterResult;
use crate::level::Level;
use crate::result::{self, ResultLimits, ResultOptions};
use crate::snapshot::SnapshotLimits;
use crate::stats::{self, SavingsTotals, StatsMode};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionOptions {
    pub level: Level,
    pub snapshot: SnapshotLimits,
    /// Network, console and evaluate_script limits.
    pub limits: ResultLimits,
    pub compact_schemas: bool,
    /// Where each filtered result's stats line goes.
    pub stats: StatsMode,
}

impl SessionOptions {
    pub fn for_level(level: Level) -> SessionOptions {
        SessionOptions {
            level,
            snapshot: SnapshotLimits::for_level(level),
            limits: ResultLimits::for_level(level),
            compact_schemas: false,
            stats: StatsMode::default(),
        }
    }
}

/// Running totals over the `tools/call` results of a session.
pub type SessionTotals = SavingsTotals;

#[derive(Debug)]
pub struct Session {
    options: SessionOptions,
    tools_with_output_schema: HashSet<String>,
    totals: SessionTotals,
    /// The last stats line, in `stderr` mode, until the proxy takes it.
    pending_stats_line: Option<String>,
}

impl Session {
    pub fn new(options: SessionOptions) -> Session {
        Session {
            options,
            tools_with_output_schema: HashSet::new(),
            totals: SessionTotals::default(),
            pending_stats_line: None,
        }
    }

    pub fn options(&self) -> &SessionOptions {
        &self.options
    }

    pub fn totals(&self) -> SessionTotals {
        self.totals
    }

    /// Filters one `tools/call` result; `Ok(None)` means forward the original.
    /// `arguments_json` is the request's `arguments` (the filters honour `resourceTypes` and
    /// `types`). In `inline` stats mode the result's text carries the stats line; in `stderr`
    /// mode `take_stats_line` returns it.
    pub fn filter_tool_result(
        &mut self,
        tool_name: &str,
        result_json: &str,
        arguments_json: Option<&str>,
    ) -> FilterResult<Option<String>> {
        let options = ResultOptions {
            level: self.options.level,
            snapshot: self.options.snapshot.clone(),
            limits: self.options.limits.clone(),
            has_output_schema: self.tools_with_output_schema.contains(tool_name),
            requested_resource_types: Vec::new(),
            requested_console_types: Vec::new(),
        }
        .with_arguments(arguments_json);
        self.totals.results += 1;
        let Some(mut filtered) =
            result::filter_tool_result_value(tool_name, result_json, &options)?
        else {
            return Ok(None);
        };
        let (bytes_in, bytes_out) = (filtered.figures.bytes_in(), filtered.figures.bytes_out());
        self.totals.record(bytes_in, bytes_out);
        let line = stats::stats_line(bytes_in, bytes_out, &self.totals);
        match self.options.stats {
            StatsMode::Inline => filtered.append_line(&line),
            StatsMode::Stderr => self.pending_stats_line = Some(line),
            StatsMode::Off => {}
        }
        Ok(Some(filtered.into_filtered_result().json))
    }

    /// The stats line of the last filtered result in `stderr` mode, once (`None` otherwise).
    pub fn take_stats_line(&mut self) -> Option<String> {
        self.pending_stats_line.take()
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
        stats::summary_line(&self.totals)
    }
}
