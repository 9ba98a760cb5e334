//! Envoy's outlier ejection on consecutive 5xx (`outlier_detection`), as current Envoy does
//! it: a deployment that answers `consecutive_5xx` server errors in a row is ejected — no pick
//! lands on it — if the group's `max_ejection_percent` has room for one more (or
//! `always_eject_one_host` lets the first through), for `base_ejection_time` × its ejection
//! multiplier, at most `max_ejection_time`; it returns on the `interval` sweep after its time is
//! up, and every sweep it then stays healthy through lowers its multiplier by one.
//!
//! Source: `envoyproxy/envoy`, `source/common/upstream/outlier_detection_impl.cc` (commit
//! 00c7146d95ff) and `api/envoy/config/cluster/v3/outlier_detection.proto` (commit
//! b62b88e01756), quoted:
//! - `consecutive_5xx`: "The number of consecutive server-side error responses (for HTTP
//!   traffic, 5xx responses …) before a consecutive 5xx ejection occurs. Defaults to 5."
//!   Local-origin errors (connect failures, timeouts) count as 5xx unless
//!   `split_external_local_origin_errors` is set (it is not, by default): here a failure with
//!   a status 500-599, a timeout, or a connection error with no status. Any other answer (a
//!   success, a 429, a 400) ends the run of consecutive errors.
//! - `ejectHost`, the share check (since Envoy 1.28; `always_eject_one_host` since 1.31):
//!   ```text
//!   double ejected_percent = 100.0 * (ejections_active_helper_.value() + 1) / host_monitors_.size();
//!   bool should_eject = (ejected_percent <= max_ejection_percent);
//!   if (config_.alwaysEjectOneHost()) {
//!     should_eject = (ejections_active_helper_.value() == 0) || should_eject;
//!   }
//!   ```
//!   and the proto: "The maximum % of an upstream cluster that can be ejected due to outlier
//!   detection. Defaults to 10% ." / `always_eject_one_host`: "If enabled, at least one host
//!   is ejected regardless of the value of max_ejection_percent. Defaults to false." So with
//!   the defaults a group of fewer than 10 deployments never ejects (100 × 1 / 9 > 10).
//! - The multiplier (`ejectTimeBackoff`), raised at each ejection while
//!   `(host_monitors_[host]->ejectTimeBackoff() * base_eject_time) < (max_eject_time +
//!   base_eject_time)`; the ejection lasts `min(base_eject_time * monitor->ejectTimeBackoff(),
//!   max_eject_time) + jitter` (`max_ejection_time_jitter` defaults to 0s). `base_ejection_time`
//!   "Defaults to 30000ms or 30s"; `max_ejection_time`: "If not specified, the default value
//!   (300000ms or 300s) or base_ejection_time value is applied, whatever is larger"
//!   (`max_ejection_time` below `base_ejection_time` is a config error there, and here).
//! - The sweep (`onIntervalTimer`, every `interval`: "The time interval between ejection
//!   analysis sweeps. This can result in both new ejections as well as hosts being returned to
//!   service. Defaults to 10000ms or 10s."): `checkHostForUneject` returns a host whose time is
//!   up — an ejection ends on the first sweep at or after it, not at its exact time; then
//!   "Decrement time backoff for all hosts which have not been ejected": a host not ejected,
//!   unejected at least `interval` before the sweep, has its multiplier lowered by one
//!   (`if (monitor->ejectTimeBackoff() != 0) { monitor->ejectTimeBackoff()--; }`). The timer
//!   is armed when the detector starts: here sweeps fall at the router's start + k × `interval`.
//! - `unejectHost` resets the consecutive counters ("to avoid re-ejection on very few new
//!   errors"); results that arrive while a host is ejected cannot eject it again
//!   (`onConsecutiveErrorWorker` returns for a host already `FAILED_OUTLIER_CHECK`), so they
//!   are not counted here.
//!
//! - Envoy's panic threshold (`healthy_panic_threshold`, `common_lb_config`, default 50 %):
//!   when fewer than half of a cluster's hosts are healthy, Envoy "will disregard health
//!   status and balance amongst all hosts". routersim does not make an ejection that would
//!   leave fewer than half of the group's deployments (cooldowns aside), which routes the same;
//!   so a one-deployment group is never ejected, even with `always_eject_one_host`.
//!
//! Not modelled (said in the docs): the success-rate and failure-percentage detectors (which
//! also run on the sweep), `enforcing_consecutive_5xx` (100 % here), jitter (Envoy's default
//! 0 s), the runtime overrides.
//!
//! The sweep is lazy and exact: whoever asks the detector at `now` first runs every sweep due
//! at or before `now`, in order, each at its own time (its `unejected` events carry that time).
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
    /// The current run of 5xx.
    consecutive: u32,
    /// Times ejected (Envoy's `num_ejections_`).
    ejections: u32,
    /// The ejection multiplier (Envoy's `ejectTimeBackoff`).
    backoff: u32,
    /// Ejected at, for how long (Envoy's `FAILED_OUTLIER_CHECK` flag and
    /// `lastEjectionTime`).
    ejected: Option<(Instant, Duration)>,
    /// The last time a sweep returned it (`lastUnejectionTime`).
    unejected_at: Option<Instant>,
}

