//! What the agent opened stays in view (`open`), on small snapshots in both notations.

use crate::level::Level;
use crate::notation::filter_snapshot;
use crate::snapshot::SnapshotOptions;

/// Whether `uid` is written as a node of `out` (its own line, a sibling after `|`, a child
/// after ` > `), not only named by a marker's range.
fn shown(out: &str, uid: &str) -> bool {
    out.lines().any(|line| {
        let t = line.trim_start().trim_start_matches("- ");
        !t.starts_with('…')
            && (t.split('|').chain(t.split(" > ")).any(|seg| {
                let seg = seg.trim_start();
                seg.starts_with(&format!("{uid} ")) || seg == uid
            }) || t.contains(&format!("[ref={uid}]")))
    })
}

fn filtered(text: &str, level: Level) -> String {
    filter_snapshot(text, &SnapshotOptions::for_level(level)).text
}

/// A banner whose account menu the agent just opened, a main, a footer whose disclosure it
/// opened, a complementary with a focused textbox, and a non-modal dialog after them.
const CDP_PAGE: &str = r##"uid=1_0 RootWebArea "Projects — Orbit" url="http://127.0.0.1/app/w.html"
  uid=1_1 banner
    uid=1_2 "Orbit 4.2 is here: pipelines can now wait for approvals · "
    uid=1_3 link "What's new" url="http://127.0.0.1/app/w.html#new"
    uid=1_4 link "Join the webinar" url="http://127.0.0.1/app/w.html#webinar"
    uid=1_5 "Workspace"
    uid=1_6 combobox "Workspace" expandable expanded haspopup="listbox" value="Acme"
    uid=6_0 listbox "Workspaces" orientation="vertical"
      uid=6_1 option "Acme" selectable selected
      uid=6_2 option "Acme Mobile"
      uid=6_3 option "Data Science"
      uid=6_4 option "Growth Team"
      uid=6_5 option "Infrastructure"
      uid=6_6 option "Research Lab"
    uid=1_7 link "Inbox (4)" url="http://127.0.0.1/app/w.html#inbox"
    uid=1_8 button "Jane Doe" expandable expanded haspopup="menu"
    uid=2_0 menu "Account" orientation="vertical"
      uid=2_1 menuitem "Your profile"
      uid=2_2 menuitem "Account settings"
      uid=2_3 menuitem "Billing and plans"
      uid=2_4 menuitem "Keyboard shortcuts"
      uid=2_5 menuitem "Switch account"
      uid=2_6 menuitem "Help center"
      uid=2_7 menuitem "Sign out"
  uid=1_9 main
    uid=1_10 heading "Projects" level="1"
    uid=1_11 "Every project of the workspace, its pipeline status and its owners."
    uid=1_12 button "Open Apollo"
    uid=1_13 button "Open Borealis"
  uid=1_20 complementary "Notes"
    uid=1_21 heading "Notes" level="2"
    uid=1_22 "Notes are private to you and kept with the workspace. Markdown works."
    uid=1_23 "Quick note"
    uid=1_24 textbox "Quick note" focusable focused multiline
    uid=1_25 button "Save note"
  uid=1_30 contentinfo
    uid=1_31 "© 2026 Orbit Labs, Inc. All rights reserved. Orbit is a registered trademark."
    uid=1_32 button "Resources" expandable expanded
    uid=11_0 link "API reference" url="http://127.0.0.1/app/w.html#api"
    uid=11_1 link "API status" url="http://127.0.0.1/app/w.html#status"
    uid=11_2 link "Changelog" url="http://127.0.0.1/app/w.html#changelog"
    uid=11_3 link "Security" url="http://127.0.0.1/app/w.html#security"
    uid=11_4 link "Privacy" url="http://127.0.0.1/app/w.html#privacy"
    uid=1_33 "Made with care in Lisbon and Toronto. Questions? Write to the team any time."
  uid=3_0 dialog "Keyboard shortcuts"
    uid=3_1 heading "Keyboard shortcuts" level="2"
    uid=3_2 "Shortcuts work anywhere in the workspace except inside text fields."
    uid=3_3 checkbox "Enable single-key shortcuts" checked
    uid=3_4 button "Print shortcuts"
    uid=3_5 button "Close shortcuts"
