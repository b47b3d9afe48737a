//! The protocol era of a connection, and which client a request comes from.
//!
//! MCP 2026-07-28 dropped the `initialize` handshake: every request carries its protocol version
//! and client capabilities in `params._meta`, every result carries `resultType`, and a modern
//! server adds its `serverInfo` to each result's `_meta`. The proxy forwards the upstream's
//! messages as they are; only the answers it writes itself (its own tools) must speak the
//! upstream's era, which it learns here from what it forwards (`initialize`, `server/discover`,
//! the first list results). A stateless connection may also carry requests of several clients,
//! each named by its `io.modelcontextprotocol/clientInfo`: what one was sent (snapshots, deltas,
//! texts kept for `read_result`) is kept per client, so no client gets a delta against a
//! snapshot another one holds.

use std::collections::VecDeque;

use serde_json::{json, Map, Value};

use crate::error::FilterResult;
use crate::held::Held;
use crate::session::Session;

pub const PROTOCOL_VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
pub const CLIENT_CAPABILITIES_KEY: &str = "io.modelcontextprotocol/clientCapabilities";
pub const CLIENT_INFO_KEY: &str = "io.modelcontextprotocol/clientInfo";
pub const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";

/// The modern revisions the proxy speaks for its own tools, when the upstream's own list
/// (`server/discover`'s `supportedVersions`) was not forwarded.
pub const MODERN_VERSIONS: &[&str] = &["2026-07-28"];

/// JSON-RPC error codes of the modern envelope.
pub const INVALID_PARAMS: i64 = -32602;
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

/// Clients whose state is kept besides the current one; past that, or past the bytes one client
/// may hold (its snapshot cache and its cut texts), the least recently seen one's is forgotten
/// (its next snapshot of a page is then sent whole).
pub const MAX_PARKED_CLIENTS: usize = 8;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// 2025 and before: `initialize`, results without `resultType`.
    Legacy,
    /// 2026-07-28 and later.
    Modern,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Legacy => "legacy",
            Kind::Modern => "modern",
        }
    }
}

/// What the proxy knows of the upstream's era, and whose state the session holds.
#[derive(Debug, Default)]
pub struct Era {
    kind: Option<Kind>,
    /// `kind` came from a handshake (`initialize`, `server/discover`): no other result changes it.
    from_handshake: bool,
    /// `supportedVersions` of the last `server/discover` result.
    supported: Vec<String>,
    /// The upstream's `serverInfo`, as a modern server puts it in each result's `_meta`.
    server_info: Option<Value>,
    /// The client whose state the session holds now (`client_key`).
    holder: String,
    /// The other clients' states, least recently used first.
    parked: VecDeque<(String, Held)>,
}

impl Era {
    pub fn new() -> Era {
        Era::default()
    }

    /// The era learned so far (`None` before anything told).
    pub fn kind(&self) -> Option<Kind> {
        self.kind
    }

    /// The requests whose results `learn` reads: small ones that come first (a big
    /// `resources/read` is never parsed for it).
    pub fn learns_from(method: &str) -> bool {
        matches!(method, "initialize" | "server/discover")
            || crate::describe::LIST_METHODS.contains(&method)
    }

    /// Learns from a result the upstream sent to a `method` request. Anything that is not a
    /// JSON object teaches nothing.
    pub fn learn(&mut self, method: &str, result_json: &str) {
        let Ok(Value::Object(result)) = serde_json::from_str::<Value>(result_json) else {
            return;
        };
        if let Some(info) = result
            .get("_meta")
            .and_then(|m| m.get(SERVER_INFO_KEY))
            .filter(|i| i.is_object())
        {
            self.server_info = Some(info.clone());
        }
        match method {
            "initialize" if result.get("protocolVersion").is_some_and(Value::is_string) => {
                self.kind = Some(Kind::Legacy);
                self.from_handshake = true;
                self.supported.clear();
            }
            "server/discover" => {
                self.kind = Some(Kind::Modern);
                self.from_handshake = true;
                if let Some(versions) = result.get("supportedVersions").and_then(Value::as_array) {
                    self.supported = versions
                        .iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect();
                }
            }
            // A session answered as 2025 stays 2025 whatever a later result carries (a dual
            // server may add `resultType`): its clients speak 2025 and send no envelope.
            _ if self.from_handshake => {}
            _ if result.contains_key("resultType") => self.kind = Some(Kind::Modern),
            // A first result without it: a 2025 server (a later one does not undo a discover).
            _ => {
                self.kind.get_or_insert(Kind::Legacy);
            }
        }
    }

