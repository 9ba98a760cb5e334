//! Envoy's outlier ejection on consecutive 5xx (`outlier_detection`): a deployment that
//! answers `consecutive_5xx` server errors in a row is ejected — no pick lands on it — for
//! `base_ejection_time × times ejected`, at most `max_ejection_time`; at most
//! `max_ejection_percent` of a group's deployments are ejected at once, but at least one may be.
//!
//! Source: Envoy's `config.cluster.v3.OutlierDetection` (API reference) and the "Outlier
//! detection" architecture overview:
//! - `consecutive_5xx`: "The number of consecutive server-side error responses (for HTTP
//!   traffic, 5xx responses …) before a consecutive 5xx ejection occurs. Defaults to 5."
//!   Local-origin errors (connect failures, timeouts) count as 5xx unless
//!   `split_external_local_origin_errors` is set (it is not, by default): here a failure with
//!   a status 500-599, a timeout, or a connection error with no status. Any other answer (a
//!   success, a 429, a 400) ends the run of consecutive errors.
//! - `base_ejection_time`: "The real time is equal to the base time multiplied by the number
//!   of times the host has been ejected and is capped by `max_ejection_time`. Defaults to
//!   30000ms or 30s." `max_ejection_time`: "Defaults to 300s."
//! - `max_ejection_percent`: "The maximum % of an upstream cluster that can be ejected due to
//!   outlier detection. Defaults to 10% but will eject at least one host regardless of the
//!   value." Envoy checks the share already ejected before ejecting another (`ejected < max`),
//!   so in a group of 3 the first ejection is allowed (0 % < 10 %) and a second is not
//!   (33 % ≥ 10 %); in a group of 20, two may be out at once. (grpc-java changed its own rule
//!   to match this "at least one" behaviour: grpc/grpc-java#9489.)
//!
//! - Envoy's panic threshold (`healthy_panic_threshold`, `common_lb_config`, default 50 %):
//!   when fewer than half of a cluster's hosts are healthy, Envoy "will disregard health
//!   status and balance amongst all hosts". With at most 10 % ejected this matters only for a
//!   group of one deployment, whose ejection Envoy would make and then ignore; routersim does
//!   not make an ejection that would leave fewer than half of the group's deployments
//!   (cooldowns aside), which routes the same.
//!
//! Not modelled (said in the README): Envoy sweeps every `interval` (10 s) and returns hosts
//! to service on the sweep after their time is up — here an ejection ends exactly at its
//! time; Envoy lowers the multiplier again after a host stays healthy — here the count of
//! ejections only grows (the cap still bounds the time); the success-rate and
//! failure-percentage detectors, and `enforcing_consecutive_5xx` (100 % here).
//!
//! With LiteLLM's cooldowns (both apply): a deployment is unavailable while it is cooling *or*
//! ejected; each mechanism keeps its own state and its own events (`cooldown_set` and
//! `ejected`), and neither ends the other early. A success on a deployment resets its run of
//! consecutive errors; a half-open trial or probe that restores a cooling deployment does not
//! lift an ejection.

use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

use crate::failure::{FailureKind, ProviderFailure};

pub use crate::config::OutlierSettings;

/// Envoy's `healthy_panic_threshold` default (50 %): when fewer of a cluster's hosts than this
/// are healthy, Envoy balances across all of them, ejected or not.
pub const PANIC_THRESHOLD_PERCENT: u64 = 50;

#[derive(Clone, Copy, Debug, Default)]
struct Host {
    consecutive: u32,
    ejections: u32,
    until: Option<Instant>,
}

/// An ejection just decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ejection {
    /// How long.
    pub duration: Duration,
    /// Until when.
    pub until: Instant,
    /// Times ejected, this one included.
    pub ejections: u32,
    /// The run of errors that tripped it.
    pub consecutive_5xx: u32,
}

/// Consecutive-5xx outlier detection over a router's deployments.
#[derive(Debug)]
pub struct OutlierDetector {
    settings: OutlierSettings,
    hosts: Mutex<Vec<Host>>,
}

/// Whether a failure is a "5xx" to Envoy (a server error, or a local-origin error mapped to
/// one).
pub fn is_5xx(failure: &ProviderFailure) -> bool {
    match failure.effective_status() {
        Some(status) => (500..600).contains(&status) || failure.kind == FailureKind::Timeout,
        None => true,
    }
}

impl OutlierDetector {
    /// A detector for `deployments` deployments, none ejected.
    pub fn new(settings: OutlierSettings, deployments: usize) -> Self {
        Self {
            settings,
            hosts: Mutex::new(vec![Host::default(); deployments]),
        }
    }

    /// Whether `deployment` is ejected at `now` (an ejection whose time is up is not; see
    /// [`OutlierDetector::take_if_expired`]).
    pub fn is_ejected(&self, deployment: usize, now: Instant) -> bool {
        crate::sync::lock_unpoisoned(&self.hosts)[deployment]
            .until
            .is_some_and(|until| until > now)
    }

