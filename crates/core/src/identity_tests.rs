//! Identity across snapshots, through a session: deltas keyed by identity and the uid a
//! request names, on the recorded re-rendering app (`__test__/fixtures/sessions/
//! rerender-orders.jsonl`: chrome-devtools-mcp 1.11 and Chromium on
//! `__test__/site/app/rerender.html`) and on random re-renders of generated pages, with an
//! oracle: every uid the agent was shown resolves to an element with the role and name it was
//! shown with, or passes unchanged; never to another.

use std::collections::HashMap;

use serde_json::json;

use crate::delta_tests::{body_of, read_session, send, session, Step};
use crate::level::Level;
use crate::session::Session;
use crate::snapshot::delta::Sent;
use crate::test_support::{shipped, XorShift};

const RECORDED: &str = "__test__/fixtures/sessions/rerender-orders.jsonl";

/// uid -> (role, name) of every node line of a raw chrome-devtools-mcp snapshot.
fn lines_of(raw: &str) -> HashMap<String, (String, String)> {
    let mut out = HashMap::new();
    for line in raw.lines() {
        let Some(rest) = line.trim_start().strip_prefix("uid=") else {
            continue;
        };
        let mut parts = rest.splitn(2, ' ');
        let uid = parts.next().unwrap_or("").to_string();
        let rest = parts.next().unwrap_or("");
        let (role, name) = if let Some(quoted) = rest.strip_prefix('"') {
            ("", quoted)
        } else {
            let mut p = rest.splitn(2, ' ');
            (p.next().unwrap_or(""), p.next().unwrap_or(""))
        };
        let name = name.trim_start_matches('"').split('"').next().unwrap_or("");
        out.insert(uid, (role.to_string(), name.to_string()));
    }
    out
}

fn raw_text(step: &Step) -> &str {
    step.result["content"][0]["text"].as_str().unwrap_or("")
}

/// The session's resolution of `uid` on `page` (what a request naming it sends upstream).
fn resolve(s: &Session, page: &str, uid: &str) -> Option<String> {
    s.held().current_uid(page, uid).map(str::to_string)
}

/// Every uid of every snapshot the agent received resolves, after each later snapshot, to a
/// node of the latest snapshot with the role and name it was shown with, or not at all.
#[test]
fn every_uid_shown_in_the_recorded_session_resolves_to_what_it_was_or_passes() {
    let steps = read_session(&shipped(RECORDED));
    let mut s = session(Level::Moderate, true);
    let mut shown: HashMap<String, (String, String)> = HashMap::new();
    let mut rewritten = 0;
    for step in steps.iter().skip(1) {
        send(&mut s, step);
        let Some(body) = body_of(raw_text(step)) else {
            continue;
        };
        let now = lines_of(body);
        for (uid, seen) in &shown {
            let Some(current) = resolve(&s, "1", uid) else {
                continue;
            };
            rewritten += 1;
            assert_eq!(now.get(&current), Some(seen), "{uid} -> {current}");
        }
        shown.extend(now);
    }
    // The page renumbers its rows on every re-render: most of them resolve.
    assert!(rewritten > 500, "{rewritten}");
}

/// The recorded dialog: the page after it closed is a delta against the page before it (the
/// dialog's snapshot held only the dialog), naming only what changed: the status line and the
/// opener, now focused.
#[test]
fn the_page_after_a_dialog_is_a_delta_against_the_page_before_it() {
    let steps = read_session(&shipped(RECORDED));
    let mut s = session(Level::Moderate, true);
    let mut sent = Vec::new();
    for step in steps.iter().skip(1).take(4) {
        let out = send(&mut s, step);
        sent.push((out, s.last_sent()));
    }
    let (after, how) = &sent[3];
    let Some(Sent::Delta { against, counts }) = how else {
        panic!("{how:?}\n{after}");
    };
    assert_eq!(*against, 1, "{after}");
    assert_eq!(
        (counts.added, counts.changed, counts.removed),
        (2, 0, 2),
        "{after}"
    );
    assert!(after.len() * 2 < sent[1].0.len(), "{after}");
}

/// A page with a modal dialog's covering snapshot between two identical views of it.
fn dialog_session() -> (Session, String) {
    dialog_session_with(1)
}

