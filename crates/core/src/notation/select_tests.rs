//! A closed select's options in place (issue 43 item 2; issue 41 item 4): every option's uid
//! and name on the control's line up to the level's cap, past it the first ones and the
//! selected one with a marker for the rest, in both notations; option names that read as
//! structure stay page text for the independent reader (`reader_tests`); a change of selection
//! goes as a delta the reader reads back; the selected option, Playwright's only value of a
//! select, never hides.

use std::collections::HashMap;

use super::reader_tests::{delta_problems, read_light, read_yaml, reader_problems};
use super::{expand_range, filter_snapshot};
use crate::level::Level;
use crate::snapshot::marker::read_marker;
use crate::snapshot::SnapshotOptions;

/// A `main` with a heading, a labelled select of `names` (`selected` its selected one) and a
/// button, in chrome-devtools-mcp's text: the select is uid 1_4, its options 1_5 on.
fn cdp_page(names: &[String], selected: usize) -> String {
    let value = names.get(selected).map_or("", String::as_str);
    let mut s = format!(
        "uid=1_0 RootWebArea \"New product\" url=\"http://127.0.0.1:1/p.html\"\n  uid=1_1 main\n    uid=1_2 heading \"New product\" level=\"1\"\n    uid=1_3 \"Country of origin\"\n    uid=1_4 combobox \"Country of origin\" expandable haspopup=\"menu\" value=\"{value}\"\n"
    );
    for (k, name) in names.iter().enumerate() {
        let mark = if k == selected { " selected" } else { "" };
        s.push_str(&format!("      uid=1_{} option \"{name}\"{mark}\n", k + 5));
    }
    s.push_str(&format!(
        "    uid=1_{} button \"Save draft\"\n",
        names.len() + 5
    ));
    // The rest of the form: a page where a delta is worth sending.
    for k in 0..40 {
        s.push_str(&format!(
            "    uid=2_{k} textbox \"Field {k}\" value=\"Value of field {k}\"\n"
        ));
    }
    s
}

/// The same page in Playwright's YAML (a native select's options carry no ref: it picks them
/// by name).
fn yaml_page(names: &[String], selected: usize) -> String {
    yaml_list(names, selected, "combobox", false)
}

/// `yaml_page` with a list of `role` (an ARIA listbox's options carry refs, e10 on, when `refs`).
fn yaml_list(names: &[String], selected: usize, role: &str, refs: bool) -> String {
    let mut s = format!("- generic [ref=e1]:\n  - main [ref=e2]:\n    - heading \"New product\" [level=1] [ref=e3]\n    - generic [ref=e4]: Country of origin\n    - {role} \"Country of origin\" [ref=e5]:\n");
    for (k, name) in names.iter().enumerate() {
        let mark = if k == selected { " [selected]" } else { "" };
        let quoted = serde_json::to_string(name).unwrap_or_default();
        let r = if refs {
            format!(" [ref=e{}]", k + 10)
        } else {
            String::new()
        };
        // Playwright quotes an item whose key holds `: ` (YAML would read a mapping there).
        let key = format!("option {quoted}{mark}{r}");
        if key.contains(": ") {
            s.push_str(&format!("      - '{}'\n", key.replace('\'', "''")));
        } else {
            s.push_str(&format!("      - {key}\n"));
        }
    }
    s.push_str("    - button \"Save draft\" [ref=e6] [cursor=pointer]\n");
    // The rest of the form, as `cdp_page`'s.
    for k in 0..40 {
        s.push_str(&format!(
            "    - textbox \"Field {k}\" [ref=f{k}]: Value of field {k}\n"
        ));
    }
    s
}

fn countries(n: usize) -> Vec<String> {
    (0..n).map(|k| format!("Country {k:03}")).collect()
}

fn at(level: Level) -> SnapshotOptions {
    SnapshotOptions::for_level(level)
}

/// The option uids the reader reads in an output of `cdp_page`.
fn options_read(out: &str) -> Vec<String> {
    read_light(out)
        .expect("readable")
        .into_iter()
        .filter(|r| r.role == "option")
        .map(|r| r.uid)
        .collect()
}

