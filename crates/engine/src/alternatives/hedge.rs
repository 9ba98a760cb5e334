//! Request hedging (`hedge_after`): when a request's first attempt has not answered after a
//! delay, a second attempt starts on another deployment of the group; the first answer wins
//! and the other call is cancelled (dropped: its future is never polled again).
//!
//! The idea is Dean and Barroso's "hedged requests" (*The Tail at Scale*, CACM 2013: "defer
//! sending a secondary request until the first request has been outstanding for more than
//! the 95th-percentile expected latency"), also gRPC A6's `hedgingPolicy` (`hedgingDelay`).
//!
//! `hedge_after` is a duration (`800ms`) or a percentile `pNN` (`p95`, 1 to 99) of the
//! group's recent successful latency. The estimator is a fixed window ([`LatencyWindow`]):
//! the last [`WINDOW`] successful attempt latencies of each group (a ring buffer, so memory
//! is flat whatever the run's length), the nearest-rank percentile of a sorted copy. Warm-up:
//! until a group has [`WARMUP`] samples, a percentile delay is unknown and the request is
//! not hedged (no extra cost before the router knows what "slow" is).
//!
//! Which requests: non-streamed requests, on their group's first pick of a visit (the
//! retry loop's first attempt); streamed requests are never hedged (a stream that has sent
//! content cannot be raced without duplicating output). The hedge goes to another
//! deployment of the same group that is available (not cooling, not ejected) and is not the
//! first attempt's; with none, no hedge. A hedge is itself an attempt (its own
//! `attempt_start`/`attempt_end`, its own failure handling); if the race's first result is a
//! failure, the router waits for the other call, and the request keeps the last result.
//!
//! With `retry_throttling` on, gRPC's bucket gates hedges as it gates retries (A6: "Throttling
//! also applies to hedged RPCs. The first outgoing RPC will always be sent, but subsequent
//! hedged RPCs will only be sent if `token_count` is greater than the threshold."): a hedge
//! due while the bucket is at or under half full is not sent. tower's `retry_budget` does not
//! gate hedges: tower's `hedge::Hedge` takes no budget (its `Policy::can_retry`, "Called after
//! the hedge timeout to determine if the hedge retry should be issued", is the hedge's own).

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::Duration;

pub use crate::config::HedgeAfter;

/// Successful latencies kept per group.
pub const WINDOW: usize = 100;
/// Samples a group needs before a percentile delay is used.
pub const WARMUP: usize = 20;

/// The last [`WINDOW`] successful latencies of each group.
#[derive(Debug)]
pub struct LatencyWindow {
    groups: Mutex<Vec<VecDeque<Duration>>>,
}

impl LatencyWindow {
    /// Windows for `groups` groups, empty.
    pub fn new(groups: usize) -> Self {
        Self {
            groups: Mutex::new(vec![VecDeque::new(); groups]),
        }
    }

    /// A successful attempt in group `group` took `latency`.
    pub fn record(&self, group: usize, latency: Duration) {
        let mut groups = crate::sync::lock_unpoisoned(&self.groups);
        let window = &mut groups[group];
        if window.len() == WINDOW {
            window.pop_front();
        }
        window.push_back(latency);
    }

    /// The nearest-rank `p`-th percentile of group `group`, once it has [`WARMUP`] samples.
    pub fn percentile(&self, group: usize, p: u8) -> Option<Duration> {
        let groups = crate::sync::lock_unpoisoned(&self.groups);
        let window = &groups[group];
        if window.len() < WARMUP {
            return None;
        }
        let mut sorted: Vec<Duration> = window.iter().copied().collect();
        sorted.sort_unstable();
        let rank = (usize::from(p) * sorted.len()).div_ceil(100).max(1);
        Some(sorted[rank - 1])
    }

    /// The delay `after` stands for in group `group` (`None`: do not hedge).
    pub fn delay(&self, group: usize, after: HedgeAfter) -> Option<Duration> {
        match after {
            HedgeAfter::Fixed(d) => Some(d),
            HedgeAfter::Percentile(p) => self.percentile(group, p),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentile_waits_for_warmup_and_forgets_old_samples() {
        let w = LatencyWindow::new(1);
        for ms in 1..WARMUP as u64 {
            w.record(0, Duration::from_millis(ms));
        }
        assert_eq!(w.percentile(0, 95), None, "19 samples: warming up");
        w.record(0, Duration::from_millis(20));
        assert_eq!(w.percentile(0, 95), Some(Duration::from_millis(19)));
        assert_eq!(w.percentile(0, 50), Some(Duration::from_millis(10)));
        for _ in 0..WINDOW {
            w.record(0, Duration::from_secs(1));
        }
        assert_eq!(w.percentile(0, 50), Some(Duration::from_secs(1)));
        assert_eq!(
            HedgeAfter::percentile("p95"),
            Some(HedgeAfter::Percentile(95))
        );
        assert_eq!(HedgeAfter::percentile("p100"), None);
    }
}
