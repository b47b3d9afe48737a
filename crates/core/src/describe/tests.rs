//! Cross-module tests of description compression: the meaning table (including the known bad
//! outputs of earlier tools) and the corpus-wide invariants.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use once_cell::sync::Lazy;
use serde_json::Value;

use super::context::{self, Site};
use super::protect::{self, Vocab};
use super::*;
use crate::test_support::corpus_dir;

// ---- the meaning table ----------------------------------------------------------------

/// (input, level, must contain, must not contain). Fragments are matched case-sensitively.
const MEANING: &[(&str, Level, &[&str], &[&str])] = &[
    // Known bad outputs of earlier tools.
    ("Maybe not.", Level::Moderate, &["Maybe not"], &[]),
    ("Maybe not.", Level::Aggressive, &["Maybe not"], &[]),
    ("Select option a", Level::Moderate, &["option a"], &[]),
    (
        "Select option a or option b.",
        Level::Moderate,
        &["option a or option b"],
        &[],
    ),
    (
        "This might not work on iframes.",
        Level::Moderate,
        &["might not work"],
        &[],
    ),
    (
        "Make sure to close the page first.",
        Level::Moderate,
        &["Ensure close"],
        &["make", "Make"],
    ),
    (
        "Please make sure that the page is loaded.",
        Level::Moderate,
        &["Ensure"],
        &["make that", "Please"],
    ),
    // Negations and limits stay.
    (
        "Do not just click the button.",
        Level::Moderate,
        &["not just click"],
        &[],
    ),
    (
        "The value is not very large.",
        Level::Moderate,
        &["not very large"],
        &[],
    ),
    (
        "You can't close the last page.",
        Level::Moderate,
        &["can't close"],
        &[],
    ),
    (
        "You cannot undo this.",
        Level::Moderate,
        &["cannot undo"],
        &[],
    ),
    (
        "Returns at most 10 items and at least one.",
        Level::Moderate,
        &["at most 10 items", "at least one"],
        &[],
    ),
    (
        "Only works within allowed directories.",
        Level::Moderate,
        &["Only works"],
        &[],
    ),
    (
        "Never cache the result unless asked.",
        Level::Moderate,
        &["Never cache", "unless"],
        &[],
    ),
    (
        "Must be called before the trace, after load.",
        Level::Moderate,
        &["Must", "before", "after"],
        &[],
    ),
    (
        "Returns just the first line.",
        Level::Moderate,
        &["just first line"],
        &[],
    ),
    (
        "Works without a page, except for frames.",
        Level::Moderate,
        &["without", "except"],
        &[],
    ),
    (
        "This tool will not delete files.",
        Level::Moderate,
        &["will not delete"],
        &[],
    ),
    ("Reads a few lines.", Level::Moderate, &["a few lines"], &[]),
    (
        "The code will not be ignored unless asked.",
        Level::Moderate,
        &["Code will not be ignored unless asked"],
        &[],
    ),
    (
        "Returns a list of at most 5 pages.",
        Level::Moderate,
        &["at most 5 pages"],
        &[],
    ),
    (
        "This does not include frames. This only applies to pages.",
        Level::Moderate,
        &["This does not include", "This only applies"],
        &[],
    ),
    (
        "Only the specified file is read, never the given folder.",
        Level::Moderate,
        &["Only file", "never folder"],
        &["specified", "given"],
    ),
    (
        "If `id` is omitted, it defaults to `start_url`. When `mode` is `fast`, skips.",
        Level::Moderate,
        &[
            "`id` omitted",
            "it defaults to `start_url`",
            "`mode` is `fast`",
        ],
        &[],
    ),
    (
        "The description used to obtain permission. It is used to sign.",
        Level::Moderate,
        &["Description to obtain permission", "It is used to sign"],
        &[],
    ),
    // Rules that do apply.
    (
        "In order to wait, you should simply call it.",
        Level::Moderate,
        &["To wait", "call it"],
        &["order", "simply"],
    ),
    (
        "It is able to read a large number of files.",
        Level::Moderate,
        &["can read many files"],
        &["able"],
    ),
    (
        "You can use this tool to read the file.",
        Level::Moderate,
        &["Use to read file"],
        &["You can"],
    ),
    (
        "Please pass the id. Thank you!",
        Level::Light,
        &["pass the id."],
        &["Please", "Thank"],
    ),
    (
        "Keep  the   spaces\n\n\n\nhere",
        Level::Light,
        &["Keep the spaces\n\nhere"],
        &[],
    ),
    (
        "The uid of an element",
        Level::Light,
        &["The uid of an element"],
        &[],
    ),
    // Protected spans pass through.
    (
        "Use the `--headless` flag, see https://example.com/a/the/b.",
        Level::Moderate,
        &["`--headless`", "https://example.com/a/the/b"],
        &[],
    ),
    (
        "Set the 'a' value in /the/path with fill() and the_value.",
        Level::Moderate,
        &["'a'", "/the/path", "fill()", "the_value"],
        &[],
    ),
    (
        "Waits 500 ms for the MAX_WAIT of version 1.2.3.",
        Level::Moderate,
        &["500 ms", "MAX_WAIT", "1.2.3"],
        &[],
    ),
    // Later sentences that carry meaning survive the aggressive cut: a requirement, an
    // example in code, an exclusion and a pointer to another tool (chrome-devtools-mcp's own
    // evaluate_script, its function parameter and lighthouse_audit).
    (
        "Evaluate JavaScript inside the target page or service worker. The source can be provided inline or loaded from a local file. Returns the response as JSON, so returned values have to be JSON-serializable.",
        Level::Aggressive,
        &["returned values have to be JSON-serializable"],
        &["local file"],
    ),
    (
        "JavaScript source to execute in the target page. Provide either this or sourcePath, but not both. The source is interpreted according to format.\nExample without arguments: `() => document.title` or `async () => await fetch(\"example.com\")`.\nExample with arguments: `(el) => el.innerText`\n",
        Level::Aggressive,
        &["Example with arguments: `(el) => el.innerText`", "`() => document.title`"],
        &[],
    ),
    // What omitting a parameter does survives it too (issue 41, item 15).
    (
        "Emulate device viewports '<width>x<height>x<devicePixelRatio>[,mobile][,touch][,landscape]'. 'touch' and 'mobile' to emulate mobile devices. 'landscape' to emulate landscape mode. Omit to clear the viewport override.",
        Level::Aggressive,
        &["Omit to clear viewport override"],
        &["landscape mode"],
    ),
    (
        "Get Lighthouse scores, failing audits, and the DOM nodes they flag for accessibility, SEO, best practices, and agentic browsing. Full reports are saved to disk. This excludes performance. For performance audits, run performance_start_trace",
        Level::Aggressive,
        &["Excludes performance.", "For performance audits, run performance_start_trace"],
        &["saved to disk"],
    ),
    (
        "Reads the whole page and returns its visible text as one long string of words. The page should be loaded first. Other words follow here.",
        Level::Aggressive,
        &["should be loaded first"],
        &["Other words"],
    ),
    (
        "Clicks the element with the given uid on the current page of the browser. The element needs to be visible. It scrolls when asked.",
        Level::Aggressive,
        &["needs to be visible"],
        &["scrolls"],
    ),
    (
        "Types text into the focused element of the current page of the browser. For a form, use the form tool instead. It is quick.",
        Level::Aggressive,
        &["use form tool instead"],
        &["quick"],
    ),
    // A sentence whose first words went starts with a capital.
    (
        "Take a text snapshot of the target page based on the a11y tree. The snapshot lists page elements along with a unique\nidentifier (uid). Always use the latest snapshot. The snapshot indicates the element selected\nin the DevTools Elements panel (if any).",
        Level::Moderate,
        &["Snapshot lists page elements", "Snapshot indicates element"],
        &["snapshot lists", "snapshot indicates"],
    ),
    (
        "This tool returns the list of pages open in the browser.",
        Level::Moderate,
        &["Returns pages open"],
        &["returns"],
    ),
    ("Please close the page.", Level::Light, &["Close the page."], &[]),
    (
        "You can skip it. The page reloads. the url stays.",
        Level::Moderate,
        &["Skip it. Page reloads. url stays"],
        &[],
    ),
    // Japanese.
    (
        "恐れ入りますが、ファイルを指定してください。",
        Level::Moderate,
        &["ファイルを指定して"],
        &["恐れ入ります", "ください"],
    ),
    (
        "動作しないかもしれません。",
        Level::Moderate,
        &["動作しないかもしれない"],
        &[],
    ),
];

