//! tower's retry budget (`retry_budget`): retries are allowed up to a share of the requests
//! seen in a sliding window, plus a floor per second, so a retry storm across requests is
//! capped whatever each request's own retry rules say.
//!
//! Source: tower 0.5, `tower/src/retry/budget/tps_budget.rs` (`TpsBudget`, a port of
//! Finagle's `RetryBudget`). Its rules, kept here exactly:
//! - `TpsBudget::new(ttl, min_per_sec, retry_percent)`; `TpsBudget::default()` is
//!   `new(10 s, 10, 0.2)`: 20 % of requests may be retried, plus 10 retries a second, over
//!   a 10 s window.
//! - For `retry_percent ≤ 1` a deposit (one per request) is worth 1 and a withdrawal (one per
//!   retry) costs `floor(1 / retry_percent)` (5 at 20 %); above 1, a deposit is worth 1000
//!   and a withdrawal costs `floor(1000 / retry_percent)`; at 0 deposits are worth nothing.
//! - A reserve of `min_per_sec × ttl (whole seconds) × withdrawal cost` is always in the
//!   balance; deposits and withdrawals go to the current slot of ten (`ttl / 10` each), and a
//!   slot is forgotten once `ttl` has passed, so a withdrawal against the reserve is paid back
//!   when it leaves the window.
//! - A retry is allowed when the balance is at least the withdrawal cost.
//!
//! The one difference is the clock: tower reads `Instant::now()`; here the router passes its
//! own clock's `now` (paused virtual time in the simulator), and the window starts when the
//! router is built. tower asserts `1 s ≤ ttl ≤ 60 s` and `0 ≤ retry_percent ≤ 1000`; the
//! loader refuses values outside those bounds instead of panicking.

use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

use crate::retry::RetryBudget;

pub use crate::config::RetryBudgetSettings;

/// The slots of a window (tower: 10).
const SLOTS: usize = 10;

#[derive(Debug)]
struct Bucket {
    /// The slot being written, and when it began.
    index: usize,
    since: Instant,
    /// The closed slots of the window.
    slots: [i64; SLOTS],
    /// The slot being written (committed to `slots[index]` when it closes).
    writer: i64,
}

/// tower's `TpsBudget` on the router's clock.
#[derive(Debug)]
pub struct TpsBudget {
    bucket: Mutex<Bucket>,
    reserve: i64,
    window: Duration,
    deposit_amount: i64,
    withdraw_amount: i64,
}

impl TpsBudget {
    /// A budget whose window starts at `start`.
    pub fn new(settings: &RetryBudgetSettings, start: Instant) -> Self {
        let ratio = settings.ratio;
        let (deposit_amount, withdraw_amount) = if ratio == 0.0 {
            (0, 1)
        } else if ratio <= 1.0 {
            (1, (1.0 / ratio) as i64)
        } else {
            (1000, (1000.0 / ratio) as i64)
        };
        let reserve = i64::from(settings.min_per_sec)
            .saturating_mul(settings.ttl.as_secs() as i64)
            .saturating_mul(withdraw_amount);
        Self {
            bucket: Mutex::new(Bucket {
                index: 0,
                since: start,
                slots: [0; SLOTS],
                writer: 0,
            }),
            reserve,
            window: settings.ttl / SLOTS as u32,
            deposit_amount,
            withdraw_amount,
        }
    }

    /// The balance at `now` (reserve included).
    pub fn balance(&self, now: Instant) -> i64 {
        let mut b = crate::sync::lock_unpoisoned(&self.bucket);
        self.expire(&mut b, now);
        self.sum(&b)
    }

    /// tower's `TpsBucket::expire`: close the current slot once a window has passed, and
    /// forget the slots the elapsed time has run past.
    fn expire(&self, b: &mut Bucket, now: Instant) {
        let mut diff = now.saturating_duration_since(b.since);
        if diff < self.window {
            return;
        }
        b.slots[b.index] = std::mem::take(&mut b.writer);
        let mut idx = (b.index + 1) % SLOTS;
        while diff > self.window {
            b.slots[idx] = 0;
            diff -= self.window;
            idx = (idx + 1) % SLOTS;
        }
        b.index = idx;
        b.since = now;
    }

    fn sum(&self, b: &Bucket) -> i64 {
        b.slots
            .iter()
            .fold(b.writer, |sum, s| sum.saturating_add(*s))
            .saturating_add(self.reserve)
    }
}

impl RetryBudget for TpsBudget {
    fn deposit(&self, now: Instant) {
        let mut b = crate::sync::lock_unpoisoned(&self.bucket);
        self.expire(&mut b, now);
        b.writer += self.deposit_amount;
    }

    fn withdraw(&self, now: Instant) -> bool {
        let mut b = crate::sync::lock_unpoisoned(&self.bucket);
        self.expire(&mut b, now);
        if self.sum(&b) >= self.withdraw_amount {
            b.writer -= self.withdraw_amount;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn budget(ttl_secs: u64, min_per_sec: u32, ratio: f64, start: Instant) -> TpsBudget {
        let settings = RetryBudgetSettings {
            ratio,
            min_per_sec,
            ttl: Duration::from_secs(ttl_secs),
        };
        TpsBudget::new(&settings, start)
    }

    // tower's own tests (tps_empty, tps_leaky, tps_slots, tps_reserve), on a passed-in clock.
    #[tokio::test(start_paused = true)]
    async fn tower_tests_hold_on_the_router_clock() {
        let t0 = Instant::now();
        assert!(!budget(1, 0, 1.0, t0).withdraw(t0), "empty");

        let leaky = budget(1, 0, 1.0, t0);
        leaky.deposit(t0);
        assert!(!leaky.withdraw(t0 + Duration::from_secs(3)), "leaky");

        let slots = budget(1, 0, 0.5, t0);
        slots.deposit(t0);
        slots.deposit(t0);
        let mut t = t0 + Duration::from_millis(901);
        assert!(slots.withdraw(t), "900 ms later the deposits still count");
        t += Duration::from_millis(2001);
        slots.deposit(t);
        t += Duration::from_millis(301);
        slots.deposit(t);
        t += Duration::from_millis(801);
        slots.deposit(t);
        assert!(slots.withdraw(t), "the 2nd and 3rd deposits pay for it");

        let reserve = budget(1, 5, 1.0, t0);
        for _ in 0..5 {
            assert!(reserve.withdraw(t0));
        }
        assert!(!reserve.withdraw(t0), "the reserve is 5");
    }

    #[tokio::test(start_paused = true)]
    async fn the_default_allows_a_fifth_of_requests_plus_the_floor() {
        let t0 = Instant::now();
        let b = TpsBudget::new(&RetryBudgetSettings::default(), t0);
        for _ in 0..100 {
            b.deposit(t0);
        }
        // Reserve 10/s × 10 s = 100 retries, plus 100 requests × 20 % = 20.
        let allowed = (0..200).filter(|_| b.withdraw(t0)).count();
        assert_eq!(allowed, 120);
    }
}
