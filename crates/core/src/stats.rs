//! The stats line a filtered result can carry, and the session summary printed on exit.
//!
//! Sizes are UTF-8 bytes of what the client receives (text blocks, plus any dropped
//! `structuredContent`), in decimal units (1 KB = 1000 bytes, as everywhere the project shows a
//! size). Tokens are `crate::tokens::estimate_tokens` of the same text, counted by the filter.

use std::fmt;
use std::str::FromStr;

use crate::error::FilterError;
use crate::level::Level;

/// Where the stats line goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StatsMode {
    /// Appended on its own line to the filtered text block: the agent sees it.
    #[default]
    Inline,
    /// Kept for the proxy to print on stderr (`take_stats_line`).
    Stderr,
    /// Not produced (the session totals are still kept for the exit summary).
    Off,
}

impl StatsMode {
    pub fn as_str(self) -> &'static str {
        match self {
            StatsMode::Inline => "inline",
            StatsMode::Stderr => "stderr",
            StatsMode::Off => "off",
        }
    }

    /// Parses an optional mode name, `None` meaning the default (`inline`).
    pub fn parse_opt(name: Option<&str>) -> Result<StatsMode, FilterError> {
        name.map_or(Ok(StatsMode::default()), str::parse)
    }
}

impl FromStr for StatsMode {
    type Err = FilterError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "inline" => Ok(StatsMode::Inline),
            "stderr" => Ok(StatsMode::Stderr),
            "off" => Ok(StatsMode::Off),
            other => Err(FilterError::UnknownName {
                option: "stats mode",
                name: other.to_string(),
                expected: "inline, stderr or off",
            }),
        }
    }
}

impl fmt::Display for StatsMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Size and estimated tokens of one filtered result, before and after.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Shrink {
    pub bytes_in: u64,
    pub bytes_out: u64,
    pub tokens_in: u64,
    pub tokens_out: u64,
}

impl Shrink {
    pub fn tokens_saved(&self) -> u64 {
        self.tokens_in.saturating_sub(self.tokens_out)
    }
}

/// Running totals over a session's `tools/call` results (of the whole session, or of one tool).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SavingsTotals {
    /// Results of filtered tools seen (changed or not).
    pub results: u64,
    /// Results the filter changed.
    pub calls: u64,
    /// Bytes and estimated tokens of the changed results before and after.
    pub bytes_in: u64,
    pub bytes_out: u64,
    pub tokens_in: u64,
    pub tokens_out: u64,
    /// Snapshots sent as deltas, and the bytes they saved against the full filtered snapshot.
    pub deltas: u64,
    pub delta_bytes_saved: u64,
}

impl SavingsTotals {
    pub fn record(&mut self, shrink: Shrink) {
        self.calls += 1;
        self.bytes_in += shrink.bytes_in;
        self.bytes_out += shrink.bytes_out;
        self.tokens_in += shrink.tokens_in;
        self.tokens_out += shrink.tokens_out;
    }

    pub fn record_delta(&mut self, full_bytes: usize, delta_bytes: usize) {
        self.deltas += 1;
        self.delta_bytes_saved += full_bytes.saturating_sub(delta_bytes) as u64;
    }

    pub fn bytes_saved(&self) -> u64 {
        self.bytes_in.saturating_sub(self.bytes_out)
    }

    pub fn tokens_saved(&self) -> u64 {
        self.tokens_in.saturating_sub(self.tokens_out)
    }
}

/// `812 B`, `38.5 KB`, `412 KB`, `1.2 MB`, `3.4 GB` (decimal units). The one formatter of
/// sizes: the stats line, the session summary and `mcp-snapshot-filter stats` (through
/// `formatBytes`) all use it.
pub fn format_bytes(bytes: u64) -> String {
    let b = bytes as f64;
    if bytes < 1000 {
        format!("{bytes} B")
    } else if bytes < 1_000_000 {
        scaled(b / 1e3, "KB")
    } else if bytes < 1_000_000_000 {
        scaled(b / 1e6, "MB")
    } else {
        scaled(b / 1e9, "GB")
    }
}

