//! Corpus-wide and property tests of the snapshot filter: the invariants of every level.

use std::collections::{HashMap, HashSet};

use super::parse::parse;
use super::writer::render_raw;
use crate::level::Level;
use crate::notation::{expand_range, expand_subtree, filter_snapshot, search_snapshot};
use crate::snapshot::marker::read_marker;
use crate::snapshot::retrieve::sibling_range;
use crate::snapshot::tree::{NodeKind, Tree};
use crate::snapshot::SnapshotOptions;
use crate::test_support::{corpus_dir, has_corpus, note_samples_only, report, shipped, XorShift};

const HEADER: &str = "## Latest page snapshot\n";

/// The chrome-devtools-mcp snapshots the repository ships (copies of corpus files), named as
/// in the corpus.
fn shipped_snapshots() -> Vec<(String, String)> {
    [
        ("app-grid", "samples/app-grid.take_snapshot.json"),
        ("app-megamenu", "__test__/fixtures/snapshots/megamenu.json"),
        ("rd-wikipedia", "samples/rd-wikipedia.take_snapshot.json"),
        (
            "rust-book-ch04-01",
            "samples/rust-book-ch04-01.take_snapshot.json",
        ),
    ]
    .into_iter()
    .map(|(page, file)| {
        let text = std::fs::read_to_string(shipped(file)).expect("a shipped sample");
        let json: serde_json::Value = serde_json::from_str(&text).expect("sample JSON");
        let body = json["result"]["content"][0]["text"]
            .as_str()
            .and_then(|t| t.split_once(HEADER))
            .map(|(_, body)| body.to_string())
            .expect("a snapshot in the sample");
        (format!("{page}/take_snapshot.json"), body)
    })
    .collect()
}

/// (name, snapshot body) of every chrome-devtools-mcp result that carries a snapshot; without
/// the corpus (outside CI), the few the repository ships.
pub fn corpus_snapshots() -> Vec<(String, String)> {
    if !has_corpus() && std::env::var_os("CI").is_none() {
        note_samples_only();
        return shipped_snapshots();
    }
    let Some(dir) = corpus_dir() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut pages: Vec<_> = std::fs::read_dir(dir.join("chrome-devtools-mcp"))
        .map(|rd| rd.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    pages.sort();
    for page in pages.into_iter().filter(|p| p.is_dir()) {
        let mut files: Vec<_> = std::fs::read_dir(&page)
            .map(|rd| rd.filter_map(Result::ok).map(|e| e.path()).collect())
            .unwrap_or_default();
        files.sort();
        for file in files
            .into_iter()
            .filter(|f| f.extension().is_some_and(|e| e == "json"))
        {
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
                let Some(t) = block["text"].as_str() else {
                    continue;
                };
                if let Some((_, body)) = t.split_once(HEADER) {
                    out.push((file.display().to_string(), body.to_string()));
                }
            }
        }
    }
    assert!(
        out.len() >= 50,
        "expected the corpus' snapshots, found {}",
        out.len()
    );
    out
}

fn shown_uids<'a>(tree: &Tree<'a>) -> Vec<&'a str> {
    tree.uids().collect()
}

/// Checks every invariant of a filtered output against its input; returns the output.
fn check_invariants(name: &str, input: &str, level: Level) -> String {
    let options = SnapshotOptions::for_level(level);
    let out = filter_snapshot(input, &options);
    let raw = parse(input);
    let input_uids: HashSet<&str> = raw.uids().collect();
    // Upstream itself repeats a uid on several text nodes at times: no uid may appear more
    // often than in the input.
    let mut input_counts: HashMap<&str, usize> = HashMap::new();
    for uid in raw.uids() {
        *input_counts.entry(uid).or_default() += 1;
    }
    let parsed = parse(&out.text);
    assert!(
        parsed.unreadable_lines <= raw.unreadable_lines,
        "{name} {level}: {} unreadable lines in output\n{input}\n---\n{}",
        parsed.unreadable_lines,
        out.text
    );
    let shown = shown_uids(&parsed);
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for uid in &shown {
        assert!(
            input_uids.contains(uid),
            "{name} {level}: invented uid {uid}"
        );
        let n = seen.entry(uid).or_default();
        *n += 1;
        assert!(
            *n <= input_counts.get(uid).copied().unwrap_or(0),
            "{name} {level}: uid {uid} shown twice"
        );
    }
    // Every uid not shown is covered by a marker: listed, or under the uid it says to expand.
    let mut covered: HashSet<&str> = HashSet::new();
    let by_uid: HashMap<&str, usize> = raw
        .nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| n.kind == NodeKind::Element)
        .map(|(i, n)| (n.uid, i))
        .collect();
    let mut expanded = HashSet::new();
    for node in parsed.nodes.iter().filter(|n| n.kind == NodeKind::Marker) {
        let m = read_marker(node.name_str());
        covered.extend(m.listed.iter().copied());
        if let Some(uid) = m.expand_uid {
            let known = |uid: &str| {
                by_uid
                    .get(uid)
                    .copied()
                    .unwrap_or_else(|| panic!("{name} {level}: marker names unknown uid {uid}"))
            };
            // With `until`: the siblings from `uid` to `until`, in order, under one parent.
            let roots = match m.until {
                None => vec![known(uid)],
                Some(until) => sibling_range(&raw, uid, until).unwrap_or_else(|| {
                    panic!("{name} {level}: {uid}..{until} are not siblings in order")
                }),
            };
            for root in roots {
                if expanded.insert(root) {
                    covered.extend(
                        raw.subtree(root)
                            .filter_map(|i| raw.nodes.get(i))
                            .map(|n| n.uid),
                    );
                }
            }
        }
    }
    for uid in &input_uids {
        assert!(
            seen.contains_key(uid) || covered.contains(uid),
            "{name} {level}: uid {uid} neither shown nor named by a marker"
        );
    }
    let distinct: HashSet<&str> = shown.iter().copied().collect();
    assert!(
        out.uids_shown == shown.len() || out.uids_shown == distinct.len(),
        "{name} {level}: uids_shown {} for {} shown",
        out.uids_shown,
        shown.len()
    );
    if level != Level::Off {
        // Deterministic, and filtering again neither crashes nor grows.
        assert_eq!(
            filter_snapshot(input, &options).text,
            out.text,
            "{name} {level}: determinism"
        );
        let again = filter_snapshot(&out.text, &options);
        assert!(
            again.text.len() <= out.text.len(),
            "{name} {level}: refiltering grew"
        );
    }
    if level == Level::Light {
        assert_eq!(shown.len(), raw.uids().count(), "{name}: light lost uids");
    }
    assert_eq!(
        out.text.ends_with('\n'),
        input.ends_with('\n'),
        "{name} {level}: final newline"
    );
    out.text
}

