use std::fmt;
use std::str::FromStr;

use crate::error::FilterError;

/// How much a filter may remove. `Off` changes nothing, `Light` is lossless, `Moderate` and
/// `Aggressive` hide content behind markers that say what was hidden and how to get it back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum Level {
    Off,
    Light,
    #[default]
    Moderate,
    Aggressive,
}

impl Level {
    pub const ALL: [Level; 4] = [Level::Off, Level::Light, Level::Moderate, Level::Aggressive];

    pub fn as_str(self) -> &'static str {
        match self {
            Level::Off => "off",
            Level::Light => "light",
            Level::Moderate => "moderate",
            Level::Aggressive => "aggressive",
        }
    }

    /// Parses an optional level name, `None` meaning the default (`moderate`).
    pub fn parse_opt(name: Option<&str>) -> Result<Level, FilterError> {
        name.map_or(Ok(Level::default()), str::parse)
    }
}

impl FromStr for Level {
    type Err = FilterError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "off" => Ok(Level::Off),
            "light" => Ok(Level::Light),
            "moderate" => Ok(Level::Moderate),
            "aggressive" => Ok(Level::Aggressive),
            other => Err(FilterError::UnknownName {
                option: "filter level",
                name: other.to_string(),
                expected: "off, light, moderate or aggressive",
            }),
        }
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_level_and_rejects_others() {
        for level in Level::ALL {
            assert_eq!(level.as_str().parse::<Level>(), Ok(level));
        }
        assert!("Moderate".parse::<Level>().is_err());
        assert_eq!(Level::parse_opt(None), Ok(Level::Moderate));
    }
}
