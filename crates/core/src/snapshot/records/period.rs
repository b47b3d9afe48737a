//! Where a run of siblings repeats a record's shape (a pattern of roles) and with which period.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use crate::snapshot::roles;
use crate::snapshot::tree::{NodeKind, Tree, UidHasher};

/// Longest record looked for (siblings per record).
pub(super) const MAX_PERIOD: usize = 24;
/// Shortest record looked for: a single repeated role is `collapse_similar`'s job.
pub(super) const MIN_PERIOD: usize = 2;
/// Repetitions that make a run of records.
pub(in crate::snapshot) const MIN_RECORDS: usize = 3;

/// What a sibling contributes to a record's shape; `None` breaks a run (markers, unreadable
/// lines, headings, anything a pass hid already).
pub(super) fn shape_of<'a>(tree: &Tree<'a>, id: usize) -> Option<&'a str> {
    let node = tree.nodes.get(id)?;
    if node.kind != NodeKind::Element || node.hidden || node.role == "heading" {
        return None;
    }
    Some(if node.role.is_empty() {
        "text"
    } else {
        node.role
    })
}

/// A sibling's shape as the search reads it: its role, or `None` (it breaks a run).
pub(super) type Shape<R> = Option<R>;

/// What the search asks of a role besides equality.
pub(super) trait Role: Copy + Eq {
    /// Role-less text.
    fn is_text(self) -> bool;
    /// A control other than a link: what a settings row or a card holds.
    fn is_form_control(self) -> bool;
}

impl Role for &str {
    fn is_text(self) -> bool {
        self == "text"
    }

    fn is_form_control(self) -> bool {
        self != "link" && roles::is_interactive_role(self)
    }
}

/// A role as a number (`RoleCodes`): the search compares every sibling's shape with others at
/// every period, and comparing role strings there was most of the pass on long pages of prose.
/// Equal roles have equal codes; the low bits carry what `Role` asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct RoleCode(u32);

impl RoleCode {
    /// The role's place among those numbered (`RoleCodes::names`).
    pub(super) fn index(self) -> usize {
        (self.0 >> 2) as usize
    }
}

impl Role for RoleCode {
    fn is_text(self) -> bool {
        self.0 & 1 != 0
    }

    fn is_form_control(self) -> bool {
        self.0 & 2 != 0
    }
}

/// The roles of one pass's siblings, numbered as they are met.
#[derive(Default)]
pub(super) struct RoleCodes<'a> {
    codes: HashMap<&'a str, RoleCode, BuildHasherDefault<UidHasher>>,
    pub(super) names: Vec<&'a str>,
}

impl<'a> RoleCodes<'a> {
    pub(super) fn code(&mut self, role: &'a str) -> RoleCode {
        if let Some(&code) = self.codes.get(role) {
            return code;
        }
        let flags = u32::from(role.is_text()) | u32::from(role.is_form_control()) << 1;
        let code = RoleCode((self.names.len() as u32) << 2 | flags);
        self.names.push(role);
        self.codes.insert(role, code);
        code
    }

    pub(super) fn name(&self, code: RoleCode) -> &'a str {
        self.names.get(code.index()).copied().unwrap_or("")
    }
}

/// `a` equals `b` up to one substitution, insertion or deletion.
pub(super) fn within_one_edit<R: Role>(a: &[Shape<R>], b: &[Shape<R>]) -> bool {
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let (a_rest, b_rest) = (
        a.get(prefix..).unwrap_or(&[]),
        b.get(prefix..).unwrap_or(&[]),
    );
    match a.len() as isize - b.len() as isize {
        0 => a_rest.is_empty() || a_rest.get(1..) == b_rest.get(1..),
        1 => a_rest.get(1..) == Some(b_rest),
        -1 => b_rest.get(1..) == Some(a_rest),
        _ => false,
    }
}

/// The length of the record starting at `start` that matches `template` (exactly, or up to
/// one edit after its head); with `next_head`, the sibling after it must start a record too.
fn record_len<R: Role>(
    shapes: &[Shape<R>],
    start: usize,
    template: &[Shape<R>],
    next_head: bool,
) -> Option<usize> {
    let head = template.first().copied().flatten()?;
    let p = template.len();
    for len in [p, p + 1, p - 1] {
        if len < MIN_PERIOD {
            continue;
        }
        let Some(seg) = shapes.get(start..start + len) else {
            continue;
        };
        if seg.first() != Some(&Some(head))
            || seg.iter().skip(1).any(|s| s.is_none() || *s == Some(head))
        {
            continue;
        }
        if next_head && shapes.get(start + len).copied().flatten() != Some(head) {
            continue;
        }
        if within_one_edit(seg, template) {
            return Some(len);
        }
    }
    None
}

/// The run of records starting at `start` with period `p`: where each record starts, and
/// where the run ends (at least `MIN_RECORDS` records).
pub(super) fn records_at<R: Role>(
    shapes: &[Shape<R>],
    start: usize,
    p: usize,
) -> Option<(Vec<usize>, usize)> {
    let template = shapes.get(start..start + p)?;
    let head = template.first().copied().flatten()?;
    if template
        .iter()
        .skip(1)
        .any(|s| s.is_none() || *s == Some(head))
        || shapes.get(start + p).copied().flatten() != Some(head)
    {
        return None;
    }
    let mut starts = vec![start];
    let mut pos = start + p;
    loop {
        let len = record_len(shapes, pos, template, true);
        let last = len.is_none();
        let Some(len) = len.or_else(|| record_len(shapes, pos, template, false)) else {
            break;
        };
        starts.push(pos);
        pos += len;
        if last {
            break;
        }
    }
    (starts.len() >= MIN_RECORDS).then_some((starts, pos))
}

