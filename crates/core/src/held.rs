//! What the agent holds: for one client, the latest raw snapshot of each page with what it was
//! sent of it (the delta fingerprint, that snapshot's number, deltas in a row), the snapshots
//! numbered so far, how the last one went, the whole texts a budget cut (by id, for
//! `read_result`), and what to put back when an answer is not delivered.
//!
//! The session holds one [`Held`], its current client's; `crate::era` parks the other clients'
//! whole. Deltas, the budget and the proxy's tools ask it through its methods. Every byte it
//! keeps is counted in one place, [`Store::put`]: raw snapshots (with their fingerprints) and
//! cut texts each within the cache bound, oldest evicted first; an evicted page is forgotten
//! with what was sent of it, so its next snapshot is sent whole. A snapshot larger than the
//! whole bound is not kept, and its page's older one is dropped with what was sent of it: the
//! page is then remembered as too large (and as the latest, when it was snapshotted last), so
//! the proxy's tools say so rather than read an older page.

use std::collections::{HashMap, HashSet, VecDeque};

use crate::snapshot::delta::{DeltaInput, Sent, SentPage};

/// Default bound: the largest snapshot of the corpus is under 1 MB; 32 MiB holds dozens of pages.
pub const DEFAULT_CACHE_BYTES: usize = 32 * 1024 * 1024;

/// Why a snapshot could not be kept or found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CacheMiss {
    /// No snapshot was taken yet (for that page, when one is named).
    NoSnapshot { page: Option<String> },
    /// The snapshot was larger than the whole cache.
    TooLarge {
        page: String,
        bytes: usize,
        cap: usize,
    },
}

/// What one client holds (see the module doc).
#[derive(Debug)]
pub struct Held {
    /// Per page: the raw snapshot and what the agent was sent of it.
    pages: Store<Page>,
    /// Whole texts a budget cut, by id.
    cut_texts: Store<String>,
    /// Snapshots taken of each page so far (numbers the next one in a delta's header).
    numbers: HashMap<String, u64>,
    /// How the last snapshot was sent, with deltas on.
    last_sent: Option<Sent>,
    /// The page of the last snapshot kept and what the agent held of it before: put back when
    /// that answer is not delivered.
    before_last: Option<(String, Option<SentPage>, Option<SentPage>)>,
    /// Pages whose latest snapshot was larger than the whole bound, with its size in bytes.
    too_large: HashMap<String, usize>,
    /// The page snapshotted last, kept or not.
    latest: Option<String>,
    /// Pages snapshotted before the upstream restarted or reconnected and not since: their next
    /// snapshot says why it is whole (`FullReason::UpstreamReset`).
    reset_pages: HashSet<String>,
}

#[derive(Debug)]
struct Page {
    raw: String,
    /// What the agent holds of the page, with deltas on.
    sent: Option<SentPage>,
    /// What it was sent of the page before that, where uids renumber (`SentPage::has_shape`):
    /// a page a modal dialog's snapshot covered is matched against it (`snapshot::identity`).
    earlier: Option<SentPage>,
    /// Older uids the agent was shown for a node, with the key it knows the node by (see
    /// `current_uid`); only those of keys still held.
    aliases: HashMap<String, String>,
}

impl Held {
    /// Nothing held, within `cap_bytes` for snapshots and as much again for cut texts.
    pub fn new(cap_bytes: usize) -> Held {
        Held {
            pages: Store::new(cap_bytes),
            cut_texts: Store::new(cap_bytes),
            numbers: HashMap::new(),
            last_sent: None,
            before_last: None,
            too_large: HashMap::new(),
            latest: None,
            reset_pages: HashSet::new(),
        }
    }

    /// Bytes of snapshots (with their fingerprints) and cut texts held.
    pub fn bytes(&self) -> usize {
        self.pages.bytes + self.cut_texts.bytes
    }

    /// Bytes of raw snapshots (with their fingerprints) held.
    pub fn snapshot_bytes(&self) -> usize {
        self.pages.bytes
    }

    /// Nothing was sent to this client yet (or all of it was forgotten).
    pub fn is_empty(&self) -> bool {
        self.pages.entries.is_empty()
            && self.cut_texts.entries.is_empty()
            && self.numbers.is_empty()
            && self.too_large.is_empty()
    }

