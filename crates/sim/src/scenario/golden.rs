//! The scenario's `golden:` key: how closely `routersim check` holds a run to its golden.
//!
//! ```yaml
//! golden:
//!   tolerance: {p99_latency_ms: 5%, fallbacks: 10%}
//! ```
//!
//! A tolerance is relative (`5%`: the new value may differ from the golden's by up to 5 % of
//! the golden's value) and is named by the `expect` metric it loosens; it wins over
//! `check --tolerance` for that metric. Only metrics the golden comparison looks at can be
//! named ([`crate::check::golden::TOLERANCE_METRICS`]); anything else is an error, since a
//! tolerance that loosens nothing would be a key that does nothing.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use super::ScenarioError;
use super::load::Ctx;
use crate::check::golden::{parse_tolerance, tolerance_path};

/// The `golden:` key as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawGolden {
    #[serde(default)]
    tolerance: BTreeMap<String, Value>,
}

/// How `check` compares a run with its golden.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GoldenSettings {
    /// Relative tolerances (a fraction: 0.05 for `5%`) by `expect` metric name, in name order.
    pub tolerance: BTreeMap<String, f64>,
}

/// Checks `golden:`: every metric is one the comparison looks at, every value a percentage.
pub(super) fn validate_golden(
    raw: Option<RawGolden>,
    ctx: &Ctx<'_>,
) -> Result<GoldenSettings, ScenarioError> {
    let Some(raw) = raw else {
        return Ok(GoldenSettings::default());
    };
    let mut tolerance = BTreeMap::new();
    for (metric, value) in raw.tolerance {
        let path = format!("golden.tolerance.{metric}");
        if tolerance_path(&metric).is_none() {
            return Err(ctx.error(
                &path,
                format!(
                    "unknown metric {metric:?}: a golden tolerance names one of {}, or \
                     failed.<kind>, cooldowns.<deployment_id>, cooled_ms.<deployment_id>",
                    crate::check::golden::TOLERANCE_METRICS
                        .iter()
                        .map(|(name, _)| *name)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
        let fraction = match &value {
            Value::String(text) => parse_tolerance(text),
            other => Err(format!("expected a percentage such as 5%, found {other}")),
        }
        .map_err(|why| ctx.error(&path, why))?;
        tolerance.insert(metric, fraction);
    }
    Ok(GoldenSettings { tolerance })
}
