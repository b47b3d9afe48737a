#![deny(clippy::all)]
//! mcp-snapshot-filter-core: the Rust core of a token-saving MCP proxy.
//!
//! Plain Rust with no napi dependency, so it is unit-tested with `cargo test`, fuzzed and reused
//! by the benches on its own. The root crate (`src/binding.rs`) is the one thin N-API layer.

pub mod config;
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
pub mod router;
pub mod session;
pub mod snapshot;
pub mod stats;
#[cfg(test)]
mod test_support;
pub mod tokens;
pub mod uid_requests;
pub mod upstream_reset;
pub mod utf16;

#[cfg(test)]
mod delta_prop_tests;
#[cfg(test)]
mod delta_tests;
#[cfg(test)]
mod fuzz_regressions;
#[cfg(test)]
mod identity_tests;
