#![deny(clippy::all)]
//! mcp-snapshot-filter: the N-API binding of the token-saving MCP proxy's core
//! (`mcp-snapshot-filter-core`, in `crates/core`). `binding` is the one napi module: options,
//! conversions and errors.

// The core's modules under their own names, so the binding reads `crate::session` as before.
pub use mcp_snapshot_filter_core::{
    config, describe, envelope, era, error, held, level, newlines, notation, proxy_tools, result,
    router, session, snapshot, stats, tokens, upstream_reset, utf16,
};

pub mod binding;
