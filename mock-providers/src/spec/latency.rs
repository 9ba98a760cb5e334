//! Latency distributions (`300ms`, `{p50, p99}`, `{uniform: [a, b]}`) and drawing from them.
//!
//! Separate because latency, TTFT, inter-token gaps and latency faults all share it.

use std::fmt;
use std::time::Duration;

use rand::RngExt;
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
        self.prepare().sample(rng)
    }

    /// The distribution with its constants worked out, for drawing from it many times.
    pub fn prepare(&self) -> PreparedLatency {
        PreparedLatency(match *self {
            LatencySpec::Fixed(d) => Prepared::Fixed(d),
            LatencySpec::Uniform { min, max } => Prepared::Uniform {
                lo: min.as_nanos().div_ceil(1_000_000) as u64,
                hi: (max.as_nanos() / 1_000_000) as u64,
            },
            LatencySpec::LogNormal { p50, p99 } => {
                let p50_ms = p50.as_secs_f64() * 1000.0;
                let p99_ms = p99.as_secs_f64() * 1000.0;
                let mu = p50_ms.ln();
                let sigma = (p99_ms.ln() - mu) / Z99;
                Prepared::LogNormal { mu, sigma }
            }
        })
    }
}

/// A [`LatencySpec`] ready to draw from: a log-normal's `mu` and `sigma` are taken once
/// (two of the three logarithms a draw took; a provider draws its base latency on every
/// call). It draws exactly what [`LatencySpec::sample`] draws, which is this.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PreparedLatency(Prepared);

#[derive(Clone, Copy, Debug, PartialEq)]
enum Prepared {
    Fixed(Duration),
    LogNormal { mu: f64, sigma: f64 },
    Uniform { lo: u64, hi: u64 },
}

impl PreparedLatency {
    /// Draws one latency. A fixed latency draws nothing.
    pub fn sample<R: rand::Rng + ?Sized>(&self, rng: &mut R) -> Duration {
        match self.0 {
            Prepared::Fixed(d) => d,
            Prepared::Uniform { lo, hi } => {
                Duration::from_millis(rng.random_range(lo..=hi.max(lo)))
            }
            Prepared::LogNormal { mu, sigma } => {
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
pub(super) struct RawLatency {
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
