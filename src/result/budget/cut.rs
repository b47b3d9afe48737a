//! The budget's last step, format-neutral: a text cut at a line boundary (inside one line
//! longer than the budget, after a JSON element) followed by one marker line that says what was
//! left out and how to read on. The session and the proxy tools cut their own answers with it.

use crate::tokens::estimate_tokens;

/// `text` cut to fit `budget` tokens with the marker line `marker(offset)` after the kept part
/// (`offset`: the byte where the cut text starts; a char boundary). `None` when it fits.
pub fn cut_to_budget(
    text: &str,
    budget: usize,
    marker: &dyn Fn(usize) -> String,
) -> Option<String> {
    if estimate_tokens(text) <= budget {
        return None;
    }
    let marker_tokens = estimate_tokens(&marker(text.len())) + 2;
    let mut target = budget.saturating_sub(marker_tokens);
    loop {
        let cut = cut_point(text, target);
        let mut out = String::with_capacity(cut + 200);
        out.push_str(&text[..cut]);
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&marker(cut));
        // The per-line sums the cut point rests on can differ a little from the whole text's
        // estimate: check, and cut shorter until it holds.
        if estimate_tokens(&out) <= budget || target == 0 {
            return Some(out);
        }
        target = target * 9 / 10;
    }
}

/// The byte where `text` is cut so that what is before it costs at most `budget` tokens: after
/// the last whole line that fits; when that keeps less than half the budget because the next
/// line is long, inside that line after a JSON element (a `,` outside a string), else a space,
/// else a character.
pub fn cut_point(text: &str, budget: usize) -> usize {
    let mut used = 0usize;
    let mut offset = 0usize;
    for line in text.split_inclusive('\n') {
        let cost = estimate_tokens(line);
        if used + cost > budget {
            if used * 2 >= budget {
                return offset;
            }
            return offset + cut_inside_line(line, budget - used);
        }
        used += cost;
        offset += line.len();
    }
    offset
}

/// The longest prefix of `line` within `budget` tokens, ending at an element boundary.
fn cut_inside_line(line: &str, budget: usize) -> usize {
    // The longest prefix that fits, by bisection over char boundaries.
    let (mut lo, mut hi) = (0usize, line.len());
    while lo < hi {
        let mid = floor_char_boundary(line, (lo + hi).div_ceil(2));
        if mid <= lo {
            break;
        }
        if estimate_tokens(&line[..mid]) <= budget {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    let fits = floor_char_boundary(line, lo);
    let bytes = line.as_bytes();
    let (mut in_string, mut escaped) = (false, false);
    let (mut last_comma, mut last_space) = (None, None);
    for (i, &b) in bytes[..fits].iter().enumerate() {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b',' => last_comma = Some(i + 1),
            b' ' | b'\t' => last_space = Some(i + 1),
            _ => {}
        }
    }
    last_comma.or(last_space).unwrap_or(fits)
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The marker line of a cut: what was left out and how to read on.
pub fn cut_marker(rest: &str, max_tokens: usize, read_on: Option<&str>) -> String {
    let lines = rest.lines().count();
    let mut out = format!(
        "[… cut at the token budget ({} tokens): {} more line{} ({} bytes) not shown",
        crate::stats::format_count(max_tokens as u64),
        lines,
        if lines == 1 { "" } else { "s" },
        rest.len()
    );
    match read_on {
        Some(call) => {
            out.push_str("; ");
            out.push_str(call);
            out.push_str(" reads on]");
        }
        None => out.push_str("; the proxy tools (--proxy-tools) read on]"),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marker(offset: usize) -> String {
        format!("[cut at {offset}]")
    }

    #[test]
    fn cuts_at_a_line_boundary_and_fits() {
        let text: String = (0..2000)
            .map(|i| format!("line {i} with words\n"))
            .collect();
        let out = cut_to_budget(&text, 500, &marker).expect("cut");
        assert!(estimate_tokens(&out) <= 500);
        let (kept, last) = out.rsplit_once('\n').map_or(("", ""), |(k, l)| (k, l));
        assert!(text.starts_with(&format!("{kept}\n")), "cut inside a line");
        let offset: usize = last
            .trim_start_matches("[cut at ")
            .trim_end_matches(']')
            .parse()
            .expect("offset");
        assert_eq!(offset, kept.len() + 1);
        assert!(cut_to_budget("short\n", 500, &marker).is_none());
    }

    #[test]
    fn a_single_long_json_line_is_cut_after_an_element() {
        let items: Vec<String> = (0..3000)
            .map(|i| format!("{{\"name\":\"item, {i}\",\"v\":{i}}}"))
            .collect();
        let text = format!("[{}]", items.join(","));
        let out = cut_to_budget(&text, 300, &marker).expect("cut");
        assert!(estimate_tokens(&out) <= 300);
        let kept = out.split('\n').next().unwrap_or_default();
        assert!(
            kept.ends_with("},"),
            "{}",
            &kept[kept.len().saturating_sub(40)..]
        );
        assert!(text.starts_with(kept));
    }
}
