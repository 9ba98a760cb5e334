//! How one call's outcome is decided: [`decide`], a short sequence of named steps, in this
//! order. Every random draw happens inside a step, so the order of the steps is the order of
//! the draws (a scenario's report depends on it).
//!
//! 1. [`script_entry`]: the deployment's next `script` entry is consumed (one per call,
//!    always, even when step 2 or 3 decides), else `then` (default `ok`).
//! 2. [`exceeds_context_window`]: `input_tokens > context_window` →
//!    `context_window_exceeded` (400).
//! 3. [`admit`], the quota (`rpm_limit`, `tpm_limit`; see [`crate::quota`]): a call the
//!    buckets have no room for fails with `rate_limit` (429) after [`QUOTA_REJECT_LATENCY`],
//!    with a Retry-After of the time until they have room (in the spec's
//!    `quota_retry_after_format`, default whole seconds rounded up; none when the call is
//!    larger than a limit), and is charged nothing. A call that gets in is charged 1 request
//!    and `input_tokens` + its answer's output tokens, whatever happens next (the provider
//!    admitted it: a scripted or window error after this step still used the quota). A call
//!    over the context window is not charged.
//! 4. [`up_front_error`]: a scripted error wins.
//! 5. Otherwise each *error* fault window active now (`from <= t < to`, in file order) draws
//!    its probability; the first that fires gives the error.
//! 6. [`latency`], for whichever outcome except a quota rejection (always
//!    [`QUOTA_REJECT_LATENCY`], drawing nothing): the outcome's own `latency` (script entry,
//!    or the error fault's), else the *slowdown* windows active now from the last in file
//!    order to the first, each drawing its probability, the first that fires wins; else the
//!    provider's base latency. A non-streamed call, and any up-front error, sleeps that long,
//!    then returns. A streamed success returns its [`FakeStream`](crate::FakeStream) at once
//!    (0 ms: no connection latency is modelled) and this latency is the stream's time to
//!    first token instead, with the provider's `ttft` (default: its `latency`) as the base.
//! 7. Otherwise the call succeeds, with the answer `super::answer` describes: its length
//!    (drawn in step 3 when a `tpm_limit` needs it, else now), then a plain answer (drawing
//!    the `invalid_response` windows) or a stream (drawing the stream-fault windows, then
//!    `inter_token`). So an up-front error (script or window) beats any stream fault.

use std::time::Duration;

use routersim_engine::failure::{FailureKind, ProviderFailure};
use routersim_engine::request::{Completion, Request};

use super::answer::{self, Length};
use super::call_time::CallTime;
use super::deployment::DeploymentState;
use crate::quota::Admission;
use crate::spec::{ErrorSpec, FaultEffect, LatencySpec, OutcomeSpec};
use crate::stream::StreamPlan;

/// How long a quota rejection (step 3) takes to arrive: a provider's rate limiter answers
/// before any inference, so neither the provider's latency nor a slowdown window applies.
pub const QUOTA_REJECT_LATENCY: Duration = Duration::from_millis(20);

/// `then` when a spec sets none.
static DEFAULT_OUTCOME: OutcomeSpec = OutcomeSpec::Ok { latency: None };

/// What a call will do.
#[derive(Debug)]
pub(super) enum Decision {
    /// Return this after `latency`.
    Now {
        result: Result<Completion, ProviderFailure>,
        latency: Duration,
        /// The provider's quota rejected it.
        quota_rejected: bool,
    },
    /// Return this stream at once.
    Stream { plan: StreamPlan },
}

/// An error decided before any answer (steps 2, 4 and 5), and its own latency, if any.
struct UpFrontError<'a> {
    failure: ProviderFailure,
    latency: Option<&'a LatencySpec>,
}

/// Decides one call to `state` at `now` (the steps of the module doc, in order). `span_cap`
/// bounds a stream's coalesced chunks (see [`crate::stream`]). Inlined into the one call
/// site, on every provider call's path: its result is then built in place.
#[inline]
pub(super) fn decide(
    state: &DeploymentState,
    request: &Request,
    now: CallTime,
    span_cap: Option<Duration>,
) -> Decision {
    let outcome = script_entry(state);
    let (error, length) = if exceeds_context_window(state, request) {
        (Some(context_window_exceeded(now)), None)
    } else {
        match admit(state, request, now) {
            Ok(length) => (up_front_error(state, outcome, now), length),
            Err(rejection) => {
                return Decision::Now {
                    result: Err(rejection),
                    latency: QUOTA_REJECT_LATENCY,
                    quota_rejected: true,
                };
            }
        }
    };
    let streamed = error.is_none() && request.stream;
    let own_latency = match &error {
        Some(error) => error.latency,
        None => success_latency(outcome),
    };
    let latency = latency(state, own_latency, streamed, now);
    if let Some(error) = error {
        return Decision::Now {
            result: Err(error.failure),
            latency,
            quota_rejected: false,
        };
    }
    let length = length.unwrap_or_else(|| answer::length(state, request));
    if !streamed {
        return Decision::Now {
            result: Ok(answer::completion(
                state,
                outcome,
                request,
                length.tokens,
                now,
            )),
            latency,
            quota_rejected: false,
        };
    }
    Decision::Stream {
        plan: answer::stream_plan(state, outcome, request, length, latency, span_cap, now),
    }
}

