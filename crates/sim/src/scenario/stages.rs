//! A stream's `stages:` (k6's ramping arrival rate), checked: each stage a `duration` above
//! zero and a `target` rate of 0 or above (a number per second, or `20/s`, `1200/m`,
//! `50/h`), the ramp starting at the entry's `rate` (default 0, k6's `startRate`).
//!
//! Apart from the traffic validator because it is the one traffic key with a list of its own
//! and its own messages; the arithmetic is in [`crate::traffic::Ramp`].

use routersim_mock_providers::duration::HumanDuration;
use serde::Deserialize;
use serde_json::Value;

use super::ctx::Ctx;
use super::error::ScenarioError;
use crate::traffic::{Ramp, Stage};

/// One stage as written; `target` is read in the second phase, so that a negative or
/// malformed one is named by its YAML path.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawStage {
    pub(super) duration: HumanDuration,
    pub(super) target: Value,
}

const TARGET_EXPECTED: &str = "a rate of 0 or above, such as 20/s, 1200/m, 50/h or 20 (per second)";

/// A target rate in requests per second.
fn target(value: &Value) -> Result<f64, String> {
    let bad = || format!("expected {TARGET_EXPECTED}, found {value}");
    let per_sec = match value {
        Value::Number(n) => n.as_f64().ok_or_else(bad)?,
        Value::String(text) => {
            let (number, per) = match text.split_once('/') {
                Some((n, unit)) => match unit.trim() {
                    "s" => (n.trim(), 1.0),
                    "m" => (n.trim(), 60.0),
                    "h" => (n.trim(), 3600.0),
                    _ => return Err(bad()),
                },
                None => (text.trim(), 1.0),
            };
            number.parse::<f64>().map_err(|_| bad())? / per
        }
        _ => return Err(bad()),
    };
    if per_sec.is_finite() && per_sec >= 0.0 {
        Ok(per_sec)
    } else {
        Err(bad())
    }
}

/// `path.stages` as a [`Ramp`] starting at `start_rate`.
pub(super) fn validate_stages(
    ctx: &Ctx<'_>,
    path: &str,
    raw: &[RawStage],
    start_rate: f64,
) -> Result<Ramp, ScenarioError> {
    if raw.is_empty() {
        return Err(ctx.error(
            &format!("{path}.stages"),
            "expected at least one stage: `- {duration: 1m, target: 20/s}`",
        ));
    }
    let mut stages = Vec::with_capacity(raw.len());
    for (j, stage) in raw.iter().enumerate() {
        let at = format!("{path}.stages[{j}]");
        if stage.duration.0.is_zero() {
            return Err(ctx.error(
                &format!("{at}.duration"),
                "a stage lasts longer than 0 (the rate ramps over it; to jump, start a new \
                 traffic entry)",
            ));
        }
        let target = target(&stage.target).map_err(|e| ctx.error(&format!("{at}.target"), e))?;
        stages.push(Stage {
            duration: stage.duration.0,
            target,
        });
    }
    let ramp = Ramp { start_rate, stages };
    if ramp.peak() <= 0.0 {
        return Err(ctx.error(
            &format!("{path}.stages"),
            "every target is 0 and so is the start `rate`: the stream would send nothing",
        ));
    }
    Ok(ramp)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_read_as_rates_and_zero_is_allowed() {
        assert_eq!(target(&Value::from(0)), Ok(0.0));
        assert_eq!(target(&Value::from(2.5)), Ok(2.5));
        assert_eq!(target(&Value::from("1200/m")), Ok(20.0));
        for bad in [Value::from(-1), Value::from("x/s"), Value::Bool(true)] {
            assert!(target(&bad).is_err(), "{bad}");
        }
    }
}