#[test]
fn off_is_byte_identical_and_parser_keeps_every_byte() {
    for (name, body) in corpus_snapshots() {
        let out = filter_snapshot(&body, &SnapshotOptions::for_level(Level::Off));
        assert_eq!(out.text, body, "{name}");
        let tree = parse(&body);
        assert_eq!(render_raw(&tree), body, "{name}: parse + render_raw");
        assert_eq!(tree.unreadable_lines, 0, "{name}: unreadable lines");
    }
}

#[test]
fn every_level_keeps_the_invariants_on_the_corpus() {
    for (name, body) in corpus_snapshots() {
        for level in Level::ALL {
            check_invariants(&name, &body, level);
        }
    }
}

#[test]
fn light_keeps_every_name_and_attribute() {
    for (name, body) in corpus_snapshots() {
        let out = filter_snapshot(&body, &SnapshotOptions::for_level(Level::Light));
        let (a, b) = (parse(&body), parse(&out.text));
        if out.text == body {
            continue;
        }
        let elements = |t: &Tree<'_>| -> Vec<(String, String, Option<String>)> {
            t.nodes
                .iter()
                .filter(|n| n.kind == NodeKind::Element)
                .map(|n| {
                    (
                        n.uid.to_string(),
                        n.role.to_string(),
                        n.name.as_deref().map(str::to_string),
                    )
                })
                .collect()
        };
        assert_eq!(elements(&a), elements(&b), "{name}");
        let attrs = |t: &Tree<'_>| -> usize { t.nodes.iter().map(|n| n.attrs.len()).sum() };
        assert!(attrs(&b) <= attrs(&a), "{name}");
    }
}

/// Light keeps the tree: every node reads back under the same parent, whether its line is its
/// own, shared with siblings after `|`, or its parent's after ` > `.
#[test]
fn light_keeps_every_parent() {
    let parents = |t: &Tree<'_>| -> Vec<(String, String)> {
        t.nodes
            .iter()
            .filter(|n| n.kind == NodeKind::Element)
            .map(|n| {
                let parent = n.parent.and_then(|p| t.nodes.get(p)).map_or("", |p| p.uid);
                (n.uid.to_string(), parent.to_string())
            })
            .collect()
    };
    for (name, body) in corpus_snapshots() {
        let out = filter_snapshot(&body, &SnapshotOptions::for_level(Level::Light));
        assert_eq!(parents(&parse(&body)), parents(&parse(&out.text)), "{name}");
    }
}

#[test]
fn links_write_as_markdown_only_when_they_read_back_exactly() {
    let input = concat!(
        "uid=1_0 RootWebArea \"Home\" url=\"http://x/a/\"\n",
        "  uid=1_1 list\n",
        "    uid=1_2 link \"Mosaic (web browser)\" url=\"http://x/wiki/Mosaic_(web_browser)\"\n",
        "    uid=1_3 link \"a ] b \\\\] [c](d)\nnext\" url=\"http://x/a/b.html\"\n",
        "    uid=1_4 link \"open\" url=\"http://x/q?a=(1\"\n",
        "    uid=1_5 link \"pipe\" url=\"http://x/q?a|b\"\n",
        "    uid=1_6 link url=\"http://x/nameless\"\n",
        "    uid=1_7 link \"\" url=\"http://x/empty\"\n",
        "  uid=1_8 image \"logo\" url=\"http://x/l.png\"\n",
        "  uid=1_9\n",
        "    uid=1_10 \"child | of a uid-only node\"\n",
    );
    let light = check_invariants("links", input, Level::Light);
    for line in [
        "1_2 [Mosaic (web browser)](/wiki/Mosaic_(web_browser))",
        "1_3 [a \\] b \\\\\\\\\\] [c\\](d)\\nnext](b.html)",
        "1_4 link \"open\" url=/q?a=(1",
        "1_5 link \"pipe\" url=\"/q?a|b\"",
        "1_6 link url=/nameless",
        "1_7 [](/empty)",
        "1_8 image \"logo\" url=/l.png",
        "1_9 > 1_10 \"child | of a uid-only node\"",
    ] {
        assert!(light.contains(line), "{line} not in\n{light}");
    }
    let (raw, back) = (parse(input), parse(&light));
    let nodes = |t: &Tree<'_>| -> Vec<(String, String, Option<String>, usize)> {
        t.nodes
            .iter()
            .map(|n| {
                let parent = n.parent.and_then(|p| t.nodes.get(p)).map_or("", |p| p.uid);
                (
                    n.uid.to_string(),
                    n.role.to_string(),
                    n.name.as_deref().map(str::to_string),
                    usize::from(!parent.is_empty()),
                )
            })
            .collect()
    };
    assert_eq!(nodes(&raw), nodes(&back));
    // Filtering the light text again changes nothing.
    let again = filter_snapshot(&light, &SnapshotOptions::for_level(Level::Light)).text;
    assert_eq!(again, light);
}

/// With expand_snapshot, every uid of every corpus page is reachable at every level: shown, or
/// inside the subtree expand_snapshot returns for a uid a marker names.
#[test]
fn expand_reaches_every_hidden_uid() {
    for (name, body) in corpus_snapshots()
        .into_iter()
        .filter(|(_, b)| b.len() < 200_000)
    {
        let raw_uids: HashSet<String> = parse(&body).uids().map(str::to_string).collect();
        for level in [Level::Moderate, Level::Aggressive] {
            let out = filter_snapshot(&body, &SnapshotOptions::for_level(level)).text;
            let parsed = parse(&out);
            let mut reachable: HashSet<String> = parsed.uids().map(str::to_string).collect();
            let mut asked = HashSet::new();
            for node in parsed.nodes.iter().filter(|n| n.kind == NodeKind::Marker) {
                let m = read_marker(node.name_str());
                let Some(uid) = m.expand_uid else { continue };
                if !asked.insert((uid.to_string(), m.until.map(str::to_string))) {
                    continue;
                }
                let expanded = expand_range(&body, uid, m.until, None).expect("marker expands");
                reachable.extend(parse(&expanded).uids().map(str::to_string));
            }
            let missing: Vec<_> = raw_uids.difference(&reachable).collect();
            assert!(
                missing.is_empty(),
                "{name} {level}: unreachable {missing:?}"
            );
        }
    }
}

fn corpus_page(page: &str) -> Option<String> {
    let found = corpus_snapshots()
        .into_iter()
        .find(|(n, _)| n.ends_with(&format!("{page}/take_snapshot.json")))
        .map(|(_, b)| b);
    if found.is_none() && !has_corpus() {
        report(
            "SKIPPED",
            &format!("{page} is in the corpus only, not among the shipped samples"),
        );
    }
    found
}

/// The nodes of `uid`'s subtree in the raw text, as (uid, role, name) triples.
fn raw_subtree(body: &str, uid: &str) -> Vec<(String, String, Option<String>)> {
    let tree = parse(body);
    let root = tree.find_uid(uid).expect("uid in page");
    tree.subtree(root)
        .filter_map(|i| tree.nodes.get(i))
        .map(|n| {
            (
                n.uid.to_string(),
                n.role.to_string(),
                n.name.as_deref().map(str::to_string),
            )
        })
        .collect()
}