    /// Ends the ejection of `deployment` if its time is up at `now`, returning when it ended.
    pub fn take_if_expired(&self, deployment: usize, now: Instant) -> Option<Instant> {
        let mut hosts = crate::sync::lock_unpoisoned(&self.hosts);
        let host = &mut hosts[deployment];
        match host.until {
            Some(until) if until <= now => {
                host.until = None;
                Some(until)
            }
            _ => None,
        }
    }

    /// An attempt on `deployment` (a member of `group`) ended at `now` (`None`: success).
    /// Returns the ejection it causes, if any.
    pub fn on_attempt_end(
        &self,
        deployment: usize,
        group: &[usize],
        failure: Option<&ProviderFailure>,
        now: Instant,
    ) -> Option<Ejection> {
        let mut hosts = crate::sync::lock_unpoisoned(&self.hosts);
        if hosts[deployment].until.is_some_and(|until| until > now) {
            // A call that was already in flight: Envoy ignores results of an ejected host.
            return None;
        }
        let host = &mut hosts[deployment];
        if !failure.is_some_and(is_5xx) {
            host.consecutive = 0;
            return None;
        }
        host.consecutive += 1;
        if host.consecutive < self.settings.consecutive_5xx.max(1) {
            return None;
        }
        let consecutive_5xx = std::mem::take(&mut host.consecutive);
        let ejected_now = group
            .iter()
            .filter(|&&d| hosts[d].until.is_some_and(|until| until > now))
            .count();
        // Envoy: the share already ejected must be under the maximum (so one always may be).
        let under_max = (ejected_now as u64) * 100
            < u64::from(self.settings.max_ejection_percent) * group.len().max(1) as u64;
        if ejected_now > 0 && !under_max {
            return None;
        }
        // Envoy's panic threshold: below it the load balancer ignores ejections, so an
        // ejection that would leave fewer healthy members than that changes no routing.
        let left = group.len().saturating_sub(ejected_now + 1) as u64;
        if left * 100 < PANIC_THRESHOLD_PERCENT * group.len() as u64 {
            return None;
        }
        let host = &mut hosts[deployment];
        host.ejections += 1;
        let duration = self
            .settings
            .base_ejection_time
            .saturating_mul(host.ejections)
            .min(self.settings.max_ejection_time);
        let until = now + duration;
        host.until = Some(until);
        Some(Ejection {
            duration,
            until,
            ejections: host.ejections,
            consecutive_5xx,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e503() -> ProviderFailure {
        ProviderFailure::new(FailureKind::ServiceUnavailable)
    }

    #[test]
    fn five_in_a_row_eject_for_base_times_count_capped() {
        let d = OutlierDetector::new(OutlierSettings::default(), 3);
        let group = [0, 1, 2];
        let mut now = Instant::now();
        let mut lengths = Vec::new();
        for _ in 0..12 {
            for i in 0..5 {
                let ejected = d.on_attempt_end(0, &group, Some(&e503()), now);
                assert_eq!(ejected.is_some(), i == 4);
                if let Some(e) = ejected {
                    lengths.push(e.duration.as_secs());
                    now = e.until;
                }
            }
        }
        assert_eq!(
            lengths,
            [30, 60, 90, 120, 150, 180, 210, 240, 270, 300, 300, 300]
        );
    }

    #[test]
    fn a_success_or_a_429_breaks_the_run() {
        let d = OutlierDetector::new(OutlierSettings::default(), 2);
        let now = Instant::now();
        let rate_limit = ProviderFailure::new(FailureKind::RateLimit);
        for outcome in [Some(&rate_limit), None] {
            for _ in 0..4 {
                assert!(d.on_attempt_end(0, &[0, 1], Some(&e503()), now).is_none());
            }
            assert!(d.on_attempt_end(0, &[0, 1], outcome, now).is_none());
        }
        for _ in 0..4 {
            assert!(d.on_attempt_end(0, &[0, 1], Some(&e503()), now).is_none());
        }
        assert!(d.on_attempt_end(0, &[0, 1], Some(&e503()), now).is_some());
        assert!(d.is_ejected(0, now));
    }

    #[test]
    fn at_most_ten_percent_but_at_least_one() {
        let small = OutlierDetector::new(OutlierSettings::default(), 3);
        let now = Instant::now();
        let eject = |d: &OutlierDetector, host: usize, group: &[usize]| {
            (0..5)
                .filter_map(|_| d.on_attempt_end(host, group, Some(&e503()), now))
                .count()
        };
        let lone = OutlierDetector::new(OutlierSettings::default(), 1);
        assert_eq!(
            eject(&lone, 0, &[0]),
            0,
            "a lone deployment: under the panic threshold"
        );
        assert_eq!(eject(&small, 0, &[0, 1, 2]), 1, "one of three: 0 % < 10 %");
        assert_eq!(eject(&small, 1, &[0, 1, 2]), 0, "33 % is not under 10 %");
        let big = OutlierDetector::new(OutlierSettings::default(), 20);
        let group: Vec<usize> = (0..20).collect();
        let ejected: usize = (0..5).map(|h| eject(&big, h, &group)).sum();
        assert_eq!(ejected, 2, "0 % and 5 % are under 10 %; 10 % is not");
    }
}
