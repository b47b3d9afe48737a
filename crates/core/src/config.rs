//! The options a caller gives (the N-API binding's `FilterOptions` and `SessionConfig`, every
//! field optional) and the defaults that fill what it left out: one place for them, so the
//! binding only converts and `cargo test` reaches the defaults.

use std::path::PathBuf;

use crate::error::FilterResult;
use crate::level::Level;
use crate::result::ResultOptions;
use crate::session::SessionOptions;
use crate::snapshot::{params, SnapshotLimits, SnapshotOptions};
use crate::stats::StatsMode;

/// Options of the snapshot and tool-result filters; `None`: the level's default.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FilterConfig {
    /// `off`, `light`, `moderate` (the default) or `aggressive`.
    pub level: Option<String>,
    pub max_nodes: Option<usize>,
    pub max_depth: Option<usize>,
    pub max_similar_siblings: Option<usize>,
    pub max_text_length: Option<usize>,
    pub max_text_per_container: Option<usize>,
    pub max_records: Option<usize>,
    pub max_condensed_records: Option<usize>,
    pub max_table_text: Option<usize>,
    pub has_output_schema: Option<bool>,
    pub max_tokens: Option<usize>,
    pub max_chars: Option<usize>,
}

impl FilterConfig {
    pub fn level(&self) -> FilterResult<Level> {
        Level::parse_opt(self.level.as_deref())
    }

    pub fn max_tokens(&self) -> usize {
        self.max_tokens.unwrap_or(params::DEFAULT_MAX_TOKENS)
    }

    pub fn max_chars(&self) -> usize {
        self.max_chars.unwrap_or(params::DEFAULT_MAX_CHARS)
    }

    /// The level's snapshot limits with the ones given in place of its defaults.
    pub fn limits(&self, level: Level) -> SnapshotLimits {
        let mut limits = SnapshotLimits::for_level(level);
        let set = |slot: &mut usize, value: Option<usize>| {
            if let Some(v) = value {
                *slot = v;
            }
        };
        set(&mut limits.max_nodes, self.max_nodes);
        set(&mut limits.max_depth, self.max_depth);
        set(&mut limits.max_similar_siblings, self.max_similar_siblings);
        set(&mut limits.max_records, self.max_records);
        set(
            &mut limits.max_condensed_records,
            self.max_condensed_records,
        );
        set(&mut limits.max_table_text, self.max_table_text);
        set(&mut limits.max_text_length, self.max_text_length);
        set(
            &mut limits.max_text_per_container,
            self.max_text_per_container,
        );
        limits
    }

    /// Options of one `tools/call` result filtered outside a session.
    pub fn result_options(&self) -> FilterResult<ResultOptions> {
        let level = self.level()?;
        let mut options = ResultOptions::for_level(level);
        options.snapshot = self.limits(level);
        options.has_output_schema = self.has_output_schema.unwrap_or(false);
        options.max_tokens = self.max_tokens();
        options.max_chars = self.max_chars();
        Ok(options)
    }

    /// Options of one bare snapshot text.
    pub fn snapshot_options(&self) -> FilterResult<SnapshotOptions> {
        let level = self.level()?;
        Ok(SnapshotOptions {
            level,
            limits: self.limits(level),
        })
    }
}

/// Options of a proxy session; `None`: the default (documented on the binding's
/// `SessionConfig`, whose fields these are).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionConfig {
    pub filter: FilterConfig,
    pub compact_schemas: Option<bool>,
    /// `inline` (the default), `stderr` or `off`.
    pub stats: Option<String>,
    /// The description compressor's level; the filter level when absent.
    pub describe_level: Option<String>,
    pub proxy_tools: Option<bool>,
    pub snapshot_cache_bytes: Option<usize>,
    pub raw_snapshots_dir: Option<PathBuf>,
    pub snapshot_deltas: Option<bool>,
    pub drop_structured_content: Option<bool>,
}