fn expanded_nodes(text: &str) -> Vec<(String, String, Option<String>)> {
    parse(text)
        .nodes
        .iter()
        .filter(|n| n.kind == NodeKind::Element)
        .map(|n| {
            (
                n.uid.to_string(),
                n.role.to_string(),
                n.name.as_deref().map(str::to_string),
            )
        })
        .collect()
}

#[test]
fn expand_gives_back_a_collapsed_nav_and_table_region_exactly() {
    let Some(body) = corpus_page("app-grid") else {
        return;
    };
    let moderate = filter_snapshot(&body, &SnapshotOptions::for_level(Level::Moderate)).text;
    // The banner is summarised at moderate: its logo hides, its navigation's links and its
    // search box stay...
    assert!(
        moderate.contains("(link 1, text 1; uid 72_2, 72_3): expand_snapshot uid=72_2"),
        "{moderate}"
    );
    assert!(moderate.contains("72_5 link") && moderate.contains("72_20 searchbox"));
    // ... and expand returns exactly its nodes.
    let banner = expand_subtree(&body, "72_1", None).expect("banner expands");
    assert_eq!(expanded_nodes(&banner), raw_subtree(&body, "72_1"));
    assert!(banner.contains("72_5 [Dashboard](#dashboard)"), "{banner}");
    // At moderate every grid row is in place, in a table; at aggressive the rows after the
    // first two hide behind one records marker, whose uid..until expands to exactly those
    // siblings with their subtrees (not the whole of main).
    assert!(moderate.contains("… table of 40 records"), "{moderate}");
    // (Aggressive without tables, as the native API's `maxTableText: 0` asks.)
    let mut no_tables = SnapshotOptions::for_level(Level::Aggressive);
    no_tables.limits.tables = false;
    let aggressive = filter_snapshot(&body, &no_tables).text;
    let parsed = parse(&aggressive);
    let marker = parsed
        .nodes
        .iter()
        .filter(|n| n.kind == NodeKind::Marker && n.name_str().contains("more records hidden"))
        .map(|n| read_marker(n.name_str()))
        .next()
        .expect("a records marker inside main");
    let (from, until) = (
        marker.expand_uid.expect("uid"),
        marker.until.expect("until"),
    );
    let rows = expand_range(&body, from, Some(until), None).expect("rows expand");
    let raw = parse(&body);
    let run = sibling_range(&raw, from, until).expect("siblings");
    let main = raw.find_uid("72_34").expect("main");
    assert!(run.len() > 100 && run.iter().all(|&i| raw.nodes[i].parent == Some(main)));
    let expected: Vec<_> = run
        .iter()
        .flat_map(|&r| raw_subtree(&body, raw.nodes[r].uid))
        .collect();
    assert_eq!(expanded_nodes(&rows), expected);
    if let Some((first, last)) = marker.range {
        assert!(rows.contains(first) && rows.contains(last), "{rows}");
    }
    // The full main still expands; `until` before `uid`, or not a sibling, is an error.
    let main_text = expand_subtree(&body, "72_34", None).expect("main expands");
    assert_eq!(expanded_nodes(&main_text), raw_subtree(&body, "72_34"));
    assert!(expand_range(&body, until, Some(from), None).is_err());
    assert!(expand_range(&body, "72_34", Some("72_36"), None).is_err());
    // A depth-limited expand names what it hides: the run of main's children.
    let shallow = expand_subtree(&body, "72_34", Some(0)).expect("depth 0");
    let shallow_tree = parse(&shallow);
    let hidden = shallow_tree
        .nodes
        .iter()
        .find(|n| n.kind == NodeKind::Marker)
        .map(|n| read_marker(n.name_str()))
        .expect("a marker");
    let (a, b) = (
        hidden.expand_uid.expect("uid"),
        hidden.until.expect("until"),
    );
    let children = expand_range(&body, a, Some(b), None).expect("children expand");
    let mut whole = raw_subtree(&body, "72_34");
    whole.remove(0);
    assert_eq!(expanded_nodes(&children), whole);
    assert!(expand_subtree(&body, "99_999", None)
        .unwrap_err()
        .to_string()
        .contains("99_999"));
}

#[test]
fn search_finds_cut_text_with_its_full_name_and_path() {
    let Some(body) = corpus_page("rd-wikia") else {
        return;
    };
    let moderate = filter_snapshot(&body, &SnapshotOptions::for_level(Level::Moderate)).text;
    let tree = parse(&moderate);
    let cut = tree
        .nodes
        .iter()
        .find(|n| n.has_attr("cut"))
        .expect("a cut text at moderate");
    let raw = parse(&body);
    let full = raw
        .nodes
        .get(raw.find_uid(cut.uid).expect("cut uid in raw"))
        .and_then(|n| n.name.as_deref())
        .expect("name")
        .to_string();
    // Search for the last words, which the cut hid.
    let tail: String = full
        .chars()
        .rev()
        .take(25)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    let hits = search_snapshot(&body, tail.trim(), false, 5).expect("search");
    let hit = hits
        .hits
        .iter()
        .find(|h| h.uid == cut.uid)
        .expect("the cut node is found");
    let mut escaped = String::new();
    crate::notation::escape::escape_into(&mut escaped, &full);
    assert!(hit.line.contains(&escaped), "{}", hit.line);
    assert!(hit.path.starts_with("RootWebArea"), "{}", hit.path);
    // And expand gives the whole text back.
    let expanded = expand_subtree(&body, cut.uid, None).expect("expand");
    assert_eq!(
        parse(&expanded)
            .nodes
            .iter()
            .find(|n| n.uid == cut.uid)
            .and_then(|n| n.name.as_deref()),
        Some(full.as_str())
    );
    // Regex search, case-insensitive; a bad regex is a clear error.
    let re = search_snapshot(&body, "star\\s+WARS", true, 3).expect("regex");
    assert!(re.total >= 1 && re.hits.len() <= 3);
    assert!(search_snapshot(&body, "(", true, 3)
        .unwrap_err()
        .to_string()
        .contains("invalid regex"));
}

// ---------- hostile inputs ----------

#[test]
fn a_continuation_line_that_looks_like_a_node_stays_in_the_name() {
    let mut input = String::from("uid=1_0 RootWebArea \"t\" url=\"http://h/a/index.html\"\n  uid=1_1 \"Welcome\nuid=9_9 button \"Pay now\"\"\n  uid=1_2 button \"OK\"\n");
    // Enough ordinary nodes that the light notation pays for its legend.
    for i in 3..40 {
        input.push_str(&format!(
            "  uid=1_{i} link \"Item {i}\" url=\"http://h/a/{i}.html\"\n"
        ));
    }
    let input = input.as_str();
    let tree = parse(input);
    assert_eq!(
        tree.uids().take(3).collect::<Vec<_>>(),
        ["1_0", "1_1", "1_2"]
    );
    assert_eq!(tree.uids().count(), 40);
    let text = tree
        .nodes
        .iter()
        .find(|n| n.uid == "1_1")
        .and_then(|n| n.name.as_deref());
    assert_eq!(text, Some("Welcome\nuid=9_9 button \"Pay now\""));
    let light = check_invariants("continuation", input, Level::Light);
    assert!(
        light.contains("1_1 \"Welcome\\nuid=9_9 button \\\"Pay now\\\"\""),
        "{light}"
    );
    assert!(!light.lines().any(|l| l.trim_start().starts_with("9_9")));
}

