//! What `routersim import` is asked to do.

use std::path::PathBuf;
use std::time::Duration;

use routersim_config::duration::parse_duration;

use crate::format::Format;
use crate::format::time::parse_timestamp;

/// The default bucket width.
pub const DEFAULT_BUCKET: Duration = Duration::from_secs(10);
/// The error series are segmented at this fraction of the bucket width.
pub const SLOTS_PER_BUCKET: u32 = 10;

/// A `--since` / `--until` bound.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TimeBound {
    /// An instant (RFC 3339, or Unix seconds): Unix seconds.
    At(f64),
    /// A duration after the log's first row (`5m`).
    After(Duration),
}

impl TimeBound {
    /// Reads an instant (`2026-12-02T07:06:49Z`, `1796195209`) or a duration with its unit
    /// (`90s`, `5m`: after the log's first row).
    pub fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        if text.chars().last().is_some_and(|c| c.is_ascii_alphabetic())
            && !text.ends_with(['Z', 'z'])
        {
            return parse_duration(text)
                .map(TimeBound::After)
                .map_err(|e| format!("{text:?}: {e}"));
        }
        parse_timestamp(text).map(TimeBound::At).ok_or_else(|| {
            format!(
                "{text:?} is neither an instant (RFC 3339 such as 2026-12-02T07:06:49Z, or Unix \
                 seconds) nor a duration after the log's start (such as 90s or 5m)"
            )
        })
    }

    /// Unix seconds, `start` being the log's first row.
    pub fn resolve(self, start: f64) -> f64 {
        match self {
            TimeBound::At(t) => t,
            TimeBound::After(d) => start + d.as_secs_f64(),
        }
    }
}

/// The import's inputs.
#[derive(Clone, Debug)]
pub struct ImportOptions {
    /// The log.
    pub log: PathBuf,
    /// The proxy config (`--config`).
    pub config: Option<PathBuf>,
    /// The output folder.
    pub out: PathBuf,
    /// `--format`, when not detected.
    pub format: Option<Format>,
    /// `--since`.
    pub since: Option<TimeBound>,
    /// `--until`.
    pub until: Option<TimeBound>,
    /// `--model-group` (repeatable).
    pub model_groups: Vec<String>,
    /// `--bucket`: the error series' bucket width.
    pub bucket: Duration,
    /// `--name` of the scenario (default `imported-<log file stem>`).
    pub name: Option<String>,
}

impl ImportOptions {
    /// Options with the defaults.
    pub fn new(log: impl Into<PathBuf>, out: impl Into<PathBuf>) -> Self {
        Self {
            log: log.into(),
            config: None,
            out: out.into(),
            format: None,
            since: None,
            until: None,
            model_groups: Vec::new(),
            bucket: DEFAULT_BUCKET,
            name: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_are_instants_or_durations_after_the_start() {
        assert_eq!(
            TimeBound::parse("90s"),
            Ok(TimeBound::After(Duration::from_secs(90)))
        );
        assert_eq!(
            TimeBound::parse("1970-01-01T00:01:00Z"),
            Ok(TimeBound::At(60.0))
        );
        assert_eq!(TimeBound::parse("60"), Ok(TimeBound::At(60.0)));
        assert!(TimeBound::parse("yesterday").is_err());
        assert_eq!(
            TimeBound::After(Duration::from_secs(5)).resolve(100.0),
            105.0
        );
    }
}
