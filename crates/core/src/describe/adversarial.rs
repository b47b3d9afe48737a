//! Inputs that made a description pass quadratic before, repeated into long texts: the
//! linearity test (`linear_tests`, counting work) and `examples/bench_describe.rs` (timing it)
//! both read them.

/// Units that made a pass quadratic before: a leftmost regex alternative that scanned to the
/// end of the text for every match (`1.` and `1.2.`: the email local part; `a-1-`: the URL
/// scheme; `a$1$`: calls; `-_*`: paths), a look-back to the line start (`the a `), the whole
/// sentence searched per match (`either `), every span summed per sentence when shortening
/// (`/\n`).
pub const UNITS: [&str; 12] = [
    "1.",
    "1.2.",
    "a-1-",
    "a$1$",
    "-_*",
    "x@1.",
    "/\n",
    "either ",
    "the a ",
    "  either A",
    "(e.g. either the [",
    "You can use this tool to a. ",
];

/// The unit repeated to at least `bytes` bytes.
pub fn repeated(unit: &str, bytes: usize) -> String {
    unit.repeat(bytes.div_ceil(unit.len().max(1)))
}
