//! What a proxy session did, as its stop lines say it: requests served and failed, the ones
//! cut when it stopped, and with Redis its commands, failures and the time spent degraded.
//! The same numbers while it runs: `GET /metrics`, in the Prometheus text exposition format
//! (0.0.4, as `metrics.prom`), so a dashboard sees a replica routing on its own state without
//! waiting for its stop line.

use std::time::Duration;

/// What the proxy's Redis store did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RedisReport {
    /// Read round trips sent.
    pub reads: u64,
    /// Writes answered.
    pub writes: u64,
    /// Commands that failed or timed out.
    pub errors: u64,
    /// Writes not sent because the store was degraded.
    pub skipped: u64,
    /// Time spent degraded (routing on this replica's own state).
    pub degraded: Duration,
    /// Outages (times the store degraded).
    pub outages: u64,
    /// Whether it was still degraded when the proxy stopped.
    pub still_degraded: bool,
}

/// What a proxy session did.
#[derive(Clone, Copy, Debug, Default)]
pub struct ProxyReport {
    /// Chat requests the engine served.
    pub requests: u64,
    /// Of which succeeded.
    pub ok: u64,
    /// Requests still in the engine when the proxy stopped (their callers got no end).
    pub cut: u64,
    /// Of which streams.
    pub cut_streams: u64,
    /// Why it stopped.
    pub stopped_by: &'static str,
    /// With Redis: what the store did.
    pub redis: Option<RedisReport>,
}

impl ProxyReport {
    /// `stopped (sigterm): 21 requests served, 21 ok, 0 failed[, 2 cut at stop (1 stream)]`
    /// and, with Redis, `redis: R reads, W writes, E failed commands, degraded D s (N
    /// outages), S writes skipped while degraded`.
    pub fn stop_lines(&self) -> Vec<String> {
        let mut first = format!(
            "stopped ({}): {} requests served, {} ok, {} failed",
            self.stopped_by,
            self.requests,
            self.ok,
            self.requests.saturating_sub(self.ok)
        );
        if self.cut > 0 {
            first.push_str(&format!(
                ", {} cut at stop ({} stream{})",
                self.cut,
                self.cut_streams,
                if self.cut_streams == 1 { "" } else { "s" }
            ));
        }
        let mut lines = vec![first];
        if let Some(r) = &self.redis {
            lines.push(format!(
                "redis: {} reads, {} writes, {} failed commands, degraded {:.3} s ({} outage{}{}), \
                 {} writes skipped while degraded",
                r.reads,
                r.writes,
                r.errors,
                r.degraded.as_secs_f64(),
                r.outages,
                if r.outages == 1 { "" } else { "s" },
                if r.still_degraded {
                    ", still degraded"
                } else {
                    ""
                },
                r.skipped
            ));
        }
        lines
    }
}

/// One `# HELP`, `# TYPE` and sample of a metric without labels.
fn sample(out: &mut String, name: &str, kind: &str, help: &str, value: &str) {
    out.push_str(&format!(
        "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}\n"
    ));
}

