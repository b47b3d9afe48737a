use crate::level::Level;
use crate::result::{filter_tool_result_value, text_blocks, ResultOptions};
use crate::session::{Session, SessionOptions};

/// The bound on units told from bytes answers as counting them, on texts of characters of
/// every width (1 to 4 bytes) and bounds all around their lengths.
#[test]
fn units_told_from_bytes_answer_as_counting_them() {
    let pieces = ["a", "é", "€", "😀", "\n"];
    let mut rng = crate::test_support::XorShift(7);
    for _ in 0..2000 {
        let mut text = String::new();
        for _ in 0..rng.below(40) {
            text.push_str(rng.pick(&pieces));
        }
        let units = crate::tokens::utf16_len(&text);
        for chars in 0..=text.len() + 2 {
            assert_eq!(
                super::units_within(text.len(), chars, || units),
                units <= chars,
                "{text:?} within {chars}"
            );
        }
    }
}

/// The uids an output writes as nodes (a line's or a sibling's first word), and the ranges
/// of its markers (`expand_snapshot uid=A until=B`, or `uid=A` alone).
fn shown_and_ranges(out: &str) -> (Vec<String>, Vec<(String, String)>) {
    let mut shown = Vec::new();
    let mut ranges = Vec::new();
    for line in out.lines() {
        let line = line.trim_start();
        if let Some(marker) = line.strip_prefix("… ") {
            if let Some((_, call)) = marker.rsplit_once("expand_snapshot uid=") {
                let mut words = call.split(' ');
                let first = words.next().unwrap_or_default().to_string();
                let last = words
                    .find_map(|w| w.strip_prefix("until="))
                    .map_or(first.clone(), str::to_string);
                ranges.push((first, last));
            }
            continue;
        }
        for part in line.split(['|', '>']) {
            if let Some(uid) = part.split_whitespace().next() {
                shown.push(uid.to_string());
            }
        }
    }
    (shown, ranges)
}

/// A page just over the budget at `moderate` gives way at the lean step: its sidebar's run
/// of links collapses after the first 8 behind a marker that names the rest, while every
/// control of `main` stays in place (at the aggressive step, which this page took before,
/// the sidebar and most of `main`'s buttons hid).
#[test]
fn a_page_just_over_the_bound_keeps_mains_controls_at_the_lean_step() {
    let (page, nav, buttons) = crate::test_support::sidebar_page(200, 150);
    let result = serde_json::json!({"content": [{"type": "text", "text": page}]}).to_string();
    let filter = |max_chars: usize| moderate_under_bound(&result, max_chars);
    let (moderate, step) = filter(0);
    assert_eq!(step, None);
    // A bound the moderate view is just over (its reserve left for the session's lines).
    let bound = moderate.chars().count() + super::RESERVE_CHARS - 200;
    let (lean, step) = filter(bound);
    assert_eq!(step, Some("lean"), "{lean}");
    assert!(lean.chars().count() + super::RESERVE_CHARS <= bound);
    let (shown, ranges) = shown_and_ranges(&lean);
    for b in &buttons {
        assert!(shown.contains(b), "button {b} not in place:\n{lean}");
    }
    let nav_shown = nav.iter().filter(|u| shown.contains(u)).count();
    assert_eq!(nav_shown, 8, "{lean}");
    // Every hidden uid of the page lies in a marker's range, in document order.
    let order: Vec<String> = page
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("uid="))
        .filter_map(|l| l.split(' ').next())
        .map(str::to_string)
        .collect();
    let at = |uid: &str| order.iter().position(|u| u == uid);
    for (k, uid) in order.iter().enumerate() {
        let named = ranges.iter().any(|(first, last)| {
            at(first).is_some_and(|a| a <= k) && at(last).is_some_and(|b| k <= b)
        });
        assert!(
            shown.contains(uid) || named,
            "{uid} neither shown nor named by a marker:\n{lean}"
        );
    }
}

