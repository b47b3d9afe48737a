//! The Playwright YAML filter: `filter_yaml_snapshot` on the text as a body (a `- ` is put in
//! front when it lacks one, so that the YAML path is what runs), and `filter_result_text` on
//! the text as a whole result (its `### Snapshot` fence found or not). No panic, no ref
//! invented, never larger than the body, the `### Page` section before the fence unchanged.
#![no_main]

use fuzz_support::{check_snapshot, snapshot_options, Input};
use libfuzzer_sys::fuzz_target;
use mcp_snapshot_filter_core::notation::playwright::{filter_result_text, filter_yaml_snapshot};

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let level = input.level();
    let options = snapshot_options(&mut input, level);
    let mut text = input.rest();
    if !text.trim_start().starts_with("- ") {
        text.insert_str(0, "- ");
    }
    let out = filter_yaml_snapshot(&text, &options);
    check_snapshot(&text, &out.text, level.as_str());
    let again = filter_yaml_snapshot(&out.text, &options);
    check_snapshot(&out.text, &again.text, "refiltered");

    let result = format!("### Page\n- Page URL: http://h/\n### Snapshot\n```yaml\n{text}\n```\n");
    // The sections around the snapshot pass byte for byte.
    let head = "### Page\n- Page URL: http://h/\n";
    if let Some((out, _)) = filter_result_text(&result, |body| filter_yaml_snapshot(body, &options))
    {
        assert!(
            out.starts_with(head),
            "the section before the snapshot changed"
        );
    }
    let _ = filter_result_text(&text, |body| filter_yaml_snapshot(body, &options));
});
