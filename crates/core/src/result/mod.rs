//! `tools/call` results (`CallToolResult` JSON): which tools are content-heavy (`tools`), how
//! their text splits into sections (`sections`), and the filter each section gets: the
//! accessibility snapshot (`crate::snapshot`), the network list (`network`), the console list
//! (`console`), the evaluate_script result (`evaluate`). `structured` keeps `structuredContent`
//! consistent with the filtered text.
//!
//! Only text blocks are touched; image blocks, `_meta`, `isError` and its error line pass
//! untouched, and so does every section without a filter, byte for byte.

pub mod budget;
pub mod console;
#[cfg(test)]
mod corpus_tests;
pub mod evaluate;
pub mod ids;
pub mod infer;
mod lines;
pub mod network;
#[cfg(test)]
mod prop_tests;
pub mod sections;
pub mod structured;
pub mod tools;

mod capture;
mod options;
mod parsed;

pub use capture::SnapshotCapture;
pub use options::{ResultLimits, ResultOptions};
pub use parsed::ParsedTrees;

use serde_json::{Map, Value};

use crate::error::{FilterError, FilterResult};
use crate::level::Level;
use crate::notation::cdp::structured::StructuredSnapshot;
use crate::notation::upstream::Sections;
use crate::snapshot::tree::Tree;
use crate::snapshot::{FilteredSnapshot, SnapshotOptions};
use crate::tokens;

use sections::{split_sections, SectionKind};

/// The texts of a result's text blocks, in order.
pub(crate) fn text_blocks(result: &Map<String, Value>) -> impl Iterator<Item = &str> {
    result
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|b| b.get("text").and_then(Value::as_str))
}

/// The text of one content block that a client turns into tokens: a text block's `text`, an
/// embedded resource's `resource.text` (a `resource` block of 527,000 characters passed
/// whole when only text blocks counted: issue 41, item 11). Only text blocks are filtered; every
/// such text counts against the budget and is cut by it.
pub(crate) fn block_text(block: &Value) -> Option<&str> {
    match block.get("type").and_then(Value::as_str)? {
        "text" => block.get("text")?.as_str(),
        "resource" => block.get("resource")?.get("text")?.as_str(),
        _ => None,
    }
}

/// `block_text`, to be written.
pub(crate) fn block_text_mut(block: &mut Value) -> Option<&mut String> {
    let text = match block.get("type").and_then(Value::as_str)? {
        "text" => block.get_mut("text")?,
        "resource" => block.get_mut("resource")?.get_mut("text")?,
        _ => return None,
    };
    match text {
        Value::String(text) => Some(text),
        _ => None,
    }
}

/// Every text of a result's content blocks that the client turns into tokens (`block_text`),
/// in order: what the budget and the figures count.
pub(crate) fn token_texts(result: &Map<String, Value>) -> impl Iterator<Item = &str> {
    result
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(block_text)
}

/// What the filters removed, for the stats line and `measure`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FilterFigures {
    /// UTF-8 bytes of the text blocks before and after (without any stats line).
    pub text_bytes_in: usize,
    pub text_bytes_out: usize,
    /// UTF-8 bytes of the `structuredContent` dropped (0 when kept or absent).
    pub structured_bytes_removed: usize,
    /// Estimated tokens (`crate::tokens`) of the text blocks before and after, and of the
    /// `structuredContent` dropped.
    pub text_tokens_in: usize,
    pub text_tokens_out: usize,
    pub structured_tokens_removed: usize,
    pub uids_hidden: usize,
    pub reqids_hidden: usize,
    pub msgids_hidden: usize,
}

impl FilterFigures {
    /// Bytes the client would have received in text and `structuredContent`, and now receives.
    pub fn bytes_in(&self) -> usize {
        self.text_bytes_in + self.structured_bytes_removed
    }

    pub fn bytes_out(&self) -> usize {
        self.text_bytes_out
    }

    /// Estimated tokens the client would have read, and now reads.
    pub fn tokens_in(&self) -> usize {
        self.text_tokens_in + self.structured_tokens_removed
    }

    pub fn tokens_out(&self) -> usize {
        self.text_tokens_out
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
    pub figures: FilterFigures,
}

/// A filtered result before serialization, so that the session can add its stats line.
#[derive(Debug, Clone, PartialEq)]
pub struct FilteredValue {
    pub result: Map<String, Value>,
    /// Index in `content` of the first text block that changed: where a stats line goes.
    pub changed_block: usize,
    /// A text block changed (false: only `structuredContent` was dropped).
    pub text_changed: bool,
    pub figures: FilterFigures,
    /// What the token budget did, when it acted.
    pub budget: Option<budget::BudgetNote>,
}

impl FilteredValue {
    /// Appends `line` on a line of its own to the changed text block.
    pub fn append_line(&mut self, line: &str) {
        let block = self
            .result
            .get_mut("content")
            .and_then(Value::as_array_mut)
            .and_then(|content| content.get_mut(self.changed_block));
        if let Some(Value::String(text)) = block.and_then(|b| b.get_mut("text")) {
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(line);
        }
    }