#[test]
fn meaning_table() {
    let mut failures = Vec::new();
    for &(input, level, keep, drop) in MEANING {
        let out = compress_text(input, level);
        for fragment in keep.iter().filter(|f| !out.contains(**f)) {
            failures.push(format!("{input:?} at {level}: {out:?} lost {fragment:?}"));
        }
        for fragment in drop.iter().filter(|f| out.contains(**f)) {
            failures.push(format!("{input:?} at {level}: {out:?} kept {fragment:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn off_changes_nothing_and_is_not_a_rewrite() {
    let json = r#"{"tools":[{"name":"a","description":"The very  long text."}]}"#;
    let off = CompressOptions {
        level: Level::Off,
        compact_schemas: true,
    };
    assert_eq!(compress_list_result("tools/list", json, &off), Ok(None));
    assert_eq!(compress_text("The  text.", Level::Off), "The  text.");
    assert!(compress_list_result("tools/call", json, &CompressOptions::default()).is_err());
    assert!(compress_list_result("tools/list", "{", &CompressOptions::default()).is_err());
}

#[test]
fn only_list_descriptions_change_and_vocab_is_protected() {
    let json = r#"{"tools":[{"name":"t","title":"The Tool","description":"The tool reads the head of a file.",
        "inputSchema":{"type":"object","properties":{"head":{"type":"number","description":"The head lines.",
        "default":{"description":"The default object"},"enum":[1]}}},"_meta":{"description":"The meta"},
        "annotations":{"title":"The title"}}],"nextCursor":"The cursor"}"#;
    let out = compress_list_result("tools/list", json, &CompressOptions::default())
        .unwrap()
        .unwrap();
    let out: Value = serde_json::from_str(&out).unwrap();
    let tool = &out["tools"][0];
    assert_eq!(tool["description"], "Tool reads head of file");
    assert_eq!(
        tool["inputSchema"]["properties"]["head"]["description"],
        "head lines"
    );
    assert_eq!(
        tool["inputSchema"]["properties"]["head"]["default"]["description"],
        "The default object"
    );
    assert_eq!(tool["_meta"]["description"], "The meta");
    assert_eq!(tool["annotations"]["title"], "The title");
    assert_eq!(tool["title"], "The Tool");
    assert_eq!(out["nextCursor"], "The cursor");
}

#[test]
fn prompts_and_resources_are_compressed() {
    let prompts = r#"{"prompts":[{"name":"p","description":"A prompt with the city","arguments":[{"name":"city","description":"The name of the city to visit"}]}]}"#;
    let out = compress_list_result("prompts/list", prompts, &CompressOptions::default())
        .unwrap()
        .unwrap();
    assert_eq!(
        out,
        r#"{"prompts":[{"name":"p","description":"Prompt with city","arguments":[{"name":"city","description":"Name of city to visit"}]}]}"#
    );
    let templates = r#"{"resourceTemplates":[{"uriTemplate":"x://{id}","name":"t","description":"The {id} of the item."}]}"#;
    let out = compress_list_result(
        "resources/templates/list",
        templates,
        &CompressOptions::default(),
    )
    .unwrap()
    .unwrap();
    assert!(out.contains(r#""description":"{id} of item""#), "{out}");
}

// ---- fixtures and corpus ----------------------------------------------------------------

fn fixtures_dir() -> PathBuf {
    crate::test_support::shipped("__test__/fixtures/lists")
}

fn method_of(path: &Path) -> Option<&'static str> {
    let name = path.file_name()?.to_str()?;
    if name.contains("resources-templates-list") {
        Some("resources/templates/list")
    } else if name.contains("resources-list") {
        Some("resources/list")
    } else if name.contains("prompts-list") {
        Some("prompts/list")
    } else if name.contains("tools-list") || path.parent()?.ends_with("_tools-list-variants") {
        Some("tools/list")
    } else {
        None
    }
}

/// (method, result JSON) of every list file under the given directories.
fn list_results(dirs: &[PathBuf]) -> Vec<(PathBuf, &'static str, String)> {
    let mut out = Vec::new();
    let mut stack: Vec<PathBuf> = dirs.to_vec();
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if let Some(method) = method_of(&path) {
                let text = std::fs::read_to_string(&path).unwrap();
                let wrapper: Value = serde_json::from_str(&text).unwrap();
                if let Some(result) = wrapper.get("result").filter(|r| r.is_object()) {
                    out.push((path, method, serde_json::to_string(result).unwrap()));
                }
            }
        }
    }
    out.sort();
    out
}

