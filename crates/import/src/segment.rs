//! Where a deployment's failure rate changed: the optimal partition of its error series.
//!
//! The series is one failure kind's count per observed bucket (`k` failures of `n` calls). Each
//! segment is modelled as a constant failure probability, so a partition's cost is its
//! negative Bernoulli log-likelihood, `−Σ [K ln(K/N) + (N−K) ln(1−K/N)]` over its segments,
//! plus a penalty β for each segment; the partition with the least cost is found exactly by
//! PELT (Killick, Fearnhead & Eckley, "Optimal detection of changepoints with a linear
//! computational cost", JASA 2012), whose pruning keeps it near linear in the buckets.
//!
//! Why this method: the windows the scenario format has are exactly piecewise-constant failure
//! probabilities, which is this model; the likelihood weighs a bucket by the calls in it, so a
//! bucket with one call during a cooldown counts for one call, not for a bucket's worth;
//! unobserved buckets (no calls) add nothing, so a cooldown neither ends a window nor starts
//! one; and the penalty β = 1.5 ln N (N: calls in the series; BIC's ln N per changepoint,
//! raised by half so that sporadic single failures do not make windows) needs no threshold
//! tuned per incident.

/// A segment of the series: buckets `first..end` of the observed buckets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Segment {
    /// Its first observed bucket (index into the series).
    pub first: usize,
    /// One past its last.
    pub end: usize,
    /// Calls in it.
    pub trials: u64,
    /// Failures in it.
    pub failures: u64,
}

impl Segment {
    /// Its failure rate.
    pub fn rate(&self) -> f64 {
        if self.trials == 0 {
            0.0
        } else {
            self.failures as f64 / self.trials as f64
        }
    }
}

/// The penalty per segment for a series of `calls` calls.
pub fn penalty(calls: u64) -> f64 {
    1.5 * (calls.max(2) as f64).ln()
}

/// `−log-likelihood` of `k` failures in `n` calls at their own rate.
fn cost(n: u64, k: u64) -> f64 {
    if n == 0 || k == 0 || k == n {
        return 0.0;
    }
    let (n, k) = (n as f64, k as f64);
    -(k * (k / n).ln() + (n - k) * ((n - k) / n).ln())
}

/// The least-cost partition of the series `(trials, failures)` per bucket, with penalty `beta`
/// per segment, in order.
pub fn segments(series: &[(u64, u64)], beta: f64) -> Vec<Segment> {
    let m = series.len();
    if m == 0 {
        return Vec::new();
    }
    let mut n = vec![0_u64; m + 1];
    let mut k = vec![0_u64; m + 1];
    for (i, &(trials, failures)) in series.iter().enumerate() {
        n[i + 1] = n[i] + trials;
        k[i + 1] = k[i] + failures.min(trials);
    }
    let seg_cost = |s: usize, t: usize| cost(n[t] - n[s], k[t] - k[s]);
    let mut best = vec![0.0_f64; m + 1];
    let mut previous = vec![0_usize; m + 1];
    best[0] = -beta;
    let mut candidates = vec![0_usize];
    for t in 1..=m {
        let (mut arg, mut value) = (0, f64::INFINITY);
        for &s in &candidates {
            let v = best[s] + seg_cost(s, t) + beta;
            if v < value {
                (arg, value) = (s, v);
            }
        }
        best[t] = value;
        previous[t] = arg;
        candidates.retain(|&s| best[s] + seg_cost(s, t) <= value);
        candidates.push(t);
    }
    let mut bounds = vec![m];
    let mut t = m;
    while t > 0 {
        t = previous[t];
        bounds.push(t);
    }
    bounds.reverse();
    bounds
        .windows(2)
        .map(|w| Segment {
            first: w[0],
            end: w[1],
            trials: n[w[1]] - n[w[0]],
            failures: k[w[1]] - k[w[0]],
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rates(series: &[(u64, u64)]) -> Vec<(usize, usize, f64)> {
        let calls = series.iter().map(|s| s.0).sum();
        segments(series, penalty(calls))
            .iter()
            .map(|s| (s.first, s.end, (s.rate() * 100.0).round() / 100.0))
            .collect()
    }

    #[test]
    fn a_storm_between_healthy_stretches_is_its_own_segment() {
        let mut series = vec![(60, 0); 5];
        series.extend([(2, 2), (1, 1), (3, 3)]);
        series.extend(vec![(60, 0); 5]);
        assert_eq!(rates(&series), vec![(0, 5, 0.0), (5, 8, 1.0), (8, 13, 0.0)]);
    }

    #[test]
    fn a_lone_failure_makes_no_window_and_a_partial_rate_is_found() {
        let mut series = vec![(60, 0); 6];
        series[3] = (60, 1);
        assert_eq!(rates(&series), vec![(0, 6, 0.0)]);
        let mut series = vec![(40, 0); 4];
        series.extend(vec![(40, 12); 4]);
        series.extend(vec![(40, 0); 4]);
        assert_eq!(rates(&series), vec![(0, 4, 0.0), (4, 8, 0.3), (8, 12, 0.0)]);
    }
}
