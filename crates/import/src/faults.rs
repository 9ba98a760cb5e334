//! Fault windows from the error series: for each deployment and failure kind, the segments of
//! [`crate::segment`] whose rate stands above the deployment's own baseline, with their
//! boundaries placed from the calls that were seen.
//!
//! - **Start**: the first failure of the kind in the segment's first bucket, or, when the
//!   bucket before it ended with failures after its last success, the first of those.
//! - **End**: halfway between the segment's last failure and the next observed success. A
//!   stretch without calls inside a window (the deployment was cooling: the router did not call
//!   it) is unknown, so the fault is carried through it; the seconds so carried are counted
//!   ([`FoundFault::unobserved`]) and the output says so. The silence after the last failure is
//!   unknown too (the true end lies anywhere in it), and its middle is the end that a replay
//!   holds to best: a replay's cooldowns end tens to hundreds of milliseconds off the live
//!   router's (its proxy wrote each cooldown after its own processing, late when it stalled),
//!   so the replay can probe the deployment one arrival or a few earlier or later than the live
//!   run did. Ended at the next success, an earlier probe would fail and cool the deployment for
//!   one more Retry-After (a storm's replay then lost a quarter of its calls); ended at the last
//!   failure, a later one would succeed and end the storm one cooldown early. The middle leaves
//!   half the silence either way. No success after the last failure: the window lasts to the end
//!   of the log.
//! - **Probability**: the segment's failures over its calls (for a stream cut: over its
//!   streams). Each call is an independent draw at the provider whatever the router did before
//!   it, so this estimates the provider's rate even where the router chose whom to call.
//! - **Baseline**: a deployment whose quietest segment still failed (at least 3 failures) has a
//!   background window over the whole log at that rate, and its other windows carry what
//!   exceeds it.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::segment::{Segment, penalty, segments};
use crate::series::{Bucket, Series, SeriesKind};

/// A segment is a fault when its rate exceeds the baseline's by this much…
const MIN_EXCESS: f64 = 0.05;
/// …and it holds at least this many failures.
const MIN_FAILURES: u64 = 2;
/// A baseline with fewer failures than this is not a background fault.
const MIN_BACKGROUND_FAILURES: u64 = 3;

/// A fault window found in the log (times in Unix seconds).
#[derive(Clone, Debug, PartialEq)]
pub struct FoundFault {
    /// The deployment.
    pub deployment: Arc<str>,
    /// What failed.
    pub kind: SeriesKind,
    /// Start.
    pub from: f64,
    /// End (halfway to [`FoundFault::healthy_at`]); `None`: to the end of the log (no success
    /// came after).
    pub to: Option<f64>,
    /// The next observed success after the window's last failure; `None`: none came.
    pub healthy_at: Option<f64>,
    /// The failure probability to inject.
    pub probability: f64,
    /// The segment's own failure rate (before the baseline is taken out).
    pub rate: f64,
    /// The median Retry-After seen, seconds.
    pub retry_after: Option<f64>,
    /// The least and greatest Retry-After seen, seconds.
    pub retry_after_range: Option<(f64, f64)>,
    /// For a stream cut: the median tokens delivered before it.
    pub after_tokens: Option<u32>,
    /// The failures' median latency, seconds: a provider's errors answer in their own time
    /// (a 429 in milliseconds), not its successes'.
    pub latency: Option<f64>,
    /// Calls in the window.
    pub calls: u64,
    /// Failures of the kind in it.
    pub failures: u64,
    /// Seconds of the window in buckets without any call to the deployment (carried).
    pub unobserved: f64,
    /// The whole-log background rate of the deployment.
    pub background: bool,
}

/// Every fault window of every deployment, by start.
pub fn find_faults(series: &Series) -> Vec<FoundFault> {
    let mut found = Vec::new();
    for (deployment, buckets) in &series.deployments {
        for kind in series.kinds_of(deployment) {
            found.extend(kind_faults(series, deployment, buckets, kind));
        }
    }
    found.sort_by(|a, b| {
        a.from
            .total_cmp(&b.from)
            .then(a.deployment.cmp(&b.deployment))
    });
    found
}

