use std::fmt;

/// Why a core call could not produce a filtered value, one variant per kind of failure. The
/// proxy treats every error the same way (pass the original through, log one line); the kind
/// decides the N-API status (`src/binding.rs`) and the text says what to fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FilterError {
    /// An option's value is none of the names it takes (a level, a stats mode).
    UnknownName {
        option: &'static str,
        name: String,
        expected: &'static str,
    },
    /// A list method no list filter knows.
    UnknownListMethod(String),
    /// A tool the session does not answer itself.
    NotAProxyTool(String),
    /// A text that should be JSON is not: what it is (`result`, `arguments`, `response result`)
    /// and the parser's reason.
    NotJson { what: &'static str, reason: String },
    /// A JSON value that is not the object it should be: what it is, and the parser's reason
    /// when it did not read as one at all.
    NotAnObject {
        what: &'static str,
        reason: Option<String>,
    },
    /// A JSON-RPC response without a `result` member.
    NoResult,
    /// A `result` member the reader found but could not locate in the response's text.
    ResultNotLocated,
    /// A uid that is not in the snapshot.
    UnknownUid(String),
    /// `until` names no later sibling of `uid`.
    NotALaterSibling { uid: String, until: String },
    /// `search_snapshot` with an empty query.
    EmptyQuery,
    /// A regex query that does not compile (or is over the size limit).
    InvalidRegex { query: String, reason: String },
    /// The filtered value could not be written as JSON.
    Unwritable(String),
}

impl FilterError {
    /// Whether the caller passed something the function does not take (every kind but a value
    /// the core could not write).
    pub fn is_invalid_argument(&self) -> bool {
        !matches!(self, FilterError::Unwritable(_))
    }
}

impl fmt::Display for FilterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FilterError::UnknownName {
                option,
                name,
                expected,
            } => write!(f, "unknown {option} {name:?}: expected {expected}"),
            FilterError::UnknownListMethod(method) => {
                write!(f, "{method:?} is not a list method this filter knows")
            }
            FilterError::NotAProxyTool(tool) => {
                write!(f, "{tool:?} is not a proxy tool of this session")
            }
            FilterError::NotJson { what, reason } => write!(f, "{what} is not JSON: {reason}"),
            FilterError::NotAnObject { what, reason: None } => {
                write!(f, "{what} is not a JSON object")
            }
            FilterError::NotAnObject {
                what,
                reason: Some(reason),
            } => write!(f, "{what} is not a JSON object: {reason}"),
            FilterError::NoResult => f.write_str("response has no result"),
            FilterError::ResultNotLocated => f.write_str("response result could not be located"),
            FilterError::UnknownUid(uid) => write!(
                f,
                "uid {uid:?} is not in the latest snapshot: take a new snapshot, or use a uid it \
                 shows"
            ),
            FilterError::NotALaterSibling { uid, until } => write!(
                f,
                "uid {until:?} is not a later sibling of uid {uid:?}: pass the uid and until of \
                 one marker, or expand a single uid"
            ),
            FilterError::EmptyQuery => f.write_str("search query is empty"),
            FilterError::InvalidRegex { query, reason } => {
                write!(f, "invalid regex {query:?}: {reason}")
            }
            FilterError::Unwritable(reason) => write!(f, "result could not be written: {reason}"),
        }
    }
}

impl std::error::Error for FilterError {}

pub type FilterResult<T> = Result<T, FilterError>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::level::Level;
    use crate::notation;
    use crate::session::{Session, SessionOptions};

    const RAW: &str = "uid=1_0 RootWebArea \"A\"\n  uid=1_1 button \"B\"\n  uid=1_2 button \"C\"\n";

    /// Each failure has its own kind, and its text says what to fix.
    #[test]
    fn each_failure_is_its_own_kind() {
        let level = "max".parse::<Level>().expect_err("not a level");
        assert!(matches!(&level, FilterError::UnknownName { name, .. } if name == "max"));
        assert_eq!(
            level.to_string(),
            "unknown filter level \"max\": expected off, light, moderate or aggressive"
        );
        let uid = notation::expand_range(RAW, "9_9", None, None).expect_err("unknown uid");
        assert_eq!(uid, FilterError::UnknownUid("9_9".into()));
        let run = notation::expand_range(RAW, "1_2", Some("1_1"), None).expect_err("not later");
        assert_eq!(
            run,
            FilterError::NotALaterSibling {
                uid: "1_2".into(),
                until: "1_1".into()
            }
        );
        let empty = notation::search_snapshot(RAW, "", false, 5).expect_err("empty query");
        assert_eq!(empty, FilterError::EmptyQuery);
        let regex = notation::search_snapshot(RAW, "(", true, 5).expect_err("bad regex");
        assert!(matches!(regex, FilterError::InvalidRegex { .. }));
        let mut session = Session::new(SessionOptions::for_level(Level::Moderate));
        let tool = session
            .call_proxy_tool("click", None)
            .expect_err("not the proxy's");
        assert_eq!(tool, FilterError::NotAProxyTool("click".into()));
        let args = session
            .call_proxy_tool("search_snapshot", Some("{"))
            .expect_err("bad JSON");
        assert!(matches!(
            args,
            FilterError::NotJson {
                what: "arguments",
                ..
            }
        ));
        let list = crate::describe::compress_list_result("tools/call", "{}", &Default::default())
            .expect_err("no list");
        assert_eq!(list, FilterError::UnknownListMethod("tools/call".into()));
        for e in [level, uid, run, empty, regex, tool, args, list] {
            assert!(e.is_invalid_argument(), "{e}");
        }
        assert!(!FilterError::Unwritable("x".into()).is_invalid_argument());
    }
}
