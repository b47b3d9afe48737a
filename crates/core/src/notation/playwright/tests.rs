//! Corpus-wide tests of the Playwright filter: the invariants of every level on every
//! Playwright page of the corpus, plus hostile and deep inputs.

use std::collections::{HashMap, HashSet};

use super::parse::{parse, scan, LEGEND_TAG};
use super::sections::find_yaml_snapshot;
use super::{filter_result_text, filter_yaml_snapshot};
use crate::level::Level;
use crate::notation::{expand_range, expand_subtree, search_snapshot};
use crate::snapshot::marker::read_marker;
use crate::snapshot::retrieve::sibling_range;
use crate::snapshot::tree::{NodeKind, Tree};
use crate::snapshot::SnapshotOptions;
use crate::test_support::{corpus_dir, has_corpus, note_samples_only, shipped};

/// (page/file, result text) of every Playwright corpus result.
/// Without the corpus (outside CI), the one page the repository ships a copy of
/// (`__test__/fixtures/playwright/app-megamenu/`: its snapshot, a click and a navigation).
fn corpus_results() -> Vec<(String, String)> {
    let pages_dir = if !has_corpus() && std::env::var_os("CI").is_none() {
        note_samples_only();
        shipped("__test__/fixtures/playwright")
    } else {
        let Some(dir) = corpus_dir() else {
            return Vec::new();
        };
        dir.join("playwright-mcp/pages")
    };
    let mut out = Vec::new();
    let mut pages: Vec<_> = std::fs::read_dir(pages_dir)
        .map(|rd| rd.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    pages.sort();
    for page in pages {
        let mut files: Vec<_> = std::fs::read_dir(&page)
            .map(|rd| rd.filter_map(Result::ok).map(|e| e.path()).collect())
            .unwrap_or_default();
        files.sort();
        for file in files {
            let Ok(text) = std::fs::read_to_string(&file) else {
                continue;
            };
            let Ok(json) = serde_json::from_str::<serde_json::Value>(&text) else {
                continue;
            };
            let blocks = json["result"]["content"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            for block in blocks {
                if let Some(t) = block["text"].as_str() {
                    let name = format!(
                        "{}/{}",
                        page.file_name().and_then(|s| s.to_str()).unwrap_or(""),
                        file.file_name().and_then(|s| s.to_str()).unwrap_or("")
                    );
                    out.push((name, t.to_string()));
                }
            }
        }
    }
    out
}

/// (page, YAML body) of every corpus result with an inline snapshot.
fn corpus_snapshots() -> Vec<(String, String)> {
    let all = corpus_results();
    let snapshots: Vec<(String, String)> = all
        .iter()
        .filter_map(|(n, t)| find_yaml_snapshot(t).map(|s| (n.clone(), s.body.to_string())))
        .collect();
    if has_corpus() {
        assert!(
            snapshots.len() >= 10,
            "expected the corpus' Playwright snapshots"
        );
    }
    snapshots
}

/// (uid, role, name, attributes but `cursor`) of an element node.
type Element = (String, String, Option<String>, Vec<String>);

/// The refs (shown or implied), unreadable line count and elements of a parsed body.
fn parse_owned(text: &str) -> (Vec<String>, usize, Vec<Element>) {
    let mut implied = Vec::new();
    let tree = parse(text, &mut implied);
    let elements = tree
        .nodes
        .iter()
        .filter(|n| n.kind == NodeKind::Element)
        .map(|n| {
            let mut attrs: Vec<String> = n
                .attrs
                .iter()
                .filter(|a| a.key != "cursor")
                .map(|a| format!("{}={:?}", a.key, a.value))
                .collect();
            attrs.sort();
            (
                n.uid.to_string(),
                n.role.to_string(),
                n.name.as_deref().map(str::to_string),
                attrs,
            )
        })
        .collect();
    (
        tree.uids().map(str::to_string).collect(),
        tree.unreadable_lines,
        elements,
    )
}

fn with_tree<R>(text: &str, f: impl FnOnce(&Tree<'_>) -> R) -> R {
    let mut implied = Vec::new();
    let tree = parse(text, &mut implied);
    f(&tree)
}

/// Checks every invariant of a filtered output against its input; returns the output.
fn check_invariants(name: &str, input: &str, level: Level) -> String {
    let options = SnapshotOptions::for_level(level);
    let out = filter_yaml_snapshot(input, &options);
    if level == Level::Off {
        assert_eq!(out.text, input, "{name}: off");
        return out.text;
    }
    let (raw_uids, raw_unreadable, _) = parse_owned(input);
    let input_uids: HashSet<&str> = raw_uids.iter().map(String::as_str).collect();
    assert_eq!(
        input_uids.len(),
        raw_uids.len(),
        "{name}: refs repeat upstream"
    );
    let (shown, unreadable, _) = parse_owned(&out.text);
    assert!(
        unreadable <= raw_unreadable,
        "{name} {level}: unreadable output lines"
    );
    let mut seen = HashSet::new();
    for uid in &shown {
        assert!(
            input_uids.contains(uid.as_str()),
            "{name} {level}: invented ref {uid}"
        );
        assert!(
            seen.insert(uid.as_str()),
            "{name} {level}: ref {uid} shown twice"
        );
    }
    // Every ref not shown is named by a marker: listed, or under the ref it says to expand.
    let covered: HashSet<String> = with_tree(input, |raw| {
        let by_uid: HashMap<&str, usize> = raw
            .nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| !n.uid.is_empty())
            .map(|(i, n)| (n.uid, i))
            .collect();
        let mut covered = HashSet::new();
        with_tree(&out.text, |parsed| {
            for node in parsed.nodes.iter().filter(|n| n.kind == NodeKind::Marker) {
                let m = read_marker(node.name_str());
                covered.extend(m.listed.iter().map(|s| s.to_string()));
                if let Some(uid) = m.expand_uid {
                    let &root = by_uid
                        .get(uid)
                        .unwrap_or_else(|| panic!("{name} {level}: marker names unknown {uid}"));
                    // With `until`: the siblings from `uid` to `until`, each with its subtree.
                    let roots = match m.until {
                        None => vec![root],
                        Some(until) => sibling_range(raw, uid, until).unwrap_or_else(|| {
                            panic!("{name} {level}: {uid}..{until} are not siblings in order")
                        }),
                    };
                    covered.extend(
                        roots
                            .into_iter()
                            .flat_map(|r| raw.subtree(r))
                            .filter_map(|i| raw.nodes.get(i))
                            .map(|n| n.uid.to_string()),
                    );
                }
            }
        });
        covered
    });
    for uid in &input_uids {
        assert!(
            seen.contains(uid) || covered.contains(*uid),
            "{name} {level}: ref {uid} neither shown nor named by a marker"
        );
    }
    assert_eq!(out.uids_shown, shown.len(), "{name} {level}: uids_shown");
    assert_eq!(
        filter_yaml_snapshot(input, &options).text,
        out.text,
        "{name} {level}: determinism"
    );
    let again = filter_yaml_snapshot(&out.text, &options);
    assert!(
        again.text.len() <= out.text.len(),
        "{name} {level}: refiltering grew"
    );
    if level == Level::Light {
        assert_eq!(again.text, out.text, "{name}: light is idempotent");
    }
    assert!(scan(&out.text).legend().is_some(), "{name} {level}: legend");
    out.text
}

#[test]
fn every_level_keeps_the_invariants_on_the_corpus() {
    for (name, body) in corpus_snapshots() {
        for level in Level::ALL {
            check_invariants(&name, &body, level);
        }
    }
}

/// Light loses nothing: every ref, role, name, attribute (but `cursor`), url and text reads back.
#[test]
fn light_is_lossless_on_the_corpus() {
    for (name, body) in corpus_snapshots() {
        let out = filter_yaml_snapshot(&body, &SnapshotOptions::for_level(Level::Light));
        assert_ne!(out.text, body, "{name}: light changed nothing");
        let (_, _, a) = parse_owned(&body);
        let (_, _, b) = parse_owned(&out.text);
        assert_eq!(a.len(), b.len(), "{name}: node count");
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(x, y, "{name}");
        }
        // Cursors dropped only on roles that are interactive anyway.
        let cursors = |t: &str| {
            with_tree(t, |tree| {
                tree.nodes
                    .iter()
                    .filter(|n| n.has_attr("cursor") && !crate::snapshot::roles::is_interactive(n))
                    .count()
            })
        };
        assert_eq!(cursors(&body), cursors(&out.text), "{name}: cursors");
    }
}

#[test]
fn expand_and_search_reach_every_hidden_ref() {
    for (name, body) in corpus_snapshots()
        .into_iter()
        .filter(|(_, b)| b.len() < 120_000)
    {
        let (raw_uids, _, _) = parse_owned(&body);
        for level in [Level::Moderate, Level::Aggressive] {
            let out = filter_yaml_snapshot(&body, &SnapshotOptions::for_level(level)).text;
            let mut reachable: HashSet<String> = parse_owned(&out).0.into_iter().collect();
            let expand_targets: HashSet<(String, Option<String>)> = with_tree(&out, |t| {
                t.nodes
                    .iter()
                    .filter(|n| n.kind == NodeKind::Marker)
                    .filter_map(|n| {
                        let m = read_marker(n.name_str());
                        m.expand_uid
                            .map(|u| (u.to_string(), m.until.map(str::to_string)))
                    })
                    .collect()
            });
            for (uid, until) in expand_targets {
                let expanded =
                    expand_range(&body, &uid, until.as_deref(), None).expect("marker ref expands");
                assert!(expanded.contains(&format!("[ref={uid}]")), "{name}: {uid}");
                reachable.extend(parse_owned(&expanded).0);
            }
            let missing: Vec<_> = raw_uids
                .iter()
                .filter(|u| !reachable.contains(*u))
                .collect();
            assert!(
                missing.is_empty(),
                "{name} {level}: unreachable {missing:?}"
            );
        }
    }
}

#[test]
fn results_keep_every_other_section_byte_for_byte() {
    let mut snapshots = 0;
    for (name, text) in corpus_results() {
        for level in [Level::Light, Level::Moderate, Level::Aggressive] {
            let mut raw = None;
            let out = filter_result_text(&text, |body| {
                raw = Some(body.to_string());
                filter_yaml_snapshot(body, &SnapshotOptions::for_level(level))
            });
            let Some(found) = find_yaml_snapshot(&text) else {
                assert!(
                    out.is_none() && raw.is_none(),
                    "{name}: no snapshot, no change"
                );
                continue;
            };
            snapshots += 1;
            assert_eq!(
                raw.as_deref(),
                Some(found.body),
                "{name}: raw body captured"
            );
            let (new_text, _) = out.expect("filtered");
            assert!(new_text.starts_with(found.before), "{name}");
            assert!(new_text.ends_with(found.after), "{name}");
            let new_body = find_yaml_snapshot(&new_text)
                .expect("still a snapshot")
                .body;
            assert_eq!(
                new_body,
                filter_yaml_snapshot(found.body, &SnapshotOptions::for_level(level)).text,
                "{name}"
            );
        }
    }
    assert!(snapshots > 0);
}

#[test]
fn search_finds_hidden_links_with_their_refs() {
    let Some((_, body)) = corpus_snapshots()
        .into_iter()
        .find(|(n, _)| n.starts_with("app-megamenu"))
    else {
        return;
    };
    let hits = search_snapshot(&body, "Do not sell", false, 5).expect("search");
    assert_eq!(hits.total, 1);
    let hit = &hits.hits[0];
    assert!(
        hit.line.contains("[ref=") && hit.line.starts_with("- link \"Do not sell"),
        "{}",
        hit.line
    );
    assert!(hit.path.contains("contentinfo"), "{}", hit.path);
    let aggressive =
        filter_yaml_snapshot(&body, &SnapshotOptions::for_level(Level::Aggressive)).text;
    assert!(!aggressive.contains(&format!("[ref={}]", hit.uid)));
}

#[test]
fn hostile_names_and_values_round_trip() {
    let input = "- generic [active] [ref=e1]:\n  - 'link \"It''s: a \\\"test\\\" [ref=e9]\" [ref=e2] [cursor=pointer]':\n    - /url: \"#x: y\"\n  - paragraph [ref=e3]: \"- not a node\\nsecond line\"\n  - text: \"123\"\n  - link /usr/bin/ [ref=e4]\n  - button \"日本語\" [disabled] [ref=e5]\n  - generic [ref=e6] [cursor=pointer]: '#'\n  - option \"A\" [selected]\n  - list:\n    - listitem [ref=e8]: x\n";
    let (uids, unreadable, elements) = parse_owned(input);
    assert_eq!(unreadable, 0);
    assert_eq!(uids, vec!["e1", "e2", "e3", "e4", "e5", "e6", "e8"]);
    assert_eq!(elements[1].2.as_deref(), Some("It's: a \"test\" [ref=e9]"));
    assert!(elements[1].3.iter().any(|a| a.contains("#x: y")));
    assert_eq!(elements[3].2.as_deref(), Some("- not a node\nsecond line"));
    // (filter_yaml_snapshot would keep this tiny input as it is: the legend outweighs it.)
    let light = with_tree(input, |t| super::writer::render(t, false).text);
    let (_, unreadable2, elements2) = parse_owned(&light);
    assert_eq!(unreadable2, 0, "{light}");
    assert_eq!(elements, elements2, "{light}");
    // `list` has no ref: it says so, or the listitem after it would be read as e7.
    assert!(light.contains("- list [noref]:"), "{light}");
    // The legend says what [noref] is, and only where one is written.
    assert!(
        light
            .lines()
            .next()
            .is_some_and(|l| l.ends_with("; [noref]: a node Playwright gave no ref")),
        "{light}"
    );
    let plain = with_tree("- generic [ref=e1]:\n  - listitem [ref=e2]: x\n", |t| {
        super::writer::render(t, false).text
    });
    assert!(!plain.contains("noref"), "{plain}");
}

#[test]
fn a_5000_level_tree_and_a_10_mb_line_do_not_break_it() {
    let mut deep = String::new();
    for i in 0..5000 {
        deep.push_str(&"  ".repeat(i));
        deep.push_str(&format!("- generic [ref=e{}]:\n", i + 1));
    }
    deep.push_str(&"  ".repeat(5000));
    deep.push_str(&format!(
        "- link \"{}\" [ref=e9999]\n",
        "x".repeat(10_000_000)
    ));
    for level in Level::ALL {
        let out = filter_yaml_snapshot(&deep, &SnapshotOptions::for_level(level));
        assert!(out.text.len() <= deep.len());
    }
    let expanded = expand_subtree(&deep, "e4990", Some(2)).expect("expand");
    assert!(expanded.contains("[ref=e4991]"));
}

#[test]
fn random_bytes_never_panic() {
    let mut x: u64 = 0x9e3779b97f4a7c15;
    let alphabet = b"- '\"[]:/ref=e1\n  text#\\";
    for _ in 0..300 {
        let mut s = String::new();
        for _ in 0..200 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            s.push(alphabet[(x % alphabet.len() as u64) as usize] as char);
        }
        for level in Level::ALL {
            let out = filter_yaml_snapshot(&s, &SnapshotOptions::for_level(level));
            let _ = filter_yaml_snapshot(&out.text, &SnapshotOptions::for_level(level));
        }
        let _ = search_snapshot(&s, "e", false, 3);
        let _ = expand_subtree(&s, "e1", None);
    }
}