/// `812`, `6.6k`, `412k`, `1.2M` (token counts; `formatCount` in the native API).
pub fn format_count(n: u64) -> String {
    let x = n as f64;
    if n < 1000 {
        n.to_string()
    } else if n < 1_000_000 {
        scaled(x / 1e3, "k").replace(' ', "")
    } else {
        scaled(x / 1e6, "M").replace(' ', "")
    }
}

/// One decimal below 100, none above: `38.5 KB`, `412 KB`.
fn scaled(value: f64, unit: &str) -> String {
    if value < 99.95 {
        format!("{value:.1} {unit}")
    } else {
        format!("{value:.0} {unit}")
    }
}

/// `−69%` (with a real minus sign): the share of `bytes_in` removed.
pub fn format_reduction(bytes_in: u64, bytes_out: u64) -> String {
    if bytes_in == 0 {
        return "−0%".to_string();
    }
    let saved = bytes_in.saturating_sub(bytes_out) as f64;
    format!("−{:.0}%", saved * 100.0 / bytes_in as f64)
}

/// `38.5 KB → 12.1 KB (−69%), ~6.6k tokens saved | session: 412 KB saved over 14 calls (−63%)`;
/// `totals` already include this call.
pub fn stats_body(shrink: Shrink, totals: &SavingsTotals) -> String {
    format!(
        "{} → {} ({}), ~{} tokens saved | session: {} saved over {} call{} ({}){}",
        format_bytes(shrink.bytes_in),
        format_bytes(shrink.bytes_out),
        format_reduction(shrink.bytes_in, shrink.bytes_out),
        format_count(shrink.tokens_saved()),
        format_bytes(totals.bytes_saved()),
        totals.calls,
        if totals.calls == 1 { "" } else { "s" },
        format_reduction(totals.bytes_in, totals.bytes_out),
        delta_part(totals),
    )
}

/// The stats line of a result sent as a snapshot delta, shorter than `stats_line` (a delta of
/// an unchanged page is one line; what deltas saved is in every other stats line and in the
/// summary): `[mcp-snapshot-filter: 30.0 KB → 138 B as a delta]`, with the budget's step when
/// it took one (`… as a delta at the budget's aggressive step]`).
pub fn delta_stats_line(shrink: Shrink, budget_step: Option<&str>) -> String {
    let step = budget_step.map_or(String::new(), |s| format!(" at the budget's {s} step"));
    format!(
        "[mcp-snapshot-filter: {} → {} as a delta{step}]",
        format_bytes(shrink.bytes_in),
        format_bytes(shrink.bytes_out),
    )
}

/// `, 3 snapshot deltas saved 85 KB` once a delta was sent (nothing before: the line stays as
/// it was with deltas off).
fn delta_part(totals: &SavingsTotals) -> String {
    if totals.deltas == 0 {
        return String::new();
    }
    format!(
        ", {} snapshot delta{} saved {}",
        totals.deltas,
        if totals.deltas == 1 { "" } else { "s" },
        format_bytes(totals.delta_bytes_saved)
    )
}

/// The stats line appended to a result: `[mcp-snapshot-filter: <stats_body>]`.
pub fn stats_line(shrink: Shrink, totals: &SavingsTotals) -> String {
    format!("[mcp-snapshot-filter: {}]", stats_body(shrink, totals))
}

