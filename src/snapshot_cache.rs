//! The raw (unfiltered) text of the latest snapshot of each page, kept so that the proxy's own
//! tools can hand back exactly what a lossy level hid. Bounded in bytes; oldest page evicted
//! first. Each entry also holds what the agent was sent of that page (for snapshot deltas):
//! evicting a page forgets both, so its next snapshot is sent whole.

use std::collections::VecDeque;

use crate::snapshot::delta::SentPage;

/// Default cap: the largest snapshot of the corpus is under 1 MB; 32 MiB holds dozens of pages.
pub const DEFAULT_CACHE_BYTES: usize = 32 * 1024 * 1024;

#[derive(Debug)]
pub struct SnapshotCache {
    cap_bytes: usize,
    bytes: usize,
    /// Oldest first; at most one entry per page.
    entries: VecDeque<CachedSnapshot>,
}

#[derive(Debug, Clone)]
pub struct CachedSnapshot {
    pub page: String,
    pub raw: String,
    /// What the agent holds of the page, with deltas on.
    pub sent: Option<SentPage>,
    /// Bytes counted against the cap (the raw text and the fingerprint).
    bytes: usize,
}

impl PartialEq for CachedSnapshot {
    fn eq(&self, other: &Self) -> bool {
        self.page == other.page && self.raw == other.raw
    }
}

impl Eq for CachedSnapshot {}

/// Why a snapshot could not be cached or found.
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

impl SnapshotCache {
    pub fn new(cap_bytes: usize) -> SnapshotCache {
        SnapshotCache {
            cap_bytes,
            bytes: 0,
            entries: VecDeque::new(),
        }
    }

    pub fn cap_bytes(&self) -> usize {
        self.cap_bytes
    }

    /// Bytes held now (the raw texts and the fingerprints).
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Stores the latest snapshot of `page`, replacing its previous one and evicting the oldest
    /// pages until the cap holds. A snapshot larger than the cap is not stored.
    pub fn put(
        &mut self,
        page: &str,
        raw: String,
        sent: Option<SentPage>,
    ) -> Result<(), CacheMiss> {
        self.remove(page);
        let mut sent = sent;
        let mut bytes = raw.len() + sent.as_ref().map_or(0, SentPage::approx_bytes);
        if bytes > self.cap_bytes && raw.len() <= self.cap_bytes {
            // The raw text is what the proxy tools need: it goes in without the fingerprint
            // (the page's next snapshot is then sent whole).
            sent = None;
            bytes = raw.len();
        }
        if bytes > self.cap_bytes {
            return Err(CacheMiss::TooLarge {
                page: page.to_string(),
                bytes,
                cap: self.cap_bytes,
            });
        }
        while self.bytes + bytes > self.cap_bytes {
            match self.entries.pop_front() {
                Some(old) => self.bytes -= old.bytes,
                None => break,
            }
        }
        self.bytes += bytes;
        self.entries.push_back(CachedSnapshot {
            page: page.to_string(),
            raw,
            sent,
            bytes,
        });
        Ok(())
    }

    /// What the agent was last sent of `page`, while its snapshot is cached.
    pub fn sent(&self, page: &str) -> Option<&SentPage> {
        self.entries
            .iter()
            .rev()
            .find(|e| e.page == page)
            .and_then(|e| e.sent.as_ref())
    }

    /// Takes what the agent was last sent of `page` out of its entry (before the entry is
    /// replaced, so that it can be put back: see `restore_sent`).
    pub fn take_sent(&mut self, page: &str) -> Option<SentPage> {
        let entry = self.entries.iter_mut().rev().find(|e| e.page == page)?;
        let sent = entry.sent.take()?;
        let freed = sent.approx_bytes().min(entry.bytes);
        entry.bytes -= freed;
        self.bytes -= freed;
        Some(sent)
    }

    /// Puts back what the agent holds of `page` (its last snapshot was never delivered), while
    /// the page is cached and it fits; else the page's next snapshot is sent whole.
    pub fn restore_sent(&mut self, page: &str, sent: Option<SentPage>) {
        let _ = self.take_sent(page);
        let Some(sent) = sent else { return };
        let add = sent.approx_bytes();
        if self.bytes + add > self.cap_bytes {
            return;
        }
        if let Some(entry) = self.entries.iter_mut().rev().find(|e| e.page == page) {
            entry.bytes += add;
            self.bytes += add;
            entry.sent = Some(sent);
        }
    }