/// Through the session: a Playwright result is filtered, its raw YAML cached under the page key
/// "" (no pageId), and expand_snapshot / search_snapshot answer with refs.
#[test]
fn the_session_filters_playwright_results_and_answers_the_proxy_tools() {
    use crate::session::{Session, SessionOptions};
    let Some((_, text)) = corpus_results()
        .into_iter()
        .find(|(n, _)| n == "app-megamenu/browser_snapshot.json")
    else {
        return;
    };
    let result = serde_json::json!({"content": [{"type": "text", "text": text}]}).to_string();
    let mut session = Session::new(SessionOptions::for_level(Level::Moderate));
    let filtered = session
        .filter_tool_result("browser_snapshot", &result, Some("{}"))
        .expect("ok")
        .expect("filtered");
    let value: serde_json::Value = serde_json::from_str(&filtered).expect("json");
    let new_text = value["content"][0]["text"].as_str().unwrap_or_default();
    assert!(new_text.starts_with("### Page\n- Page URL: http://127.0.0.1:8765/app/megamenu.html"));
    assert!(new_text.len() < text.len() / 2);
    assert!(session.cached_snapshot_bytes() > 0);
    // The refs of the page's own lines (the corpus' capture and the shipped one, of other
    // Playwright versions, number them differently).
    let lines: Vec<&str> = text.lines().map(str::trim_start).collect();
    let ref_at = |at: usize| {
        let line = lines.get(at).copied().unwrap_or_default();
        let start = line.find("[ref=").map_or(line.len(), |i| i + 5);
        line[start..]
            .split(']')
            .next()
            .unwrap_or_default()
            .to_string()
    };
    let ref_of = |start: &str| {
        ref_at(
            lines
                .iter()
                .position(|l| l.starts_with(start))
                .unwrap_or(usize::MAX),
        )
    };
    let accept = ref_of("- button \"Accept all\"");
    let do_not_sell = ref_of("- link \"Do not sell");
    let sitemap = ref_of("- link \"Site map\"");
    // The node that holds the "Do not sell" link (its parent: the nearest line above it
    // indented less).
    let raw: Vec<&str> = text.lines().collect();
    let indent = |l: &str| l.len() - l.trim_start().len();
    let footer = raw
        .iter()
        .position(|l| l.trim_start().starts_with("- link \"Do not sell"))
        .and_then(|at| (0..at).rev().find(|&i| indent(raw[i]) < indent(raw[at])))
        .map_or(String::new(), ref_at);
    assert!(
        !accept.is_empty() && !do_not_sell.is_empty() && !sitemap.is_empty() && !footer.is_empty()
    );
    // The cookie dialog's buttons stay; the footer links hide behind a marker naming a ref.
    assert!(new_text.contains(&format!("button \"Accept all\" [ref={accept}]")));
    assert!(!new_text.contains(&format!("[ref={do_not_sell}]")));
    let expanded = session
        .call_proxy_tool(
            "expand_snapshot",
            Some(&format!(r#"{{"uid": "{footer}"}}"#)),
        )
        .expect("answer");
    assert!(
        expanded.contains(&format!("[ref={do_not_sell}]")),
        "{expanded}"
    );
    let found = session
        .call_proxy_tool("search_snapshot", Some(r#"{"query": "sitemap"}"#))
        .expect("answer");
    assert!(found.contains(&format!("[ref={sitemap}]")), "{found}");
    // Results without an inline snapshot (action tools link a .yml file) pass untouched.
    let click = corpus_results()
        .into_iter()
        .find(|(n, _)| n == "app-megamenu/browser_click.json")
        .map(|(_, t)| serde_json::json!({"content": [{"type": "text", "text": t}]}).to_string());
    if let Some(click) = click {
        assert_eq!(
            session.filter_tool_result("browser_click", &click, None),
            Ok(None)
        );
    }
}

/// A `main` holding a heading, `rows` grid rows (a checkbox, a name, a plan combobox, an Edit
/// button each) and a heading after them whose ref follows the last row's.
fn small_grid(rows: usize) -> String {
    let mut s = String::from("- generic [ref=e1]:\n  - main [ref=e2]:\n    - heading \"People\" [level=1] [ref=e3]\n    - table \"People\" [ref=e4]:\n      - rowgroup [ref=e5]:\n");
    let mut n = 6;
    for r in 0..rows {
        let name = format!("Person {r}");
        let plan = if r % 2 == 0 { "Free" } else { "Pro" };
        let checked = if r == 1 { " [checked]" } else { "" };
        s.push_str(&format!(
            "        - row [ref=e{n}]:\n          - cell [ref=e{}]:\n            - checkbox \"Select {name}\"{checked} [ref=e{}]\n          - cell \"{name}\" [ref=e{}]\n          - cell \"{plan}\" [ref=e{}]:\n            - combobox \"Plan for {name}\" [ref=e{}]:\n              - option \"Free\"{}\n              - option \"Pro\"{}\n          - cell [ref=e{}]:\n            - button \"Edit {name}\" [ref=e{}] [cursor=pointer]: Edit\n",
            n + 1,
            n + 2,
            n + 3,
            n + 4,
            n + 5,
            if plan == "Free" { " [selected]" } else { "" },
            if plan == "Pro" { " [selected]" } else { "" },
            n + 6,
            n + 7,
        ));
        n += 8;
    }
    s.push_str(&format!(
        "    - heading \"After the grid\" [level=2] [ref=e{n}]\n"
    ));
    s
}

#[test]
fn rows_inside_main_are_a_table_with_every_control_ref_at_moderate() {
    let body = small_grid(8);
    let out = filter_yaml_snapshot(&body, &SnapshotOptions::for_level(Level::Moderate)).text;
    assert!(out.contains("'… table of 8 records, a line each: checkbox \"Select {name}\" [ref] | cell \"{name}\" | combobox \"Plan for {name}\" [ref] [options \"Free\" \"Pro\"] [selected=*] | button \"Edit {name}\" [ref] (uid e6…e69): expand_snapshot uid=e6 until=e62'"), "{out}");
    // Every control's ref in its row, the selected option named, states per row.
    assert!(out.contains("- 'e8|Person 0|e11 Free|e13'"), "{out}");
    assert!(
        out.contains("- 'e16 [checked]|Person 1|e19 Pro|e21'"),
        "{out}"
    );
    // The legend explains the table; the heading after it writes its ref (e70 follows the
    // last ref the rows wrote, but no ref is implied after a table).
    let legend = out.lines().next().unwrap_or("");
    assert!(legend.contains("'… table' items"), "{legend}");
    assert!(
        out.contains("heading \"After the grid\" [level=2] [ref=e70]"),
        "{out}"
    );
    // Read back, the rows are the snapshot's nodes.
    let (shown, unreadable, elements) = parse_owned(&out);
    assert_eq!(unreadable, 0);
    for r in ["e8", "e11", "e13", "e16", "e19", "e21", "e69"] {
        assert!(shown.iter().any(|s| s == r), "{r} not read back");
    }
    assert!(elements.contains(&(
        "e16".into(),
        "checkbox".into(),
        Some("Select Person 1".into()),
        vec!["checked=None".into()]
    )));
    // Five rows of controls are a table too (they hold more than links); two stay nodes;
    // light writes no table; aggressive writes one without text cells (issue 43).
    let five = filter_yaml_snapshot(&small_grid(5), &SnapshotOptions::for_level(Level::Moderate));
    assert!(five.text.contains("table of 5 records"), "{}", five.text);
    let few = filter_yaml_snapshot(&small_grid(2), &SnapshotOptions::for_level(Level::Moderate));
    assert!(!few.text.contains("table of"), "{}", few.text);
    let light = filter_yaml_snapshot(&body, &SnapshotOptions::for_level(Level::Light)).text;
    assert!(
        !light.contains("table of") && !light.contains("'… table'"),
        "{light}"
    );
}

/// Product cards whose link holds the product's picture: Playwright names an image `img`
/// (chrome-devtools-mcp `image`). Inside a named link it repeats the link's name, as in the
/// other notation: decoration, so the cards are a table of a link and a button each, and the
/// pictures' refs stay reachable behind the table's expand call.
#[test]
fn an_img_inside_a_named_link_is_decoration_as_an_image_is() {
    let mut body = String::from("- generic [ref=e1]:\n  - main [ref=e2]:\n    - heading \"Lamps\" [level=1] [ref=e3]\n    - list [ref=e4]:\n");
    let mut n = 5;
    for i in 0..6 {
        body.push_str(&format!(
            "      - listitem [ref=e{n}]:\n        - link \"Desk lamp {i}\" [ref=e{}] [cursor=pointer]:\n          - /url: /p/{i}\n          - img \"Desk lamp {i}\" [ref=e{}]\n        - button \"Add lamp {i} to cart\" [ref=e{}]\n",
            n + 1,
            n + 2,
            n + 3
        ));
        n += 4;
    }
    let out = filter_yaml_snapshot(&body, &SnapshotOptions::for_level(Level::Moderate)).text;
    assert!(out.contains("table of 6 records"), "{out}");
    assert!(out.contains("e6"), "{out}");
    assert!(!out.contains("img \"Desk lamp 0\""), "{out}");
    let (shown, unreadable, _) = parse_owned(&out);
    assert_eq!(unreadable, 0);
    for r in ["e6", "e8", "e26", "e28"] {
        assert!(shown.iter().any(|s| s == r), "{r} not read back: {out}");
    }
    check_invariants("img cards", &body, Level::Moderate);

    // Outside a table too: the picture in a named link loses its line, as chrome-devtools-mcp's
    // `image` does (counted with the layout nodes dropped, its ref reachable by expand).
    let mut page = String::from("- generic [ref=e1]:\n  - main [ref=e2]:\n");
    for i in 0..30 {
        page.push_str(&format!(
            "    - paragraph [ref=e{}]: Some prose about lamp number {i}, long enough to count\n",
            i + 3
        ));
    }
    page.push_str("    - link \"Desk lamp\" [ref=e40] [cursor=pointer]:\n      - /url: /p/0\n      - img \"Desk lamp\" [ref=e41]\n    - button \"Add\" [ref=e42]\n");
    let out = filter_yaml_snapshot(&page, &SnapshotOptions::for_level(Level::Moderate)).text;
    assert!(out.contains("link \"Desk lamp\" [ref=e40]"), "{out}");
    assert!(!out.contains("- img"), "{out}");
    assert!(out.contains("img 1"), "{out}");
    check_invariants("img in a link", &page, Level::Moderate);
}

#[test]
fn the_legend_explains_noref_only_when_the_writer_wrote_one() {
    // Page text saying ` [noref]` is no node without a ref.
    let mut body = String::from(
        "- generic [ref=e1]:\n  - paragraph [ref=e2]: the word [noref] in a sentence\n",
    );
    for k in 3..43 {
        body.push_str(&format!(
            "  - link \"Link {k}\" [ref=e{k}] [cursor=pointer]:\n    - /url: /p{k}\n"
        ));
    }
    let out = filter_yaml_snapshot(&body, &SnapshotOptions::for_level(Level::Light)).text;
    assert!(out.contains("the word [noref]"), "{out}");
    assert!(
        !out.lines().next().unwrap_or("").contains("[noref]:"),
        "{out}"
    );
    // A list Playwright gave no ref, after a ref: written `[noref]`, and the legend says so.
    body.push_str("  - list:\n    - listitem [ref=e43]: x\n");
    let out = filter_yaml_snapshot(&body, &SnapshotOptions::for_level(Level::Light)).text;
    assert!(out.contains("- list [noref]:"), "{out}");
    assert!(
        out.lines()
            .next()
            .unwrap_or("")
            .ends_with("; [noref]: a node Playwright gave no ref"),
        "{out}"
    );
}

#[test]
fn a_row_of_many_cells_stays_one_table_row() {
    // Ten `cell`s in a row, more than moderate's similar siblings: none collapses.
    let mut body = String::from("- main [ref=e1]:\n  - rowgroup [ref=e2]:\n");
    let mut n = 3;
    for r in 0..7 {
        body.push_str(&format!("    - row [ref=e{n}]:\n      - cell [ref=e{}]:\n        - checkbox \"Select {r}\" [ref=e{}]\n", n + 1, n + 2));
        n += 3;
        for c in 0..9 {
            // Long enough that two hidden cells are not shown again as cheaper than a marker.
            body.push_str(&format!(
                "      - cell \"v{r}{c} is a cell of some fifty characters\" [ref=e{n}]\n"
            ));
            n += 1;
        }
    }
    let mut options = SnapshotOptions::for_level(Level::Moderate);
    options.limits.max_table_text = 1000;
    let out = filter_yaml_snapshot(&body, &options).text;
    assert!(out.contains("'… table of 7 records"), "{out}");
    assert!(
        out.contains("|v08 is a cell of some fifty characters'"),
        "{out}"
    );
}

#[test]
fn the_node_cap_counts_a_table_by_what_its_rows_write() {
    // 40 rows of 11 nodes, 4 cells each written: under a cap of 300 nodes they all fit once
    // the `cell`s around the controls, which get no line, are not counted.
    let mut options = SnapshotOptions::for_level(Level::Moderate);
    options.limits.max_nodes = 300;
    let out = filter_yaml_snapshot(&small_grid(40), &options).text;
    assert!(out.contains("'… table of 40 records"), "{out}");
    assert!(out.contains("heading \"After the grid\""), "{out}");
}

/// The lines are read one at a time (`Scan::lines`): every line but the legend makes its node,
/// an empty line included, whatever the body's ends.
#[test]
fn every_line_but_the_legend_is_read() {
    let legend = format!("{LEGEND_TAG} (light notation)");
    let cases = [
        (String::new(), vec![]),
        ("\n".to_string(), vec![""]),
        ("\n\n".to_string(), vec!["", ""]),
        (legend.clone(), vec![]),
        (format!("{legend}\n"), vec![]),
        (format!("{legend}\n\n"), vec![""]),
        (format!("{legend}\n- a\n"), vec!["- a"]),
        ("- a\n- b".to_string(), vec!["- a", "- b"]),
        ("- a\n\n- b\n".to_string(), vec!["- a", "", "- b"]),
        (format!("- a\n{legend}"), vec!["- a", legend.as_str()]),
    ];
    for (text, lines) in cases {
        with_tree(&text, |tree| {
            let raws: Vec<&str> = tree.nodes.iter().filter_map(|n| n.raw).collect();
            assert_eq!(raws, lines, "{text:?}");
            assert_eq!(
                tree.light_notation,
                text.starts_with(LEGEND_TAG),
                "{text:?}"
            );
        });
    }
}

/// Playwright MCP 0.0.86 lists a page's WebMCP tools before the snapshot tree, as its
/// `renderWebMCPToolsYaml` writes them (issue 41, item 16): a line without a ref, its tools two
/// spaces deeper, a tool's schema or frame two deeper again, all page-provided text. Through
/// the filter, at every level, the block reads as it came (every line at its own indentation,
/// none read as a node) and the tree after it keeps the invariants.
///
/// Written by hand, not captured: Chromium 156 cannot be made to list page tools to Playwright
/// MCP 0.0.86. With `--enable-features=WebMCP,WebMCPTesting` it offers
/// `navigator.modelContext.registerTool` and `navigator.modelContextTesting.listTools`, while
/// Playwright asks `modelContext.getTools()` in its isolated world (docs/playwright.md).
#[test]
fn a_webmcp_tools_block_keeps_its_lines_and_their_indentation_at_every_level() {
    let block = [
        "- webmcp tools (page-provided, untrusted):",
        "  - search [readOnly]: Searches the catalog",
        r#"    - inputSchema: {"type":"object","properties":{"query":{"type":"string"}}}"#,
        "  - add_to_cart [ref=e1]: Adds a product to the cart",
        "    - frame: http://127.0.0.1:8765/widget.html (frame 2)",
    ];
    let mut checked = 0;
    for (name, body) in corpus_snapshots()
        .into_iter()
        .chain(own_playwright_snapshots())
    {
        let text = format!(
            "### Page\n- Page URL: http://127.0.0.1:8765/\n### Snapshot\n```yaml\n{}\n{body}```\n",
            block.join("\n")
        );
        let found = find_yaml_snapshot(&text).expect("a body");
        assert_eq!(found.body, body, "{name}: the tree is the body");
        for level in Level::ALL {
            let options = SnapshotOptions::for_level(level);
            let out = filter_result_text(&text, |b| filter_yaml_snapshot(b, &options))
                .map_or_else(|| text.clone(), |(out, _)| out);
            let lines: Vec<&str> = out.lines().collect();
            let at = lines
                .iter()
                .position(|l| *l == block[0])
                .unwrap_or_else(|| panic!("{name} at {level:?}: no block:\n{out}"));
            assert_eq!(
                lines.get(at..at + block.len()),
                Some(&block[..]),
                "{name} at {level:?}"
            );
            check_invariants(&name, found.body, level);
            checked += 1;
        }
    }
    assert!(checked >= Level::ALL.len(), "no page checked");
}

/// (page, YAML body) of our own pages captured through Playwright MCP
/// (`__test__/fixtures/playwright-own/`, `bench/capture-playwright.js`).
fn own_playwright_snapshots() -> Vec<(String, String)> {
    let dir = shipped("__test__/fixtures/playwright-own");
    let mut pages: Vec<_> = std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    pages.sort();
    pages
        .into_iter()
        .filter_map(|page| {
            let text = std::fs::read_to_string(page.join("browser_snapshot.json")).ok()?;
            let json: serde_json::Value = serde_json::from_str(&text).ok()?;
            let text = json["result"]["content"][0]["text"].as_str()?.to_string();
            let body = find_yaml_snapshot(&text)?.body.to_string();
            Some((page.display().to_string(), body))
        })
        .collect()
}

/// Every level keeps the invariants on our own pages as Playwright MCP 0.0.86 writes them
/// (`[aria-hidden]`, names on column headers, regions and dialogs).
#[test]
fn every_level_keeps_the_invariants_on_our_own_pages() {
    let pages = own_playwright_snapshots();
    assert!(pages.len() >= 6, "the own pages are shipped");
    for (name, body) in pages {
        for level in Level::ALL {
            check_invariants(&name, &body, level);
        }
    }
}

/// Page text ` ()` in a column's name stays as the page says it: the header used to drop every
/// ` ()` of its line to remove the empty ref list of ref-less nodes, and so altered page text.
#[test]
fn a_column_name_holding_empty_parentheses_stays_as_the_page_wrote_it() {
    let body = small_grid(8).replace("Edit Person", "Edit () Person");
    let out = filter_yaml_snapshot(&body, &SnapshotOptions::for_level(Level::Moderate)).text;
    assert!(out.contains("table of 8 records"), "{out}");
    assert!(out.contains("Edit () {name}"), "{out}");
    assert!(!out.contains("Edit {name}"), "{out}");
}
