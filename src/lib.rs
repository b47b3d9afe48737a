#![deny(clippy::all)]
//! mcp-snapshot-filter: the Rust core of a token-saving MCP proxy.
//!
//! Everything here but `binding` is plain Rust with no napi types, so it is unit-tested with
//! `cargo test` and reused by the benches. `binding` is the one thin N-API layer.

pub mod describe;
pub mod envelope;
pub mod era;
pub mod error;
pub mod held;
pub mod level;
pub mod newlines;
pub mod notation;
pub mod proxy_tools;
pub mod result;
pub mod session;
pub mod snapshot;
pub mod stats;
#[cfg(test)]
mod test_support;
pub mod tokens;
pub mod uid_requests;
pub mod utf16;

#[cfg(test)]
mod delta_prop_tests;
#[cfg(test)]
mod delta_tests;
#[cfg(test)]
mod fuzz_regressions;
#[cfg(test)]
mod identity_tests;

pub mod binding;