    /// The number the next snapshot of `page` gets (1 for its first).
    pub fn next_number(&self, page: &str) -> u64 {
        self.numbers.get(page).copied().unwrap_or(0) + 1
    }

    /// What a delta of the next snapshot of `page` is written against.
    pub fn delta_input(&self, page: &str) -> DeltaInput<'_> {
        let held = self.pages.get(Some(page));
        DeltaInput {
            sent: held.and_then(|p| p.sent.as_ref()),
            earlier: held.and_then(|p| p.earlier.as_ref()),
            number: self.next_number(page),
            upstream_reset: self.reset_pages.contains(page),
        }
    }

    /// The upstream's current uid of the node of `page` the agent was shown as `uid`, when the
    /// page renumbered it since and the node is in its latest snapshot, matched for certain
    /// (`snapshot::identity`); `None`: `uid` goes upstream as it is.
    pub fn current_uid(&self, page: &str, uid: &str) -> Option<&str> {
        let held = self.pages.get(Some(page))?;
        held.sent.as_ref()?.current_uid(uid, &held.aliases)
    }

    /// The page snapshotted last, if any.
    pub fn latest_page(&self) -> Option<String> {
        self.latest.clone()
    }

    /// Forgets every identity: what was sent of each page (its next snapshot is sent whole),
    /// the pages before them and the older uids. For an upstream that restarted or whose
    /// browser reconnected: its uids may name other elements now.
    pub fn forget_identity(&mut self) {
        self.mark_reset();
        for entry in self.pages.entries.iter_mut() {
            entry.value.sent = None;
            entry.value.earlier = None;
            entry.value.aliases = HashMap::new();
            entry.bytes = entry.value.weight();
        }
        self.pages.bytes = self.pages.entries.iter().map(|e| e.bytes).sum();
        self.before_last = None;
    }

    /// A new answer is being filtered: nothing of the last one is pending any more.
    pub fn start_answer(&mut self) {
        self.last_sent = None;
        self.before_last = None;
    }

    /// A snapshot of `page` numbered `number` was filtered.
    pub fn count_snapshot(&mut self, page: &str, number: u64) {
        self.numbers.insert(page.to_string(), number);
        self.reset_pages.remove(page);
    }

    /// Every page snapshotted so far: their next snapshot is whole because of the reset.
    fn mark_reset(&mut self) {
        self.reset_pages.extend(self.numbers.keys().cloned());
    }

    /// How the snapshot of the answer being filtered was sent.
    pub fn set_last_sent(&mut self, sent: Option<Sent>) {
        self.last_sent = sent;
    }

    /// How the last snapshot was sent with deltas on (`None`: deltas off, or no snapshot).
    pub fn last_sent(&self) -> Option<Sent> {
        self.last_sent
    }

    /// Keeps the latest raw snapshot of `page` and what the agent holds once it is sent
    /// (`holds`), remembering what it held before (see `answer_not_delivered`). A fingerprint
    /// that does not fit is dropped (the page's next snapshot is then sent whole) while the raw
    /// text, which the proxy's tools need, still fits. A raw text larger than the bound is not
    /// kept: the page's older one is dropped with what was sent of it (its next snapshot is sent
    /// whole), and the page is remembered as too large, for `snapshot`.
    pub fn keep_snapshot(
        &mut self,
        page: &str,
        raw: String,
        holds: Option<SentPage>,
    ) -> Result<(), CacheMiss> {
        let before = self.take_sent(page);
        let (earlier_before, mut aliases) = self
            .pages
            .update(page, |p| (p.earlier.take(), std::mem::take(&mut p.aliases)))
            .unwrap_or_default();
        self.before_last = Some((page.to_string(), before.clone(), earlier_before.clone()));
        self.latest = Some(page.to_string());
        // The page as held before is kept only where identity reads it. A modal dialog's
        // snapshot covered it: the page under the dialog stays the one kept, so that a page
        // after two dialog snapshots (a form opened, then filled) is matched against it.
        let before = match (before, earlier_before) {
            (Some(b), Some(e)) if b.is_covered() => Some(e),
            (b, _) => b,
        };
        let earlier = before.filter(|b| b.has_shape() && holds.is_some());
        if let Some(holds) = holds.as_ref() {
            aliases.retain(|_, key| {
                holds.has_key(key) || earlier.as_ref().is_some_and(|e| e.has_key(key))
            });
            for (uid, key) in holds.renumbered() {
                aliases.insert(uid.to_string(), key.to_string());
            }
        } else {
            aliases.clear();
        }
        let mut entry = Page {
            raw,
            sent: holds,
            earlier,
            aliases,
        };
        if entry.weight() > self.pages.cap {
            entry.sent = None;
            entry.earlier = None;
            entry.aliases.clear();
        }
        match self.pages.put(page, entry) {
            Ok(()) => {
                self.too_large.remove(page);
                Ok(())
            }
            Err(bytes) => {
                self.too_large.insert(page.to_string(), bytes);
                Err(self.too_large_miss(page, bytes))
            }
        }
    }

    /// The answer last filtered never reaches the agent (the client cancelled the request, or
    /// went away): what the agent held of its page before is what it holds, while the page is
    /// kept and it fits; else the page's next snapshot is sent whole. The raw snapshot stays
    /// (it is the page as it is now, for the proxy's tools).
    pub fn answer_not_delivered(&mut self) {
        let Some((page, before, earlier)) = self.before_last.take() else {
            return;
        };
        let _ = self.take_sent(&page);
        self.pages.update(&page, |p| p.earlier = None);
        let Some(before) = before else { return };
        let earlier =
            earlier.filter(|e| before.approx_bytes() + e.approx_bytes() <= self.pages.room());
        if before.approx_bytes() > self.pages.room() {
            return;
        }
        self.pages.update(&page, |p| {
            p.sent = Some(before);
            p.earlier = earlier;
        });
    }

    /// An answer before the last never reached the agent (a cancellation crossed it on the
    /// wire): what was sent of `page` since is no base for a delta, so its next snapshot is
    /// sent whole. The raw snapshot stays, as in `answer_not_delivered`.
    pub fn forget_sent(&mut self, page: &str) {
        let _ = self.take_sent(page);
    }

    /// The last answer is settled (delivered): nothing is put back any more. A client is
    /// parked only so (`crate::era`), and holds then only what it was sent.
    pub fn settle(&mut self) {
        self.before_last = None;
    }

    /// The agent now holds `page` whole (`expand_snapshot` without uid; the page snapshotted
    /// last when `None`): the count of deltas in a row starts again.
    pub fn whole_page_sent(&mut self, page: Option<&str>) {
        let Some(page) = page.or(self.latest.as_deref()).map(str::to_string) else {
            return;
        };
        self.pages.update(&page, |p| {
            if let Some(sent) = p.sent.as_mut() {
                sent.deltas_in_row = 0;
            }
        });
    }

    /// The upstream restarted, or its browser did: every uid the agent holds is gone. No page
    /// is a base for a delta any more, nor a snapshot the proxy's tools read (its uids would
    /// click nothing). Snapshot numbers go on, so that a number is never given twice to a page,
    /// and cut texts stay readable (they are text, not uids).
    pub fn forget_pages(&mut self) {
        self.mark_reset();
        self.pages = Store::new(self.pages.cap);
        self.too_large.clear();
        self.latest = None;
        self.last_sent = None;
        self.before_last = None;
    }

    /// The raw snapshot of `page`, or of the page snapshotted last when `page` is `None`; a
    /// page whose latest snapshot was larger than the whole bound is `TooLarge` (never an
    /// older snapshot, nor another page's).
    pub fn snapshot(&self, page: Option<&str>) -> Result<&str, CacheMiss> {
        let key = page.or(self.latest.as_deref());
        if let Some((key, &bytes)) = key.and_then(|k| self.too_large.get_key_value(k)) {
            return Err(self.too_large_miss(key, bytes));
        }
        self.pages
            .get(key)
            .map(|p| p.raw.as_str())
            .ok_or_else(|| CacheMiss::NoSnapshot {
                page: page.map(str::to_string),
            })
    }

    fn too_large_miss(&self, page: &str, bytes: usize) -> CacheMiss {
        CacheMiss::TooLarge {
            page: page.to_string(),
            bytes,
            cap: self.pages.cap,
        }
    }

    /// Keeps a text a budget cut left out under `id`, for `read_result`; one larger than the
    /// whole bound is not kept (`read_result` then says so).
    pub fn keep_cut_text(&mut self, id: &str, text: String) {
        let _ = self.cut_texts.put(id, text);
    }

    /// The whole text cut under `id`, while it is kept.
    pub fn cut_text(&self, id: &str) -> Option<&str> {
        self.cut_texts.get(Some(id)).map(String::as_str)
    }

    /// Takes what the agent was sent of `page` out of its entry (its bytes with it).
    fn take_sent(&mut self, page: &str) -> Option<SentPage> {
        self.pages.update(page, |p| p.sent.take()).flatten()
    }
}

