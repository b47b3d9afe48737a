//! The token budget (`--max-tokens`): no text the client receives for one result is over it,
//! counted by the one estimate (`crate::tokens::estimate_tokens`, which errs high). Its limits
//! are in `crate::snapshot::params` (the default, the reserve, the steps past `aggressive`).
//!
//! A result over the budget gives way step by step (measured order, README "Token budget"): the
//! level's filters first; then, at `light`, the moderate passes; then `lean` (moderate's passes
//! with a navigation's long runs collapsed, less prose and fewer nodes); then the aggressive limits;
//! then coarser markers (fewer nodes, a shallower depth: whole subtrees go behind one marker
//! each; tighter list and script limits); last a cut at a line boundary with a marker (`cut`).
//! Each step is the whole filter run again on the original result with that step's options, so
//! every step marks what it hid exactly as a level does; the result's snapshots are parsed once
//! for all the steps, the level's own included (`ParsedTrees`), each filtering that one tree with
//! the step before's marks taken back, and its text is estimated once (`block_tokens`). What the
//! snapshot passes compute of a tree that a step's limits do not change is kept with the tree
//! for the next step (`crate::snapshot::PassMemo`). A step is not run when it is sure to be
//! over: at `light`, when what it writes of every node for sure is over the bound already
//! (`proven_over`); a step's render stops once past the bound (`give_up_at`).

#[cfg(test)]
mod corpus_tests;

#[cfg(test)]
thread_local! {
    /// Whether a step may give up (`give_up_at`): off, every step renders whole, as the
    /// reference a test compares with.
    static GIVING_UP: std::cell::Cell<bool> = const { std::cell::Cell::new(true) };
    /// Steps whose render gave up, on this thread.
    static GAVE_UP: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// Level steps not run first, proven over the bound (`proven_over`), on this thread.
    static DEFERRED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}
pub mod cut;

use serde_json::{Map, Value};

use crate::error::FilterResult;
use crate::level::Level;
use crate::snapshot::delta::Sent;
use crate::snapshot::params::{coarse_steps, way_around_steps, RESERVE_CHARS, RESERVE_TOKENS};
use crate::snapshot::tree::OutputCap;
use crate::snapshot::{SnapshotLimits, SnapshotOptions};
use crate::tokens::{self, estimate_tokens, MAX_TOKENS_PER_BYTE};

use super::structured;
use super::{
    block_text_mut, filter_result_map, token_texts, tools, FilterFigures, FilteredValue,
    ParsedTrees, ResultLimits, ResultOptions, SnapshotCapture,
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
    content_bound_of(options.max_tokens, options.max_chars)
}

/// `content_bound` of a budget of `max_tokens` (0: none) and `max_chars` (0: none).
pub fn content_bound_of(max_tokens: usize, max_chars: usize) -> Bound {
    let whole = whole_bound(max_tokens, max_chars);
    Bound {
        tokens: content_budget(max_tokens),
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
            && self.holds_chars(result)
    }

    /// `holds_result` of a result whose text blocks' estimate `tokens` gives (made or looked
    /// up only when the characters fit).
    pub fn holds_texts(&self, result: &Map<String, Value>, tokens: impl FnOnce() -> usize) -> bool {
        self.holds_chars(result) && tokens() <= self.tokens
    }

    /// The result's text blocks within the character bound; counted in UTF-16 units only when
    /// the bytes do not tell (a unit is a byte or more).
    pub fn holds_chars(&self, result: &Map<String, Value>) -> bool {
        self.chars == usize::MAX
            || units_within(
                token_texts(result).map(str::len).sum::<usize>(),
                self.chars,
                || text_chars(result),
            )
    }

    /// A filtered result within this bound (its figures hold the bytes out, and the tokens out
    /// when `counted`; else, in a call whose figures no one reads, they are estimated here once
    /// the characters fit).
    fn holds_filtered(&self, filtered: &FilteredValue, counted: bool) -> bool {
        units_within(filtered.figures.text_bytes_out, self.chars, || {
            text_chars(&filtered.result)
        }) && tokens_out(filtered, counted) <= self.tokens
    }
}

