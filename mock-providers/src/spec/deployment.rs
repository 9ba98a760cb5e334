//! One fake deployment (a `providers.<id>` entry): its latency, script, streams, emits,
//! output-token range and quotas.
//!
//! Separate from the outcome grammar it uses: this is the per-deployment settings record.

use std::fmt;
use std::time::Duration;

use rand::RngExt;
use routersim_engine::stream::ChunkKind;
use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};

use super::error::RetryAfterFormat;
use super::latency::LatencySpec;
use super::outcome::OutcomeSpec;

/// One fake deployment's behaviour (a `providers.<deployment id>` entry).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderSpec {
    /// Base latency; default [`DEFAULT_LATENCY`](super::DEFAULT_LATENCY) (200 ms, fixed).
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