    /// `append_line`, unless the line would take the result's text over `bound` (the whole
    /// result's budget): what the session adds after the filters (the stats line, the raw
    /// snapshot's file) is left out rather than break the budget. True when the line went in.
    pub fn append_line_within(&mut self, line: &str, bound: budget::cut::Bound) -> bool {
        let before = self.changed_text_mut().map(|t| t.len());
        self.append_line(line);
        if bound.holds_result(&self.result) {
            return true;
        }
        if let (Some(len), Some(text)) = (before, self.changed_text_mut()) {
            text.truncate(len);
        }
        false
    }

    fn changed_text_mut(&mut self) -> Option<&mut String> {
        let block = self
            .result
            .get_mut("content")
            .and_then(Value::as_array_mut)
            .and_then(|content| content.get_mut(self.changed_block))?;
        match block.get_mut("text") {
            Some(Value::String(text)) => Some(text),
            _ => None,
        }
    }

    pub fn into_filtered_result(self) -> FilteredResult {
        FilteredResult {
            json: json_text(&Value::Object(self.result)),
            text_bytes_in: self.figures.text_bytes_in,
            text_bytes_out: self.figures.text_bytes_out,
            uids_hidden: self.figures.uids_hidden,
            figures: self.figures,
        }
    }
}

/// `value` as compact JSON, as `Value`'s `Display` writes it but through `serde_json::to_string`,
/// which writes into a buffer: `Display` goes through a formatter, one dynamic call per piece
/// written, and took twice the time on a large result.
pub fn json_text(value: &Value) -> String {
    // A `Value` always serializes (its keys are strings): `Display` is only the formal fallback.
    serde_json::to_string(value).unwrap_or_else(|_| value.to_string())
}

/// Filters a `CallToolResult`; `Ok(None)` when nothing changed (the caller forwards the original).
pub fn filter_tool_result(
    tool_name: &str,
    result_json: &str,
    options: &ResultOptions,
) -> FilterResult<Option<FilteredResult>> {
    Ok(filter_tool_result_value(tool_name, result_json, options)?
        .map(FilteredValue::into_filtered_result))
}

/// `filter_tool_result`'s JSON alone (the binding's `filterToolResult`): no caller of it reads
/// the figures, so their token estimates are not made where the budget does not decide by them
/// (at `light` they were a tenth of a call). The JSON is `filter_tool_result`'s.
pub fn filter_tool_result_json(
    tool_name: &str,
    result_json: &str,
    options: &ResultOptions,
) -> FilterResult<Option<String>> {
    Ok(without_session(tool_name, result_json, options, true)?
        .map(|f| json_text(&Value::Object(f.result))))
}

/// `filter_tool_result` without the final serialization.
pub fn filter_tool_result_value(
    tool_name: &str,
    result_json: &str,
    options: &ResultOptions,
) -> FilterResult<Option<FilteredValue>> {
    without_session(tool_name, result_json, options, false)
}

/// A result filtered for no session: no raw snapshot is kept for the proxy tools, and with
/// `tokens_unread` no token estimate is made that no one reads (`SnapshotCapture`).
fn without_session(
    tool_name: &str,
    result_json: &str,
    options: &ResultOptions,
    tokens_unread: bool,
) -> FilterResult<Option<FilteredValue>> {
    let mut capture = SnapshotCapture {
        skip_raw: true,
        tokens_unread,
        ..SnapshotCapture::default()
    };
    filter_tool_result_capturing(tool_name, result_json, options, &mut capture)
}

/// `filter_tool_result_value` that also hands back the raw body of the result's accessibility
/// snapshot, if it has one (whether or not the filter changed it), for the proxy's snapshot
/// cache: this way the result is parsed once.
pub fn filter_tool_result_capturing(
    tool_name: &str,
    result_json: &str,
    options: &ResultOptions,
    capture: &mut SnapshotCapture<'_>,
) -> FilterResult<Option<FilteredValue>> {
    if options.level == Level::Off
        || !(tools::is_content_heavy(tool_name)
            || options.drop_structured_content
            || options.budgeted())
    {
        return Ok(None);
    }
    if !tools::is_content_heavy(tool_name) && !budget::needs_reading(result_json.len(), options) {
        return Ok(None);
    }
    filter_tool_result_text(tool_name, result_json, options, capture, |e| {
        FilterError::NotJson {
            what: "result",
            reason: e.to_string(),
        }
    })
}

/// `filter_tool_result_capturing` on a result's JSON text (taken out of a whole JSON-RPC
/// response, so that the response is parsed once), `json_error` the message of bad JSON. Its
/// `structuredContent` is read from the text, never as a `Value`, unless it may be written
/// (`structured::read_result`). With a token budget, results of every tool (not only the
/// content-heavy ones) come out within it (`budget::fit`).
pub fn filter_tool_result_text(
    tool_name: &str,
    result_json: &str,
    options: &ResultOptions,
    capture: &mut SnapshotCapture<'_>,
    json_error: impl FnOnce(serde_json::Error) -> FilterError,
) -> FilterResult<Option<FilteredValue>> {
    let heavy = tools::is_content_heavy(tool_name);
    if options.level == Level::Off {
        return Ok(None);
    }
    let readable = crate::utf16::json_lone_surrogates_replaced(result_json);
    let result_json: &str = &readable;
    let read = structured::read_result(
        result_json,
        options.has_output_schema,
        !capture.tokens_unread,
    )
    .map_err(json_error)?;
    let Some((result, structured)) = read else {
        return Err(FilterError::NotAnObject {
            what: "result",
            reason: None,
        });
    };
    let structured = structured.as_ref();
    if !options.budgeted() {
        if !heavy {
            return Ok(drop_asked_structured_content(result, options));
        }
        return filter_result_map(tool_name, result, options, capture, None, structured);
    }
    // The original's text estimated once: the budget's check, the figures of every step. When
    // no one reads the figures, only where the check needs it: the characters fit.
    let content = budget::content_bound(options);
    let chars_fit = content.holds_chars(&result);
    let raw_tokens = (!capture.tokens_unread || chars_fit).then(|| budget::block_tokens(&result));
    if let Some(raw_tokens) = raw_tokens
        .as_deref()
        .filter(|raw| chars_fit && raw.iter().sum::<usize>() <= content.tokens)
    {
        if !heavy {
            return Ok(drop_asked_structured_content(result, options));
        }
        return filter_result_map(
            tool_name,
            result,
            options,
            capture,
            Some(raw_tokens),
            structured,
        );
    }
    budget::fit(
        tool_name,
        result,
        structured,
        options,
        capture,
        raw_tokens.as_deref(),
    )
}

/// The result's `structuredContent` has a `snapshot` object (or its stand-in,
/// `structured::read_result`).
fn has_structured_snapshot(result: &Map<String, Value>) -> bool {
    result
        .get("structuredContent")
        .and_then(|s| s.get("snapshot"))
        .is_some_and(Value::is_object)
}

/// The level's section filters over a result's text blocks, once. `raw_tokens`: the estimate of
/// each text block of `result`, in order, when the caller has it (else each is estimated here).
/// `structured`: the result's `structuredContent` as read (`structured::read_result`; `None` in
/// a step of the budget's ladder, whose `ParsedTrees` hold what it gives).
pub(crate) fn filter_result_map(
    tool_name: &str,
    mut result: Map<String, Value>,
    options: &ResultOptions,
    capture: &mut SnapshotCapture<'_>,
    raw_tokens: Option<&[usize]>,
    structured: Option<&structured::StructuredText<'_>>,
) -> FilterResult<Option<FilteredValue>> {
    let is_error = result.get("isError").and_then(Value::as_bool) == Some(true);
    // Serializes the whole structuredContent: only for the check below, never in release.
    #[cfg(debug_assertions)]
    let structured_bytes = structured.map_or_else(
        || structured::structured_content_bytes(&result),
        |s| s.removed.bytes,
    );
    let repeated = structured::repeated_key_if_kept(&result, options);
    // The exact tree of the snapshot, when upstream gives it: the snapshot is read from it
    // rather than from its ambiguous text.
    let has_snapshot = has_structured_snapshot(&result);
    let snapshot = structured
        .filter(|_| has_snapshot)
        .and_then(structured::StructuredText::snapshot);
    let structured_snapshot = has_snapshot.then_some(snapshot);
    let Some(content) = result.get_mut("content").and_then(Value::as_array_mut) else {
        return Ok(None);
    };
    let mut figures = FilterFigures::default();
    let mut changed_block = None;
    let mut known_tokens = raw_tokens.unwrap_or_default().iter();
    let count = !capture.tokens_unread;
    for (index, block) in content.iter_mut().enumerate() {
        let filtered_kind = block.get("type").and_then(Value::as_str) == Some("text");
        let Some(text) = block_text_mut(block) else {
            continue;
        };
        figures.text_bytes_in += text.len();
        let tokens_in = match known_tokens.next() {
            Some(&known) => known,
            None if count => tokens::estimate_tokens(text),
            None => 0,
        };
        figures.text_tokens_in += tokens_in;
        // An embedded resource is counted (and cut by the budget), never filtered.
        let new_text = if filtered_kind {
            filter_text(
                tool_name,
                text,
                is_error,
                options,
                &mut figures,
                capture,
                structured_snapshot,
            )
        } else {
            None
        };
        if let Some(new_text) = new_text {
            *text = new_text;
            changed_block.get_or_insert(index);
            if count {
                figures.text_tokens_out += tokens::estimate_tokens(text);
            }
        } else {
            figures.text_tokens_out += tokens_in;
        }
        figures.text_bytes_out += text.len();
    }
    let Some(changed_block) = changed_block else {
        return Ok(drop_asked_structured_content(result, options));
    };
    let removed = match capture.trees.filter(|_| !options.has_output_schema) {
        // A step of the budget's ladder: its copy's structuredContent stands for the result's.
        Some(trees) => {
            result.remove("structuredContent");
            trees.structured_removed()
        }
        None => structured::reconcile_structured_content(
            &mut result,
            options.has_output_schema,
            options.text_schema_key.as_deref(),
            repeated.as_deref(),
            structured,
        ),
    };
    figures.structured_bytes_removed = removed.bytes;
    figures.structured_tokens_removed = removed.tokens;
    #[cfg(debug_assertions)]
    debug_assert!(figures.structured_bytes_removed <= structured_bytes || capture.trees.is_some());
    if options.drop_structured_content {
        result.remove("structuredContent");
    }
    Ok(Some(FilteredValue {
        result,
        changed_block,
        text_changed: true,
        figures,
        budget: None,
    }))
}

/// A result whose text no filter changed: without its `structuredContent` when the proxy asked
/// upstream for it (`None`, forward the original, otherwise or when it has none).
fn drop_asked_structured_content(
    mut result: Map<String, Value>,
    options: &ResultOptions,
) -> Option<FilteredValue> {
    if !options.drop_structured_content {
        return None;
    }
    result.remove("structuredContent")?;
    Some(FilteredValue {
        result,
        changed_block: 0,
        text_changed: false,
        figures: FilterFigures::default(),
        budget: None,
    })
}

/// Filters one text block section by section; `None` when no section changed.
fn filter_text(
    tool_name: &str,
    text: &str,
    is_error: bool,
    options: &ResultOptions,
    figures: &mut FilterFigures,
    capture: &mut SnapshotCapture<'_>,
    structured_snapshot: Option<Option<&StructuredSnapshot<'_>>>,
) -> Option<String> {
    if let Sections::Own { filter, .. } = crate::notation::upstream_of_tool(tool_name).sections {
        // Sections of the upstream's own: only the snapshot is filtered.
        let snapshot_options = SnapshotOptions {
            level: options.level,
            limits: options.snapshot.clone(),
        };
        let (new_text, hidden) = filter(text, &mut |body| capture.filter(body, &snapshot_options))?;
        figures.uids_hidden += hidden;
        return Some(new_text);
    }
    let sections = capture
        .trees
        .and_then(|t| t.sections_of(text))
        .unwrap_or_else(|| split_sections(text, is_error));
    let mut parts: Vec<std::borrow::Cow<str>> = Vec::with_capacity(sections.len());
    let mut changed = false;
    for section in &sections {
        let replacement = match section.kind {
            SectionKind::Snapshot => filter_snapshot_section(
                section.text,
                options,
                figures,
                capture,
                structured_snapshot,
            ),
            SectionKind::NetworkList => network::filter_network_list(
                section.text,
                &options.limits.network,
                &options.requested_resource_types,
            )
            .map(|out| {
                figures.reqids_hidden += out.hidden_ids.len();
                out.text
            }),
            SectionKind::ConsoleList => {
                console::filter_console_list(section.text, &options.console_limits()).map(|out| {
                    figures.msgids_hidden += out.hidden_ids.len();
                    out.text
                })
            }
            SectionKind::Message if tool_name == tools::EVALUATE_SCRIPT => {
                evaluate::filter_evaluate_message(section.text, &options.limits.evaluate)
            }
            _ => None,
        };
        // A summary line can outweigh the little it replaces: keep only what is smaller. Not a
        // snapshot read beside its exact tree: its text, passed as it came, may show page text
        // as nodes (the light notation with its legend is larger than a small page's text).
        let exact = section.kind == SectionKind::Snapshot && structured_snapshot.is_some();
        match replacement {
            Some(new) if new.len() < section.text.len() || exact => {
                changed = true;
                parts.push(new.into());
            }
            _ => parts.push(section.text.into()),
        }
    }
    changed.then(|| sections::reassemble(parts.iter().map(|p| p.as_ref())))
}

/// The snapshot section: its header line, then the filtered body. The body keeps its final
/// newline, which separates it from the next section. With the structured tree of the snapshot
/// (`structuredContent.snapshot`), the tree is read from it, and the raw snapshot kept for the
/// proxy tools is that tree in the lossless light notation (which reads back exactly), not the
/// text: its retrieval answers then show no more than the tree has either.
/// `structured_snapshot`: `Some` when the result has one (its members, when read here).
fn filter_snapshot_section(
    section: &str,
    options: &ResultOptions,
    figures: &mut FilterFigures,
    capture: &mut SnapshotCapture<'_>,
    structured_snapshot: Option<Option<&StructuredSnapshot<'_>>>,
) -> Option<String> {
    let (header, body) = section.split_at(section.find('\n')? + 1);
    if body.is_empty() {
        return None;
    }
    let snapshot_options = SnapshotOptions {
        level: options.level,
        limits: options.snapshot.clone(),
    };
    // The tree in the light notation, before the passes mark it: made now only for a caller
    // that keeps it; else only if it is the output.
    let light = |tree: &Tree<'_>| crate::notation::cdp::writer::render(tree, false).text;
    let filtered = match capture.trees.and_then(|t| t.structured_tree(body)) {
        Some((mut tree, made)) => {
            let raw = (!capture.skip_raw)
                .then(|| std::borrow::Cow::Borrowed(made.get_or_init(|| light(&tree)).as_str()));
            // The step's marks taken back, the tree is as read.
            let reread = |tree: &mut Tree<'_>| {
                tree.clear_marks();
                Some(made.get_or_init(|| light(tree)).clone())
            };
            filter_exact_tree(body, &mut tree, raw, reread, &snapshot_options, capture)
        }
        None => {
            let structured = structured_snapshot
                .flatten()
                .filter(|_| crate::notation::upstream_of_body(body).structured_snapshot);
            let read = || structured.and_then(|s| s.tree(body));
            match read() {
                Some(mut tree) => {
                    let raw = (!capture.skip_raw).then(|| std::borrow::Cow::Owned(light(&tree)));
                    // Read again: the passes marked this one.
                    let reread = |_: &mut Tree<'_>| read().map(|tree| light(&tree));
                    filter_exact_tree(body, &mut tree, raw, reread, &snapshot_options, capture)
                }
                None => capture.filter(body, &snapshot_options),
            }
        }
    };
    if filtered.text == body {
        return None;
    }
    figures.uids_hidden += filtered.uids_hidden;
    let mut out = String::with_capacity(header.len() + filtered.text.len() + 1);
    out.push_str(header);
    out.push_str(&filtered.text);
    if body.ends_with('\n') && !out.ends_with('\n') {
        out.push('\n');
    }
    Some(out)
}

