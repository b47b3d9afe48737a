//! The snapshot trees of a result read once for all the steps of the budget's ladder.

use std::cell::{OnceCell, RefCell, RefMut};

use serde_json::{Map, Value};

use crate::notation::cdp::structured::StructuredSnapshot;
use crate::notation::upstream::Sections;
use crate::snapshot::tree::OutputCap;
use crate::snapshot::tree::Tree;
use crate::tokens;

use super::sections::{self, split_sections, SectionKind};
use super::structured;
use super::{budget, has_structured_snapshot, text_blocks, ResultOptions};

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
        let upstream = crate::notation::upstream_of_tool(tool_name);
        for text in texts {
            let mut bodies = Vec::new();
            if let Sections::Own { body, .. } = upstream.sections {
                bodies.extend(body(text));
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
                    .filter(|_| {
                        upstream.structured_snapshot
                            && crate::notation::upstream_of_body(body).structured_snapshot
                    })
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
    pub(super) fn structured_removed(&self) -> structured::Removed {
        self.structured_removed
    }

    pub(super) fn sections_of(&self, text: &str) -> Option<Vec<sections::Section<'r>>> {
        self.sections
            .iter()
            .find(|(t, _)| *t == text)
            .map(|(_, sections)| sections.clone())
    }

    /// The tree of `body`, as parsed: the marks of the step before taken back.
    pub(super) fn text_tree(&self, body: &str) -> Option<RefMut<'_, Tree<'r>>> {
        let (_, tree, _, _) = self.text.iter().find(|(b, _, _, _)| *b == body)?;
        let mut tree = tree.try_borrow_mut().ok()?;
        tree.clear_marks();
        Some(tree)
    }

    /// Whether a step whose render of `body` gave up at `cap` is over the budget whatever the
    /// rest: what it wrote is (`OutputCap`), and so is `body` itself, which the step sends
    /// instead when its whole render would be no shorter (`snapshot::filter_tree`).
    pub(super) fn over_after_giving_up(&self, body: &str, cap: OutputCap) -> bool {
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
    pub(super) fn structured_tree(
        &self,
        body: &str,
    ) -> Option<(RefMut<'_, Tree<'r>>, &OnceCell<String>)> {
        let (_, tree, raw) = self.structured.iter().find(|(b, _, _)| *b == body)?;
        let mut tree = tree.try_borrow_mut().ok()?;
        tree.clear_marks();
        Some((tree, raw))
    }
}