impl SessionConfig {
    /// The session's options: the level's defaults, then what the caller gave.
    pub fn session_options(&self) -> FilterResult<SessionOptions> {
        let filter = &self.filter;
        let level = filter.level()?;
        let mut options = SessionOptions::for_level(level);
        options.snapshot = filter.limits(level);
        options.max_tokens = filter.max_tokens();
        options.max_chars = filter.max_chars();
        // At `off` results are forwarded untouched: no snapshot is ever held for the tools.
        options.proxy_tools = level != Level::Off
            && self
                .proxy_tools
                .unwrap_or_else(|| SessionOptions::proxy_tools_default(level, options.max_tokens));
        options.compact_schemas = self.compact_schemas.unwrap_or(false);
        options.stats = StatsMode::parse_opt(self.stats.as_deref())?;
        if let Some(describe) = self.describe_level.as_deref() {
            options.describe_level = describe.parse()?;
        }
        if let Some(bytes) = self.snapshot_cache_bytes {
            options.cache_bytes = bytes;
        }
        options.raw_snapshots_dir = self.raw_snapshots_dir.clone();
        if let Some(deltas) = self.snapshot_deltas {
            options.snapshot_deltas = deltas;
        }
        options.drop_structured_content = self.drop_structured_content.unwrap_or(false);
        Ok(options)
    }

    /// What the caller asked for that this configuration will not do, one sentence each (the
    /// CLI prints them as warnings). Named by the config's fields; an invalid level gives none
    /// (`session_options` reports it).
    pub fn warnings(&self) -> Vec<String> {
        let Ok(level) = self.filter.level() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        if level == Level::Off && self.proxy_tools == Some(true) {
            out.push(
                "the proxy tools are off at filter level off (results are forwarded untouched, \
                 so no snapshot is held for them)"
                    .to_string(),
            );
        }
        if level >= Level::Moderate
            && self.snapshot_deltas == Some(true)
            && self.proxy_tools == Some(false)
        {
            out.push(
                "snapshot deltas need the proxy tools (an unchanged line is expanded through \
                 expand_snapshot): deltas are off without them"
                    .to_string(),
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_given_is_the_levels_defaults() {
        let options = SessionConfig::default().session_options().expect("valid");
        assert_eq!(options, SessionOptions::for_level(Level::Moderate));
        let light = SessionConfig {
            filter: FilterConfig {
                level: Some("light".into()),
                max_tokens: Some(0),
                ..FilterConfig::default()
            },
            ..SessionConfig::default()
        };
        // At light the proxy tools come only with a token budget.
        assert!(!light.session_options().expect("valid").proxy_tools);
    }

    #[test]
    fn what_cannot_be_done_is_off_and_said() {
        let level = |name: &str| FilterConfig {
            level: Some(name.into()),
            ..FilterConfig::default()
        };
        let off_with_tools = SessionConfig {
            filter: level("off"),
            proxy_tools: Some(true),
            ..SessionConfig::default()
        };
        assert!(!off_with_tools.session_options().expect("valid").proxy_tools);
        assert_eq!(off_with_tools.warnings().len(), 1);
        let deltas_without_tools = SessionConfig {
            filter: level("aggressive"),
            proxy_tools: Some(false),
            snapshot_deltas: Some(true),
            ..SessionConfig::default()
        };
        let options = deltas_without_tools.session_options().expect("valid");
        assert!(!options.deltas_possible());
        assert_eq!(deltas_without_tools.warnings().len(), 1);
        // At light deltas are never sent, asked for or not: nothing to warn about.
        let light = SessionConfig {
            filter: level("light"),
            proxy_tools: Some(false),
            snapshot_deltas: Some(true),
            ..SessionConfig::default()
        };
        assert!(light.warnings().is_empty());
        assert!(!light.session_options().expect("valid").deltas_possible());
        assert!(SessionConfig::default().warnings().is_empty());
        assert!(SessionConfig::default()
            .session_options()
            .expect("valid")
            .deltas_possible());
    }

    #[test]
    fn what_is_given_replaces_the_default_and_bad_names_are_errors() {
        let config = SessionConfig {
            filter: FilterConfig {
                level: Some("aggressive".into()),
                max_records: Some(7),
                ..FilterConfig::default()
            },
            describe_level: Some("light".into()),
            stats: Some("off".into()),
            ..SessionConfig::default()
        };
        let options = config.session_options().expect("valid");
        assert_eq!(options.snapshot.max_records, 7);
        assert_eq!(
            options.snapshot.max_nodes,
            SnapshotLimits::for_level(Level::Aggressive).max_nodes
        );
        assert_eq!(options.describe_level, Level::Light);
        assert_eq!(options.stats, StatsMode::Off);
        for bad in [
            SessionConfig {
                stats: Some("loud".into()),
                ..SessionConfig::default()
            },
            SessionConfig {
                describe_level: Some("max".into()),
                ..SessionConfig::default()
            },
            SessionConfig {
                filter: FilterConfig {
                    level: Some("max".into()),
                    ..FilterConfig::default()
                },
                ..SessionConfig::default()
            },
        ] {
            assert!(bad.session_options().is_err(), "{bad:?}");
        }
    }
}
