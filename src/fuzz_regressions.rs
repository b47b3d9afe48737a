//! Inputs the fuzz targets (fuzz/) found, reduced by hand and kept as unit tests.

use crate::level::Level;
use crate::notation::playwright;
use crate::snapshot::SnapshotOptions;

fn refs(text: &str) -> Vec<String> {
    let mut implied = Vec::new();
    let tree = playwright::parse::parse(text, &mut implied);
    let refs: Vec<String> = tree.uids().map(str::to_string).collect();
    refs
}

/// playwright_filter: a YAML line with two `[ref=…]` read the first as the ref and the second
/// as an attribute, which the renderer wrote before the ref: the output's node had ref `e2`.
#[test]
fn a_second_ref_on_a_yaml_line_never_becomes_the_ref() {
    let tail: String = (3..40)
        .map(|i| format!("  - paragraph [ref=e{i}]: text {i}\n"))
        .collect();
    for head in [
        "- main [ref=e1] [ref=e2]:\n",
        "- main [ref=x\u{2}y] [ref=e2]:\n",
        "- main [ref=] [ref=e2]:\n",
    ] {
        let text = format!("{head}{tail}");
        let known = refs(&text);
        for level in Level::ALL {
            let out = playwright::filter_yaml_snapshot(&text, &SnapshotOptions::for_level(level));
            assert!(out.text.len() <= text.len(), "{head:?} {level}: grew");
            for r in refs(&out.text) {
                assert!(
                    known.contains(&r),
                    "{head:?} {level}: ref {r:?} not a ref of the input\n{}",
                    out.text
                );
            }
            assert!(out.text.contains(head), "{head:?} {level}: line not kept");
        }
    }
}

/// snapshot_retrieve: `expand_subtree(raw, "")` on the YAML `- b` expanded the ref-less node,
/// as if an empty uid named it.
#[test]
fn an_empty_uid_expands_nothing() {
    use crate::notation::expand_subtree;
    for raw in [
        "- b",
        "- b:\n  - c [ref=e2]",
        "uid=1_0 RootWebArea \"x\"\n  not a node",
    ] {
        assert!(expand_subtree(raw, "", None).is_err(), "{raw:?}");
    }
    assert!(expand_subtree("- b:\n  - c [ref=e2]", "e2", None).is_ok());
}
