//! The upstream notations of an accessibility snapshot, each its parser and its writer.

pub mod cdp;
pub mod playwright;