fn corpus_lists(corpus: &Path) -> Vec<PathBuf> {
    vec![
        corpus.join("chrome-devtools-mcp/_server"),
        corpus.join("chrome-devtools-mcp/_tools-list-variants"),
        corpus
            .join("playwright-mcp/tools-list.json")
            .parent()
            .unwrap()
            .to_path_buf(),
        corpus.join("servers"),
    ]
}

/// One description of a list result: where it is (item, node number), its item's
/// vocabulary, its site and its text.
struct Found {
    at: (usize, usize),
    item_name: String,
    vocab: Vocab,
    site: Site,
    text: String,
}

fn descriptions(method: &str, result: &mut Value) -> Vec<Found> {
    let mut out = Vec::new();
    let key = list::items_key(method).unwrap();
    if let Some(Value::Array(items)) = result.get_mut(key) {
        for (i, item) in items.iter_mut().enumerate() {
            let Value::Object(item) = item else { continue };
            let vocab = list::item_vocab(item);
            let item_name = list::item_name(item).to_string();
            list::item_descriptions(item, &mut |t, site, node| {
                out.push(Found {
                    at: (i, node),
                    item_name: item_name.clone(),
                    vocab: vocab.clone(),
                    site: site.clone(),
                    text: t.clone(),
                });
                true
            });
        }
    }
    out
}

