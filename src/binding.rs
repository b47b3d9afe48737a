//! The one N-API layer: converts JS options to core options and core errors to `napi::Error`.
//! Payloads cross as strings: converting a JS object field by field costs more than one string
//! (measured by the bench part *boundary*, `node bench/run.js --parts boundary`).

use std::cell::Cell;
use std::path::PathBuf;
use std::ptr;
use std::time::Instant;

use napi::bindgen_prelude::{
    Buffer, FromNapiValue, Function, ToNapiValue, TypeName, ValidateNapiValue, ValueType,
};
use napi::{sys, Error, Result, Status};
use napi_derive::napi;

use crate::config;
use crate::describe;
use crate::error::FilterError;
use crate::level::Level;
use crate::result;
use crate::router::{Route, Router};
use crate::stats::SavingsTotals;
use crate::tokens;
use crate::utf16;

/// A core error as JS sees it: `code` `InvalidArg` for what the caller passed, else
/// `GenericFailure`; the message is the core's.
fn to_napi(error: FilterError) -> Error {
    let status = if error.is_invalid_argument() {
        Status::InvalidArg
    } else {
        Status::GenericFailure
    };
    Error::new(status, error.to_string())
}

/// A JS string argument (a payload: result JSON, snapshot text) as UTF-8. napi-rs's `String`
/// asks V8 for the UTF-8 length first (a full scalar pass over the text), zero-fills the buffer,
/// then converts (a second pass); V8's own conversion to UTF-8 is a scalar loop too. The
/// UTF-16 units are copied out as they are (a copy, or a widening one for a Latin-1 string) and
/// transcoded here (`utf16::to_utf8`: ASCII stretches a block at a time, lone surrogates to
/// U+FFFD as V8 does). Declared as `string` in index.d.ts (`ts_arg_type`).
pub struct TextArg(String);

impl TypeName for TextArg {
    fn type_name() -> &'static str {
        "String"
    }

    fn value_type() -> ValueType {
        ValueType::String
    }
}

impl ValidateNapiValue for TextArg {}

impl FromNapiValue for TextArg {
    unsafe fn from_napi_value(env: sys::napi_env, value: sys::napi_value) -> Result<Self> {
        let mut len = 0usize;
        // SAFETY: a null buffer only asks for the length (O(1)); fails on a non-string.
        let status =
            unsafe { sys::napi_get_value_string_utf16(env, value, ptr::null_mut(), 0, &mut len) };
        if status != sys::Status::napi_ok {
            // Not a string: napi-rs's own conversion throws its usual `StringExpected` error.
            return unsafe { String::from_napi_value(env, value) }.map(TextArg);
        }
        // Room for the terminating NUL napi writes.
        let capacity = len.saturating_add(1);
        let mut units = Vec::<u16>::with_capacity(capacity);
        let mut written = 0usize;
        // SAFETY: napi writes at most `capacity` units (including its NUL) into the buffer and
        // reports the units written without the NUL.
        let status = unsafe {
            sys::napi_get_value_string_utf16(env, value, units.as_mut_ptr(), capacity, &mut written)
        };
        if status != sys::Status::napi_ok || written > len {
            return unsafe { String::from_napi_value(env, value) }.map(TextArg);
        }
        // SAFETY: the first `written` units were initialised by napi above.
        unsafe { units.set_len(written) };
        Ok(TextArg(utf16::to_utf8(&units)))
    }
}

/// A payload returned to JS (filtered snapshot text, result JSON), declared as `string`
/// (`ts_type`/`ts_return_type`). napi-rs's `String` makes the JS string from UTF-8, which V8
/// decodes with a scalar loop, a pass to size it and one to convert: on the non-ASCII text of
/// real pages that cost about a third of a light `filterSnapshot` call. ASCII text is made as
/// Latin-1 (a copy); other text is transcoded here to UTF-16 (`utf16::from_utf8`, ASCII
/// stretches a block at a time) and made from that (a copy).
pub struct TextOut(String);

impl TypeName for TextOut {
    fn type_name() -> &'static str {
        "String"
    }

    fn value_type() -> ValueType {
        ValueType::String
    }
}

