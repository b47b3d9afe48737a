//! State the proxy keeps across one MCP session: the options, which tools declared an
//! `outputSchema`, and running totals for the stats (`crate::stats`).

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::path::PathBuf;

use serde_json::value::RawValue;
use serde_json::Value;

use crate::describe::{self, CompressOptions};
use crate::error::{FilterError, FilterResult};
use crate::held::{Held, DEFAULT_CACHE_BYTES};
use crate::level::Level;
use crate::proxy_tools;
use crate::result::budget::cut::{self, Bound};
use crate::result::{self, FilterFigures, ResultLimits, ResultOptions, SnapshotCapture};
use crate::snapshot::delta::{Sent, SentPage};
use crate::snapshot::{params, SnapshotLimits};
use crate::stats::{self, SavingsTotals, Shrink, StatsMode};

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
    /// The token budget of every result the client receives (`crate::result::budget`); 0: none.
    pub max_tokens: usize,
    /// The character bound of every result's text the client receives (UTF-16 code units), a
    /// second limit of the token budget (none without one); 0: none.
    pub max_chars: usize,
    /// Drop `structuredContent` from every `tools/call` result (the proxy asked upstream for it).
    pub drop_structured_content: bool,
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
            proxy_tools: Self::proxy_tools_default(level, params::DEFAULT_MAX_TOKENS),
            cache_bytes: DEFAULT_CACHE_BYTES,
            raw_snapshots_dir: None,
            snapshot_deltas: Self::snapshot_deltas_default(level),
            max_tokens: params::DEFAULT_MAX_TOKENS,
            max_chars: params::DEFAULT_MAX_CHARS,
            drop_structured_content: false,
        }
    }

    /// Deltas pay where a level already sends a thinned page; `light` stays lossless.
    pub fn snapshot_deltas_default(level: Level) -> bool {
        level >= Level::Moderate
    }

    /// The proxy tools only pay where something may be hidden: at a lossy level, or at `light`
    /// under a token budget (which gives way with the moderate passes and cuts that only the
    /// proxy tools bring back).
    pub fn proxy_tools_default(level: Level, max_tokens: usize) -> bool {
        level >= Level::Moderate || (level == Level::Light && max_tokens > 0)
    }

    /// Whether this session may send deltas: the level, the option and the proxy tools
    /// (an unchanged line is expanded through `expand_snapshot`).
    pub fn deltas_possible(&self) -> bool {
        self.snapshot_deltas && self.level >= Level::Moderate && self.proxy_tools
    }

    /// Whether anything is rewritten at all: results, or the lists' descriptions.
    pub fn filters_anything(&self) -> bool {
        self.level != Level::Off || self.describe_level != Level::Off
    }

    /// What one result the client receives may cost, whole.
    fn bound(&self) -> Bound {
        result::budget::whole_bound(self.max_tokens, self.max_chars)
    }
}

/// Running totals over the `tools/call` results of a session.
pub type SessionTotals = SavingsTotals;

