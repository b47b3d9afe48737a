//! The token budget (`--max-tokens`): no text the client receives for one result is over it,
//! counted by the one estimate (`crate::tokens::estimate_tokens`, which errs high). Its limits
//! are in `crate::snapshot::params` (the default, the reserve, the steps past `aggressive`).
//!
//! A result over the budget gives way step by step (measured order, README "Token budget"): the
//! level's filters first; then, at `light`, the moderate passes; then the aggressive limits;
//! then coarser markers (fewer nodes, a shallower depth: whole subtrees go behind one marker
//! each; tighter list and script limits); last a cut at a line boundary with a marker (`cut`).
//! Each step is the whole filter run again on the original result with that step's options, so
//! every step marks what it hid exactly as a level does; the result's snapshots are parsed once
//! for all the steps (`ParsedTrees`), each filtering a clone of the tree.

#[cfg(test)]
mod corpus_tests;
pub mod cut;

use serde_json::{Map, Value};

use crate::error::FilterResult;
use crate::level::Level;
use crate::snapshot::params::{coarse_steps, RESERVE_CHARS, RESERVE_TOKENS};
use crate::snapshot::SnapshotLimits;
use crate::tokens::{estimate_tokens, MAX_TOKENS_PER_BYTE};

use super::structured;
use super::{
    filter_result_map, text_blocks, tools, FilterFigures, FilteredValue, ParsedTrees, ResultLimits,
    ResultOptions, SnapshotCapture,
};
use cut::{chars_within, cut_marker, cut_to_budget, utf16_len, Bound};

/// The budget a result's own text may use under `max_tokens` (0 = no budget).
pub fn content_budget(max_tokens: usize) -> usize {
    if max_tokens == 0 {
        usize::MAX
    } else {
        max_tokens
            .saturating_sub(RESERVE_TOKENS)
            .max(max_tokens / 2)
    }
}

/// The characters a result's own text may use under `max_chars` (0 = no bound).
pub fn content_chars(max_chars: usize) -> usize {
    if max_chars == 0 {
        usize::MAX
    } else {
        max_chars.saturating_sub(RESERVE_CHARS).max(max_chars / 2)
    }
}

/// What a result's own text may cost (the reserve left for the session's lines).
pub fn content_bound(options: &ResultOptions) -> Bound {
    let whole = whole_bound(options.max_tokens, options.max_chars);
    Bound {
        tokens: content_budget(options.max_tokens),
        chars: if whole.chars == usize::MAX {
            usize::MAX
        } else {
            content_chars(whole.chars)
        },
    }
}

/// What the whole result may cost, the session's lines included (`usize::MAX`: no bound). The
/// character bound is a second limit of the token budget: without a token budget (0) there is
/// none either.
pub fn whole_bound(max_tokens: usize, max_chars: usize) -> Bound {
    if max_tokens == 0 {
        return Bound {
            tokens: usize::MAX,
            chars: usize::MAX,
        };
    }
    Bound {
        tokens: max_tokens,
        chars: if max_chars == 0 {
            usize::MAX
        } else {
            max_chars
        },
    }
}

impl Bound {
    /// The result's text blocks together within this bound.
    pub fn holds_result(&self, result: &Map<String, Value>) -> bool {
        (self.tokens == usize::MAX || text_tokens(result) <= self.tokens)
            && (self.chars == usize::MAX || text_chars(result) <= self.chars)
    }

    /// A filtered result within this bound (its figures hold the tokens and bytes out).
    fn holds_filtered(&self, filtered: &FilteredValue) -> bool {
        filtered.figures.text_tokens_out <= self.tokens
            && (filtered.figures.text_bytes_out <= self.chars
                || text_chars(&filtered.result) <= self.chars)
    }
}

/// True when text of `length` UTF-16 units (or bytes, which are never fewer) may be over a
/// budget of `max_tokens` (0: no budget, and no character bound either) by the estimate, or
/// over its character bound `max_chars` (0: none). A result of a tool no filter knows is read
/// only when it may.
pub fn may_exceed(length: usize, max_tokens: usize, max_chars: usize) -> bool {
    max_tokens > 0
        && (length as f64 * crate::tokens::MAX_TOKENS_PER_UTF16_UNIT > max_tokens as f64
            || (max_chars > 0 && length > max_chars))
}

/// True when a result of a tool no filter knows, `json_bytes` of JSON long, comes out unchanged
/// without being read: no budget can act on it (its text blocks cost at most
/// `MAX_TOKENS_PER_BYTE` a byte of its JSON and hold at most a character a byte, escapes only
/// lengthen them) and no `structuredContent` is to be dropped. Parsing it would cost more than
/// the filter saves.
pub fn fits_unread(json_bytes: usize, options: &ResultOptions) -> bool {
    let bound = content_bound(options);
    !options.drop_structured_content
        && json_bytes <= bound.chars
        && (options.max_tokens == 0
            || json_bytes as f64 * MAX_TOKENS_PER_BYTE <= bound.tokens as f64)
}