#[test]
fn names_full_of_quotes_and_newlines_round_trip() {
    let input = "uid=1_0 RootWebArea \"a \"q\" b\" url=\"http://x/\"\n  uid=1_1 \"\"\"\"\n  uid=1_2 link \"say \"hi\"\" url=\"http://x/y\"\n  uid=1_3 \"line1\n\n  indented \"quoted\"\nlast\"\n  uid=1_4 \"x\"\n";
    let tree = parse(input);
    assert_eq!(render_raw(&tree), input);
    let names: Vec<_> = tree
        .nodes
        .iter()
        .map(|n| n.name_str().to_string())
        .collect();
    assert_eq!(
        names,
        [
            "a \"q\" b",
            "\"\"",
            "say \"hi\"",
            "line1\n\n  indented \"quoted\"\nlast",
            "x"
        ]
    );
    for level in Level::ALL {
        check_invariants("quotes", input, level);
    }
}

/// Bytes the parser's searches look at while `moderate` filters `input` (`parse::SCANNED`).
fn scanned_filtering(input: &str) -> usize {
    super::parse::SCANNED.with(|n| n.set(0));
    filter_snapshot(input, &SnapshotOptions::for_level(Level::Moderate));
    super::parse::SCANNED.with(std::cell::Cell::get)
}

/// Hostile sizes stay linear, counted in bytes the parser's searches look at rather than timed
/// (a loaded machine would fail a correct parser): twice the input costs about twice the work,
/// where a search that starts over per line or per quote would cost four times as much.
#[test]
fn a_5000_level_tree_and_a_10_mb_line_do_not_break_it() {
    let mut deep = String::new();
    for d in 0..5000 {
        deep.push_str(&"  ".repeat(d));
        deep.push_str(&format!("uid=1_{d} generic \"n{d}\"\n"));
    }
    for level in Level::ALL {
        check_invariants("deep", &deep, level);
    }
    let long = |mb: usize| {
        format!(
            "uid=1_0 RootWebArea \"{}\" url=\"http://x/\"\n  uid=1_1 \"{}\"",
            "\"a".repeat(mb * 200_000),
            "b".repeat(mb * 1_000_000)
        )
    };
    let unclosed = |lines: usize| "uid=1_1 \"a\n".repeat(lines);
    // Counted on small sizes first, so that a quadratic search fails here quickly.
    for (what, small, large) in [
        ("a long line", long(1), long(2)),
        ("unclosed names", unclosed(10_000), unclosed(20_000)),
    ] {
        let (a, b) = (scanned_filtering(&small), scanned_filtering(&large));
        let ratio = b as f64 / a.max(1) as f64;
        assert!(
            a >= small.len() && ratio < 2.5,
            "{what}: {a} bytes looked at for {} bytes, {b} for twice that ({ratio:.2}x)",
            small.len()
        );
    }
    let long = long(10);
    for level in Level::ALL {
        let out = filter_snapshot(&long, &SnapshotOptions::for_level(level));
        assert!(out.text.len() <= long.len());
    }
    // Many unclosed names must not make reading quadratic.
    check_invariants("unclosed", &unclosed(200_000), Level::Moderate);
}

/// Snapshot-like text: roles, names with quotes/newlines/uid-lookalikes, attrs, depth jumps.
fn generate(rng: &mut XorShift) -> String {
    const ROLES: &[&str] = &[
        "",
        "",
        "link",
        "button",
        "navigation",
        "main",
        "banner",
        "generic",
        "heading",
        "textbox",
        "Iframe",
        "RootWebArea",
        "option",
        "contentinfo",
        "ignored",
        "InlineTextBox",
    ];
    const WORDS: &[&str] = &[
        "a",
        "Pay now",
        "\"",
        "\n",
        "uid=3_3 button \"x\"",
        "  ",
        "…",
        "\\",
        "é漢",
        "\" url=\"x",
        "\n  uid=4_4",
        "#snapshot-filter",
    ];
    const ATTRS: &[&str] = &[
        "focusable",
        "disableable disabled",
        "expandable",
        "url=\"http://h/p/q.html\"",
        "url=\"http://h/p/r#s\"",
        "level=\"2\"",
        "value=\"v\"",
        "selected",
    ];
    let mut out = String::from("uid=1_0 RootWebArea \"root\" url=\"http://h/p/index.html\"\n");
    let mut depth = 1usize;
    let n = 1 + rng.below(120);
    for i in 1..=n {
        depth = match rng.below(4) {
            0 => depth + 1,
            1 => depth.saturating_sub(1 + rng.below(3) as usize).max(1),
            _ => depth,
        };
        out.push_str(&"  ".repeat(depth));
        out.push_str(&format!("uid={}_{i}", 1 + rng.below(3)));
        let role = rng.pick(ROLES);
        if !role.is_empty() {
            out.push(' ');
            out.push_str(role);
        }
        if role.is_empty() || rng.below(2) == 0 {
            out.push_str(" \"");
            for _ in 0..rng.below(4) {
                out.push_str(rng.pick(WORDS));
            }
            out.push('"');
        }
        for _ in 0..rng.below(3) {
            out.push(' ');
            out.push_str(rng.pick(ATTRS));
        }
        if rng.below(40) == 0 {
            out.push_str(super::parse::DEVTOOLS_SELECTED);
        }
        out.push('\n');
        if rng.below(30) == 0 {
            out.push_str("stray line\n");
        }
    }
    if rng.below(2) == 0 {
        out.pop();
    }
    out
}

#[test]
fn generated_snapshots_keep_the_invariants() {
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    for case in 0..300 {
        let input = generate(&mut rng);
        assert_eq!(render_raw(&parse(&input)), input, "case {case}");
        for level in Level::ALL {
            let mut options = SnapshotOptions::for_level(level);
            if level >= Level::Moderate {
                // Small limits so every pass fires on small inputs.
                options.limits.max_nodes = 1 + rng.below(30) as usize;
                options.limits.max_depth = 1 + rng.below(5) as usize;
                options.limits.max_similar_siblings = 1 + rng.below(3) as usize;
                options.limits.max_text_length = rng.below(20) as usize;
                options.limits.max_text_per_container = rng.below(40) as usize;
            }
            let out = filter_snapshot(&input, &options);
            let again = filter_snapshot(&out.text, &options);
            assert!(
                again.text.len() <= out.text.len(),
                "case {case} {level}: grew\n{input}"
            );
            assert!(
                out.uids_shown + out.uids_hidden >= out.uids_in,
                "case {case} {level}: counts"
            );
        }
        for level in [Level::Light, Level::Moderate, Level::Aggressive] {
            check_invariants(&format!("case {case}"), &input, level);
        }
    }
}

