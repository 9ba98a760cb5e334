//! What a proxy session did, as its stop lines say it: requests served and failed, the ones
//! cut when it stopped, and with Redis its commands, failures and the time spent degraded.

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
}
