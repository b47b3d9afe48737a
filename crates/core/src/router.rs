//! The proxy's routing policy over one session: which upstream answers are filtered and how
//! (a `tools/call` result, a list), which client's state a result belongs to, what the protocol
//! era is (learned from the answers that pass), and what happens when an answer never reaches
//! the client. The N-API binding's `FilterSession` is this, converted.

use std::collections::VecDeque;

use serde_json::Value;

use crate::config::SessionConfig;
use crate::describe;
use crate::envelope;
use crate::era::{self, Era};
use crate::error::{FilterError, FilterResult};
use crate::proxy_tools;
use crate::session::Session;
use crate::upstream_reset;

/// Snapshot answers remembered for a cancellation that crosses them on the wire: a client
/// cancels a request it is still waiting for, so such a cancellation comes right after.
const ANSWERS_REMEMBERED: usize = 16;

/// What a response answers, as the proxy's pending requests tell.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Route {
    /// The request's method.
    pub method: String,
    /// For `tools/call`: the tool's name.
    pub tool: Option<String>,
    /// For `tools/call`: the request's `arguments` as the client wrote them (JSON).
    pub arguments_json: Option<String>,
    /// The request's `params._meta` as the client wrote it (JSON): names the client.
    pub meta_json: Option<String>,
    /// False: forward the response as it came (level off); the era is still learned from it.
    pub rewrite: bool,
    /// The client cancelled the request, so it drops this answer.
    pub cancelled: bool,
}

/// A response line as `Router::route_response` read and filtered it.
#[derive(Debug, PartialEq)]
pub struct Routed {
    /// The id's JSON text exactly as in the line (a JSON string or number).
    pub id_json: String,
    /// The rewritten line (no newline); `None`: forward the original.
    pub line: Option<String>,
    /// Why the filter failed: the original is then forwarded, unless `line` is set (a result the
    /// filter could not read, sent cut to the bound all the same).
    pub error: Option<FilterError>,
    /// In `stderr` stats mode: the stats line of the filtered result.
    pub stats_line: Option<String>,
    /// The result says the upstream's browser was restarted or reconnected
    /// (`upstream_reset::reconnected`): nothing held is a base any more.
    pub reconnected: bool,
}

/// One session's router: the session's filters and held state, and the era it answers in.
#[derive(Debug)]
pub struct Router {
    session: Session,
    era: Era,
    /// The last `tools/call` answers that sent a snapshot as a delta base, oldest first.
    answered: VecDeque<Answered>,
    /// The id (`id_key`) of the last `tools/call` answer filtered, while nothing else was: its
    /// snapshot's earlier base can still be put back (`Session::answer_not_delivered`).
    last_answer: Option<String>,
}

/// A `tools/call` answer whose snapshot is now what its client holds of a page.
#[derive(Debug)]
struct Answered {
    id: String,
    client: String,
    page: String,
}

impl Router {
    pub fn new(config: &SessionConfig) -> FilterResult<Router> {
        Ok(Router {
            session: Session::new(config.session_options()?),
            era: Era::new(),
            answered: VecDeque::new(),
            last_answer: None,
        })
    }

    pub fn session(&self) -> &Session {
        &self.session
    }

    pub fn session_mut(&mut self) -> &mut Session {
        &mut self.session
    }

    pub fn era(&self) -> &Era {
        &self.era
    }

    /// Reads an upstream line's JSON-RPC envelope and, when it answers a request the proxy
    /// rewrites, filters it. `route(id_json)` says what the response answers, or `None`:
    /// forward it. `Ok(None)` unless the line is a UTF-8 JSON-RPC 2.0 response with a string or
    /// number id (the caller reads notifications, requests, batches and bad lines itself). A
    /// filter that fails leaves `line` absent and says why in `error`.
    /// An error answering a request whose uids `rewrite_request` changed names them as the
    /// agent did (the one other change to a response, `crate::uid_requests`).
    pub fn route_response<E>(
        &mut self,
        line: &[u8],
        route: impl FnOnce(String) -> Result<Option<Route>, E>,
    ) -> Result<Option<Routed>, E> {
        let Some(mut routed) = self.route_response_line(line, route)? else {
            return Ok(None);
        };
        let out = match routed.line.as_deref() {
            Some(out) => Some(out),
            None => std::str::from_utf8(line).ok(),
        };
        if let Some(back) = out.and_then(|l| self.session.write_back(&routed.id_json, l)) {
            routed.line = Some(back);
        }
        Ok(Some(routed))
    }