#[derive(Debug)]
pub struct Session {
    options: SessionOptions,
    /// Tools that declared an `outputSchema`, each with the key of the one plain string it
    /// declares, if that is all (`result::structured::plain_text_key`).
    tools_with_output_schema: HashMap<String, Option<String>>,
    totals: SessionTotals,
    /// The same totals per upstream tool, for the ledger (`mcp-snapshot-filter stats`).
    tool_totals: BTreeMap<String, SessionTotals>,
    /// The last stats line, in `stderr` mode, until the proxy takes it.
    pending_stats_line: Option<String>,
    /// Why the filter could not read the last result it sent cut to the bound instead
    /// (`within_bound_unread`), until the proxy takes it to log.
    pending_failure: Option<FilterError>,
    /// What the current client holds (`crate::era` parks the others').
    held: Held,
    /// Proxy tools whose names the upstream's last `tools/list` also used: those are the
    /// upstream's, never intercepted.
    shadowed_proxy_tools: HashSet<String>,
    /// Whether the last complete `tools/list` got the proxy's tools (`None` before the first):
    /// only an upstream with a tool that returns snapshots gets them, and where it has none the
    /// calls go to the upstream like any other.
    proxy_tools_listed: Option<bool>,
    /// A page of the `tools/list` being paged through had a tool that returns snapshots.
    snapshot_tool_on_earlier_pages: bool,
    /// Raw snapshot files written so far (numbers the next file).
    raw_snapshot_files: u64,
    /// Part of every raw snapshot file name, unique to this session (see `session_tag`).
    raw_snapshot_tag: String,
    /// What the filters did to the last `tools/call` result (`None` when it was unchanged).
    last_figures: Option<FilterFigures>,
    /// Ids given to cut texts so far, over all clients: an id is never given twice, so a
    /// marker an agent still holds never reads another text (its client's state may have
    /// been forgotten and begun afresh).
    cut_result_ids: u64,
    /// Requests whose uids went upstream renumbered (`uid_requests`), by id (JSON text),
    /// oldest first: each uid sent with the one the agent named, for the error answering it.
    rewritten: VecDeque<(String, Vec<(String, String)>)>,
    /// The line the next `tools/call` result carries after the upstream restarted or
    /// reconnected (`crate::upstream_reset`).
    notice: Option<String>,
}

/// Rewritten requests remembered until answered, at most (a request never answered is
/// forgotten, oldest first).
const MAX_REWRITTEN: usize = 256;

impl Session {
    pub fn new(options: SessionOptions) -> Session {
        Session {
            tools_with_output_schema: HashMap::new(),
            totals: SessionTotals::default(),
            tool_totals: BTreeMap::new(),
            pending_stats_line: None,
            pending_failure: None,
            held: Held::new(options.cache_bytes),
            shadowed_proxy_tools: HashSet::new(),
            proxy_tools_listed: None,
            snapshot_tool_on_earlier_pages: false,
            raw_snapshot_files: 0,
            raw_snapshot_tag: session_tag(),
            last_figures: None,
            cut_result_ids: 0,
            rewritten: VecDeque::new(),
            notice: None,
            options,
        }
    }

    /// What the current client holds; `crate::era` swaps another client's in (one
    /// `mem::swap`), so the options, totals, tools and cut ids stay the session's.
    pub(crate) fn held_mut(&mut self) -> &mut Held {
        &mut self.held
    }

    /// What the current client holds.
    pub fn held(&self) -> &Held {
        &self.held
    }

    /// A client's request line with the uids its page renumbered since the agent was shown
    /// them replaced by their current ones (`uid_requests`); `None`: forward it as it came.
    /// `id_json` (the request id's exact text) is remembered with them until its answer is
    /// routed (`write_back`).
    pub fn rewrite_request(&mut self, id_json: &str, line: &str) -> Option<String> {
        let rewritten = crate::uid_requests::rewrite_request(line, &self.held)?;
        self.rewritten.retain(|(id, _)| id != id_json);
        self.rewritten
            .push_back((id_json.to_string(), rewritten.uids));
        while self.rewritten.len() > MAX_REWRITTEN {
            self.rewritten.pop_front();
        }
        Some(rewritten.line)
    }

    /// The answer to request `id_json` (`line`, as it is about to go to the client) with the
    /// uids its request had rewritten written back as the agent's, when it is an error that
    /// names them; `None`: send it as it is.
    pub fn write_back(&mut self, id_json: &str, line: &str) -> Option<String> {
        let at = self.rewritten.iter().position(|(id, _)| id == id_json)?;
        let (_, uids) = self.rewritten.remove(at)?;
        crate::uid_requests::write_back(line, &uids)
    }

    /// The upstream restarted, or its browser reconnected: its uids may now name other
    /// elements, so no uid is matched to what was sent before and every page's next snapshot
    /// is whole (this client's; `crate::era::Era::upstream_restarted` does every client's).
    pub fn forget_identity(&mut self) {
        self.held.forget_identity();
        self.rewritten.clear();
    }