/// `dialog_session` with `dialogs` snapshots of the dialog in a row (its form filled in
/// between: each renumbered, as chrome-devtools-mcp does).
fn dialog_session_with(dialogs: usize) -> (Session, String) {
    let page = "uid=1_0 RootWebArea \"Shop\"\n  uid=1_1 main\n    uid=1_2 heading \"Orders\" level=\"1\"\n    uid=1_3 \"#1\"\n    uid=1_4 button \"Edit\"\n    uid=1_5 \"#2\"\n    uid=1_6 button \"Edit\"\n    uid=1_7 button \"New order\"\n".to_string();
    let dialog = "uid=1_0 RootWebArea \"Shop\"\n  uid=2_0 dialog \"New order\" modal\n    uid=2_1 button \"Close\"\n";
    let after = page
        .replace("uid=1_", "uid=3_")
        .replace("uid=3_0 ", "uid=1_0 ");
    let filled = dialog
        .replace("uid=2_", "uid=4_")
        .replace("button \"Close\"", "button \"Close\" focusable focused");
    let dialogs = [dialog, filled.as_str()].into_iter().cycle().take(dialogs);
    let mut s = session(Level::Moderate, true);
    for body in std::iter::once(page.as_str())
        .chain(dialogs)
        .chain(std::iter::once(after.as_str()))
    {
        let result = json!({"content": [{"type": "text", "text": format!("## Latest page snapshot\n{body}")}]});
        let step = Step {
            tool: "take_snapshot".into(),
            args: json!({"pageId": 1}),
            result,
        };
        let out = send(&mut s, &step);
        if body == after {
            return (s, out);
        }
    }
    unreachable!()
}

#[test]
fn an_unchanged_page_after_a_dialog_closed_is_the_short_form() {
    let (s, out) = dialog_session();
    let body = body_of(&out).unwrap_or("");
    assert!(
        matches!(s.last_sent(), Some(Sent::Delta { against: 1, counts }) if counts.is_empty()),
        "{out}"
    );
    assert!(body.contains("unchanged since snapshot 1"), "{body}");
    assert!(crate::tokens::estimate_tokens(body) <= 60, "{body}");
    // The uids of before the dialog click what they were.
    assert_eq!(resolve(&s, "1", "1_6").as_deref(), Some("3_6"));
    assert_eq!(resolve(&s, "1", "1_0"), None);
}

/// Two snapshots of the dialog in a row (a form opened, then filled): the page under it is
/// still the one the page after it is matched against, and the short form.
#[test]
fn an_unchanged_page_after_two_dialog_snapshots_is_the_short_form() {
    let (s, out) = dialog_session_with(2);
    assert!(
        matches!(s.last_sent(), Some(Sent::Delta { against: 1, counts }) if counts.is_empty()),
        "{out}"
    );
    assert!(
        out.contains("snapshot 4: unchanged since snapshot 1"),
        "{out}"
    );
    assert_eq!(resolve(&s, "1", "1_6").as_deref(), Some("3_6"));
}