    /// The versions a modern request may name.
    fn supported(&self) -> Vec<String> {
        if self.supported.is_empty() {
            MODERN_VERSIONS.iter().map(|v| v.to_string()).collect()
        } else {
            self.supported.clone()
        }
    }

    /// Whether a request of the proxy's own with `_meta` `meta_json` (absent: `None`) is
    /// answered in the modern era, or refused. In the modern era a missing or malformed envelope
    /// is `-32602` and a version the upstream does not support `-32022`, as a modern server
    /// answers them.
    fn verdict(&self, meta_json: Option<&str>) -> Verdict {
        let meta = meta_json.map(|m| serde_json::from_str::<Value>(m).unwrap_or(Value::Null));
        let claims = meta
            .as_ref()
            .and_then(|m| m.get(PROTOCOL_VERSION_KEY))
            .is_some();
        // Before the upstream said, the request's own envelope tells.
        if !self.kind.map_or(claims, |k| k == Kind::Modern) {
            return Verdict::Legacy;
        }
        match self.check_envelope(meta.as_ref()) {
            Ok(()) => Verdict::Modern,
            Err(error) => Verdict::Refused(error),
        }
    }

    /// The response member carrying `result` (a `CallToolResult`'s JSON): in the modern era
    /// with `resultType` and the upstream's `serverInfo` in `_meta`, as a modern server sends.
    fn result_member(&self, modern: bool, result: String) -> String {
        if !modern {
            return format!("\"result\":{result}");
        }
        let Ok(Value::Object(mut result)) = serde_json::from_str::<Value>(&result) else {
            return format!("\"result\":{result}");
        };
        result
            .entry("resultType")
            .or_insert_with(|| Value::String("complete".into()));
        if let Some(info) = &self.server_info {
            let meta = result
                .entry("_meta")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Some(meta) = meta.as_object_mut() {
                meta.entry(SERVER_INFO_KEY).or_insert_with(|| info.clone());
            }
        }
        format!("\"result\":{}", Value::Object(result))
    }

    /// The modern envelope of a request: `Err` holds the JSON-RPC error object.
    fn check_envelope(&self, meta: Option<&Value>) -> Result<(), Value> {
        let invalid = |key: &str, problem: &str| {
            json!({
                "code": INVALID_PARAMS,
                "message": format!("Invalid _meta envelope: {key}: {problem}"),
                "data": {"envelope": {"key": key, "problem": problem}},
            })
        };
        let meta = match meta {
            None => return Err(invalid("_meta", "missing")),
            Some(Value::Object(m)) => m,
            Some(_) => return Err(invalid("_meta", "expected an object")),
        };
        let version = match meta.get(PROTOCOL_VERSION_KEY) {
            None => return Err(invalid(PROTOCOL_VERSION_KEY, "missing")),
            Some(Value::String(v)) => v,
            Some(_) => return Err(invalid(PROTOCOL_VERSION_KEY, "expected a string")),
        };
        match meta.get(CLIENT_CAPABILITIES_KEY) {
            None => return Err(invalid(CLIENT_CAPABILITIES_KEY, "missing")),
            Some(Value::Object(_)) => {}
            Some(_) => return Err(invalid(CLIENT_CAPABILITIES_KEY, "expected an object")),
        }
        if meta.get(CLIENT_INFO_KEY).is_some_and(|i| !i.is_object()) {
            return Err(invalid(CLIENT_INFO_KEY, "expected an object"));
        }
        let supported = self.supported();
        if !supported.contains(version) {
            return Err(json!({
                "code": UNSUPPORTED_PROTOCOL_VERSION,
                "message": format!("Unsupported protocol version: {version}"),
                "data": {"supported": supported, "requested": version},
            }));
        }
        Ok(())
    }

