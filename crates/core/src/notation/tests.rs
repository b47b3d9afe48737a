//! Corpus-wide checks that hold for every notation: every uid a level hides is named by a
//! marker (listed, or inside its `first…last` range in document order) whose own
//! `expand_snapshot` call, run through the real expand functions, gives it back.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use super::{expand_range, filter_snapshot, notation_of, playwright, search_snapshot};
use crate::level::Level;
use crate::snapshot::marker::read_marker;
use crate::snapshot::roles;
use crate::snapshot::tree::NodeKind;
use crate::snapshot::SnapshotOptions;
use crate::test_support::corpus_dir;

const CDP_HEADER: &str = "## Latest page snapshot\n";

/// Every `text` string of a JSON value (result blocks, wherever they sit in a file).
pub(crate) fn collect_texts(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(map) => {
            for (k, child) in map {
                match child {
                    serde_json::Value::String(s) if k == "text" => out.push(s.clone()),
                    _ => collect_texts(child, out),
                }
            }
        }
        serde_json::Value::Array(items) => items.iter().for_each(|c| collect_texts(c, out)),
        _ => {}
    }
}

/// The snapshot bodies of one result text, in either notation.
pub(crate) fn bodies_of(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    if let Some((_, rest)) = text.split_once(CDP_HEADER) {
        let end = rest.find("\n## ").map_or(rest.len(), |i| i + 1);
        out.push(rest.get(..end).unwrap_or("").to_string());
    }
    if let Some(found) = playwright::sections::find_yaml_snapshot(text) {
        out.push(found.body.to_string());
    }
    out
}

/// (file, body) of every distinct snapshot body in every `.json`/`.jsonl` file of the corpus
/// (both notations, the structured pass, hostile pages and recorded sessions included).
pub(crate) fn all_corpus_bodies() -> Vec<(String, String)> {
    let Some(dir) = corpus_dir() else {
        return Vec::new();
    };
    let files = crate::test_support::files_under(&dir, &["json", "jsonl"]);
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for path in files {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let mut texts = Vec::new();
        let values: Vec<serde_json::Value> = if path.extension().is_some_and(|e| e == "jsonl") {
            text.lines()
                .filter_map(|l| serde_json::from_str(l).ok())
                .collect()
        } else {
            serde_json::from_str(&text).into_iter().collect()
        };
        values.iter().for_each(|v| collect_texts(v, &mut texts));
        let name = path.strip_prefix(&dir).unwrap_or(Path::new("")).display();
        for body in texts.iter().flat_map(|t| bodies_of(t)) {
            if !body.trim().is_empty() && seen.insert(body.clone()) {
                out.push((name.to_string(), body));
            }
        }
    }
    out
}

/// The element uids of a body in its notation, in document order (repeats included).
fn uids_in_order(text: &str) -> Vec<String> {
    let mut implied = Vec::new();
    let tree = notation_of(text).parse(text, &mut implied);
    tree.uids().map(str::to_string).collect()
}

/// The uids each expand call gave back (or `None` when it failed), by (uid, until): one body's
/// calls, shared by its levels.
type Expanded = HashMap<(String, Option<String>), Option<HashSet<String>>>;

/// What is wrong with the markers of `body` filtered at `level`: each uid hidden without a
/// marker that names it and gives it back, each range out of document order or spanning two
/// documents, each marker whose expand fails. Empty when all is well.
pub(crate) fn marker_problems(body: &str, level: Level, expanded: &mut Expanded) -> Vec<String> {
    marker_problems_with(body, &SnapshotOptions::for_level(level), expanded)
}

