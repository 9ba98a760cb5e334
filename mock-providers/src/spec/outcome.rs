//! What one scripted call does: `ok` (with its options), a failure with its `Retry-After`,
//! a degenerate answer, or a stream fault; and how an outcome is read from YAML.
//!
//! Separate because it is the grammar of a `script` entry, shared by `then` and faults.

use std::fmt;
use std::time::Duration;

use routersim_engine::failure::{FailureKind, ProviderFailure, RetryAfter};
use routersim_engine::retry_after::format_http_date;
use serde::Deserialize;
use serde::de::value::MapAccessDeserializer;
use serde::de::{self, Deserializer, MapAccess, Visitor};

use super::latency::LatencySpec;
use super::stream_fault::{EmptyStream, RawStreamFault, StreamFault, StreamKeys};
use crate::duration::HumanDuration;

/// How a `Retry-After` is sent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RetryAfterFormat {
    /// `Retry-After: <seconds>`: whole seconds, rounded up ([`RetryAfter::Delay`]).
    #[default]
    Seconds,
    /// `retry-after-ms`: the exact delay ([`RetryAfter::Delay`]).
    Ms,
    /// `Retry-After: <HTTP-date>` ([`RetryAfter::HttpDate`]): the virtual wall clock plus the
    /// delay, rounded up to the next whole second (the date's resolution), so it resolves to
    /// at least the delay and less than a second more.
    HttpDate,
}

/// An error a fake provider answers with.
#[derive(Clone, Debug, PartialEq)]
pub struct ErrorSpec {
    /// The failure kind (`rate_limit`, …; `router_rate_limit` is the router's own, not allowed).
    pub kind: FailureKind,
    /// The status sent; `None` means the kind's usual one.
    pub status: Option<u16>,
    /// The `Retry-After` sent, if any.
    pub retry_after: Option<Duration>,
    /// How it is sent.
    pub retry_after_format: RetryAfterFormat,
    /// How long the error takes to arrive; `None` means the usual latency rules.
    pub latency: Option<LatencySpec>,
    /// `error: connection_lost_after_send` (a fault's): the connection is lost after the
    /// request was sent — an `api_connection` failure marked ambiguous — and the provider
    /// executed it with this probability (`executed`, default 1).
    pub lost_after_send: Option<f64>,
}

impl ErrorSpec {
    /// An error from the keys a script entry or a fault window writes, validated.
    pub(super) fn from_keys(
        kind: FailureKind,
        status: Option<u16>,
        retry_after: Option<HumanDuration>,
        retry_after_format: Option<RetryAfterFormat>,
        latency: Option<LatencySpec>,
    ) -> Result<Self, String> {
        if retry_after_format.is_some() && retry_after.is_none() {
            return Err("retry_after_format needs a retry_after".into());
        }
        let spec = ErrorSpec {
            kind,
            status,
            retry_after: retry_after.map(|d| d.0),
            retry_after_format: retry_after_format.unwrap_or_default(),
            latency,
            lost_after_send: None,
        };
        spec.check()?;
        Ok(spec)
    }

    /// An error of `kind` with its usual status, no Retry-After, no latency of its own.
    pub fn new(kind: FailureKind) -> Self {
        Self {
            kind,
            status: None,
            retry_after: None,
            retry_after_format: RetryAfterFormat::Seconds,
            latency: None,
            lost_after_send: None,
        }
    }

    /// The failure as the router receives it when the virtual wall clock reads `now_unix_ms`.
    pub fn failure(&self, now_unix_ms: i64) -> ProviderFailure {
        let mut failure = ProviderFailure::new(self.kind);
        if let Some(status) = self.status {
            failure.status = Some(status);
        }
        if let Some(delay) = self.retry_after {
            failure.retry_after = Some(match self.retry_after_format {
                RetryAfterFormat::Ms => RetryAfter::Delay(delay),
                RetryAfterFormat::Seconds => RetryAfter::Delay(Duration::from_secs(
                    delay.as_nanos().div_ceil(1_000_000_000) as u64,
                )),
                RetryAfterFormat::HttpDate => {
                    let delay_ms =
                        i64::try_from(delay.as_nanos().div_ceil(1_000_000)).unwrap_or(i64::MAX);
                    let target = now_unix_ms.saturating_add(delay_ms);
                    let ceiled = target.div_euclid(1000) * 1000
                        + if target.rem_euclid(1000) > 0 { 1000 } else { 0 };
                    RetryAfter::HttpDate(format_http_date(ceiled))
                }
            });
        }
        failure
    }

    pub(super) fn check(&self) -> Result<(), String> {
        if self.kind == FailureKind::RouterRateLimit {
            return Err(
                "router_rate_limit is the router's own error; a provider sends rate_limit".into(),
            );
        }
        if let Some(status) = self.status
            && !(100..=599).contains(&status)
        {
            return Err(format!("status {status} is not an HTTP status (100..=599)"));
        }
        if let Some(status) = self.status
            && status < 400
        {
            return Err(format!(
                "status {status} is not an error status: an injected error is sent with a \
                 status from 400 to 599"
            ));
        }
        Ok(())
    }
}

/// What one call returns: `ok`, an error, or a stream fault.
#[derive(Clone, Debug, PartialEq)]
pub enum OutcomeSpec {
    /// Success; `latency` overrides the provider's.
    Ok {
        /// The call's own latency.
        latency: Option<LatencySpec>,
    },
    /// An error.
    Error(ErrorSpec),
    /// A streamed call's stream opens (200) and then misbehaves; a non-streamed call
    /// ignores it and succeeds.
    Stream(StreamFault),
    /// A 200 that is not quite a success: `{malformed: empty_choices}` or
    /// `{finish_reason: content_filter}` (LiteLLM passes both through; DeltaLLM's
    /// classification makes them `malformed_response` and `content_policy_violation`).
    Degenerate {
        /// Which.
        kind: Degenerate,
        /// The call's own latency.
        latency: Option<LatencySpec>,
    },
}

