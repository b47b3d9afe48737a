use super::*;

fn snapshot_result() -> String {
    let capture: Value = serde_json::from_str(include_str!(
        "../../../__test__/fixtures/snapshots/grid.json"
    ))
    .expect("fixture");
    capture["result"].to_string()
}

fn session_writing_to(dir: &std::path::Path) -> Session {
    let mut options = SessionOptions::for_level(Level::Moderate);
    options.raw_snapshots_dir = Some(dir.to_path_buf());
    Session::new(options)
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("msf-raw-{name}-{}", session_tag()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

fn written_file(result: &str) -> PathBuf {
    let start = result.find("[raw snapshot: ").expect("file named") + "[raw snapshot: ".len();
    let end = start + result[start..].find(']').expect("closing bracket");
    PathBuf::from(&result[start..end])
}

fn take(session: &mut Session) -> String {
    session
        .filter_tool_result("take_snapshot", &snapshot_result(), Some(r#"{"pageId":1}"#))
        .expect("filters")
        .expect("changed")
}

#[test]
fn a_filtered_response_keeps_its_envelope_text() {
    let mut session = Session::new(SessionOptions::for_level(Level::Moderate));
    let head = r#"{ "jsonrpc" : "2.0", "id" : 1E400 , "result" : "#;
    let tail = r#" , "z" : 123456789012345678901234567890 }"#;
    let response = format!("{head}{}{tail}", snapshot_result());
    let out = session
        .filter_tool_response("take_snapshot", &response, None)
        .expect("filters")
        .expect("changed");
    assert!(
        out.starts_with(head) && out.ends_with(tail),
        "{}",
        &out[..80]
    );
    let filtered: Value =
        serde_json::from_str(&out[head.len()..out.len() - tail.len()]).expect("the result is JSON");
    assert!(filtered["content"][0]["text"]
        .as_str()
        .is_some_and(|t| t.contains("expand_snapshot uid=")));
}

/// A page of `depth` nested regions, each holding a button, with `leaves` buttons in the
/// deepest one, as chrome-devtools-mcp writes it with `--experimentalStructuredContent`: its
/// text and its tree, each node two JSON levels below its parent (issue 41, item 10).
/// `name` is the first button's name as JSON string content.
fn deep_page_result(depth: usize, leaves: usize, name: &str) -> String {
    let mut text =
        String::from("## Latest page snapshot\nuid=1_0 RootWebArea \"Deep\" url=\"http://x/\"\n");
    let mut tree = String::from(
        r#"{"id":"1_0","role":"RootWebArea","name":"Deep","url":"http://x/","children":["#,
    );
    for i in 0..depth {
        let pad = "  ".repeat(i + 1);
        let label = if i == 0 {
            name.to_string()
        } else {
            format!("Open level {i}")
        };
        text.push_str(&format!(
            "{pad}uid=1_{} region \"Level {i}\"\n{pad}  uid=1_{} button \"{label}\"\n",
            2 * i + 1,
            2 * i + 2
        ));
        tree.push_str(&format!(r#"{{"id":"1_{}","role":"region","name":"Level {i}","children":[{{"id":"1_{}","role":"button","name":"{label}"}},"#, 2 * i + 1, 2 * i + 2));
    }
    let pad = "  ".repeat(depth + 1);
    for k in 0..leaves {
        let uid = 2 * depth + 1 + k;
        text.push_str(&format!(
            "{pad}uid=1_{uid} button \"Deep action number {k} with a longer label\"\n"
        ));
        tree.push_str(&format!(r#"{{"id":"1_{uid}","role":"button","name":"Deep action number {k} with a longer label"}}"#));
        if k + 1 < leaves {
            tree.push(',');
        }
    }
    tree.push_str(&"]}".repeat(depth + 1));
    let text_json = serde_json::to_string(&text).expect("a string");
    // The name goes in as JSON text: it may hold an escape no Rust string holds.
    let text_json = text_json.replace(
        &serde_json::to_string(name).expect("a string")[1..name.len() + 1],
        name,
    );
    format!(
        r#"{{"content":[{{"type":"text","text":{text_json}}}],"structuredContent":{{"snapshot":{tree}}}}}"#
    )
}

fn text_of(result_json: &str) -> String {
    let result: Value = serde_json::from_str(result_json).expect("JSON");
    result["content"]
        .as_array()
        .expect("content")
        .iter()
        .filter_map(|b| b["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_page_nested_past_the_json_depth_limit_is_filtered_within_the_bounds() {
    let mut options = SessionOptions::for_level(Level::Moderate);
    options.drop_structured_content = true;
    let mut session = Session::new(options);
    let result = deep_page_result(70, 300, "Open level 0");
    assert!(result.len() > 50_000);
    let out = session
        .filter_tool_result("take_snapshot", &result, Some(r#"{"pageId":1}"#))
        .expect("filtered, not given up on")
        .expect("changed");
    assert_eq!(session.take_failure(), None);
    let filtered: Value = serde_json::from_str(&out).expect("JSON");
    assert!(filtered.get("structuredContent").is_none());
    let text = text_of(&out);
    assert!(text.contains("#snapshot-filter"), "{text}");
    assert!(crate::tokens::utf16_len(&text) <= params::DEFAULT_MAX_CHARS);
    assert!(crate::tokens::estimate_tokens(&text) <= params::DEFAULT_MAX_TOKENS);
    assert!(text.contains(r#"1_2 button "Open level 0""#), "{text}");
    // What the depth hid is a call away.
    let call = text
        .lines()
        .find_map(|l| {
            l.split(": ")
                .find(|p| p.starts_with("expand_snapshot uid="))
        })
        .expect("a marker names what it hid");
    let uid = call["expand_snapshot uid=".len()..]
        .split(' ')
        .next()
        .expect("a uid");
    let expanded = session
        .call_proxy_tool(
            "expand_snapshot",
            Some(&format!(r#"{{"uid":"{uid}","pageId":1}}"#)),
        )
        .expect("expands");
    assert!(text_of(&expanded).contains("button"), "{expanded}");
    // And 5,000 levels, past any recursion: filtered as well.
    let result = deep_page_result(5_000, 1, "Open level 0");
    let out = session
        .filter_tool_result("take_snapshot", &result, Some(r#"{"pageId":2}"#))
        .expect("filtered")
        .expect("changed");
    assert!(crate::tokens::utf16_len(&text_of(&out)) <= params::DEFAULT_MAX_CHARS);
}

#[test]
fn a_lone_surrogate_in_a_name_is_read_as_the_replacement_character() {
    let mut options = SessionOptions::for_level(Level::Moderate);
    options.drop_structured_content = true;
    let mut session = Session::new(options);
    let result = deep_page_result(3, 400, r"Lone \ud800 surrogate");
    let response = format!(r#"{{"jsonrpc":"2.0","id":7,"result":{result}}}"#);
    let out = session
        .filter_tool_response("take_snapshot", &response, Some(r#"{"pageId":1}"#))
        .expect("filtered")
        .expect("changed");
    assert_eq!(session.take_failure(), None);
    let filtered: Value = serde_json::from_str(&out).expect("JSON");
    let text = text_of(&filtered["result"].to_string());
    assert!(
        text.contains("1_2 button \"Lone \u{FFFD} surrogate\""),
        "{text}"
    );
    assert!(filtered["result"].get("structuredContent").is_none());
}

#[test]
fn an_embedded_resources_text_counts_against_the_budget() {
    let mut session = Session::new(SessionOptions::for_level(Level::Moderate));
    let text = "a line of an embedded document, page-secret\n".repeat(12_000);
    let result = serde_json::json!({"content": [
            {"type": "text", "text": "The file:"},
            {"type": "resource", "resource": {"uri": "file:///doc.txt", "mimeType": "text/plain", "text": text}},
        ]})
        .to_string();
    let out = session
        .filter_tool_result("read_file", &result, None)
        .expect("filtered")
        .expect("cut");
    let out: Value = serde_json::from_str(&out).expect("JSON");
    let blocks = out["content"].as_array().expect("content");
    let shown: String = blocks.iter().filter_map(result::block_text).collect();
    assert!(
        crate::tokens::utf16_len(&shown) <= params::DEFAULT_MAX_CHARS,
        "{}",
        shown.len()
    );
    assert!(crate::tokens::estimate_tokens(&shown) <= params::DEFAULT_MAX_TOKENS);
    let resource = &blocks[1]["resource"];
    assert_eq!(resource["uri"], "file:///doc.txt");
    let cut = resource["text"].as_str().expect("still a text resource");
    assert!(
        cut.starts_with("a line of an embedded document"),
        "{}",
        &cut[..80]
    );
    assert!(
        cut.contains("read_result id=r1"),
        "{}",
        &cut[cut.len() - 300..]
    );
}

#[test]
fn the_structured_content_the_proxy_asked_for_is_no_saving() {
    let result = deep_page_result(3, 400, "Open level 0");
    let text_bytes = text_of(&result).len() as u64;
    let read: Value = serde_json::from_str(&result).expect("JSON");
    let structured_bytes = read["structuredContent"].to_string().len() as u64;
    // Asked for by the proxy (the default upstream): without the proxy the client would
    // have had the text alone. Sent unasked: it would have had both.
    for (asked, before) in [(true, text_bytes), (false, text_bytes + structured_bytes)] {
        let mut options = SessionOptions::for_level(Level::Moderate);
        options.drop_structured_content = asked;
        let mut session = Session::new(options);
        let out = session
            .filter_tool_result("take_snapshot", &result, Some(r#"{"pageId":1}"#))
            .expect("filtered")
            .expect("changed");
        let figures = session.last_figures().expect("figures");
        assert_eq!(figures.bytes_in() as u64, before, "asked: {asked}");
        assert_eq!(session.totals().bytes_in, before, "asked: {asked}");
        assert_eq!(session.tool_totals()["take_snapshot"].bytes_in, before);
        let line = format!(
            "{} → {}",
            stats::format_bytes(before),
            stats::format_bytes(figures.bytes_out() as u64)
        );
        assert!(
            text_of(&out).contains(&line),
            "asked: {asked}, want {line}:\n{}",
            text_of(&out).lines().last().unwrap_or("")
        );
    }
}

#[test]
fn a_result_the_filter_cannot_read_is_cut_to_the_bound() {
    let mut session = Session::new(SessionOptions::for_level(Level::Moderate));
    // A member nested past serde_json's limit outside structuredContent: no filter reads it.
    let meta = format!("{}1{}", r#"{"a":"#.repeat(200), "}".repeat(200));
    let line = "a line of a trace that no filter knows, page-secret\n";
    let text = line.repeat(6_000);
    let result = serde_json::json!({"content": [{"type": "text", "text": text}]}).to_string();
    let result = format!(
        r#"{},"_meta":{meta},"structuredContent":{{"big":"{}"}}}}"#,
        &result[..result.len() - 1],
        "x".repeat(100_000)
    );
    let response = format!(r#"{{"jsonrpc":"2.0","id":7,"result":{result}}}"#);
    let out = session
        .filter_tool_response("evaluate_script", &response, None)
        .expect("sent cut")
        .expect("changed");
    assert!(session
        .take_failure()
        .is_some_and(|e| e.to_string().contains("recursion")));
    assert!(
        out.contains(&meta),
        "the other members as upstream wrote them"
    );
    let filtered: Value = serde_json::from_str(&out.replace(&meta, "1")).expect("JSON");
    let shown = text_of(&filtered["result"].to_string());
    assert!(filtered["result"].get("structuredContent").is_none());
    assert!(crate::tokens::utf16_len(&shown) <= params::DEFAULT_MAX_CHARS);
    assert!(crate::tokens::estimate_tokens(&shown) <= params::DEFAULT_MAX_TOKENS);
    let offset: usize = shown
        .rsplit("offset=")
        .next()
        .and_then(|t| t.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse().ok())
        .expect("a read_result offset");
    assert!(shown.contains("read_result id=r1"), "{shown}");
    let rest = session
        .call_proxy_tool(
            "read_result",
            Some(&format!(r#"{{"id":"r1","offset":{offset}}}"#)),
        )
        .expect("reads on");
    assert!(
        text_of(&rest).starts_with(&text[offset..offset + 200]),
        "{rest}"
    );
    // Within the bound and nothing to drop: forwarded as it came, the failure said.
    let small = format!(r#"{{"content":[{{"type":"text","text":"ok"}}],"_meta":{meta}}}"#);
    let response = format!(r#"{{"jsonrpc":"2.0","id":8,"result":{small}}}"#);
    assert!(session
        .filter_tool_response("take_snapshot", &response, None)
        .is_err());
}

#[test]
fn a_compressed_list_response_keeps_its_envelope_text() {
    let mut session = Session::new(SessionOptions::for_level(Level::Moderate));
    let list = r#"{"tools":[{"name":"t","description":"Use this tool in order to  do the thing.   It is very useful.","inputSchema":{"type":"object"}}]}"#;
    let head = r#"{"id" : 12345678901234567891, "result":"#;
    let tail = r#", "jsonrpc":"2.0"}"#;
    let response = format!("{head}{list}{tail}");
    let alone = session
        .compress_list_result("tools/list", list)
        .expect("compresses")
        .expect("changed");
    let mut fresh = Session::new(SessionOptions::for_level(Level::Moderate));
    let out = fresh
        .compress_list_response("tools/list", &response)
        .expect("compresses")
        .expect("changed");
    assert_eq!(out, format!("{head}{alone}{tail}"));
    assert!(fresh
        .compress_list_response("tools/list", r#"{"id":1,"error":{}}"#)
        .is_err());
}

#[test]
fn only_results_a_filter_may_change_are_filtered() {
    let moderate = Session::new(SessionOptions::for_level(Level::Moderate));
    assert!(moderate.may_filter_result("take_snapshot", 10));
    assert!(!moderate.may_filter_result("take_screenshot", 1000));
    // Over the default budget by the estimate: any tool's result may have to give way.
    assert!(moderate.may_filter_result("take_screenshot", 100_000));
    let mut off = SessionOptions::for_level(Level::Off);
    off.max_tokens = 25_000;
    assert!(!Session::new(off).may_filter_result("take_screenshot", 100_000));
    let mut dropping = SessionOptions::for_level(Level::Moderate);
    dropping.drop_structured_content = true;
    assert!(Session::new(dropping).may_filter_result("take_screenshot", 10));
}

#[cfg(unix)]
#[test]
fn a_symlink_planted_at_the_next_name_is_not_written_through() {
    let dir = temp_dir("symlink");
    let target = dir.join("target.txt");
    std::fs::write(&target, "keep me").expect("target");
    let mut session = session_writing_to(&dir);
    let next = dir.join(raw_snapshot_file_name(
        &session.raw_snapshot_tag,
        1,
        Some("1"),
    ));
    std::os::unix::fs::symlink(&target, &next).expect("symlink");
    let file = written_file(&take(&mut session));
    assert_ne!(file, next);
    assert_eq!(std::fs::read_to_string(&target).expect("target"), "keep me");
    assert!(std::fs::read_to_string(&file)
        .expect("written")
        .contains("uid=72_1 banner"));
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&file).expect("meta").permissions().mode();
    assert_eq!(mode & 0o077, 0, "readable by the owner only");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn two_sessions_in_one_directory_never_share_a_name() {
    let dir = temp_dir("two");
    let mut first = session_writing_to(&dir);
    let mut second = session_writing_to(&dir);
    let a = written_file(&take(&mut first));
    let b = written_file(&take(&mut second));
    assert_ne!(a, b);
    assert!(a.exists() && b.exists());
    // An existing file is never replaced: a name already taken moves on to the next.
    std::fs::write(
        dir.join(raw_snapshot_file_name(
            &first.raw_snapshot_tag,
            2,
            Some("1"),
        )),
        "other",
    )
    .expect("plant");
    let c = written_file(&take(&mut first));
    assert!(c.to_string_lossy().ends_with("-000003-page-1.txt"), "{c:?}");
    std::fs::remove_dir_all(&dir).ok();
}
