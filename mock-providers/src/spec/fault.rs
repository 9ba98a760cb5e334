//! Timed faults (the `faults` section): which deployments they hit, when, with what
//! probability, and what they do.
//!
//! Separate because a fault wraps an outcome or a latency with a target and a window.

use std::time::Duration;

use routersim_engine::failure::FailureKind;
use serde::Deserialize;
use serde::de::{self, Deserializer};

use super::error::{ErrorSpec, RetryAfterFormat};
use super::latency::LatencySpec;
use super::stream_fault::{EmptyStream, RawStreamFault, StreamFault, StreamKeys};
use crate::duration::HumanDuration;
use routersim_engine::event::ValidationReason;

/// Which deployments a fault hits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FaultTarget {
    /// One deployment, by id.
    Deployment(String),
    /// Every deployment of a model group.
    ModelGroup(String),
}

/// What a fault does when it fires.
#[derive(Clone, Debug, PartialEq)]
pub enum FaultEffect {
    /// The call fails (after the fault's latency, when it sets one).
    Error(ErrorSpec),
    /// The call is slowed to this latency; its outcome is unchanged.
    Slowdown(LatencySpec),
    /// A streamed call's stream misbehaves (non-streamed calls are not hit, and draw
    /// nothing).
    Stream(StreamFault),
    /// A non-streamed success says something invalid (`invalid_response: malformed_json`):
    /// only answers that carry a body (a request under a contract that validates) change,
    /// except `truncated`, which ends any answer with `finish_reason: length`. Streamed calls
    /// are not hit, and draw nothing.
    InvalidResponse(ValidationReason),
}

/// A timed fault window: between `from` (inclusive) and `to` (exclusive) of virtual time,
/// each call to a targeted deployment is hit with `probability`.
#[derive(Clone, Debug, PartialEq)]
pub struct FaultSpec {
    /// Who is hit.
    pub target: FaultTarget,
    /// Start, from the start of the run (default 0).
    pub from: Duration,
    /// End (exclusive); `None` means never.
    pub to: Option<Duration>,
    /// Chance a call in the window is hit (default 1.0).
    pub probability: f64,
    /// What happens.
    pub effect: FaultEffect,
}

impl FaultSpec {
    /// Whether the window covers virtual time `t`.
    pub fn active_at(&self, t: Duration) -> bool {
        self.from <= t && self.to.is_none_or(|to| t < to)
    }
}

/// A fault's `error`: a failure kind, or `connection_lost_after_send`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ErrorName {
    /// A failure kind (`rate_limit`, …).
    Kind(FailureKind),
    /// The connection is lost after the request was sent: ambiguous execution.
    LostAfterSend,
}

/// The `error` name of an ambiguous fault.
pub const LOST_AFTER_SEND: &str = "connection_lost_after_send";

impl<'de> Deserialize<'de> for ErrorName {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        if name == LOST_AFTER_SEND {
            return Ok(ErrorName::LostAfterSend);
        }
        FailureKind::from_name(&name)
            .map(ErrorName::Kind)
            .ok_or_else(|| {
                let kinds: Vec<&str> = FailureKind::ALL.iter().map(|k| k.as_str()).collect();
                de::Error::custom(format!(
                    "unknown error `{name}`, expected one of {}, {LOST_AFTER_SEND}",
                    kinds.join(", ")
                ))
            })
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawFault {
    deployment: Option<String>,
    model_group: Option<String>,
    from: Option<HumanDuration>,
    to: Option<HumanDuration>,
    probability: Option<f64>,
    error: Option<ErrorName>,
    /// With `error: connection_lost_after_send`: the chance the provider executed it.
    executed: Option<f64>,
    status: Option<u16>,
    retry_after: Option<HumanDuration>,
    retry_after_format: Option<RetryAfterFormat>,
    latency: Option<LatencySpec>,
    stream_break: Option<RawStreamFault>,
    stream_error_frame: Option<RawStreamFault>,
    stream_truncated: Option<RawStreamFault>,
    stream_stall: Option<RawStreamFault>,
    stream_empty: Option<EmptyStream>,
    stream_no_finish: Option<EmptyStream>,
    invalid_response: Option<ValidationReason>,
}

impl TryFrom<RawFault> for FaultSpec {
    type Error = String;