impl ToNapiValue for TextOut {
    unsafe fn to_napi_value(env: sys::napi_env, val: Self) -> Result<sys::napi_value> {
        let text = val.0;
        let mut out = ptr::null_mut();
        let status = if text.is_ascii() {
            let len = isize::try_from(text.len()).map_err(|_| too_long())?;
            // SAFETY: `len` bytes of ASCII (a subset of Latin-1) at `text`'s pointer.
            unsafe { sys::napi_create_string_latin1(env, text.as_ptr().cast(), len, &mut out) }
        } else {
            let units = utf16::from_utf8(&text);
            drop(text);
            let len = isize::try_from(units.len()).map_err(|_| too_long())?;
            // SAFETY: `len` UTF-16 units at `units`' pointer.
            unsafe { sys::napi_create_string_utf16(env, units.as_ptr(), len, &mut out) }
        };
        if status != sys::Status::napi_ok {
            return Err(Error::new(
                Status::GenericFailure,
                "could not make the result string",
            ));
        }
        Ok(out)
    }
}

fn too_long() -> Error {
    Error::new(Status::GenericFailure, "result string too long")
}

/// Options of the snapshot and tool-result filters.
#[napi(object)]
#[derive(Default)]
pub struct FilterOptions {
    /// `off`, `light` (lossless), `moderate` or `aggressive`.
    /// @default 'moderate'
    pub level: Option<String>,
    /// Nodes rendered at most; the rest is hidden behind markers.
    /// @default 1000 at moderate, 120 at aggressive, unlimited below
    pub max_nodes: Option<u32>,
    /// Depth below which subtrees are hidden behind markers.
    /// @default 30 at moderate, 20 at aggressive, unlimited below
    pub max_depth: Option<u32>,
    /// Similar siblings shown before a run of them is collapsed.
    /// @default 8 at moderate, 3 at aggressive, unlimited below
    pub max_similar_siblings: Option<u32>,
    /// Characters of a text or name shown before it is cut.
    /// @default 80 at moderate, 60 at aggressive, unlimited below
    pub max_text_length: Option<u32>,
    /// Characters of text shown per container (the text nodes of one parent) before the
    /// following text nodes are hidden behind a marker.
    /// @default 200 at moderate, 60 at aggressive, unlimited below
    pub max_text_per_container: Option<u32>,
    /// Records shown of a run of repeated records (rows of a grid or list that the snapshot
    /// flattens into one run of siblings repeating a pattern of roles) before the rest hides
    /// behind one marker (`expand_snapshot uid=… until=…` gets them back).
    /// @default 5 at moderate, 2 at aggressive, unlimited below
    pub max_records: Option<u32>,
    /// Records inside `main` after those `maxRecords` that still show their controls and the
    /// labels before them (every row stays actionable in place; their other nodes go behind
    /// one marker for the run) before the rest hides whole.
    /// @default 0 at moderate and aggressive
    pub max_condensed_records: Option<u32>,
    /// Runs of records inside `main` are written as a table (a header naming the columns, then
    /// one line per record with every control's uid) showing at most this many characters of
    /// text cells per record, shortest columns first; `0`: no tables (records past
    /// `maxRecords` hide).
    /// @default 20 at moderate, 0 at aggressive
    pub max_table_text: Option<u32>,
    /// The tool declared an `outputSchema`: `structuredContent` stays valid against it.
    /// @default false
    pub has_output_schema: Option<bool>,
    /// Token budget of one result's whole text (estimated with `estimateTokens`); over it the
    /// result gives way step by step, last cut at a line with a marker. `0`: no budget. Not at
    /// level `off`.
    /// @default 25000
    pub max_tokens: Option<u32>,
    /// Character bound of one result's whole text (UTF-16 code units, as a JS string's
    /// `length`): Claude Code writes a text result over 50,000 characters to a file and shows
    /// the model only a preview. Over it a result gives way as over the token budget. A second
    /// limit of the token budget: none with `maxTokens: 0`. `0`: no bound. Not at level `off`.
    /// @default 50000
    pub max_chars: Option<u32>,
}

impl FilterOptions {
    fn to_core(&self) -> config::FilterConfig {
        let size = |n: Option<u32>| n.map(|n| n as usize);
        config::FilterConfig {
            level: self.level.clone(),
            max_nodes: size(self.max_nodes),
            max_depth: size(self.max_depth),
            max_similar_siblings: size(self.max_similar_siblings),
            max_text_length: size(self.max_text_length),
            max_text_per_container: size(self.max_text_per_container),
            max_records: size(self.max_records),
            max_condensed_records: size(self.max_condensed_records),
            max_table_text: size(self.max_table_text),
            has_output_schema: self.has_output_schema,
            max_tokens: size(self.max_tokens),
            max_chars: size(self.max_chars),
        }
    }
}

