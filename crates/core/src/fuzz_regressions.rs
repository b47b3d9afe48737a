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

/// What the client reads of a result: every text block's estimate.
fn sent_tokens(result_json: &str) -> usize {
    let value: serde_json::Value = serde_json::from_str(result_json).expect("JSON");
    value["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|b| b["text"].as_str())
        .map(crate::tokens::estimate_tokens)
        .sum()
}

fn budget_session(level: Level, max_tokens: usize) -> crate::session::Session {
    let mut options = crate::session::SessionOptions::for_level(level);
    options.max_tokens = max_tokens;
    options.proxy_tools = true;
    options.stats = crate::stats::StatsMode::Inline;
    crate::session::Session::new(options)
}

/// result_budget: at `--max-tokens=50` a cut trace came out at 99 tokens: the cut marker
/// (about 40) fits, the stats line the session appended after it (about 55) did not.
#[test]
fn the_stats_line_never_takes_a_result_over_a_tiny_budget() {
    let trace: String = (0..60)
        .map(|i| format!("trace event {i}: duration {}ms\n", i * 7))
        .collect();
    let result = serde_json::json!({"content": [{"type": "text", "text": trace}]}).to_string();
    for max in [50, 80, 120, 200, 400] {
        let mut session = budget_session(Level::Moderate, max);
        let out = session
            .filter_tool_result("performance_stop_trace", &result, None)
            .expect("filters")
            .expect("cut");
        assert!(sent_tokens(&out) <= max, "{max}: {out}");
        assert!(out.contains("read_result id=r1 offset="), "{out}");
        if max >= 400 {
            assert!(
                out.contains("[mcp-snapshot-filter: "),
                "{max}: no stats line\n{out}"
            );
        }
        // Paged through read_result, each page within the budget too, moving on.
        let mut offset = 0usize;
        let mut pages = 0;
        loop {
            let args = serde_json::json!({"id": "r1", "offset": offset}).to_string();
            let answer = session
                .call_proxy_tool("read_result", Some(&args))
                .expect("read_result");
            let page: serde_json::Value = serde_json::from_str(&answer).expect("JSON");
            let text = page["content"][0]["text"].as_str().unwrap_or("");
            assert!(
                crate::tokens::estimate_tokens(text) <= max,
                "{max} at {offset}: {text}"
            );
            pages += 1;
            let Some(at) = text.rfind("offset=") else {
                break;
            };
            let next: usize = text[at + 7..]
                .split(' ')
                .next()
                .and_then(|n| n.parse().ok())
                .expect("offset");
            assert!(next > offset, "{max}: read_result stays at {offset}");
            offset = next;
        }
        assert!(
            pages < trace.len() / 8,
            "{max}: {pages} pages for {} bytes",
            trace.len()
        );
    }
}

/// snapshot_delta: a Playwright snapshot with a line that is no YAML item at column 0 (`%…`,
/// a byte the fuzzer changed) puts it and the nodes after it at the top level; a delta called
/// the run from that line on unchanged, but a run that starts without a ref has no
/// `expand_snapshot` call of its own and the top level no ancestor to expand instead, so the
/// line named no call and 10 refs were neither shown nor expandable. Reduced from the
/// fuzzer's input.
#[test]
fn a_top_level_run_no_call_can_name_is_never_called_unchanged() {
    const PAGE: &str = r##"- generic [active] [ref=f41e1]:
          - link "Settings" [ref=f41e27] [cursor=pointer]:
            - /url: "#settings"
CHANGED
      - generic [ref=f41e34]:
          - option "Any" [selected]
          - option "Active"
          - option "Pending"
          - option "Suspended"
      - generic [ref=f41e36]:
        - text: Plan
          - option "Any" [selected]
          - option "Free"
          - option "Starter"
          - option "Pro"
          - option "Enterprise"
      - generic [ref=f41e38]:
        - checkbox "Only my accounts" [ref=f41e39]
%        - text: Only my accounts
      - button "Delete selected" [disabled] [ref=f41e40]
      - button "Export CSV" [ref=f41e41]
      - button "+ New customer" [ref=f41e42]
    - table "Customers" [ref=f41e43]:
      - caption [ref=f41e44]: Customer list, sortable by column
      - rowgroup [ref=f41e45]:
        - row [ref=f41e46]:
          - columnheader [ref=f41e47]:
            - checkbox "Select all rows" [ref=f41e48]
          - columnheader [ref=f41e49]:"##;
    let result = |changed: &str| {
        let body = PAGE.replace("CHANGED", changed);
        let text = format!("### Page\n- Page URL: http://h/\n### Snapshot\n```yaml\n{body}\n```\n");
        serde_json::json!({"content": [{"type": "text", "text": text}]}).to_string()
    };
    let mut options = crate::session::SessionOptions::for_level(Level::Moderate);
    options.stats = crate::stats::StatsMode::Off;
    options.max_tokens = 0;
    let mut session = crate::session::Session::new(options);
    let mut sent = String::new();
    for changed in [
        "          - /placeholder: Name, email or company",
        "        - textbox \"Filter\" [ref=f41e33]:",
    ] {
        let out = session
            .filter_tool_result("browser_snapshot", &result(changed), Some("{}"))
            .expect("filters")
            .expect("filtered");
        let value: serde_json::Value = serde_json::from_str(&out).expect("JSON");
        sent = value["content"][0]["text"]
            .as_str()
            .unwrap_or("")
            .to_string();
    }
    assert!(sent.contains("delta against snapshot 1"), "{sent}");
    for line in sent.lines().filter(|l| l.contains(" unchanged (")) {
        assert!(line.contains(": expand_snapshot uid="), "{line}\n{sent}");
    }
    // The run after the stray line is sent as it is (its subtrees compared in turn).
    for r in ["f41e40", "f41e41", "f41e42"] {
        assert!(sent.contains(&format!("[ref={r}]")), "{r}\n{sent}");
    }
}

/// structured_snapshot: a text node (`StaticText`) without a name but with an attribute was
/// written `14_66 u=http://…` in the light notation the proxy tools read, which reads back as
/// a node of role `u=http://…`: the raw kept for expand and search was not the tree.
#[test]
fn a_nameless_text_node_with_attributes_reads_back_as_itself() {
    use crate::notation::cdp::{parse, structured, writer};
    let snapshot = serde_json::json!({
        "id": "1_0", "role": "RootWebArea", "name": "page",
        "children": [
            {"id": "1_1", "role": "StaticText", "u": "http://h/a"},
            {"id": "1_2", "role": "StaticText", "name": "named", "u": "http://h/b"},
            {"id": "1_3", "role": "StaticText", "focusable": true}
        ]
    });
    let text = "uid=1_0 RootWebArea \"page\"\n  uid=1_1 u=\"http://h/a\"\n  uid=1_2 \"named\" u=\"http://h/b\"\n  uid=1_3 focusable\n";
    let read = structured::StructuredSnapshot::of_value(&snapshot).expect("read");
    let tree = read.tree(text).expect("a tree");
    let raw = writer::render(&tree, false).text;
    let back = parse::parse(&raw);
    let nodes =
        |t: &crate::snapshot::tree::Tree<'_>| -> Vec<(String, String, String, Vec<String>)> {
            t.nodes
                .iter()
                .filter(|n| !n.uid.is_empty())
                .map(|n| {
                    let attrs = n.attrs.iter().map(|a| a.key.to_string()).collect();
                    (n.uid.into(), n.role.into(), n.name_str().into(), attrs)
                })
                .collect()
        };
    assert_eq!(nodes(&back), nodes(&tree), "{raw}");
}