fn remove_descriptions(method: &str, result: &mut Value) {
    let key = list::items_key(method).unwrap();
    if let Some(Value::Array(items)) = result.get_mut(key) {
        for item in items.iter_mut() {
            if let Value::Object(item) = item {
                list::item_descriptions(item, &mut |_, _, _| false);
            }
        }
    }
}

/// The text the prose rules start from at moderate and aggressive: the original with only
/// what the context rules drop (restated defaults, enums, "Optional", type openers) removed.
fn context_reference(text: &str, vocab: &Vocab, site: &Site) -> String {
    let protected = protect::protect(text, vocab).unwrap();
    let tidy = rules::whitespace(&protected.text);
    protected.restore(&context::apply(&tidy, site, &protected))
}

fn limit_word_counts(text: &str) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for m in rules::LIMIT_WORDS.find_iter(text) {
        *counts.entry(m.as_str().to_lowercase()).or_insert(0) += 1;
    }
    counts
}

/// Removes every tool schema's root `$schema` that names JSON Schema 2020-12, MCP's default
/// dialect (what moderate drops where no keyword depends on the dialect).
fn drop_default_dialect_uri(result: &mut Value) {
    for tool in result
        .get_mut("tools")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        for key in ["inputSchema", "outputSchema"] {
            if let Some(Value::Object(schema)) = tool.get_mut(key) {
                let default = schema
                    .get("$schema")
                    .and_then(Value::as_str)
                    .is_some_and(|u| u.starts_with("https://json-schema.org/draft/2020-12/schema"));
                if default {
                    schema.shift_remove("$schema");
                }
            }
        }
    }
}