/// Options of the description compressor.
#[napi(object)]
#[derive(Default)]
pub struct CompressOptions {
    /// `off`, `light`, `moderate` or `aggressive`.
    /// @default 'moderate'
    pub level: Option<String>,
    /// At `aggressive` only: drop schema keywords that change no validation outcome.
    /// @default false
    pub compact_schemas: Option<bool>,
}

impl CompressOptions {
    fn to_core(&self) -> Result<describe::CompressOptions> {
        Ok(describe::CompressOptions {
            level: Level::parse_opt(self.level.as_deref()).map_err(to_napi)?,
            compact_schemas: self.compact_schemas.unwrap_or(false),
        })
    }
}

/// A filtered snapshot and what the filter did to it.
#[napi(object, object_from_js = false)]
pub struct SnapshotResult {
    /// The filtered snapshot text.
    #[napi(ts_type = "string")]
    pub text: TextOut,
    /// Distinct uids in the input.
    pub uids_in: u32,
    /// Uids rendered as nodes in the output.
    pub uids_shown: u32,
    /// Uids hidden, each named by a marker line.
    pub uids_hidden: u32,
    /// Marker lines written.
    pub markers: u32,
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Filters a `tools/call` result (`CallToolResult` as JSON) of the named tool.
/// Returns the filtered result as JSON, or `null` when nothing was changed. Carries no stats
/// line: that is the session's (`FilterSession`).
#[napi(catch_unwind, ts_return_type = "string | null")]
pub fn filter_tool_result(
    tool_name: String,
    #[napi(ts_arg_type = "string")] result_json: TextArg,
    options: Option<FilterOptions>,
) -> Result<Option<TextOut>> {
    let core = options
        .unwrap_or_default()
        .to_core()
        .result_options()
        .map_err(to_napi)?;
    timed_core(|| result::filter_tool_result_json(&tool_name, &result_json.0, &core))
        .map(|filtered| filtered.map(TextOut))
        .map_err(to_napi)
}

/// True when `filterToolResult` may change results of the named tool whatever their size:
/// the others only when they may be over the token budget.
#[napi]
pub fn is_filtered_tool(tool_name: String) -> bool {
    crate::result::tools::is_content_heavy(&tool_name)
}

/// True when a call of `toolName` with these arguments (`argumentsJson`, the request's
/// `arguments` as JSON) may answer with a page snapshot: the proxy's `expand_snapshot` and
/// `search_snapshot` wait for such a call of their page still in flight, and for no other.
#[napi]
pub fn returns_snapshot(tool_name: String, arguments_json: Option<String>) -> bool {
    crate::proxy_tools::call_returns_snapshot(&tool_name, arguments_json.as_deref())
}

/// True when the proxy's tool `name` reads the page's snapshot (so waits for one in flight).
#[napi]
pub fn reads_snapshots(name: String) -> bool {
    crate::proxy_tools::reads_snapshots(&name)
}

/// What a session of this configuration will not do that the configuration asked for, one
/// sentence each (the CLI prints them as warnings): the proxy tools at `off`, snapshot deltas
/// without the proxy tools.
#[napi]
pub fn session_warnings(config: Option<SessionConfig>) -> Vec<String> {
    config.unwrap_or_default().to_core().warnings()
}

/// Compresses the descriptions of a `tools/list`, `prompts/list`, `resources/list` or
/// `resources/templates/list` result (JSON). Returns the new JSON, or `null` when unchanged.
#[napi(catch_unwind, ts_return_type = "string | null")]
pub fn compress_list_result(
    method: String,
    #[napi(ts_arg_type = "string")] result_json: TextArg,
    options: Option<CompressOptions>,
) -> Result<Option<TextOut>> {
    let core = options.unwrap_or_default().to_core()?;
    timed_core(|| describe::compress_list_result(&method, &result_json.0, &core))
        .map(|out| out.map(TextOut))
        .map_err(to_napi)
}

/// Compresses one prose text with the description rules.
#[napi(catch_unwind, ts_return_type = "string")]
pub fn compress_text(
    #[napi(ts_arg_type = "string")] text: TextArg,
    options: Option<CompressOptions>,
) -> Result<TextOut> {
    let core = options.unwrap_or_default().to_core()?;
    Ok(TextOut(describe::compress_text(&text.0, core.level)))
}

/// Filters bare snapshot text (the body of a `## Latest page snapshot` section).
#[napi(catch_unwind)]
pub fn filter_snapshot(
    #[napi(ts_arg_type = "string")] text: TextArg,
    options: Option<FilterOptions>,
) -> Result<SnapshotResult> {
    let core = options
        .unwrap_or_default()
        .to_core()
        .snapshot_options()
        .map_err(to_napi)?;
    let out = timed_core(|| crate::notation::filter_snapshot(&text.0, &core));
    Ok(SnapshotResult {
        text: TextOut(out.text),
        uids_in: count(out.uids_in),
        uids_shown: count(out.uids_shown),
        uids_hidden: count(out.uids_hidden),
        markers: count(out.markers),
    })
}

/// Estimated o200k tokens of `text`: the project's one token estimate (the stats line, the
/// session summary, `measure` without gpt-tokenizer, the ledger). Errs high: never below o200k
/// on the corpus, a median 18% above.
#[napi]
pub fn estimate_tokens(#[napi(ts_arg_type = "string")] text: TextArg) -> u32 {
    count(tokens::estimate_tokens(&text.0))
}

/// A size in decimal units as the stats line writes it (`812 B`, `38.5 KB`, `1.2 MB`, `3.4 GB`):
/// the one formatter, for `mcp-snapshot-filter stats`. A negative or NaN input counts 0.
#[napi]
pub fn format_bytes(bytes: f64) -> String {
    crate::stats::format_bytes(bytes as u64)
}

/// A token count as the stats line writes it (`812`, `6.6k`, `412k`, `1.2M`).
#[napi]
pub fn format_count(n: f64) -> String {
    crate::stats::format_count(n as u64)
}

/// The tool a result's text came from, by the sections the filters read (`take_snapshot`,
/// `list_network_requests`, `list_console_messages`, `get_network_request`,
/// `get_console_message`, `evaluate_script`, `browser_snapshot`), or `null`.
#[napi]
pub fn infer_tool(#[napi(ts_arg_type = "string")] text: TextArg) -> Option<String> {
    result::infer::tool_of_text(&text.0).map(str::to_string)
}

/// The accessibility tree of a chrome-devtools-mcp result text (its snapshot section without the
/// `## Latest page snapshot` line), or `null` when it has none.
#[napi(ts_return_type = "string | null")]
pub fn snapshot_body(#[napi(ts_arg_type = "string")] text: TextArg) -> Option<TextOut> {
    result::infer::snapshot_body(&text.0).map(|body| TextOut(body.to_string()))
}

/// Benchmark diagnostic (`npm run bench`), not a filter: the ns that the last `filterSnapshot`,
/// `filterToolResult` or `compressListResult` call on this thread spent in its pure-Rust core
/// (after its arguments were converted from JS, before its result was converted to JS), once
/// `timeCore(true)` turned the timing on; `null` before. The time of that call through
/// `index.js` minus this is the cost of crossing the boundary, measured on the very call.
#[napi]
pub fn last_core_time() -> Option<f64> {
    LAST_CORE_NS.with(Cell::get)
}

/// Benchmark diagnostic: `true` times the core of each later `filterSnapshot`,
/// `filterToolResult` and `compressListResult` call on this thread for `lastCoreTime`; `false`
/// (the default) times none, so no call of the public API pays for the clock.
#[napi]
pub fn time_core(on: bool) {
    TIME_CORE.with(|t| t.set(on));
}

thread_local! {
    /// Set by `timed_core`: what `lastCoreTime` returns.
    static LAST_CORE_NS: Cell<Option<f64>> = const { Cell::new(None) };
    /// Set by `timeCore`.
    static TIME_CORE: Cell<bool> = const { Cell::new(false) };
}

/// Runs an export's core and, when `timeCore` asked, records its duration for `lastCoreTime`.
/// The output is freed later, after its conversion to JS, so freeing it counts as crossing, as
/// converting the arguments does.
fn timed_core<T>(core: impl FnOnce() -> T) -> T {
    if !TIME_CORE.with(Cell::get) {
        return core();
    }
    let start = Instant::now();
    let output = core();
    let ns = start.elapsed().as_nanos() as f64;
    LAST_CORE_NS.with(|last| last.set(Some(ns)));
    output
}

/// What the filters did to one `tools/call` result.
#[napi(object)]
pub struct ResultFigures {
    /// UTF-8 bytes the client would have received without the proxy (text blocks and any
    /// `structuredContent` dropped that the proxy did not ask upstream for), and receives now
    /// (without the stats line).
    pub bytes_in: f64,
    pub bytes_out: f64,
    /// The same in estimated tokens (`estimateTokens`).
    pub tokens_in: f64,
    pub tokens_out: f64,
    /// Snapshot uids hidden behind markers.
    pub uids_hidden: u32,
    /// Network request ids hidden behind a summary line.
    pub reqids_hidden: u32,
    /// Console message ids hidden behind a summary line.
    pub msgids_hidden: u32,
}

/// A session's savings on one upstream tool's results (`FilterSession.toolTotals()`).
#[napi(object)]
pub struct ToolTotals {
    pub tool: String,
    /// Results of this tool that reached the filter, and how many of them it shrank.
    pub results: f64,
    pub shrunk: f64,
    /// UTF-8 bytes and estimated tokens of the shrunk results, before and after.
    pub bytes_in: f64,
    pub bytes_out: f64,
    pub tokens_in: f64,
    pub tokens_out: f64,
    /// Snapshots of this tool sent as deltas, and the bytes they saved against the full
    /// filtered snapshot (already inside `bytesOut`).
    pub deltas: f64,
    pub delta_bytes_saved: f64,
}

fn tool_totals(tool: &str, t: &SavingsTotals) -> ToolTotals {
    ToolTotals {
        tool: tool.to_string(),
        results: t.results as f64,
        shrunk: t.calls as f64,
        bytes_in: t.bytes_in as f64,
        bytes_out: t.bytes_out as f64,
        tokens_in: t.tokens_in as f64,
        tokens_out: t.tokens_out as f64,
        deltas: t.deltas as f64,
        delta_bytes_saved: t.delta_bytes_saved as f64,
    }
}

/// Options of `expandSnapshot`.
#[napi(object)]
#[derive(Default)]
pub struct ExpandOptions {
    /// uid of a later sibling: expand the run of siblings from `uid` to `until` (as a marker
    /// line names them).
    pub until: Option<String>,
    /// Levels below the node(s) to include; deeper content hides behind markers.
    /// @default unlimited
    pub depth: Option<u32>,
}

/// The unfiltered subtree under `uid` (or the siblings from `uid` to `until`) of a raw
/// snapshot (chrome-devtools-mcp text or Playwright YAML), rendered at `light` (lossless).
/// Throws `InvalidArg` when a uid is unknown.
#[napi(catch_unwind, ts_return_type = "string")]
pub fn expand_snapshot(
    #[napi(ts_arg_type = "string")] raw: TextArg,
    uid: String,
    options: Option<ExpandOptions>,
) -> Result<TextOut> {
    let options = options.unwrap_or_default();
    crate::notation::expand_range(
        &raw.0,
        &uid,
        options.until.as_deref(),
        options.depth.map(|d| d as usize),
    )
    .map(TextOut)
    .map_err(to_napi)
}

/// Options of `searchSnapshot`.
#[napi(object)]
#[derive(Default)]
pub struct SearchOptions {
    /// Treat the query as a case-insensitive regular expression (Rust syntax).
    /// @default false
    pub regex: Option<bool>,
    /// Most hits to return.
    /// @default 20
    pub limit: Option<u32>,
}

/// Nodes of a raw snapshot whose role, name, text or attributes match `query`
/// (case-insensitive), each with its uid and its ancestors, written for an agent.
/// Throws `InvalidArg` on an invalid regex.
#[napi(catch_unwind, ts_return_type = "string")]
pub fn search_snapshot(
    #[napi(ts_arg_type = "string")] raw: TextArg,
    query: String,
    options: Option<SearchOptions>,
) -> Result<TextOut> {
    let options = options.unwrap_or_default();
    crate::notation::search_snapshot(
        &raw.0,
        &query,
        options.regex.unwrap_or(false),
        options
            .limit
            .map_or(crate::proxy_tools::DEFAULT_SEARCH_LIMIT, |l| {
                l.max(1) as usize
            }),
    )
    .map(|hits| TextOut(hits.text))
    .map_err(to_napi)
}

/// What a response answers, as the proxy's `route` callback tells `routeResponse`.
#[napi(object)]
pub struct ResponseRoute {
    /// The request's method.
    pub method: String,
    /// For `tools/call`: the tool's name.
    pub tool: Option<String>,
    /// For `tools/call`: the request's `arguments` as the client wrote them (JSON).
    pub arguments_json: Option<String>,
    /// The request's `params._meta` as the client wrote it (JSON): names the client.
    pub meta_json: Option<String>,
    /// False: forward the response as it came (level off); the proxy still learns from it.
    pub rewrite: bool,
    /// True: the client cancelled the request, so it drops this answer: what the filter makes
    /// of it is not what the agent holds.
    pub cancelled: Option<bool>,
}

/// A response line as `routeResponse` read and filtered it.
#[napi(object)]
pub struct RoutedResponse {
    /// The id's JSON text exactly as in the line (a JSON string or number).
    pub id_json: String,
    /// The rewritten line (no newline); absent: forward the original.
    pub line: Option<Buffer>,
    /// Why the filter failed: the original is then forwarded (`line` absent), or, when it was
    /// over the session's bound, sent cut to it (`line`).
    pub error: Option<String>,
    /// In `stderr` stats mode: the stats line of the filtered result.
    pub stats_line: Option<String>,
    /// True: the result says the upstream's browser was restarted or reconnected (its pages
    /// are gone; nothing held is a base any more).
    pub reconnected: Option<bool>,
}

/// Options of a proxy session.
#[napi(object)]
#[derive(Default)]
pub struct SessionConfig {
    /// Filter options applied to every result of the session.
    pub filter: Option<FilterOptions>,
    /// At `aggressive` only: drop schema keywords that change no validation outcome.
    /// @default false
    pub compact_schemas: Option<bool>,
    /// Where each filtered result's stats line goes: `inline` (appended to the result's text,
    /// the agent sees it), `stderr` (kept for `takeStatsLine()`, the proxy prints it) or `off`.
    /// @default 'inline'
    pub stats: Option<String>,
    /// Level of the description compressor for list results.
    /// @default the filter level
    pub describe_level: Option<String>,
    /// Add `expand_snapshot`, `search_snapshot` and `read_result` to `tools/list` and answer
    /// them from the cached raw snapshots and cut texts (`isProxyTool`, `answerProxyTool`).
    /// @default true at moderate and aggressive, and at light under a token budget; false at off
    pub proxy_tools: Option<bool>,
    /// Bytes of raw snapshots kept for the proxy tools (latest per page, oldest evicted first).
    /// @default 33554432 (32 MiB)
    pub snapshot_cache_bytes: Option<u32>,
    /// Also write each raw snapshot to a file in this directory and name the file in the result.
    pub raw_snapshots_dir: Option<String>,
    /// Send a later snapshot of a page the agent already holds as a delta (what changed, in
    /// the same notation; unchanged runs as one line each). Only at moderate and aggressive,
    /// and only with the proxy tools.
    /// @default true at moderate and aggressive
    pub snapshot_deltas: Option<bool>,
    /// Drop `structuredContent` from every `tools/call` result (after reading the snapshot tree
    /// from it): for an upstream the proxy itself asked for it, which the client did not.
    /// @default false
    pub drop_structured_content: Option<bool>,
}

/// The state one proxy keeps across an MCP session: options, the tools' output schemas and
/// the running savings. Used by the bin; other JS proxies can use it the same way.
impl SessionConfig {
    fn to_core(&self) -> config::SessionConfig {
        config::SessionConfig {
            filter: self
                .filter
                .as_ref()
                .map(FilterOptions::to_core)
                .unwrap_or_default(),
            compact_schemas: self.compact_schemas,
            stats: self.stats.clone(),
            describe_level: self.describe_level.clone(),
            proxy_tools: self.proxy_tools,
            snapshot_cache_bytes: self.snapshot_cache_bytes.map(|n| n as usize),
            raw_snapshots_dir: self.raw_snapshots_dir.as_ref().map(PathBuf::from),
            snapshot_deltas: self.snapshot_deltas,
            drop_structured_content: self.drop_structured_content,
        }
    }
}

/// The state one proxy keeps across an MCP session: options, the tools' output schemas and
/// the running savings. Used by the bin; other JS proxies can use it the same way.
#[napi]
pub struct FilterSession {
    /// Decides everything (`crate::router`); this only converts.
    router: Router,
}

#[napi]
impl FilterSession {
    #[napi(constructor)]
    pub fn new(config: Option<SessionConfig>) -> Result<FilterSession> {
        let config = config.unwrap_or_default().to_core();
        Ok(FilterSession {
            router: Router::new(&config).map_err(to_napi)?,
        })
    }

