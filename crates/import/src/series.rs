//! Each deployment's error series: per time bucket (`--bucket`, epoch-aligned), the provider
//! calls it got, its successes, and per failure kind the failures, with the first and last
//! instant of each and the Retry-After values seen. Memory follows the buckets that had calls,
//! never the rows.
//!
//! A bucket without calls is *unobserved* (the deployment was cooling, or idle): the
//! segmentation skips it rather than reading it as healthy.

use std::collections::BTreeMap;
use std::sync::Arc;

use routersim_engine::failure::FailureKind;

use crate::call::{Call, Outcome};

/// A failure kind of the series: failures before any content, and streams cut after content
/// are different faults (`error:` and `stream_break:` windows).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SeriesKind {
    /// The call failed with this kind before any content.
    Error(FailureKind),
    /// A stream broke with this kind after content reached the caller.
    Cut(FailureKind),
}

impl SeriesKind {
    /// Its name in messages (`rate_limit`, `stream_break`).
    pub fn name(self) -> String {
        match self {
            SeriesKind::Error(kind) => kind.as_str().to_string(),
            SeriesKind::Cut(FailureKind::ApiConnection) => "stream_break".to_string(),
            SeriesKind::Cut(kind) => format!("stream_break ({})", kind.as_str()),
        }
    }
}

/// One failure kind's count in a bucket.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KindCounts {
    /// Failures of the kind.
    pub failures: u32,
    /// The earliest one's start (Unix seconds).
    pub first: f64,
    /// The latest one's start.
    pub last: f64,
    /// Retry-After values seen, ms → count.
    pub retry_after_ms: BTreeMap<u64, u32>,
    /// Tokens delivered before a cut, → count.
    pub tokens: BTreeMap<u32, u32>,
    /// The failures' own latencies, in µs rounded to two significant digits (a few hundred
    /// values at most) → count.
    pub latency_us: BTreeMap<u64, u32>,
}

/// `us` rounded to two significant digits.
fn two_digits(us: u64) -> u64 {
    let mut scale = 1;
    while us / scale >= 100 {
        scale *= 10;
    }
    (us + scale / 2) / scale * scale
}

/// One bucket of one deployment.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Bucket {
    /// Provider calls that started in the bucket.
    pub calls: u32,
    /// Of those, streams.
    pub streams: u32,
    /// Successes.
    pub ok: u32,
    /// The earliest success's start (Unix seconds); meaningful when `ok > 0`.
    pub first_ok: f64,
    /// The latest success's start.
    pub last_ok: f64,
    /// Failures by kind.
    pub kinds: Vec<(SeriesKind, KindCounts)>,
}

impl Bucket {
    /// The calls a kind's rate is over: streams for a cut (only a stream can be cut), every
    /// call otherwise.
    pub fn trials(&self, kind: SeriesKind) -> u32 {
        match kind {
            SeriesKind::Cut(_) => self.streams,
            SeriesKind::Error(_) => self.calls,
        }
    }

    /// The counts of `kind` (`None`: no failure of it here).
    pub fn kind(&self, kind: SeriesKind) -> Option<&KindCounts> {
        self.kinds.iter().find(|(k, _)| *k == kind).map(|(_, c)| c)
    }
}

/// Every deployment's series.
#[derive(Clone, Debug)]
pub struct Series {
    /// Bucket width, seconds.
    pub width: f64,
    /// Deployment → bucket index (`floor(start / width)`) → bucket.
    pub deployments: BTreeMap<Arc<str>, BTreeMap<i64, Bucket>>,
}

impl Series {
    /// Empty series with buckets of `width` seconds.
    pub fn new(width: f64) -> Self {
        Self {
            width,
            deployments: BTreeMap::new(),
        }
    }

    /// The bucket index of an instant.
    pub fn index(&self, at: f64) -> i64 {
        (at / self.width).floor() as i64
    }

    /// Adds a provider call of `deployment`.
    pub fn add(&mut self, deployment: &Arc<str>, call: &Call) {
        let index = self.index(call.start);
        let bucket = self
            .deployments
            .entry(deployment.clone())
            .or_default()
            .entry(index)
            .or_default();
        bucket.calls += 1;
        if call.stream == Some(true) {
            bucket.streams += 1;
        }
        let (kind, tokens) = match call.outcome {
            Outcome::Ok => {
                if bucket.ok == 0 || call.start < bucket.first_ok {
                    bucket.first_ok = call.start;
                }
                if bucket.ok == 0 || call.start > bucket.last_ok {
                    bucket.last_ok = call.start;
                }
                bucket.ok += 1;
                return;
            }
            Outcome::Failed(kind) => (SeriesKind::Error(kind), None),
            Outcome::StreamCut { kind, tokens } => (SeriesKind::Cut(kind), Some(tokens)),
            Outcome::NoDeployment => return,
        };
        let at = match bucket.kinds.iter().position(|(k, _)| *k == kind) {
            Some(at) => at,
            None => {
                bucket.kinds.push((kind, KindCounts::default()));
                bucket.kinds.len() - 1
            }
        };
        let counts = &mut bucket.kinds[at].1;
        if counts.failures == 0 || call.start < counts.first {
            counts.first = call.start;
        }
        if counts.failures == 0 || call.start > counts.last {
            counts.last = call.start;
        }
        counts.failures += 1;
        *counts
            .latency_us
            .entry(two_digits((call.latency() * 1e6).round() as u64))
            .or_default() += 1;
        if let Some(ra) = call.retry_after {
            *counts
                .retry_after_ms
                .entry((ra * 1000.0).round() as u64)
                .or_default() += 1;
        }
        if let Some(tokens) = tokens {
            *counts.tokens.entry(tokens).or_default() += 1;
        }
    }

    /// The failure kinds each deployment had, in kind order.
    pub fn kinds_of(&self, deployment: &Arc<str>) -> Vec<SeriesKind> {
        let mut kinds: Vec<SeriesKind> = self
            .deployments
            .get(deployment)
            .into_iter()
            .flat_map(|b| b.values())
            .flat_map(|b| b.kinds.iter().map(|(k, _)| *k))
            .collect();
        kinds.sort();
        kinds.dedup();
        kinds
    }
}
