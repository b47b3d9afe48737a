//! The format-neutral snapshot core: the [`tree::Tree`] every notation parses into, the lossy
//! passes of each level (`prune`, `records`, `collapse`, over the one child walk of `walk`),
//! the markers that name what they hid (`marker`), the one traversal that writes a tree through
//! a notation's line writer (`render`), retrieval from the raw text (`retrieve`), and snapshot
//! deltas against what was last sent of a page (`delta`). It names
//! no notation: a notation comes in as a [`Notation`], and the choice
//! of one for a given text is made above this module.
//!
//! - `off`: the text unchanged.
//! - `light` (lossless): the notation's own compact form (see each notation's writer); every
//!   uid, role, name and value reads back from the output.
//! - `moderate`: light, plus layout nodes dropped, peripheral landmarks summarised, repeated
//!   records (grid rows flattened into siblings) cut after 5 behind one marker (the records
//!   shown stay whole; `max_condensed_records` more inside `main` may show their controls and
//!   labels only), labels before the controls kept in summarised landmarks, a closed
//!   combobox's or listbox's options in place up to 50 (past that the first 10 and the
//!   selected one), long names cut, text per container and runs of similar siblings capped,
//!   depth and node caps. A hidden run of leaves shorter than its marker is shown instead.
//! - `aggressive`: moderate with tighter limits (2 records, 10 options, 120 nodes, …), focus on
//!   `main`, and the few plain leaves between two hidden runs hidden with them (one marker per
//!   section of text instead of one per gap between links).
//!
//! Consecutive hidden siblings always share one marker, whatever hid them; the records form
//! of the marker is used when the run is exactly one run of records.
//! Markers name the smallest thing that gives back what they hide: the hidden siblings
//! themselves (`expand_snapshot uid=FIRST until=LAST`), or an ancestor when they are not
//! siblings in the raw tree.

mod collapse;
pub mod delta;
pub mod identity;
pub mod marker;
mod nested;
mod open;
pub mod params;
mod prune;
mod records;
pub mod render;
pub mod retrieve;
pub(crate) mod roles;
pub mod tree;
pub mod walk;

use crate::level::Level;

pub use params::SnapshotLimits;

/// What the core needs of a notation: its parser and its writers.
pub trait Notation {
    /// Parses a snapshot body; `implied` holds strings the tree borrows (refs a notation
    /// leaves implied and its parser spells out).
    fn parse<'a>(&self, text: &'a str, implied: &'a mut Vec<String>) -> tree::Tree<'a>;

