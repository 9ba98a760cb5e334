//! What a validated `traffic` entry is: an explicit request (`at`) or a generated stream
//! (`rate`), each with its request template, and how many requests it is expected to make.
//!
//! Separate from the arrival generator so that the scenario loader and the traffic file
//! reader depend on the description only, not on how arrivals are produced.

use std::time::Duration;

use routersim_mock_providers::spec::TokenRange;

use super::ramp::Ramp;
use super::template::RequestTemplate;

/// `input_tokens` when the scenario sets none.
pub const DEFAULT_INPUT_TOKENS: u32 = 500;

/// `count` identical requests arriving at `at`.
#[derive(Clone, Debug, PartialEq)]
pub struct ExplicitRequest {
    /// Arrival time from the start of the run.
    pub at: Duration,
    /// How many (default 1).
    pub count: u32,
    /// Prompt size.
    pub input_tokens: u32,
    /// `stream: true`.
    pub stream: bool,
    /// The answer's length (`Request::output_tokens`), when set.
    pub output_tokens: Option<u32>,
    /// The request.
    pub template: RequestTemplate,
}

/// How a stream spaces its arrivals.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ArrivalProcess {
    /// Exponential gaps with mean `1/rate` (open-loop traffic).
    #[default]
    Poisson,
    /// Fixed gaps of `1/rate`, the first at `from`.
    Uniform,
}

/// Generated traffic: `rate` requests per second between `from` and `to` (exclusive), or a
/// linear [`Ramp`] from `from` (`stages:`).
#[derive(Clone, Debug, PartialEq)]
pub struct TrafficStream {
    /// Requests per second (with a ramp: its peak).
    pub rate_per_sec: f64,
    /// First possible arrival.
    pub from: Duration,
    /// No arrival at or after this.
    pub to: Duration,
    /// Spacing.
    pub arrival: ArrivalProcess,
    /// Prompt sizes, drawn uniformly (inclusive).
    pub input_tokens: TokenRange,
    /// Share of its requests that are streamed: 0 none, 1 all (`stream: true`), else each
    /// request is streamed with this probability.
    pub stream: f64,
    /// Answer lengths (`Request::output_tokens`), drawn uniformly (inclusive), when set.
    pub output_tokens: Option<TokenRange>,
    /// The request.
    pub template: RequestTemplate,
    /// `stages:`: the rate ramps linearly from `from` (which `to` then ends).
    pub ramp: Option<Ramp>,
}

/// One `traffic` entry.
#[derive(Clone, Debug, PartialEq)]
pub enum TrafficSpec {
    /// An explicit request (`at:`).
    Request(ExplicitRequest),
    /// A generated stream (`rate:`).
    Stream(TrafficStream),
}

impl TrafficSpec {
    /// The request template every request of this entry is built from.
    pub fn template(&self) -> &RequestTemplate {
        match self {
            TrafficSpec::Request(r) => &r.template,
            TrafficSpec::Stream(s) => &s.template,
        }
    }

    /// How many requests this entry is expected to produce (exact for explicit requests and
    /// uniform streams, the mean for Poisson streams).
    pub fn expected_count(&self) -> f64 {
        match self {
            TrafficSpec::Request(r) => f64::from(r.count),
            TrafficSpec::Stream(s) => match (&s.ramp, s.arrival) {
                (Some(ramp), ArrivalProcess::Poisson) => ramp.integral(s.to - s.from),
                // The k-th arrival (from 1) is where the integral reaches k, before the end.
                (Some(ramp), ArrivalProcess::Uniform) => {
                    (ramp.integral(s.to - s.from).ceil() - 1.0).max(0.0)
                }
                (None, ArrivalProcess::Poisson) => s.rate_per_sec * (s.to - s.from).as_secs_f64(),
                (None, ArrivalProcess::Uniform) => uniform_count(s) as f64,
            },
        }
    }
}

/// Arrivals of a uniform stream: `k` such that `from + k/rate < to`.
fn uniform_count(s: &TrafficStream) -> u64 {
    let mut k = ((s.to - s.from).as_secs_f64() * s.rate_per_sec).ceil() as u64;
    // Correct float edge cases against the exact arrival times.
    while k > 0 && uniform_offset(s.rate_per_sec, k - 1) >= s.to - s.from {
        k -= 1;
    }
    k
}

/// The `k`-th gap sum of a uniform stream, rounded to the nanosecond (not accumulated, so
/// spacing never drifts).
pub(super) fn uniform_offset(rate_per_sec: f64, k: u64) -> Duration {
    Duration::from_nanos((k as f64 * 1e9 / rate_per_sec).round() as u64)
}