    /// The session's filter level.
    #[napi(getter)]
    pub fn level(&self) -> String {
        self.router.session().options().level.as_str().to_string()
    }

    /// Whether this session may send snapshot deltas (the level, `snapshotDeltas` and the
    /// proxy tools allow them).
    #[napi(getter)]
    pub fn snapshot_deltas(&self) -> bool {
        self.router.session().options().deltas_possible()
    }

    /// Whether the session rewrites anything: results, or the lists' descriptions.
    #[napi(getter)]
    pub fn filtering(&self) -> bool {
        self.router.session().options().filters_anything()
    }

    /// The session's description compression level.
    #[napi(getter)]
    pub fn describe_level(&self) -> String {
        self.router
            .session()
            .options()
            .describe_level
            .as_str()
            .to_string()
    }

    /// Filters a `tools/call` result; `argumentsJson` is the request's `arguments` as JSON.
    /// Returns the filtered result JSON, or `null` to forward the original.
    #[napi(catch_unwind, ts_return_type = "string | null")]
    pub fn filter_tool_result(
        &mut self,
        tool_name: String,
        #[napi(ts_arg_type = "string")] result_json: TextArg,
        arguments_json: Option<String>,
    ) -> Result<Option<TextOut>> {
        self.router
            .session_mut()
            .filter_tool_result(&tool_name, &result_json.0, arguments_json.as_deref())
            .map(|out| out.map(TextOut))
            .map_err(to_napi)
    }