/// `light_units_at_least` is a lower bound of the light render of a tree as parsed: on
/// generated snapshots, random bytes and the corpus.
#[test]
fn the_light_bound_never_exceeds_the_light_render() {
    let check = |name: &str, input: &str| {
        let tree = parse(input);
        let bound = super::writer::light_units_at_least(&tree, usize::MAX);
        let units = crate::tokens::utf16_len(&super::writer::render(&tree, false).text);
        assert!(
            bound <= units,
            "{name}: bound {bound} over {units} units\n{input}"
        );
        assert_eq!(
            super::writer::light_units_at_least(&tree, bound / 2),
            bound / 2
        );
    };
    let mut rng = XorShift(0x5eed_1a7e);
    for case in 0..300 {
        check(&format!("case {case}"), &generate(&mut rng));
        let len = rng.below(2000) as usize;
        let bytes = snapshot_like_bytes(&mut rng, len);
        check(&format!("bytes {case}"), &String::from_utf8_lossy(&bytes));
    }
    for (name, body) in corpus_snapshots() {
        check(&name, &body);
    }
}

/// `len` random bytes rich in what the parser reads: quotes, line breaks, spaces, `uid=1_`.
fn snapshot_like_bytes(rng: &mut XorShift, len: usize) -> Vec<u8> {
    (0..len)
        .map(|_| match rng.below(6) {
            0 => b'"',
            1 => b'\n',
            2 => b' ',
            3 => b"uid=1_"[rng.below(6) as usize],
            _ => rng.next() as u8,
        })
        .collect()
}

#[test]
fn random_bytes_never_panic() {
    let mut rng = XorShift(42);
    for _ in 0..200 {
        let len = rng.below(4000) as usize;
        let bytes = snapshot_like_bytes(&mut rng, len);
        let text = String::from_utf8_lossy(&bytes);
        for level in Level::ALL {
            let out = filter_snapshot(&text, &SnapshotOptions::for_level(level));
            filter_snapshot(&out.text, &SnapshotOptions::for_level(level));
        }
        let _ = search_snapshot(&text, "a", false, 3);
        let _ = expand_subtree(&text, "1_1", Some(1));
    }
}

/// A settings form (our own app page, __test__/site/app/settings.html, as chrome-devtools-mcp
/// snapshots it): at moderate the prose gives way, but no section title before its toggles
/// and no control's label is hidden while the control shows.
#[test]
fn moderate_keeps_labels_and_section_titles_before_prose() {
    let prose = "Changes are saved when you press Save. Some settings apply to every project of the workspace; others only to your own account. Settings marked with an asterisk need an administrator to confirm them.";
    let raw = format!(
        "uid=1_0 RootWebArea \"Settings\"\n  uid=1_13 main\n    uid=1_14 heading \"Settings\" level=\"1\"\n    uid=1_15 \"{prose}\"\n    uid=1_16 \"Notifications\"\n    uid=1_17 \"Choose what we email you about. You can unsubscribe from any message with the link at its end.\"\n    uid=1_18 \"Weekly summary\"\n    uid=1_19 checkbox \"Weekly summary\" checked\n    uid=1_20 \"Security alerts\"\n    uid=1_21 checkbox \"Security alerts\"\n    uid=1_32 \"Danger zone\"\n    uid=1_33 \"{prose}\"\n    uid=1_34 \"Transfer ownership\"\n    uid=1_35 button \"Transfer\"\n    uid=1_36 \"{prose}\"\n    uid=1_37 \"{prose}\"\n"
    );
    let out = filter_snapshot(&raw, &SnapshotOptions::for_level(Level::Moderate)).text;
    for uid in [
        "1_16", "1_18", "1_19", "1_20", "1_21", "1_32", "1_34", "1_35",
    ] {
        assert!(
            out.lines().any(|l| l.split(['|', ' ']).any(|t| t == uid)),
            "{uid} hidden:\n{out}"
        );
    }
    // The prose after the last control is what gave way.
    assert!(out.contains("expand_snapshot uid=1_36"), "{out}");
}

/// The snapshot body of step `step` (1-based line) of a session the repository ships.
fn session_snapshot(file: &str, step: usize) -> String {
    let text = std::fs::read_to_string(shipped(file)).expect("a shipped session");
    let line = text.lines().nth(step - 1).expect("the step");
    let json: serde_json::Value = serde_json::from_str(line).expect("step JSON");
    json["result"]["content"][0]["text"]
        .as_str()
        .and_then(|t| t.split_once(HEADER))
        .map(|(_, body)| body.split("\n## ").next().unwrap_or(body).to_string())
        .expect("a snapshot in the step")
}

/// Uids written as nodes by a filtered text.
fn uids_written(out: &str) -> HashSet<String> {
    parse(out).uids().map(str::to_string).collect()
}

/// Whether `text` is written on the table row holding the cell `uid` (a text cell goes without
/// its uid).
fn in_row_of(out: &str, uid: &str, text: &str) -> bool {
    out.lines().any(|l| {
        l.trim_start()
            .split('|')
            .any(|cell| cell.split(' ').next() == Some(uid))
            && l.split('|').any(|cell| cell == text)
    })
}

/// One row of the users table (__test__/site/app/users.html, recorded by
/// bench/sessions/app-own-large.json): its checkbox, name, email, last sign-in and buttons.
struct UserRow {
    checkbox: String,
    name: String,
    email: String,
    date: String,
    edit: String,
    delete: String,
}

fn user_rows(raw: &str) -> Vec<UserRow> {
    let tree = parse(raw);
    let uid = |id: usize| tree.nodes[id].uid.to_string();
    let mut rows = Vec::new();
    for (id, node) in tree.nodes.iter().enumerate() {
        let name = node.name_str();
        if node.role != "checkbox" || !name.starts_with("Select ") || name.contains(" all ") {
            continue;
        }
        let parent = node.parent.expect("a row in main");
        let siblings = tree.children(parent);
        let at = siblings
            .iter()
            .position(|&s| s == id)
            .expect("among its siblings");
        let cell = |k: usize| siblings[at + k];
        assert_eq!(
            tree.nodes[cell(6)].name_str(),
            format!("Edit {}", &name[7..])
        );
        rows.push(UserRow {
            checkbox: uid(id),
            name: uid(cell(1)),
            email: uid(cell(2)),
            date: uid(cell(5)),
            edit: uid(cell(6)),
            delete: uid(cell(7)),
        });
    }
    rows
}

