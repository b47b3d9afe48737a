//! A result filter's options: the level, its limits per filter, and what the session adds.

use serde_json::Value;

use crate::level::Level;
use crate::snapshot::SnapshotLimits;

use super::console;
use super::console::ConsoleLimits;
use super::evaluate::EvaluateLimits;
use super::network::NetworkLimits;

/// Per-level limits of the network, console and evaluate_script filters: one table.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ResultLimits {
    pub network: NetworkLimits,
    pub console: ConsoleLimits,
    pub evaluate: EvaluateLimits,
}

impl ResultLimits {
    /// `off` and `light` change nothing here (light is lossless and these filters are not).
    pub fn for_level(level: Level) -> ResultLimits {
        match level {
            Level::Off | Level::Light => ResultLimits::default(),
            Level::Moderate => ResultLimits {
                network: NetworkLimits {
                    hide_images: true,
                    hide_fonts: true,
                    hide_stylesheets: true,
                    hide_media: false,
                    hide_scripts: false,
                },
                console: ConsoleLimits {
                    hide_debug: true,
                    collapse_similar: true,
                    max_log_messages: usize::MAX,
                    max_stack_lines: 4,
                },
                evaluate: EvaluateLimits {
                    max_array_items: 50,
                    max_string_chars: 500,
                    max_depth: 10,
                    max_output_chars: 10_000,
                },
            },
            Level::Aggressive => ResultLimits {
                network: NetworkLimits {
                    hide_images: true,
                    hide_fonts: true,
                    hide_stylesheets: true,
                    hide_media: true,
                    hide_scripts: true,
                },
                console: ConsoleLimits {
                    hide_debug: true,
                    collapse_similar: true,
                    max_log_messages: 10,
                    max_stack_lines: 2,
                },
                evaluate: EvaluateLimits {
                    max_array_items: 20,
                    max_string_chars: 200,
                    max_depth: 6,
                    max_output_chars: 4_000,
                },
            },
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResultOptions {
    pub level: Level,
    pub snapshot: SnapshotLimits,
    pub limits: ResultLimits,
    /// The tool declared an `outputSchema` in `tools/list`: `structuredContent` must stay valid
    /// against it.
    pub has_output_schema: bool,
    /// The key of the one plain string that `outputSchema` declares (`structured::plain_text_key`):
    /// a `structuredContent` repeating the text there carries the filtered text.
    pub text_schema_key: Option<String>,
    /// Drop `structuredContent` from every result, filtered or not (the proxy asked upstream for
    /// it to read the snapshot tree; the client did not).
    pub drop_structured_content: bool,
    /// The call's `resourceTypes` argument (list_network_requests): kinds never hidden.
    pub requested_resource_types: Vec<String>,
    /// The call's `types` argument (list_console_messages): types never hidden.
    pub requested_console_types: Vec<String>,
    /// The token budget of the whole result (`budget`); 0: none.
    pub max_tokens: usize,
    /// The character bound of the whole result's text (UTF-16 code units, `budget`), a second
    /// limit of the token budget (none without one); 0: none.
    pub max_chars: usize,
    /// The id under which the session keeps the text a budget cut leaves out, named in the
    /// cut's marker (`read_result id=…`); `None` when the proxy tools are off.
    pub read_id: Option<String>,
}

impl ResultOptions {
    pub fn for_level(level: Level) -> ResultOptions {
        ResultOptions {
            level,
            snapshot: SnapshotLimits::for_level(level),
            limits: ResultLimits::for_level(level),
            has_output_schema: false,
            text_schema_key: None,
            drop_structured_content: false,
            requested_resource_types: Vec::new(),
            requested_console_types: Vec::new(),
            max_tokens: 0,
            max_chars: 0,
            read_id: None,
        }
    }

    /// Takes what the filters honour from the call's `arguments` (JSON); bad JSON is ignored.
    pub fn with_arguments(mut self, arguments_json: Option<&str>) -> ResultOptions {
        let Some(arguments) = arguments_json.and_then(|a| serde_json::from_str::<Value>(a).ok())
        else {
            return self;
        };
        let strings = |key: &str| -> Vec<String> {
            arguments
                .get(key)
                .and_then(Value::as_array)
                .map(|items| {
                    items
                        .iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default()
        };
        self.requested_resource_types = strings("resourceTypes");
        self.requested_console_types = strings("types");
        self
    }

    /// A budget applies (a token budget, and with it the character bound).
    pub fn budgeted(&self) -> bool {
        self.max_tokens > 0
    }

    /// Console limits with the types the agent asked for exempted.
    pub(super) fn console_limits(&self) -> ConsoleLimits {
        let mut limits = self.limits.console.clone();
        let asked = |t: &str| self.requested_console_types.iter().any(|r| r == t);
        if asked("debug") || asked("verbose") {
            limits.hide_debug = false;
        }
        if !self.requested_console_types.is_empty()
            && self
                .requested_console_types
                .iter()
                .any(|t| !console::always_kept(t) && t != "debug" && t != "verbose")
        {
            limits.max_log_messages = usize::MAX;
        }
        limits
    }
}