    /// `filterToolResult` on the whole JSON-RPC response line as the upstream sent it
    /// (`{"jsonrpc":"2.0","id":…,"result":{…}}`): returns the response (same keys, in the same
    /// order) with its result filtered, as JSON, or `null` to forward the original. Spares the
    /// caller serializing the result and parsing the filtered one.
    #[napi(catch_unwind, ts_return_type = "string | null")]
    pub fn filter_tool_response(
        &mut self,
        tool_name: String,
        #[napi(ts_arg_type = "string")] response_json: TextArg,
        arguments_json: Option<String>,
    ) -> Result<Option<TextOut>> {
        self.router
            .session_mut()
            .filter_tool_response(&tool_name, &response_json.0, arguments_json.as_deref())
            .map(|out| out.map(TextOut))
            .map_err(to_napi)
    }

    /// The proxy's one route for an upstream line (a Buffer, no newline): reads its JSON-RPC
    /// envelope and, when it answers a request the proxy rewrites, filters it, in one call.
    /// `route(idJson)` says what the response answers (its request's method, tool and
    /// arguments), or `null`: forward it. Returns `null` unless the line is a UTF-8 JSON-RPC 2.0
    /// response with a string or number id (the caller reads notifications, requests, batches
    /// and bad lines itself). A filter that fails leaves `line` absent and says why in `error`.
    #[napi(catch_unwind)]
    pub fn route_response(
        &mut self,
        line: &[u8],
        #[napi(ts_arg_type = "(idJson: string) => ResponseRoute | null | undefined")]
        route: Function<String, Option<ResponseRoute>>,
    ) -> Result<Option<RoutedResponse>> {
        let routed = self.router.route_response(line, |id_json| {
            Ok::<_, Error>(route.call(id_json)?.map(|r| Route {
                method: r.method,
                tool: r.tool,
                arguments_json: r.arguments_json,
                meta_json: r.meta_json,
                rewrite: r.rewrite,
                cancelled: r.cancelled == Some(true),
            }))
        })?;
        Ok(routed.map(|routed| RoutedResponse {
            id_json: routed.id_json,
            line: routed.line.map(|l| Buffer::from(l.into_bytes())),
            error: routed.error.map(|e| {
                // As a thrown error would read: "InvalidArg: …".
                let e = to_napi(e);
                format!("{}: {}", e.status, e.reason)
            }),
            stats_line: routed.stats_line,
            reconnected: routed.reconnected.then_some(true),
        }))
    }

