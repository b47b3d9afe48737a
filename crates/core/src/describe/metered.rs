//! The description passes' regex in tests: `regex::Regex` that also counts the work of each
//! search, so the linearity test (`linear_tests`) counts work instead of timing it (a count
//! is the same on a loaded machine). A search's work is the bytes a lazy DFA of the same
//! pattern scans for it, forward and back (regex-automata's own count,
//! `Cache::search_total_len`): a pattern that scans to the end of the text for every match
//! counts n² on n bytes, as it takes n² time. The char walks of the passes count their steps
//! with `walked`.

use std::borrow::Cow;
use std::cell::Cell;

use regex::{Captures, Replacer};
use regex_automata::hybrid::{dfa, regex::Cache};
use regex_automata::util::iter::Searcher;
use regex_automata::Input;

thread_local! {
    static WORK: Cell<u64> = const { Cell::new(0) };
}

/// The work counted on this thread while `f` runs.
pub fn work_of(f: impl FnOnce()) -> u64 {
    let before = WORK.with(Cell::get);
    f();
    WORK.with(Cell::get) - before
}

/// Counts `steps` of a char walk.
pub fn walked(steps: usize) {
    WORK.with(|w| w.set(w.get() + steps as u64));
}

#[derive(Debug)]
pub struct Regex {
    inner: regex::Regex,
    dfa: regex_automata::hybrid::regex::Regex,
}

impl Regex {
    pub fn new(pattern: &str) -> Result<Regex, regex::Error> {
        let inner = regex::Regex::new(pattern)?;
        // Large enough that the cache is never cleared on the test's inputs (a clear resets
        // the count; `count` checks it did not happen).
        let config = dfa::Config::new()
            .cache_capacity(64 << 20)
            .unicode_word_boundary(true);
        let dfa = regex_automata::hybrid::regex::Regex::builder()
            .dfa(config)
            .build(pattern)
            .unwrap_or_else(|e| panic!("lazy DFA of {pattern:?}: {e}"));
        Ok(Regex { inner, dfa })
    }

    /// Counts the searches for the first match (`all`: for every match, as an iteration
    /// does) in `haystack`.
    fn count(&self, haystack: &str, all: bool) {
        let mut cache: Cache = self.dfa.create_cache();
        let mut searcher = Searcher::new(Input::new(haystack));
        let mut quit_at = None;
        loop {
            match searcher.try_advance(|input| self.dfa.try_search(&mut cache, input)) {
                Ok(Some(_)) if all => continue,
                Ok(_) => break,
                // A quit (a Unicode word boundary next to a non-ASCII byte): the rest counts
                // as scanned once.
                Err(e) => {
                    quit_at = Some(e);
                    break;
                }
            }
        }
        let (fwd, rev) = cache.as_parts();
        assert_eq!(
            fwd.clear_count() + rev.clear_count(),
            0,
            "the lazy DFA of {:?} cleared its cache: the count would be short",
            self.inner.as_str()
        );
        let mut scanned = fwd.search_total_len() + rev.search_total_len();
        if quit_at.is_some() {
            scanned += haystack.len();
        }
        walked(scanned);
    }

    pub fn as_str(&self) -> &str {
        self.inner.as_str()
    }

    pub fn is_match(&self, haystack: &str) -> bool {
        self.count(haystack, false);
        self.inner.is_match(haystack)
    }

    pub fn captures<'h>(&self, haystack: &'h str) -> Option<Captures<'h>> {
        self.count(haystack, false);
        self.inner.captures(haystack)
    }

    pub fn find_iter<'r, 'h>(&'r self, haystack: &'h str) -> regex::Matches<'r, 'h> {
        self.count(haystack, true);
        self.inner.find_iter(haystack)
    }

    pub fn replace<'h, R: Replacer>(&self, haystack: &'h str, rep: R) -> Cow<'h, str> {
        self.count(haystack, false);
        self.inner.replace(haystack, rep)
    }

    pub fn replace_all<'h, R: Replacer>(&self, haystack: &'h str, rep: R) -> Cow<'h, str> {
        self.count(haystack, true);
        self.inner.replace_all(haystack, rep)
    }
}