/// The invariants every level must keep on one list result.
fn check_invariants(path: &Path, method: &str, json: &str) -> usize {
    let mut checked = 0;
    for level in Level::ALL {
        let options = CompressOptions {
            level,
            compact_schemas: false,
        };
        let out = compress_list_result(method, json, &options).unwrap();
        assert_eq!(
            out,
            compress_list_result(method, json, &options).unwrap(),
            "deterministic"
        );
        let out = out.unwrap_or_else(|| json.to_string());
        let mut before: Value = serde_json::from_str(json).unwrap();
        let mut after: Value = serde_json::from_str(&out).unwrap();
        let originals = descriptions(method, &mut before);
        let compressed: HashMap<(usize, usize), String> = descriptions(method, &mut after)
            .into_iter()
            .map(|f| (f.at, f.text))
            .collect();
        let mut seen_properties = std::collections::HashSet::new();
        for Found {
            at,
            item_name,
            vocab,
            site,
            text: original,
        } in &originals
        {
            checked += 1;
            let first_time = site
                .property
                .as_ref()
                .is_none_or(|p| seen_properties.insert((p.clone(), original.clone())));
            let reference = if level >= Level::Moderate {
                context_reference(original, vocab, site)
            } else {
                original.clone()
            };
            let Some(new) = compressed.get(at) else {
                // Dropped whole: only a restated name, a repeat at aggressive, or a text the
                // context rules emptied.
                assert!(
                    (level >= Level::Moderate && context::restates_name(original, site, item_name))
                        || (level == Level::Aggressive && !first_time)
                        || (level >= Level::Moderate && reference.trim().is_empty()),
                    "{}: {level}: dropped {original:?}",
                    path.display()
                );
                continue;
            };
            // Negations and limits: none lost.
            let (was, now) = (limit_word_counts(&reference), limit_word_counts(new));
            for (word, n) in &was {
                assert!(
                    now.get(word).copied().unwrap_or(0) >= *n,
                    "{}: {level}: lost {word:?}\n  {original:?}\n  {new:?}",
                    path.display()
                );
            }
            // Protected spans: at light and moderate all present, in order, byte for byte.
            if level != Level::Aggressive {
                let mut from = 0;
                for (s, e) in protect::span_ranges(&reference, vocab) {
                    let span = &reference[s..e];
                    let at = new.get(from..).and_then(|rest| rest.find(span));
                    assert!(
                        at.is_some(),
                        "{}: {level}: span {span:?} altered\n  {new:?}",
                        path.display()
                    );
                    from += at.unwrap_or(0) + span.len();
                }
            }
            if level == Level::Off || level == Level::Light {
                // Light drops pleasantries and blanks, nothing else (a sentence that lost its
                // "Please" starts with a capital again).
                let words = |t: &str| {
                    t.split_whitespace()
                        .map(str::to_lowercase)
                        .collect::<Vec<_>>()
                };
                let expected = if level == Level::Light {
                    rules::pleasantries(original).into_owned()
                } else {
                    original.clone()
                };
                assert!(
                    words(&expected) == words(new),
                    "{level} changed words of {original:?}"
                );
            }
        }
        // Everything but descriptions identical, key order included; from moderate on, a
        // root `$schema` naming MCP's default dialect may go.
        remove_descriptions(method, &mut before);
        remove_descriptions(method, &mut after);
        if level >= Level::Moderate {
            drop_default_dialect_uri(&mut before);
        }
        assert_eq!(
            serde_json::to_string(&before).unwrap(),
            serde_json::to_string(&after).unwrap(),
            "{}: {level}: something besides descriptions changed",
            path.display()
        );
    }
    checked
}

#[test]
fn fixture_lists_keep_every_invariant() {
    let lists = list_results(&[fixtures_dir()]);
    assert!(lists.len() >= 13, "fixtures missing");
    let checked: usize = lists
        .iter()
        .map(|(path, method, json)| check_invariants(path, method, json))
        .sum();
    assert!(checked > 1000, "{checked}");
}

#[test]
fn corpus_lists_keep_every_invariant() {
    let Some(corpus) = corpus_dir() else { return };
    let lists = list_results(&corpus_lists(&corpus));
    assert!(lists.len() >= 15, "{} lists", lists.len());
    for (path, method, json) in &lists {
        check_invariants(path, method, json);
    }
}

