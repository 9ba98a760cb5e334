//! The seed-chosen fault mix: extra fault windows, provider keys and a continuation chain on
//! top of a scenario's own, written as scenario YAML so a violation's scenario file replays
//! exactly.
//!
//! Every draw comes from the ChaCha stream `explore/faults` of the seed (see
//! [`seeded_rng`](routersim_mock_providers::rng::seeded_rng)), so seed `S` always adds the
//! same faults to the same scenario, whatever the number of workers. The mix covers every
//! kind of trouble the scenario format can make (the closed list of `mock-providers`'
//! `spec/`): error windows of every failure kind a provider can send (and
//! `connection_lost_after_send`), with probabilities, explicit statuses, and Retry-After values
//! in every form (whole seconds, `ms`, HTTP-date, `0`, over a minute); slowdowns; every stream
//! fault (`stream_break`, `stream_error_frame`, `stream_truncated`, `stream_stall`,
//! `stream_empty`, `stream_no_finish`); every `invalid_response` defect; and provider keys:
//! quotas (`rpm_limit`, `tpm_limit`, `quota_retry_after_format`), non-text chunks (`emits`)
//! and degenerate answers in a `script`. So that stream faults bite in scenarios written
//! without streams, a third of the seeds also stream traffic entries that say nothing about
//! streams. A quarter of the seeds add a continuation chain (see [`chain`]): fallback groups
//! whose deployments support assistant prefill and break after content, so that mid-stream
//! continuations chain to every length up to `max_fallbacks` and past it. Sizes stay within
//! what a run can serve quickly: a window lasts at most the scenario's duration, a slowdown or
//! stall at most two minutes, a Retry-After at most an hour.
//!
//! # Layout
//!
//! `target` holds what the generator knows of a scenario and what it makes ([`Targets`],
//! [`FaultMix`]); `windows` draws one fault window, `providers` one provider key, `chain` a
//! continuation chain; `generate` draws a seed's whole mix. Each imports only modules listed
//! before it; this file declares them and re-exports every public item.

pub mod chain;
mod generate;
mod providers;
mod target;
mod windows;

pub use self::generate::generate;
pub use self::target::{ChainShape, ContinuationChain, FaultMix, FaultMode, PURPOSE, Targets};

#[cfg(test)]
mod tests;
