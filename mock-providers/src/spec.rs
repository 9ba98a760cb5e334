//! The scenario file's provider section: how each fake deployment behaves, and timed faults.
//!
//! These are plain serde types (`deny_unknown_fields` everywhere) so a scenario file is read in
//! one pass with exact YAML paths in errors; cross-checks against the router config (does the
//! deployment id exist?) happen in [`crate::provider::validate_targets`].
//!
//! ```yaml
//! providers:
//!   gpt-a:
//!     latency: {p50: 800ms, p99: 4s}   # or 300ms, or {uniform: [200ms, 900ms]}; default 200ms
//!     context_window: 8000
//!     script: [ok, rate_limit, {error: rate_limit, retry_after: 2s, retry_after_format: http-date}]
//!     then: ok                          # after the script; default ok
//!     ttft: {p50: 400ms, p99: 2s}       # streams: time to first token; default: latency
//!     inter_token: 20ms                 # streams: between tokens (drawn once per stream)
//!     output_tokens: 100..400           # the answer's length when the request sets none
//!     emits: [thinking, tool_calls]     # non-text chunks a stream starts with
//!     rpm_limit: 120                    # the provider's own quota (token buckets; see quota)
//!     tpm_limit: 200000
//!     quota_retry_after_format: seconds # default; or ms, http-date
//!   gpt-b:
//!     script:                           # stream faults: only streamed calls see them
//!       - {stream_break: {after_tokens: 20}}           # or {after: 1.5s}, error: <kind>
//!       - {stream_error_frame: {after_tokens: 5, error: overloaded}}
//!       - {stream_truncated: {after_tokens: 5}}
//!       - {stream_stall: {after_tokens: 5, for: 30s}}
//!       - {stream_empty: role_only}                    # or true: no chunk at all
//!       - {stream_no_finish: role_only}                # the same, ended without finish_reason
//! faults:
//!   - {deployment: gpt-a, from: 2m, to: 5m, error: rate_limit, probability: 0.8, retry_after: 20s}
//!   - {model_group: gpt-4o, from: 1m, to: 3m, latency: {p50: 6s, p99: 20s}}
//!   - {model_group: gpt-4o, from: 4m, to: 5m, probability: 0.3, stream_break: {after: 1.5s}}
//! ```

use std::fmt;
use std::time::Duration;

use rand::RngExt;
use routersim_engine::failure::{FailureKind, ProviderFailure, RetryAfter};
use routersim_engine::retry_after::format_http_date;
use routersim_engine::stream::ChunkKind;
use serde::Deserialize;
use serde::de::value::MapAccessDeserializer;
use serde::de::{self, Deserializer, MapAccess, Visitor};

use crate::duration::HumanDuration;

/// A provider's latency when its spec sets none.
pub const DEFAULT_LATENCY: Duration = Duration::from_millis(200);

/// How long a call takes.
///
/// Sampled latencies (log-normal, uniform) are whole milliseconds: tokio's timer has
/// millisecond resolution, so this is also exactly what the virtual clock will show.
#[derive(Clone, Debug, PartialEq)]
pub enum LatencySpec {
    /// Always this long (`300ms`).
    Fixed(Duration),
    /// Log-normal with this median and 99th percentile (`{p50: 800ms, p99: 4s}`):
    /// `mu = ln p50`, `sigma = (ln p99 − ln p50) / 2.3263` (2.3263 = z of the 99th percentile).
    LogNormal {
        /// Median.
        p50: Duration,
        /// 99th percentile.
        p99: Duration,
    },
    /// Uniform between two bounds, inclusive (`{uniform: [200ms, 900ms]}`).
    Uniform {
        /// Lower bound.
        min: Duration,
        /// Upper bound.
        max: Duration,
    },
}

impl Default for LatencySpec {
    fn default() -> Self {
        LatencySpec::Fixed(DEFAULT_LATENCY)
    }
}

/// z-score of the 99th percentile of the standard normal.
const Z99: f64 = 2.326_347_874;

