//! A fake provider's own quota: `rpm_limit` and `tpm_limit` token buckets on the virtual clock.
//!
//! The quota is the *provider's* (what the upstream account really allows), which may differ
//! from the `rpm`/`tpm` the router config believes. Each limit is a token bucket:
//!
//! - **Capacity** = the per-minute limit; the bucket starts full at virtual time 0.
//! - **Refill** is continuous: `limit / 60` per second of virtual time, never above capacity
//!   (not a fixed window: a burst of a full minute's quota is allowed, then room comes back
//!   smoothly, and the time until enough room is free is exact).
//! - **A call** asks for 1 request from the `rpm` bucket and for its tokens from the `tpm`
//!   bucket: `input_tokens` + the answer's output tokens, charged up front (like providers
//!   that reserve `max_tokens` when the request arrives).
//! - **Admitted** only when *both* buckets hold enough; then both are charged. Otherwise
//!   nothing is charged and the call is rejected with the time until both buckets hold
//!   enough (the longer of the two waits). A charge larger than a bucket's capacity never
//!   fits: rejected with no wait at all.
//!
//! Arithmetic is exact: a bucket's level is kept in units of 1/60 000 000 000 of a token
//! (one token × the nanoseconds in a minute), so `dt` nanoseconds of refill add exactly
//! `dt × limit` units, and the wait for room is a ceiling division in nanoseconds.

use std::time::Duration;

/// Units of bucket level per token: nanoseconds per minute.
const UNITS_PER_TOKEN: u128 = 60_000_000_000;

/// One limit: capacity `limit`, refilled continuously at `limit` per minute.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenBucket {
    limit: u64,
    /// In units of 1/[`UNITS_PER_TOKEN`] token.
    level: u128,
    /// Virtual time of the last refill.
    at: Duration,
}

impl TokenBucket {
    /// A full bucket for a per-minute `limit`, at virtual time 0.
    pub fn full(limit: u64) -> Self {
        Self {
            limit,
            level: Self::units(limit),
            at: Duration::ZERO,
        }
    }

    /// The per-minute limit (the capacity).
    pub fn limit(&self) -> u64 {
        self.limit
    }

    fn units(tokens: u64) -> u128 {
        u128::from(tokens) * UNITS_PER_TOKEN
    }

    /// Refills up to virtual time `now` (a time before the last refill changes nothing).
    fn refill(&mut self, now: Duration) {
        if now > self.at {
            let gained = (now - self.at).as_nanos() * u128::from(self.limit);
            self.level = (self.level + gained).min(Self::units(self.limit));
            self.at = now;
        }
    }

    /// Whole tokens available at `now`.
    pub fn available(&mut self, now: Duration) -> u64 {
        self.refill(now);
        u64::try_from(self.level / UNITS_PER_TOKEN).unwrap_or(u64::MAX)
    }

    /// How long from `now` until `amount` fits: zero when it fits now, `None` when it never
    /// fits (more than the capacity).
    pub fn wait_for(&mut self, now: Duration, amount: u64) -> Option<Duration> {
        if amount > self.limit {
            return None;
        }
        self.refill(now);
        let need = Self::units(amount);
        if self.level >= need {
            return Some(Duration::ZERO);
        }
        // `limit >= amount > 0` here, and the deficit is at most a minute's refill.
        let nanos = (need - self.level).div_ceil(u128::from(self.limit));
        Some(Duration::from_nanos(
            u64::try_from(nanos).unwrap_or(u64::MAX),
        ))
    }

    /// Takes `amount` at `now`; the caller has checked that it fits ([`Self::wait_for`]).
    fn take(&mut self, now: Duration, amount: u64) {
        self.refill(now);
        self.level = self.level.saturating_sub(Self::units(amount));
    }
}

/// Whether a call got in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    /// Charged; the call proceeds.
    Admitted,
    /// Nothing charged; `retry_after` is when both buckets will hold enough (`None`: never,
    /// the call is larger than a limit).
    Rejected {
        /// Time from the check until the call would fit.
        retry_after: Option<Duration>,
    },
}