fn kind_faults(
    series: &Series,
    deployment: &Arc<str>,
    buckets: &BTreeMap<i64, Bucket>,
    kind: SeriesKind,
) -> Vec<FoundFault> {
    let observed: Vec<(i64, &Bucket)> = buckets
        .iter()
        .filter(|(_, b)| b.trials(kind) > 0)
        .map(|(i, b)| (*i, b))
        .collect();
    let counts: Vec<(u64, u64)> = observed
        .iter()
        .map(|(_, b)| {
            let failures = b.kind(kind).map_or(0, |c| c.failures);
            (u64::from(b.trials(kind)), u64::from(failures))
        })
        .collect();
    let calls: u64 = counts.iter().map(|c| c.0).sum();
    let parts = segments(&counts, penalty(calls));
    let Some(quietest) = parts.iter().min_by(|a, b| a.rate().total_cmp(&b.rate())) else {
        return Vec::new();
    };
    let baseline = if quietest.failures >= MIN_BACKGROUND_FAILURES {
        quietest.rate()
    } else {
        0.0
    };
    let mut out = Vec::new();
    let first_start = observed
        .first()
        .map_or(0.0, |(i, _)| *i as f64 * series.width);
    if baseline > 0.0 {
        let mut background = window(series, deployment, kind, buckets, &observed, quietest);
        background.from = first_start;
        background.to = None;
        background.healthy_at = None;
        background.probability = baseline;
        background.background = true;
        background.unobserved = 0.0;
        out.push(background);
    }
    for part in &parts {
        let rate = part.rate();
        if part.failures < MIN_FAILURES || rate < baseline + MIN_EXCESS.max(baseline) {
            continue;
        }
        let mut fault = window(series, deployment, kind, buckets, &observed, part);
        fault.probability = if baseline > 0.0 {
            ((fault.rate - baseline) / (1.0 - baseline)).clamp(0.0, 1.0)
        } else {
            fault.rate
        };
        out.push(fault);
    }
    merge_overlapping(out, baseline)
}

/// Merges the overlapping windows of one series: a segment whose failures are only the edge of
/// its neighbour's (the slot where the rate changed went to it) has its window inside the
/// neighbour's, and is part of it. The merged window spans both, counts both, and keeps the
/// Retry-After, tokens and latency of the one with more failures.
fn merge_overlapping(windows: Vec<FoundFault>, baseline: f64) -> Vec<FoundFault> {
    let (mut out, mut merged): (Vec<FoundFault>, Vec<FoundFault>) =
        windows.into_iter().partition(|w| w.background);
    let mut rest: Vec<FoundFault> = std::mem::take(&mut merged);
    rest.sort_by(|a, b| a.from.total_cmp(&b.from));
    for w in rest {
        let Some(last) = merged.last_mut() else {
            merged.push(w);
            continue;
        };
        if w.from >= last.to.unwrap_or(f64::INFINITY) {
            merged.push(w);
            continue;
        }
        if w.failures > last.failures {
            last.retry_after = w.retry_after;
            last.retry_after_range = w.retry_after_range;
            last.after_tokens = w.after_tokens;
            last.latency = w.latency;
        }
        last.to = last.to.zip(w.to).map(|(a, b)| a.max(b));
        last.healthy_at = last.healthy_at.zip(w.healthy_at).map(|(a, b)| a.max(b));
        last.failures += w.failures;
        last.calls += w.calls;
        last.unobserved += w.unobserved;
        last.rate = last.failures as f64 / last.calls.max(1) as f64;
        last.probability = if baseline > 0.0 {
            ((last.rate - baseline) / (1.0 - baseline)).clamp(0.0, 1.0)
        } else {
            last.rate
        };
    }
    out.extend(merged);
    out
}