/// An ejection just decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ejection {
    /// How long: `base_ejection_time` × the multiplier, at most `max_ejection_time`.
    pub duration: Duration,
    /// The sweep that returns it (the first at or after `duration` has passed).
    pub until: Instant,
    /// Times ejected, this one included.
    pub ejections: u32,
    /// The run of errors that tripped it.
    pub consecutive_5xx: u32,
}

#[derive(Debug)]
struct State {
    hosts: Vec<Host>,
    /// The next sweep's time.
    next_sweep: Instant,
}

/// Consecutive-5xx outlier detection over a router's deployments.
#[derive(Debug)]
pub struct OutlierDetector {
    settings: OutlierSettings,
    /// When the sweep timer was armed: sweeps fall at `start + k × interval`, k ≥ 1.
    start: Instant,
    state: Mutex<State>,
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
    /// A detector for `deployments` deployments, none ejected, its sweep timer armed at
    /// `start`.
    pub fn new(settings: OutlierSettings, deployments: usize, start: Instant) -> Self {
        let interval = settings.interval.max(Duration::from_nanos(1));
        Self {
            settings: OutlierSettings {
                interval,
                ..settings
            },
            start,
            state: Mutex::new(State {
                hosts: vec![Host::default(); deployments],
                next_sweep: start + interval,
            }),
        }
    }

    /// Runs every sweep due at or before `now`; returns the deployments they returned to
    /// service, each with its sweep's time, in order.
    pub fn sweep(&self, now: Instant) -> Vec<(usize, Instant)> {
        let mut returned = Vec::new();
        let mut state = crate::sync::lock_unpoisoned(&self.state);
        let interval = self.settings.interval;
        while state.next_sweep <= now {
            // The sweeps before the first that returns a host or lowers a multiplier change
            // nothing: skip them (an ejection of hours under a 1 ms interval is one step).
            let Some(due) = state.hosts.iter().filter_map(|h| self.next_change(h)).min() else {
                // Nothing for any sweep to do until something is ejected.
                state.next_sweep = self.first_sweep_after(now);
                break;
            };
            let at = state.next_sweep.max(due);
            if at > now {
                state.next_sweep = at;
                break;
            }
            for (d, host) in state.hosts.iter_mut().enumerate() {
                // `checkHostForUneject`: `min(base × backoff, max) + jitter <= now - lastEjection`.
                if let Some((ejected_at, duration)) = host.ejected
                    && duration <= at - ejected_at
                {
                    host.ejected = None;
                    host.consecutive = 0;
                    host.unejected_at = Some(at);
                    returned.push((d, at));
                }
            }
            for host in &mut state.hosts {
                // "Decrement time backoff for all hosts which have not been ejected."
                if host.ejected.is_none()
                    && host.unejected_at.is_some_and(|u| at - u >= interval)
                    && host.backoff != 0
                {
                    host.backoff -= 1;
                }
            }
            state.next_sweep = at + interval;
        }
        returned
    }

    /// The first sweep at which `host` changes: the one that returns it when it is ejected,
    /// else the next that lowers its multiplier (one `interval` after its return or later);
    /// `None` when no sweep changes it.
    fn next_change(&self, host: &Host) -> Option<Instant> {
        match (host.ejected, host.unejected_at) {
            (Some((at, duration)), _) => Some(self.first_sweep_at_or_after(at + duration)),
            (None, Some(back)) if host.backoff != 0 => {
                Some(self.first_sweep_at_or_after(back + self.settings.interval))
            }
            _ => None,
        }
    }

    /// The first sweep time strictly after `t`.
    fn first_sweep_after(&self, t: Instant) -> Instant {
        let interval = self.settings.interval.as_nanos();
        let since = t.saturating_duration_since(self.start).as_nanos();
        let k = since / interval + 1;
        self.start + duration_of_nanos(k * interval)
    }