/// A deployment's `rpm_limit` and `tpm_limit` buckets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Quota {
    rpm: Option<TokenBucket>,
    tpm: Option<TokenBucket>,
}

impl Quota {
    /// The buckets for these limits; `None` when neither is set.
    pub fn new(rpm_limit: Option<u64>, tpm_limit: Option<u64>) -> Option<Self> {
        (rpm_limit.is_some() || tpm_limit.is_some()).then(|| Self {
            rpm: rpm_limit.map(TokenBucket::full),
            tpm: tpm_limit.map(TokenBucket::full),
        })
    }

    /// Whether a call's tokens are counted (a `tpm_limit` is set).
    pub fn counts_tokens(&self) -> bool {
        self.tpm.is_some()
    }

    /// Admits (and charges) a call of `tokens` tokens at virtual time `now`, or rejects it
    /// and charges nothing.
    pub fn admit(&mut self, now: Duration, tokens: u64) -> Admission {
        let mut wait = Duration::ZERO;
        for (bucket, amount) in [(&mut self.rpm, 1), (&mut self.tpm, tokens)] {
            if let Some(bucket) = bucket {
                match bucket.wait_for(now, amount) {
                    Some(w) => wait = wait.max(w),
                    None => return Admission::Rejected { retry_after: None },
                }
            }
        }
        if !wait.is_zero() {
            return Admission::Rejected {
                retry_after: Some(wait),
            };
        }
        if let Some(rpm) = &mut self.rpm {
            rpm.take(now, 1);
        }
        if let Some(tpm) = &mut self.tpm {
            tpm.take(now, tokens);
        }
        Admission::Admitted
    }

    /// Whole requests and tokens available at `now` (`None` for a limit not set).
    pub fn available(&mut self, now: Duration) -> (Option<u64>, Option<u64>) {
        (
            self.rpm.as_mut().map(|b| b.available(now)),
            self.tpm.as_mut().map(|b| b.available(now)),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(secs: f64) -> Duration {
        Duration::from_secs_f64(secs)
    }

    #[test]
    fn refills_continuously_up_to_capacity() {
        let mut b = TokenBucket::full(60);
        assert_eq!(b.wait_for(s(0.0), 60), Some(Duration::ZERO));
        b.take(s(0.0), 60);
        assert_eq!(b.available(s(0.0)), 0);
        assert_eq!(b.wait_for(s(0.0), 1), Some(s(1.0)));
        assert_eq!(b.wait_for(s(0.25), 1), Some(s(0.75)));
        assert_eq!(b.available(s(30.0)), 30);
        assert_eq!(b.available(s(600.0)), 60);
        assert_eq!(b.wait_for(s(600.0), 61), None);
    }

    #[test]
    fn waits_are_exact_for_odd_limits() {
        let mut b = TokenBucket::full(7);
        b.take(Duration::ZERO, 7);
        // 60 s / 7 = 8.571428572 s (rounded up to the nanosecond).
        assert_eq!(
            b.wait_for(Duration::ZERO, 1),
            Some(Duration::from_nanos(8_571_428_572))
        );
    }

    #[test]
    fn a_rejection_charges_nothing_and_takes_the_longer_wait() {
        let mut q = Quota::new(Some(60), Some(6000)).unwrap();
        assert_eq!(q.admit(Duration::ZERO, 6000), Admission::Admitted);
        // rpm has 59 left, tpm none: 1000 tokens need 10 s.
        assert_eq!(
            q.admit(Duration::ZERO, 1000),
            Admission::Rejected {
                retry_after: Some(s(10.0))
            }
        );
        assert_eq!(q.available(Duration::ZERO), (Some(59), Some(0)));
        assert_eq!(
            q.admit(Duration::ZERO, 7000),
            Admission::Rejected { retry_after: None }
        );
        assert_eq!(q.admit(s(10.0), 1000), Admission::Admitted);
        assert_eq!(Quota::new(None, None), None);
    }
}