/// The window of a segment: its boundaries, counts and Retry-After.
fn window(
    series: &Series,
    deployment: &Arc<str>,
    kind: SeriesKind,
    buckets: &BTreeMap<i64, Bucket>,
    observed: &[(i64, &Bucket)],
    part: &Segment,
) -> FoundFault {
    let inside = &observed[part.first..part.end];
    let from = start_of(kind, observed, part);
    let last_failure = inside
        .iter()
        .filter_map(|(_, b)| b.kind(kind))
        .map(|c| c.last)
        .fold(from, f64::max);
    let healthy_at = end_of(series, buckets, last_failure);
    let to = healthy_at.map(|ok| last_failure + (ok - last_failure) / 2.0);
    let mut retry = BTreeMap::<u64, u32>::new();
    let mut tokens = BTreeMap::<u32, u32>::new();
    let mut latency = BTreeMap::<u64, u32>::new();
    for (_, bucket) in inside {
        if let Some(c) = bucket.kind(kind) {
            for (us, n) in &c.latency_us {
                *latency.entry(*us).or_default() += n;
            }
            for (ms, n) in &c.retry_after_ms {
                *retry.entry(*ms).or_default() += n;
            }
            for (t, n) in &c.tokens {
                *tokens.entry(*t).or_default() += n;
            }
        }
    }
    let calls = calls_in_window(series, kind, inside, from, last_failure).max(part.failures);
    let rate = if calls == 0 {
        0.0
    } else {
        part.failures as f64 / calls as f64
    };
    let unobserved = match to {
        Some(to) => {
            let (a, b) = (series.index(from), series.index(to));
            let silent = (a..=b).filter(|i| !buckets.contains_key(i)).count();
            (silent as f64 * series.width).min(to - from)
        }
        None => 0.0,
    };
    FoundFault {
        deployment: deployment.clone(),
        kind,
        from,
        to,
        healthy_at,
        probability: rate,
        rate,
        retry_after: median(&retry).map(|ms| ms as f64 / 1000.0),
        retry_after_range: retry
            .keys()
            .next()
            .zip(retry.keys().next_back())
            .map(|(a, b)| (*a as f64 / 1000.0, *b as f64 / 1000.0)),
        after_tokens: median(&tokens),
        latency: median(&latency).map(|us| us as f64 / 1e6),
        calls,
        failures: part.failures,
        unobserved,
        background: false,
    }
}

/// The calls of a segment's slots that fall inside its window (the probability is over them):
/// slots are epoch-aligned, so the slot where the window starts can hold successes from before
/// its first failure and the slot where it ends successes after its last, and a segment can
/// hold slots after its last failure; none of those is the window's.
fn calls_in_window(
    series: &Series,
    kind: SeriesKind,
    inside: &[(i64, &Bucket)],
    from: f64,
    last_failure: f64,
) -> u64 {
    let last = series.index(last_failure);
    inside
        .iter()
        .filter(|(i, _)| *i <= last)
        .map(|(_, b)| {
            let trials = u64::from(b.trials(kind));
            let failures = u64::from(b.kind(kind).map_or(0, |c| c.failures));
            if b.ok > 0 && (b.last_ok < from || b.first_ok > last_failure) {
                trials - u64::from(b.ok).min(trials - failures)
            } else {
                trials
            }
        })
        .sum()
}

/// See the module docs: the first failure of the segment, or of the tail of the bucket before.
fn start_of(kind: SeriesKind, observed: &[(i64, &Bucket)], part: &Segment) -> f64 {
    let own = observed[part.first..part.end]
        .iter()
        .find_map(|(_, b)| b.kind(kind).map(|c| c.first))
        .unwrap_or(0.0);
    if part.first == 0 {
        return own;
    }
    let (_, before) = observed[part.first - 1];
    match before.kind(kind) {
        Some(c) if before.ok == 0 || c.last > before.last_ok => {
            let tail = if before.ok == 0 {
                c.first
            } else {
                c.first.max(before.last_ok)
            };
            tail.min(own)
        }
        _ => own,
    }
}

/// See the module docs: the next observed success after the segment's last failure (in the
/// slot of that failure when a success there came after it, else the first success of a later
/// slot), wherever the segment itself ends: a segment can hold healthy slots after its last
/// failure, and those are not part of the window.
fn end_of(series: &Series, buckets: &BTreeMap<i64, Bucket>, last_failure: f64) -> Option<f64> {
    let at = series.index(last_failure);
    buckets.range(at..).find_map(|(i, b)| {
        if b.ok == 0 {
            None
        } else if *i == at {
            (b.last_ok > last_failure).then_some(b.first_ok.max(last_failure))
        } else {
            Some(b.first_ok)
        }
    })
}