    /// The first sweep time at or after `t` (after the start).
    fn first_sweep_at_or_after(&self, t: Instant) -> Instant {
        let interval = self.settings.interval.as_nanos();
        let since = t.saturating_duration_since(self.start).as_nanos();
        let k = since.div_ceil(interval).max(1);
        self.start + duration_of_nanos(k * interval)
    }

    /// Whether `deployment` is ejected, as of the last sweep run (see
    /// [`OutlierDetector::sweep`]).
    pub fn is_ejected(&self, deployment: usize) -> bool {
        crate::sync::lock_unpoisoned(&self.state).hosts[deployment]
            .ejected
            .is_some()
    }

    /// The ejection multiplier of `deployment` (Envoy's `ejectTimeBackoff`).
    pub fn multiplier(&self, deployment: usize) -> u32 {
        crate::sync::lock_unpoisoned(&self.state).hosts[deployment].backoff
    }

    /// An attempt on `deployment` (a member of `group`) ended at `now` (`None`: success).
    /// Returns the ejection it causes, if any. The sweeps due by `now` must have run.
    pub fn on_attempt_end(
        &self,
        deployment: usize,
        group: &[usize],
        failure: Option<&ProviderFailure>,
        now: Instant,
    ) -> Option<Ejection> {
        let mut state = crate::sync::lock_unpoisoned(&self.state);
        let hosts = &mut state.hosts;
        if hosts[deployment].ejected.is_some() {
            // A call that was already in flight: it cannot eject the host again, and the
            // sweep that returns it resets the count.
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
        // Reset whether or not the ejection is made (`onConsecutiveErrorWorker`).
        let consecutive_5xx = std::mem::take(&mut host.consecutive);
        let active = group
            .iter()
            .filter(|&&d| hosts[d].ejected.is_some())
            .count() as u64;
        let members = group.len().max(1) as u64;
        if !may_eject(&self.settings, active, members) {
            return None;
        }
        let s = &self.settings;
        let host = &mut hosts[deployment];
        host.ejections += 1;
        if s.base_ejection_time.saturating_mul(host.backoff)
            < s.max_ejection_time.saturating_add(s.base_ejection_time)
        {
            host.backoff += 1;
        }
        let duration = s
            .base_ejection_time
            .saturating_mul(host.backoff)
            .min(s.max_ejection_time);
        host.ejected = Some((now, duration));
        let ejections = host.ejections;
        drop(state);
        Some(Ejection {
            duration,
            until: self.first_sweep_at_or_after(now + duration),
            ejections,
            consecutive_5xx,
        })
    }
}

/// Whether a group of `members` deployments can ever have one ejected under `settings`: when
/// not, `outlier_detection` does nothing to it (a group of fewer than 10 at Envoy's defaults).
pub fn ejects_in_group_of(settings: &OutlierSettings, members: usize) -> bool {
    may_eject(settings, 0, members as u64)
}

/// Whether one more of `members` hosts may be ejected with `active` already out: Envoy's
/// `ejectHost` share check, then the panic threshold (below it the load balancer ignores
/// ejections, so an ejection that would leave fewer healthy members changes no routing).
fn may_eject(settings: &OutlierSettings, active: u64, members: u64) -> bool {
    // `100.0 * (active + 1) / members <= max_ejection_percent`, in integers.
    let within = 100 * (active + 1) <= u64::from(settings.max_ejection_percent) * members;
    let share = within || (settings.always_eject_one_host && active == 0);
    let left = members.saturating_sub(active + 1);
    share && left * 100 >= PANIC_THRESHOLD_PERCENT * members
}

fn duration_of_nanos(nanos: u128) -> Duration {
    let per_sec = 1_000_000_000u128;
    Duration::new(
        u64::try_from(nanos / per_sec).unwrap_or(u64::MAX),
        (nanos % per_sec) as u32,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e503() -> ProviderFailure {
        ProviderFailure::new(FailureKind::ServiceUnavailable)
    }

    fn one_host_always() -> OutlierSettings {
        OutlierSettings {
            always_eject_one_host: true,
            ..OutlierSettings::default()
        }
    }

    /// Five 503s on `host` at `now` (after running the sweeps due); the ejection, if any.
    fn five(d: &OutlierDetector, host: usize, group: &[usize], now: Instant) -> Option<Ejection> {
        d.sweep(now);
        (0..5)
            .filter_map(|_| d.on_attempt_end(host, group, Some(&e503()), now))
            .last()
    }

    #[test]
    fn back_to_back_ejections_grow_by_base_up_to_the_cap() {
        let start = Instant::now();
        let d = OutlierDetector::new(one_host_always(), 3, start);
        let group = [0, 1, 2];
        let mut now = start;
        let mut lengths = Vec::new();
        for _ in 0..12 {
            let e = five(&d, 0, &group, now).unwrap();
            lengths.push(e.duration.as_secs());
            // Failing again right on the sweep that returns it: no healthy sweep between.
            now = e.until;
        }
        assert_eq!(
            lengths,
            [30, 60, 90, 120, 150, 180, 210, 240, 270, 300, 300, 300]
        );
        // The multiplier stops where `backoff × base < max + base` fails: 11 × 30 ≥ 330.
        assert_eq!(d.multiplier(0), 11);
    }

    #[test]
    fn a_success_or_a_429_breaks_the_run() {
        let start = Instant::now();
        let d = OutlierDetector::new(one_host_always(), 2, start);
        let rate_limit = ProviderFailure::new(FailureKind::RateLimit);
        for outcome in [Some(&rate_limit), None] {
            for _ in 0..4 {
                assert!(d.on_attempt_end(0, &[0, 1], Some(&e503()), start).is_none());
            }
            assert!(d.on_attempt_end(0, &[0, 1], outcome, start).is_none());
        }
        for _ in 0..4 {
            assert!(d.on_attempt_end(0, &[0, 1], Some(&e503()), start).is_none());
        }
        assert!(d.on_attempt_end(0, &[0, 1], Some(&e503()), start).is_some());
        assert!(d.is_ejected(0));
    }

    #[test]
    fn the_share_check_is_envoys_since_1_28() {
        let now = Instant::now();
        let count = |settings: OutlierSettings, members: usize, hosts: usize| {
            let d = OutlierDetector::new(settings, members, now);
            let group: Vec<usize> = (0..members).collect();
            (0..hosts)
                .filter(|&h| five(&d, h, &group, now).is_some())
                .count()
        };
        // Defaults (10 %): 100 × 1 / 9 > 10, 100 × 1 / 10 ≤ 10, 100 × 2 / 20 ≤ 10.
        assert_eq!(count(OutlierSettings::default(), 3, 3), 0);
        assert_eq!(count(OutlierSettings::default(), 9, 9), 0);
        assert_eq!(count(OutlierSettings::default(), 10, 10), 1);
        assert_eq!(count(OutlierSettings::default(), 20, 20), 2);
        // `always_eject_one_host`: the first of any group, then the share check.
        assert_eq!(count(one_host_always(), 3, 3), 1);
        assert_eq!(count(one_host_always(), 20, 20), 2);
        let half = OutlierSettings {
            max_ejection_percent: 50,
            ..OutlierSettings::default()
        };
        assert_eq!(count(half, 4, 4), 2, "100 × 2 / 4 ≤ 50; a third is not");
        // A lone deployment: under the panic threshold, whatever the settings.
        assert_eq!(count(one_host_always(), 1, 1), 0);
    }

    #[test]
    fn an_ejection_ends_on_the_sweep_after_its_time() {
        let start = Instant::now();
        let d = OutlierDetector::new(one_host_always(), 3, start);
        let at = start + Duration::from_millis(2500);
        let e = five(&d, 0, &[0, 1, 2], at).unwrap();
        // 2.5 s + 30 s = 32.5 s: the sweep at 40 s returns it.
        assert_eq!(e.until - start, Duration::from_secs(40));
        assert!(d.sweep(start + Duration::from_millis(39_999)).is_empty());
        assert!(d.is_ejected(0));
        assert_eq!(
            d.sweep(start + Duration::from_secs(45)),
            [(0, start + Duration::from_secs(40))]
        );
        assert!(!d.is_ejected(0));
    }

    #[test]
    fn a_long_ejection_under_a_short_interval_is_swept_in_one_step() {
        // 1 ms sweeps, a 11.5-day ejection: 10⁹ sweeps change nothing before the one that
        // returns the host; they are skipped, not run (this test would not end otherwise).
        let settings = OutlierSettings {
            interval: Duration::from_millis(1),
            base_ejection_time: Duration::from_secs(1_000_000),
            max_ejection_time: Duration::from_secs(1_000_000),
            ..one_host_always()
        };
        let start = Instant::now();
        let d = OutlierDetector::new(settings, 3, start);
        let e = five(&d, 0, &[0, 1, 2], start + Duration::from_micros(500)).unwrap();
        assert_eq!(e.until - start, Duration::from_millis(1_000_000_001));
        let later = start + Duration::from_secs(2_000_000);
        assert_eq!(d.sweep(later), [(0, e.until)]);
        // Then one sweep lowers the multiplier (1 ms after the return), and none is left.
        assert_eq!(d.multiplier(0), 0);
        assert!(d.sweep(later + Duration::from_secs(1_000_000)).is_empty());
    }
}