/// Estimated tokens and characters of a cut marker (a text block after the cut becomes one), at
/// most.
const LATER_MARKER_TOKENS: usize = 60;
const LATER_MARKER_CHARS: usize = 200;

/// What the budget did to a result: the last step it took, and the text a cut left out
/// (kept by the session for `read_result`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BudgetNote {
    /// `moderate`, `aggressive`, `coarser`, `coarsest` or `cut`.
    pub step: &'static str,
    /// For a cut: the text blocks as they were before it, joined by newlines; the cut
    /// markers' offsets point into it.
    pub cut_text: Option<String>,
}

/// Estimated tokens of a result's text blocks.
pub fn text_tokens(result: &Map<String, Value>) -> usize {
    text_blocks(result).map(estimate_tokens).sum()
}

/// Characters (UTF-16 code units) of a result's text blocks.
pub fn text_chars(result: &Map<String, Value>) -> usize {
    text_blocks(result).map(utf16_len).sum()
}

/// The steps after the level's own filters, in order: (name, options).
fn ladder(options: &ResultOptions) -> Vec<(&'static str, ResultOptions)> {
    let at = |level: Level, snapshot: SnapshotLimits, limits: ResultLimits| ResultOptions {
        level,
        snapshot: tighter(&options.snapshot, &snapshot),
        limits,
        ..options.clone()
    };
    // The lossy levels above the caller's, each with its own limits.
    let mut steps: Vec<(&'static str, ResultOptions)> = [
        ("moderate", Level::Moderate),
        ("aggressive", Level::Aggressive),
    ]
    .into_iter()
    .filter(|&(_, level)| options.level < level)
    .map(|(name, level)| {
        let step = at(
            level,
            SnapshotLimits::for_level(level),
            ResultLimits::for_level(level),
        );
        (name, step)
    })
    .collect();
    for (name, coarse) in coarse_steps() {
        let mut limits = ResultLimits::for_level(Level::Aggressive);
        limits.evaluate.max_array_items = coarse.max_array_items;
        limits.evaluate.max_string_chars = coarse.max_string_chars;
        limits.evaluate.max_depth = coarse.max_script_depth;
        // The script's output within the budget, at the most an estimated token per byte costs.
        limits.evaluate.max_output_chars = limits
            .evaluate
            .max_output_chars
            .min(content_budget(options.max_tokens) / 2)
            .min(content_bound(options).chars);
        limits.console.max_log_messages = coarse.max_log_messages;
        limits.console.max_stack_lines = coarse.max_stack_lines;
        steps.push((name, at(Level::Aggressive, coarse.snapshot, limits)));
    }
    steps
}

/// Each limit the smaller of the caller's and the step's.
fn tighter(caller: &SnapshotLimits, step: &SnapshotLimits) -> SnapshotLimits {
    SnapshotLimits {
        max_nodes: caller.max_nodes.min(step.max_nodes),
        max_depth: caller.max_depth.min(step.max_depth),
        max_similar_siblings: caller.max_similar_siblings.min(step.max_similar_siblings),
        max_text_length: caller.max_text_length.min(step.max_text_length),
        max_text_per_container: caller
            .max_text_per_container
            .min(step.max_text_per_container),
        max_records: caller.max_records.min(step.max_records),
        max_condensed_records: caller.max_condensed_records.min(step.max_condensed_records),
        max_options: caller.max_options.min(step.max_options),
        max_table_text: caller.max_table_text.min(step.max_table_text),
    }
}

/// A result over the budget, made to fit (see the module doc). `result` is the original.
pub fn fit(
    tool_name: &str,
    result: Map<String, Value>,
    options: &ResultOptions,
    capture: &mut SnapshotCapture<'_>,
) -> FilterResult<Option<FilteredValue>> {
    let bound = content_bound(options);
    let heavy = tools::is_content_heavy(tool_name);
    let mut last = None;
    if heavy {
        let first = filter_result_map(tool_name, result.clone(), options, capture)?;
        match first {
            Some(f) if bound.holds_filtered(&f) => return Ok(Some(f)),
            // Unchanged and within the budget without a stats line: forwarded as it is.
            None if whole_bound(options.max_tokens, options.max_chars).holds_result(&result) => {
                return Ok(None)
            }
            other => last = other,
        }
        // The result's snapshots parsed once more, for all the steps: each filters a clone of
        // the tree (most results fit at the level's own pass, which parses them as usual).
        let slots = 1 + result
            .get("content")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        let mut implied = vec![Vec::new(); slots];
        let trees = ParsedTrees::of(tool_name, &result, &mut implied);
        for (step, step_options) in ladder(options) {
            // A coarser step is a delta too, against what the agent holds: after a page was
            // sent at this step, its next snapshot fails the level's own delta (the shown trees
            // differ) and gets here, where it is compared with what was sent.
            let mut step_capture = SnapshotCapture {
                deltas: capture.deltas,
                trees: Some(&trees),
                ..SnapshotCapture::default()
            };
            let out =
                filter_result_map(tool_name, result.clone(), &step_options, &mut step_capture)?;
            capture.holds = step_capture.holds;
            capture.sent = step_capture.sent;
            capture.full_bytes = step_capture.full_bytes;
            capture.sent_bytes = step_capture.sent_bytes;
            if let Some(mut f) = out {
                if bound.holds_filtered(&f) {
                    f.budget = Some(BudgetNote {
                        step,
                        cut_text: None,
                    });
                    return Ok(Some(f));
                }
                last = Some(f);
            }
        }
    }
    let (base, filtered) = match last {
        Some(f) => (f, true),
        None => (unchanged(result), false),
    };
    // The agent gets part of the page only: no fingerprint holds for it, the next one is full.
    capture.holds = None;
    Ok(Some(cut(base, filtered, options, capture.raw.is_some())))
}