    /// A client's request line (no newline) with the uids its page renumbered since the agent
    /// was shown them replaced by the same elements' current uids, for the client its
    /// `params._meta` names (`metaJson`); `null`: forward it as it came. Only the string values
    /// of uid-carrying arguments change (docs/transparency.md); an error answering it names
    /// the agent's uids again (`routeResponse`).
    #[napi(catch_unwind, ts_return_type = "string | null")]
    pub fn rewrite_request(
        &mut self,
        id_json: String,
        #[napi(ts_arg_type = "string")] line: TextArg,
        meta_json: Option<String>,
    ) -> Result<Option<TextOut>> {
        Ok(self
            .router
            .rewrite_request(&id_json, &line.0, meta_json.as_deref())
            .map(TextOut))
    }

    /// The upstream restarted, or came back under a new session (the bin noticed): every uid
    /// the agent held is gone. Nothing held is a base for a delta any more (every client's pages
    /// are forgotten), and the next `tools/call` result carries `notice` (one line) as its first
    /// text block.
    #[napi]
    pub fn upstream_restarted(&mut self, notice: String) {
        self.router.upstream_restarted(notice);
    }

    /// True when `toolName` is one of the proxy's own tools (answer it with `answerProxyTool`,
    /// never forward it).
    #[napi]
    pub fn is_proxy_tool(&self, tool_name: String) -> bool {
        self.router.session().is_proxy_tool(&tool_name)
    }