/// The summary printed on stderr when the proxy exits. `totals.results` counts the results of
/// the tools the proxy filters (snapshots, network and console lists, scripts); the others
/// never reach the filter.
pub fn summary_line(totals: &SavingsTotals, level: Level) -> String {
    if level == Level::Off {
        return "session: filter level off, every tool result forwarded unchanged".to_string();
    }
    let seen = match totals.results {
        1 => "1 result".to_string(),
        n => format!("{n} results"),
    };
    if totals.calls == 0 {
        return format!(
            "session: nothing saved; none of {seen} of filtered tools (snapshots, network and console lists, scripts) needed shrinking"
        );
    }
    format!(
        "session saved {} of {} ({}), ~{} tokens, shrinking {} of {seen} of filtered tools (snapshots, network and console lists, scripts){}",
        format_bytes(totals.bytes_saved()),
        format_bytes(totals.bytes_in),
        format_reduction(totals.bytes_in, totals.bytes_out),
        format_count(totals.tokens_saved()),
        totals.calls,
        delta_part(totals),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_sizes_counts_and_reductions() {
        assert_eq!(format_bytes(812), "812 B");
        assert_eq!(format_bytes(38_512), "38.5 KB");
        assert_eq!(format_bytes(412_300), "412 KB");
        assert_eq!(format_bytes(1_234_567), "1.2 MB");
        // Past a GB a size is GB, not "3400 MB" (stats sums many sessions).
        assert_eq!(format_bytes(999_949_999), "1000 MB");
        assert_eq!(format_bytes(3_400_000_000), "3.4 GB");
        assert_eq!(format_bytes(u64::MAX), "18446744074 GB");
        assert_eq!(format_count(6_612), "6.6k");
        assert_eq!(format_count(999), "999");
        assert_eq!(format_reduction(1000, 310), "−69%");
        assert_eq!(format_reduction(0, 0), "−0%");
    }

    fn shrink(bytes_in: u64, bytes_out: u64, tokens_in: u64, tokens_out: u64) -> Shrink {
        Shrink {
            bytes_in,
            bytes_out,
            tokens_in,
            tokens_out,
        }
    }

    #[test]
    fn stats_line_has_the_documented_shape() {
        let mut totals = SavingsTotals {
            results: 4,
            ..SavingsTotals::default()
        };
        totals.record(shrink(1_100_000, 688_000, 330_000, 200_000));
        let call = shrink(38_500, 12_100, 11_000, 4_400);
        totals.record(call);
        let line = stats_line(call, &totals);
        assert_eq!(
            line,
            "[mcp-snapshot-filter: 38.5 KB → 12.1 KB (−69%), ~6.6k tokens saved | session: 438 KB saved over 2 calls (−39%)]"
        );
        assert_eq!(
            summary_line(&totals, Level::Moderate),
            "session saved 438 KB of 1.1 MB (−39%), ~137k tokens, shrinking 2 of 4 results of filtered tools (snapshots, network and console lists, scripts)"
        );
        // Deltas add their part once one was sent, and have a short line of their own.
        assert!(!line.contains("delta"));
        let delta = shrink(30_000, 138, 9_000, 40);
        totals.record(delta);
        totals.record_delta(4_600, 138);
        assert_eq!(
            delta_stats_line(delta, None),
            "[mcp-snapshot-filter: 30.0 KB → 138 B as a delta]"
        );
        assert_eq!(
            delta_stats_line(delta, Some("aggressive")),
            "[mcp-snapshot-filter: 30.0 KB → 138 B as a delta at the budget's aggressive step]"
        );
        assert!(stats_line(call, &totals).ends_with("), 1 snapshot delta saved 4.5 KB]"));
        assert!(summary_line(&totals, Level::Moderate)
            .ends_with("scripts), 1 snapshot delta saved 4.5 KB"));
    }

    #[test]
    fn summary_says_why_nothing_was_saved() {
        let mut totals = SavingsTotals::default();
        assert_eq!(
            summary_line(&totals, Level::Off),
            "session: filter level off, every tool result forwarded unchanged"
        );
        totals.results = 1;
        let line = summary_line(&totals, Level::Light);
        assert!(
            line.starts_with("session: nothing saved; none of 1 result "),
            "{line}"
        );
        assert!(!line.contains("−0%"), "{line}");
    }

    #[test]
    fn parses_modes() {
        assert_eq!(StatsMode::parse_opt(None), Ok(StatsMode::Inline));
        for mode in [StatsMode::Inline, StatsMode::Stderr, StatsMode::Off] {
            assert_eq!(mode.as_str().parse::<StatsMode>(), Ok(mode));
        }
        assert!("verbose".parse::<StatsMode>().is_err());
    }
}