impl LatencySpec {
    /// Draws one latency. A fixed latency draws nothing.
    pub fn sample<R: rand::Rng + ?Sized>(&self, rng: &mut R) -> Duration {
        match *self {
            LatencySpec::Fixed(d) => d,
            LatencySpec::Uniform { min, max } => {
                let lo = min.as_nanos().div_ceil(1_000_000) as u64;
                let hi = (max.as_nanos() / 1_000_000) as u64;
                Duration::from_millis(rng.random_range(lo..=hi.max(lo)))
            }
            LatencySpec::LogNormal { p50, p99 } => {
                let p50_ms = p50.as_secs_f64() * 1000.0;
                let p99_ms = p99.as_secs_f64() * 1000.0;
                let mu = p50_ms.ln();
                let sigma = (p99_ms.ln() - mu) / Z99;
                let ms = (mu + sigma * standard_normal(rng)).exp().round();
                // Cap at a day: the tail of a wide log-normal is unbounded.
                Duration::from_millis(ms.clamp(0.0, 86_400_000.0) as u64)
            }
        }
    }
}

/// Box–Muller: one standard normal draw from two uniforms (the second normal is discarded,
/// so every sample costs exactly two draws).
fn standard_normal<R: rand::Rng + ?Sized>(rng: &mut R) -> f64 {
    let u1: f64 = 1.0 - rng.random::<f64>(); // (0, 1]: ln is finite
    let u2: f64 = rng.random::<f64>();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLatency {
    p50: Option<HumanDuration>,
    p99: Option<HumanDuration>,
    uniform: Option<(HumanDuration, HumanDuration)>,
}

impl TryFrom<RawLatency> for LatencySpec {
    type Error = String;

    fn try_from(raw: RawLatency) -> Result<Self, String> {
        match (raw.p50, raw.p99, raw.uniform) {
            (Some(p50), Some(p99), None) => {
                if p50.0.is_zero() {
                    Err("p50 must be above 0".into())
                } else if p99.0 < p50.0 {
                    Err(format!("p99 ({p99}) must be at least p50 ({p50})"))
                } else {
                    Ok(LatencySpec::LogNormal {
                        p50: p50.0,
                        p99: p99.0,
                    })
                }
            }
            (None, None, Some((min, max))) => {
                if max.0 < min.0 {
                    Err(format!(
                        "uniform: [{min}, {max}] has its bounds the wrong way round"
                    ))
                } else {
                    Ok(LatencySpec::Uniform {
                        min: min.0,
                        max: max.0,
                    })
                }
            }
            _ => Err(LATENCY_EXPECTED.into()),
        }
    }
}

const LATENCY_EXPECTED: &str =
    "expected a latency: a duration (300ms), {p50: 800ms, p99: 4s} or {uniform: [200ms, 900ms]}";

impl<'de> Deserialize<'de> for LatencySpec {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = LatencySpec;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(LATENCY_EXPECTED)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<LatencySpec, E> {
                crate::duration::parse_duration(v)
                    .map(LatencySpec::Fixed)
                    .map_err(E::custom)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<LatencySpec, E> {
                HumanDuration::deserialize(de::value::U64Deserializer::<E>::new(v))
                    .map(|d| LatencySpec::Fixed(d.0))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<LatencySpec, A::Error> {
                let raw = RawLatency::deserialize(MapAccessDeserializer::new(map))?;
                LatencySpec::try_from(raw).map_err(de::Error::custom)
            }
        }
        deserializer.deserialize_any(V)
    }
}

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
}