/// What a kept value counts against the bound.
trait Weigh {
    fn weight(&self) -> usize;
}

impl Weigh for Page {
    fn weight(&self) -> usize {
        self.raw.len()
            + self.sent.as_ref().map_or(0, SentPage::approx_bytes)
            + self.earlier.as_ref().map_or(0, SentPage::approx_bytes)
            + self
                .aliases
                .iter()
                .map(|(a, k)| a.len() + k.len() + 48)
                .sum::<usize>()
    }
}

impl Weigh for String {
    fn weight(&self) -> usize {
        self.len()
    }
}

/// Values by key within a byte bound, oldest first, at most one per key.
#[derive(Debug)]
struct Store<V> {
    cap: usize,
    bytes: usize,
    entries: VecDeque<Entry<V>>,
}

#[derive(Debug)]
struct Entry<V> {
    key: String,
    value: V,
    /// Its weight when last put or updated.
    bytes: usize,
}

impl<V: Weigh> Store<V> {
    fn new(cap: usize) -> Store<V> {
        Store {
            cap,
            bytes: 0,
            entries: VecDeque::new(),
        }
    }

    fn room(&self) -> usize {
        self.cap.saturating_sub(self.bytes)
    }

    /// Stores `value` under `key` in place of the one before, evicting the oldest until the
    /// bound holds; a value heavier than the whole bound is not stored (`Err` holds its weight),
    /// and the one before is dropped even so.
    fn put(&mut self, key: &str, value: V) -> Result<(), usize> {
        if let Some(at) = self.entries.iter().position(|e| e.key == key) {
            if let Some(old) = self.entries.remove(at) {
                self.bytes -= old.bytes;
            }
        }
        let bytes = value.weight();
        if bytes > self.cap {
            return Err(bytes);
        }
        while self.bytes + bytes > self.cap {
            match self.entries.pop_front() {
                Some(old) => self.bytes -= old.bytes,
                None => break,
            }
        }
        self.bytes += bytes;
        self.entries.push_back(Entry {
            key: key.to_string(),
            value,
            bytes,
        });
        Ok(())
    }