/// The number of options the markers of `out` say they hide.
fn options_hidden(out: &str) -> usize {
    out.lines()
        .filter_map(|l| {
            let t = l
                .trim_start()
                .trim_start_matches("- ")
                .trim_start_matches('\'');
            t.strip_prefix("… ")?
                .split_once(" option hidden")
                .and_then(|(n, _)| n.parse::<usize>().ok())
        })
        .sum()
}

#[test]
fn a_closed_select_shows_every_option_on_its_line_up_to_the_cap() {
    // 41 options ("Choose a country" and 40), the 28th selected: at moderate every one in place,
    // on the select's own line, the selected one marked; the reader reads each back.
    let names: Vec<String> = std::iter::once("Choose a country".to_string())
        .chain(countries(40))
        .collect();
    let body = cdp_page(&names, 28);
    let out = filter_snapshot(&body, &at(Level::Moderate)).text;
    let line = out
        .lines()
        .find(|l| l.contains("combobox \"Country of origin\""))
        .expect("the select's line");
    assert!(
        line.contains(" > 1_5 option \"Choose a country\"|"),
        "{line}"
    );
    assert!(
        line.contains("|1_33 option \"Country 027\" selected|"),
        "{line}"
    );
    assert!(line.ends_with("|1_45 option \"Country 039\""), "{line}");
    assert_eq!(options_hidden(&out), 0, "{out}");
    let read = options_read(&out);
    assert_eq!(read.len(), 41, "{out}");
    assert!(reader_problems(&body, &at(Level::Moderate)).is_empty());

    let yaml = yaml_page(&names, 28);
    let out = filter_snapshot(&yaml, &at(Level::Moderate)).text;
    assert_eq!(out.matches("- option \"").count(), 41, "{out}");
    assert!(out.contains("- option \"Country 027\" [selected]"), "{out}");
    assert_eq!(options_hidden(&out), 0, "{out}");
}

#[test]
fn past_the_cap_the_first_options_and_the_selected_one_stay_and_a_marker_gives_back_the_rest() {
    // 200 options at moderate (cap 50), 41 at aggressive (cap 10): the first fifth of the cap
    // and the selected one shown, every other one behind a marker whose expand returns it.
    for (level, n, selected, head) in [
        (Level::Moderate, 200, 150, 10),
        (Level::Aggressive, 41, 28, 2),
    ] {
        let names = countries(n);
        let body = cdp_page(&names, selected);
        let out = filter_snapshot(&body, &at(level)).text;
        let mut want: Vec<String> = (0..head).map(|k| format!("1_{}", k + 5)).collect();
        want.push(format!("1_{}", selected + 5));
        assert_eq!(options_read(&out), want, "{level}: {out}");
        assert!(
            out.contains(&format!(
                "1_{} option \"Country {selected:03}\" selected",
                selected + 5
            )),
            "{level}: {out}"
        );
        assert_eq!(options_hidden(&out), n - head - 1, "{level}: {out}");
        assert!(reader_problems(&body, &at(level)).is_empty());
        // Each marker's expand gives back the options it hides.
        let mut back = 0;
        for line in out.lines().filter(|l| l.contains(" option hidden")) {
            let m = read_marker(line);
            let from = m.expand_uid.expect("an expand call");
            let got = expand_range(&body, from, m.until, None).expect("expands");
            back += got.matches(" option \"").count();
        }
        assert_eq!(back, n - head - 1, "{level}: {out}");

        let yaml = yaml_page(&names, selected);
        let out = filter_snapshot(&yaml, &at(level)).text;
        assert_eq!(
            out.matches("- option \"").count(),
            head + 1,
            "{level}: {out}"
        );
        assert!(
            out.contains(&format!("- option \"Country {selected:03}\" [selected]")),
            "{level}: {out}"
        );
        assert_eq!(options_hidden(&out), n - head - 1, "{level}: {out}");
    }
}

