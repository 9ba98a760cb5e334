//! Provider-side live metrics: the calls `routersim serve` answered, for a Prometheus scrape of
//! its `GET /metrics`, beside the rows of `provider_calls.csv`.
//!
//! `serve` sees provider calls, not a router's requests (one request may be several calls, or
//! none), so its families have names of their own, `routersim_provider_*`, and never reuse a
//! request family's name. A counter per deployment and outcome (the call log's `outcome`
//! column: `ok`, a failure kind, `break:<kind>`, …) and a latency histogram per deployment
//! with `metrics.prom`'s bucket bounds: both finite sets, so memory stays bounded however long
//! the server runs.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::sync::Mutex;
use std::time::Duration;

use routersim_engine::sync::lock_unpoisoned;

use crate::prom::{LatencyBuckets, label_value, write_histogram_samples};

/// The calls counter.
pub const PROVIDER_CALLS_TOTAL: &str = "routersim_provider_calls_total";
/// The calls' latency histogram.
pub const PROVIDER_CALL_LATENCY: &str = "routersim_provider_call_latency_seconds";

#[derive(Debug, Default)]
struct Counts {
    calls: BTreeMap<(String, String), u64>,
    latency: BTreeMap<String, LatencyBuckets>,
}

/// The calls a fake-provider server answered, by deployment and outcome.
#[derive(Debug, Default)]
pub struct ProviderCallMetrics {
    counts: Mutex<Counts>,
}

impl ProviderCallMetrics {
    /// Counts one call of `deployment` that ended with `outcome` after `latency` (arrival to
    /// its end, the call log's `latency_ms`).
    pub fn record_call(&self, deployment: &str, outcome: &str, latency: Duration) {
        let mut c = lock_unpoisoned(&self.counts);
        *c.calls
            .entry((deployment.to_string(), outcome.to_string()))
            .or_default() += 1;
        let us = u64::try_from(latency.as_micros()).unwrap_or(u64::MAX);
        c.latency
            .entry(deployment.to_string())
            .or_default()
            .record(us);
    }

    /// The exposition now, in the text format (version 0.0.4).
    pub fn render(&self) -> String {
        let mut out = Vec::new();
        // Writing to a Vec cannot fail.
        let _ = self.write(&mut out);
        String::from_utf8_lossy(&out).into_owned()
    }

    fn write(&self, out: &mut impl Write) -> io::Result<()> {
        let c = lock_unpoisoned(&self.counts);
        let name = PROVIDER_CALLS_TOTAL;
        writeln!(
            out,
            "# HELP {name} Provider calls answered (rows of provider_calls.csv), by deployment and outcome."
        )?;
        writeln!(out, "# TYPE {name} counter")?;
        for ((deployment, outcome), n) in &c.calls {
            writeln!(
                out,
                "{name}{{deployment=\"{}\",outcome=\"{}\"}} {n}",
                label_value(deployment),
                label_value(outcome)
            )?;
        }
        let name = PROVIDER_CALL_LATENCY;
        writeln!(
            out,
            "# HELP {name} Provider call latency (arrival to the call's end, a stream's last byte), wall-clock seconds."
        )?;
        writeln!(out, "# TYPE {name} histogram")?;
        for (deployment, latency) in &c.latency {
            let labels = format!("deployment=\"{}\"", label_value(deployment));
            write_histogram_samples(name, latency, &labels, out)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_are_counted_by_deployment_and_outcome() {
        let metrics = ProviderCallMetrics::default();
        metrics.record_call("a", "ok", Duration::from_millis(3));
        metrics.record_call("a", "rate_limit", Duration::from_millis(40));
        metrics.record_call("a", "ok", Duration::from_millis(4));
        metrics.record_call("b\"x", "break:api_connection", Duration::from_secs(3));
        let text = metrics.render();
        for line in [
            "routersim_provider_calls_total{deployment=\"a\",outcome=\"ok\"} 2",
            "routersim_provider_calls_total{deployment=\"a\",outcome=\"rate_limit\"} 1",
            "routersim_provider_calls_total{deployment=\"b\\\"x\",outcome=\"break:api_connection\"} 1",
            // 3 and 4 ms under 5 ms; 40 ms under 50 ms.
            "routersim_provider_call_latency_seconds_bucket{deployment=\"a\",le=\"0.005\"} 2",
            "routersim_provider_call_latency_seconds_bucket{deployment=\"a\",le=\"0.05\"} 3",
            "routersim_provider_call_latency_seconds_count{deployment=\"a\"} 3",
            "routersim_provider_call_latency_seconds_sum{deployment=\"a\"} 0.047",
            "routersim_provider_call_latency_seconds_bucket{deployment=\"b\\\"x\",le=\"2.5\"} 0",
            "routersim_provider_call_latency_seconds_bucket{deployment=\"b\\\"x\",le=\"5\"} 1",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} in\n{text}");
        }
    }
}
