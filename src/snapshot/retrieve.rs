//! TEMPORARY stub so the proxy tools compile before the snapshot core lands.
use crate::error::{FilterError, FilterResult};

pub struct SearchHits {
    pub total: usize,
    pub text: String,
}

pub fn expand_subtree(_raw: &str, uid: &str, _depth: Option<usize>) -> FilterResult<String> {
    Err(FilterError::InvalidArgument(format!("unknown uid {uid}")))
}

pub fn search_snapshot(
    _raw: &str,
    _query: &str,
    _regex: bool,
    _limit: usize,
) -> FilterResult<SearchHits> {
    Ok(SearchHits {
        total: 0,
        text: String::new(),
    })
}
