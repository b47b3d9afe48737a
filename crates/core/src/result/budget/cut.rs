//! The budget's last step, format-neutral: a text cut at a line boundary (inside one line
//! longer than the budget, after a JSON element) followed by one marker line that says what was
//! left out and how to read on. The session and the proxy tools cut their own answers with it.

use crate::tokens::estimate_tokens;

/// What a text may cost: estimated tokens and characters (UTF-16 code units, as a JS string's
/// `length` and the clients count them); `usize::MAX` for no bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bound {
    pub tokens: usize,
    pub chars: usize,
}

impl Bound {
    pub fn tokens(tokens: usize) -> Bound {
        Bound {
            tokens,
            chars: usize::MAX,
        }
    }

    pub fn fits(&self, text: &str) -> bool {
        estimate_tokens(text) <= self.tokens && chars_within(text, self.chars)
    }

    /// This bound less `used`.
    fn less(&self, used: Cost) -> Bound {
        Bound {
            tokens: self.tokens.saturating_sub(used.tokens),
            chars: self.chars.saturating_sub(used.chars),
        }
    }

    fn holds(&self, cost: Cost) -> bool {
        cost.tokens <= self.tokens && cost.chars <= self.chars
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct Cost {
    tokens: usize,
    chars: usize,
}

impl Cost {
    fn of(text: &str) -> Cost {
        Cost {
            tokens: estimate_tokens(text),
            chars: utf16_len(text),
        }
    }

    fn plus(self, other: Cost) -> Cost {
        Cost {
            tokens: self.tokens + other.tokens,
            chars: self.chars + other.chars,
        }
    }
}

pub use crate::tokens::utf16_len;

/// `utf16_len(text) <= max`, without counting when the bytes alone tell (a unit is a byte or
/// more).
pub fn chars_within(text: &str, max: usize) -> bool {
    text.len() <= max || utf16_len(text) <= max
}

/// `text` cut to fit `bound` with the marker line `marker(offset)` after the kept part
/// (`offset`: the byte where the cut text starts; a char boundary). `None` when it fits.
pub fn cut_to_budget(text: &str, bound: Bound, marker: &dyn Fn(usize) -> String) -> Option<String> {
    if bound.fits(text) {
        return None;
    }
    let mut target = bound.less(Cost::of(&marker(text.len())).plus(Cost {
        tokens: 2,
        chars: 2,
    }));
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
        let tokens_over = estimate_tokens(&out) > bound.tokens;
        let chars_over = !chars_within(&out, bound.chars);
        if !(tokens_over || chars_over)
            || (tokens_over && target.tokens == 0)
            || (chars_over && target.chars == 0)
        {
            return Some(out);
        }
        if tokens_over {
            target.tokens = target.tokens * 9 / 10;
        }
        if chars_over {
            target.chars = target.chars.min(utf16_len(&out)) * 9 / 10;
        }
    }
}

/// The byte where `text` is cut so that what is before it stays within `bound`: after the last
/// whole line that fits; when that keeps less than half the bound because the next line is
/// long, inside that line after a JSON element (a `,` outside a string), else a space, else a
/// character.
pub fn cut_point(text: &str, bound: Bound) -> usize {
    let mut used = Cost::default();
    let mut offset = 0usize;
    for line in text.split_inclusive('\n') {
        let cost = Cost::of(line);
        if !bound.holds(used.plus(cost)) {
            let half = used.tokens * 2 >= bound.tokens || used.chars * 2 >= bound.chars;
            if half {
                return offset;
            }
            return offset + cut_inside_line(line, bound.less(used));
        }
        used = used.plus(cost);
        offset += line.len();
    }
    offset
}

/// The longest prefix of `line` within `bound`, ending at an element boundary.
fn cut_inside_line(line: &str, bound: Bound) -> usize {
    // The longest prefix that fits, by bisection over char boundaries.
    let (mut lo, mut hi) = (0usize, line.len());
    while lo < hi {
        let mid = floor_char_boundary(line, (lo + hi).div_ceil(2));
        if mid <= lo {
            break;
        }
        if bound.fits(&line[..mid]) {
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

/// The marker line of a cut: what was left out and how to read on. `bound`: the whole result's
/// (the token budget is named; the character bound is one of its limits).
pub fn cut_marker(rest: &str, bound: Bound, read_on: Option<&str>) -> String {
    let lines = rest.lines().count();
    let mut out = format!(
        "[… cut at the token budget ({} tokens): {} more line{} ({} bytes) not shown",
        crate::stats::format_count(bound.tokens as u64),
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
        let out = cut_to_budget(&text, Bound::tokens(500), &marker).expect("cut");
        assert!(estimate_tokens(&out) <= 500);
        let (kept, last) = out.rsplit_once('\n').map_or(("", ""), |(k, l)| (k, l));
        assert!(text.starts_with(&format!("{kept}\n")), "cut inside a line");
        let offset: usize = last
            .trim_start_matches("[cut at ")
            .trim_end_matches(']')
            .parse()
            .expect("offset");
        assert_eq!(offset, kept.len() + 1);
        assert!(cut_to_budget("short\n", Bound::tokens(500), &marker).is_none());
    }

    #[test]
    fn a_single_long_json_line_is_cut_after_an_element() {
        let items: Vec<String> = (0..3000)
            .map(|i| format!("{{\"name\":\"item, {i}\",\"v\":{i}}}"))
            .collect();
        let text = format!("[{}]", items.join(","));
        let out = cut_to_budget(&text, Bound::tokens(300), &marker).expect("cut");
        assert!(estimate_tokens(&out) <= 300);
        let kept = out.split('\n').next().unwrap_or_default();
        assert!(
            kept.ends_with("},"),
            "{}",
            &kept[kept.len().saturating_sub(40)..]
        );
        assert!(text.starts_with(kept));
    }

    #[test]
    fn a_character_bound_cuts_too_counting_utf16_units() {
        // Cheap in tokens, long in characters: spaces; and characters of two UTF-16 units.
        let text: String = (0..500)
            .map(|i| format!("{i}{}\n", " ".repeat(100)))
            .collect();
        let bound = Bound {
            tokens: 100_000,
            chars: 5_000,
        };
        let out = cut_to_budget(&text, bound, &marker).expect("cut");
        assert!(
            utf16_len(&out) <= 5_000 && out.len() > 4_000,
            "{}",
            out.len()
        );
        let wide = "😀".repeat(3000);
        assert_eq!(utf16_len(&wide), 6000);
        assert!(!chars_within(&wide, 5999) && chars_within(&wide, 6000));
        let out = cut_to_budget(&wide, bound, &marker).expect("cut");
        assert!(utf16_len(&out) <= 5_000);
    }
}