    /// A client's request line with the uids its page renumbered since the agent was shown
    /// them replaced by the same elements' current uids, for the client `meta_json` names;
    /// `None`: forward it as it came (`crate::uid_requests`).
    pub fn rewrite_request(
        &mut self,
        id_json: &str,
        line: &str,
        meta_json: Option<&str>,
    ) -> Option<String> {
        self.era.use_client(&mut self.session, meta_json);
        self.session.rewrite_request(id_json, line)
    }

    fn route_response_line<E>(
        &mut self,
        line: &[u8],
        route: impl FnOnce(String) -> Result<Option<Route>, E>,
    ) -> Result<Option<Routed>, E> {
        // Read as UTF-8 once, and its top level once: the envelope says where the result is.
        let Ok(text) = std::str::from_utf8(line) else {
            return Ok(None);
        };
        let Some(envelope) = envelope::peek_response_text(text) else {
            return Ok(None);
        };
        let request = route(envelope.id_json.clone())?;
        let mut routed = Routed {
            id_json: envelope.id_json,
            line: None,
            error: None,
            stats_line: None,
            reconnected: false,
        };
        let (Some(request), Some(span)) = (request, envelope.result) else {
            return Ok(Some(routed));
        };
        // The proxy's own answers speak the era the upstream's results show.
        if Era::learns_from(&request.method) {
            self.era.learn(&request.method, &text[span.clone()]);
        }
        if !request.rewrite {
            return Ok(Some(routed));
        }
        let filtered = match (request.method.as_str(), request.tool.as_deref()) {
            ("tools/call", Some(tool)) => {
                // The upstream's browser restarted: nothing held is a base any more, this
                // result's snapshot included.
                if upstream_reset::reconnected(&text[span.clone()]) {
                    routed.reconnected = true;
                    self.upstream_restarted(upstream_reset::RECONNECT_NOTICE.to_string());
                }
                let filtered = if self.session.may_filter_result(tool, line.len()) {
                    // Snapshot state is the client's the request's _meta names.
                    self.era
                        .use_client(&mut self.session, request.meta_json.as_deref());
                    let filtered = self.session.filter_tool_response_at(
                        tool,
                        text,
                        Some(span),
                        request.arguments_json.as_deref(),
                    );
                    if request.cancelled {
                        self.session.answer_not_delivered();
                        self.last_answer = None;
                    } else {
                        self.note_answer(&routed.id_json, &request);
                    }
                    filtered
                } else {
                    Ok(None)
                };
                // A cancelled request's answer is dropped by the client: the notice waits.
                match filtered {
                    Ok(out) if !request.cancelled => {
                        Ok(self.session.with_notice(out.as_deref(), text).or(out))
                    }
                    other => other,
                }
            }
            (method, _) if describe::LIST_METHODS.contains(&method) => {
                self.session.compress_list_response(method, text)
            }
            _ => return Ok(Some(routed)),
        };
        match filtered {
            Ok(out) => {
                routed.line = out;
                // Unreadable, and sent cut to the bound all the same: the proxy logs why.
                routed.error = self.session.take_failure();
            }
            Err(e) => routed.error = Some(e),
        }
        routed.stats_line = self.session.take_stats_line();
        Ok(Some(routed))
    }

    /// Remembers a delivered `tools/call` answer that sent a snapshot (deltas on), for a
    /// cancellation that crosses it (`answer_cancelled`).
    fn note_answer(&mut self, id_json: &str, request: &Route) {
        let id = id_key(id_json);
        self.last_answer = Some(id.clone());
        if self.session.last_sent().is_none() {
            return;
        }
        let page = request
            .arguments_json
            .as_deref()
            .and_then(|a| serde_json::from_str::<Value>(a).ok())
            .and_then(|a| a.as_object().and_then(proxy_tools::page_key))
            .unwrap_or_default();
        self.answered.retain(|a| a.id != id);
        self.answered.push_back(Answered {
            id,
            client: era::client_key(request.meta_json.as_deref()),
            page,
        });
        if self.answered.len() > ANSWERS_REMEMBERED {
            self.answered.pop_front();
        }
    }