/// A snapshot body filtered from its exact tree (upstream's `structuredContent.snapshot`).
/// `raw`, that tree in the light notation, is kept as the capture's raw snapshot (unless
/// `skip_raw`, when it may be `None`: `reread` makes it if it is the output).
fn filter_exact_tree<'r>(
    body: &str,
    tree: &mut Tree<'_>,
    raw: Option<std::borrow::Cow<'r, str>>,
    reread: impl FnOnce(&mut Tree<'_>) -> Option<String>,
    options: &SnapshotOptions,
    capture: &mut SnapshotCapture<'_>,
) -> FilteredSnapshot {
    let keep = !capture.skip_raw;
    let mut filtered = capture.filter_tree(body, tree, options);
    // No smaller than upstream's text (a small page: the legend alone is 130 bytes), yet that
    // text is ambiguous where the tree is exact: page text in it can read as nodes. The tree
    // goes, in the lossless notation.
    if filtered.text == body {
        if let Some(raw) = raw.or_else(|| reread(tree).map(std::borrow::Cow::Owned)) {
            filtered.text = raw.to_string();
            if keep {
                capture.raw = Some(raw.into_owned());
            }
        }
    } else if let Some(raw) = raw.filter(|_| keep) {
        capture.raw = Some(raw.into_owned());
    }
    filtered
}

#[cfg(test)]
mod tests;