    /// Makes the session hold the state of the client that `meta_json` (a request's `_meta`)
    /// names, parking the one it held. Requests without `clientInfo` (every 2025 request) are
    /// all one client.
    /// The one reset of identity for an upstream that restarted or whose browser reconnected
    /// (its uids start again and may name other elements): every client's, the current one's
    /// and the parked ones'.
    pub fn upstream_restarted(&mut self, session: &mut Session) {
        session.forget_identity();
        for (_, held) in self.parked.iter_mut() {
            held.forget_identity();
        }
    }

    pub fn use_client(&mut self, session: &mut Session, meta_json: Option<&str>) {
        let key = client_key(meta_json);
        if key == self.holder {
            return;
        }
        let mut held = self
            .parked
            .iter()
            .position(|(k, _)| *k == key)
            .and_then(|at| self.parked.remove(at))
            .map_or_else(|| Held::new(session.options().cache_bytes), |(_, h)| h);
        std::mem::swap(session.held_mut(), &mut held);
        // Its last answer was routed (delivered or not) before this request came.
        held.settle();
        let previous = std::mem::replace(&mut self.holder, key);
        if !held.is_empty() {
            self.parked.push_back((previous, held));
        }
        let max_bytes = session.options().cache_bytes.saturating_mul(2);
        while self.parked.len() > MAX_PARKED_CLIENTS
            || self.parked.iter().map(|(_, s)| s.bytes()).sum::<usize>() > max_bytes
        {
            self.parked.pop_front();
        }
    }

    /// Every client forgets the pages it holds (`Held::forget_pages`): the current one and the
    /// parked ones alike, since the upstream they all spoke to restarted.
    pub fn forget_pages(&mut self, session: &mut Session) {
        session.held_mut().forget_pages();
        for (_, held) in &mut self.parked {
            held.forget_pages();
        }
    }

    /// What the client `client` (a `client_key`) holds: the session's when it is the one held
    /// now, else its parked state (`None` once forgotten).
    pub fn held_of<'a>(
        &'a mut self,
        session: &'a mut Session,
        client: &str,
    ) -> Option<&'a mut Held> {
        if client == self.holder {
            return Some(session.held_mut());
        }
        self.parked
            .iter_mut()
            .find(|(k, _)| k == client)
            .map(|(_, held)| held)
    }

    /// Whose state the session holds now (a `client_key`).
    pub fn holder(&self) -> &str {
        &self.holder
    }

    /// Answers a call of one of the proxy's tools (`Session::call_proxy_tool`) for the client
    /// and in the era of the request: the response member (`"result":…` or `"error":…`).
    pub fn answer_proxy_tool(
        &mut self,
        session: &mut Session,
        tool_name: &str,
        arguments_json: Option<&str>,
        meta_json: Option<&str>,
    ) -> FilterResult<String> {
        let modern = match self.verdict(meta_json) {
            Verdict::Refused(error) => return Ok(format!("\"error\":{error}")),
            verdict => verdict == Verdict::Modern,
        };
        // Only a request the era accepts touches a client's state.
        self.use_client(session, meta_json);
        let result = session.call_proxy_tool(tool_name, arguments_json)?;
        Ok(self.result_member(modern, result))
    }
}

#[derive(Debug, PartialEq)]
enum Verdict {
    Legacy,
    Modern,
    /// The JSON-RPC error object to answer with.
    Refused(Value),
}