/// The list's tool names of more than one word (what `compress_list_result` protects).
fn multi_word_tool_names(result: &Value) -> Vec<String> {
    result
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|t| t.get("name").and_then(Value::as_str))
        .filter(|n| n.contains(['_', '-']))
        .map(str::to_string)
        .collect()
}

/// What a dropped sentence must not hold, found without the compressor's own span classes:
/// code in backticks, a snake_case, camelCase or dotted identifier (outside links), a call,
/// another tool's name, a requirement, an exclusion or what omitting a parameter does.
fn meaning_in(sentence: &str, tool_names: &[String]) -> Option<String> {
    static MEANING: Lazy<regex::Regex> = Lazy::new(|| {
        regex::Regex::new(concat!(
            r"`[^`]+`",
            r"|\b[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]+\b",
            r"|\b[a-z]+[0-9]*[A-Z][A-Za-z0-9]*\b",
            r"|\b[A-Za-z_]\w+\.[A-Za-z_]\w+\b",
            r"|\b[A-Za-z_]\w*\([^)]*\)",
            // What leaving a parameter out does (issue 41, item 15: "Omit to clear the
            // viewport override", "If omitted, file chooser is cancelled" were dropped).
            r"|(?i)\b(?:have to|has to|had to|needs? to|should|exclud(?:e|es|ed|ing)|instead|omit(?:s|ted|ting)?)\b",
        ))
        .unwrap()
    });
    // A link is a reference, not code: the dots of its host do not count.
    static URL: Lazy<regex::Regex> = Lazy::new(|| regex::Regex::new(r"[a-z]+://\S+").unwrap());
    let sentence = &*URL.replace_all(sentence, "<url>");
    if let Some(m) = MEANING.find(sentence) {
        return Some(m.as_str().to_string());
    }
    tool_names
        .iter()
        .find(|name| {
            sentence.match_indices(name.as_str()).any(|(at, _)| {
                let before = sentence[..at].chars().next_back();
                let after = sentence[at + name.len()..].chars().next();
                let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
                !word(before) && !word(after)
            })
        })
        .cloned()
}

/// The sentences of `before` (sentinel text) that `after`, made of some of them in order,
/// left out.
fn dropped_sentences<'a>(before: &'a str, after: &str) -> Vec<&'a str> {
    let mut dropped = Vec::new();
    let mut at = 0;
    for sentence in sentences::sentences(before) {
        let kept = sentence.trim_end();
        if !kept.is_empty() && after.get(at..).is_some_and(|rest| rest.starts_with(kept)) {
            at += sentence.len().min(after.len() - at);
        } else if !kept.is_empty() {
            dropped.push(sentence);
        }
    }
    dropped
}

