//! The stats line a filtered result can carry, and the session summary printed on exit.
//!
//! Sizes are UTF-8 bytes of what the client receives (text blocks, plus any dropped
//! `structuredContent`); 1 KB = 1000 bytes. Tokens are estimated as bytes / 3.4: o200k over the
//! text of every chrome-devtools-mcp 1.11 result in the corpus gives 10.30 MB / 3.06 M tokens =
//! 3.37 bytes per token (2.5 for network lists, 3.6 for snapshots; see bench/results-levels.js).

use std::fmt;
use std::str::FromStr;

use crate::error::FilterError;

/// UTF-8 bytes per o200k token, measured on the corpus (see module doc).
pub const BYTES_PER_TOKEN: f64 = 3.4;

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
            other => Err(FilterError::InvalidArgument(format!(
                "unknown stats mode {other:?}: expected inline, stderr or off"
            ))),
        }
    }
}

impl fmt::Display for StatsMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Running totals over a session's `tools/call` results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SavingsTotals {
    /// Results seen (filtered or not).
    pub results: u64,
    /// Results the filter changed.
    pub calls: u64,
    /// Bytes of the changed results before and after.
    pub bytes_in: u64,
    pub bytes_out: u64,
    /// Snapshots sent as deltas, and the bytes they saved against the full filtered snapshot.
    pub deltas: u64,
    pub delta_bytes_saved: u64,
}

impl SavingsTotals {
    pub fn record(&mut self, bytes_in: usize, bytes_out: usize) {
        self.calls += 1;
        self.bytes_in += bytes_in as u64;
        self.bytes_out += bytes_out as u64;
    }

    pub fn record_delta(&mut self, full_bytes: usize, delta_bytes: usize) {
        self.deltas += 1;
        self.delta_bytes_saved += full_bytes.saturating_sub(delta_bytes) as u64;
    }

    pub fn bytes_saved(&self) -> u64 {
        self.bytes_in.saturating_sub(self.bytes_out)
    }
}

pub fn estimate_tokens(bytes: u64) -> u64 {
    (bytes as f64 / BYTES_PER_TOKEN).round() as u64
}

/// `812 B`, `38.5 KB`, `412 KB`, `1.2 MB` (decimal units).
pub fn format_bytes(bytes: u64) -> String {
    let b = bytes as f64;
    if bytes < 1000 {
        format!("{bytes} B")
    } else if bytes < 1_000_000 {
        scaled(b / 1e3, "KB")
    } else {
        scaled(b / 1e6, "MB")
    }
}

/// `812`, `6.6k`, `412k`, `1.2M`.
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

/// `[mcp-snapshot-filter: 38.5 KB → 12.1 KB (−69%), ~6.6k tokens saved | session: 412 KB saved
/// over 14 calls (−63%)]`; `totals` already include this call.
pub fn stats_line(bytes_in: usize, bytes_out: usize, totals: &SavingsTotals) -> String {
    let (bytes_in, bytes_out) = (bytes_in as u64, bytes_out as u64);
    format!(
        "[mcp-snapshot-filter: {} → {} ({}), ~{} tokens saved | session: {} saved over {} call{} ({}){}]",
        format_bytes(bytes_in),
        format_bytes(bytes_out),
        format_reduction(bytes_in, bytes_out),
        format_count(estimate_tokens(bytes_in.saturating_sub(bytes_out))),
        format_bytes(totals.bytes_saved()),
        totals.calls,
        if totals.calls == 1 { "" } else { "s" },
        format_reduction(totals.bytes_in, totals.bytes_out),
        delta_part(totals),
    )
}

/// The stats line of a result sent as a snapshot delta, shorter than `stats_line` (a delta of
/// an unchanged page is one line; what deltas saved is in every other stats line and in the
/// summary): `[mcp-snapshot-filter: 30.0 KB → 138 B as a delta]`.
pub fn delta_stats_line(bytes_in: usize, bytes_out: usize) -> String {
    format!(
        "[mcp-snapshot-filter: {} → {} as a delta]",
        format_bytes(bytes_in as u64),
        format_bytes(bytes_out as u64),
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

/// The summary printed on stderr when the proxy exits.
pub fn summary_line(totals: &SavingsTotals) -> String {
    format!(
        "session saved {} of {} ({}), ~{} tokens, in {} of {} tool results{}",
        format_bytes(totals.bytes_saved()),
        format_bytes(totals.bytes_in),
        format_reduction(totals.bytes_in, totals.bytes_out),
        format_count(estimate_tokens(totals.bytes_saved())),
        totals.calls,
        totals.results,
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
        assert_eq!(format_count(6_612), "6.6k");
        assert_eq!(format_count(999), "999");
        assert_eq!(format_reduction(1000, 310), "−69%");
        assert_eq!(format_reduction(0, 0), "−0%");
        assert_eq!(estimate_tokens(34), 10);
    }

    #[test]
    fn stats_line_has_the_documented_shape() {
        let mut totals = SavingsTotals::default();
        totals.record(1_100_000, 688_000);
        totals.record(38_500, 12_100);
        let line = stats_line(38_500, 12_100, &totals);
        assert_eq!(
            line,
            "[mcp-snapshot-filter: 38.5 KB → 12.1 KB (−69%), ~7.8k tokens saved | session: 438 KB saved over 2 calls (−39%)]"
        );
        assert!(summary_line(&totals).contains("in 2 of 0 tool results"));
        // Deltas add their part once one was sent, and have a short line of their own.
        assert!(!line.contains("delta"));
        totals.record(30_000, 138);
        totals.record_delta(4_600, 138);
        assert_eq!(
            delta_stats_line(30_000, 138),
            "[mcp-snapshot-filter: 30.0 KB → 138 B as a delta]"
        );
        assert!(stats_line(38_500, 12_100, &totals).ends_with("), 1 snapshot delta saved 4.5 KB]"));
        assert!(summary_line(&totals).ends_with("tool results, 1 snapshot delta saved 4.5 KB"));
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
