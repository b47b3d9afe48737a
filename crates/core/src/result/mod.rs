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

use std::cell::{OnceCell, RefCell, RefMut};

use serde_json::{Map, Value};

use crate::error::{FilterError, FilterResult};
use crate::level::Level;
use crate::notation::cdp::structured::StructuredSnapshot;
use crate::snapshot::delta::{
    filter_tree_with_deltas, filter_with_deltas, DeltaInput, Sent, SentPage,
};
use crate::snapshot::render::OutputCap;
use crate::snapshot::tree::Tree;
use crate::snapshot::{FilteredSnapshot, SnapshotLimits, SnapshotOptions};
use crate::tokens;

use console::ConsoleLimits;
use evaluate::EvaluateLimits;
use network::NetworkLimits;
use sections::{split_sections, SectionKind};

/// Per-level limits of the network, console and evaluate_script filters: one table.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ResultLimits {
    pub network: NetworkLimits,
    pub console: ConsoleLimits,
    pub evaluate: EvaluateLimits,
}

impl ResultLimits {
    /// `off` and `light` change nothing here (light is lossless and these filters are not).
    pub fn for_level(level: Level) -> ResultLimits {
        match level {
            Level::Off | Level::Light => ResultLimits::default(),
            Level::Moderate => ResultLimits {
                network: NetworkLimits {
                    hide_images: true,
                    hide_fonts: true,
                    hide_stylesheets: true,
                    hide_media: false,
                    hide_scripts: false,
                },
                console: ConsoleLimits {
                    hide_debug: true,
                    collapse_similar: true,
                    max_log_messages: usize::MAX,
                    max_stack_lines: 4,
                },
                evaluate: EvaluateLimits {
                    max_array_items: 50,
                    max_string_chars: 500,
                    max_depth: 10,
                    max_output_chars: 10_000,
                },
            },
            Level::Aggressive => ResultLimits {
                network: NetworkLimits {
                    hide_images: true,
                    hide_fonts: true,
                    hide_stylesheets: true,
                    hide_media: true,
                    hide_scripts: true,
                },
                console: ConsoleLimits {
                    hide_debug: true,
                    collapse_similar: true,
                    max_log_messages: 10,
                    max_stack_lines: 2,
                },
                evaluate: EvaluateLimits {
                    max_array_items: 20,
                    max_string_chars: 200,
                    max_depth: 6,
                    max_output_chars: 4_000,
                },
            },
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResultOptions {
    pub level: Level,
    pub snapshot: SnapshotLimits,
    pub limits: ResultLimits,
    /// The tool declared an `outputSchema` in `tools/list`: `structuredContent` must stay valid
    /// against it.
    pub has_output_schema: bool,
    /// The key of the one plain string that `outputSchema` declares (`structured::plain_text_key`):
    /// a `structuredContent` repeating the text there carries the filtered text.
    pub text_schema_key: Option<String>,
    /// Drop `structuredContent` from every result, filtered or not (the proxy asked upstream for
    /// it to read the snapshot tree; the client did not).
    pub drop_structured_content: bool,
    /// The call's `resourceTypes` argument (list_network_requests): kinds never hidden.
    pub requested_resource_types: Vec<String>,
    /// The call's `types` argument (list_console_messages): types never hidden.
    pub requested_console_types: Vec<String>,
    /// The token budget of the whole result (`budget`); 0: none.
    pub max_tokens: usize,
    /// The character bound of the whole result's text (UTF-16 code units, `budget`), a second
    /// limit of the token budget (none without one); 0: none.
    pub max_chars: usize,
    /// The id under which the session keeps the text a budget cut leaves out, named in the
    /// cut's marker (`read_result id=…`); `None` when the proxy tools are off.
    pub read_id: Option<String>,
}

impl ResultOptions {
    pub fn for_level(level: Level) -> ResultOptions {
        ResultOptions {
            level,
            snapshot: SnapshotLimits::for_level(level),
            limits: ResultLimits::for_level(level),
            has_output_schema: false,
            text_schema_key: None,
            drop_structured_content: false,
            requested_resource_types: Vec::new(),
            requested_console_types: Vec::new(),
            max_tokens: 0,
            max_chars: 0,
            read_id: None,
        }
    }

    /// Takes what the filters honour from the call's `arguments` (JSON); bad JSON is ignored.
    pub fn with_arguments(mut self, arguments_json: Option<&str>) -> ResultOptions {
        let Some(arguments) = arguments_json.and_then(|a| serde_json::from_str::<Value>(a).ok())
        else {
            return self;
        };
        let strings = |key: &str| -> Vec<String> {
            arguments
                .get(key)
                .and_then(Value::as_array)
                .map(|items| {
                    items
                        .iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default()
        };
        self.requested_resource_types = strings("resourceTypes");
        self.requested_console_types = strings("types");
        self
    }

    /// A budget applies (a token budget, and with it the character bound).
    pub fn budgeted(&self) -> bool {
        self.max_tokens > 0
    }

    /// Console limits with the types the agent asked for exempted.
    fn console_limits(&self) -> ConsoleLimits {
        let mut limits = self.limits.console.clone();
        let asked = |t: &str| self.requested_console_types.iter().any(|r| r == t);
        if asked("debug") || asked("verbose") {
            limits.hide_debug = false;
        }
        if !self.requested_console_types.is_empty()
            && self
                .requested_console_types
                .iter()
                .any(|t| !console::always_kept(t) && t != "debug" && t != "verbose")
        {
            limits.max_log_messages = usize::MAX;
        }
        limits
    }
}

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

/// A body parsed from its text, its tree, and its UTF-16 units and estimated tokens (see
/// `ParsedTrees::text`).
type TextTree<'r> = (&'r str, RefCell<Tree<'r>>, OnceCell<usize>, OnceCell<usize>);

/// A body read from `structuredContent.snapshot`, its tree, and that tree in the light notation
/// (made when a step needs it: `filter_exact_tree`).
type ExactTree<'r> = (&'r str, RefCell<Tree<'r>>, OnceCell<String>);

/// Snapshot trees of a result read once, for the budget's ladder, which filters the result at
/// several steps: each step filters the same tree, its marks of the step before taken back
/// (`Tree::clear_marks`), instead of parsing its body again or copying it. Looked up by the
/// body's text, so a body not found here is parsed as usual.
#[derive(Debug, Default)]
pub struct ParsedTrees<'r> {
    /// (body, its tree parsed from the text, its UTF-16 units and estimated tokens, counted
    /// when a step's render gave up and the body's length does not tell: `over_after_giving_up`)
    text: Vec<TextTree<'r>>,
    /// (body, its tree read from `structuredContent.snapshot`, that tree in the light notation)
    structured: Vec<ExactTree<'r>>,
    /// (a text block, its sections): every step splits the same text.
    sections: Vec<(&'r str, Vec<sections::Section<'r>>)>,
    /// What dropping the result's `structuredContent` saves, measured once for all the steps
    /// (`step_input`).
    structured_removed: structured::Removed,
}

impl<'r> ParsedTrees<'r> {
    /// The result holds a snapshot (a step that changes snapshot limits only changes it).
    pub fn has_snapshot(&self) -> bool {
        !self.text.is_empty() || !self.structured.is_empty()
    }

    /// The snapshot bodies of `result` parsed as `filter_result_map` would read them; `implied`
    /// holds what the parsers spell out, a slot per body (bodies past the slots are not kept).
    /// `structured`: the result's `structuredContent` as read (`structured::read_result`), and
    /// `snapshot` its snapshot tree's members.
    pub fn of(
        tool_name: &str,
        result: &'r Map<String, Value>,
        implied: &'r mut [Vec<String>],
        structured: Option<&structured::StructuredText<'_>>,
        snapshot: Option<&'r StructuredSnapshot<'_>>,
    ) -> ParsedTrees<'r> {
        let mut trees = ParsedTrees {
            structured_removed: structured.map_or_else(structured::Removed::default, |s| s.removed),
            ..ParsedTrees::default()
        };
        let mut slots = implied.iter_mut();
        let is_error = result.get("isError").and_then(Value::as_bool) == Some(true);
        let structured = snapshot.filter(|_| has_structured_snapshot(result));
        let texts = text_blocks(result);
        let playwright = crate::notation::playwright::is_playwright_tool(tool_name);
        for text in texts {
            let mut bodies = Vec::new();
            if playwright {
                bodies.extend(
                    crate::notation::playwright::sections::find_yaml_snapshot(text)
                        .map(|found| found.body),
                );
            } else {
                let sections = split_sections(text, is_error);
                for section in &sections {
                    if section.kind != SectionKind::Snapshot {
                        continue;
                    }
                    if let Some(at) = section.text.find('\n') {
                        bodies.push(&section.text[at + 1..]);
                    }
                }
                trees.sections.push((text, sections));
            }
            for body in bodies.into_iter().filter(|b| !b.is_empty()) {
                let exact = structured
                    .filter(|_| !playwright && !crate::notation::playwright::is_yaml_snapshot(body))
                    .and_then(|s| s.tree(body));
                if let Some(mut tree) = exact {
                    // Each step filters it: what its passes compute of it once is kept.
                    crate::snapshot::remember_passes(&mut tree);
                    trees
                        .structured
                        .push((body, RefCell::new(tree), OnceCell::new()));
                    continue;
                }
                // Past the slots a body is parsed by its step (every exact tree is read here:
                // a step's copy holds none, `step_input`).
                let Some(slot) = slots.next() else {
                    continue;
                };
                let mut tree = crate::notation::notation_of(body).parse(body, slot);
                crate::snapshot::remember_passes(&mut tree);
                trees
                    .text
                    .push((body, RefCell::new(tree), OnceCell::new(), OnceCell::new()));
            }
        }
        trees
    }

    /// The copy of `result` (the result these trees were read from) a step filters. Where its
    /// `structuredContent` is dropped once the text changes (no `outputSchema`), that is not
    /// copied: the snapshot tree was read from it here, and what dropping it saves is measured
    /// once (`structured_removed`); an empty object stands for the snapshot, so that the text
    /// is still known to have its exact tree.
    pub fn step_input(
        &self,
        result: &Map<String, Value>,
        options: &ResultOptions,
    ) -> Map<String, Value> {
        if options.has_output_schema {
            return result.clone();
        }
        result
            .iter()
            .map(|(key, value)| {
                let value = if key == "structuredContent" {
                    match value.get("snapshot") {
                        Some(Value::Object(_)) => serde_json::json!({"snapshot": {}}),
                        _ => Value::Null,
                    }
                } else {
                    value.clone()
                };
                (key.clone(), value)
            })
            .collect()
    }

    /// What dropping the result's `structuredContent` saves (measured once).
    fn structured_removed(&self) -> structured::Removed {
        self.structured_removed
    }

    fn sections_of(&self, text: &str) -> Option<Vec<sections::Section<'r>>> {
        self.sections
            .iter()
            .find(|(t, _)| *t == text)
            .map(|(_, sections)| sections.clone())
    }

    /// The tree of `body`, as parsed: the marks of the step before taken back.
    fn text_tree(&self, body: &str) -> Option<RefMut<'_, Tree<'r>>> {
        let (_, tree, _, _) = self.text.iter().find(|(b, _, _, _)| *b == body)?;
        let mut tree = tree.try_borrow_mut().ok()?;
        tree.clear_marks();
        Some(tree)
    }

    /// Whether a step whose render of `body` gave up at `cap` is over the budget whatever the
    /// rest: what it wrote is (`OutputCap`), and so is `body` itself, which the step sends
    /// instead when its whole render would be no shorter (`snapshot::filter_tree`).
    fn over_after_giving_up(&self, body: &str, cap: OutputCap) -> bool {
        let Some((_, _, units, tokens)) = self.text.iter().find(|(b, _, _, _)| *b == body) else {
            return false;
        };
        // A UTF-16 unit is three bytes at most.
        body.len() / 3 > cap.chars
            || (cap.chars != usize::MAX
                && *units.get_or_init(|| budget::cut::utf16_len(body)) > cap.chars)
            || *tokens.get_or_init(|| tokens::estimate_tokens(body)) > cap.tokens
    }

    /// At most the UTF-16 units a lossless step without deltas (`light`) writes of the result's
    /// snapshots, or `enough` if that is less: each body comes out rendered or as it was,
    /// whichever is shorter (`snapshot::filter_tree`; an exact tree's as its light notation),
    /// so each counts the lesser of its notation's bound (`Notation::light_units_at_least`)
    /// and its own units.
    pub fn light_units_at_least(&self, enough: usize) -> usize {
        let mut units = 0usize;
        let text = self.text.iter().map(|(body, tree, cell, _)| {
            (*body, tree, Some(cell), crate::notation::notation_of(body))
        });
        let cdp: &dyn crate::snapshot::Notation = &crate::notation::cdp::Cdp;
        let exact = self
            .structured
            .iter()
            .map(|(body, tree, _)| (*body, tree, None, cdp));
        for (body, tree, cell, notation) in text.chain(exact) {
            if units >= enough {
                break;
            }
            let Ok(tree) = tree.try_borrow() else {
                continue;
            };
            let rendered = notation.light_units_at_least(&tree, enough - units);
            // A UTF-16 unit is three bytes at most: the body's length mostly tells.
            let as_it_was = if body.len() / 3 >= rendered {
                rendered
            } else {
                match cell {
                    Some(cell) => *cell.get_or_init(|| budget::cut::utf16_len(body)),
                    None => budget::cut::utf16_len(body),
                }
            };
            units += rendered.min(as_it_was);
        }
        units.min(enough)
    }

    /// `text_tree` of a body read from `structuredContent`, with that tree in the light notation
    /// (made once, when first asked for).
    fn structured_tree(&self, body: &str) -> Option<(RefMut<'_, Tree<'r>>, &OnceCell<String>)> {
        let (_, tree, raw) = self.structured.iter().find(|(b, _, _)| *b == body)?;
        let mut tree = tree.try_borrow_mut().ok()?;
        tree.clear_marks();
        Some((tree, raw))
    }
}

/// The session's side of filtering a result's snapshot: in, what the agent holds of the page
/// (deltas on when given); out, the raw body (for the proxy's cache) and, with deltas, what the
/// agent holds once this result is sent.
#[derive(Debug, Default)]
pub struct SnapshotCapture<'p> {
    pub deltas: Option<DeltaInput<'p>>,
    /// The result's trees read already (the budget's ladder), else each body is parsed.
    pub trees: Option<&'p ParsedTrees<'p>>,
    /// A step of the budget's ladder that is not its last: a render of one of `trees` (without
    /// deltas) may give up here, the step then over the budget (`gave_up`).
    pub cap: Option<OutputCap>,
    pub gave_up: bool,
    /// No copy of the raw snapshot is made: the caller keeps none (no session), or this is a
    /// step of the budget's ladder after the one whose raw the ladder keeps (`budget::fit`).
    pub skip_raw: bool,
    pub raw: Option<String>,
    pub holds: Option<SentPage>,
    pub sent: Option<Sent>,
    /// Bytes of the full filtered snapshot and of what was sent instead (a delta).
    pub full_bytes: usize,
    pub sent_bytes: usize,
    /// No caller reads the figures (`filter_tool_result_json`): their token estimates are made
    /// only where the budget decides by them, and `structuredContent` is not measured; what
    /// they would say is left 0. Outputs are the same either way.
    pub tokens_unread: bool,
}

impl SnapshotCapture<'_> {
    /// Filters a snapshot body in whichever notation, as a delta where the rules allow.
    pub fn filter(&mut self, body: &str, options: &SnapshotOptions) -> FilteredSnapshot {
        let notation = crate::notation::notation_of(body);
        if !self.skip_raw {
            self.raw = Some(body.to_string());
        }
        let parsed = self.trees.and_then(|t| Some((t, t.text_tree(body)?)));
        let out = match (self.deltas, parsed) {
            (None, None) => return crate::notation::filter_snapshot(body, options),
            (None, Some((trees, mut tree))) => {
                tree.output_cap = self.cap;
                let mut out = crate::snapshot::filter_tree(notation, body, &mut tree, options);
                tree.output_cap = None;
                if tree.gave_up {
                    match self.cap {
                        Some(cap) if trees.over_after_giving_up(body, cap) => self.gave_up = true,
                        // Not sure to be over: rendered whole.
                        _ => {
                            tree.clear_marks();
                            out = crate::snapshot::filter_tree(notation, body, &mut tree, options);
                        }
                    }
                }
                return out;
            }
            (Some(input), None) => filter_with_deltas(notation, body, options, input),
            (Some(input), Some((_, mut tree))) => {
                filter_tree_with_deltas(notation, body, &mut tree, options, input)
            }
        };
        self.keep(out)
    }