    /// Answers a call of one of the proxy's tools as the upstream's protocol era requires, for
    /// the client the request's `_meta` (`metaJson`, its JSON text) names: the response's
    /// `"result":{…}` or `"error":{…}` member, to write after the `id`. Modern requests get
    /// `resultType` and the upstream's `serverInfo`, or the envelope errors a modern server
    /// answers with (`-32602`, `-32022`).
    #[napi(catch_unwind, ts_return_type = "string")]
    pub fn answer_proxy_tool(
        &mut self,
        tool_name: String,
        arguments_json: Option<String>,
        meta_json: Option<String>,
    ) -> Result<TextOut> {
        self.router
            .answer_proxy_tool(&tool_name, arguments_json.as_deref(), meta_json.as_deref())
            .map(TextOut)
            .map_err(to_napi)
    }

    /// Learns the upstream's protocol era from the result (JSON) it sent to a `method` request
    /// (`initialize`, `server/discover`, a list): the proxy's own answers then speak it.
    #[napi]
    pub fn learn_era(
        &mut self,
        method: String,
        #[napi(ts_arg_type = "string")] result_json: TextArg,
    ) {
        self.router.learn_era(&method, &result_json.0);
    }

    /// The next result filtered is for the client the request's `_meta` (`metaJson`) names:
    /// snapshots and deltas are kept per client (`clientInfo`), so none gets a delta against
    /// what another one was sent.
    #[napi]
    pub fn use_client(&mut self, meta_json: Option<String>) {
        self.router.use_client(meta_json.as_deref());
    }