/// Step 1: the deployment's next `script` entry (consumed: one per call, always), else
/// `then`, else `ok`.
fn script_entry(state: &DeploymentState) -> &OutcomeSpec {
    let pos = state.next_script.get();
    match state.spec.script.get(pos) {
        Some(outcome) => {
            state.next_script.set(pos + 1);
            outcome
        }
        None => state.spec.then.as_ref().unwrap_or(&DEFAULT_OUTCOME),
    }
}

/// Step 2: whether the request is longer than the deployment's context window.
fn exceeds_context_window(state: &DeploymentState, request: &Request) -> bool {
    state
        .spec
        .context_window
        .is_some_and(|window| request.input_tokens > window)
}

/// Step 2's failure: `context_window_exceeded`, with no latency of its own.
fn context_window_exceeded(now: CallTime) -> UpFrontError<'static> {
    UpFrontError {
        failure: ErrorSpec::new(FailureKind::ContextWindowExceeded).failure(now.unix_ms),
        latency: None,
    }
}

/// Step 3: the provider's own quota admits (and charges) the call, with the answer's length
/// when its tokens count (drawn here, before any window), or rejects it with this failure.
/// Inlined: most deployments have no quota, and then this is one borrow.
#[inline]
fn admit(
    state: &DeploymentState,
    request: &Request,
    now: CallTime,
) -> Result<Option<Length>, ProviderFailure> {
    let mut buckets = state.quota.borrow_mut();
    let Some(quota) = buckets.as_mut() else {
        return Ok(None);
    };
    let mut tokens = u64::from(request.input_tokens);
    let mut length = None;
    if quota.counts_tokens() {
        let drawn = answer::length(state, request);
        tokens += u64::from(drawn.tokens);
        length = Some(drawn);
    }
    match quota.admit(now.elapsed, tokens) {
        Admission::Admitted => Ok(length),
        Admission::Rejected { retry_after } => {
            let spec = ErrorSpec {
                retry_after,
                retry_after_format: state.spec.quota_retry_after_format,
                ..ErrorSpec::new(FailureKind::RateLimit)
            };
            Err(spec.failure(now.unix_ms))
        }
    }
}

/// Steps 4 and 5: the scripted error, else the error of the first error window open now
/// whose draw fires.
fn up_front_error<'a>(
    state: &'a DeploymentState,
    outcome: &'a OutcomeSpec,
    now: CallTime,
) -> Option<UpFrontError<'a>> {
    if let OutcomeSpec::Error(spec) = outcome {
        return Some(UpFrontError {
            failure: spec.failure(now.unix_ms),
            latency: spec.latency.as_ref(),
        });
    }
    state
        .errors
        .iter()
        .find_map(|w| match &w.fault.effect {
            FaultEffect::Error(spec) if w.fires(now.elapsed) => Some((w, spec)),
            _ => None,
        })
        .map(|(w, spec)| UpFrontError {
            failure: w.failure(spec, now.unix_ms),
            latency: spec.latency.as_ref(),
        })
}

/// A success's own latency: an `ok`'s or a degenerate answer's (a stream fault has none).
fn success_latency(outcome: &OutcomeSpec) -> Option<&LatencySpec> {
    match outcome {
        OutcomeSpec::Ok { latency } | OutcomeSpec::Degenerate { latency, .. } => latency.as_ref(),
        OutcomeSpec::Error(_) | OutcomeSpec::Stream(_) => None,
    }
}

/// Step 6: the call's latency (a streamed success's time to first token): `own`, else the
/// slowdown that fires now, else the provider's base (its `ttft` for a stream, when set).
fn latency(
    state: &DeploymentState,
    own: Option<&LatencySpec>,
    streamed: bool,
    now: CallTime,
) -> Duration {
    let chosen = own.or_else(|| slowdown(state, now));
    let rng = &mut *state.latency_rng.borrow_mut();
    match chosen {
        Some(spec) => spec.sample(rng),
        None => match &state.ttft {
            Some(ttft) if streamed => ttft.sample(rng),
            _ => state.latency.sample(rng),
        },
    }
}

/// The latency of the last slowdown window in file order that is open now and whose draw
/// fires (they draw from the last to the first, until one fires).
fn slowdown(state: &DeploymentState, now: CallTime) -> Option<&LatencySpec> {
    state
        .slowdowns
        .iter()
        .rev()
        .find_map(|w| match &w.fault.effect {
            FaultEffect::Slowdown(latency) if w.fires(now.elapsed) => Some(latency),
            _ => None,
        })
}
