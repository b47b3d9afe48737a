//! `describe::compress_text` at every level: no panic, deterministic, `off` unchanged, no
//! negation or limit word lost.
#![no_main]

use fuzz_support::{check_limit_words, Input};
use libfuzzer_sys::fuzz_target;
use mcp_snapshot_filter_core::describe::compress_text;
use mcp_snapshot_filter_core::level::Level;

fuzz_target!(|data: &[u8]| {
    let text = Input::new(data).rest();
    for level in Level::ALL {
        let out = compress_text(&text, level);
        if level == Level::Off {
            assert_eq!(out, text);
        }
        assert_eq!(
            out,
            compress_text(&text, level),
            "{level}: not deterministic"
        );
        check_limit_words(&text, &out, level, "text");
    }
});
