//! # routersim-mock-providers
//!
//! Fake LLM providers for the simulator: they implement the engine's
//! [`Provider`](routersim_engine::provider::Provider) trait in-process, on tokio's (paused)
//! clock, and behave as a scenario file says — a base latency, a per-call script, a context
//! window, the provider's own rpm/tpm quota, timed fault windows (errors with `Retry-After`, slowdowns, stream faults), and
//! streamed answers paced in virtual time. They know faults, not routing.
//!
//! - [`body`]: what an answer says under a contract that validates, and its defects.
//! - [`rng`]: per-purpose random streams from the scenario seed.
//! - [`duration`]: `300ms` / `1.5s` / `2m` parsing shared by every YAML format.
//! - [`spec`]: the scenario's `providers` and `faults` sections.
//! - [`provider`]: [`FakeProviders`], and the order in which an outcome is decided.
//! - [`quota`]: the provider's own `rpm_limit` / `tpm_limit` token buckets on the virtual clock.
//! - [`pacing`]: how fakes wait: tokio's timer (simulation) or a precise wall-clock timer (`serve`).
//! - [`stream`]: [`FakeStream`], a streamed call's chunks paced by the clock, and stream faults.
//! - [`wire`]: the same fakes over real HTTP (OpenAI, Anthropic, Azure wire formats).

pub mod body;
pub mod duration;
pub mod pacing;
pub mod provider;
pub mod quota;
pub mod rng;
pub mod spec;
pub mod stream;
pub mod wire;

pub use pacing::Pacing;
pub use provider::{
    DeploymentStats, FakeProviders, QUOTA_REJECT_LATENCY, SpecError, validate_targets,
};
pub use quota::{Admission, Quota, TokenBucket};
pub use spec::{
    Emit, EmptyStream, ErrorSpec, FaultEffect, FaultSpec, FaultTarget, LatencySpec, OutcomeSpec,
    ProviderSpec, RetryAfterFormat, StreamCut, StreamFault, TokenRange,
};
pub use stream::FakeStream;