    /// The whole tree (with the notation's legend), as a level's output.
    fn render(&self, tree: &tree::Tree<'_>, lossy: bool) -> render::Rendered;

    /// The subtrees of `roots` (siblings, in order) alone, as an expand answer; `lossy` when
    /// a depth limit hid some of it.
    fn render_siblings(&self, tree: &tree::Tree<'_>, roots: &[usize], lossy: bool) -> String;

    /// One node's line, for a search hit.
    fn hit_line(&self, tree: &tree::Tree<'_>, id: usize) -> String;

    /// An ancestor's name, quoted in a search hit's path (the part between the quotes).
    fn quote_name(&self, out: &mut String, name: &str);

    /// A line of ours in the notation's comment form (the legend's tag, then `text`).
    fn comment(&self, text: &str) -> String;

    /// The whole tree as a delta (`delta::mark` set its lines): `first_line` in place of the
    /// legend.
    fn render_delta(&self, tree: &tree::Tree<'_>, first_line: &str) -> render::Rendered;

    /// At most the UTF-16 units of `render(tree, false)` on the tree as parsed (no marks), or
    /// `enough` if that is less (counting may stop there): what the lossless form writes of
    /// every node for sure, so that the budget's ladder can tell a `light` step over its bound
    /// without running it. 0 where the notation promises nothing.
    fn light_units_at_least(&self, _tree: &tree::Tree<'_>, _enough: usize) -> usize {
        0
    }

    /// Whether `render` writes `table` as a table (else its records go as nodes).
    fn writes_table(&self, _tree: &tree::Tree<'_>, _table: &tree::Table<'_>) -> bool {
        false
    }

    /// Whether `render_delta` writes a table of a delta row by row, with run lines for the
    /// rows the agent holds (`DeltaMarks::tables`); else a table the agent does not hold as
    /// it is goes whole.
    fn writes_table_deltas(&self) -> bool {
        false
    }

    /// True when the upstream gives a node a new uid though it is the same (a snapshot that
    /// did not hold it came between): deltas then match nodes by identity (`identity`), and
    /// requests go upstream with the current uid of the one the agent names.
    fn uids_renumber(&self) -> bool {
        false
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotOptions {
    pub level: Level,
    pub limits: SnapshotLimits,
}

impl SnapshotOptions {
    pub fn for_level(level: Level) -> SnapshotOptions {
        SnapshotOptions {
            level,
            limits: SnapshotLimits::for_level(level),
        }
    }
}

/// What `filter_snapshot` produced, with the counts the stats and `measure` report.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FilteredSnapshot {
    pub text: String,
    /// Distinct uids in the input.
    pub uids_in: usize,
    /// Uids rendered as nodes in the output.
    pub uids_shown: usize,
    /// Uids not rendered as nodes, each named by a marker.
    pub uids_hidden: usize,
    /// Marker lines written.
    pub markers: usize,
}

/// Visible siblings between two hidden runs that aggressive hides to write one marker, not two.
const AGGRESSIVE_MAX_GAP: usize = 3;

/// Applies the lossy passes of `options` to a parsed tree (nothing at `off`/`light`), whose
/// marks are those of the parse (`Tree::clear_marks`).
pub fn apply_passes(tree: &mut tree::Tree<'_>, options: &SnapshotOptions) {
    if options.level < Level::Moderate {
        return;
    }
    match tree.pass_memo.take() {
        None => {
            let facts = prune::Facts::new(tree);
            run_passes(tree, options, &facts, None);
        }
        Some(mut memo) => {
            let facts = memo.facts.take().unwrap_or_else(|| prune::Facts::new(tree));
            run_passes(tree, options, &facts, Some(&mut memo));
            memo.facts = Some(facts);
            tree.pass_memo = Some(memo);
        }
    }
}

/// What `apply_passes` keeps of a tree filtered at several steps (the token budget's ladder
/// filters one parse at each: `crate::result::ParsedTrees`), for the next: what no limit
/// changes, and the marks of the passes before the text budget for the limits they read.
/// Kept on the tree (`Tree::pass_memo`, set by `remember_passes`).
#[derive(Debug, Clone, Default)]
pub struct PassMemo<'a> {
    facts: Option<prune::Facts>,
    /// The marks `run_passes` set before `collapse::budget_and_collapse`, and the limits that
    /// set them: the ladder's `moderate` and `lean` steps differ after it only.
    before_budget: Option<(BeforeBudget, tree::Marks<'a>)>,
}

/// The options the passes before the text budget read (`run_passes`): equal ones set equal
/// marks on one tree.
#[derive(Debug, Clone, PartialEq, Eq)]
struct BeforeBudget {
    aggressive: bool,
    max_text_length: usize,
    max_records: usize,
    max_condensed_records: usize,
    max_table_text: usize,
    max_options: usize,
}

impl BeforeBudget {
    fn of(options: &SnapshotOptions) -> BeforeBudget {
        let limits = &options.limits;
        BeforeBudget {
            aggressive: options.level >= Level::Aggressive,
            max_text_length: limits.max_text_length,
            max_records: limits.max_records,
            max_condensed_records: limits.max_condensed_records,
            max_table_text: limits.max_table_text,
            max_options: limits.max_options,
        }
    }
}

/// Keeps what the lossy passes compute of `tree` for its next filterings (`PassMemo`): for a
/// tree filtered again and again, each time as parsed (`Tree::clear_marks`), never changed.
pub fn remember_passes(tree: &mut tree::Tree<'_>) {
    tree.pass_memo.get_or_insert_with(Box::default);
}

/// The passes of `apply_passes`, with the tree's `facts`, and `memo` to read and fill if kept.
fn run_passes<'a>(
    tree: &mut tree::Tree<'a>,
    options: &SnapshotOptions,
    facts: &prune::Facts,
    memo: Option<&mut PassMemo<'a>>,
) {
    let limits = &options.limits;
    let aggressive = options.level >= Level::Aggressive;
    let key = BeforeBudget::of(options);
    let kept = memo
        .as_ref()
        .and_then(|m| m.before_budget.as_ref())
        .filter(|(k, _)| *k == key);
    match kept {
        Some((_, marks)) => tree.set_marks(marks),
        None => {
            mark_before_budget(tree, options, facts);
            if let Some(memo) = memo {
                memo.before_budget = Some((key, tree.marks()));
            }
        }
    }
    collapse::budget_and_collapse(
        tree,
        facts,
        limits.max_text_per_container,
        limits.max_similar_siblings,
        limits.max_nav_controls,
        !aggressive,
    );
    prune::cap_depth(tree, facts, limits.max_depth);
    prune::cap_nodes(tree, facts, limits.max_nodes);
    prune::settle_hidden_runs(tree, facts, aggressive.then_some(AGGRESSIVE_MAX_GAP));
}

/// The passes before the text budget: they read of `options` what `BeforeBudget` holds only.
fn mark_before_budget(tree: &mut tree::Tree<'_>, options: &SnapshotOptions, facts: &prune::Facts) {
    let limits = &options.limits;
    let aggressive = options.level >= Level::Aggressive;
    // The marks each node takes from itself alone (and its parent), in one sweep: on a big
    // page every sweep of the nodes is a trip through memory, not cache. Names are cut here,
    // before the passes that hide, which do not read the cut.
    for id in 0..tree.nodes.len() {
        let decorative = prune::is_decorative_at(tree, facts, id);
        let Some(node) = tree.nodes.get_mut(id) else {
            continue;
        };
        if decorative {
            node.dropped = true;
        }
        node.drop_url = roles::url_is_droppable(node);
        if collapse::name_is_long(node, limits.max_text_length) {
            node.keep_chars = Some(limits.max_text_length);
        }
    }
    if aggressive {
        prune::focus_main(tree, facts);
    }
    prune::summarise_landmarks(tree, facts, aggressive);
    nested::collapse_nested(tree, facts, limits.max_records, limits.max_table_text);
    records::collapse_records(
        tree,
        facts,
        limits.max_records,
        limits.max_condensed_records,
        limits.max_table_text,
    );
    records::summarise_options(tree, facts, limits.max_options);
}

/// The level's passes over a snapshot in `notation`, written back in it. The input comes back
/// unchanged at `off`, and whenever the output would not be shorter (tiny pages, text filtered
/// already): filtering never grows a snapshot.
pub fn filter_with<N: Notation + ?Sized>(
    notation: &N,
    text: &str,
    options: &SnapshotOptions,
) -> FilteredSnapshot {
    let mut implied = Vec::new();
    let mut tree = notation.parse(text, &mut implied);
    filter_tree(notation, text, &mut tree, options)
}

/// `filter_with` on a tree read already (from upstream's structured tree of `text`, say), as
/// parsed (`Tree::clear_marks`); the tree is left marked by the level's passes.
pub fn filter_tree<N: Notation + ?Sized>(
    notation: &N,
    text: &str,
    tree: &mut tree::Tree<'_>,
    options: &SnapshotOptions,
) -> FilteredSnapshot {
    let uids_in = tree.index_uids();
    let unchanged = |markers| FilteredSnapshot {
        text: text.to_string(),
        uids_in,
        uids_shown: uids_in,
        uids_hidden: 0,
        markers,
    };
    if options.level == Level::Off || tree.nodes.is_empty() {
        return unchanged(0);
    }
    apply_passes(tree, options);
    let rendered = notation.render(tree, options.level >= Level::Moderate);
    tree.gave_up = rendered.gave_up;
    if rendered.text.len() >= text.len() {
        let markers = tree
            .nodes
            .iter()
            .filter(|n| n.kind == tree::NodeKind::Marker)
            .count();
        return unchanged(markers);
    }
    FilteredSnapshot {
        text: rendered.text,
        uids_in,
        uids_shown: rendered.uids_shown,
        uids_hidden: rendered.uids_hidden,
        markers: rendered.markers,
    }
}