/// Whether text of `bytes` UTF-8 bytes is at most `chars` UTF-16 units (`units` counts them),
/// told from the bytes where they settle it: a unit takes at most 3 bytes (a character of 1 to
/// 3 bytes is one unit, one of 4 is two), so a text of at most `chars` bytes is within, and
/// one of more than 3 × `chars` is not; only between are the units counted.
fn units_within(bytes: usize, chars: usize, units: impl FnOnce() -> usize) -> bool {
    bytes <= chars || (bytes / 3 <= chars && units() <= chars)
}

/// The estimated tokens of a filtered result's text blocks: its figures' when they were
/// `counted` (`SnapshotCapture::tokens_unread` unset), else estimated now (the same sum).
fn tokens_out(filtered: &FilteredValue, counted: bool) -> usize {
    if counted {
        filtered.figures.text_tokens_out
    } else {
        text_tokens(&filtered.result)
    }
}

/// The one rule for whether the budget may act on a result of a tool no filter knows, from its
/// length alone: text at most `length` long, each unit of which (a UTF-8 byte of its JSON, or
/// a UTF-16 unit) costs at most `tokens_per_unit` estimated tokens (`MAX_TOKENS_PER_BYTE`,
/// `crate::tokens::MAX_TOKENS_PER_UTF16_UNIT`) and a character at most, may be over the
/// content bound of a budget of `max_tokens` (0: none, and no character bound) and `max_chars`
/// (0: none). When it may not, the result comes out unchanged and is not read: parsing it would
/// cost more than the filter saves.
pub fn may_exceed(
    length: usize,
    tokens_per_unit: f64,
    max_tokens: usize,
    max_chars: usize,
) -> bool {
    let bound = content_bound_of(max_tokens, max_chars);
    max_tokens > 0
        && (length > bound.chars || length as f64 * tokens_per_unit > bound.tokens as f64)
}

/// True when a result of a tool no filter knows, `json_bytes` of JSON long, must be read: the
/// budget may act on it (`may_exceed`; escapes in the JSON only lengthen its text) or its
/// `structuredContent` is to be dropped.
pub fn needs_reading(json_bytes: usize, options: &ResultOptions) -> bool {
    options.drop_structured_content
        || may_exceed(
            json_bytes,
            MAX_TOKENS_PER_BYTE,
            options.max_tokens,
            options.max_chars,
        )
}

/// Estimated tokens and characters of a cut marker (a text block after the cut becomes one), at
/// most.
const LATER_MARKER_TOKENS: usize = 60;
const LATER_MARKER_CHARS: usize = 200;

/// What the budget did to a result: the last step it took, and the text a cut left out
/// (kept by the session for `read_result`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BudgetNote {
    /// `moderate`, `lean`, `aggressive`, `coarser`, `coarsest` or `cut`.
    pub step: &'static str,
    /// For a cut: the text blocks as they were before it, joined by newlines; the cut
    /// markers' offsets point into it.
    pub cut_text: Option<String>,
}

/// The estimate of each of a result's text blocks, in order.
pub fn block_tokens(result: &Map<String, Value>) -> Vec<usize> {
    token_texts(result).map(estimate_tokens).collect()
}

/// Estimated tokens of a result's text blocks.
pub fn text_tokens(result: &Map<String, Value>) -> usize {
    token_texts(result).map(estimate_tokens).sum()
}

/// Characters (UTF-16 code units) of a result's text blocks.
pub fn text_chars(result: &Map<String, Value>) -> usize {
    token_texts(result).map(utf16_len).sum()
}