/// A result no filter changed, as a `FilteredValue` (figures of the original).
fn unchanged(result: Map<String, Value>) -> FilteredValue {
    let mut figures = FilterFigures::default();
    for text in text_blocks(&result) {
        figures.text_bytes_in += text.len();
        figures.text_tokens_in += estimate_tokens(text);
    }
    figures.text_bytes_out = figures.text_bytes_in;
    figures.text_tokens_out = figures.text_tokens_in;
    FilteredValue {
        result,
        changed_block: 0,
        text_changed: true,
        figures,
        budget: None,
    }
}

/// The last step: the text blocks kept in order until the budget is spent, the block that
/// spends it cut at a line boundary with a marker, every later text block only a marker.
fn cut(
    mut base: FilteredValue,
    filtered: bool,
    options: &ResultOptions,
    snapshot: bool,
) -> FilteredValue {
    let bound = content_bound(options);
    let whole = whole_bound(options.max_tokens, options.max_chars);
    let repeated = structured::repeated_text_key(&base.result);
    let texts: Vec<String> = text_blocks(&base.result).map(str::to_string).collect();
    let joined = texts.join("\n");
    let read_on = |offset: usize| {
        options.read_id.as_ref().map(|id| {
            let mut call = format!("read_result id={id} offset={offset}");
            if snapshot {
                call.push_str("; search_snapshot / expand_snapshot reach every uid, and");
            }
            call
        })
    };
    let (mut used, mut used_chars) = (0usize, 0usize);
    let mut cut_before = false;
    let mut start = 0usize;
    let mut first_changed = None;
    let mut index = 0usize;
    if let Some(content) = base.result.get_mut("content").and_then(Value::as_array_mut) {
        for (block_index, block) in content.iter_mut().enumerate() {
            if block.get("type").and_then(Value::as_str) != Some("text") {
                continue;
            }
            let Some(Value::String(text)) = block.get_mut("text") else {
                continue;
            };
            let Some(original) = texts.get(index) else {
                break;
            };
            index += 1;
            let block_start = start;
            start += original.len() + 1;
            // Room for the marker each later text block becomes.
            let later = texts.len() - index;
            let left = Bound {
                tokens: bound
                    .tokens
                    .saturating_sub(used + later * LATER_MARKER_TOKENS),
                chars: bound
                    .chars
                    .saturating_sub(used_chars + later * LATER_MARKER_CHARS),
            };
            let marker = |offset: usize| {
                let rest = joined.get(block_start + offset..).unwrap_or_default();
                cut_marker(rest, whole, read_on(block_start + offset).as_deref())
            };
            if let Some(new) = cut_to_budget(original, left, &marker) {
                // Under a budget too small for a marker per block (50 tokens: two markers of
                // 40), a later block is left empty: the first marker's read_result reads on
                // through it.
                let over = cut_before
                    && (used + estimate_tokens(&new) > whole.tokens
                        || !chars_within(&new, whole.chars.saturating_sub(used_chars)));
                *text = if over { String::new() } else { new };
                cut_before = true;
                first_changed.get_or_insert(block_index);
            }
            used += estimate_tokens(text);
            used_chars += utf16_len(text);
        }
    }
    let removed = structured::reconcile_structured_content(
        &mut base.result,
        options.has_output_schema,
        options.text_schema_key.as_deref(),
        repeated.as_deref(),
    );
    base.figures.structured_bytes_removed += removed.bytes;
    base.figures.structured_tokens_removed += removed.tokens;
    base.figures.text_bytes_out = text_blocks(&base.result).map(str::len).sum();
    base.figures.text_tokens_out = text_tokens(&base.result);
    base.changed_block = match (filtered, first_changed) {
        (true, Some(changed)) => base.changed_block.min(changed),
        (false, Some(changed)) => changed,
        (_, None) => base.changed_block,
    };
    base.text_changed = true;
    base.budget = Some(BudgetNote {
        step: "cut",
        cut_text: options.read_id.as_ref().map(|_| joined),
    });
    base
}