impl ErrorSpec {
    /// An error from the keys a script entry or a fault window writes, validated.
    fn from_keys(
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

    fn check(&self) -> Result<(), String> {
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
enum RawMalformed {
    EmptyChoices,
}

#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(rename_all = "snake_case")]
enum RawFinishReason {
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
struct RawOk {
    latency: Option<LatencySpec>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOutcome {
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

/// One fake deployment's behaviour (a `providers.<deployment id>` entry).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderSpec {
    /// Base latency; default [`DEFAULT_LATENCY`] (200 ms, fixed).
    #[serde(default)]
    pub latency: LatencySpec,
    /// Prompts above this many input tokens fail with `context_window_exceeded` (400).
    #[serde(default)]
    pub context_window: Option<u32>,
    /// Outcomes of the first calls, one per call, in order.
    #[serde(default)]
    pub script: Vec<OutcomeSpec>,
    /// The outcome of every call after the script; default `ok`.
    #[serde(default)]
    pub then: Option<OutcomeSpec>,
    /// A stream's time to first token (same forms as `latency`); `None` means `latency`.
    #[serde(default)]
    pub ttft: Option<LatencySpec>,
    /// Time between a stream's tokens, drawn once per stream; default
    /// [`DEFAULT_INTER_TOKEN`] (20 ms, fixed).
    #[serde(default = "default_inter_token")]
    pub inter_token: LatencySpec,
    /// The answer's length when the request does not set one (`Request::output_tokens`):
    /// a number or an inclusive range drawn per call. `None` means the request's
    /// `max_tokens`, else [`DEFAULT_OUTPUT_TOKENS`](crate::provider::DEFAULT_OUTPUT_TOKENS).
    #[serde(default)]
    pub output_tokens: Option<TokenRange>,
    /// Non-text content a stream starts with, in this order (one chunk of one token each;
    /// `tool_calls` only when the request offers tools).
    #[serde(default, deserialize_with = "deserialize_emits")]
    pub emits: Vec<Emit>,
    /// The provider's own requests-per-minute quota (which may differ from the router's
    /// `rpm`): a token bucket of this capacity refilling at `rpm_limit / 60` per second of
    /// virtual time (see [`crate::quota`]). Over it, a call fails with `rate_limit` (429)
    /// and a Retry-After of the time until the bucket has room. `None`: no limit.
    #[serde(default, deserialize_with = "deserialize_limit")]
    pub rpm_limit: Option<u64>,
    /// The provider's own tokens-per-minute quota, as `rpm_limit`; a call is charged its
    /// `input_tokens` plus its answer's output tokens, up front.
    #[serde(default, deserialize_with = "deserialize_limit")]
    pub tpm_limit: Option<u64>,
    /// How a quota rejection sends its Retry-After (default `seconds`: whole seconds,
    /// rounded up).
    #[serde(default)]
    pub quota_retry_after_format: RetryAfterFormat,
}

fn deserialize_limit<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    match u64::deserialize(d)? {
        0 => Err(de::Error::custom(
            "a per-minute limit must be at least 1 (leave it out for no limit)",
        )),
        n => Ok(Some(n)),
    }
}

impl Default for ProviderSpec {
    fn default() -> Self {
        Self {
            latency: LatencySpec::default(),
            context_window: None,
            script: Vec::new(),
            then: None,
            ttft: None,
            inter_token: default_inter_token(),
            output_tokens: None,
            emits: Vec::new(),
            rpm_limit: None,
            tpm_limit: None,
            quota_retry_after_format: RetryAfterFormat::Seconds,
        }
    }
}

/// The time between a stream's tokens when a spec sets none.
pub const DEFAULT_INTER_TOKEN: Duration = Duration::from_millis(20);

fn default_inter_token() -> LatencySpec {
    LatencySpec::Fixed(DEFAULT_INTER_TOKEN)
}

/// Non-text content a provider's stream emits (`emits: [tool_calls, thinking, audio, image]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Emit {
    /// Tool-call deltas ([`ChunkKind::ToolCall`]); only when the request offers tools.
    ToolCalls,
    /// A thinking block ([`ChunkKind::Thinking`]).
    Thinking,
    /// Audio ([`ChunkKind::Audio`]).
    Audio,
    /// An image ([`ChunkKind::Image`]).
    Image,
}

impl Emit {
    /// Its name in scenario files.
    pub fn as_str(self) -> &'static str {
        match self {
            Emit::ToolCalls => "tool_calls",
            Emit::Thinking => "thinking",
            Emit::Audio => "audio",
            Emit::Image => "image",
        }
    }

    /// The chunk kind it is sent as.
    pub fn chunk_kind(self) -> ChunkKind {
        match self {
            Emit::ToolCalls => ChunkKind::ToolCall,
            Emit::Thinking => ChunkKind::Thinking,
            Emit::Audio => ChunkKind::Audio,
            Emit::Image => ChunkKind::Image,
        }
    }
}

fn deserialize_emits<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Emit>, D::Error> {
    let emits = Vec::<Emit>::deserialize(d)?;
    for (i, e) in emits.iter().enumerate() {
        if emits[..i].contains(e) {
            return Err(de::Error::custom(format!(
                "{} is listed twice; each kind is emitted once",
                e.as_str()
            )));
        }
    }
    Ok(emits)
}

/// An inclusive range of token counts; `min == max` is a fixed count (`500`, `500..8000`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TokenRange {
    /// Smallest.
    pub min: u32,
    /// Largest.
    pub max: u32,
}

impl TokenRange {
    /// A fixed count.
    pub const fn fixed(n: u32) -> Self {
        Self { min: n, max: n }
    }