/// A 48-row users table, as it is by default. At moderate every row's controls stay in place,
/// as a table: one line per row with its checkbox, name and buttons. At aggressive rows are
/// wholes: the first two show every cell, the others hide whole behind one marker; never a row
/// with its checkbox or buttons shown and its name hidden.
#[test]
fn a_users_table_shows_rows_as_wholes() {
    let raw = session_snapshot("__test__/fixtures/sessions/app-own-large.jsonl", 3);
    let rows = user_rows(&raw);
    assert_eq!(rows.len(), 48);
    let out = filter_snapshot(&raw, &SnapshotOptions::for_level(Level::Moderate)).text;
    let shown = uids_written(&out);
    assert!(out.contains("… table of 48 records"), "{out}");
    let tree = parse(&raw);
    for (k, row) in rows.iter().enumerate() {
        for cell in [&row.checkbox, &row.edit, &row.delete] {
            assert!(shown.contains(cell), "moderate row {k} {cell}:\n{out}");
        }
        // Checkbox, name (a text cell, without its uid) and buttons on the row's one line.
        let name = tree
            .find_uid(&row.name)
            .map(|id| tree.nodes[id].name_str())
            .expect("the row's name");
        assert!(
            in_row_of(&out, &row.checkbox, name),
            "row {k} {name}:\n{out}"
        );
        let line = out
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{}|", row.checkbox)))
            .unwrap_or_else(|| panic!("row {k} has no line:\n{out}"));
        for cell in [&row.edit, &row.delete] {
            assert!(line.contains(cell.as_str()), "row {k}: {line}");
        }
    }
    // At aggressive the table keeps every row's controls and its name (a text cell, written
    // without its uid), and only the text cells that tell rows apart (issue 43).
    let out = filter_snapshot(&raw, &SnapshotOptions::for_level(Level::Aggressive)).text;
    let shown = uids_written(&out);
    for (k, row) in rows.iter().enumerate() {
        for cell in [&row.checkbox, &row.edit, &row.delete] {
            assert!(shown.contains(cell), "aggressive row {k} {cell}:\n{out}");
        }
    }
    assert!(out.contains("… table of 48 records"), "{out}");
}

/// Two people of one name, role and status (`Alan Hamilton|Member|Invited`) would read alike
/// within the table's text budget: a hidden column that tells them apart is written too, so
/// every row's line, its uids aside, differs from every other, and no more columns than that.
#[test]
fn rows_that_would_read_alike_are_told_apart() {
    // The table's rows (the lines after its header), each without its uid cells.
    let row_texts = |out: &str| -> Vec<String> {
        let is_uid = |c: &str| {
            c.split_once('_').is_some_and(|(a, b)| {
                [a, b]
                    .iter()
                    .all(|p| !p.is_empty() && p.bytes().all(|x| x.is_ascii_digit()))
            })
        };
        out.lines()
            .skip_while(|l| !l.contains("… table of 48 records"))
            .skip(1)
            .take(48)
            .map(|l| {
                l.trim_start()
                    .split('|')
                    .filter(|c| !is_uid(c))
                    .collect::<Vec<_>>()
                    .join("|")
            })
            .collect()
    };
    let raw = session_snapshot("__test__/fixtures/sessions/app-own-large.jsonl", 3);
    let tree = parse(&raw);
    let mut seen = HashSet::new();
    let duplicate_name = user_rows(&raw).iter().any(|row| {
        let id = tree.find_uid(&row.name).expect("the row's name");
        !seen.insert(tree.nodes[id].name_str())
    });
    assert!(duplicate_name, "the fixture holds two rows of one name");
    let out = filter_snapshot(&raw, &SnapshotOptions::for_level(Level::Moderate)).text;
    let rows = row_texts(&out);
    assert_eq!(rows.len(), 48, "{out}");
    let distinct: HashSet<&String> = rows.iter().collect();
    assert_eq!(distinct.len(), rows.len(), "rows read alike:\n{out}");
    // One more column tells them apart: the other stays behind the header's marker.
    assert!(out.contains("; 1 text cells each not written"), "{out}");
}

/// The same table with every record condensed (`max_condensed_records`): every row's checkbox
/// and buttons stay in place with the row's name and the label before its buttons (its last
/// sign-in); the other cells of rows 6–48 are named by one marker whose expand gives them back.
#[test]
fn condensed_records_keep_every_rows_controls_with_its_name() {
    let raw = session_snapshot("__test__/fixtures/sessions/app-own-large.jsonl", 3);
    let rows = user_rows(&raw);
    let mut options = SnapshotOptions::for_level(Level::Moderate);
    options.limits.max_condensed_records = usize::MAX;
    // Condensing instead of tables (the alternative measured before tables).
    options.limits.tables = false;
    let out = filter_snapshot(&raw, &options).text;
    let shown = uids_written(&out);
    for (k, row) in rows.iter().enumerate() {
        for cell in [&row.checkbox, &row.name, &row.date, &row.edit, &row.delete] {
            assert!(shown.contains(cell), "row {k} {cell}:\n{out}");
        }
        assert_eq!(shown.contains(&row.email), k < 5, "row {k} email:\n{out}");
    }
    let marker = out
        .lines()
        .find(|l| l.contains("records 6–48 below: controls and labels only"))
        .unwrap_or_else(|| panic!("no condensed marker:\n{out}"));
    let m = read_marker(marker);
    let expanded = expand_range(&raw, m.expand_uid.expect("an expand uid"), m.until, None)
        .expect("the marker's expand");
    let back = uids_written(&expanded);
    for row in &rows[5..] {
        assert!(back.contains(&row.email), "{} not given back", row.email);
    }
    // Condensing costs tokens: the saving shrinks, but stays real.
    assert!(
        out.len() < raw.len() * 3 / 5,
        "{} of {}",
        out.len(),
        raw.len()
    );
}

/// A shop's product cards (the corpus' megamenu page, shipped): each card opens with its image
/// link and name link, and the checkbox comes later. Records start at the card, so no card
/// shows its Compare checkbox and buttons with its name and prices hidden.
#[test]
fn product_cards_are_records_from_their_first_link() {
    let (_, raw) = shipped_snapshots()
        .into_iter()
        .find(|(name, _)| name.starts_with("app-megamenu"))
        .expect("the megamenu sample");
    let tree = parse(&raw);
    // (At aggressive a table writes no text cells, a card's price among them.)
    for level in [Level::Moderate] {
        let out = filter_snapshot(&raw, &SnapshotOptions::for_level(level)).text;
        let shown = uids_written(&out);
        let mut cards = 0;
        for (id, node) in tree.nodes.iter().enumerate() {
            if node.role != "checkbox" || node.name_str() != "Compare" {
                continue;
            }
            let parent = node.parent.expect("a card in a region");
            let siblings = tree.children(parent);
            let at = siblings.iter().position(|&s| s == id).expect("a sibling");
            // The card's name link and its last price, before the checkbox.
            let name_link = siblings[..at]
                .iter()
                .rev()
                .find(|&&s| tree.nodes[s].role == "link")
                .expect("the card's name link");
            let price = siblings[at - 1];
            let checkbox_shown = shown.contains(node.uid);
            assert_eq!(
                shown.contains(tree.nodes[*name_link].uid),
                checkbox_shown,
                "{level} {}:\n{out}",
                node.uid
            );
            let price = &tree.nodes[price];
            let price_shown =
                shown.contains(price.uid) || in_row_of(&out, node.uid, price.name_str());
            assert_eq!(price_shown, checkbox_shown, "{level} {}:\n{out}", node.uid);
            cards += 1;
        }
        assert!(cards >= 12, "{cards}");
    }
}