/// The proxy's own tools take the uids the agent holds too: an unchanged line or a marker
/// names them.
#[test]
fn expand_snapshot_takes_a_uid_the_page_renumbered() {
    let (mut s, _) = dialog_session();
    let out = s
        .call_proxy_tool(
            "expand_snapshot",
            Some(r#"{"pageId":1,"uid":"1_3","until":"1_4"}"#),
        )
        .unwrap_or_default();
    let text = crate::delta_tests::text_of(&out);
    assert!(
        text.contains("3_3 \"#1\"") && text.contains("3_4 button \"Edit\""),
        "{out}"
    );
}

/// Identity is one page's and one client's; an upstream restart forgets it.
#[test]
fn identity_never_crosses_pages_or_clients_and_a_restart_forgets_it() {
    let (mut s, _) = dialog_session();
    assert_eq!(resolve(&s, "1", "1_4").as_deref(), Some("3_4"));
    assert_eq!(resolve(&s, "2", "1_4"), None);
    assert_eq!(resolve(&s, "", "1_4"), None);
    // Another client holds nothing of it.
    let mut era = crate::era::Era::new();
    era.use_client(
        &mut s,
        Some(r#"{"io.modelcontextprotocol/clientInfo":{"name":"b"}}"#),
    );
    assert_eq!(resolve(&s, "1", "1_4"), None);
    // Client b snapshots a page too (one large enough to be filtered: its header says how it
    // was sent): it holds that, and only that.
    let snapshot = |page: u32| Step {
        tool: "take_snapshot".into(),
        args: json!({ "pageId": page }),
        result: serde_json::from_str(&crate::test_support::grid_result(None)).unwrap_or_default(),
    };
    let b_first = send(&mut s, &snapshot(1));
    assert!(
        b_first.contains("snapshot 1, full: first snapshot of this page"),
        "{b_first}"
    );
    era.use_client(&mut s, None);
    assert_eq!(resolve(&s, "1", "1_4").as_deref(), Some("3_4"));
    // Another page is a first, whatever page 1 holds.
    let other = send(&mut s, &snapshot(2));
    assert!(
        other.contains("full: first snapshot of this page"),
        "{other}"
    );
    era.upstream_restarted(&mut s);
    assert_eq!(resolve(&s, "1", "1_4"), None);
    // After it every page held is sent whole, saying why, for every client; the base again
    // afterwards.
    let whole = "full: the upstream restarted or reconnected since this page's last snapshot";
    let next = send(&mut s, &snapshot(1));
    assert!(next.contains(&format!("snapshot 4, {whole}")), "{next}");
    let again = send(&mut s, &snapshot(1));
    assert!(
        again.contains("snapshot 5: unchanged since snapshot 4"),
        "{again}"
    );
    era.use_client(
        &mut s,
        Some(r#"{"io.modelcontextprotocol/clientInfo":{"name":"b"}}"#),
    );
    let b_next = send(&mut s, &snapshot(1));
    assert!(b_next.contains(&format!("snapshot 2, {whole}")), "{b_next}");
    // A page never snapshotted before is still a first.
    let new_page = send(&mut s, &snapshot(3));
    assert!(
        new_page.contains("snapshot 1, full: first snapshot of this page"),
        "{new_page}"
    );
}

// ---- random re-renders, with an oracle ----

/// One element of a generated page: what the agent reads of it, and who it really is.
#[derive(Clone, Debug)]
struct El {
    role: &'static str,
    name: String,
    truth: u32,
    uid: String,
}

/// A generated page: a root, a main, then rows of cells as flat siblings (as
/// chrome-devtools-mcp shows a table whose rows and cells have no names).
#[derive(Clone, Debug)]
struct Page {
    root: El,
    main: El,
    cells: Vec<El>,
}

impl Page {
    fn text(&self) -> String {
        let line = |e: &El, indent: usize| {
            let pad = " ".repeat(indent);
            if e.role.is_empty() {
                format!("{pad}uid={} \"{}\"\n", e.uid, e.name)
            } else {
                format!("{pad}uid={} {} \"{}\"\n", e.uid, e.role, e.name)
            }
        };
        let mut out = String::from("## Latest page snapshot\n");
        out.push_str(&line(&self.root, 0));
        out.push_str(&line(&self.main, 2));
        for c in &self.cells {
            out.push_str(&line(c, 4));
        }
        out
    }

    fn all(&self) -> impl Iterator<Item = &El> {
        [&self.root, &self.main].into_iter().chain(&self.cells)
    }
}

struct Gen {
    rng: XorShift,
    truth: u32,
    snapshot: u32,
}

impl Gen {
    fn el(&mut self, role: &'static str, name: String) -> El {
        self.truth += 1;
        El {
            role,
            name,
            truth: self.truth,
            uid: String::new(),
        }
    }

    /// A row: its label (unique, or a twin's), a name, and its buttons.
    fn row(&mut self, label: &str) -> Vec<El> {
        vec![
            self.el("", label.to_string()),
            self.el("", format!("Customer {label}")),
            self.el("button", "Edit".into()),
            self.el("button", "Delete".into()),
        ]
    }

    fn page(&mut self) -> Page {
        let root = self.el("RootWebArea", "Orders".into());
        let main = self.el("main", String::new());
        let mut cells = vec![self.el("heading", "Orders".into())];
        let rows = 2 + self.rng.below(6) as usize;
        for r in 0..rows {
            // Now and then a row twice: identical rows.
            let label = if r > 0 && self.rng.below(4) == 0 {
                format!("#{}", r - 1)
            } else {
                format!("#{r}")
            };
            cells.extend(self.row(&label));
        }
        cells.push(self.el("button", "Next".into()));
        let mut page = Page { root, main, cells };
        self.snapshot += 1;
        let n = self.snapshot;
        for (i, e) in [&mut page.root, &mut page.main]
            .into_iter()
            .chain(page.cells.iter_mut())
            .enumerate()
        {
            e.uid = format!("{n}_{i}");
        }
        page
    }

    /// A re-render: some nodes keep their uid (the upstream's `previous snapshot` rule is
    /// modelled by keeping uids only of nodes whose truth stays), the rest get new ones.
    fn rerender(&mut self, page: &Page) -> Page {
        let mut next = page.clone();
        let row_starts: Vec<usize> = (1..next.cells.len().saturating_sub(1)).step_by(4).collect();
        // Rows renumbered (the rest keeping their uids), or none: every node may be.
        let mut only_row = None;
        match self.rng.below(7) {
            // Renumber every node (a dialog's snapshot came between, or the rows re-rendered
            // in place: the same elements for the agent).
            0 => {}
            // Renumber one subtree: one row.
            1 => {
                only_row = row_starts
                    .get(self.rng.below(row_starts.len().max(1) as u64) as usize)
                    .copied()
            }
            // Renumber and change one node.
            2 => {
                let at = self.rng.below(next.cells.len() as u64) as usize;
                if let Some(c) = next.cells.get_mut(at) {
                    c.name.push_str(" (changed)");
                }
            }
            // Reorder the rows (identical ones included): rows are new elements.
            3 => {
                let mut rows: Vec<Vec<El>> = row_starts
                    .iter()
                    .map(|&s| next.cells.get(s..s + 4).unwrap_or(&[]).to_vec())
                    .collect();
                let k = rows.len();
                for i in (1..k).rev() {
                    let j = self.rng.below(i as u64 + 1) as usize;
                    rows.swap(i, j);
                }
                let head = next.cells.first().cloned();
                let tail = next.cells.last().cloned();
                next.cells = head
                    .into_iter()
                    .chain(rows.into_iter().flatten())
                    .chain(tail)
                    .collect();
            }
            // Remove a row (its elements are gone).
            4 => {
                if let Some(&s) =
                    row_starts.get(self.rng.below(row_starts.len().max(1) as u64) as usize)
                {
                    next.cells.drain(s..s + 4);
                }
            }
            // Duplicate a row: a new twin after it.
            5 => {
                if let Some(&s) = row_starts.first() {
                    let twin: Vec<El> = next
                        .cells
                        .get(s..s + 4)
                        .unwrap_or(&[])
                        .iter()
                        .map(|c| self.el(c.role, c.name.clone()))
                        .collect();
                    next.cells.splice(s + 4..s + 4, twin);
                }
            }
            // Swap two identical rows, when there are: the same lines, other elements.
            _ => {
                let labels: Vec<String> = row_starts
                    .iter()
                    .filter_map(|&s| next.cells.get(s).map(|c| c.name.clone()))
                    .collect();
                for (i, a) in labels.iter().enumerate() {
                    if let Some(j) = labels.iter().skip(i + 1).position(|b| b == a) {
                        let (x, y) = (row_starts[i], row_starts[i + 1 + j]);
                        for t in 0..4 {
                            next.cells.swap(x + t, y + t);
                        }
                        break;
                    }
                }
            }
        }
        self.snapshot += 1;
        let n = self.snapshot;
        let kept: HashMap<u32, String> = page.all().map(|e| (e.truth, e.uid.clone())).collect();
        let mut fresh = 0;
        let renumbered: Vec<u32> = only_row
            .and_then(|s| next.cells.get(s..s + 4))
            .map(|row| row.iter().map(|c| c.truth).collect())
            .unwrap_or_default();
        for e in [&mut next.root, &mut next.main]
            .into_iter()
            .chain(next.cells.iter_mut())
        {
            // The root always keeps its uid (the same document); others now and then (a
            // snapshot between held them), else renumbered.
            let keep = e.truth == page.root.truth
                || (only_row.is_some() && !renumbered.contains(&e.truth))
                || self.rng.below(5) == 0;
            match kept.get(&e.truth) {
                Some(uid) if keep => e.uid = uid.clone(),
                _ => {
                    e.uid = format!("{n}_{fresh}");
                    fresh += 1;
                }
            }
        }
        next
    }
}

/// Random re-renders of generated pages: every uid the agent was shown either passes
/// unchanged or resolves to the element it was (an element with identical twins: one with
/// its role and name), never to another.
#[test]
fn random_re_renders_never_resolve_a_uid_to_another_element() {
    let mut resolved = 0;
    for seed in 1..=500u64 {
        let mut g = Gen {
            rng: XorShift(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1),
            truth: 0,
            snapshot: 0,
        };
        let mut s = session(Level::Moderate, true);
        let mut page = g.page();
        // uid -> what the agent was shown: truth, role, name.
        let mut shown: HashMap<String, (u32, &'static str, String)> = HashMap::new();
        let mut twinned: std::collections::HashSet<u32> = std::collections::HashSet::new();
        for _ in 0..6 {
            let step = Step {
                tool: "take_snapshot".into(),
                args: json!({"pageId": 1}),
                result: json!({"content": [{"type": "text", "text": page.text()}]}),
            };
            send(&mut s, &step);
            for e in page.all() {
                shown.insert(e.uid.clone(), (e.truth, e.role, e.name.clone()));
            }
            let by_uid: HashMap<&str, &El> = page.all().map(|e| (e.uid.as_str(), e)).collect();
            // Elements of rows identical to another row of the page (same label, same
            // lines): nothing the agent reads tells them apart, now or later.
            let mut label_count: HashMap<&str, usize> = HashMap::new();
            for row in page.cells.get(1..).unwrap_or(&[]).chunks(4) {
                if let Some(label) = row.first() {
                    *label_count.entry(label.name.as_str()).or_default() += 1;
                }
            }
            for row in page.cells.get(1..).unwrap_or(&[]).chunks(4) {
                if row
                    .first()
                    .is_some_and(|l| label_count.get(l.name.as_str()) > Some(&1))
                {
                    twinned.extend(row.iter().map(|c| c.truth));
                }
            }
            let twins = |a: u32, b: u32| twinned.contains(&a) && twinned.contains(&b);
            for (uid, (truth, role, name)) in &shown {
                let Some(current) = resolve(&s, "1", uid) else {
                    continue;
                };
                resolved += 1;
                let Some(now) = by_uid.get(current.as_str()) else {
                    panic!(
                        "seed {seed}: {uid} -> {current}, not on the page\n{}",
                        page.text()
                    );
                };
                // The same element (the upstream kept its uid through a change of its name,
                // or it was matched), or, for an element of a row that had an identical twin
                // row, the twin's: the same role and name.
                if now.truth != *truth {
                    assert!(
                        (now.role, &now.name) == (*role, name) && twins(now.truth, *truth),
                        "seed {seed}: {uid} ({role} {name:?}) -> {current} ({} {:?})\n{}",
                        now.role,
                        now.name,
                        page.text()
                    );
                }
            }
            page = g.rerender(&page);
        }
    }
    assert!(resolved > 1000, "{resolved}");
}

/// A snapshot whose text is the one before it of its page is always the short form: identity
/// never turns a uid the upstream repeats into a change (it did on rustdoc-hashmap: one node
/// "removed" and "added behind a marker").
#[test]
fn an_identical_re_snapshot_is_always_the_short_form() {
    let mut dirs = vec![shipped("__test__/fixtures/sessions")];
    if let Some(corpus) = crate::test_support::corpus_dir() {
        dirs.push(corpus.join("sessions"));
    }
    let mut identical = 0;
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for path in entries.filter_map(|e| e.ok().map(|e| e.path())) {
            if path.extension().is_none_or(|x| x != "jsonl") {
                continue;
            }
            let mut s = session(Level::Moderate, true);
            let mut last: HashMap<String, String> = HashMap::new();
            for step in read_session(&path).iter().skip(1) {
                let out = send(&mut s, step);
                let Some(body) = body_of(raw_text(step)) else {
                    continue;
                };
                let page = step.args["pageId"].to_string();
                if last.get(&page).map(String::as_str) == Some(body) {
                    identical += 1;
                    let sent = body_of(&out).unwrap_or("");
                    // (or whole again after 8 deltas in a row)
                    assert!(
                        sent.contains("unchanged since")
                            || sent.contains("after 8 deltas in a row"),
                        "{}: {sent}",
                        path.display()
                    );
                }
                last.insert(page, body.to_string());
            }
        }
    }
    assert!(identical > 0);
}
