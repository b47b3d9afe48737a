use super::*;
use serde_json::json;

fn names(list: &str) -> Vec<String> {
    let list: Value = serde_json::from_str(list).unwrap_or_default();
    list["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .collect()
}

/// The list as the client gets it (the original when the session changed nothing).
fn listed(session: &mut Session, list: &Value) -> Vec<String> {
    let json = list.to_string();
    let out = session.compress_list_result("tools/list", &json);
    names(&out.ok().flatten().unwrap_or(json))
}

#[test]
fn the_proxy_tools_follow_the_upstreams_snapshot_tools_on_every_list() {
    let mut session = Session::new(SessionOptions::for_level(Level::Moderate));
    let with = json!({"tools": [{"name": "take_snapshot", "inputSchema": {"type": "object"}}]});
    let without = json!({"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]});
    // Before any list the tools answer (a client may call them unlisted).
    assert!(session.is_proxy_tool("expand_snapshot"));
    assert_eq!(listed(&mut session, &without), ["echo"]);
    assert!(!session.is_proxy_tool("expand_snapshot"));
    assert!(!session.is_proxy_tool("search_snapshot"));
    // After tools/list_changed the client lists again: rechecked each time.
    assert_eq!(
        listed(&mut session, &with),
        [
            "take_snapshot",
            "expand_snapshot",
            "search_snapshot",
            "read_result"
        ]
    );
    assert!(session.is_proxy_tool("search_snapshot"));
    assert_eq!(listed(&mut session, &without), ["echo"]);
    assert!(!session.is_proxy_tool("search_snapshot"));
}

#[test]
fn a_paged_list_gets_them_on_its_last_page_if_any_page_had_a_snapshot_tool() {
    let mut session = Session::new(SessionOptions::for_level(Level::Moderate));
    let first = json!({"tools": [{"name": "take_snapshot"}], "nextCursor": "2"});
    let last = json!({"tools": [{"name": "echo"}]});
    assert_eq!(listed(&mut session, &first), ["take_snapshot"]);
    assert_eq!(
        listed(&mut session, &last),
        ["echo", "expand_snapshot", "search_snapshot", "read_result"]
    );
    // The next listing starts afresh.
    assert_eq!(listed(&mut session, &last), ["echo"]);
}

#[test]
fn without_the_option_they_never_appear() {
    let mut options = SessionOptions::for_level(Level::Moderate);
    options.proxy_tools = false;
    let mut session = Session::new(options);
    let with = json!({"tools": [{"name": "take_snapshot"}]});
    assert_eq!(listed(&mut session, &with), ["take_snapshot"]);
    assert!(!session.is_proxy_tool("expand_snapshot"));
}
