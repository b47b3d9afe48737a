//! chrome-devtools-mcp's snapshot text (`## Latest page snapshot`) and our light notation of it.

pub mod escape;
pub mod parse;
#[cfg(test)]
mod tests;
mod url;
pub mod writer;