/// A result the filter could not read (nesting past serde_json's limit outside
/// `structuredContent`, a number past a double, …) cut to `bound` as the budget's last step
/// cuts one: its texts (text blocks' and embedded resources', joined by newlines as the cut
/// joins them; where even those are not readable, the result's JSON) in one text block, cut
/// with the marker `marker(rest, offset)` after it; every other member as upstream wrote it,
/// but `structuredContent` unless it is kept (`keep_structured`: an `outputSchema`). `None`
/// when the texts fit and there is no `structuredContent` to drop (forwarded as it came).
/// Returns the result's JSON and the text before the cut (for `read_result`).
pub fn cut_unreadable(
    result_json: &str,
    bound: Bound,
    keep_structured: bool,
    marker: &dyn Fn(&str, usize) -> String,
) -> Option<(String, String)> {
    let members = serde_json::from_str::<structured::RawMembers<'_>>(result_json)
        .map(|m| m.0)
        .unwrap_or_default();
    let texts = members
        .iter()
        .find(|(key, _)| key == "content")
        .and_then(|(_, raw)| raw_texts(raw.get()));
    let dropped = !keep_structured && members.iter().any(|(key, _)| key == "structuredContent");
    let full = texts.unwrap_or_else(|| result_json.to_string());
    let text = match cut_to_budget(&full, bound, &|offset| {
        marker(full.get(offset..).unwrap_or_default(), offset)
    }) {
        Some(text) => text,
        None if dropped => full.clone(),
        None => return None,
    };
    let mut out = String::with_capacity(text.len() + 64);
    out.push_str(r#"{"content":[{"type":"text","text":"#);
    out.push_str(&serde_json::to_string(&text).ok()?);
    out.push_str("}]");
    for (key, raw) in &members {
        if key == "content" || (key == "structuredContent" && !keep_structured) {
            continue;
        }
        out.push(',');
        out.push_str(&serde_json::to_string(key).ok()?);
        out.push(':');
        out.push_str(raw.get());
    }
    out.push('}');
    Some((out, full))
}

/// The texts a client turns into tokens of a `content` array's JSON, joined by newlines, each
/// block read apart (`None` where one is not readable).
fn raw_texts(content: &str) -> Option<String> {
    let blocks = serde_json::from_str::<Vec<&serde_json::value::RawValue>>(content).ok()?;
    let mut texts = Vec::new();
    for block in blocks {
        let members = serde_json::from_str::<structured::RawMembers<'_>>(block.get())
            .ok()?
            .0;
        let member = |of: &[(String, &'_ serde_json::value::RawValue)], name: &str| {
            of.iter()
                .rev()
                .find(|(key, _)| key == name)
                .and_then(|(_, raw)| serde_json::from_str::<String>(raw.get()).ok())
        };
        let text = match member(&members, "type").as_deref() {
            Some("text") => member(&members, "text"),
            Some("resource") => {
                let (_, resource) = members.iter().rev().find(|(key, _)| key == "resource")?;
                let inner = serde_json::from_str::<structured::RawMembers<'_>>(resource.get())
                    .ok()?
                    .0;
                member(&inner, "text")
            }
            _ => continue,
        };
        // A block without text (a resource's `blob`) costs no text tokens.
        texts.extend(text);
    }
    Some(texts.join("\n"))
}

/// The last of the steps between `moderate` and `aggressive` (`way_around_steps`), the one
/// whose node cap scales.
const LEAN: &str = "lean";

/// The share of its nodes the lean step keeps of what the step before over the bound would
/// fit, scaled: room for a line longer than the average (a navigation's marker, a heading).
const LEAN_SPARE: f64 = 0.9;

/// The lean step's node cap: its own (`moderate`'s) scaled by how far the step before, with
/// `before`'s figures, went over `bound`; `None` when that is under `aggressive`'s cap, which
/// then serves better (focused on `main`).
fn lean_nodes(limits: &SnapshotLimits, before: &FilterFigures, bound: Bound) -> Option<usize> {
    let share = |limit: usize, used: usize| {
        if limit == usize::MAX || used == 0 {
            1.0
        } else {
            (limit as f64 / used as f64).min(1.0)
        }
    };
    // Bytes for characters: a character is a byte or more.
    let fits =
        share(bound.tokens, before.text_tokens_out).min(share(bound.chars, before.text_bytes_out));
    let nodes = (limits.max_nodes as f64 * fits * LEAN_SPARE) as usize;
    (nodes >= SnapshotLimits::for_level(Level::Aggressive).max_nodes).then_some(nodes)
}

/// The steps after the level's own filters, in order: (name, options).
fn ladder(options: &ResultOptions) -> Vec<(&'static str, ResultOptions)> {
    let at = |level: Level, snapshot: SnapshotLimits, limits: ResultLimits| ResultOptions {
        level,
        snapshot: tighter(&options.snapshot, &snapshot),
        limits,
        ..options.clone()
    };
    // The lossy levels above the caller's, each with its own limits, and between them the
    // steps that keep the way around (moderate's passes, tighter), taken below `aggressive`:
    // (name, level, limits, the caller's levels it is taken under).
    let moderate = [(
        "moderate",
        Level::Moderate,
        SnapshotLimits::for_level(Level::Moderate),
        Level::Moderate,
    )];
    let way_around = way_around_steps()
        .into_iter()
        .map(|(name, limits)| (name, Level::Moderate, limits, Level::Aggressive));
    let aggressive = [(
        "aggressive",
        Level::Aggressive,
        SnapshotLimits::for_level(Level::Aggressive),
        Level::Aggressive,
    )];
    let mut steps: Vec<(&'static str, ResultOptions)> = moderate
        .into_iter()
        .chain(way_around)
        .chain(aggressive)
        .filter(|&(_, _, _, under)| options.level < under)
        .map(|(name, level, snapshot, _)| {
            (name, at(level, snapshot, ResultLimits::for_level(level)))
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
        max_nav_controls: caller.max_nav_controls.min(step.max_nav_controls),
        max_text_length: caller.max_text_length.min(step.max_text_length),
        max_text_per_container: caller
            .max_text_per_container
            .min(step.max_text_per_container),
        max_records: caller.max_records.min(step.max_records),
        max_condensed_records: caller.max_condensed_records.min(step.max_condensed_records),
        max_options: caller.max_options.min(step.max_options),
        max_table_text: caller.max_table_text.min(step.max_table_text),
        tables: caller.tables && step.tables,
        decoration: caller.decoration && step.decoration,
    }
}

/// A result over the budget, made to fit (see the module doc). `result` is the original, its
/// text blocks estimated at `raw_tokens` (`None`: not estimated, as no one reads the figures:
/// `SnapshotCapture::tokens_unread`), its `structuredContent` read as `structured`.
pub fn fit(
    tool_name: &str,
    result: Map<String, Value>,
    structured: Option<&structured::StructuredText<'_>>,
    options: &ResultOptions,
    capture: &mut SnapshotCapture<'_>,
    raw_tokens: Option<&[usize]>,
) -> FilterResult<Option<FilteredValue>> {
    let bound = content_bound(options);
    // The figures' tokens are estimated (by the steps, and here where they are not) unless no
    // one reads them; then only where a check decides by them.
    let counted = !capture.tokens_unread;
    let original_tokens = || raw_tokens.map_or_else(|| text_tokens(&result), |t| t.iter().sum());
    let heavy = tools::is_content_heavy(tool_name);
    let mut last = None;
    if heavy {
        // The result's snapshots parsed once, for the level's own pass and every step after
        // it: each filters the same tree.
        let slots = 1 + result
            .get("content")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        let mut implied = vec![Vec::new(); slots];
        let snapshot = structured.and_then(structured::StructuredText::snapshot);
        let trees = ParsedTrees::of(tool_name, &result, &mut implied, structured, snapshot);
        // The step the page was sent at last, if the budget took one, and how the level's own
        // pass sent it now.
        let held_step = capture
            .deltas
            .and_then(|d| d.sent)
            .and_then(|page| page.budget_step.clone());
        let sent_as = std::cell::Cell::new(None);
        // A step that is not the last may stop rendering once it is sure not to fit (its
        // result only tells that it is over); the last is the cut's base, written whole.
        let cap = give_up_at(bound);
        // `keep`: what the session keeps of the page is this step's.
        let mut run = |step_options: &ResultOptions, cap: Option<OutputCap>, keep: bool| {
            // A coarser step is a delta too, against what the agent holds: after a page was
            // sent at this step, its next snapshot fails the level's own delta (the shown trees
            // differ) and gets here, where it is compared with what was sent.
            let mut step_capture = SnapshotCapture {
                deltas: capture.deltas,
                trees: Some(&trees),
                cap,
                // The ladder keeps the first raw snapshot a step reads (below): later steps
                // make no copy of it; nor does any when the caller keeps none.
                skip_raw: capture.skip_raw || capture.raw.is_some(),
                tokens_unread: capture.tokens_unread,
                ..SnapshotCapture::default()
            };
            let out = filter_result_map(
                tool_name,
                trees.step_input(&result, step_options),
                step_options,
                &mut step_capture,
                raw_tokens,
                None,
            );
            // Every step reads the same raw snapshot.
            if capture.raw.is_none() {
                capture.raw = step_capture.raw;
            }
            if keep {
                capture.holds = step_capture.holds;
                capture.sent = step_capture.sent;
                sent_as.set(step_capture.sent);
                capture.full_bytes = step_capture.full_bytes;
                capture.sent_bytes = step_capture.sent_bytes;
            }
            debug_assert!(
                !step_capture.gave_up
                    || !matches!(&out, Ok(Some(f)) if bound.holds_filtered(f, counted)),
                "a step that gave up fits"
            );
            #[cfg(test)]
            GAVE_UP.with(|n| n.set(n.get() + usize::from(step_capture.gave_up)));
            out.map(|f| f.map(|f| (f, step_capture.gave_up)))
        };
        let steps = ladder(options);
        // A step followed by `next` may give up; the last renders whole (the cut's base), and
        // so does the one before the lean step, which sizes its node cap by that output.
        let cap_before = |next: Option<&(&'static str, ResultOptions)>| {
            cap.filter(|_| next.is_some_and(|(name, _)| *name != LEAN))
        };
        let first_cap = cap_before(steps.first());
        // At `light` the level's own step writes every uid and name of the snapshots: when
        // that alone is over the whole bound (which holds the content bound), so is its output,
        // and so is the result left as it was (the arm that forwards it unchanged is not
        // taken). That step is then not run, but where the step after it, which always runs
        // (not `lean`: the cap), changes nothing and leaves its output the one to go on from.
        // Not with deltas: a delta writes less.
        let mut deferred = first_cap.is_some()
            && options.level < Level::Moderate
            && capture.deltas.is_none()
            && proven_over(&trees, whole_bound(options.max_tokens, options.max_chars));
        #[cfg(test)]
        DEFERRED.with(|n| n.set(n.get() + usize::from(deferred)));
        // The options of the step `last` came from, when its render gave up.
        let mut last_gave_up: Option<ResultOptions> = None;
        if !deferred {
            match run(options, first_cap, true)? {
                Some((f, _)) if bound.holds_filtered(&f, counted) => {
                    // A page the budget sent at a later step is compared at that step while it is
                    // held: the level's delta would send back what that step hid (an unchanged
                    // page its whole difference), not the short form.
                    let delta = matches!(sent_as.get(), Some(Sent::Delta { .. }));
                    let Some((step, held)) = held_step.filter(|_| delta) else {
                        return Ok(Some(f));
                    };
                    let Some((step, mut step_options)) =
                        steps.into_iter().find(|(name, _)| *name == step)
                    else {
                        return Ok(Some(f));
                    };
                    step_options.level = held.level;
                    step_options.snapshot = held.limits.clone();
                    // Rendered whole: a step that gave up would not fit either.
                    if let Some((at_step, _)) = run(&step_options, None, true)? {
                        if bound.holds_filtered(&at_step, counted) {
                            return Ok(Some(sent_at(capture, at_step, step, &step_options)));
                        }
                    }
                    // The page grew past that step: the level's own delta, as it was.
                    return Ok(run(options, None, true)?.map(|(f, _)| f));
                }
                // Unchanged and within the budget without a stats line: forwarded as it is.
                None if whole_bound(options.max_tokens, options.max_chars)
                    .holds_texts(&result, original_tokens) =>
                {
                    return Ok(None)
                }
                other => {
                    last_gave_up = other.as_ref().filter(|(_, g)| *g).map(|_| options.clone());
                    last = other.map(|(f, _)| f);
                }
            }
        }
        let snapshot = trees.has_snapshot();
        for (i, (step, step_options)) in steps.iter().enumerate() {
            let mut step_options = step_options.clone();
            if *step == LEAN {
                // It changes snapshots only (another result would come out as before), and
                // keeps as many nodes as the step before's size leaves room for.
                let nodes = last.as_ref().filter(|_| snapshot).and_then(|before| {
                    let mut figures = before.figures;
                    figures.text_tokens_out = tokens_out(before, counted);
                    lean_nodes(&step_options.snapshot, &figures, bound)
                });
                match nodes {
                    Some(nodes) => step_options.snapshot.max_nodes = nodes,
                    None => continue,
                }
            }
            let step_cap = cap_before(steps.get(i + 1));
            match run(&step_options, step_cap, true)? {
                Some((f, gave_up)) => {
                    if bound.holds_filtered(&f, counted) {
                        return Ok(Some(sent_at(capture, f, step, &step_options)));
                    }
                    last_gave_up = gave_up.then_some(step_options);
                    last = Some(f);
                }
                None if deferred => {
                    if let Some((f, gave_up)) = run(options, first_cap, true)? {
                        last_gave_up = gave_up.then(|| options.clone());
                        last = Some(f);
                    }
                }
                None => {}
            }
            deferred = false;
        }
        if let Some(step_options) = last_gave_up {
            // The cut's base written whole (the later steps left the text unchanged); what
            // the session keeps of the page stays that of the last step run.
            last = run(&step_options, None, false)?.map(|(f, _)| f);
        }
    }
    let (base, filtered) = match last {
        Some(f) => (f, true),
        None => (unchanged(result, raw_tokens.unwrap_or_default()), false),
    };
    // The agent gets part of the page only: no fingerprint holds for it, the next one is full.
    capture.holds = None;
    Ok(Some(cut(
        base,
        filtered,
        options,
        capture.raw.is_some(),
        structured,
    )))
}

/// `filtered`, the output of the budget's `step` (with `options`), as sent: its note names the
/// step, and what the agent holds of the page was sent at it.
fn sent_at(
    capture: &mut SnapshotCapture<'_>,
    mut filtered: FilteredValue,
    step: &'static str,
    options: &ResultOptions,
) -> FilteredValue {
    filtered.budget = Some(BudgetNote {
        step,
        cut_text: None,
    });
    if let Some(page) = capture.holds.as_mut() {
        page.budget_step = Some((
            step,
            SnapshotOptions {
                level: options.level,
                limits: options.snapshot.clone(),
            },
        ));
    }
    filtered
}

/// Whether the output of a `light` step without deltas is surely over `whole`'s characters
/// (`ParsedTrees::light_units_at_least`).
fn proven_over(trees: &ParsedTrees<'_>, whole: Bound) -> bool {
    whole.chars != usize::MAX && trees.light_units_at_least(whole.chars + 1) > whole.chars
}

/// Where a step's render may give up under `bound` (`OutputCap`): past it by the most the
/// estimate can lose where the snapshot's text meets the text around it and where a notation
/// puts lines into it (a few seams), and the characters of a line end it may drop.
fn give_up_at(bound: Bound) -> Option<OutputCap> {
    #[cfg(test)]
    if !GIVING_UP.with(|g| g.get()) {
        return None;
    }
    Some(OutputCap {
        tokens: bound
            .tokens
            .saturating_add(4 * tokens::MAX_TOKENS_LOST_AT_SEAM),
        chars: bound.chars.saturating_add(16),
    })
}

/// A result no filter changed, as a `FilteredValue` (figures of the original, whose text
/// blocks are estimated at `raw_tokens`).
fn unchanged(result: Map<String, Value>, raw_tokens: &[usize]) -> FilteredValue {
    let mut figures = FilterFigures::default();
    figures.text_bytes_in = token_texts(&result).map(str::len).sum();
    figures.text_tokens_in = raw_tokens.iter().sum();
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
    structured: Option<&structured::StructuredText<'_>>,
) -> FilteredValue {
    let bound = content_bound(options);
    let whole = whole_bound(options.max_tokens, options.max_chars);
    let repeated = structured::repeated_key_if_kept(&base.result, options);
    let texts: Vec<String> = token_texts(&base.result).map(str::to_string).collect();
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
            let Some(text) = block_text_mut(block) else {
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
        structured,
    );
    base.figures.structured_bytes_removed += removed.bytes;
    base.figures.structured_tokens_removed += removed.tokens;
    base.figures.text_bytes_out = token_texts(&base.result).map(str::len).sum();
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

#[cfg(test)]
mod tests;