    pub fn options(&self) -> &SessionOptions {
        &self.options
    }

    pub fn totals(&self) -> SessionTotals {
        self.totals
    }

    /// The session's totals per upstream tool (tools whose results reached the filter).
    pub fn tool_totals(&self) -> &BTreeMap<String, SessionTotals> {
        &self.tool_totals
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
        });
        match filtered {
            Ok(filtered) => Ok(filtered.map(|f| f.into_filtered_result().json)),
            Err(e) => self
                .within_bound_unread(tool_name, result_json, e)
                .map(Some),
        }
    }

    /// `filter_tool_result` on a whole JSON-RPC response (as the upstream sent it): returns the
    /// response with its result filtered, `Ok(None)` to forward the original. The proxy then
    /// neither re-serializes the result for the filter nor parses the filtered one. Only the
    /// result's text is replaced: the id and every other member keep their exact text (an id
    /// such as 12345678901234567891 or 1E400 would not survive a round trip through `Value`).
    pub fn filter_tool_response(
        &mut self,
        tool_name: &str,
        response_json: &str,
        arguments_json: Option<&str>,
    ) -> FilterResult<Option<String>> {
        self.filter_tool_response_at(tool_name, response_json, None, arguments_json)
    }

    /// `filter_tool_response` given where the `result` member's value lies in `response_json`
    /// (`crate::envelope::peek_response` read it already), or `None` to find it here.
    pub fn filter_tool_response_at(
        &mut self,
        tool_name: &str,
        response_json: &str,
        span: Option<std::ops::Range<usize>>,
        arguments_json: Option<&str>,
    ) -> FilterResult<Option<String>> {
        let mut result_span = None;
        let filtered = self.filter_with(tool_name, arguments_json, |options, capture| {
            let heavy = result::tools::is_content_heavy(tool_name);
            if options.level == Level::Off
                || !(heavy || options.drop_structured_content || options.budgeted())
            {
                return Ok(None);
            }
            if !heavy && !result::budget::needs_reading(response_json.len(), options) {
                return Ok(None);
            }
            let span = match span {
                Some(span) => span,
                None => self::result_span(response_json)?,
            };
            let result_json = &response_json[span.clone()];
            result_span = Some(span);
            result::filter_tool_result_text(tool_name, result_json, options, capture, |e| {
                FilterError::NotJson {
                    what: "response result",
                    reason: e.to_string(),
                }
            })
        });
        let filtered = match (filtered, result_span.clone()) {
            (Ok(filtered), _) => filtered,
            (Err(e), Some(span)) => {
                let result_json =
                    self.within_bound_unread(tool_name, &response_json[span.clone()], e)?;
                return Ok(Some(splice(response_json, span, &result_json)));
            }
            (Err(e), None) => return Err(e),
        };
        let (Some(filtered), Some(span)) = (filtered, result_span) else {
            return Ok(None);
        };
        let result_json = result::json_text(&Value::Object(filtered.result));
        Ok(Some(splice(response_json, span, &result_json)))
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
            has_output_schema: self.tools_with_output_schema.contains_key(tool_name),
            text_schema_key: self
                .tools_with_output_schema
                .get(tool_name)
                .cloned()
                .flatten(),
            drop_structured_content: self.options.drop_structured_content,
            requested_resource_types: Vec::new(),
            requested_console_types: Vec::new(),
            max_tokens: self.result_bound_limits().0,
            max_chars: self.result_bound_limits().1,
            // Only where read_result is listed (and so answered): else the marker says so.
            read_id: self
                .is_proxy_tool(proxy_tools::READ_RESULT)
                .then(|| format!("r{}", self.cut_result_ids + 1)),
        }
        .with_arguments(arguments_json);
        self.last_figures = None;
        self.held.start_answer();
        let page = arguments_json
            .and_then(|a| serde_json::from_str::<Value>(a).ok())
            .and_then(|a| a.as_object().and_then(proxy_tools::page_key))
            .unwrap_or_default();
        let number = self.held.next_number(&page);
        let mut capture = SnapshotCapture {
            deltas: self.deltas_on().then(|| self.held.delta_input(&page)),
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
        self.count_result(tool_name);
        let mut notes = Vec::new();
        if let Some(raw) = raw {
            self.held.count_snapshot(&page, number);
            notes.extend(self.keep_raw_snapshot(&page, raw, holds));
        }
        let Some(mut filtered) = filtered else {
            return Ok(None);
        };
        if let Some(Sent::Delta { .. }) = sent {
            self.totals.record_delta(full_bytes, sent_bytes);
            if let Some(t) = self.tool_totals.get_mut(tool_name) {
                t.record_delta(full_bytes, sent_bytes);
            }
        }
        self.held.set_last_sent(sent);
        if !filtered.text_changed {
            // Only the structuredContent the proxy asked for went: nothing to report.
            return Ok(Some(filtered));
        }
        let budget_step = filtered.budget.as_mut().map(|note| {
            if let (Some(text), Some(id)) = (note.cut_text.take(), options.read_id.as_deref()) {
                self.keep_cut_text(id, text);
            }
            note.step
        });
        let bound = self.result_bound();
        for note in &notes {
            filtered.append_line_within(note, bound);
        }
        let mut figures = filtered.figures;
        if self.options.drop_structured_content {
            // "Before" is what the client would have received without the proxy: not the
            // structuredContent the proxy itself asked upstream for (and drops).
            figures.structured_bytes_removed = 0;
            figures.structured_tokens_removed = 0;
        }
        self.last_figures = Some(figures);
        let shrink = Shrink {
            bytes_in: figures.bytes_in() as u64,
            bytes_out: figures.bytes_out() as u64,
            tokens_in: figures.tokens_in() as u64,
            tokens_out: figures.tokens_out() as u64,
        };
        self.totals.record(shrink);
        if let Some(t) = self.tool_totals.get_mut(tool_name) {
            t.record(shrink);
        }
        let mut body = stats::stats_body(shrink, &self.totals);
        if let Some(step) = budget_step {
            body.push_str(&budget_note(step, bound));
        }
        match self.options.stats {
            // Under a budget too small for it, the stats line is left out.
            StatsMode::Inline => {
                let line = match sent {
                    Some(Sent::Delta { .. }) => stats::delta_stats_line(shrink, budget_step),
                    _ => format!("[mcp-snapshot-filter: {body}]"),
                };
                filtered.append_line_within(&line, bound);
            }
            // The proxy's log adds its own `[mcp-snapshot-filter]` prefix.
            StatsMode::Stderr => self.pending_stats_line = Some(format!("{tool_name}: {body}")),
            StatsMode::Off => {}
        }
        Ok(Some(filtered))
    }

    /// A result the filter could not read (`error`), sent within the session's bound all the
    /// same: cut as the budget's last step cuts (`result::budget::cut_unreadable`), the text
    /// kept for `read_result`; the error waits for the proxy's log (`take_failure`). `Err` (the
    /// original goes as it came) without a bound, or when it fits and drops nothing.
    fn within_bound_unread(
        &mut self,
        tool_name: &str,
        result_json: &str,
        error: FilterError,
    ) -> FilterResult<String> {
        let bound = self.result_bound();
        if self.options.level == Level::Off || bound.tokens == usize::MAX {
            return Err(error);
        }
        let id = self
            .is_proxy_tool(proxy_tools::READ_RESULT)
            .then(|| format!("r{}", self.cut_result_ids + 1));
        let marker = |rest: &str, offset: usize| {
            let call = id
                .as_ref()
                .map(|id| format!("read_result id={id} offset={offset}"));
            cut::cut_marker(rest, bound, call.as_deref())
        };
        let keep = self.tools_with_output_schema.contains_key(tool_name);
        let Some((json, full)) = result::budget::cut_unreadable(result_json, bound, keep, &marker)
        else {
            return Err(error);
        };
        if let Some(id) = &id {
            self.keep_cut_text(id, full);
        }
        self.pending_failure = Some(error);
        Ok(json)
    }

    /// Why the filter could not read the last result it sent cut to the bound, once.
    pub fn take_failure(&mut self) -> Option<FilterError> {
        self.pending_failure.take()
    }

    fn count_result(&mut self, tool_name: &str) {
        self.totals.results += 1;
        // Bounded by the upstream's tool names: only results of filtered tools come here.
        if let Some(t) = self.tool_totals.get_mut(tool_name) {
            t.results += 1;
        } else {
            let t = SessionTotals {
                results: 1,
                ..SessionTotals::default()
            };
            self.tool_totals.insert(tool_name.to_string(), t);
        }
    }

    /// Keeps a text a budget cut left out under `id`, for `read_result`.
    fn keep_cut_text(&mut self, id: &str, text: String) {
        self.cut_result_ids += 1;
        self.held.keep_cut_text(id, text);
    }

    /// A proxy tool's answer within the budget: over it, the whole answer is kept for
    /// `read_result` and the text cut at a line with a marker naming the next offset.
    fn answer_within_budget(&mut self, answer: Value) -> Value {
        let bound = self.options.bound();
        let Some(text) = answer
            .get("content")
            .and_then(|c| c.get(0))
            .and_then(|b| b.get("text"))
            .and_then(Value::as_str)
        else {
            return answer;
        };
        if bound.fits(text) {
            return answer;
        }
        let id = format!("r{}", self.cut_result_ids + 1);
        let full = text.to_string();
        let marker = |offset: usize| {
            cut::cut_marker(
                full.get(offset..).unwrap_or_default(),
                bound,
                Some(&format!("read_result id={id} offset={offset}")),
            )
        };
        let Some(cut) = cut::cut_to_budget(&full, bound, &marker) else {
            return answer;
        };
        let mut answer = answer;
        if let Some(slot) = answer.pointer_mut("/content/0/text") {
            *slot = Value::String(cut);
        }
        self.keep_cut_text(&id, full);
        answer
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
            notes.push(match self.write_raw_snapshot(&dir, page, &raw) {
                Ok(path) => format!("[raw snapshot: {}]", path.display()),
                Err((path, e)) => {
                    format!("[raw snapshot not written to {}: {e}]", path.display())
                }
            });
        }
        if self.options.proxy_tools {
            // A snapshot larger than the whole cache is not kept: the tools then say so.
            let _ = self.held.keep_snapshot(page.unwrap_or(""), raw, holds);
        }
        notes
    }

    /// Deltas need the level, the option, and `expand_snapshot` answered by the proxy (an
    /// unchanged line is expanded through it).
    fn deltas_on(&self) -> bool {
        self.options.deltas_possible() && self.is_proxy_tool(proxy_tools::EXPAND_SNAPSHOT)
    }

    /// The answer to the last `tools/call` filtered never reaches the agent (the client
    /// cancelled the request, or went away): what the agent held of its page before is what
    /// it holds, so the page's next snapshot is a delta against that, or full
    /// (`Held::answer_not_delivered`).
    pub fn answer_not_delivered(&mut self) {
        self.held.answer_not_delivered();
    }

    /// How the last snapshot was sent with deltas on (`None`: deltas off, or no snapshot).
    pub fn last_sent(&self) -> Option<Sent> {
        self.held.last_sent()
    }

    /// Writes a raw snapshot to a new file in `dir`: created exclusively (`create_new`, which
    /// never opens an existing file or follows a link planted at the name; `O_NOFOLLOW` on top
    /// on unix), readable by the owner only, under a name unique to this session. A name taken
    /// anyway is skipped for the next number.
    fn write_raw_snapshot(
        &mut self,
        dir: &std::path::Path,
        page: Option<&str>,
        raw: &str,
    ) -> Result<PathBuf, (PathBuf, std::io::Error)> {
        use std::io::Write;
        const ATTEMPTS: u32 = 100;
        let mut attempt = 0;
        loop {
            self.raw_snapshot_files += 1;
            let path = dir.join(raw_snapshot_file_name(
                &self.raw_snapshot_tag,
                self.raw_snapshot_files,
                page,
            ));
            match exclusive_file(&path) {
                Ok(mut file) => {
                    return file
                        .write_all(raw.as_bytes())
                        .map(|()| path.clone())
                        .map_err(|e| (path, e));
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < ATTEMPTS => {
                    attempt += 1;
                }
                Err(e) => return Err((path, e)),
            }
        }
    }

    /// True when `tool_name` is one of the proxy's own tools, answered by `call_proxy_tool`.
    pub fn is_proxy_tool(&self, tool_name: &str) -> bool {
        self.options.proxy_tools
            && self.proxy_tools_listed != Some(false)
            && proxy_tools::NAMES.contains(&tool_name)
            && !self.shadowed_proxy_tools.contains(tool_name)
    }

    /// Answers a call of one of the proxy's tools: a `CallToolResult` as JSON, within the
    /// token budget (a longer answer says how to read on).
    pub fn call_proxy_tool(
        &mut self,
        tool_name: &str,
        arguments_json: Option<&str>,
    ) -> FilterResult<String> {
        if !self.is_proxy_tool(tool_name) {
            return Err(FilterError::NotAProxyTool(tool_name.to_string()));
        }
        let arguments = match arguments_json {
            Some(a) => serde_json::from_str::<Value>(a).map_err(|e| FilterError::NotJson {
                what: "arguments",
                reason: e.to_string(),
            })?,
            None => Value::Null,
        };
        if tool_name == proxy_tools::READ_RESULT {
            let answer = proxy_tools::read_result(&arguments, &self.held, self.options.bound());
            return Ok(result::json_text(&self.answer_within_budget(answer)));
        }
        let whole_page = crate::snapshot::SnapshotOptions {
            level: self.options.level,
            limits: self.options.snapshot.clone(),
        };
        // A uid of an unchanged line or a marker the agent holds, renumbered since: the
        // node's current one (as a request to the upstream would go, `uid_requests`).
        let mut arguments = arguments;
        if let Value::Object(args) = &mut arguments {
            let page = proxy_tools::page_key(args).or_else(|| self.held.latest_page());
            for key in ["uid", "until"] {
                let current = match (args.get(key), page.as_deref()) {
                    (Some(Value::String(uid)), Some(page)) => self.held.current_uid(page, uid),
                    _ => None,
                };
                if let Some(current) = current.map(str::to_string) {
                    args.insert(key.to_string(), Value::String(current));
                }
            }
        }
        let answer = proxy_tools::call(tool_name, &arguments, &self.held, &whole_page);
        let whole = tool_name == proxy_tools::EXPAND_SNAPSHOT
            && arguments.get("uid").is_none_or(Value::is_null)
            && answer.get("isError").is_none();
        if whole {
            // The agent now holds the whole page: deltas in a row count from here.
            let page = arguments.as_object().and_then(proxy_tools::page_key);
            self.held.whole_page_sent(page.as_deref());
        }
        Ok(result::json_text(&self.answer_within_budget(answer)))
    }

    /// What the filters did to the last `tools/call` result, `None` when it passed unchanged.
    pub fn last_figures(&self) -> Option<FilterFigures> {
        self.last_figures
    }

    /// Bytes of raw snapshots held for the proxy tools.
    pub fn cached_snapshot_bytes(&self) -> usize {
        self.held.snapshot_bytes()
    }

    /// The budget's limits (tokens, characters; 0: none) for the next `tools/call` result: the
    /// session's, less what the pending notice will add to it (`with_notice`), so that the
    /// result and its notice together stay within the budget. Never 0 when the session has a
    /// limit (0 would mean none).
    fn result_bound_limits(&self) -> (usize, usize) {
        let (tokens, chars) = (self.options.max_tokens, self.options.max_chars);
        let Some(notice) = self.notice.as_deref() else {
            return (tokens, chars);
        };
        let less = |limit: usize, cost: usize| {
            if limit == 0 {
                0
            } else {
                limit.saturating_sub(cost).max(1)
            }
        };
        (
            less(tokens, crate::tokens::estimate_tokens(notice)),
            less(chars, crate::tokens::utf16_len(notice)),
        )
    }

    /// What the next `tools/call` result may cost, whole, with the pending notice left room.
    fn result_bound(&self) -> Bound {
        let (tokens, chars) = self.result_bound_limits();
        result::budget::whole_bound(tokens, chars)
    }

    /// The next `tools/call` result carries `line` (one line: what restarted, that uids
    /// changed); a later notice replaces one not delivered yet.
    pub fn set_notice(&mut self, line: String) {
        self.notice = Some(line);
    }

    /// The response to a `tools/call` as it goes to the client (`filtered`, or `response_json`
    /// as it came when `None`) with the pending notice as its first text block, the notice then
    /// delivered; `None` when there is no notice or the response has no result content to
    /// carry it (the original, or `filtered`, goes as it is).
    pub fn with_notice(&mut self, filtered: Option<&str>, response_json: &str) -> Option<String> {
        let line = self.notice.as_deref()?;
        let out = crate::upstream_reset::insert_notice(filtered.unwrap_or(response_json), line)?;
        self.notice = None;
        Some(out)
    }

    /// The stats line of the last filtered result in `stderr` mode, once (`None` otherwise).
    pub fn take_stats_line(&mut self) -> Option<String> {
        self.pending_stats_line.take()
    }

    /// `compress_list_result` on a whole JSON-RPC response, as `filter_tool_response` takes a
    /// tool's: the response with only its result's text replaced, `Ok(None)` to forward the
    /// original.
    pub fn compress_list_response(
        &mut self,
        method: &str,
        response_json: &str,
    ) -> FilterResult<Option<String>> {
        let span = result_span(response_json)?;
        let Some(result_json) = self.compress_list_result(method, &response_json[span.clone()])?
        else {
            return Ok(None);
        };
        Ok(Some(splice(response_json, span, &result_json)))
    }

    /// Whether `filter_tool_response` may change a result of `tool_name` whose response is
    /// `len` bytes: a filtered tool's, any when structuredContent goes, any that may be over the
    /// token budget. The others are forwarded without being parsed (or counted).
    pub fn may_filter_result(&self, tool_name: &str, len: usize) -> bool {
        let options = &self.options;
        // The pending notice's room comes off the budget (`result_bound_limits`).
        let (max_tokens, max_chars) = self.result_bound_limits();
        let max_tokens = if options.level == Level::Off {
            0
        } else {
            max_tokens
        };
        options.drop_structured_content
            || result::tools::is_content_heavy(tool_name)
            || result::budget::may_exceed(
                len,
                crate::tokens::MAX_TOKENS_PER_BYTE,
                max_tokens,
                max_chars,
            )
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
            .map_err(|e| FilterError::NotJson {
                what: "result",
                reason: e.to_string(),
            })?;
        self.remember_output_schemas(&list);
        // Paginated lists get the proxy's tools once, on their last page, and only when some
        // page had a tool that returns snapshots (checked again on every list, so after
        // `tools/list_changed` too).
        let last_page = list.get("nextCursor").is_none_or(Value::is_null);
        let snapshot_tool = proxy_tools::lists_a_snapshot_tool(&list);
        if !last_page {
            self.snapshot_tool_on_earlier_pages |= snapshot_tool;
            return Ok(compressed);
        }
        let snapshot_tool =
            snapshot_tool || std::mem::take(&mut self.snapshot_tool_on_earlier_pages);
        if !self.options.proxy_tools {
            return Ok(compressed);
        }
        if !snapshot_tool {
            self.proxy_tools_listed = Some(false);
            return Ok(compressed);
        }
        self.proxy_tools_listed = Some(true);
        let added = proxy_tools::add_to_tools_list(&mut list, self.options.describe_level);
        self.shadowed_proxy_tools = proxy_tools::NAMES
            .iter()
            .filter(|name| !added.contains(name))
            .map(|name| name.to_string())
            .collect();
        if added.is_empty() {
            return Ok(compressed);
        }
        Ok(Some(result::json_text(&list)))
    }

    fn remember_output_schemas(&mut self, result: &Value) {
        let Some(tools) = result.get("tools").and_then(Value::as_array) else {
            return;
        };
        for tool in tools {
            if let Some(name) = tool.get("name").and_then(Value::as_str) {
                if let Some(schema) = tool.get("outputSchema").filter(|s| s.is_object()) {
                    let key = result::structured::plain_text_key(schema);
                    self.tools_with_output_schema.insert(name.to_string(), key);
                } else {
                    self.tools_with_output_schema.remove(name);
                }
            }
        }
    }

    /// One line for stderr when the proxy exits.
    pub fn summary(&self) -> String {
        stats::summary_line(&self.totals, self.options.level)
    }
}

