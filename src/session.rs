//! State the proxy keeps across one MCP session: the options, which tools declared an
//! `outputSchema`, and running totals for the stats (`crate::stats`).

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use serde_json::Value;

use crate::describe::{self, CompressOptions};
use crate::error::{FilterError, FilterResult};
use crate::level::Level;
use crate::proxy_tools;
use crate::result::{self, FilterFigures, ResultLimits, ResultOptions, SnapshotCapture};
use crate::snapshot::delta::{DeltaInput, Sent, SentPage};
use crate::snapshot::SnapshotLimits;
use crate::snapshot_cache::{SnapshotCache, DEFAULT_CACHE_BYTES};
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
    /// Level of the description compressor (list results).
    pub describe_level: Level,
    /// Add `expand_snapshot` / `search_snapshot` to `tools/list` and answer them.
    pub proxy_tools: bool,
    /// Bytes of raw snapshots kept for the proxy tools.
    pub cache_bytes: usize,
    /// Also write each raw snapshot to a file here and name it in the result.
    pub raw_snapshots_dir: Option<PathBuf>,
    /// Send a later snapshot of a page the agent holds as a delta (`snapshot::delta`); only at
    /// `moderate` and `aggressive`, and only with the proxy tools (a delta's unchanged lines
    /// are expanded through them).
    pub snapshot_deltas: bool,
}

impl SessionOptions {
    pub fn for_level(level: Level) -> SessionOptions {
        SessionOptions {
            level,
            snapshot: SnapshotLimits::for_level(level),
            limits: ResultLimits::for_level(level),
            compact_schemas: false,
            stats: StatsMode::default(),
            describe_level: level,
            proxy_tools: Self::proxy_tools_default(level),
            cache_bytes: DEFAULT_CACHE_BYTES,
            raw_snapshots_dir: None,
            snapshot_deltas: Self::snapshot_deltas_default(level),
        }
    }

    /// Deltas pay where a level already sends a thinned page; `light` stays lossless.
    pub fn snapshot_deltas_default(level: Level) -> bool {
        level >= Level::Moderate
    }