    /// The client cancelled the request `id_json` (its id's JSON text) after the proxy had
    /// forwarded its answer: the two crossed on the wire, and the client drops the answer (it
    /// stopped waiting when it cancelled). The snapshot that answer sent is then no delta base:
    /// the page's base is put back to what the client held before when that answer was the
    /// last one filtered, else the page's next snapshot is sent whole. An id of no snapshot
    /// answer changes nothing.
    pub fn answer_cancelled(&mut self, id_json: &str) {
        let id = id_key(id_json);
        let Some(at) = self.answered.iter().position(|a| a.id == id) else {
            return;
        };
        let Some(answer) = self.answered.remove(at) else {
            return;
        };
        let last =
            self.last_answer.as_deref() == Some(id.as_str()) && answer.client == self.era.holder();
        if last {
            self.session.answer_not_delivered();
            self.last_answer = None;
        } else if let Some(held) = self.era.held_of(&mut self.session, &answer.client) {
            held.forget_sent(&answer.page);
        }
    }

    /// Answers a call of one of the proxy's tools as the upstream's protocol era requires, for
    /// the client the request's `_meta` names: the response's `"result":{…}` or `"error":{…}`
    /// member (`Era::answer_proxy_tool`).
    pub fn answer_proxy_tool(
        &mut self,
        tool_name: &str,
        arguments_json: Option<&str>,
        meta_json: Option<&str>,
    ) -> FilterResult<String> {
        self.era
            .answer_proxy_tool(&mut self.session, tool_name, arguments_json, meta_json)
    }

    /// Learns the upstream's protocol era from the result it sent to a `method` request.
    pub fn learn_era(&mut self, method: &str, result_json: &str) {
        self.era.learn(method, result_json);
    }

    /// The next result filtered is for the client the request's `_meta` names.
    pub fn use_client(&mut self, meta_json: Option<&str>) {
        self.era.use_client(&mut self.session, meta_json);
    }

    /// The upstream restarted, or came back under a new session, or its browser did: every uid
    /// the agent held is gone. Every client forgets its pages (`Era::forget_pages`), and the
    /// next `tools/call` result carries `notice` as its first text block.
    pub fn upstream_restarted(&mut self, notice: String) {
        self.era.forget_pages(&mut self.session);
        // Nor is a uid rewritten for a request of before.
        self.session.forget_identity();
        self.session.set_notice(notice);
        // No answer of before is a base to put back either.
        self.last_answer = None;
    }

    /// The answer to the last `tools/call` filtered is not delivered.
    pub fn answer_not_delivered(&mut self) {
        self.session.answer_not_delivered();
        self.last_answer = None;
    }
}