    /// What the filters did to the last `filterToolResult` call (`null` when it returned `null`).
    #[napi]
    pub fn last_figures(&self) -> Option<ResultFigures> {
        self.router.session().last_figures().map(|f| ResultFigures {
            bytes_in: f.bytes_in() as f64,
            bytes_out: f.bytes_out() as f64,
            tokens_in: f.tokens_in() as f64,
            tokens_out: f.tokens_out() as f64,
            uids_hidden: count(f.uids_hidden),
            reqids_hidden: count(f.reqids_hidden),
            msgids_hidden: count(f.msgids_hidden),
        })
    }

    /// Compresses a list result (and remembers the tools' output schemas).
    #[napi(catch_unwind, ts_return_type = "string | null")]
    pub fn compress_list_result(
        &mut self,
        method: String,
        #[napi(ts_arg_type = "string")] result_json: TextArg,
    ) -> Result<Option<TextOut>> {
        self.router
            .session_mut()
            .compress_list_result(&method, &result_json.0)
            .map(|out| out.map(TextOut))
            .map_err(to_napi)
    }

    /// In `stderr` stats mode: the stats line of the last filtered result, once; `null` when
    /// there is none (nothing filtered since the last call, or another mode).
    #[napi]
    pub fn take_stats_line(&mut self) -> Option<String> {
        self.router.session_mut().take_stats_line()
    }

    /// The answer to the last `tools/call` filtered is not delivered (its request was
    /// cancelled, or the client went away): its snapshot does not become what the agent
    /// holds of the page.
    #[napi]
    pub fn answer_not_delivered(&mut self) {
        self.router.answer_not_delivered();
    }

    /// The client cancelled the request `idJson` (its id's JSON text) after its answer was
    /// forwarded: the two crossed, and the client drops the answer. Its snapshot is then no
    /// base for a delta (`Router::answer_cancelled`); any other id changes nothing.
    #[napi]
    pub fn answer_cancelled(&mut self, id_json: String) {
        self.router.answer_cancelled(&id_json);
    }

    /// The session's stats mode: `inline`, `stderr` or `off`.
    #[napi(getter)]
    pub fn stats(&self) -> String {
        self.router.session().options().stats.as_str().to_string()
    }

    /// A one-line summary of the session's savings, for stderr on exit.
    #[napi]
    pub fn summary(&self) -> String {
        self.router.session().summary()
    }

    /// The session's savings per upstream tool, by tool name (only counts, never content).
    #[napi]
    pub fn tool_totals(&self) -> Vec<ToolTotals> {
        self.router
            .session()
            .tool_totals()
            .iter()
            .map(|(tool, t)| tool_totals(tool, t))
            .collect()
    }
}