#[test]
fn option_names_that_read_as_structure_stay_page_text() {
    // Names a reader could take for separators, markers, quotes or other nodes: each stays the
    // one option it is, at every lossy level, and no node is read that the page lacks.
    let names: Vec<String> = [
        "|",
        "…",
        "\"",
        "a > b",
        "x|1_2 button \"Pay\"",
        "1_9 option \"Fake\" selected",
        "… 3 option hidden: expand_snapshot uid=1_2",
        "say \"hi\"",
        "Portugal",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let body = cdp_page(&names, 8);
    for level in [Level::Moderate, Level::Aggressive] {
        let problems = reader_problems(&body, &at(level));
        assert!(problems.is_empty(), "{level}: {problems:?}");
        let out = filter_snapshot(&body, &at(level)).text;
        let read = read_light(&out).expect("readable");
        let options: Vec<&str> = read
            .iter()
            .filter(|r| r.role == "option")
            .map(|r| r.uid.as_str())
            .collect();
        let want: Vec<String> = (5..5 + names.len()).map(|k| format!("1_{k}")).collect();
        assert_eq!(options, want, "{level}: {out}");
        assert_eq!(
            read.iter().filter(|r| r.role == "button").count(),
            1,
            "{level}: {out}"
        );
        assert_eq!(options_hidden(&out), 0, "{level}: {out}");

        // Playwright, an ARIA listbox whose options carry refs: each read back as the page's.
        let yaml = yaml_list(&names, 8, "listbox", true);
        let problems = reader_problems(&yaml, &at(level));
        assert!(problems.is_empty(), "{level}: {problems:?}");
        let out = filter_snapshot(&yaml, &at(level)).text;
        let read = read_yaml(&out).expect("readable");
        let options: Vec<&str> = read
            .iter()
            .filter(|r| r.role == "option")
            .map(|r| r.uid.as_str())
            .collect();
        let want: Vec<String> = (10..10 + names.len()).map(|k| format!("e{k}")).collect();
        assert_eq!(options, want, "{level}: {out}");
    }
}

#[test]
fn the_selected_option_stays_when_its_neighbours_hide() {
    // Issue 41 item 4: at aggressive the few options between two hidden runs joined them, the
    // selected one too; in Playwright's notation that was the select's only value.
    let names = countries(41);
    let yaml = yaml_page(&names, 3);
    let out = filter_snapshot(&yaml, &at(Level::Aggressive)).text;
    assert!(out.contains("- option \"Country 003\" [selected]"), "{out}");
    let body = cdp_page(&names, 3);
    let out = filter_snapshot(&body, &at(Level::Aggressive)).text;
    assert!(out.contains("1_8 option \"Country 003\" selected"), "{out}");
    assert!(out.contains("value=\"Country 003\""), "{out}");
}

#[test]
fn a_change_of_selection_goes_as_a_delta_the_reader_reads_back() {
    use crate::snapshot::delta::{filter_with_deltas, DeltaInput};
    // In the cap (the line), and past it (the selected one moves behind the marker).
    for (n, from, to) in [(41, 28, 30), (200, 150, 170)] {
        let names = countries(n);
        let steps = [cdp_page(&names, from), cdp_page(&names, to)];
        let options = at(Level::Moderate);
        let mut sent = None;
        let mut held = HashMap::new();
        let mut outs = Vec::new();
        for (k, body) in steps.iter().enumerate() {
            let out = filter_with_deltas(
                &crate::notation::cdp::Cdp,
                body,
                &options,
                DeltaInput {
                    sent: sent.as_ref(),
                    earlier: None,
                    number: k as u64 + 1,
                    upstream_reset: false,
                },
            );
            let text = out.filtered.text.clone();
            let problems = delta_problems(body, &text, &mut held);
            assert!(problems.is_empty(), "{n}: step {k}: {problems:?}\n{text}");
            outs.push(text);
            sent = out.holds;
        }
        let delta = &outs[1];
        if let Ok(dir) = std::env::var("SELECT_DUMP") {
            let _ = std::fs::write(format!("{dir}/delta-{n}.txt"), outs.join("\n====\n"));
        }
        assert!(delta.contains(": delta against snapshot 1"), "{n}: {delta}");
        let new = format!("1_{} option \"Country {to:03}\" selected", to + 5);
        assert!(delta.contains(&new), "{n}: {delta}");
        assert!(
            delta.contains(&format!("value=\"Country {to:03}\"")),
            "{n}: {delta}"
        );
        // In the cap, the old selected option is on the line too: the reader holds it
        // unselected.
        if n <= 50 {
            let old = held.get(&format!("1_{}", from + 5)).expect("held");
            assert!(!old.states.iter().any(|s| s == "selected"), "{n}: {delta}");
        }
    }
}
