//! The deadline budget: *"Record an absolute deadline when the request enters the gateway.
//! Before every attempt […] if remaining < connect_allowance + generation_allowance +
//! validation_allowance: stop_without_launching_another_attempt"*.
//!
//! `connect_allowance` (default 300 ms) and `validation_allowance` (default 50 ms) are router
//! settings; the generation allowance is `generation_allowance` when set, else the
//! deployment's measured mean latency, else [`DEFAULT_GENERATION_ALLOWANCE`] (1 s) before any
//! answer was measured.

use std::time::Duration;

use crate::config::{Deployment, RouterSettings};

pub use crate::config::{DEFAULT_CONNECT_ALLOWANCE, DEFAULT_VALIDATION_ALLOWANCE};

/// The generation allowance of a deployment never measured, when `generation_allowance` is
/// not set.
pub const DEFAULT_GENERATION_ALLOWANCE: Duration = Duration::from_secs(1);

/// The time an attempt on `_d` needs: connect + generation + validation.
pub fn allowance(
    _d: &Deployment,
    measured: Option<Duration>,
    settings: &RouterSettings,
) -> Duration {
    let generation = settings
        .generation_allowance
        .or(measured)
        .unwrap_or(DEFAULT_GENERATION_ALLOWANCE);
    settings.connect_allowance + generation + settings.validation_allowance
}