/// The median key of a count map.
fn median<K: Copy>(counts: &BTreeMap<K, u32>) -> Option<K> {
    let total: u64 = counts.values().map(|n| u64::from(*n)).sum();
    let mut seen = 0;
    for (k, n) in counts {
        seen += u64::from(*n);
        if seen * 2 >= total {
            return Some(*k);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::call::{Call, Outcome, Scope};
    use routersim_engine::failure::FailureKind;

    fn add(series: &mut Series, at: f64, outcome: Outcome, retry_after: Option<f64>) {
        let mut call = Call::new(1, at, at + 0.05, Arc::from("g"), Scope::Attempt);
        call.outcome = outcome;
        call.retry_after = retry_after;
        series.add(&Arc::from("d"), &call);
    }

    #[test]
    fn the_next_success_is_the_first_after_the_last_failure_not_the_segments_end() {
        let mut series = Series::new(1.0);
        let unavailable = Outcome::Failed(FailureKind::ServiceUnavailable);
        for at in [24.3, 24.6, 25.2] {
            add(&mut series, at, unavailable, None);
        }
        add(&mut series, 25.6, Outcome::Ok, None);
        for i in 0..20 {
            add(&mut series, 26.0 + f64::from(i) * 0.5, Outcome::Ok, None);
        }
        let buckets = &series.deployments[&Arc::<str>::from("d")];
        assert_eq!(end_of(&series, buckets, 25.2), Some(25.6));
        // A success in the failure's own slot before it does not end the window.
        add(&mut series, 24.1, Outcome::Ok, None);
        let buckets = &series.deployments[&Arc::<str>::from("d")];
        assert_eq!(end_of(&series, buckets, 24.6), Some(25.6));
        assert_eq!(end_of(&series, buckets, 35.6), None);
    }

    #[test]
    fn the_probability_is_over_the_windows_calls_not_its_first_slots_earlier_successes() {
        let mut series = Series::new(1.0);
        let rl = Outcome::Failed(FailureKind::RateLimit);
        for i in 0..72 {
            add(&mut series, f64::from(i) * 0.1, Outcome::Ok, None); // 0 s to 7.1 s
        }
        // The storm starts in the slot of the last two successes; one probe every 4 s.
        for at in [7.186, 11.312, 15.729, 19.997, 20.061, 24.176] {
            add(&mut series, at, rl, Some(4.0));
        }
        for i in 0..80 {
            add(&mut series, 28.41 + f64::from(i) * 0.1, Outcome::Ok, None);
        }
        let found = find_faults(&series);
        assert_eq!(found.len(), 1, "{found:#?}");
        let f = &found[0];
        assert_eq!((f.from, f.healthy_at), (7.186, Some(28.41)));
        // Halfway from the last 429 (24.176 s) to that success.
        assert!((f.to.unwrap() - 26.293).abs() < 1e-9, "{f:#?}");
        assert_eq!((f.failures, f.calls, f.probability), (6, 6, 1.0), "{f:#?}");
    }

    #[test]
    fn a_storm_is_carried_through_its_cooldowns_and_ends_halfway_to_the_next_success() {
        let mut series = Series::new(1.0);
        let rl = Outcome::Failed(FailureKind::RateLimit);
        for i in 0..80 {
            add(&mut series, f64::from(i) * 0.1, Outcome::Ok, None); // 0 s to 8 s
        }
        // The storm: one probe every 4 s (the deployment cools for the Retry-After between).
        for at in [8.05, 12.1, 16.2, 20.3, 24.4] {
            add(&mut series, at, rl, Some(4.0));
        }
        for i in 0..80 {
            add(&mut series, 28.5 + f64::from(i) * 0.1, Outcome::Ok, None);
        }
        let found = find_faults(&series);
        assert_eq!(found.len(), 1, "{found:#?}");
        let f = &found[0];
        // The last 429 at 24.4 s, the next success at 28.5 s: the storm ended somewhere in the
        // 4.1 s between (4 s of them cooling); the window ends in their middle.
        assert_eq!((f.from, f.healthy_at), (8.05, Some(28.5)));
        assert!((f.to.unwrap() - 26.45).abs() < 1e-9, "{f:#?}");
        assert_eq!((f.probability, f.failures), (1.0, 5));
        assert_eq!(f.retry_after, Some(4.0));
    }
}