/// An inbox (__test__/site/app/inbox.html): a toolbar's last button before the rows was taken
/// as the first row's head, so the last row's Reply was left over after the hidden records,
/// shown with its date (its label) hidden. Rows start at their checkbox.
#[test]
fn a_row_after_a_toolbar_starts_at_its_checkbox() {
    let raw = session_snapshot("__test__/fixtures/sessions/app-own.jsonl", 7);
    // (At aggressive a table writes no text cells: the record's name and its controls.)
    for level in [Level::Moderate] {
        let out = filter_snapshot(&raw, &SnapshotOptions::for_level(level)).text;
        let shown = uids_written(&out);
        let tree = parse(&raw);
        for (id, node) in tree.nodes.iter().enumerate() {
            if node.role == "button" && node.name_str() == "Reply" && shown.contains(node.uid) {
                let label = &tree.nodes[id - 1];
                assert!(
                    shown.contains(label.uid) || in_row_of(&out, node.uid, label.name_str()),
                    "{level}: {} without {}:\n{out}",
                    node.uid,
                    label.uid
                );
            }
        }
    }
}

/// A site search box in the banner stays at moderate; so does its label before it.
#[test]
fn a_kept_landmark_control_keeps_its_label() {
    let links: String = (0..12)
        .map(|i| {
            format!(
                "      uid=1_{} link \"Section {i}\" url=\"http://x/admin/section/{i}\"\n",
                4 + i
            )
        })
        .collect();
    let raw = format!(
        "uid=1_0 RootWebArea \"Admin\" url=\"http://x/\"\n  uid=1_1 banner\n    uid=1_2 link \"Home\" url=\"http://x/home\"\n    uid=1_3 navigation \"Primary\"\n{links}    uid=1_16 \"Search everything\"\n    uid=1_17 searchbox \"Search everything\"\n  uid=1_18 main\n    uid=1_19 heading \"Customers\" level=\"1\"\n"
    );
    let out = filter_snapshot(&raw, &SnapshotOptions::for_level(Level::Moderate)).text;
    let shown = uids_written(&out);
    assert!(shown.contains("1_17") && shown.contains("1_16"), "{out}");
    // A navigation's links are controls too: all twelve stay in place, none collapsed.
    assert!(
        (4..16).all(|i| shown.contains(&format!("1_{i}"))),
        "the navigation's links stay: {out}"
    );
}

/// A navigation outside `main` (a site's header menu, a documentation sidebar) keeps its
/// controls in place at `moderate`, however many (a long run of links is not collapsed after
/// the first 8); its prose and images still hide, and the rest of the banner is summarised as
/// before. `aggressive` still hides the navigation behind a marker.
#[test]
fn a_navigation_keeps_its_controls_in_place_and_hides_its_prose() {
    let entries: String = (0..30)
        .map(|i| {
            format!(
                "        uid=1_{} listitem level=\"1\"\n          uid=1_{} link \"Chapter {i}\" url=\"http://x/ch{i}.html\"\n",
                12 + 2 * i,
                13 + 2 * i
            )
        })
        .collect();
    let prose = "Welcome to the handbook. Every chapter below has exercises and a summary for readers in a hurry.";
    let raw = format!(
        "uid=1_0 RootWebArea \"Handbook\" url=\"http://x/\"\n  uid=1_1 banner\n    uid=1_2 \"{prose}\"\n    uid=1_3 \"{prose} Again, in other words.\"\n    uid=1_4 navigation \"Chapters\"\n      uid=1_5 \"{prose}\"\n      uid=1_6 \"{prose} Once more.\"\n      uid=1_7 link \"Handbook home\" url=\"http://x/\"\n        uid=1_8 image \"Handbook home\"\n      uid=1_9 menuitem \"Topics\" expandable haspopup=\"menu\"\n      uid=1_10 list\n{entries}  uid=1_100 main\n    uid=1_101 heading \"Handbook\" level=\"1\"\n"
    );
    let out = filter_snapshot(&raw, &SnapshotOptions::for_level(Level::Moderate)).text;
    let shown = uids_written(&out);
    for i in 0..30 {
        assert!(
            shown.contains(&format!("1_{}", 13 + 2 * i)),
            "chapter {i} in place: {out}"
        );
    }
    assert!(shown.contains("1_7") && shown.contains("1_9"), "{out}");
    // The banner's and the navigation's prose hide (named by markers), and so does the image
    // inside the home link.
    for hidden in ["1_2", "1_3", "1_5", "1_6", "1_8"] {
        assert!(!shown.contains(hidden), "{hidden} hides: {out}");
    }
    assert!(!out.contains("Welcome to the handbook"), "{out}");
    let aggressive = filter_snapshot(&raw, &SnapshotOptions::for_level(Level::Aggressive)).text;
    assert!(!uids_written(&aggressive).contains("1_13"), "{aggressive}");
}

/// A page without a `main` landmark (PostgreSQL's documentation): what lies outside its
/// landmarks is read as main, so a table of contents of 30 links stays in place at `moderate`
/// (before: 8 shown, the rest collapsed), while its navigation header is still a landmark.
#[test]
fn a_page_without_main_keeps_its_content_controls_in_place() {
    let toc: String = (0..30)
        .map(|i| {
            format!(
                "  uid=1_{} link \"{i}. Chapter {i}\" url=\"http://x/ch{i}.html\"\n  uid=1_{} \" — what chapter {i} is about, in a sentence\"\n",
                10 + 2 * i,
                11 + 2 * i
            )
        })
        .collect();
    let raw = format!(
        "uid=1_0 RootWebArea \"Documentation\" url=\"http://x/\"\n  uid=1_1 contentinfo\n    uid=1_2 \"Copyright 1996–2026 The Documentation Group. Every page of this manual is under the licence of the project.\"\n    uid=1_3 \"Built from the sources of the release, with the default style sheet of the manual.\"\n  uid=1_4 heading \"Documentation\" level=\"1\"\n{toc}{}",
        long_prose().replace("    uid=", "  uid=")
    );
    let out = filter_snapshot(&raw, &SnapshotOptions::for_level(Level::Moderate)).text;
    let shown = uids_written(&out);
    for i in 0..30 {
        assert!(
            shown.contains(&format!("1_{}", 10 + 2 * i)),
            "chapter {i} in place: {out}"
        );
    }
    assert!(!shown.contains("1_2"), "the footer is summarised: {out}");
}