/// A success that DeltaLLM's classification treats as a failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Degenerate {
    /// No choices at all (a stream: no content, then the terminal marker).
    EmptyChoices,
    /// The answer ends with `finish_reason: content_filter`.
    ContentFilter,
}

#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum RawMalformed {
    EmptyChoices,
}

#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum RawFinishReason {
    ContentFilter,
}

impl Default for OutcomeSpec {
    fn default() -> Self {
        OutcomeSpec::Ok { latency: None }
    }
}

/// Deserializes a present key as `Some(value)` even when the value is `null` (`ok:`).
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(d).map(Some)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawOk {
    latency: Option<LatencySpec>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawOutcome {
    #[serde(default, deserialize_with = "present")]
    ok: Option<Option<RawOk>>,
    error: Option<FailureKind>,
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
    malformed: Option<RawMalformed>,
    finish_reason: Option<RawFinishReason>,
}

const OUTCOME_EXPECTED: &str = "expected an outcome: ok, a failure kind (rate_limit, …), \
     {ok: {latency: 50ms}}, {error: rate_limit, status?, retry_after?, retry_after_format?, latency?} \
     or a stream fault ({stream_break: {after_tokens: 20}}, stream_error_frame, stream_truncated, \
     stream_stall, stream_empty, stream_no_finish), {malformed: empty_choices} or \
     {finish_reason: content_filter}";

impl TryFrom<RawOutcome> for OutcomeSpec {
    type Error = String;

    fn try_from(raw: RawOutcome) -> Result<Self, String> {
        let stream = StreamKeys {
            stream_break: raw.stream_break,
            stream_error_frame: raw.stream_error_frame,
            stream_truncated: raw.stream_truncated,
            stream_stall: raw.stream_stall,
            stream_empty: raw.stream_empty,
            stream_no_finish: raw.stream_no_finish,
        }
        .parse()?;
        let degenerate = match (raw.malformed, raw.finish_reason) {
            (Some(RawMalformed::EmptyChoices), None) => Some(Degenerate::EmptyChoices),
            (None, Some(RawFinishReason::ContentFilter)) => Some(Degenerate::ContentFilter),
            (Some(_), Some(_)) => {
                return Err("an outcome is `malformed` or `finish_reason`, not both".into());
            }
            (None, None) => None,
        };
        if let Some(kind) = degenerate {
            if stream.is_some()
                || raw.ok.is_some()
                || raw.error.is_some()
                || raw.status.is_some()
                || raw.retry_after.is_some()
                || raw.retry_after_format.is_some()
            {
                return Err(
                    "`malformed` and `finish_reason` outcomes take only a `latency`".into(),
                );
            }
            return Ok(OutcomeSpec::Degenerate {
                kind,
                latency: raw.latency,
            });
        }
        if let Some(fault) = stream {
            if raw.ok.is_some() || raw.error.is_some() {
                return Err(
                    "an outcome is one of `ok`, `error` or a stream fault, not several".into(),
                );
            }
            if raw.status.is_some()
                || raw.retry_after.is_some()
                || raw.retry_after_format.is_some()
                || raw.latency.is_some()
            {
                return Err("a stream fault takes its keys inside it: \
                     {stream_break: {after_tokens: 20, error: timeout}}; the stream's first \
                     token comes at the provider's `ttft`"
                    .into());
            }
            return Ok(OutcomeSpec::Stream(fault));
        }
        match (raw.ok, raw.error) {
            (Some(ok), None) => {
                if raw.status.is_some()
                    || raw.retry_after.is_some()
                    || raw.retry_after_format.is_some()
                {
                    return Err("`ok` takes no status or retry_after".into());
                }
                if raw.latency.is_some() {
                    return Err("write an ok's latency inside it: {ok: {latency: 50ms}}".into());
                }
                Ok(OutcomeSpec::Ok {
                    latency: ok.and_then(|o| o.latency),
                })
            }
            (None, Some(kind)) => Ok(OutcomeSpec::Error(ErrorSpec::from_keys(
                kind,
                raw.status,
                raw.retry_after,
                raw.retry_after_format,
                raw.latency,
            )?)),
            (Some(_), Some(_)) => Err("an outcome is either `ok` or `error`, not both".into()),
            (None, None) => Err(OUTCOME_EXPECTED.into()),
        }
    }
}

fn outcome_from_name(name: &str) -> Result<OutcomeSpec, String> {
    if name == "ok" {
        return Ok(OutcomeSpec::default());
    }
    let kind = FailureKind::from_name(name)
        .ok_or_else(|| format!("{OUTCOME_EXPECTED}; found {name:?}"))?;
    let spec = ErrorSpec::new(kind);
    spec.check()?;
    Ok(OutcomeSpec::Error(spec))
}

impl<'de> Deserialize<'de> for OutcomeSpec {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = OutcomeSpec;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(OUTCOME_EXPECTED)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<OutcomeSpec, E> {
                outcome_from_name(v).map_err(E::custom)
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<OutcomeSpec, A::Error> {
                let raw = RawOutcome::deserialize(MapAccessDeserializer::new(map))?;
                OutcomeSpec::try_from(raw).map_err(de::Error::custom)
            }
        }
        deserializer.deserialize_any(V)
    }
}
