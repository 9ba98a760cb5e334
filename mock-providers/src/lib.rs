//! # routersim-mock-providers
//!
//! Fake LLM providers for the simulator: they implement the engine's
//! [`Provider`](routersim_engine::provider::Provider) trait in-process, on tokio's (paused)
//! clock, and behave as a scenario file says — a base latency, a per-call script, a context
//! window, and timed fault windows (errors with `Retry-After`, slowdowns). They know faults,
//! not routing.
//!
//! - [`rng`]: per-purpose random streams from the scenario seed.
//! - [`duration`]: `300ms` / `1.5s` / `2m` parsing shared by every YAML format.
//! - [`spec`]: the scenario's `providers` and `faults` sections.
//! - [`provider`]: [`FakeProviders`], and the order in which an outcome is decided.

pub mod duration;
pub mod provider;
pub mod rng;
pub mod spec;

pub use provider::{DeploymentStats, FakeProviders, SpecError, validate_targets};
pub use spec::{
    ErrorSpec, FaultEffect, FaultSpec, FaultTarget, LatencySpec, OutcomeSpec, ProviderSpec,
    RetryAfterFormat,
};