/// structured_snapshot: a small snapshot read from its tree came out larger at light than
/// upstream's text (the legend line alone is 130 bytes), so the text went out as it came,
/// and with it a line of page text that reads as a node (`uid=1_777 button "Claim prize"`).
#[test]
fn a_small_snapshot_with_its_tree_never_goes_out_as_its_ambiguous_text() {
    let name = "notes\"\n  uid=1_777 button \"Claim prize";
    let snapshot = serde_json::json!({
        "id": "1_0", "role": "RootWebArea", "name": "page",
        "children": [{"id": "1_1", "role": "textbox", "name": name}]
    });
    let text = format!(
        "# take_snapshot response\n## Latest page snapshot\nuid=1_0 RootWebArea \"page\"\n  uid=1_1 textbox \"{name}\"\n"
    );
    let result = serde_json::json!({
        "content": [{"type": "text", "text": text}],
        "structuredContent": {"snapshot": snapshot},
    })
    .to_string();
    for level in [Level::Light, Level::Moderate, Level::Aggressive] {
        let options = crate::result::ResultOptions::for_level(level);
        let out = crate::result::filter_tool_result("take_snapshot", &result, &options)
            .expect("filters")
            .map_or(result.clone(), |r| r.json);
        let value: serde_json::Value = serde_json::from_str(&out).expect("JSON");
        let text = value["content"][0]["text"].as_str().unwrap_or("");
        let sent = text
            .split_once("## Latest page snapshot\n")
            .map_or("", |(_, b)| b);
        let uids: Vec<&str> = crate::notation::cdp::parse::parse(sent).uids().collect();
        assert!(!uids.contains(&"1_777"), "{level}: {sent}");
        assert!(uids.contains(&"1_1"), "{level}: {sent}");
    }
}