    /// The proxy tools only pay where a level hides something.
    pub fn proxy_tools_default(level: Level) -> bool {
        level >= Level::Moderate
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
    /// Raw snapshots for the proxy tools.
    cache: SnapshotCache,
    /// Proxy tools whose names the upstream's last `tools/list` also used: those are the
    /// upstream's, never intercepted.
    shadowed_proxy_tools: HashSet<String>,
    /// Raw snapshot files written so far (numbers the next file).
    raw_snapshot_files: u64,
    /// What the filters did to the last `tools/call` result (`None` when it was unchanged).
    last_figures: Option<FilterFigures>,
    /// Snapshots taken of each page so far (numbers the next one in a delta's header).
    snapshot_numbers: HashMap<String, u64>,
    /// How the last snapshot was sent, with deltas on.
    last_sent: Option<Sent>,
}

impl Session {
    pub fn new(options: SessionOptions) -> Session {
        Session {
            tools_with_output_schema: HashSet::new(),
            totals: SessionTotals::default(),
            pending_stats_line: None,
            cache: SnapshotCache::new(options.cache_bytes),
            shadowed_proxy_tools: HashSet::new(),
            raw_snapshot_files: 0,
            last_figures: None,
            snapshot_numbers: HashMap::new(),
            last_sent: None,
            options,
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
        let filtered = self.filter_with(tool_name, arguments_json, |options, capture| {
            result::filter_tool_result_capturing(tool_name, result_json, options, capture)
        })?;
        Ok(filtered.map(|f| f.into_filtered_result().json))
    }

    /// `filter_tool_result` on a whole JSON-RPC response (as the upstream sent it): returns the
    /// response with its result filtered, `Ok(None)` to forward the original. The proxy then
    /// neither re-serializes the result for the filter nor parses the filtered one.
    pub fn filter_tool_response(
        &mut self,
        tool_name: &str,
        response_json: &str,
        arguments_json: Option<&str>,
    ) -> FilterResult<Option<String>> {
        let mut envelope = None;
        let filtered = self.filter_with(tool_name, arguments_json, |options, capture| {
            if options.level == Level::Off || !result::tools::is_content_heavy(tool_name) {
                return Ok(None);
            }
            let Value::Object(mut response) = serde_json::from_str::<Value>(response_json)
                .map_err(|e| FilterError::InvalidArgument(format!("response is not JSON: {e}")))?
            else {
                return Err(FilterError::InvalidArgument(
                    "response is not a JSON object".to_string(),
                ));
            };
            // Taken out in place: the response keeps its key order.
            let result = response
                .get_mut("result")
                .map(Value::take)
                .ok_or_else(|| FilterError::InvalidArgument("response has no result".into()))?;
            envelope = Some(response);
            result::filter_tool_result_object(tool_name, result, options, capture)
        })?;
        let (Some(filtered), Some(mut response)) = (filtered, envelope) else {
            return Ok(None);
        };
        if let Some(slot) = response.get_mut("result") {
            *slot = Value::Object(filtered.result);
        }
        Ok(Some(Value::Object(response).to_string()))
    }

    /// The session's part of filtering one result: options from the arguments, the snapshot
    /// cache, totals and the stats line; `filter` runs the filters.
    fn filter_with(
        &mut self,
        tool_name: &str,
        arguments_json: Option<&str>,
        filter: impl FnOnce(
            &ResultOptions,
            &mut SnapshotCapture<'_>,
        ) -> FilterResult<Option<result::FilteredValue>>,
    ) -> FilterResult<Option<result::FilteredValue>> {
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
        self.last_figures = None;
        self.last_sent = None;
        let page = arguments_json
            .and_then(|a| serde_json::from_str::<Value>(a).ok())
            .and_then(|a| a.as_object().and_then(proxy_tools::page_key))
            .unwrap_or_default();
        let number = self.snapshot_numbers.get(&page).copied().unwrap_or(0) + 1;
        let mut capture = SnapshotCapture {
            deltas: self.deltas_on().then(|| DeltaInput {
                sent: self.cache.sent(&page),
                number,
            }),
            ..SnapshotCapture::default()
        };
        let filtered = filter(&options, &mut capture);
        let SnapshotCapture {
            raw,
            holds,
            sent,
            full_bytes,
            sent_bytes,
            ..
        } = capture;
        let filtered = filtered?;
        let mut notes = Vec::new();
        if let Some(raw) = raw {
            self.snapshot_numbers.insert(page.clone(), number);
            notes.extend(self.keep_raw_snapshot(&page, raw, holds));
        }
        let Some(mut filtered) = filtered else {
            return Ok(None);
        };
        if let Some(Sent::Delta { .. }) = sent {
            self.totals.record_delta(full_bytes, sent_bytes);
        }
        self.last_sent = sent;
        for note in &notes {
            filtered.append_line(note);
        }
        self.last_figures = Some(filtered.figures);
        let (bytes_in, bytes_out) = (filtered.figures.bytes_in(), filtered.figures.bytes_out());
        self.totals.record(bytes_in, bytes_out);
        let line = match sent {
            Some(Sent::Delta { .. }) => stats::delta_stats_line(bytes_in, bytes_out),
            _ => stats::stats_line(bytes_in, bytes_out, &self.totals),
        };
        match self.options.stats {
            StatsMode::Inline => filtered.append_line(&line),
            StatsMode::Stderr => self.pending_stats_line = Some(line),
            StatsMode::Off => {}
        }
        Ok(Some(filtered))
    }

    /// Caches a raw snapshot for the proxy tools and writes it to the raw snapshots directory;
    /// returns the lines to add to the result (the file written, or why it was not).
    fn keep_raw_snapshot(
        &mut self,
        page: &str,
        raw: String,
        holds: Option<SentPage>,
    ) -> Vec<String> {
        let page = Some(page).filter(|p| !p.is_empty());
        let mut notes = Vec::new();
        if let Some(dir) = self.options.raw_snapshots_dir.clone() {
            self.raw_snapshot_files += 1;
            let path = dir.join(raw_snapshot_file_name(self.raw_snapshot_files, page));
            notes.push(match std::fs::write(&path, &raw) {
                Ok(()) => format!("[raw snapshot: {}]", path.display()),
                Err(e) => format!("[raw snapshot not written to {}: {e}]", path.display()),
            });
        }
        if self.options.proxy_tools {
            // A snapshot larger than the whole cache is not kept: the tools then say so.
            let _ = self.cache.put(page.unwrap_or(""), raw, holds);
        }
        notes
    }

    /// Deltas need the level, the option, and `expand_snapshot` answered by the proxy (an
    /// unchanged line is expanded through it).
    fn deltas_on(&self) -> bool {
        self.options.snapshot_deltas
            && self.options.level >= Level::Moderate
            && self.is_proxy_tool(proxy_tools::EXPAND_SNAPSHOT)
    }

    /// How the last snapshot was sent with deltas on (`None`: deltas off, or no snapshot).
    pub fn last_sent(&self) -> Option<Sent> {
        self.last_sent
    }

    /// True when `tool_name` is one of the proxy's own tools, answered by `call_proxy_tool`.
    pub fn is_proxy_tool(&self, tool_name: &str) -> bool {
        self.options.proxy_tools
            && proxy_tools::NAMES.contains(&tool_name)
            && !self.shadowed_proxy_tools.contains(tool_name)
    }

    /// Answers a call of one of the proxy's tools: a `CallToolResult` as JSON.
    pub fn call_proxy_tool(
        &mut self,
        tool_name: &str,
        arguments_json: Option<&str>,
    ) -> FilterResult<String> {
        if !self.is_proxy_tool(tool_name) {
            return Err(FilterError::InvalidArgument(format!(
                "{tool_name:?} is not a proxy tool of this session"
            )));
        }
        let arguments = match arguments_json {
            Some(a) => serde_json::from_str::<Value>(a).map_err(|e| {
                FilterError::InvalidArgument(format!("arguments are not JSON: {e}"))
            })?,
            None => Value::Null,
        };
        let whole_page = crate::snapshot::SnapshotOptions {
            level: self.options.level,
            limits: self.options.snapshot.clone(),
        };
        let answer = proxy_tools::call(tool_name, &arguments, &self.cache, &whole_page);
        let whole = tool_name == proxy_tools::EXPAND_SNAPSHOT
            && arguments.get("uid").is_none_or(Value::is_null)
            && answer.get("isError").is_none();
        if whole {
            // The agent now holds the whole page: deltas in a row count from here.
            let page = arguments
                .as_object()
                .and_then(proxy_tools::page_key)
                .or_else(|| self.cache.get(None).ok().map(|s| s.page.clone()))
                .unwrap_or_default();
            self.cache.reset_deltas_in_row(&page);
        }
        Ok(answer.to_string())
    }

    /// What the filters did to the last `tools/call` result, `None` when it passed unchanged.
    pub fn last_figures(&self) -> Option<FilterFigures> {
        self.last_figures
    }

    /// Bytes of raw snapshots held for the proxy tools.
    pub fn cached_snapshot_bytes(&self) -> usize {
        self.cache.bytes()
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
        let options = CompressOptions {
            level: self.options.describe_level,
            compact_schemas: self.options.compact_schemas,
        };
        let compressed = describe::compress_list_result(method, result_json, &options)?;
        if method != "tools/list" {
            return Ok(compressed);
        }
        let mut list: Value = serde_json::from_str(compressed.as_deref().unwrap_or(result_json))
            .map_err(|e| FilterError::InvalidArgument(format!("result is not JSON: {e}")))?;
        self.remember_output_schemas(&list);
        // Paginated lists get the proxy's tools once, on their last page.
        let last_page = list.get("nextCursor").is_none_or(Value::is_null);
        if !self.options.proxy_tools || !last_page {
            return Ok(compressed);
        }
        let added = proxy_tools::add_to_tools_list(&mut list);
        self.shadowed_proxy_tools = proxy_tools::NAMES
            .iter()
            .filter(|name| !added.contains(name))
            .map(|name| name.to_string())
            .collect();
        if added.is_empty() {
            return Ok(compressed);
        }
        Ok(Some(list.to_string()))
    }

    fn remember_output_schemas(&mut self, result: &Value) {
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

/// `snapshot-<n>.txt` or `snapshot-<n>-page-<id>.txt`: the page id keeps only ASCII letters and
/// digits, so nothing the upstream or a page sends can choose where the file goes.
fn raw_snapshot_file_name(n: u64, page: Option<&str>) -> String {
    let page: String = page
        .unwrap_or_default()
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .take(32)
        .collect();
    if page.is_empty() {
        format!("snapshot-{n:06}.txt")
    } else {
        format!("snapshot-{n:06}-page-{page}.txt")
    }
}
