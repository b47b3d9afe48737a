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
use crate::session::{ClientState, Session};

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

/// Clients whose state is kept besides the current one; past that the least recently seen
/// one's is forgotten (its next snapshot of a page is then sent whole).
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
    /// `supportedVersions` of the last `server/discover` result.
    supported: Vec<String>,
    /// The upstream's `serverInfo`, as a modern server puts it in each result's `_meta`.
    server_info: Option<Value>,
    /// The client whose state the session holds now (`client_key`).
    holder: String,
    /// The other clients' states, least recently used first.
    parked: VecDeque<(String, ClientState)>,
}

impl Era {
    pub fn new() -> Era {
        Era::default()
    }

    /// The era learned so far (`None` before anything told).
    pub fn kind(&self) -> Option<Kind> {
        self.kind
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
                self.supported.clear();
            }
            "server/discover" => {
                self.kind = Some(Kind::Modern);
                if let Some(versions) = result.get("supportedVersions").and_then(Value::as_array) {
                    self.supported = versions
                        .iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect();
                }
            }
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
    pub fn use_client(&mut self, session: &mut Session, meta_json: Option<&str>) {
        let key = client_key(meta_json);
        if key == self.holder {
            return;
        }
        let mut state = match self.parked.iter().position(|(k, _)| *k == key) {
            Some(at) => self
                .parked
                .remove(at)
                .map_or_else(|| session.fresh_client_state(), |(_, s)| s),
            None => session.fresh_client_state(),
        };
        session.swap_client_state(&mut state);
        let previous = std::mem::replace(&mut self.holder, key);
        self.parked.push_back((previous, state));
        if self.parked.len() > MAX_PARKED_CLIENTS {
            self.parked.pop_front();
        }
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