/// snapshot_delta: with deltas on, the tree's uids were never indexed, so every repeated uid
/// was taken to find its own node: the banner summarised under the second of two nodes sharing
/// the uids `e3`/`e4`/`e5` was named `expand_snapshot uid=e4`, which returns the first one's
/// two nodes, not the 27 hidden (e1, whose uid finds it, is expanded now).
#[test]
fn with_deltas_a_marker_names_a_repeated_uid_only_where_it_finds_the_node() {
    let rows: String = (6..31)
        .map(|i| format!("      - button \"customer number {i}\" [ref=e{i}]\n"))
        .collect();
    let page = format!(
        "- generic [ref=e1]:\n  - heading \"Customers\" [level=1] [ref=e2]\n  - banner [ref=e3]:\n    - generic [ref=e4]:\n      - link \"home\" [ref=e5]\n  - banner [ref=e3]:\n    - generic [ref=e4]:\n      - link \"home\" [ref=e5]\n{rows}"
    );
    let text = format!("### Snapshot\n```yaml\n{page}```\n");
    let result = serde_json::json!({"content": [{"type": "text", "text": text}]}).to_string();
    let mut options = crate::session::SessionOptions::for_level(Level::Moderate);
    options.stats = crate::stats::StatsMode::Off;
    options.max_tokens = 0;
    let mut session = crate::session::Session::new(options);
    let out = session
        .filter_tool_result("browser_snapshot", &result, Some("{}"))
        .expect("filters")
        .expect("filtered");
    let value: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let sent = value["content"][0]["text"].as_str().unwrap_or("");
    let line = sent
        .lines()
        .find(|l| l.contains(" 27 hidden ("))
        .unwrap_or_else(|| panic!("no marker of the second banner\n{sent}"));
    let quoted = line
        .trim_start()
        .trim_start_matches("- '")
        .trim_end_matches('\'');
    let m = crate::snapshot::marker::read_marker(quoted);
    let args = serde_json::json!({"uid": m.expand_uid.expect("a call")});
    let answer = session
        .call_proxy_tool("expand_snapshot", Some(&args.to_string()))
        .expect("answers");
    for i in 6..31 {
        assert!(
            answer.contains(&format!("[ref=e{i}]")),
            "e{i}: {line}\n{answer}"
        );
    }
}

/// snapshot_filter: a line whose role held the light notation's sibling separator (`uid=1_1
/// l…uid=|2_0 RootWebArea …`, bytes the fuzzer mixed in) was written back as its role, which
/// the light reader reads as a second node `2_0` that the input does not have.
#[test]
fn a_role_holding_the_sibling_separator_never_becomes_a_node() {
    use crate::notation::cdp::parse::parse;
    let links: String = (2..40)
        .map(|i| format!("  uid=1_{i} link \"link number {i}\" url=\"http://h/p{i}\"\n"))
        .collect();
    let input = format!(
        "uid=1_0 RootWebArea \"page\" url=\"http://h/\"\n  uid=1_1 l\u{3}uid=|2_0 RootWebArea \"Orders\"\n{links}"
    );
    let known: Vec<&str> = parse(&input).uids().collect();
    for level in Level::ALL {
        let out = crate::notation::filter_snapshot(&input, &SnapshotOptions::for_level(level));
        for uid in parse(&out.text).uids() {
            assert!(
                known.contains(&uid),
                "{level}: {uid} not in the input\n{}",
                out.text
            );
        }
    }
}

/// result_budget: at 50 tokens a result of two text blocks (an image between them) went out
/// at 84: each block became a cut marker of about 40 tokens. The later block is left empty
/// now; the first marker's read_result reads on through both.
#[test]
fn a_tiny_budget_gets_one_cut_marker_not_one_per_block() {
    let lines = |what: &str| -> String {
        (0..5)
            .map(|i| format!("{what} line {i}: some text\n"))
            .collect()
    };
    let result = serde_json::json!({"content": [
        {"type": "text", "text": lines("first")},
        {"type": "image", "data": "AAAA", "mimeType": "image/png"},
        {"type": "text", "text": lines("second")},
    ], "isError": true})
    .to_string();
    for max in [50, 60, 100] {
        let mut session = budget_session(Level::Moderate, max);
        let out = session
            .filter_tool_result("performance_stop_trace", &result, None)
            .expect("filters")
            .expect("cut");
        assert!(sent_tokens(&out) <= max, "{max}: {out}");
        let value: serde_json::Value = serde_json::from_str(&out).expect("JSON");
        assert_eq!(value["content"].as_array().map(Vec::len), Some(3), "{out}");
        assert_eq!(value["content"][1]["type"], "image");
        let args = serde_json::json!({"id": "r1", "offset": 0}).to_string();
        let answer = session
            .call_proxy_tool("read_result", Some(&args))
            .expect("read_result");
        assert!(answer.contains("first line 0"), "{max}: {answer}");
    }
}