/// ` | token budget 25.0k: aggressive` (the last step the budget took).
fn budget_note(step: &str, bound: Bound) -> String {
    format!(
        " | token budget {}: {step}",
        stats::format_count(bound.tokens as u64)
    )
}

/// `response_json` with the text at `span` (its result, `result_span`) replaced by
/// `result_json`: every other byte of the response stays as it came.
fn splice(response_json: &str, span: std::ops::Range<usize>, result_json: &str) -> String {
    let mut out = String::with_capacity(response_json.len() - span.len() + result_json.len());
    out.push_str(&response_json[..span.start]);
    out.push_str(result_json);
    out.push_str(&response_json[span.end..]);
    out
}

/// Where the `result` member's value is in a JSON-RPC response's text.
pub(crate) fn result_span(response_json: &str) -> FilterResult<std::ops::Range<usize>> {
    let members: HashMap<String, &RawValue> =
        serde_json::from_str(response_json).map_err(|e| FilterError::NotAnObject {
            what: "response",
            reason: Some(e.to_string()),
        })?;
    let raw = members.get("result").ok_or(FilterError::NoResult)?;
    crate::envelope::span_in(response_json, raw).ok_or(FilterError::ResultNotLocated)
}

/// A new file at `path`, never an existing one (nor what a symlink there points to).
fn exclusive_file(path: &std::path::Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600).custom_flags(libc::O_NOFOLLOW);
    }
    options.open(path)
}

