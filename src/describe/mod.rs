//! Description compression for `tools/list`, `prompts/list`, `resources/list` and
//! `resources/templates/list` results.
//!
//! SKELETON: the protect/compress/restore rules land with the description issue; until then
//! nothing is compressed.

use crate::error::{FilterError, FilterResult};
use crate::level::Level;

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CompressOptions {
    pub level: Level,
    /// At `aggressive` only: drop schema keywords that change no validation outcome.
    pub compact_schemas: bool,
}

/// The list methods whose results this module rewrites.
pub const LIST_METHODS: [&str; 4] = [
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
];

/// Compresses the descriptions of a list result; `Ok(None)` when nothing changed.
pub fn compress_list_result(
    method: &str,
    result_json: &str,
    _options: &CompressOptions,
) -> FilterResult<Option<String>> {
    if !LIST_METHODS.contains(&method) {
        return Err(FilterError::InvalidArgument(format!(
            "{method:?} is not a list method this filter knows"
        )));
    }
    serde_json::from_str::<serde_json::Value>(result_json)
        .map_err(|e| FilterError::InvalidArgument(format!("result is not JSON: {e}")))?;
    Ok(None)
}

/// Compresses one prose text.
pub fn compress_text(text: &str, _level: Level) -> String {
    text.to_string()
}