"##;

const OPEN_CDP: &[&str] = &[
    "1_6", "6_0", "6_1", "6_2", "6_3", "6_4", "6_5", "6_6", "1_8", "2_0", "2_1", "2_2", "2_3",
    "2_4", "2_5", "2_6", "2_7", "1_24", "1_25", "1_32", "11_0", "11_1", "11_2", "11_3", "11_4",
    "3_0", "3_3", "3_4", "3_5",
];

/// The account menu, the workspace listbox, the footer's open disclosure, the focused textbox
/// and the dialog are written as nodes at every lossy level (before: `moderate` summarised the
/// banner's menu items and the footer's links, `aggressive` hid all of it but `main`).
#[test]
fn what_the_agent_opened_is_written_at_every_level() {
    open_shown_and_rest_hidden(CDP_PAGE, OPEN_CDP, "1_2");
}

/// At each lossy level, every uid of `open` is written as a node, and `hidden` (of the
/// banner's prose or links) is not: open keeps what is open, not its landmark.
fn open_shown_and_rest_hidden(page: &str, open: &[&str], hidden: &str) {
    for level in [Level::Moderate, Level::Aggressive] {
        let out = filtered(page, level);
        for uid in open {
            assert!(shown(&out, uid), "{level:?}: {uid} not shown\n{out}");
        }
        assert!(!shown(&out, hidden), "{level:?}\n{out}");
    }
}

/// The same page with nothing open: the menu button and the disclosure (what the agent opens
/// things with) stay in their summarised landmarks at `moderate`, and nothing else of them is
/// kept for their sake (the banner's prose and links still hide).
#[test]
fn an_opener_stays_in_its_landmark_at_moderate() {
    let closed: String = CDP_PAGE
        .lines()
        .filter(|l| {
            let uid = l.trim_start().trim_start_matches("uid=");
            !["2_", "3_", "6_", "11_"]
                .iter()
                .any(|opened| uid.starts_with(opened))
        })
        .map(|l| l.replace(" expanded", "").replace(" focused", ""))
        .collect::<Vec<_>>()
        .join("\n")
        + "\n";
    let out = filtered(&closed, Level::Moderate);
    for uid in ["1_6", "1_8", "1_32"] {
        assert!(shown(&out, uid), "{uid} not shown\n{out}");
    }
    assert!(!shown(&out, "1_2"), "{out}");
    let aggressive = filtered(&closed, Level::Aggressive);
    assert!(!shown(&aggressive, "1_8"), "{aggressive}");
}

/// A dialog after a `main` that fills the node cap on its own stays whole: before, the cap hid
/// it (it comes last in document order).
#[test]
fn a_dialog_after_a_main_over_the_node_cap_stays() {
    let mut page =
        String::from("uid=1_0 RootWebArea \"Big\" url=\"http://127.0.0.1/\"\n  uid=1_1 main\n");
    for k in 0..1_200 {
        page.push_str(&format!(
            "    uid=1_{} heading \"Section {k}\" level=\"2\"\n",
            k + 2
        ));
    }
    page.push_str(
        "  uid=9_0 alertdialog \"Delete project?\" modal\n    uid=9_1 \"This cannot be undone.\"\n    uid=9_2 checkbox \"Also delete archived runs\"\n    uid=9_3 button \"Keep project\" focusable focused\n    uid=9_4 button \"Delete for everyone\"\n",
    );
    for level in [Level::Moderate, Level::Aggressive] {
        let out = filtered(&page, level);
        for uid in ["9_0", "9_2", "9_3", "9_4"] {
            assert!(shown(&out, uid), "{level:?}: {uid} not shown");
        }
    }
}