/// Unique to this session among all sessions that write to one directory: the start time in
/// milliseconds, the process id and a per-process counter (base 36).
fn session_tag() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static SESSIONS: AtomicU64 = AtomicU64::new(0);
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0);
    let seq = SESSIONS.fetch_add(1, Ordering::Relaxed);
    format!(
        "{}-{}-{}",
        base36(millis),
        base36(u64::from(std::process::id())),
        base36(seq)
    )
}

fn base36(mut n: u64) -> String {
    const DIGITS: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    loop {
        out.push(DIGITS[(n % 36) as usize]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}

/// `snapshot-<tag>-<n>.txt` or `snapshot-<tag>-<n>-page-<id>.txt`: the page id keeps only ASCII
/// letters and digits, so nothing the upstream or a page sends can choose where the file goes.
fn raw_snapshot_file_name(tag: &str, n: u64, page: Option<&str>) -> String {
    let page: String = page
        .unwrap_or_default()
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .take(32)
        .collect();
    if page.is_empty() {
        format!("snapshot-{tag}-{n:06}.txt")
    } else {
        format!("snapshot-{tag}-{n:06}-page-{page}.txt")
    }
}

#[cfg(test)]
#[path = "session_tests.rs"]
mod tests;
#[cfg(test)]
#[path = "session_tools_list_tests.rs"]
mod tools_list_tests;