    /// The value of `key`, or the one stored last when `key` is `None`.
    fn get(&self, key: Option<&str>) -> Option<&V> {
        match key {
            Some(k) => self.entries.iter().rev().find(|e| e.key == k),
            None => self.entries.back(),
        }
        .map(|e| &e.value)
    }

    /// Changes the value of `key` in place and counts its new weight; the caller checks the
    /// bound for what it adds (`room`).
    fn update<R>(&mut self, key: &str, change: impl FnOnce(&mut V) -> R) -> Option<R> {
        let entry = self.entries.iter_mut().rev().find(|e| e.key == key)?;
        let out = change(&mut entry.value);
        let bytes = entry.value.weight();
        self.bytes = self.bytes - entry.bytes + bytes;
        entry.bytes = bytes;
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::delta::Fingerprint;
    use crate::snapshot::Notation;

    /// A raw snapshot of `n` links and what the agent holds once it is sent whole.
    fn page_of(n: usize, number: u64) -> (String, SentPage) {
        let raw: String = (0..n)
            .map(|i| format!("uid=1_{i} link \"item {i}\"\n"))
            .collect();
        let mut implied = Vec::new();
        let tree = crate::notation::cdp::Cdp.parse(&raw, &mut implied);
        let sent = Fingerprint::of(&tree).sent_page(&tree, number, 0);
        (raw, sent)
    }

    #[test]
    fn keeps_the_latest_per_page_and_defaults_to_the_last_kept() {
        let mut held = Held::new(100);
        held.keep_snapshot("1", "a".repeat(10), None).unwrap();
        held.keep_snapshot("2", "b".repeat(10), None).unwrap();
        held.keep_snapshot("1", "c".repeat(10), None).unwrap();
        assert_eq!(held.snapshot_bytes(), 20);
        assert_eq!(held.snapshot(None), Ok("c".repeat(10).as_str()));
        assert_eq!(held.snapshot(Some("2")), Ok("b".repeat(10).as_str()));
        assert_eq!(
            held.snapshot(Some("3")),
            Err(CacheMiss::NoSnapshot {
                page: Some("3".into())
            })
        );
    }

    #[test]
    fn evicts_oldest_first_and_never_exceeds_the_bound() {
        let mut held = Held::new(25);
        for (page, c) in [("1", "a"), ("2", "b"), ("3", "c")] {
            held.keep_snapshot(page, c.repeat(10), None).unwrap();
        }
        assert!(held.snapshot_bytes() <= 25);
        assert!(held.snapshot(Some("1")).is_err());
        assert!(held.snapshot(Some("2")).is_ok() && held.snapshot(Some("3")).is_ok());
        assert!(matches!(
            held.keep_snapshot("4", "d".repeat(26), None),
            Err(CacheMiss::TooLarge { bytes: 26, .. })
        ));
        assert!(held.snapshot_bytes() <= 25);
        // Cut texts have their own bound, the same.
        held.keep_cut_text("r1", "x".repeat(20));
        held.keep_cut_text("r2", "y".repeat(20));
        assert_eq!(held.cut_text("r1"), None);
        assert_eq!(held.cut_text("r2"), Some("y".repeat(20).as_str()));
        held.keep_cut_text("r3", "z".repeat(26));
        assert_eq!(held.cut_text("r3"), None);
        assert!(held.bytes() <= 50);
    }

    #[test]
    fn a_fingerprint_that_does_not_fit_is_dropped_but_the_raw_text_kept() {
        let (raw, sent) = page_of(50, 1);
        let mut roomy = Held::new(raw.len() + sent.approx_bytes());
        roomy
            .keep_snapshot("1", raw.clone(), Some(sent.clone()))
            .unwrap();
        assert!(roomy.delta_input("1").sent.is_some());
        let mut tight = Held::new(raw.len() + 1);
        tight.keep_snapshot("1", raw.clone(), Some(sent)).unwrap();
        assert!(tight.delta_input("1").sent.is_none());
        assert_eq!(tight.snapshot(Some("1")), Ok(raw.as_str()));
        assert_eq!(tight.snapshot_bytes(), raw.len());
    }

    /// The owner's contract for an answer that never reaches the agent: exactly what was held
    /// before comes back (its bytes too), and nothing once the answer is settled.
    #[test]
    fn an_undelivered_answer_restores_exactly_what_was_held() {
        let (raw1, sent1) = page_of(20, 1);
        let (raw2, sent2) = page_of(30, 2);
        let mut held = Held::new(1 << 20);
        held.keep_snapshot("1", raw1, Some(sent1)).unwrap();
        let bytes_before = held.snapshot_bytes();
        held.start_answer();
        held.keep_snapshot("1", raw2.clone(), Some(sent2)).unwrap();
        assert_eq!(held.delta_input("1").sent.map(|s| s.number), Some(2));
        held.answer_not_delivered();
        let restored = held.delta_input("1").sent;
        assert_eq!(restored.map(|s| (s.number, s.node_count())), Some((1, 20)));
        // The raw text is the page as it is now; the fingerprint the one held before.
        assert_eq!(held.snapshot(Some("1")), Ok(raw2.as_str()));
        assert_eq!(
            held.snapshot_bytes(),
            bytes_before - page_of(20, 1).0.len() + raw2.len()
        );
        // Once: a second call changes nothing.
        held.answer_not_delivered();
        assert_eq!(held.delta_input("1").sent.map(|s| s.number), Some(1));
        // A page's first snapshot not delivered: nothing is held of it.
        held.keep_snapshot("2", page_of(5, 1).0, Some(page_of(5, 1).1))
            .unwrap();
        held.answer_not_delivered();
        assert!(held.delta_input("2").sent.is_none());
        assert!(held.snapshot(Some("2")).is_ok());
        // Settled (delivered, or parked): nothing to put back.
        let (raw3, sent3) = page_of(10, 3);
        held.keep_snapshot("1", raw3, Some(sent3)).unwrap();
        held.settle();
        held.answer_not_delivered();
        assert_eq!(held.delta_input("1").sent.map(|s| s.number), Some(3));
    }

    #[test]
    fn whole_page_sent_starts_the_deltas_in_a_row_again() {
        let (raw, mut sent) = page_of(5, 4);
        sent.deltas_in_row = 3;
        let mut held = Held::new(1 << 20);
        held.keep_snapshot("7", raw, Some(sent)).unwrap();
        held.whole_page_sent(None);
        assert_eq!(held.delta_input("7").sent.map(|s| s.deltas_in_row), Some(0));
        assert_eq!(held.next_number("7"), 1);
        held.count_snapshot("7", 4);
        assert_eq!(held.next_number("7"), 5);
    }

    /// A snapshot larger than the whole bound is not kept, and never answered by an older one:
    /// the page (and the latest, when it was snapshotted last) is `TooLarge`, and its older
    /// snapshot is dropped with what was sent of it, so the next one is sent whole.
    #[test]
    fn a_snapshot_larger_than_the_bound_is_too_large_not_an_older_one() {
        let (raw1, sent1) = page_of(5, 1);
        let (raw2, sent2) = page_of(6, 1);
        let (big, big_sent) = page_of(400, 2);
        let cap = raw1.len() + raw2.len() + sent1.approx_bytes() + sent2.approx_bytes();
        assert!(big.len() > cap);
        let mut held = Held::new(cap);
        held.keep_snapshot("1", raw1.clone(), Some(sent1)).unwrap();
        held.keep_snapshot("2", raw2, Some(sent2)).unwrap();
        held.start_answer();
        let too_large = CacheMiss::TooLarge {
            page: "2".into(),
            bytes: big.len(),
            cap,
        };
        assert_eq!(
            held.keep_snapshot("2", big.clone(), Some(big_sent)),
            Err(too_large.clone())
        );
        assert_eq!(held.snapshot(None), Err(too_large.clone()));
        assert_eq!(held.snapshot(Some("2")), Err(too_large.clone()));
        assert!(held.delta_input("2").sent.is_none());
        assert_eq!(held.snapshot(Some("1")), Ok(raw1.as_str()));
        assert_eq!(
            held.snapshot_bytes(),
            raw1.len() + page_of(5, 1).1.approx_bytes()
        );
        // Not delivered: the older snapshot is gone, so nothing comes back.
        held.answer_not_delivered();
        assert!(held.delta_input("2").sent.is_none());
        assert_eq!(held.snapshot(None), Err(too_large.clone()));
        // Another page snapshotted since is the latest; page 2 stays too large.
        held.keep_snapshot("1", raw1.clone(), None).unwrap();
        assert_eq!(held.snapshot(None), Ok(raw1.as_str()));
        assert_eq!(held.snapshot(Some("2")), Err(too_large));
        // Page 2 small again: held as before.
        let (raw3, sent3) = page_of(4, 3);
        held.keep_snapshot("2", raw3.clone(), Some(sent3)).unwrap();
        assert_eq!(held.snapshot(None), Ok(raw3.as_str()));
        assert_eq!(held.snapshot(Some("2")), Ok(raw3.as_str()));
        assert_eq!(held.delta_input("2").sent.map(|s| s.number), Some(3));
    }

    #[test]
    fn nothing_held_says_no_snapshot() {
        let held = Held::new(10);
        assert!(held.is_empty());
        assert_eq!(
            held.snapshot(None),
            Err(CacheMiss::NoSnapshot { page: None })
        );
    }
}