/// The run of records starting at `start` that repeat the `p` siblings there exactly, for
/// records whose every role recurs inside them (a settings row: its text, a switch, the
/// switch's label, a second switch and its label), which `records_at` cannot find: it needs
/// a head that opens each record once. Exact repetition needs none. `repeat_end` is
/// `repeat_end(shapes, start, p)`.
pub(super) fn exact_records_at<R: Role>(
    shapes: &[Shape<R>],
    start: usize,
    p: usize,
    repeat_end: usize,
) -> Option<(Vec<usize>, usize)> {
    // The cheap test first: this runs for every sibling and period where the sibling's shape
    // recurs (text and links running through prose), and most fail here.
    if repeat_end < start + (MIN_RECORDS - 1) * p {
        return None;
    }
    let template = shapes.get(start..start + p)?;
    // A template repeating a shorter one (a run of texts) is the shorter run's, or
    // `collapse_similar`'s for a single role.
    let repeats_shorter = (1..p).any(|d| {
        p.is_multiple_of(d)
            && template
                .iter()
                .zip(template.iter().skip(d))
                .all(|(a, b)| a == b)
    });
    // Only for rows of form controls: links running through prose keep the runs a head finds.
    let controls = template.iter().flatten().any(|&r| r.is_form_control());
    if repeats_shorter || !controls {
        return None;
    }
    // Record r repeats the first while every sibling before it equals the one `p` later.
    let records = 1 + (repeat_end - start) / p;
    let starts = (0..records).map(|r| start + r * p).collect();
    Some((starts, start + records * p))
}

/// The first sibling from `from` on that is a break or differs from the one `p` after it: the
/// siblings in `from..repeat_end` are roles, each repeated `p` siblings later.
pub(super) fn repeat_end<R: Role>(shapes: &[Shape<R>], from: usize, p: usize) -> usize {
    let mut j = from;
    while shapes.get(j).copied().flatten().is_some() && shapes.get(j + p) == shapes.get(j) {
        j += 1;
    }
    j
}

/// `repeat_end` at each period for a search that only moves forward: an end at or past the
/// search's sibling holds there too, so each sibling is compared with the one `p` later once
/// per period rather than at every start before it.
pub(super) struct RepeatEnds([Option<usize>; MAX_PERIOD + 1]);

impl RepeatEnds {
    pub(super) fn new() -> RepeatEnds {
        RepeatEnds([None; MAX_PERIOD + 1])
    }

    pub(super) fn at<R: Role>(&mut self, shapes: &[Shape<R>], from: usize, p: usize) -> usize {
        match self.0.get_mut(p) {
            Some(Some(end)) if *end >= from => *end,
            Some(slot) => *slot.insert(repeat_end(shapes, from, p)),
            None => repeat_end(shapes, from, p),
        }
    }
}

/// Moves a run back to where its first record really starts. The search needs a head that
/// occurs once per record, and that is not always a record's first node: a product card opens
/// with its image link and its name link, so the run was found from the card's checkbox, and
/// each record held one card's controls and the next card's name and prices (the last card's
/// controls shown, its name hidden). When the siblings before the run repeat the end of its
/// first record (from `floor` on), every record starts that much earlier; the last one ends
/// where the siblings after the run still follow the first record's start.
pub(super) fn align_start<R: Role>(
    shapes: &[Shape<R>],
    floor: usize,
    starts: &mut [usize],
    end: &mut usize,
) {
    let (Some(&start), Some(&second)) = (starts.first(), starts.get(1)) else {
        return;
    };
    let p = second - start;
    let matches = |a: usize, b: usize, k: usize| {
        let (Some(x), Some(y)) = (shapes.get(a..a + k), shapes.get(b..b + k)) else {
            return false;
        };
        x == y && x.iter().all(Option::is_some)
    };
    let Some(back) = (1..p)
        .rev()
        .find(|&k| start >= floor + k && matches(start - k, start + p - k, k))
    else {
        // Nothing before it repeats a record's end; does the start of a record dangle after
        // it (an inbox's toolbar button taken as the first row's head, the last row's Reply
        // left over)? Then every record starts that much later; never past a label onto its
        // control (a settings list's "Weekly summary", checkbox: the label opens the row).
        let labels = shapes.get(start).copied().flatten().is_some_and(R::is_text)
            && shapes
                .get(start + 1)
                .copied()
                .flatten()
                .is_some_and(R::is_form_control);
        if let Some(fwd) = (1..p).rev().find(|&f| !labels && matches(*end, start, f)) {
            for s in starts.iter_mut() {
                *s += fwd;
            }
            *end += fwd;
        }
        return;
    };
    for s in starts.iter_mut() {
        *s -= back;
    }
    // The last record's end moved into the next record's place: does a record follow there?
    *end = if matches(*end, start, p - back) {
        *end - back + p
    } else {
        *end - back
    };
}