/// `marker_problems` with any options (limits overridden).
pub(crate) fn marker_problems_with(
    body: &str,
    options: &SnapshotOptions,
    expanded: &mut Expanded,
) -> Vec<String> {
    let out = filter_snapshot(body, options).text;
    let mut raw_implied = Vec::new();
    let raw = notation_of(body).parse(body, &mut raw_implied);
    let raw_order: Vec<&str> = raw.uids().collect();
    // Where a uid first occurs (what `expand_snapshot uid=…` finds, and where a range starts
    // or ends), and the document it is in there: its nearest iframe ancestor, or its root.
    let mut first_at: HashMap<&str, usize> = HashMap::new();
    let mut document_of: HashMap<&str, usize> = HashMap::new();
    let with_uid = raw
        .nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| n.kind == NodeKind::Element && !n.uid.is_empty());
    for (pos, (id, node)) in with_uid.enumerate() {
        if first_at.contains_key(node.uid) {
            continue;
        }
        first_at.insert(node.uid, pos);
        let mut doc = id;
        for a in raw.ancestors(id) {
            doc = a;
            if raw
                .nodes
                .get(a)
                .is_some_and(|n| n.role.eq_ignore_ascii_case("iframe"))
            {
                break;
            }
        }
        document_of.insert(node.uid, doc);
    }
    let mut implied = Vec::new();
    let parsed = notation_of(&out).parse(&out, &mut implied);
    let shown: HashSet<&str> = parsed.uids().collect();
    let mut problems = Vec::new();
    let mut named_and_back: HashSet<String> = HashSet::new();
    for node in parsed.nodes.iter().filter(|n| n.kind == NodeKind::Marker) {
        let text = node.name_str();
        let m = read_marker(text);
        let mut named: Vec<&str> = m.listed.clone();
        if let Some((a, b)) = m.range {
            match (first_at.get(a), first_at.get(b)) {
                (Some(&i), Some(&j)) if i <= j => {
                    // It may end inside an iframe only if it hides that iframe too.
                    let mut doc = document_of.get(b).copied();
                    while doc != document_of.get(a).copied() {
                        let iframe = doc.and_then(|d| raw.nodes.get(d)).map_or("", |n| n.uid);
                        let is_iframe = doc
                            .and_then(|d| raw.nodes.get(d))
                            .is_some_and(|n| n.role.eq_ignore_ascii_case("iframe"));
                        if !is_iframe || iframe.is_empty() || shown.contains(iframe) {
                            problems.push(format!("range {a}…{b} spans two documents: {text}"));
                            break;
                        }
                        doc = document_of.get(iframe).copied();
                    }
                    named.extend(raw_order.get(i..=j).unwrap_or(&[]).iter().copied())
                }
                (Some(_), Some(_)) => problems.push(format!("range {a}…{b} reversed: {text}")),
                _ => problems.push(format!("range {a}…{b} names an unknown uid: {text}")),
            }
        }
        let Some(uid) = m.expand_uid else {
            if !named.is_empty() {
                problems.push(format!("names uids but says no expand: {text}"));
            }
            continue;
        };
        let key = (uid.to_string(), m.until.map(str::to_string));
        let back = expanded.entry(key).or_insert_with(|| {
            expand_range(body, uid, m.until, None)
                .ok()
                .map(|e| uids_in_order(&e).into_iter().collect())
        });
        let Some(back) = back else {
            problems.push(format!("expand fails: {text}"));
            continue;
        };
        named_and_back.extend(
            named
                .into_iter()
                .filter(|u| back.contains(*u))
                .map(str::to_string),
        );
    }
    let mut missing: Vec<&str> = first_at
        .keys()
        .copied()
        .filter(|u| !shown.contains(u) && !named_and_back.contains(*u))
        .collect();
    missing.sort_by_key(|u| first_at.get(u).copied());
    if !missing.is_empty() {
        problems.push(format!(
            "{} hidden uid(s) no marker both names and gives back: {}",
            missing.len(),
            missing.join(", ")
        ));
    }
    problems
}

