//! Cross-module tests of description compression: the meaning table (including the known bad
//! outputs of earlier tools) and the corpus-wide invariants.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::protect::{self, Vocab};
use super::*;

// ---- the meaning table ----------------------------------------------------------------

/// (input, level, must contain, must not contain). Fragments are matched case-sensitively.
const MEANING: &[(&str, Level, &[&str], &[&str])] = &[
    // Known bad outputs of earlier tools.
    ("Maybe not.", Level::Moderate, &["Maybe not"], &[]),
    ("Maybe not.", Level::Aggressive, &["Maybe not"], &[]),
    ("Select option a", Level::Moderate, &["option a"], &[]),
    ("Select option a or option b.", Level::Moderate, &["option a or option b"], &[]),
    ("This might not work on iframes.", Level::Moderate, &["might not work"], &[]),
    ("Make sure to close the page first.", Level::Moderate, &["Ensure close"], &["make", "Make"]),
    ("Please make sure that the page is loaded.", Level::Moderate, &["ensure"], &["make that", "Please"]),
    // Negations and limits stay.
    ("Do not just click the button.", Level::Moderate, &["not just click"], &[]),
    ("The value is not very large.", Level::Moderate, &["not very large"], &[]),
    ("You can't close the last page.", Level::Moderate, &["can't close"], &[]),
    ("You cannot undo this.", Level::Moderate, &["cannot undo"], &[]),
    ("Returns at most 10 items and at least one.", Level::Moderate, &["at most 10 items", "at least one"], &[]),
    ("Only works within allowed directories.", Level::Moderate, &["Only works"], &[]),
    ("Never cache the result unless asked.", Level::Moderate, &["Never cache", "unless"], &[]),
    ("Must be called before the trace, after load.", Level::Moderate, &["Must", "before", "after"], &[]),
    ("Returns just the first line.", Level::Moderate, &["just first line"], &[]),
    ("Works without a page, except for frames.", Level::Moderate, &["without", "except"], &[]),
    ("This tool will not delete files.", Level::Moderate, &["will not delete"], &[]),
    ("Reads a few lines.", Level::Moderate, &["a few lines"], &[]),
    // Rules that do apply.
    ("In order to wait, you should simply call it.", Level::Moderate, &["To wait", "call it"], &["order", "simply"]),
    ("It is able to read a large number of files.", Level::Moderate, &["can read many files"], &["able"]),
    ("You can use this tool to read the file.", Level::Moderate, &["Use to read file"], &["You can"]),
    ("Please pass the id. Thank you!", Level::Light, &["pass the id."], &["Please", "Thank"]),
    ("Keep  the   spaces\n\n\n\nhere", Level::Light, &["Keep the spaces\n\nhere"], &[]),
    ("The uid of an element", Level::Light, &["The uid of an element"], &[]),
    // Protected spans pass through.
    ("Use the `--headless` flag, see https://example.com/a/the/b.", Level::Moderate, &["`--headless`", "https://example.com/a/the/b"], &[]),
    ("Set the 'a' value in /the/path with fill() and the_value.", Level::Moderate, &["'a'", "/the/path", "fill()", "the_value"], &[]),
    ("Waits 500 ms for the MAX_WAIT of version 1.2.3.", Level::Moderate, &["500 ms", "MAX_WAIT", "1.2.3"], &[]),
    // Japanese.
    ("恐れ入りますが、ファイルを指定してください。", Level::Moderate, &["ファイルを指定して"], &["恐れ入ります", "ください"]),
    ("動作しないかもしれません。", Level::Moderate, &["動作しないかもしれない"], &[]),
];

#[test]
fn meaning_table() {
    for &(input, level, keep, drop) in MEANING {
        let out = compress_text(input, level);
        for fragment in keep {
            assert!(out.contains(fragment), "{input:?} at {level}: {out:?} lost {fragment:?}");
        }
        for fragment in drop {
            assert!(!out.contains(fragment), "{input:?} at {level}: {out:?} kept {fragment:?}");
        }
    }
}

#[test]
fn off_changes_nothing_and_is_not_a_rewrite() {
    let json = r#"{"tools":[{"name":"a","description":"The very  long text."}]}"#;
    let off = CompressOptions { level: Level::Off, compact_schemas: true };
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
    assert_eq!(tool["description"], "tool reads head of file");
    assert_eq!(tool["inputSchema"]["properties"]["head"]["description"], "head lines");
    assert_eq!(tool["inputSchema"]["properties"]["head"]["default"]["description"], "The default object");
    assert_eq!(tool["_meta"]["description"], "The meta");
    assert_eq!(tool["annotations"]["title"], "The title");
    assert_eq!(tool["title"], "The Tool");
    assert_eq!(out["nextCursor"], "The cursor");
}

