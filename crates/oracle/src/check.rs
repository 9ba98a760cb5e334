//! One scenario against one trace: run it through routersim and name every disagreement.

use std::path::Path;

use crate::compare::{self, Mismatch};
use crate::error::OracleError;
use crate::{config, decisions, replay, scenario};

/// Runs the scenario at `scenario_path` with `profile` and compares it with the trace at
/// `trace_path`: every disagreement, or none.
pub fn check_files(
    scenario_path: &Path,
    trace_path: &Path,
    profile: &str,
) -> Result<Vec<Mismatch>, OracleError> {
    let stem = scenario_path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let read = |p: &Path| {
        std::fs::read_to_string(p)
            .map_err(|e| OracleError::new(&stem, format!("cannot read {}: {e}", p.display())))
    };
    let scenario = scenario::Scenario::parse(&read(scenario_path)?, &stem)?;
    let trace: serde_json::Value = serde_json::from_str(&read(trace_path)?)
        .map_err(|e| OracleError::new(&stem, format!("trace is not JSON: {e}")))?;
    check(&scenario, &trace, profile)
}

/// [`check_files`] on parsed inputs.
pub fn check(
    scenario: &scenario::Scenario,
    trace: &serde_json::Value,
    profile: &str,
) -> Result<Vec<Mismatch>, OracleError> {
    let want = decisions::from_trace(&scenario.name, trace)?;
    let config = config::router_config(&scenario.name, &scenario.router, profile)?;
    let ran = replay::run(scenario, config, &want)?;
    if ran.len() != want.len() {
        return Err(OracleError::new(
            &scenario.name,
            format!("{} requests ran, the trace has {}", ran.len(), want.len()),
        ));
    }
    Ok(want
        .iter()
        .zip(&ran)
        .enumerate()
        .flat_map(|(i, (w, r))| compare::compare(&scenario.name, i, w, r))
        .collect())
}