    /// Checked in this order, so the first mistake in a fault is the one reported: its
    /// target, its window, its probability, then its effect.
    fn try_from(mut raw: RawFault) -> Result<Self, String> {
        Ok(FaultSpec {
            target: target(&mut raw)?,
            from: window_start(&raw),
            to: window_end(&raw)?,
            probability: probability(&raw)?,
            effect: effect(raw)?,
        })
    }
}

/// `deployment` or `model_group`, exactly one.
fn target(raw: &mut RawFault) -> Result<FaultTarget, String> {
    match (raw.deployment.take(), raw.model_group.take()) {
        (Some(d), None) => Ok(FaultTarget::Deployment(d)),
        (None, Some(g)) => Ok(FaultTarget::ModelGroup(g)),
        _ => Err("a fault names exactly one of `deployment` or `model_group`".into()),
    }
}

/// `from`: default 0, the start of the run.
fn window_start(raw: &RawFault) -> Duration {
    raw.from.map_or(Duration::ZERO, |d| d.0)
}

/// `to`: default never; after `from` when set.
fn window_end(raw: &RawFault) -> Result<Option<Duration>, String> {
    let from = window_start(raw);
    let to = raw.to.map(|d| d.0);
    if let Some(to) = to
        && to <= from
    {
        return Err(format!(
            "`to` ({}) must be after `from` ({})",
            HumanDuration(to),
            HumanDuration(from)
        ));
    }
    Ok(to)
}

/// `probability`: default 1, a chance.
fn probability(raw: &RawFault) -> Result<f64, String> {
    let probability = raw.probability.unwrap_or(1.0);
    if !(0.0..=1.0).contains(&probability) {
        return Err(format!(
            "probability must be between 0 and 1, found {probability}"
        ));
    }
    Ok(probability)
}

/// What the fault does: an invalid response, an error, a stream fault or a slowdown, each
/// with only the keys it takes.
fn effect(mut raw: RawFault) -> Result<FaultEffect, String> {
    let stream = StreamKeys {
        stream_break: raw.stream_break.take(),
        stream_error_frame: raw.stream_error_frame.take(),
        stream_truncated: raw.stream_truncated.take(),
        stream_stall: raw.stream_stall.take(),
        stream_empty: raw.stream_empty.take(),
        stream_no_finish: raw.stream_no_finish.take(),
    }
    .parse()?;
    if let Some(defect) = raw.invalid_response {
        return invalid_response(&raw, defect, stream.is_some());
    }
    let lost_after_send = lost_after_send(&raw)?;
    match (raw.error, stream) {
        (Some(_), Some(_)) => Err(
            "a fault is an error (`error`), a slowdown (`latency`) or a \
             stream fault, not both an error and a stream fault"
                .into(),
        ),
        (None, Some(fault)) => stream_fault(&raw, fault),
        (Some(name), None) => error(raw, name, lost_after_send),
        (None, None) => slowdown(raw),
    }
}

/// `invalid_response: <defect>`, alone.
fn invalid_response(
    raw: &RawFault,
    defect: ValidationReason,
    has_stream_fault: bool,
) -> Result<FaultEffect, String> {
    if raw.error.is_some()
        || has_stream_fault
        || raw.status.is_some()
        || raw.retry_after.is_some()
        || raw.retry_after_format.is_some()
        || raw.latency.is_some()
        || raw.executed.is_some()
    {
        return Err(
            "an invalid_response fault takes no other effect: no error, \
             status, retry_after, latency or stream fault"
                .into(),
        );
    }
    Ok(FaultEffect::InvalidResponse(defect))
}

/// With `error: connection_lost_after_send`, the chance the provider executed the request
/// (`executed`, default 1); `executed` belongs to that error only.
fn lost_after_send(raw: &RawFault) -> Result<Option<f64>, String> {
    match (raw.error, raw.executed) {
        (Some(ErrorName::LostAfterSend), executed) => {
            let p = executed.unwrap_or(1.0);
            if !(0.0..=1.0).contains(&p) {
                return Err(format!("executed must be between 0 and 1, found {p}"));
            }
            if raw.status.is_some() || raw.retry_after.is_some() {
                return Err(format!(
                    "{LOST_AFTER_SEND} has no status and no retry_after: the connection \
                     is lost before any answer"
                ));
            }
            Ok(Some(p))
        }
        (_, Some(_)) => Err(format!("executed belongs to `error: {LOST_AFTER_SEND}`")),
        (_, None) => Ok(None),
    }
}

/// A stream fault: its keys are inside it, none beside it.
fn stream_fault(raw: &RawFault, fault: StreamFault) -> Result<FaultEffect, String> {
    if raw.status.is_some()
        || raw.retry_after.is_some()
        || raw.retry_after_format.is_some()
        || raw.latency.is_some()
    {
        return Err("a stream fault takes its keys inside it: {stream_break: \
             {after_tokens: 20, error: timeout}}; it takes no latency"
            .into());
    }
    Ok(FaultEffect::Stream(fault))
}

/// `error: <kind>` with its status, Retry-After and latency (a lost connection is an
/// ambiguous `api_connection`).
fn error(
    raw: RawFault,
    name: ErrorName,
    lost_after_send: Option<f64>,
) -> Result<FaultEffect, String> {
    let kind = match name {
        ErrorName::Kind(kind) => kind,
        ErrorName::LostAfterSend => FailureKind::ApiConnection,
    };
    Ok(FaultEffect::Error(ErrorSpec {
        lost_after_send,
        ..ErrorSpec::from_keys(
            kind,
            raw.status,
            raw.retry_after,
            raw.retry_after_format,
            raw.latency,
        )?
    }))
}

/// `latency` alone: a slowdown.
fn slowdown(raw: RawFault) -> Result<FaultEffect, String> {
    if raw.status.is_some() || raw.retry_after.is_some() || raw.retry_after_format.is_some() {
        return Err("status and retry_after need an `error`".into());
    }
    match raw.latency {
        Some(latency) => Ok(FaultEffect::Slowdown(latency)),
        None => Err("a fault sets `error` (a failure kind), `latency`, or \
             both; or a stream fault (stream_break, stream_error_frame, \
             stream_truncated, stream_stall, stream_empty, stream_no_finish); \
             or `invalid_response` (a defect in a successful answer)"
            .into()),
    }
}

impl<'de> Deserialize<'de> for FaultSpec {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = RawFault::deserialize(deserializer)?;
        FaultSpec::try_from(raw).map_err(de::Error::custom)
    }
}