/// The node cap counts a navigation outside `main` last: a sidebar of 30 links before the
/// content does not push the content's controls out; the sidebar gets what they leave.
#[test]
fn a_navigation_never_pushes_main_out_of_the_node_cap() {
    let links: String = (0..30)
        .map(|i| {
            format!(
                "    uid=1_{} link \"Item {i}\" url=\"http://x/{i}\"\n",
                10 + i
            )
        })
        .collect();
    let buttons: String = (0..15)
        .map(|i| format!("    uid=1_{} button \"Action {i}\"\n", 60 + i))
        .collect();
    let raw = format!(
        "uid=1_0 RootWebArea \"Page\" url=\"http://x/\"\n  uid=1_1 navigation \"Sidebar\"\n{links}  uid=1_50 main\n{buttons}{}",
        long_prose()
    );
    let mut options = SnapshotOptions::for_level(Level::Moderate);
    options.limits.max_nodes = 25;
    let out = filter_snapshot(&raw, &options).text;
    let shown = uids_written(&out);
    for i in 0..15 {
        assert!(
            shown.contains(&format!("1_{}", 60 + i)),
            "action {i} in place: {out}"
        );
    }
    assert!(shown.contains("1_10") && !shown.contains("1_39"), "{out}");
}

/// Prose enough under `main` (uids 1_200 on, at depth 2) that a lossy level's output is shorter
/// than the page, so the filtered form is sent.
fn long_prose() -> String {
    (0..30)
        .map(|i| format!("    uid=1_{} \"Paragraph {i} of the page, long enough that the text budget of its container hides it after the first ones, as prose.\"\n", 200 + i))
        .collect()
}

/// An image inside a named link adds nothing to the link's name: at `moderate` it is dropped
/// (named by the layout line, given back by expand), at `light` it stays.
#[test]
fn an_image_inside_a_named_link_is_dropped() {
    let raw = "uid=1_0 RootWebArea \"Shop\" url=\"http://x/\"\n  uid=1_1 main\n    uid=1_2 heading \"Deals\" level=\"1\"\n    uid=1_3 link \"Zenbook 14 OLED\" url=\"http://x/p/1\"\n      uid=1_4 image \"Zenbook 14 OLED, front view\"\n    uid=1_5 image \"Our store in Lyon\"\n    uid=1_6 link url=\"http://x/p/2\"\n      uid=1_7 image \"Pixel 9\"\n".to_string() + &long_prose();
    let raw = raw.as_str();
    let out = filter_snapshot(raw, &SnapshotOptions::for_level(Level::Moderate)).text;
    let shown = uids_written(&out);
    assert!(shown.contains("1_3") && !shown.contains("1_4"), "{out}");
    assert!(out.contains("uid 1_4"), "the dropped image is named: {out}");
    // An image beside a link, or inside a link without a name of its own, stays.
    assert!(shown.contains("1_5") && shown.contains("1_7"), "{out}");
    let light = filter_snapshot(raw, &SnapshotOptions::for_level(Level::Light)).text;
    assert!(uids_written(&light).contains("1_4"), "{light}");
}

/// A link's `description` (its title, a tooltip) hides at the lossy levels with its url; a
/// button's stays, and `light` keeps both.
#[test]
fn a_link_description_hides_at_moderate() {
    let raw = "uid=1_0 RootWebArea \"Docs\" url=\"http://x/\"\n  uid=1_1 main\n    uid=1_2 link \"HashMap\" description=\"struct std::collections::HashMap\" url=\"http://x/hm.html\"\n    uid=1_3 button \"Copy item path\" description=\"Copy item path to clipboard\"\n    uid=1_4 \"A hash map implemented with quadratic probing and SIMD lookup.\"\n".to_string() + &long_prose();
    let raw = raw.as_str();
    let out = filter_snapshot(raw, &SnapshotOptions::for_level(Level::Moderate)).text;
    assert!(
        out.contains("1_2 link \"HashMap\"") && !out.contains("struct std::collections"),
        "{out}"
    );
    assert!(
        out.contains("description=\"Copy item path to clipboard\""),
        "{out}"
    );
    assert!(
        out.lines()
            .next()
            .is_some_and(|l| l.contains("link descriptions")),
        "the legend says so: {out}"
    );
    let light = filter_snapshot(raw, &SnapshotOptions::for_level(Level::Light)).text;
    assert!(
        light.contains("description=\"struct std::collections::HashMap\""),
        "{light}"
    );
}

/// Records inside `main` never hide a control at moderate, whatever their shape: rows whose
/// every role recurs inside them (a text, a switch and its label, a second switch and its
/// label: no role opens each row once), runs of five or fewer (cards, which were left as
/// nodes), and runs whose rows break one shape every other row (no table, so they hid past the
/// fifth). The first two are tables; the third stays nodes.
#[test]
fn records_inside_main_keep_every_control_at_moderate() {
    let mut lines = vec![
        "uid=1_0 RootWebArea \"Board\" url=\"http://x/\"".to_string(),
        "  uid=1_1 main".to_string(),
    ];
    let mut n = 2;
    let mut node = |depth: usize, rest: String, lines: &mut Vec<String>| {
        lines.push(format!("{}uid=1_{n} {rest}", "  ".repeat(depth)));
        n += 1;
        format!("1_{}", n - 1)
    };
    let mut controls = Vec::new();
    node(2, "region \"Alerts\"".into(), &mut lines);
    for topic in ["Direct messages", "Mentions", "Replies", "Reactions"] {
        node(3, format!("\"{topic}\""), &mut lines);
        controls.push(node(
            3,
            format!("switch \"{topic} by email\" checked"),
            &mut lines,
        ));
        node(3, "\" Email\"".into(), &mut lines);
        controls.push(node(3, format!("switch \"{topic} by push\""), &mut lines));
        node(3, "\" Push\"".into(), &mut lines);
    }
    node(2, "region \"To do\"".into(), &mut lines);
    for k in 0..5 {
        controls.push(node(
            3,
            format!("link \"TL-{k} Fix the login loop {k}\" url=\"http://x/#{k}\""),
            &mut lines,
        ));
        node(3, format!("\"Person {k}\""), &mut lines);
        node(3, format!("\"{k} points\""), &mut lines);
        controls.push(node(3, format!("button \"Move TL-{k}\""), &mut lines));
        controls.push(node(3, format!("button \"Comment on TL-{k}\""), &mut lines));
    }
    node(2, "region \"Orders\"".into(), &mut lines);
    for k in 0..8 {
        controls.push(node(
            3,
            format!("checkbox \"Select order {k}\""),
            &mut lines,
        ));
        node(3, format!("\"Order {k}\""), &mut lines);
        if k % 2 == 1 {
            node(3, "image \"Paid\"".into(), &mut lines);
        }
        controls.push(node(3, format!("button \"Refund order {k}\""), &mut lines));
    }
    let raw = lines.join("\n") + "\n";
    let out = filter_snapshot(&raw, &SnapshotOptions::for_level(Level::Moderate)).text;
    let shown = uids_written(&out);
    for uid in &controls {
        assert!(shown.contains(uid), "{uid} hidden:\n{out}");
    }
    assert!(out.contains("… table of 4 records"), "{out}");
    assert!(out.contains("… table of 5 records"), "{out}");
}