/// Fails naming the first problems (each cut to 400 characters).
fn assert_no_problems(failures: &[String]) {
    assert!(
        failures.is_empty(),
        "{} problems, first ones:\n{}",
        failures.len(),
        failures
            .iter()
            .take(30)
            .map(|f| f.chars().take(400).collect::<String>())
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn every_hidden_uid_is_named_by_a_marker_whose_expand_gives_it_back() {
    let bodies = all_corpus_bodies();
    if corpus_dir().is_none() {
        return;
    }
    assert!(bodies.len() >= 100, "corpus bodies: {}", bodies.len());
    let mut failures = Vec::new();
    for (name, body) in &bodies {
        let mut expanded = Expanded::new();
        for level in Level::ALL {
            for p in marker_problems(body, level, &mut expanded) {
                failures.push(format!("{name} {level}: {p}"));
            }
        }
    }
    if let Some(path) = std::env::var_os("MARKER_PROBLEMS_OUT") {
        let _ = std::fs::write(path, failures.join("\n"));
    }
    assert_no_problems(&failures);
}

/// The budget's lean step (`lean_limits`, its node cap scaled as a page over the budget
/// would scale it) names every uid it hides too, a navigation's collapsed runs included.
#[test]
fn the_lean_step_names_every_hidden_uid_in_a_marker_that_gives_it_back() {
    let bodies = all_corpus_bodies();
    if corpus_dir().is_none() {
        return;
    }
    let options = crate::test_support::lean_step_options();
    let mut failures = Vec::new();
    for (name, body) in &bodies {
        let mut expanded = Expanded::new();
        for p in marker_problems_with(body, &options, &mut expanded) {
            failures.push(format!("{name}: {p}"));
        }
    }
    assert_no_problems(&failures);
}

/// Moderate with every record inside `main` condensed (its controls and labels shown, the
/// rest behind one marker for the run).
fn condensed_moderate() -> SnapshotOptions {
    let mut options = SnapshotOptions::for_level(Level::Moderate);
    options.limits.max_condensed_records = usize::MAX;
    // Condensing instead of tables (the alternative measured before tables).
    options.limits.tables = false;
    options
}

#[test]
fn condensed_records_name_every_hidden_uid_in_a_marker_that_gives_it_back() {
    let bodies = all_corpus_bodies();
    if corpus_dir().is_none() {
        return;
    }
    let options = condensed_moderate();
    let mut failures = Vec::new();
    let mut condensed = 0;
    for (name, body) in &bodies {
        let mut expanded = Expanded::new();
        for p in marker_problems_with(body, &options, &mut expanded) {
            failures.push(format!("{name}: {p}"));
        }
        condensed += usize::from(
            filter_snapshot(body, &options)
                .text
                .contains(" below: controls and labels only, "),
        );
    }
    // The corpus has grid and shop pages: the condensed form is exercised, not skipped.
    assert!(condensed >= 10, "condensed snapshots: {condensed}");
    assert_no_problems(&failures);
}

/// Each control shown (an interactive node other than a link) whose label (the text right
/// before it among its siblings, with a letter or digit) is not shown.
pub(crate) fn label_problems(body: &str, options: &SnapshotOptions) -> Vec<String> {
    let out = filter_snapshot(body, options).text;
    let mut raw_implied = Vec::new();
    let raw = notation_of(body).parse(body, &mut raw_implied);
    let mut implied = Vec::new();
    let parsed = notation_of(&out).parse(&out, &mut implied);
    let shown: HashSet<&str> = parsed.uids().collect();
    // A named control in a table row is labelled by its name and its column; the cell before
    // it is another column's value, not its label.
    let in_tables = super::reader_tests::table_row_uids(&out);
    let mut problems = Vec::new();
    let lists =
        std::iter::once(&raw.roots[..]).chain((0..raw.nodes.len()).map(|id| raw.children(id)));
    for siblings in lists {
        for pair in siblings.windows(2) {
            let (Some(label), Some(control)) = (raw.nodes.get(pair[0]), raw.nodes.get(pair[1]))
            else {
                continue;
            };
            let is_label = label.is_text()
                && !label.uid.is_empty()
                && label.name_str().chars().any(char::is_alphanumeric);
            if is_label
                && !control.uid.is_empty()
                && roles::is_labelled_control(control)
                && shown.contains(control.uid)
                && !shown.contains(label.uid)
                && (!in_tables.contains(control.uid) || control.name_str().trim().is_empty())
            {
                problems.push(format!(
                    "{} {} {:?} shown, its label {} {:?} hidden",
                    control.uid,
                    control.role,
                    control.name_str(),
                    label.uid,
                    label.name_str()
                ));
            }
        }
    }
    problems
}

#[test]
fn no_control_is_shown_without_its_label() {
    let bodies = all_corpus_bodies();
    if corpus_dir().is_none() {
        return;
    }
    let option_sets = [
        ("moderate", SnapshotOptions::for_level(Level::Moderate)),
        ("aggressive", SnapshotOptions::for_level(Level::Aggressive)),
        ("moderate, condensed records", condensed_moderate()),
    ];
    let mut failures = Vec::new();
    let mut checked = 0;
    for (name, body) in &bodies {
        for (label, options) in &option_sets {
            checked += 1;
            for p in label_problems(body, options) {
                failures.push(format!("{name} {label}: {p}"));
            }
        }
    }
    assert!(checked >= 300, "checked: {checked}");
    assert_no_problems(&failures);
}

/// Problems at every level but `off` (where nothing hides).
fn problems_at_lossy_levels(body: &str) -> Vec<String> {
    let mut expanded = Expanded::new();
    [Level::Light, Level::Moderate, Level::Aggressive]
        .into_iter()
        .flat_map(|level| marker_problems(body, level, &mut expanded))
        .collect()
}

/// rd-bbc-1 in small: the list bullets share one uid (chrome-devtools-mcp does that), one of
/// them comes after the other dropped nodes, so the dropped-nodes marker's range ran from a
/// bullet's first node to itself (`1_3…1_3`), or from a later node back to it (`1_10…1_3`),
/// and named neither blank text.
#[test]
fn a_repeated_uid_never_reverses_a_range() {
    let body = concat!(
        "uid=1_0 RootWebArea \"Page\" url=\"http://x/\"\n",
        "  uid=1_1 list\n",
        "    uid=1_2 listitem\n",
        "      uid=1_3 \"• \"\n",
        "      uid=1_4 link \"One\" url=\"http://x/a/long/path/that/moderate/hides/1\"\n",
        "    uid=1_5 listitem\n",
        "      uid=1_3 \"• \"\n",
        "      uid=1_6 link \"Two\" url=\"http://x/a/long/path/that/moderate/hides/2\"\n",
        "  uid=1_7 generic live=\"polite\"\n",
        "  uid=1_8 main\n",
        "    uid=1_9 \"Media caption\"\n",
        "    uid=1_10 \" \"\n",
        "    uid=1_11 \"A paragraph of the article, long enough to be worth filtering.\"\n",
        "    uid=1_12 \" \"\n",
        "    uid=1_13 list\n",
        "      uid=1_14 listitem\n",
        "        uid=1_3 \"• \"\n",
        "        uid=1_15 link \"Three\" url=\"http://x/a/long/path/that/moderate/hides/3\"\n",
    );
    let problems = problems_at_lossy_levels(body);
    assert!(problems.is_empty(), "{problems:#?}");
}

/// app-noisy in small: the layout nodes dropped inside an iframe were named at the end of the
/// page by one range from the page's refs into the iframe's (`e2…f1e4`), which Playwright
/// numbers apart; they are named inside the iframe, expanding it.
#[test]
fn layout_dropped_in_an_iframe_is_named_in_the_iframe() {
    let links = |frame: &str, indent: &str| -> String {
        (1..=6)
            .map(|i| {
                format!(
                    "{indent}- link \"Page {i}\" [ref={frame}e{}] [cursor=pointer]:\n\
                     {indent}  - /url: http://x/a/long/path/that/moderate/hides/{i}\n",
                    20 + i
                )
            })
            .collect()
    };
    let body = format!(
        "- generic [active] [ref=e1]:\n\
         \x20 - heading \"Orders dashboard\" [level=1] [ref=e2]\n\
         \x20 - generic [ref=e3]: Styled with a web font that 404s\n\
         {}\
         \x20 - iframe [ref=e4]:\n\
         \x20   - generic [ref=f1e1]:\n\
         \x20     - main [ref=f1e2]:\n\
         \x20       - heading \"Customers\" [level=1] [ref=f1e3]\n\
         \x20       - paragraph [ref=f1e4]: Showing 40 of 1,284 customers\n\
         {}\
         \x20       - button \"Export CSV\" [ref=f1e5]\n\
         \x20 - button \"Refresh\" [ref=e5]\n",
        links("", "  "),
        links("f1", "        "),
    );
    let body = body.as_str();
    let problems = problems_at_lossy_levels(body);
    assert!(problems.is_empty(), "{problems:#?}");
    let out = filter_snapshot(body, &SnapshotOptions::for_level(Level::Moderate)).text;
    let in_iframe = out
        .lines()
        .skip_while(|l| !l.contains("iframe [ref=e4]"))
        .skip(1)
        .take_while(|l| l.starts_with("    "))
        .any(|l| l.contains("layout nodes dropped") && l.contains("expand_snapshot uid=e4"));
    assert!(in_iframe, "{out}");
}

/// The two pages of the report (issue 20 item 4), as captured.
#[test]
fn the_reported_pages_name_every_hidden_uid() {
    let Some(dir) = corpus_dir() else { return };
    let read = |path: &str| -> String {
        let text = std::fs::read_to_string(dir.join(path)).expect("corpus file");
        let json: serde_json::Value = serde_json::from_str(&text).expect("corpus json");
        let mut texts = Vec::new();
        collect_texts(&json, &mut texts);
        texts
            .iter()
            .flat_map(|t| bodies_of(t))
            .next()
            .expect("a snapshot")
    };
    for path in [
        "chrome-devtools-mcp/rd-bbc-1/take_snapshot.json",
        "playwright-mcp/pages/app-noisy/browser_snapshot.json",
    ] {
        let body = read(path);
        let mut expanded = Expanded::new();
        let problems = marker_problems(&body, Level::Moderate, &mut expanded);
        assert!(problems.is_empty(), "{path}: {problems:#?}");
    }
}

/// A docs page after a search: every link's url carries `?search=BTreeMap` (issue 18 item 2;
/// built from the corpus' rustdoc collections page). The hits that name BTreeMap come first,
/// url-only hits after every other, each says where it matched, and the total counts them all.
#[test]
fn search_ranks_name_matches_before_url_only_matches() {
    let Some(dir) = corpus_dir() else { return };
    let path = dir.join("chrome-devtools-mcp/rust-std-collections/take_snapshot.json");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("corpus page")).expect("json");
    let mut texts = Vec::new();
    collect_texts(&json, &mut texts);
    let page = texts
        .iter()
        .flat_map(|t| bodies_of(t))
        .next()
        .expect("a snapshot");
    // Every url gets the search query the page was reached by.
    let body = page.replace("\" url=\"", "\" url=\"?search=BTreeMap&u=");
    assert!(
        body.matches("?search=BTreeMap").count() > 200,
        "links rewritten"
    );
    let mut implied = Vec::new();
    let tree = notation_of(&body).parse(&body, &mut implied);
    let has = |s: &str| s.to_lowercase().contains("btreemap");
    let with_uid = || {
        tree.nodes
            .iter()
            .filter(|n| n.kind == NodeKind::Element && !n.uid.is_empty())
    };
    let by_name: Vec<&str> = with_uid()
        .filter(|n| n.name.as_deref().is_some_and(has))
        .map(|n| n.uid)
        .collect();
    let anywhere = with_uid()
        .filter(|n| {
            n.name.as_deref().is_some_and(has)
                || has(n.role)
                || n.attrs
                    .iter()
                    .any(|a| has(a.key) || a.value.as_deref().is_some_and(has))
        })
        .count();
    assert!(by_name.len() >= 5 && anywhere > by_name.len() + 100);

    let hits = search_snapshot(&body, "BTreeMap", false, 10).expect("search");
    assert_eq!(hits.total, anywhere, "the total counts every match");
    assert_eq!(hits.hits.len(), 10);
    let first: Vec<&str> = hits.hits.iter().map(|h| h.uid.as_str()).collect();
    assert_eq!(
        first,
        by_name[..10.min(by_name.len())],
        "name matches first, in document order"
    );
    for hit in &hits.hits {
        assert!(hit.matched == "name" || hit.matched == "text", "{hit:?}");
    }
    let header = hits.text.lines().next().unwrap_or("");
    assert!(
        header.contains(&format!("{} by name or text", by_name.len()))
            && header.contains("by url only")
            && header.contains("best 10 shown"),
        "{header}"
    );
    assert_eq!(
        hits.text.matches("\n  matched name").count()
            + hits.text.matches("\n  matched text").count(),
        10,
        "{}",
        hits.text
    );

    // All of them: ranks never go back (name/text, role/attribute, url), and a url-only hit
    // says so.
    let all = search_snapshot(&body, "BTreeMap", false, 1000).expect("search");
    assert_eq!(all.hits.len(), anywhere);
    let ranks: Vec<usize> = all
        .hits
        .iter()
        .map(|h| match h.matched.as_str() {
            "name" | "text" => 0,
            "url" => 2,
            _ => 1,
        })
        .collect();
    assert!(ranks.windows(2).all(|w| w[0] <= w[1]), "{ranks:?}");
    assert_eq!(ranks.iter().filter(|&&r| r == 2).count(), all.by_rank[2]);
    assert!(all.by_rank[2] > 100, "{:?}", all.by_rank);
}

/// Each field is matched alone: where a hit matched is the best field, and a regex's `^` is
/// that field's start (the role and the name were one text before: `^Save` found no button).
#[test]
fn search_says_where_each_hit_matched() {
    let body = concat!(
        "uid=1_0 RootWebArea \"Save page\" url=\"http://x/save\"\n",
        "  uid=1_1 button \"Save\"\n",
        "  uid=1_2 \"Saved drafts\"\n",
        "  uid=1_3 link \"Home\" url=\"http://x/save/home\"\n",
        "  uid=1_4 textbox \"Title\" value=\"save me\"\n",
        "  uid=1_5 heading \"Other\" level=\"2\"\n",
    );
    let hits = search_snapshot(body, "save", false, 20).expect("search");
    let got: Vec<(&str, &str)> = hits
        .hits
        .iter()
        .map(|h| (h.uid.as_str(), h.matched.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            ("1_0", "name"),
            ("1_1", "name"),
            ("1_2", "text"),
            ("1_4", "attribute value"),
            ("1_3", "url"),
        ]
    );
    assert!(hits.text.starts_with(
        "5 nodes match \"save\" (3 by name or text, 1 by role or attribute, 1 by url only):"
    ));
    let re = search_snapshot(body, "^save$", true, 20).expect("regex");
    assert_eq!(
        re.hits.iter().map(|h| h.uid.as_str()).collect::<Vec<_>>(),
        ["1_1"]
    );
    let level = search_snapshot(body, "level=2", false, 20).expect("attribute");
    assert_eq!(
        level.hits.first().map(|h| h.matched.as_str()),
        Some("attribute level")
    );
    // Playwright's `/url:` is a url too.
    let yaml = "- generic [ref=e1]:\n  - link \"Home\" [ref=e2]:\n    - /url: /docs?search=BTreeMap\n  - link \"BTreeMap\" [ref=e3]:\n    - /url: /btree\n";
    let pw = search_snapshot(yaml, "btreemap", false, 20).expect("yaml");
    let got: Vec<(&str, &str)> = pw
        .hits
        .iter()
        .map(|h| (h.uid.as_str(), h.matched.as_str()))
        .collect();
    assert_eq!(got, [("e3", "name"), ("e2", "url")]);
}

/// The snapshot bodies of the corpus (when present) and of the JSON files under the shipped
/// `dirs`; at least three.
fn corpus_and_shipped_bodies(dirs: &[&str]) -> Vec<String> {
    let mut bodies: Vec<String> = all_corpus_bodies().into_iter().map(|(_, b)| b).collect();
    for dir in dirs {
        let files = crate::test_support::files_under(&crate::test_support::shipped(dir), &["json"]);
        for path in files {
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            let mut texts = Vec::new();
            if let Ok(value) = serde_json::from_str(&text) {
                collect_texts(&value, &mut texts);
            }
            bodies.extend(texts.iter().flat_map(|t| bodies_of(t)));
        }
    }
    assert!(bodies.len() >= 3, "no snapshot bodies found");
    bodies
}

/// The budget's ladder filters one parse at every step, taking back the marks of the step before
/// (`Tree::clear_marks`) instead of parsing again: after passes at every lossy level and a
/// delta, the tree must read exactly as parsed (every field, by its `Debug` form), or a step
/// would inherit what the one before hid. On the shipped samples, and the corpus when present.
#[test]
fn clear_marks_gives_back_the_parsed_tree() {
    use crate::snapshot::delta::{filter_tree_with_deltas, DeltaInput};
    let bodies = corpus_and_shipped_bodies(&[
        "samples",
        "__test__/fixtures/snapshots",
        "__test__/fixtures/playwright",
    ]);
    let at = SnapshotOptions::for_level;
    for body in &bodies {
        let notation = notation_of(body);
        let mut implied = Vec::new();
        let mut tree = notation.parse(body, &mut implied);
        tree.index_uids();
        let parsed = format!("{tree:?}");
        let first = DeltaInput {
            earlier: None,
            sent: None,
            number: 1,
            upstream_reset: false,
        };
        let held =
            filter_tree_with_deltas(notation, body, &mut tree, &at(Level::Aggressive), first);
        tree.clear_marks();
        let second = DeltaInput {
            earlier: None,
            sent: held.holds.as_ref(),
            number: 2,
            upstream_reset: false,
        };
        filter_tree_with_deltas(notation, body, &mut tree, &at(Level::Aggressive), second);
        tree.clear_marks();
        crate::snapshot::filter_tree(notation, body, &mut tree, &at(Level::Moderate));
        tree.clear_marks();
        assert!(
            format!("{tree:?}") == parsed,
            "a mark outlives clear_marks on a body of {} bytes",
            body.len()
        );
    }
}

/// A tree that keeps what its passes compute (`snapshot::remember_passes`, as the budget's
/// ladder's trees do) and is filtered at step after step, each as parsed again, writes what a
/// fresh parse of the body writes at each: the steps in the ladder's order, one of them twice in
/// a row, and `moderate` again after the others (its kept marks were replaced by then).
#[test]
fn a_tree_that_remembers_its_passes_filters_as_a_fresh_parse() {
    use crate::snapshot::params::{coarse_steps, lean_limits};
    let bodies = corpus_and_shipped_bodies(&["samples", "__test__/fixtures/playwright"]);
    let at = SnapshotOptions::for_level;
    let lean = SnapshotOptions {
        level: Level::Moderate,
        limits: lean_limits(),
    };
    let mut steps = vec![
        at(Level::Light),
        at(Level::Moderate),
        lean.clone(),
        lean,
        at(Level::Aggressive),
    ];
    steps.extend(coarse_steps().into_iter().map(|(_, c)| SnapshotOptions {
        level: Level::Aggressive,
        limits: c.snapshot,
    }));
    steps.push(at(Level::Moderate));
    for body in &bodies {
        let notation = notation_of(body);
        let mut implied = Vec::new();
        let mut tree = notation.parse(body, &mut implied);
        crate::snapshot::remember_passes(&mut tree);
        for options in &steps {
            tree.clear_marks();
            let kept = crate::snapshot::filter_tree(notation, body, &mut tree, options);
            let fresh = crate::snapshot::filter_with(notation, body, options);
            assert!(
                kept == fresh,
                "{:?} {:?}: a remembering tree of a body of {} bytes writes otherwise",
                options.level,
                options.limits,
                body.len()
            );
        }
    }
}

/// Each upstream's table claims its own tools, and its snapshot tool is one the filters read:
/// a format listed after the one that claims every tool (chrome-devtools-mcp) would get none of
/// its results.
#[test]
fn every_upstream_claims_its_own_tools() {
    for upstream in super::UPSTREAMS {
        assert!(
            upstream
                .content_heavy_tools
                .contains(&upstream.snapshot_tool),
            "{}",
            upstream.name
        );
        for tool in upstream.content_heavy_tools {
            assert!(
                std::ptr::eq(super::upstream_of_tool(tool), upstream),
                "{tool} is not taken for {}'s",
                upstream.name
            );
        }
    }
}