    /// `filter` on a chrome-devtools-mcp tree read already (from structuredContent), as parsed;
    /// the caller keeps what the proxy tools read for it (`filter_exact_tree`).
    pub fn filter_tree(
        &mut self,
        body: &str,
        tree: &mut Tree<'_>,
        options: &SnapshotOptions,
    ) -> FilteredSnapshot {
        let cdp = &crate::notation::cdp::Cdp;
        let Some(input) = self.deltas else {
            return crate::snapshot::filter_tree(cdp, body, tree, options);
        };
        let out = filter_tree_with_deltas(cdp, body, tree, options, input);
        self.keep(out)
    }

    fn keep(&mut self, out: crate::snapshot::delta::DeltaFiltered) -> FilteredSnapshot {
        self.holds = out.holds;
        self.sent = out.sent;
        self.full_bytes = out.full_bytes;
        self.sent_bytes = out.filtered.text.len();
        out.filtered
    }
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
    if crate::notation::playwright::is_playwright_tool(tool_name) {
        // Playwright results have their own sections: only the YAML snapshot is filtered.
        let snapshot_options = SnapshotOptions {
            level: options.level,
            limits: options.snapshot.clone(),
        };
        let (new_text, hidden) = crate::notation::playwright::filter_result_text(text, |body| {
            capture.filter(body, &snapshot_options)
        })?;
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
                .filter(|_| !crate::notation::playwright::is_yaml_snapshot(body));
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
mod tests {
    use super::*;

    #[test]
    fn a_ten_megabyte_network_list_is_filtered_in_one_pass() {
        let mut text =
            String::from("## Network requests\nShowing 1-200000 of 200000 (Page 1 of 1).");
        for id in 0..200_000 {
            let (url, status) = match id % 4 {
                0 => (
                    "http://example.test/assets/some/long/path/picture.png",
                    "200",
                ),
                1 => ("http://example.test/api/v1/orders?page=1", "200"),
                2 => ("http://example.test/assets/fonts/regular.woff2", "404"),
                _ => ("http://example.test/assets/app/styles/main.css", "200"),
            };
            text.push_str(&format!("\nreqid={id} GET {url} [{status}]"));
        }
        assert!(text.len() > 10_000_000);
        let result = serde_json::json!({"content": [{"type": "text", "text": text}]}).to_string();
        let options = ResultOptions::for_level(Level::Moderate);
        let out = filter_tool_result("list_network_requests", &result, &options)
            .expect("ok")
            .expect("filtered");
        assert_eq!(out.figures.reqids_hidden, 100_000);
        assert!(out.text_bytes_out < out.text_bytes_in / 2 + 1_000_000);
    }

    #[test]
    fn off_and_unknown_tools_change_nothing_and_bad_json_is_an_error() {
        let mut text = String::from("## Network requests");
        for id in 1..=6 {
            text.push_str(&format!(
                "\nreqid={id} GET http://a/images/photo-{id}.png [200]"
            ));
        }
        let result = serde_json::json!({"content": [{"type": "text", "text": text}]}).to_string();
        let result = result.as_str();
        let moderate = ResultOptions::for_level(Level::Moderate);
        assert!(
            filter_tool_result("list_network_requests", result, &moderate)
                .expect("ok")
                .is_some()
        );
        let off = ResultOptions::for_level(Level::Off);
        assert_eq!(
            filter_tool_result("list_network_requests", result, &off),
            Ok(None)
        );
        assert_eq!(
            filter_tool_result("browser_network_requests", result, &moderate),
            Ok(None)
        );
        assert!(filter_tool_result("list_network_requests", "{", &moderate).is_err());
    }
}