/// A manual-like page: a table of contents (a navigation outside `main`) of `links` links,
/// then `main` with `sections` sections, each a heading, four texts of prose and a
/// diagram, then a table of 12 records (a checkbox, the record's name as a link, three
/// text cells, a button). Returns the page and the uids of the contents' links and of
/// `main`'s controls.
fn manual_page(links: usize, sections: usize) -> (String, Vec<String>, Vec<String>) {
    let mut text = String::from(
        "## Latest page snapshot\nuid=1_0 RootWebArea \"Manual\" url=\"http://127.0.0.1/manual.html\"\n  uid=1_1 navigation \"Contents\"\n",
    );
    let mut next = 2..;
    let mut uid = || format!("1_{}", next.next().unwrap_or_default());
    let mut toc = Vec::new();
    for k in 0..links {
        let u = uid();
        text.push_str(&format!(
            "    uid={u} link \"Chapter {k}: how the part number {k} works\" url=\"http://127.0.0.1/manual.html#c{k}\"\n"
        ));
        toc.push(u);
    }
    text.push_str(&format!("  uid={} main\n", uid()));
    for k in 0..sections {
        text.push_str(&format!("    uid={} region \"Part {k}\"\n", uid()));
        text.push_str(&format!(
            "      uid={} heading \"Part {k}\" level=\"2\"\n",
            uid()
        ));
        for p in 0..4 {
            text.push_str(&format!(
                "      uid={} \"Prose {p} of part {k}: what the part does, when it fails, what it returns.\"\n",
                uid()
            ));
        }
        text.push_str(&format!(
            "      uid={} image \"Diagram of part {k}\"\n",
            uid()
        ));
    }
    let mut controls = Vec::new();
    text.push_str(&format!(
        "    uid={} heading \"Parts in stock\" level=\"2\"\n",
        uid()
    ));
    for r in 0..12 {
        let (check, name) = (uid(), uid());
        text.push_str(&format!("    uid={check} checkbox \"Select part {r}\"\n"));
        text.push_str(&format!(
            "    uid={name} link \"Part {r}\" url=\"http://127.0.0.1/manual.html#p{r}\"\n"
        ));
        for cell in [
            format!("Store {}", r % 3),
            format!("Keeper {r}"),
            format!("2026-01-{:02}", r + 1),
        ] {
            text.push_str(&format!("    uid={} \"{cell}\"\n", uid()));
        }
        let edit = uid();
        text.push_str(&format!("    uid={edit} button \"Edit part {r}\"\n"));
        controls.extend([check, name, edit]);
    }
    (text, toc, controls)
}