    /// Whether it is a single count.
    pub const fn is_fixed(&self) -> bool {
        self.min == self.max
    }

    /// Draws one count uniformly (inclusive); a fixed count draws nothing.
    pub fn sample<R: rand::Rng + ?Sized>(&self, rng: &mut R) -> u32 {
        if self.is_fixed() {
            self.min
        } else {
            rng.random_range(self.min..=self.max)
        }
    }
}

const TOKENS_EXPECTED: &str = "a token count such as 500, or an inclusive range such as 500..8000";

/// Parses `500` or `500..8000`.
pub fn parse_token_range(text: &str) -> Result<TokenRange, String> {
    let bad = || format!("expected {TOKENS_EXPECTED}, found {text:?}");
    let number = |s: &str| s.trim().parse::<u32>().map_err(|_| bad());
    match text.split_once("..") {
        Some((lo, hi)) => {
            let (min, max) = (number(lo)?, number(hi)?);
            if min > max {
                return Err(format!("the range {text:?} is the wrong way round"));
            }
            Ok(TokenRange { min, max })
        }
        None => number(text).map(TokenRange::fixed),
    }
}

impl<'de> Deserialize<'de> for TokenRange {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = TokenRange;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(TOKENS_EXPECTED)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<TokenRange, E> {
                parse_token_range(v).map_err(E::custom)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<TokenRange, E> {
                u32::try_from(v)
                    .map(TokenRange::fixed)
                    .map_err(|_| E::custom(format!("{v} tokens is more than {}", u32::MAX)))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<TokenRange, E> {
                u64::try_from(v)
                    .map_err(|_| E::custom(format!("expected {TOKENS_EXPECTED}, found {v}")))
                    .and_then(|v| self.visit_u64(v))
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// Where a stream fault cuts a stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamCut {
    /// After this many content tokens (`after_tokens: 20`): they are delivered, then the
    /// fault happens at the instant the last of them arrives (at the first-token instant
    /// for 0). At or past the answer's length, every token is delivered and the fault takes
    /// the terminal marker's place.
    Tokens(u32),
    /// This long after the first token's instant (`after: 1.5s`): the tokens that arrive up
    /// to then are delivered, then the fault happens. A cut after the last token never fires.
    Time(Duration),
}

/// What a stream-opening success sends instead of content.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EmptyStream {
    /// One role-only delta, then the terminal marker (`stream_empty: role_only`).
    RoleOnly,
    /// The terminal marker alone (`stream_empty: true`).
    Nothing,
}

impl<'de> Deserialize<'de> for EmptyStream {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        const EXPECTED: &str = "role_only (one role-only delta, then done) or true (done only)";
        impl Visitor<'_> for V {
            type Value = EmptyStream;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(EXPECTED)
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<EmptyStream, E> {
                if v {
                    Ok(EmptyStream::Nothing)
                } else {
                    Err(E::custom(format!("false is no fault; write {EXPECTED}")))
                }
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<EmptyStream, E> {
                match v {
                    "role_only" => Ok(EmptyStream::RoleOnly),
                    _ => Err(E::custom(format!("expected {EXPECTED}, found {v:?}"))),
                }
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// How an opened stream misbehaves. Only streamed calls see it; a non-streamed call
/// answers as if the outcome were `ok`.
#[derive(Clone, Debug, PartialEq)]
pub enum StreamFault {
    /// The connection drops (`{stream_break: {after_tokens: 20}}`): `next_item` gives
    /// `Some(Err(error))`; default `api_connection`.
    Break {
        /// Where.
        at: StreamCut,
        /// The failure it breaks with (its `status` only; no Retry-After, no latency).
        error: ErrorSpec,
    },
    /// An error event inside the stream (`{stream_error_frame: {after_tokens: 5, error:
    /// overloaded}}`): `Some(Ok(StreamItem::ErrorFrame(..)))`, then the stream closes.
    ErrorFrame {
        /// Where.
        at: StreamCut,
        /// The error sent (its `status` only).
        error: ErrorSpec,
    },
    /// The stream closes without its terminal marker (`{stream_truncated: {after_tokens:
    /// 5}}`): `None`.
    Truncated {
        /// Where.
        at: StreamCut,
    },
    /// The stream stops sending for `pause` (`{stream_stall: {after_tokens: 5, for: 30s}}`),
    /// then resumes at its pace and completes: the next item arrives `pause` after the cut.
    Stall {
        /// Where.
        at: StreamCut,
        /// How long nothing arrives.
        pause: Duration,
    },
    /// A success with no content at all (`stream_empty: role_only | true`).
    Empty(EmptyStream),
    /// The same, but its end marker carries no finish reason (`stream_no_finish: role_only |
    /// true`): OpenAI's `[DONE]` without a `finish_reason` chunk, Anthropic's `message_stop`
    /// without a `message_delta`. LiteLLM 1.110.2's OpenAI path fails a stream that sent
    /// something first ("Stream ended before a finish_reason was received").
    NoFinish(EmptyStream),
}

/// A stream fault's mapping, before we know which fault it is.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStreamFault {
    after_tokens: Option<u32>,
    after: Option<HumanDuration>,
    error: Option<FailureKind>,
    status: Option<u16>,
    #[serde(rename = "for")]
    pause: Option<HumanDuration>,
}

impl RawStreamFault {
    fn cut(&self, name: &str) -> Result<StreamCut, String> {
        match (self.after_tokens, self.after) {
            (Some(n), None) => Ok(StreamCut::Tokens(n)),
            (None, Some(d)) => Ok(StreamCut::Time(d.0)),
            _ => Err(format!(
                "{name} needs exactly one of `after_tokens: N` or `after: <duration>`"
            )),
        }
    }

    fn error(&self, name: &str, default: Option<FailureKind>) -> Result<ErrorSpec, String> {
        let kind = match (self.error, default) {
            (Some(kind), _) | (None, Some(kind)) => kind,
            (None, None) => {
                return Err(format!(
                    "{name} needs `error: <kind>` (the error event sent)"
                ));
            }
        };
        let spec = ErrorSpec {
            status: self.status,
            ..ErrorSpec::new(kind)
        };
        spec.check()?;
        Ok(spec)
    }

    fn no_error(&self, name: &str) -> Result<(), String> {
        if self.error.is_some() || self.status.is_some() {
            return Err(format!(
                "{name} sends no error; `error` and `status` belong to stream_break and \
                 stream_error_frame"
            ));
        }
        Ok(())
    }

    fn no_pause(&self, name: &str) -> Result<(), String> {
        if self.pause.is_some() {
            return Err(format!("`for` belongs to stream_stall, not {name}"));
        }
        Ok(())
    }
}

/// The six stream-fault keys of an outcome or a fault window.
struct StreamKeys {
    stream_break: Option<RawStreamFault>,
    stream_error_frame: Option<RawStreamFault>,
    stream_truncated: Option<RawStreamFault>,
    stream_stall: Option<RawStreamFault>,
    stream_empty: Option<EmptyStream>,
    stream_no_finish: Option<EmptyStream>,
}

impl StreamKeys {
    fn parse(self) -> Result<Option<StreamFault>, String> {
        let set = [
            self.stream_break.is_some(),
            self.stream_error_frame.is_some(),
            self.stream_truncated.is_some(),
            self.stream_stall.is_some(),
            self.stream_empty.is_some(),
            self.stream_no_finish.is_some(),
        ]
        .iter()
        .filter(|&&b| b)
        .count();
        if set > 1 {
            return Err("set one stream fault (stream_break, stream_error_frame, \
                 stream_truncated, stream_stall, stream_empty or stream_no_finish), not several"
                .into());
        }
        if let Some(raw) = self.stream_break {
            let name = "stream_break";
            raw.no_pause(name)?;
            return Ok(Some(StreamFault::Break {
                at: raw.cut(name)?,
                error: raw.error(name, Some(FailureKind::ApiConnection))?,
            }));
        }
        if let Some(raw) = self.stream_error_frame {
            let name = "stream_error_frame";
            raw.no_pause(name)?;
            return Ok(Some(StreamFault::ErrorFrame {
                at: raw.cut(name)?,
                error: raw.error(name, None)?,
            }));
        }
        if let Some(raw) = self.stream_truncated {
            let name = "stream_truncated";
            raw.no_pause(name)?;
            raw.no_error(name)?;
            return Ok(Some(StreamFault::Truncated { at: raw.cut(name)? }));
        }
        if let Some(raw) = self.stream_stall {
            let name = "stream_stall";
            raw.no_error(name)?;
            let at = raw.cut(name)?;
            let pause = raw
                .pause
                .ok_or("stream_stall needs `for: <duration>` (how long nothing arrives)")?;
            return Ok(Some(StreamFault::Stall { at, pause: pause.0 }));
        }
        if let Some(kind) = self.stream_no_finish {
            return Ok(Some(StreamFault::NoFinish(kind)));
        }
        Ok(self.stream_empty.map(StreamFault::Empty))
    }
}

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

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFault {
    deployment: Option<String>,
    model_group: Option<String>,
    from: Option<HumanDuration>,
    to: Option<HumanDuration>,
    probability: Option<f64>,
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
}

impl TryFrom<RawFault> for FaultSpec {
    type Error = String;

    fn try_from(raw: RawFault) -> Result<Self, String> {
        let target = match (raw.deployment, raw.model_group) {
            (Some(d), None) => FaultTarget::Deployment(d),
            (None, Some(g)) => FaultTarget::ModelGroup(g),
            _ => return Err("a fault names exactly one of `deployment` or `model_group`".into()),
        };
        let from = raw.from.map_or(Duration::ZERO, |d| d.0);
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
        let probability = raw.probability.unwrap_or(1.0);
        if !(0.0..=1.0).contains(&probability) {
            return Err(format!(
                "probability must be between 0 and 1, found {probability}"
            ));
        }
        let stream = StreamKeys {
            stream_break: raw.stream_break,
            stream_error_frame: raw.stream_error_frame,
            stream_truncated: raw.stream_truncated,
            stream_stall: raw.stream_stall,
            stream_empty: raw.stream_empty,
            stream_no_finish: raw.stream_no_finish,
        }
        .parse()?;
        let effect = match (raw.error, stream) {
            (Some(_), Some(_)) => {
                return Err(
                    "a fault is an error (`error`), a slowdown (`latency`) or a \
                     stream fault, not both an error and a stream fault"
                        .into(),
                );
            }
            (None, Some(fault)) => {
                if raw.status.is_some()
                    || raw.retry_after.is_some()
                    || raw.retry_after_format.is_some()
                    || raw.latency.is_some()
                {
                    return Err("a stream fault takes its keys inside it: {stream_break: \
                         {after_tokens: 20, error: timeout}}; it takes no latency"
                        .into());
                }
                FaultEffect::Stream(fault)
            }
            (Some(kind), None) => FaultEffect::Error(ErrorSpec::from_keys(
                kind,
                raw.status,
                raw.retry_after,
                raw.retry_after_format,
                raw.latency,
            )?),
            (None, None) => {
                if raw.status.is_some()
                    || raw.retry_after.is_some()
                    || raw.retry_after_format.is_some()
                {
                    return Err("status and retry_after need an `error`".into());
                }
                match raw.latency {
                    Some(latency) => FaultEffect::Slowdown(latency),
                    None => {
                        return Err("a fault sets `error` (a failure kind), `latency`, or \
                             both; or a stream fault (stream_break, stream_error_frame, \
                             stream_truncated, stream_stall, stream_empty, stream_no_finish)"
                            .into());
                    }
                }
            }
        };
        Ok(FaultSpec {
            target,
            from,
            to,
            probability,
            effect,
        })
    }
}

impl<'de> Deserialize<'de> for FaultSpec {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = RawFault::deserialize(deserializer)?;
        FaultSpec::try_from(raw).map_err(de::Error::custom)
    }
}