/// Over every fixture and corpus list: no sentence the aggressive cut drops holds code, an
/// identifier, another tool's name, a requirement or an exclusion.
#[test]
fn the_aggressive_cut_drops_no_sentence_that_carries_meaning() {
    let mut dirs = vec![fixtures_dir()];
    dirs.extend(corpus_dir().map(|c| corpus_lists(&c)).unwrap_or_default());
    let (mut cut, mut dropped_total) = (0, 0);
    let mut failures = Vec::new();
    for (path, method, json) in list_results(&dirs) {
        let mut result: Value = serde_json::from_str(&json).unwrap();
        let tool_names = multi_word_tool_names(&result);
        for Found {
            mut vocab,
            text,
            site,
            ..
        } in descriptions(method, &mut result)
        {
            for name in &tool_names {
                vocab.add(name);
            }
            let protected = protect::protect(&text, &vocab).unwrap();
            let before = before_cut(&protected, Level::Aggressive, &site);
            let after = shorten::shorten(&before, &protected);
            let dropped = dropped_sentences(&before, &after);
            cut += usize::from(!dropped.is_empty());
            dropped_total += dropped.len();
            for sentence in dropped {
                let restored = protected.restore(sentence);
                if let Some(what) = meaning_in(&restored, &tool_names) {
                    failures.push(format!(
                        "{}: dropped {restored:?} ({what:?})",
                        path.display()
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The cut still cuts: the check looked at real drops.
    assert!(
        cut >= 20 && dropped_total >= 40,
        "{cut} cut, {dropped_total} dropped"
    );
    eprintln!("aggressive cut: {cut} descriptions shortened, {dropped_total} sentences dropped");
}

/// At aggressive, a span is kept whole or dropped whole: the sentinels left after the rules
/// and shortening are distinct and in their original order.
#[test]
fn aggressive_keeps_or_drops_spans_whole() {
    for (_, method, json) in list_results(&[fixtures_dir()]) {
        let mut result: Value = serde_json::from_str(&json).unwrap();
        for Found {
            vocab, text, site, ..
        } in descriptions(method, &mut result)
        {
            let protected = protect::protect(&text, &vocab).unwrap();
            let is_sentinel = |c: char| protected.span_of(c).is_some();
            let input: Vec<char> = protected.text.chars().filter(|&c| is_sentinel(c)).collect();
            let short = compress_protected(&protected, Level::Aggressive, &site);
            let kept: Vec<char> = short.chars().filter(|&c| is_sentinel(c)).collect();
            assert!(kept.windows(2).all(|w| w[0] < w[1]), "{text:?}");
            assert!(kept.iter().all(|c| input.contains(c)));
            assert_eq!(
                protected.restore(&short),
                compress_ranges(
                    &text,
                    Level::Aggressive,
                    protect::span_ranges(&text, &vocab),
                    &site
                )
            );
        }
    }
}

// ---- compact_schemas: same validation outcomes --------------------------------------------

/// A minimal JSON Schema validator covering the keywords of the corpus schemas (and a few
/// more); enough to show that compaction changes no outcome.
fn validates(schema: &Value, value: &Value) -> bool {
    let Value::Object(s) = schema else {
        return schema.as_bool().unwrap_or(true);
    };
    let num = |k: &str| s.get(k).and_then(Value::as_f64);
    if let Some(t) = s.get("type") {
        let types: Vec<&str> = match t {
            Value::String(t) => vec![t.as_str()],
            Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        let is = |t: &str| match t {
            "string" => value.is_string(),
            "number" => value.is_number(),
            "integer" => value.as_f64().is_some_and(|n| n.fract() == 0.0),
            "boolean" => value.is_boolean(),
            "object" => value.is_object(),
            "array" => value.is_array(),
            "null" => value.is_null(),
            _ => true,
        };
        if !types.iter().any(|t| is(t)) {
            return false;
        }
    }
    if let Some(Value::Array(options)) = s.get("enum") {
        if !options.contains(value) {
            return false;
        }
    }
    if s.get("const").is_some_and(|c| c != value) {
        return false;
    }
    if let Some(n) = value.as_f64() {
        if num("minimum").is_some_and(|m| n < m)
            || num("maximum").is_some_and(|m| n > m)
            || num("exclusiveMinimum").is_some_and(|m| n <= m)
            || num("exclusiveMaximum").is_some_and(|m| n >= m)
        {
            return false;
        }
    }
    if let Some(text) = value.as_str() {
        let len = text.chars().count() as f64;
        if num("minLength").is_some_and(|m| len < m) || num("maxLength").is_some_and(|m| len > m) {
            return false;
        }
    }
    if let Value::Array(items) = value {
        let len = items.len() as f64;
        if num("minItems").is_some_and(|m| len < m) || num("maxItems").is_some_and(|m| len > m) {
            return false;
        }
        if let Some(item_schema) = s.get("items").filter(|i| !i.is_array()) {
            if !items.iter().all(|i| validates(item_schema, i)) {
                return false;
            }
        }
    }
    if let Value::Object(object) = value {
        let empty = serde_json::Map::new();
        let props = s
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        if let Some(Value::Array(required)) = s.get("required") {
            if !required
                .iter()
                .filter_map(Value::as_str)
                .all(|r| object.contains_key(r))
            {
                return false;
            }
        }
        for (key, v) in object {
            let ok = match props.get(key) {
                Some(p) => validates(p, v),
                None => s
                    .get("additionalProperties")
                    .is_none_or(|a| validates(a, v)),
            };
            if !ok {
                return false;
            }
            if let Some(names) = s.get("propertyNames") {
                if !validates(names, &Value::String(key.clone())) {
                    return false;
                }
            }
        }
    }
    let all = |k: &str| s.get(k).and_then(Value::as_array);
    if all("allOf").is_some_and(|a| !a.iter().all(|x| validates(x, value)))
        || all("anyOf").is_some_and(|a| !a.iter().any(|x| validates(x, value)))
        || all("oneOf").is_some_and(|a| a.iter().filter(|x| validates(x, value)).count() != 1)
        || s.get("not").is_some_and(|n| validates(n, value))
    {
        return false;
    }
    true
}

/// The corpus arguments of a call plus mutations that a schema should reject.
fn argument_variants(args: &Value, schema: &Value) -> Vec<Value> {
    let mut out = vec![args.clone()];
    let Value::Object(map) = args else { return out };
    let mut extra = map.clone();
    extra.insert("__unknown".into(), Value::from(1));
    out.push(Value::Object(extra));
    for (key, value) in map {
        let wrong = match value {
            Value::String(_) => Value::from(12345),
            Value::Number(_) => Value::from("x"),
            Value::Array(_) => Value::Object(serde_json::Map::new()),
            _ => Value::Array(vec![]),
        };
        for replacement in [
            wrong,
            Value::from(-1e18),
            Value::from(1e18),
            Value::from("__not_in_enum__"),
        ] {
            let mut m = map.clone();
            m.insert(key.clone(), replacement);
            out.push(Value::Object(m));
        }
    }
    for required in schema["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        let mut m = map.clone();
        m.remove(required);
        out.push(Value::Object(m));
    }
    out
}

#[test]
fn compact_schemas_accept_and_reject_the_same_corpus_arguments() {
    let Some(corpus) = corpus_dir() else { return };
    let mut calls: Vec<(String, Value)> = Vec::new();
    let dir = corpus.join("chrome-devtools-mcp");
    for path in crate::test_support::files_under(&dir, &["json"]) {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let Ok(file) = serde_json::from_str::<Value>(&text) else {
            continue;
        };
        if file["request"]["method"] == "tools/call" {
            let params = &file["request"]["params"];
            if let Some(name) = params["name"].as_str() {
                calls.push((name.to_string(), params["arguments"].clone()));
            }
        }
    }
    assert!(calls.len() > 100, "{} calls", calls.len());
    let lists = list_results(&[
        corpus.join("chrome-devtools-mcp/_server"),
        corpus.join("chrome-devtools-mcp/_tools-list-variants"),
    ]);
    let options = CompressOptions {
        level: Level::Aggressive,
        compact_schemas: true,
    };
    let (mut accepted, mut rejected) = (0, 0);
    for (_, method, json) in lists {
        let original: Value = serde_json::from_str(&json).unwrap();
        let compacted: Value = match compress_list_result(method, &json, &options).unwrap() {
            Some(out) => serde_json::from_str(&out).unwrap(),
            None => original.clone(),
        };
        let schema_of = |list: &Value, name: &str| {
            list["tools"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|t| t["name"] == name)
                .map(|t| t["inputSchema"].clone())
        };
        for (name, args) in &calls {
            let (Some(before), Some(after)) =
                (schema_of(&original, name), schema_of(&compacted, name))
            else {
                continue;
            };
            assert_ne!(before, after, "compaction did something for {name}");
            for variant in argument_variants(args, &before) {
                let outcome = validates(&before, &variant);
                assert_eq!(outcome, validates(&after, &variant), "{name}: {variant}");
                if outcome {
                    accepted += 1
                } else {
                    rejected += 1
                }
            }
        }
    }
    assert!(
        accepted > 100 && rejected > 100,
        "accepted {accepted}, rejected {rejected}"
    );
}
