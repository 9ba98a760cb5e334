//! What one scripted call does: `ok` (with its options), a failure with its `Retry-After`,
//! a degenerate answer, or a stream fault; and how an outcome is read from YAML.
//!
//! Separate because it is the grammar of a `script` entry, shared by `then` and faults.

use std::fmt;

use routersim_engine::failure::FailureKind;
use serde::Deserialize;
use serde::de::value::MapAccessDeserializer;
use serde::de::{self, Deserializer, MapAccess, Visitor};

use super::error::{ErrorSpec, RetryAfterFormat};
use super::latency::LatencySpec;
use super::stream_fault::{EmptyStream, RawStreamFault, StreamFault, StreamKeys};
use crate::duration::HumanDuration;

/// The grammar's side of an [`ErrorSpec`]: it is read from these keys in a script entry and
/// in a fault window alike.
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
