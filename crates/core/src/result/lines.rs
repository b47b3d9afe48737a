//! Small line helpers shared by the list filters.

/// What a list filter produced: the new section text and the ids it hid (each named in the
/// section's summary line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListFiltered {
    pub text: String,
    pub hidden_ids: Vec<u64>,
}

/// Splits a section into its text without the final `\n` and that `\n` (or `""`), so that a
/// filter working on lines gives the section back its separator from the next one.
pub fn split_last_newline(section: &str) -> (&str, &str) {
    match section.strip_suffix('\n') {
        Some(body) => (body, "\n"),
        None => (section, ""),
    }
}