    /// Marks what the agent holds of `page` as a whole page (after `expand_snapshot` without
    /// uid): the count of deltas in a row starts again.
    pub fn reset_deltas_in_row(&mut self, page: &str) {
        if let Some(sent) = self
            .entries
            .iter_mut()
            .rev()
            .find(|e| e.page == page)
            .and_then(|e| e.sent.as_mut())
        {
            sent.deltas_in_row = 0;
        }
    }

    /// The snapshot of `page`, or of the page snapshotted last when `page` is `None`.
    pub fn get(&self, page: Option<&str>) -> Result<&CachedSnapshot, CacheMiss> {
        let found = match page {
            Some(p) => self.entries.iter().rev().find(|e| e.page == p),
            None => self.entries.back(),
        };
        found.ok_or_else(|| CacheMiss::NoSnapshot {
            page: page.map(str::to_string),
        })
    }

    fn remove(&mut self, page: &str) {
        if let Some(pos) = self.entries.iter().position(|e| e.page == page) {
            if let Some(old) = self.entries.remove(pos) {
                self.bytes -= old.bytes;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_latest_per_page_and_defaults_to_the_last_put() {
        let mut cache = SnapshotCache::new(100);
        cache.put("1", "a".repeat(10), None).unwrap();
        cache.put("2", "b".repeat(10), None).unwrap();
        cache.put("1", "c".repeat(10), None).unwrap();
        assert_eq!(cache.len(), 2);
        assert_eq!(cache.bytes(), 20);
        assert_eq!(cache.get(None).unwrap().page, "1");
        assert_eq!(cache.get(Some("1")).unwrap().raw, "c".repeat(10));
        assert_eq!(cache.get(Some("2")).unwrap().raw, "b".repeat(10));
        assert_eq!(
            cache.get(Some("3")),
            Err(CacheMiss::NoSnapshot {
                page: Some("3".into())
            })
        );
    }

    #[test]
    fn evicts_oldest_first_and_never_exceeds_the_cap() {
        let mut cache = SnapshotCache::new(25);
        cache.put("1", "a".repeat(10), None).unwrap();
        cache.put("2", "b".repeat(10), None).unwrap();
        cache.put("3", "c".repeat(10), None).unwrap();
        assert!(cache.bytes() <= 25);
        assert!(cache.get(Some("1")).is_err());
        assert!(cache.get(Some("2")).is_ok());
        assert!(cache.get(Some("3")).is_ok());
        let too_big = cache.put("4", "d".repeat(26), None);
        assert!(matches!(
            too_big,
            Err(CacheMiss::TooLarge { bytes: 26, .. })
        ));
        assert!(cache.bytes() <= 25);
    }

    #[test]
    fn a_fingerprint_that_does_not_fit_is_dropped_but_the_raw_text_kept() {
        use crate::snapshot::delta::Fingerprint;
        use crate::snapshot::Notation;
        let raw: String = (0..50)
            .map(|i| format!("uid=1_{i} link \"item {i}\"\n"))
            .collect();
        let mut implied = Vec::new();
        let tree = crate::notation::cdp::Cdp.parse(&raw, &mut implied);
        let sent = Fingerprint::of(&tree).sent_page(&tree, 1, 0);
        assert!(sent.approx_bytes() > 0);
        let mut roomy = SnapshotCache::new(raw.len() + sent.approx_bytes());
        roomy.put("1", raw.clone(), Some(sent.clone())).unwrap();
        assert!(roomy.sent("1").is_some());
        let mut tight = SnapshotCache::new(raw.len() + 1);
        tight.put("1", raw.clone(), Some(sent)).unwrap();
        assert!(tight.sent("1").is_none());
        assert_eq!(tight.get(Some("1")).map(|s| s.raw.len()), Ok(raw.len()));
        assert_eq!(tight.bytes(), raw.len());
    }

    #[test]
    fn empty_cache_says_no_snapshot() {
        let cache = SnapshotCache::new(10);
        assert!(cache.is_empty());
        assert_eq!(cache.get(None), Err(CacheMiss::NoSnapshot { page: None }));
    }
}