/// A request id as the router compares it: a string by its value (`"a"` and `"\u0061"` are one
/// id), a number by its text as written.
fn id_key(id_json: &str) -> String {
    let id_json = id_json.trim();
    match serde_json::from_str::<Value>(id_json) {
        Ok(Value::String(s)) => format!("s{s}"),
        _ => format!("n{id_json}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::FilterConfig;
    use serde_json::Value;

    fn router() -> Router {
        Router::new(&SessionConfig::default()).expect("valid config")
    }

    fn call(tool: &str, arguments: &str) -> Route {
        Route {
            method: "tools/call".into(),
            tool: Some(tool.into()),
            arguments_json: Some(arguments.into()),
            rewrite: true,
            ..Route::default()
        }
    }

    fn list(method: &str) -> Route {
        Route {
            method: method.into(),
            rewrite: true,
            ..Route::default()
        }
    }

    fn response(id: &str, result: &str) -> String {
        format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#)
    }

    fn route(router: &mut Router, line: &str, request: Option<Route>) -> Option<Routed> {
        router
            .route_response::<()>(line.as_bytes(), |_| Ok(request))
            .expect("no callback error")
    }

    #[test]
    fn only_responses_are_routed_and_an_unknown_id_is_forwarded() {
        let mut router = router();
        for line in [
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{}}"#,
            r#"[{"jsonrpc":"2.0","id":1,"result":{}}]"#,
            "not json",
        ] {
            assert_eq!(route(&mut router, line, Some(list("tools/list"))), None);
        }
        assert_eq!(
            router.route_response::<()>(&[0xff, 0xfe], |_| Ok(None)),
            Ok(None)
        );
        let routed = route(&mut router, &response("\"a\"", "{}"), None).expect("a response");
        assert_eq!(routed.id_json, "\"a\"");
        assert_eq!(routed.line, None);
        // The callback's error is the caller's.
        assert_eq!(
            router.route_response(response("1", "{}").as_bytes(), |_| Err("gone")),
            Err("gone")
        );
    }

    /// The text the client receives for a `take_snapshot` answer of page 1 routed under `id`.
    fn snapshot_text(
        router: &mut Router,
        id: &str,
        change: Option<&str>,
        cancelled: bool,
    ) -> String {
        page_snapshot_text(router, id, 1, change, cancelled)
    }

    fn page_snapshot_text(
        router: &mut Router,
        id: &str,
        page: u32,
        change: Option<&str>,
        cancelled: bool,
    ) -> String {
        let arguments = format!(r#"{{"pageId":{page}}}"#);
        let mut request = call("take_snapshot", &arguments);
        request.cancelled = cancelled;
        let routed = route(
            router,
            &response(id, &crate::test_support::grid_result(change)),
            Some(request),
        )
        .expect("routed");
        let line = routed.line.expect("filtered");
        let out: Value = serde_json::from_str(&line).expect("json");
        out["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    #[test]
    fn a_cancelled_snapshot_answered_anyway_is_no_delta_base() {
        let mut router = router();
        let first = snapshot_text(&mut router, "1", None, false);
        assert!(first.contains("snapshot 1, full"), "{}", &first[..200]);
        let changed = Some("link \"Orders (2 new)\"");
        let dropped = snapshot_text(&mut router, "2", changed, true);
        assert!(
            dropped.contains("snapshot 2: delta against snapshot 1"),
            "{}",
            &dropped[..200]
        );
        let next = snapshot_text(&mut router, "3", changed, false);
        assert!(
            next.contains("snapshot 3: delta against snapshot 1"),
            "{}",
            &next[..200]
        );
        assert!(!next.contains("unchanged since"), "{}", &next[..200]);
    }

    /// The texts of a routed `tools/call` answer's content blocks.
    fn texts(routed: &Routed, original: &str) -> Vec<String> {
        let out: Value =
            serde_json::from_str(routed.line.as_deref().unwrap_or(original)).expect("json");
        out["result"]["content"]
            .as_array()
            .map(|blocks| {
                blocks
                    .iter()
                    .map(|b| b["text"].as_str().unwrap_or_default().to_string())
                    .collect()
            })
            .unwrap_or_default()
    }

    #[test]
    fn after_a_restart_or_the_upstreams_reconnect_note_the_next_snapshot_is_whole_and_says_why() {
        for how in ["restart", "note"] {
            let mut router = router();
            snapshot_text(&mut router, "1", None, false);
            let same = snapshot_text(&mut router, "2", None, false);
            assert!(same.contains("unchanged since snapshot 1"), "{how}: {same}");
            if how == "restart" {
                router.upstream_restarted("[restarted]".into());
            } else {
                let note = format!(
                    r#"{{"content":[{{"type":"text","text":"{} Page ids have changed."}}]}}"#,
                    upstream_reset::RECONNECT_NOTE
                );
                let line = response("3", &note);
                let routed =
                    route(&mut router, &line, Some(call("list_pages", "{}"))).expect("routed");
                assert!(routed.reconnected);
                let shown = texts(&routed, &line);
                assert_eq!(shown[0], upstream_reset::RECONNECT_NOTICE);
                assert!(shown[1].starts_with(upstream_reset::RECONNECT_NOTE));
            }
            let line = response("4", &crate::test_support::grid_result(None));
            let routed = route(
                &mut router,
                &line,
                Some(call("take_snapshot", r#"{"pageId":1}"#)),
            )
            .expect("routed");
            assert!(!routed.reconnected);
            let shown = texts(&routed, &line);
            let snapshot = shown.last().cloned().unwrap_or_default();
            assert!(
                snapshot.contains(
                    "snapshot 3, full: the upstream restarted or reconnected since this page's \
                     last snapshot"
                ),
                "{how}: {snapshot}"
            );
            assert!(!snapshot.contains("unchanged since"), "{how}: {snapshot}");
            assert_eq!(shown.len(), if how == "restart" { 2 } else { 1 }, "{how}");
            if how == "restart" {
                assert_eq!(shown[0], "[restarted]");
            }
            // Said once, and what was sent now is the base again.
            let again = snapshot_text(&mut router, "5", None, false);
            assert!(
                again.contains("unchanged since snapshot 3"),
                "{how}: {again}"
            );
        }
    }

    /// Issue 41 item 8: the client cancels, the answer crosses the cancellation on the wire
    /// (the proxy forwarded it before the cancellation came), the client drops it.
    #[test]
    fn a_cancellation_that_crosses_the_snapshots_answer_leaves_no_base_the_client_never_kept() {
        let changed = Some("link \"Orders (2 new)\"");
        let mut router = router();
        snapshot_text(&mut router, "1", None, false);
        let crossed = snapshot_text(&mut router, "\"two\"", changed, false);
        assert!(
            crossed.contains("snapshot 2: delta against snapshot 1"),
            "{}",
            &crossed[..200]
        );
        // The id as the cancellation writes it (the same string, escaped otherwise).
        router.answer_cancelled("\"t\\u0077o\"");
        let next = snapshot_text(&mut router, "3", changed, false);
        assert!(!next.contains("unchanged since"), "{}", &next[..200]);
        assert!(
            next.contains("snapshot 3: delta against snapshot 1"),
            "{}",
            &next[..200]
        );
        // Delivered, it is the base of the next one; a cancellation of an id that sent no
        // snapshot, or of one already settled, changes nothing.
        router.answer_cancelled("99");
        router.answer_cancelled("\"two\"");
        let again = snapshot_text(&mut router, "4", changed, false);
        assert!(
            again.contains("snapshot 4: unchanged since snapshot 3"),
            "{}",
            &again[..200]
        );

        // Another answer came between: the crossed one's page is sent whole next time.
        let mut router = self::router();
        snapshot_text(&mut router, "1", None, false);
        snapshot_text(&mut router, "2", changed, false);
        page_snapshot_text(&mut router, "3", 2, None, false);
        router.answer_cancelled("2");
        let next = snapshot_text(&mut router, "4", changed, false);
        assert!(!next.contains("unchanged since"), "{}", &next[..200]);
        assert!(!next.contains("delta against"), "{}", &next[..200]);
        assert!(next.contains("snapshot 3, full"), "{}", &next[..200]);
        // The other page's base is untouched.
        let other = page_snapshot_text(&mut router, "5", 2, None, false);
        assert!(
            other.contains("snapshot 2: unchanged since snapshot 1"),
            "{}",
            &other[..200]
        );
    }

    /// Issue 41 item 9: a session answered as 2025 stays 2025 when a later list result carries
    /// `resultType`; the proxy's tools answer its (envelope-less) requests.
    #[test]
    fn a_session_answered_as_2025_keeps_its_era_whatever_a_later_list_carries() {
        let mut router = router();
        let init = r#"{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"up","version":"1"}}"#;
        route(&mut router, &response("0", init), Some(list("initialize")));
        route(
            &mut router,
            &response("1", r#"{"prompts":[],"resultType":"complete"}"#),
            Some(list("prompts/list")),
        );
        snapshot_text(&mut router, "2", None, false);
        let member = router
            .answer_proxy_tool("search_snapshot", Some(r#"{"query":"Orders"}"#), None)
            .expect("answers");
        let reply: Value = serde_json::from_str(&format!("{{{member}}}")).expect("json");
        assert!(reply.get("error").is_none(), "{reply}");
        assert!(reply["result"].get("resultType").is_none(), "{reply}");
        assert!(reply["result"]["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("Orders")));
    }

    #[test]
    fn a_list_is_compressed_and_a_call_filtered_unless_rewriting_is_off() {
        let list_json = std::fs::read_to_string(crate::test_support::shipped(
            "__test__/fixtures/lists/chrome-devtools-mcp.tools-list.json",
        ))
        .expect("fixture");
        let list_value: Value = serde_json::from_str(&list_json).expect("json");
        let result = list_value.get("result").unwrap_or(&list_value).to_string();
        let line = response("7", &result);
        let mut router = router();
        let routed = route(&mut router, &line, Some(list("tools/list"))).expect("routed");
        let out = routed.line.expect("compressed");
        assert!(out.len() < line.len());
        assert!(out.contains("expand_snapshot"), "the proxy's tools listed");
        // Level off upstream of the filter: forwarded, nothing rewritten.
        let mut off = Router::new(&SessionConfig {
            filter: FilterConfig {
                level: Some("off".into()),
                ..FilterConfig::default()
            },
            describe_level: Some("off".into()),
            ..SessionConfig::default()
        })
        .expect("valid");
        let mut request = list("tools/list");
        request.rewrite = false;
        assert_eq!(
            route(&mut off, &line, Some(request)).expect("routed").line,
            None
        );
    }
}