/// What identifies the client of a request: its `clientInfo`'s JSON text ("" without one).
pub fn client_key(meta_json: Option<&str>) -> String {
    meta_json
        .and_then(|m| serde_json::from_str::<Value>(m).ok())
        .and_then(|m| m.get(CLIENT_INFO_KEY).cloned())
        .map(|info| info.to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::level::Level;
    use crate::session::SessionOptions;

    const MODERN: &str = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
    const DISCOVER: &str = r#"{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"resultType":"complete","ttlMs":0,"cacheScope":"private","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"up","version":"1"}}}"#;

    fn meta_of(client: &str) -> String {
        format!(
            r#"{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}},"io.modelcontextprotocol/clientInfo":{{"name":"{client}","version":"1"}}}}"#
        )
    }

    /// A `take_snapshot` result of page 1 for the client `meta` names, as the proxy filters it.
    fn snapshot_for(
        era: &mut Era,
        session: &mut Session,
        meta: &str,
        change: Option<&str>,
    ) -> String {
        era.use_client(session, Some(meta));
        let out = session
            .filter_tool_result(
                "take_snapshot",
                &crate::test_support::grid_result(change),
                Some(r#"{"pageId":1}"#),
            )
            .expect("filters")
            .expect("changed");
        let out: Value = serde_json::from_str(&out).expect("json");
        out["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    fn answer(era: &mut Era, session: &mut Session, meta: Option<&str>) -> Value {
        let member = era
            .answer_proxy_tool(
                session,
                "search_snapshot",
                Some(r#"{"query":"Orders"}"#),
                meta,
            )
            .expect("answers");
        serde_json::from_str::<Value>(&format!("{{{member}}}")).expect("member is JSON")
    }

    fn moderate() -> Session {
        Session::new(SessionOptions::for_level(Level::Moderate))
    }

    #[test]
    fn modern_answers_carry_result_type_and_the_upstreams_server_info() {
        let mut era = Era::new();
        let mut session = moderate();
        era.learn("server/discover", DISCOVER);
        assert_eq!(era.kind(), Some(Kind::Modern));
        snapshot_for(&mut era, &mut session, MODERN, None);
        let reply = answer(&mut era, &mut session, Some(MODERN));
        assert_eq!(reply["result"]["resultType"], "complete");
        assert_eq!(
            reply["result"]["_meta"][SERVER_INFO_KEY],
            json!({"name": "up", "version": "1"})
        );
        assert!(reply["result"]["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("72_11")));
    }

    #[test]
    fn legacy_answers_stay_bare() {
        let mut era = Era::new();
        let mut session = moderate();
        era.learn(
            "initialize",
            r#"{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"up","version":"1"}}"#,
        );
        assert_eq!(era.kind(), Some(Kind::Legacy));
        let reply = answer(&mut era, &mut session, None);
        assert!(reply["result"].get("resultType").is_none(), "{reply}");
        assert!(reply["result"].get("_meta").is_none(), "{reply}");
        // Before anything was learned, the request's own envelope decides.
        let mut unknown = Era::new();
        assert!(answer(&mut unknown, &mut session, None)["result"]
            .get("resultType")
            .is_none());
        assert_eq!(
            answer(&mut unknown, &mut session, Some(MODERN))["result"]["resultType"],
            "complete"
        );
    }

    #[test]
    fn the_era_is_learned_from_the_first_results_too() {
        let mut era = Era::new();
        era.learn("tools/list", r#"{"tools":[],"resultType":"complete"}"#);
        assert_eq!(era.kind(), Some(Kind::Modern));
        // A later result without resultType (a 2025 answer on a dual server) keeps it.
        era.learn("prompts/list", r#"{"prompts":[]}"#);
        assert_eq!(era.kind(), Some(Kind::Modern));
        let mut legacy = Era::new();
        legacy.learn("tools/list", r#"{"tools":[]}"#);
        assert_eq!(legacy.kind(), Some(Kind::Legacy));
        let mut nothing = Era::new();
        nothing.learn("tools/list", "not json");
        nothing.learn("tools/list", "[1]");
        assert_eq!(nothing.kind(), None);
    }

    #[test]
    fn a_missing_or_malformed_envelope_is_invalid_params_and_an_unknown_version_unsupported() {
        let mut era = Era::new();
        let mut session = moderate();
        era.learn("server/discover", DISCOVER);
        let invalid = [
            None,
            Some("[]"),
            Some("not json"),
            Some(r#"{"io.modelcontextprotocol/clientCapabilities":{}}"#),
            Some(
                r#"{"io.modelcontextprotocol/protocolVersion":7,"io.modelcontextprotocol/clientCapabilities":{}}"#,
            ),
            Some(r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}"#),
            Some(
                r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":[]}"#,
            ),
            Some(
                r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":"me"}"#,
            ),
        ];
        for meta in invalid {
            let reply = answer(&mut era, &mut session, meta);
            assert_eq!(reply["error"]["code"], INVALID_PARAMS, "{meta:?}: {reply}");
            assert!(reply.get("result").is_none());
        }
        let reply = answer(
            &mut era,
            &mut session,
            Some(
                r#"{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}"#,
            ),
        );
        assert_eq!(reply["error"]["code"], UNSUPPORTED_PROTOCOL_VERSION);
        assert_eq!(
            reply["error"]["data"],
            json!({"supported": ["2026-07-28"], "requested": "2099-01-01"})
        );
        // The versions are the upstream's own when it listed them.
        era.learn(
            "server/discover",
            r#"{"supportedVersions":["2099-01-01"],"resultType":"complete"}"#,
        );
        let reply = answer(&mut era, &mut session, Some(MODERN));
        assert_eq!(reply["error"]["data"]["supported"], json!(["2099-01-01"]));
    }

    #[test]
    fn a_second_client_gets_a_full_snapshot_never_a_delta_against_the_firsts() {
        let mut era = Era::new();
        let mut session = moderate();
        era.learn("server/discover", DISCOVER);
        let (alice, bob) = (meta_of("alice"), meta_of("bob"));
        let first = snapshot_for(&mut era, &mut session, &alice, None);
        assert!(first.contains("snapshot 1, full"), "{}", &first[..200]);
        let changed = Some("link \"Orders (2 new)\"");
        let to_bob = snapshot_for(&mut era, &mut session, &bob, changed);
        assert!(to_bob.contains("snapshot 1, full"), "{}", &to_bob[..200]);
        assert!(!to_bob.contains("delta against"), "{}", &to_bob[..200]);
        // Alice still holds her snapshot 1: hers is a delta against it.
        let to_alice = snapshot_for(&mut era, &mut session, &alice, changed);
        assert!(
            to_alice.contains("snapshot 2: delta against snapshot 1"),
            "{}",
            &to_alice[..200]
        );
        // And the proxy tools answer each from what that client was sent.
        let search = |era: &mut Era, session: &mut Session, meta: &str| {
            answer(era, session, Some(meta))["result"]["content"][0]["text"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        };
        let fresh = meta_of("carol");
        assert!(search(&mut era, &mut session, &fresh).contains("No snapshot"));
        assert!(search(&mut era, &mut session, &bob).contains("Orders (2 new)"));
    }

    #[test]
    fn parked_clients_hold_no_more_bytes_than_one_client_may() {
        let mut era = Era::new();
        let mut options = SessionOptions::for_level(Level::Moderate);
        // Room for one grid snapshot (30.6 KB raw) per cache.
        options.cache_bytes = 40_000;
        let mut session = Session::new(options);
        for name in ["a", "b", "c", "d"] {
            snapshot_for(&mut era, &mut session, &meta_of(name), None);
        }
        let parked: usize = era.parked.iter().map(|(_, s)| s.bytes()).sum();
        assert!(parked <= 80_000, "{parked}");
        assert_eq!(era.parked.len(), 2, "b and c, a forgotten");
        let again = snapshot_for(&mut era, &mut session, &meta_of("a"), Some("link \"X\""));
        assert!(again.contains("snapshot 1, full"), "{}", &again[..200]);
    }

    #[test]
    fn clients_past_the_bound_are_forgotten_oldest_first() {
        let mut era = Era::new();
        let mut session = moderate();
        let metas: Vec<String> = (0..=MAX_PARKED_CLIENTS + 1)
            .map(|i| meta_of(&format!("c{i}")))
            .collect();
        for meta in &metas {
            snapshot_for(&mut era, &mut session, meta, None);
        }
        assert_eq!(era.parked.len(), MAX_PARKED_CLIENTS);
        // The first client's state went: its next snapshot is whole again.
        let again = snapshot_for(&mut era, &mut session, &metas[0], Some("link \"X\""));
        assert!(again.contains("snapshot 1, full"), "{}", &again[..200]);
        let kept = snapshot_for(&mut era, &mut session, &metas[3], Some("link \"X\""));
        assert!(
            kept.contains("delta against snapshot 1"),
            "{}",
            &kept[..200]
        );
    }

    /// The text of a proxy tool's answer for the client `meta` names.
    fn tool_text(
        era: &mut Era,
        session: &mut Session,
        meta: &str,
        tool: &str,
        args: &str,
    ) -> String {
        let member = era
            .answer_proxy_tool(session, tool, Some(args), Some(meta))
            .expect("answers");
        let reply: Value = serde_json::from_str(&format!("{{{member}}}")).expect("member is JSON");
        reply["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// What one client holds is its own whole: its cut texts and what it was sent of a page
    /// survive another client's results, and a stray "not delivered" while another client is
    /// held puts nothing of the first client's into it.
    #[test]
    fn each_client_holds_its_own_cut_texts_and_pages_whatever_the_others_do() {
        let mut era = Era::new();
        let mut options = SessionOptions::for_level(Level::Moderate);
        options.max_tokens = 1_000;
        let mut session = Session::new(options);
        let (alice, bob) = (meta_of("alice"), meta_of("bob"));
        let long = |who: &str| {
            let text: String = (0..400).map(|i| format!("{who} line {i}\n")).collect();
            json!({"content": [{"type": "text", "text": text}]}).to_string()
        };
        let cut_for = |era: &mut Era, session: &mut Session, meta: &str, who: &str| {
            era.use_client(session, Some(meta));
            let out = session
                .filter_tool_result("evaluate_script", &long(who), None)
                .expect("filters")
                .expect("cut");
            let id = out
                .split("read_result id=")
                .nth(1)
                .and_then(|rest| rest.split(' ').next())
                .expect("a cut marker")
                .to_string();
            id
        };
        let alices = cut_for(&mut era, &mut session, &alice, "alice");
        let bobs = cut_for(&mut era, &mut session, &bob, "bob");
        assert_ne!(alices, bobs, "ids are never given twice");
        let read = |era: &mut Era, session: &mut Session, meta: &str, id: &str| {
            let args = format!(r#"{{"id":"{id}","offset":0}}"#);
            tool_text(era, session, meta, "read_result", &args)
        };
        assert!(read(&mut era, &mut session, &alice, &alices).starts_with("alice line 0"));
        assert!(read(&mut era, &mut session, &bob, &bobs).starts_with("bob line 0"));
        assert!(read(&mut era, &mut session, &bob, &alices).contains("No cut result"));

        // Both hold page 1; alice's last answer is settled when bob's request comes.
        let mut era = Era::new();
        let mut session = moderate();
        snapshot_for(&mut era, &mut session, &bob, None);
        snapshot_for(&mut era, &mut session, &alice, None);
        era.use_client(&mut session, Some(&bob));
        session.answer_not_delivered();
        let to_bob = snapshot_for(&mut era, &mut session, &bob, Some("link \"X\""));
        assert!(
            to_bob.contains("snapshot 2: delta against snapshot 1"),
            "{}",
            &to_bob[..200]
        );
        let to_alice = snapshot_for(&mut era, &mut session, &alice, Some("link \"X\""));
        assert!(
            to_alice.contains("snapshot 2: delta against snapshot 1"),
            "{}",
            &to_alice[..200]
        );
    }
}
