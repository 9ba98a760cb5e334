//! Each deployment's provider model, fitted to its successful calls: the latency of plain calls,
//! and for streams the time to first token, the time between tokens and the answer's length.
//!
//! Latencies go into HdrHistograms (microseconds, 3 significant digits), so memory is fixed
//! whatever the number of calls. The scenario's latency forms are fixed or log-normal given by
//! its median and 99th percentile (`{p50, p99}`, which is what routersim draws from), so the
//! fit is those two percentiles; a spread under 5 % is written as a fixed latency.

use std::collections::BTreeMap;
use std::sync::Arc;

use hdrhistogram::Histogram;

use crate::call::{Call, Outcome};

/// Microseconds recorded at most (one hour): longer calls are recorded as this.
const MAX_US: u64 = 3_600_000_000;

fn histogram() -> Option<Histogram<u64>> {
    Histogram::new_with_bounds(1, MAX_US, 3).ok()
}

fn record(h: &mut Option<Histogram<u64>>, seconds: f64) {
    if let Some(h) = h.as_mut() {
        let us = (seconds * 1e6).round().clamp(1.0, MAX_US as f64) as u64;
        let _ = h.record(us);
    }
}

/// What one deployment's successful calls looked like.
#[derive(Clone, Debug)]
pub struct DeploymentFit {
    latency: Option<Histogram<u64>>,
    ttft: Option<Histogram<u64>>,
    inter_token: Option<Histogram<u64>>,
    tokens: Option<Histogram<u64>>,
}

impl Default for DeploymentFit {
    fn default() -> Self {
        Self {
            latency: histogram(),
            ttft: histogram(),
            inter_token: histogram(),
            tokens: histogram(),
        }
    }
}

/// A latency distribution in the scenario's forms.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Latency {
    /// Always this long, seconds.
    Fixed(f64),
    /// Log-normal by its median and 99th percentile, seconds.
    LogNormal {
        /// Median.
        p50: f64,
        /// 99th percentile.
        p99: f64,
    },
}

/// The fitted model of one deployment.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProviderModel {
    /// Plain calls' latency (from their successes).
    pub latency: Option<Latency>,
    /// Streams' time to first token.
    pub ttft: Option<Latency>,
    /// Streams' median time between tokens, seconds.
    pub inter_token: Option<f64>,
    /// Streams' answer lengths: 10th and 90th percentile.
    pub output_tokens: Option<(u32, u32)>,
    /// Successful plain calls seen.
    pub plain_calls: u64,
    /// Successful streams seen.
    pub streams: u64,
}

fn latency_of(h: &Option<Histogram<u64>>) -> Option<Latency> {
    let h = h.as_ref().filter(|h| !h.is_empty())?;
    let p50 = h.value_at_quantile(0.5) as f64 / 1e6;
    let p99 = (h.value_at_quantile(0.99) as f64 / 1e6).max(p50);
    Some(if p99 <= p50 * 1.05 {
        Latency::Fixed(p50)
    } else {
        Latency::LogNormal { p50, p99 }
    })
}

impl DeploymentFit {
    /// Adds a successful call.
    pub fn add(&mut self, call: &Call) {
        if call.outcome != Outcome::Ok {
            return;
        }
        match (call.stream, call.first_token) {
            (Some(true), Some(first)) => {
                record(&mut self.ttft, first - call.start);
                if let Some(tokens) = call.output_tokens.filter(|t| *t > 1) {
                    record(
                        &mut self.inter_token,
                        (call.end - first).max(0.0) / f64::from(tokens - 1),
                    );
                }
                if let (Some(h), Some(t)) =
                    (self.tokens.as_mut(), call.output_tokens.filter(|t| *t > 0))
                {
                    let _ = h.record(u64::from(t));
                }
            }
            _ => record(&mut self.latency, call.latency()),
        }
    }

    /// The fitted model.
    pub fn model(&self) -> ProviderModel {
        let count = |h: &Option<Histogram<u64>>| h.as_ref().map_or(0, Histogram::len);
        let inter_token = self
            .inter_token
            .as_ref()
            .filter(|h| !h.is_empty())
            .map(|h| h.value_at_quantile(0.5) as f64 / 1e6);
        let output_tokens = self.tokens.as_ref().filter(|h| !h.is_empty()).map(|h| {
            (
                h.value_at_quantile(0.1) as u32,
                h.value_at_quantile(0.9) as u32,
            )
        });
        ProviderModel {
            latency: latency_of(&self.latency),
            ttft: latency_of(&self.ttft),
            inter_token,
            output_tokens,
            plain_calls: count(&self.latency),
            streams: count(&self.ttft),
        }
    }
}

/// Every deployment's fit.
#[derive(Clone, Debug, Default)]
pub struct Fits {
    /// By deployment.
    pub deployments: BTreeMap<Arc<str>, DeploymentFit>,
}

impl Fits {
    /// Adds a call of `deployment`.
    pub fn add(&mut self, deployment: &Arc<str>, call: &Call) {
        self.deployments
            .entry(deployment.clone())
            .or_default()
            .add(call);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::call::Scope;

    #[test]
    fn plain_latencies_and_stream_paces_are_fitted() {
        let mut fit = DeploymentFit::default();
        for i in 0..100 {
            let mut c = Call::new(
                1,
                0.0,
                0.040 + f64::from(i) * 0.001,
                Arc::from("g"),
                Scope::Attempt,
            );
            fit.add(&c);
            c.stream = Some(true);
            c.first_token = Some(0.060);
            c.end = 0.060 + 0.010 * 29.0;
            c.output_tokens = Some(30);
            fit.add(&c);
        }
        let model = fit.model();
        let Some(Latency::LogNormal { p50, p99 }) = model.latency else {
            panic!("{model:?}")
        };
        assert!(
            (p50 - 0.0895).abs() < 0.001 && (p99 - 0.139).abs() < 0.001,
            "{p50} {p99}"
        );
        let Some(Latency::Fixed(ttft)) = model.ttft else {
            panic!("{model:?}")
        };
        assert!((ttft - 0.060).abs() < 1e-4, "{ttft}");
        assert!((model.inter_token.unwrap() - 0.010).abs() < 1e-4);
        assert_eq!(model.output_tokens, Some((30, 30)));
    }
}
