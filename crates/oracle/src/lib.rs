//! # routersim-oracle (dev-only: not shipped, used by its tests)
//!
//! The differential harness against real LiteLLM: runs an oracle scenario
//! (`tools/litellm-oracle/scenarios/*.json`) through routersim with a profile and compares
//! every decision with the trace the oracle recorded from the real `litellm.Router`
//! (`crates/oracle/tests/fixtures/litellm-oracle/calls/*.json`).
//!
//! One module per concern: [`scenario`] reads the input, [`config`] turns the Router kwargs
//! into a routersim config through the engine's loader, [`provider`] plays the scripts,
//! [`decisions`] reads the trace, [`replay`] runs the engine and reads its events,
//! [`compare`] names each disagreement.

pub mod compare;
pub mod config;
pub mod decisions;
pub mod provider;
pub mod replay;
pub mod scenario;
pub mod stream;

use std::path::Path;

pub use compare::Mismatch;

/// The profile the harness checks.
pub const PROFILE: &str = "litellm-1.110";

/// A scenario or trace the harness cannot use.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{scenario}: {message}")]
pub struct OracleError {
    /// The scenario.
    pub scenario: String,
    /// What is wrong.
    pub message: String,
}

impl OracleError {
    /// An error about `scenario`.
    pub fn new(scenario: &str, message: impl Into<String>) -> Self {
        Self {
            scenario: scenario.to_string(),
            message: message.into(),
        }
    }
}

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
