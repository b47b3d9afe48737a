use std::fmt;

/// Why a native call could not produce a filtered value. The proxy treats every error the same
/// way (pass the original through, log one line), so the kinds only decide the N-API status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FilterError {
    /// The caller passed something that is not what the function takes (bad JSON, bad level).
    InvalidArgument(String),
}

impl fmt::Display for FilterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FilterError::InvalidArgument(msg) => f.write_str(msg),
        }
    }
}

impl std::error::Error for FilterError {}

pub type FilterResult<T> = Result<T, FilterError>;