/// Issue 43 item 3: a page that must lose content to fit gives way on its prose first (cut,
/// then hidden by run), then its decoration, then its tables' text cells, and only last on
/// the links of its table of contents; `main`'s controls stay in place throughout. Under
/// bounds from the moderate view's size down, the steps come in that order, each hiding
/// what it names, every earlier step keeping every contents link and control in place,
/// and every uid hidden stays in a marker's range.
#[test]
fn under_the_budget_prose_goes_first_and_the_way_around_last() {
    let (page, toc, controls) = manual_page(60, 24);
    let result = serde_json::json!({"content": [{"type": "text", "text": page}]}).to_string();
    let filter = |max_chars: usize| moderate_under_bound(&result, max_chars);
    let (moderate, step) = filter(0);
    assert_eq!(step, None);
    assert!(moderate.contains("Prose 0 of part 3") && moderate.contains("Keeper 4"));
    let order: Vec<String> = page
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("uid="))
        .filter_map(|l| l.split(' ').next())
        .map(str::to_string)
        .collect();
    let at = |uid: &str| order.iter().position(|u| u == uid);
    let mut seen: Vec<&'static str> = Vec::new();
    let mut chars = moderate.chars().count() + super::RESERVE_CHARS;
    while chars > 2_000 {
        chars -= 40;
        let (out, step) = filter(chars);
        let Some(step) = step else { continue };
        if step == "aggressive" || step == "coarser" || step == "coarsest" || step == "cut" {
            break;
        }
        if seen.last() != Some(&step) {
            assert!(!seen.contains(&step), "{step} after {seen:?}");
            seen.push(step);
        }
        let (shown, mut ranges) = shown_and_ranges(&out);
        // A marker's whole span (`uid A…B`): its call names the last sibling it hid, whose
        // subtree runs on.
        for line in out.lines() {
            if let Some((_, span)) = line.split_once("uid ") {
                if let Some((a, b)) = span.split_once('…') {
                    let b = b.split([')', ':', ' ']).next().unwrap_or_default();
                    ranges.push((a.to_string(), b.to_string()));
                }
            }
        }
        for c in &controls {
            assert!(
                shown.contains(c),
                "{step}: control {c} not in place:\n{out}"
            );
        }
        let toc_shown = toc.iter().filter(|u| shown.contains(u)).count();
        if step == "lean" {
            assert!(
                toc_shown < toc.len(),
                "{step}: nothing of the contents gave way"
            );
        } else {
            assert_eq!(toc_shown, toc.len(), "{step}: a contents link hid:\n{out}");
        }
        let prose = out.matches("Prose ").count();
        let past = |s: &str| seen.contains(&s);
        if past("no prose") {
            assert_eq!(prose, 0, "{step}: prose shown:\n{out}");
        } else {
            assert!(prose > 0, "{step}");
        }
        assert_eq!(
            out.contains("image \"Diagram"),
            !past("no decoration"),
            "{step}:\n{out}"
        );
        assert_eq!(out.contains("Keeper"), !past("no cells"), "{step}:\n{out}");
        for (k, uid) in order.iter().enumerate() {
            let named = ranges.iter().any(|(first, last)| {
                at(first).is_some_and(|a| a <= k) && at(last).is_some_and(|b| k <= b)
            });
            assert!(
                shown.contains(uid) || named,
                "{step}: {uid} neither shown nor named by a marker:\n{out}"
            );
        }
    }
    assert_eq!(
        seen,
        [
            "short prose",
            "no prose",
            "no decoration",
            "no cells",
            "lean"
        ],
        "the steps a page took on the way down"
    );
}

/// The proxy's gate (`Session::may_filter_result`, which spares it reading a line) and the
/// filter agree: a result of a tool no filter knows is left unread only when the filter
/// would forward it unchanged. Under a character bound of 1,000, a text of 600 to 990
/// characters is within the whole bound but over what the result's own text may use
/// (`content_chars`): the filter cuts it, so the gate must let it in.
#[test]
fn the_gate_reads_every_result_the_filter_would_change() {
    let mut options = SessionOptions::for_level(Level::Moderate);
    options.max_chars = 1_000;
    let mut changed = 0;
    for chars in (0..=990).step_by(30) {
        let mut session = Session::new(options.clone());
        let text = "word ".repeat(chars / 5);
        let line = serde_json::json!({
            "jsonrpc": "2.0",
            "id": 1,
            "result": {"content": [{"type": "text", "text": text}]},
        })
        .to_string();
        let filtered = session
            .filter_tool_response("some_tool", &line, None)
            .expect("a response");
        if filtered.is_some() {
            changed += 1;
            assert!(
                session.may_filter_result("some_tool", line.len()),
                "{chars} characters: changed by the filter, left unread by the gate"
            );
        }
    }
    assert!(changed > 0, "no result over the bound");
}

/// A snapshot result through `moderate` with the default token budget and `max_chars` (0: no
/// character bound): its text and the budget's step, if one was taken.
fn moderate_under_bound(result: &str, max_chars: usize) -> (String, Option<&'static str>) {
    let mut options = ResultOptions::for_level(Level::Moderate);
    options.max_tokens = crate::snapshot::params::DEFAULT_MAX_TOKENS;
    options.max_chars = max_chars;
    let filtered = filter_tool_result_value("take_snapshot", result, &options)
        .expect("filters")
        .expect("changed");
    let text = text_blocks(&filtered.result).collect::<Vec<_>>().join("\n");
    (text, filtered.budget.map(|b| b.step))
}
