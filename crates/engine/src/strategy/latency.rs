//! `latency-based-routing`: the best recent latency, without starving anyone.
//!
//! DeltaLLM: *"`latency-based-routing` — Prefers the best recent latency, while keeping new
//! members eligible"*; *"Uses recent observed latency to prefer faster deployments - New or
//! unsampled deployments stay eligible instead of being starved forever"*.
//!
//! The pick, over the mean of each candidate's last
//! [`LATENCY_SAMPLES`](crate::stats::LATENCY_SAMPLES) latencies:
//! 1. candidates never tried go first (uniformly among them), so a new deployment gets
//!    measured at once; a candidate tried but never measured (it only failed, and fast failures
//!    say nothing about speed) ranks as the slowest — else a failing deployment would look
//!    "new" forever and draw every pick;
//! 2. otherwise, with probability [`EXPLORATION`], one of the candidates *outside* the buffer
//!    (uniformly), so a deployment that got slow and then recovered is measured again — without
//!    this its old samples would keep it out for good, since only picked deployments get new
//!    samples;
//! 3. otherwise uniformly among the candidates whose mean is within [`BUFFER_PERCENT`] % of the
//!    best mean (LiteLLM's `lowest_latency_buffer`: *"picks randomly among deployments within
//!    buffer × the lowest latency"*), so near-equal deployments share the traffic instead of
//!    one taking all of it on noise.
//!
//! DeltaLLM itself pools unsampled deployments with the fastest tier and lets old samples decay
//! over a five-minute window; our samples have no timestamps, so exploration stands in for
//! that decay.

use std::time::Duration;

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use super::pick::{PickContext, SelectionStrategy, uniform_among};
use crate::small::Indices;

/// Candidates whose mean latency is within this many percent of the best mean count as equally
/// fast (LiteLLM's `lowest_latency_buffer`, as a percentage; LiteLLM's default is 0).
pub const BUFFER_PERCENT: u32 = 10;

/// The share of picks that go to a slower deployment (outside the buffer) to re-measure it:
/// one pick in fifty.
pub const EXPLORATION: f64 = 0.02;

/// DeltaLLM's `latency-based-routing`.
#[derive(Clone, Copy, Debug, Default)]
pub struct LatencyBased;

impl LatencyBased {
    /// Whether `mean` is within [`BUFFER_PERCENT`] of `best`.
    pub fn within_buffer(mean: Duration, best: Duration) -> bool {
        mean.as_nanos() * 100 <= best.as_nanos() * u128::from(100 + BUFFER_PERCENT)
    }
}

impl SelectionStrategy for LatencyBased {
    fn pick(&self, ctx: &PickContext<'_>, rng: &mut ChaCha8Rng) -> usize {
        // Stack-only sets: this runs on every pick of a latency-routed run.
        let n = ctx.candidates.len();
        let mean = |p: usize| ctx.load_of(p).and_then(|l| l.mean_latency());
        let mut untried = Indices::new();
        let mut best: Option<Duration> = None;
        for p in 0..n {
            match mean(p) {
                Some(m) => best = Some(best.map_or(m, |b| b.min(m))),
                None if !ctx.load_of(p).is_some_and(|l| l.was_tried()) => untried.push(p),
                None => {}
            }
        }
        if !untried.is_empty() {
            return uniform_among(untried.as_slice(), rng);
        }
        let Some(best) = best else {
            // Every candidate has only failed: uniform.
            let mut all = Indices::new();
            all.extend(0..n);
            return uniform_among(all.as_slice(), rng);
        };
        let (mut fast, mut slow) = (Indices::new(), Indices::new());
        for p in 0..n {
            if mean(p).is_some_and(|m| Self::within_buffer(m, best)) {
                fast.push(p);
            } else {
                slow.push(p);
            }
        }
        if !slow.is_empty() && rng.random_bool(EXPLORATION) {
            return uniform_among(slow.as_slice(), rng);
        }
        uniform_among(fast.as_slice(), rng)
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;
    use crate::request::Request;
    use crate::strategy::test_support::{Loads, count_picks, dep};

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn sample(loads: &Loads, deployment: usize, latency: Duration) {
        loads.tracker.on_start(deployment, loads.start, 0);
        loads
            .tracker
            .on_end(deployment, loads.start, Some(latency), 0);
    }

    #[test]
    fn unsampled_first_then_buffered_best_with_a_little_exploration() {
        let mut rng = ChaCha8Rng::seed_from_u64(6);
        let deps = [dep("a"), dep("b"), dep("c"), dep("d")];
        let req = Request::default();
        let loads = Loads::new(4);
        sample(&loads, 0, ms(100));
        sample(&loads, 1, ms(109));
        sample(&loads, 2, ms(500));
        // d has no sample: it gets every pick.
        assert_eq!(
            count_picks(&LatencyBased, &deps, &loads.snapshot(), &req, 100, &mut rng),
            vec![0, 0, 0, 100]
        );
        sample(&loads, 3, ms(111));
        // a and b are within 10 % of the best; c and d are explored ~2 % of the time.
        let counts = count_picks(
            &LatencyBased,
            &deps,
            &loads.snapshot(),
            &req,
            10_000,
            &mut rng,
        );
        let slow = counts[2] + counts[3];
        assert!(counts[0] > 4_600 && counts[1] > 4_600, "{counts:?}");
        assert!(
            (100..=300).contains(&slow) && counts[2] > 50 && counts[3] > 50,
            "{counts:?}"
        );
    }

    #[test]
    fn buffer_is_inclusive_at_ten_percent() {
        assert!(LatencyBased::within_buffer(ms(110), ms(100)));
        assert!(!LatencyBased::within_buffer(ms(111), ms(100)));
        assert!(LatencyBased::within_buffer(ms(0), ms(0)));
    }
}
