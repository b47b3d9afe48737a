//! `snapshot::retrieve::{expand_subtree, search_snapshot}` on a fuzzed snapshot: a uid of the
//! snapshot (or a fuzzed one), a fuzzed depth, a fuzzed query as substring or regex. No panic;
//! a uid the snapshot holds always expands; expansions and hits name only uids of the input.
#![no_main]

use fuzz_support::{snapshot_uids, Input};
use libfuzzer_sys::fuzz_target;
use mcp_snapshot_filter_core::notation::{expand_subtree, search_snapshot};

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let pick = usize::from(input.byte());
    let depth = match input.byte() {
        0..=63 => None,
        d => Some(usize::from(d % 8)),
    };
    let regex = input.byte() & 1 == 1;
    let limit = usize::from(input.byte() % 16);
    let query = input.field();
    let fuzzed_uid = input.field();
    let raw = input.rest();

    let mut uids: Vec<String> = snapshot_uids(&raw).into_iter().collect();
    uids.sort();
    let known: std::collections::HashSet<&str> = uids.iter().map(String::as_str).collect();
    if let Some(uid) = uids.get(pick % uids.len().max(1)) {
        let expanded = expand_subtree(&raw, uid, depth);
        assert!(expanded.is_ok(), "uid {uid:?} of the input did not expand");
    }
    if let Ok(text) = expand_subtree(&raw, &fuzzed_uid, depth) {
        assert!(
            known.contains(fuzzed_uid.as_str()),
            "expanded unknown uid {fuzzed_uid:?}"
        );
        let _ = text;
    }
    if let Ok(hits) = search_snapshot(&raw, &query, regex, limit) {
        assert!(hits.hits.len() <= limit && hits.hits.len() <= hits.total);
        for hit in &hits.hits {
            assert!(
                known.contains(hit.uid.as_str()),
                "hit on unknown uid {:?}",
                hit.uid
            );
        }
    }
});
