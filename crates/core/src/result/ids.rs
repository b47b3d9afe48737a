//! Lists of reqids / msgids as summary lines print them: sorted, runs of consecutive numbers
//! written `a-b`, so that a summary stays short yet names every hidden id.

/// Formats ids as `3,7-9,12` (sorted, deduplicated; a run of 3 or more becomes `a-b`). A range
/// only ever spans numbers that are all in `ids`.
pub fn format_id_ranges(ids: &[u64]) -> String {
    let mut sorted = ids.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut out = String::new();
    let mut i = 0;
    while i < sorted.len() {
        let start = sorted[i];
        let mut end_index = i;
        while end_index + 1 < sorted.len() && sorted[end_index + 1] == sorted[end_index] + 1 {
            end_index += 1;
        }
        if !out.is_empty() {
            out.push(',');
        }
        let end = sorted[end_index];
        match end_index - i {
            0 => out.push_str(&start.to_string()),
            1 => out.push_str(&format!("{start},{end}")),
            _ => out.push_str(&format!("{start}-{end}")),
        }
        i = end_index + 1;
    }
    out
}

/// Parses what `format_id_ranges` writes (used by tests to check that summaries name every id).
pub fn parse_id_ranges(text: &str) -> Vec<u64> {
    let mut ids = Vec::new();
    for part in text.split(',') {
        let part = part.trim();
        if let Some((a, b)) = part.split_once('-') {
            if let (Ok(a), Ok(b)) = (a.parse::<u64>(), b.parse::<u64>()) {
                ids.extend(a..=b);
            }
        } else if let Ok(id) = part.parse() {
            ids.push(id);
        }
    }
    ids
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_runs_as_ranges_and_round_trips() {
        let ids = [12, 3, 7, 8, 9, 20, 21];
        let text = format_id_ranges(&ids);
        assert_eq!(text, "3,7-9,12,20,21");
        let mut back = parse_id_ranges(&text);
        back.sort_unstable();
        assert_eq!(back, vec![3, 7, 8, 9, 12, 20, 21]);
        assert_eq!(format_id_ranges(&[]), "");
    }
}