impl ProxyReport {
    /// The session so far in the Prometheus text exposition format (0.0.4): requests, and with
    /// Redis its commands, the time spent degraded and the outages (`GET /metrics`).
    pub fn metrics_text(&self) -> String {
        let mut out = String::new();
        let count = |n: u64| n.to_string();
        sample(
            &mut out,
            "routersim_proxy_requests_total",
            "counter",
            "Chat requests the engine finished.",
            &count(self.requests),
        );
        sample(
            &mut out,
            "routersim_proxy_requests_failed_total",
            "counter",
            "Chat requests the engine finished with a failure.",
            &count(self.requests.saturating_sub(self.ok)),
        );
        sample(
            &mut out,
            "routersim_proxy_requests_in_flight",
            "gauge",
            "Chat requests in the engine now.",
            &count(self.cut),
        );
        sample(
            &mut out,
            "routersim_proxy_streams_in_flight",
            "gauge",
            "Streamed chat requests in the engine now.",
            &count(self.cut_streams),
        );
        let Some(r) = &self.redis else {
            return out;
        };
        for (name, help, n) in [
            ("reads", "Redis read round trips sent.", r.reads),
            ("writes", "Redis writes answered.", r.writes),
            (
                "failed_commands",
                "Redis commands that failed or timed out.",
                r.errors,
            ),
            (
                "writes_skipped",
                "Writes not sent because the store was degraded.",
                r.skipped,
            ),
            ("outages", "Times the store degraded.", r.outages),
        ] {
            sample(
                &mut out,
                &format!("routersim_proxy_redis_{name}_total"),
                "counter",
                help,
                &count(n),
            );
        }
        sample(
            &mut out,
            "routersim_proxy_redis_degraded_seconds_total",
            "counter",
            "Time spent degraded, routing on this replica's own state (the current outage included).",
            &format!("{:.3}", r.degraded.as_secs_f64()),
        );
        sample(
            &mut out,
            "routersim_proxy_redis_degraded",
            "gauge",
            "1 while the store is degraded, else 0.",
            if r.still_degraded { "1" } else { "0" },
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_lines_say_what_was_cut_and_how_long_redis_was_away() {
        let mut report = ProxyReport {
            requests: 21,
            ok: 20,
            stopped_by: "sigterm",
            ..ProxyReport::default()
        };
        assert_eq!(
            report.stop_lines(),
            vec!["stopped (sigterm): 21 requests served, 20 ok, 1 failed"]
        );
        report.cut = 2;
        report.cut_streams = 1;
        report.redis = Some(RedisReport {
            reads: 9,
            writes: 3,
            errors: 2,
            skipped: 4,
            degraded: Duration::from_millis(3250),
            outages: 1,
            still_degraded: false,
        });
        assert_eq!(
            report.stop_lines(),
            vec![
                "stopped (sigterm): 21 requests served, 20 ok, 1 failed, 2 cut at stop (1 stream)",
                "redis: 9 reads, 3 writes, 2 failed commands, degraded 3.250 s (1 outage), 4 \
                 writes skipped while degraded",
            ]
        );
    }

    #[test]
    fn metrics_say_the_stop_lines_numbers_while_running() {
        let mut report = ProxyReport {
            requests: 21,
            ok: 20,
            cut: 2,
            cut_streams: 1,
            stopped_by: "running",
            redis: None,
        };
        let text = report.metrics_text();
        assert!(text.contains(
            "# TYPE routersim_proxy_requests_total counter\nroutersim_proxy_requests_total 21\n"
        ));
        assert!(text.contains("\nroutersim_proxy_requests_failed_total 1\n"));
        assert!(text.contains("\nroutersim_proxy_requests_in_flight 2\n"));
        assert!(text.contains("\nroutersim_proxy_streams_in_flight 1\n"));
        assert!(!text.contains("redis"));
        report.redis = Some(RedisReport {
            reads: 9,
            writes: 3,
            errors: 2,
            skipped: 4,
            degraded: Duration::from_millis(3250),
            outages: 1,
            still_degraded: true,
        });
        let text = report.metrics_text();
        for line in [
            "routersim_proxy_redis_reads_total 9",
            "routersim_proxy_redis_writes_total 3",
            "routersim_proxy_redis_failed_commands_total 2",
            "routersim_proxy_redis_writes_skipped_total 4",
            "routersim_proxy_redis_outages_total 1",
            "routersim_proxy_redis_degraded_seconds_total 3.250",
            "routersim_proxy_redis_degraded 1",
        ] {
            assert!(text.lines().any(|l| l == line), "{line}: {text}");
        }
        // Every sample has its HELP and TYPE.
        let samples = text.lines().filter(|l| !l.starts_with('#')).count();
        assert_eq!(text.matches("# TYPE ").count(), samples);
        assert_eq!(text.matches("# HELP ").count(), samples);
    }
}
