//! `snapshot::filter_snapshot` (chrome-devtools-mcp text, and YAML when it looks like YAML) at
//! the level the first byte picks, with tiny limits at times: no panic, no uid invented, never
//! larger than the input, `off` byte-identical, filtering the output again is safe too.
#![no_main]

use fuzz_support::{check_snapshot, snapshot_options, Input};
use libfuzzer_sys::fuzz_target;
use mcp_snapshot_filter_core::level::Level;
use mcp_snapshot_filter_core::notation::filter_snapshot;

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let level = input.level();
    let options = snapshot_options(&mut input, level);
    let text = input.rest();
    let out = filter_snapshot(&text, &options);
    if level == Level::Off {
        assert_eq!(out.text, text, "off changed the text");
    }
    check_snapshot(&text, &out.text, level.as_str());
    let again = filter_snapshot(&out.text, &options);
    check_snapshot(&out.text, &again.text, "refiltered");
});