#[test]
fn prompts_and_resources_are_compressed() {
    let prompts = r#"{"prompts":[{"name":"p","description":"A prompt with the city","arguments":[{"name":"city","description":"The name of the city"}]}]}"#;
    let out = compress_list_result("prompts/list", prompts, &CompressOptions::default()).unwrap().unwrap();
    assert_eq!(out, r#"{"prompts":[{"name":"p","description":"prompt with city","arguments":[{"name":"city","description":"name of city"}]}]}"#);
    let templates = r#"{"resourceTemplates":[{"uriTemplate":"x://{id}","name":"t","description":"The {id} of the item."}]}"#;
    let out = compress_list_result("resources/templates/list", templates, &CompressOptions::default()).unwrap().unwrap();
    assert!(out.contains(r#""description":"{id} of item""#), "{out}");
}

// ---- fixtures and corpus ----------------------------------------------------------------

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("__test__/fixtures/lists")
}

/// The corpus directory, or `None` (with a loud message) when it is missing outside CI.
fn corpus_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("MCP_CORPUS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus"));
    if dir.is_dir() {
        return Some(dir);
    }
    assert!(std::env::var_os("CI").is_none(), "corpus missing at {}", dir.display());
    eprintln!("!!!!! SKIPPED: corpus not found at {} (set MCP_CORPUS_DIR) !!!!!", dir.display());
    None
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
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
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
        corpus.join("playwright-mcp/tools-list.json").parent().unwrap().to_path_buf(),
        corpus.join("servers"),
    ]
}

/// Every (vocab, description) of a list result, in walk order.
fn descriptions(method: &str, result: &mut Value) -> Vec<(Vocab, String)> {
    let mut out = Vec::new();
    let key = list::items_key(method).unwrap();
    if let Some(Value::Array(items)) = result.get_mut(key) {
        for item in items.iter_mut() {
            let Value::Object(item) = item else { continue };
            let vocab = list::item_vocab(item);
            list::item_descriptions(item, &mut |t| out.push((vocab.clone(), t.clone())));
        }
    }
    out
}

fn blank_descriptions(method: &str, result: &mut Value) {
    let key = list::items_key(method).unwrap();
    if let Some(Value::Array(items)) = result.get_mut(key) {
        for item in items.iter_mut() {
            if let Value::Object(item) = item {
                list::item_descriptions(item, &mut |t| t.clear());
            }
        }
    }
}

fn limit_word_counts(text: &str) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for m in rules::LIMIT_WORDS.find_iter(text) {
        *counts.entry(m.as_str().to_lowercase()).or_insert(0) += 1;
    }
    counts
}

/// The invariants every level must keep on one list result.
fn check_invariants(path: &Path, method: &str, json: &str) -> usize {
    let mut checked = 0;
    for level in Level::ALL {
        let options = CompressOptions { level, compact_schemas: false };
        let out = compress_list_result(method, json, &options).unwrap();
        assert_eq!(out, compress_list_result(method, json, &options).unwrap(), "deterministic");
        let out = out.unwrap_or_else(|| json.to_string());
        let mut before: Value = serde_json::from_str(json).unwrap();
        let mut after: Value = serde_json::from_str(&out).unwrap();
        let pairs = descriptions(method, &mut before);
        let compressed = descriptions(method, &mut after);
        assert_eq!(pairs.len(), compressed.len());
        for ((vocab, original), (_, new)) in pairs.iter().zip(&compressed) {
            checked += 1;
            // Negations and limits: none lost.
            let (was, now) = (limit_word_counts(original), limit_word_counts(new));
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
                for (s, e) in protect::span_ranges(original, vocab) {
                    let span = &original[s..e];
                    let at = new.get(from..).and_then(|rest| rest.find(span));
                    assert!(at.is_some(), "{}: {level}: span {span:?} altered\n  {new:?}", path.display());
                    from += at.unwrap_or(0) + span.len();
                }
            }
            if level == Level::Off || level == Level::Light {
                // Light drops pleasantries and blanks, nothing else.
                let words = |t: &str| t.split_whitespace().map(str::to_string).collect::<Vec<_>>();
                let expected = if level == Level::Light {
                    rules::pleasantries(original)
                } else {
                    original.clone()
                };
                assert!(words(&expected) == words(new), "{level} changed words of {original:?}");
            }
        }
        // Everything but descriptions identical, key order included.
        blank_descriptions(method, &mut before);
        blank_descriptions(method, &mut after);
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

/// At aggressive, a span is kept whole or dropped whole: the sentinels left after the rules
/// and shortening are distinct and in their original order.
#[test]
fn aggressive_keeps_or_drops_spans_whole() {
    for (_, method, json) in list_results(&[fixtures_dir()]) {
        let mut result: Value = serde_json::from_str(&json).unwrap();
        for (vocab, text) in descriptions(method, &mut result) {
            let protected = protect::protect(&text, &vocab).unwrap();
            let is_sentinel = |c: char| protected.span_of(c).is_some();
            let input: Vec<char> = protected.text.chars().filter(|&c| is_sentinel(c)).collect();
            let short = compress_protected(&protected, Level::Aggressive);
            let kept: Vec<char> = short.chars().filter(|&c| is_sentinel(c)).collect();
            assert!(kept.windows(2).all(|w| w[0] < w[1]), "{text:?}");
            assert!(kept.iter().all(|c| input.contains(c)));
            assert_eq!(
                protected.restore(&short),
                compress_description(&text, Level::Aggressive, &vocab)
            );
        }
    }
}
