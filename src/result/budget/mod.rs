//! The token budget (`--max-tokens`): no text the client receives for one result is over it,
//! counted by the one estimate (`crate::tokens::estimate_tokens`, which errs high). Its limits
//! are in `crate::snapshot::params` (the default, the reserve, the steps past `aggressive`).
//!
//! A result over the budget gives way step by step (measured order, README "Token budget"): the
//! level's filters first; then, at `light`, the moderate passes; then the aggressive limits;
//! then coarser markers (fewer nodes, a shallower depth: whole subtrees go behind one marker
//! each; tighter list and script limits); last a cut at a line boundary with a marker (`cut`).
//! Each step is the whole filter run again on the original result with that step's options, so
//! every step marks what it hid exactly as a level does.

pub mod cut;
#[cfg(test)]
mod corpus_tests;

use serde_json::{Map, Value};

use crate::error::FilterResult;
use crate::level::Level;
use crate::snapshot::params::{coarse_steps, RESERVE_TOKENS};
use crate::snapshot::SnapshotLimits;
use crate::tokens::estimate_tokens;

use super::structured;
use super::{
    filter_result_map, tools, FilterFigures, FilteredValue, ResultLimits, ResultOptions,
    SnapshotCapture,
};
use cut::{cut_marker, cut_to_budget};

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

/// Estimated tokens of a cut marker (a text block after the cut becomes one), at most.
const LATER_MARKER_TOKENS: usize = 60;

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

fn text_blocks(result: &Map<String, Value>) -> impl Iterator<Item = &str> {
    result
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|b| b.get("text").and_then(Value::as_str))
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
            .min(content_budget(options.max_tokens) / 2);
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
    }
}

/// A result over the budget, made to fit (see the module doc). `result` is the original.
pub fn fit(
    tool_name: &str,
    result: Map<String, Value>,
    options: &ResultOptions,
    capture: &mut SnapshotCapture<'_>,
) -> FilterResult<Option<FilteredValue>> {
    let budget = content_budget(options.max_tokens);
    let heavy = tools::is_content_heavy(tool_name);
    let mut last = None;
    if heavy {
        let first = filter_result_map(tool_name, result.clone(), options, capture)?;
        match first {
            Some(f) if f.figures.text_tokens_out <= budget => return Ok(Some(f)),
            // Unchanged and within the budget without a stats line: forwarded as it is.
            None if text_tokens(&result) <= options.max_tokens => return Ok(None),
            other => last = other,
        }
        for (step, step_options) in ladder(options) {
            // A coarser step is a delta too, against what the agent holds: after a page was
            // sent at this step, its next snapshot fails the level's own delta (the shown trees
            // differ) and gets here, where it is compared with what was sent.
            let mut step_capture = SnapshotCapture {
                deltas: capture.deltas,
                ..SnapshotCapture::default()
            };
            let out =
                filter_result_map(tool_name, result.clone(), &step_options, &mut step_capture)?;
            capture.holds = step_capture.holds;
            capture.sent = step_capture.sent;
            capture.full_bytes = step_capture.full_bytes;
            capture.sent_bytes = step_capture.sent_bytes;
            if let Some(mut f) = out {
                if f.figures.text_tokens_out <= budget {
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
    let budget = content_budget(options.max_tokens);
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
    let mut used = 0usize;
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
            let left = budget.saturating_sub(used + later * LATER_MARKER_TOKENS);
            let marker = |offset: usize| {
                let rest = joined.get(block_start + offset..).unwrap_or_default();
                cut_marker(
                    rest,
                    options.max_tokens,
                    read_on(block_start + offset).as_deref(),
                )
            };
            if let Some(new) = cut_to_budget(original, left, &marker) {
                // Under a budget too small for a marker per block (50 tokens: two markers of
                // 40), a later block is left empty: the first marker's read_result reads on
                // through it.
                let over = cut_before && used + estimate_tokens(&new) > options.max_tokens;
                *text = if over { String::new() } else { new };
                cut_before = true;
                first_changed.get_or_insert(block_index);
            }
            used += estimate_tokens(text);
        }
    }
    let removed =
        structured::reconcile_structured_content(&mut base.result, options.has_output_schema);
    base.figures.structured_bytes_removed += removed.len();
    base.figures.structured_tokens_removed += estimate_tokens(&removed);
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