/// Playwright MCP's notation: `[expanded]` and `[active]`.
const PW_PAGE: &str = r##"- generic [ref=e1]:
  - banner [ref=e2]:
    - paragraph [ref=e3]: Orbit 4.2 is here, pipelines can now wait for approvals, read more
    - link "What's new" [ref=e4] [cursor=pointer]:
      - /url: "#new"
    - link "Join the webinar" [ref=e5] [cursor=pointer]:
      - /url: "#webinar"
    - paragraph [ref=e100]: Free shipping on every order over thirty-five dollars, all season long, on every plan.
    - paragraph [ref=e101]: Our offices are closed on public holidays; the support team answers within a day.
    - paragraph [ref=e102]: Pipelines can now wait for an approval before they deploy, from any workspace.
    - button "Jane Doe" [expanded] [ref=e6]
    - menu "Account" [ref=e7]:
      - menuitem "Your profile" [ref=e8]
      - menuitem "Account settings" [ref=e9]
      - menuitem "Billing and plans" [ref=e10]
      - menuitem "Keyboard shortcuts" [ref=e11]
      - menuitem "Switch account" [ref=e12]
      - menuitem "Help center" [ref=e13]
      - menuitem "Sign out" [ref=e14]
  - main [ref=e20]:
    - heading "Projects" [level=1] [ref=e21]
    - paragraph [ref=e22]: Every project of the workspace, its pipeline status and its owners.
    - button "Open Apollo" [ref=e23]
    - button "Open Borealis" [ref=e24]
  - complementary "Notes" [ref=e30]:
    - heading "Notes" [level=2] [ref=e31]
    - paragraph [ref=e32]: Notes are private to you and kept with the workspace. Markdown works.
    - paragraph [ref=e35]: Last saved 12 minutes ago from the desktop app, with the changes of two other devices merged.
    - paragraph [ref=e36]: Pinned notes, the release checklist, the on-call rota and the roadmap, come first.
    - textbox "Quick note" [active] [ref=e33]
    - button "Save note" [ref=e34]
  - dialog "Keyboard shortcuts" [ref=e40]:
    - heading "Keyboard shortcuts" [level=2] [ref=e41]
    - checkbox "Enable single-key shortcuts" [checked] [ref=e42]
    - button "Close shortcuts" [ref=e43]
"##;

#[test]
fn what_the_agent_opened_is_written_at_every_level_in_playwright() {
    let open = [
        "e6", "e8", "e9", "e10", "e11", "e12", "e13", "e14", "e33", "e34", "e40", "e42", "e43",
    ];
    open_shown_and_rest_hidden(PW_PAGE, &open, "e5");
}

/// Under a token budget the page must give way step by step (its 600 links in `main`), and
/// what the agent opened still stays: the banner's menu and the dialog after a long `main`.
#[test]
fn what_the_agent_opened_stays_under_the_token_budget() {
    use crate::result::{filter_tool_result_value, text_blocks, ResultOptions};
    let mut page = String::from("## Latest page snapshot\n");
    let (head, rest) = CDP_PAGE.split_at(CDP_PAGE.find("  uid=1_9 main").unwrap_or(0));
    page.push_str(head);
    page.push_str("  uid=1_9 main\n");
    for k in 0..600 {
        page.push_str(&format!(
            "    uid=5_{k} link \"Release note {k} of the pipelines service, with its long title\" url=\"http://127.0.0.1/n{k}\"\n"
        ));
    }
    page.push_str(&rest[rest.find("  uid=1_20").unwrap_or(0)..]);
    let result = serde_json::json!({"content": [{"type": "text", "text": page}]}).to_string();
    for level in [Level::Moderate, Level::Aggressive] {
        let mut options = ResultOptions::for_level(level);
        options.max_tokens = 2_000;
        let filtered = filter_tool_result_value("take_snapshot", &result, &options)
            .expect("filters")
            .expect("changed");
        let step = filtered.budget.as_ref().map(|b| b.step);
        // At `moderate` the budget must act (`aggressive`'s own view may fit already); no
        // step may have had to cut.
        assert!(
            step.is_some() || level == Level::Aggressive,
            "{level:?}: the budget did not act"
        );
        assert_ne!(step, Some("cut"), "{level:?}");
        let out = text_blocks(&filtered.result).collect::<Vec<_>>().join("\n");
        for uid in OPEN_CDP {
            assert!(
                shown(&out, uid),
                "{level:?} at {step:?}: {uid} not shown\n{out}"
            );
        }
    }
}
