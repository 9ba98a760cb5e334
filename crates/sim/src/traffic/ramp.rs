//! Linear ramps: a stream's rate as k6's `ramping-arrival-rate` defines it — a start rate
//! (k6's `startRate`, default 0), then `stages`, each a `duration` over which the rate moves
//! linearly from the previous stage's `target` to its own (requests per second at the
//! stage's end). Source: k6's docs, "Ramping arrival rate" (`stages[].duration`,
//! `stages[].target`, `startRate`).
//!
//! Arrivals follow the ramp by time rescaling: with `Λ(t)` the ramp's integral (the expected
//! number of requests by `t`), a Poisson stream puts arrivals where `Λ` crosses the running
//! sum of exponential(1) gaps, and a uniform stream puts its `k`-th arrival (from 1) where
//! `Λ(t) = k`. Both are exact for any piecewise-linear rate: `Λ` is quadratic within a stage
//! and solved in closed form ([`Ramp::time_at`]).

use std::time::Duration;

/// One stage: the rate moves linearly to `target` over `duration`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stage {
    /// How long the stage lasts (above zero).
    pub duration: Duration,
    /// Requests per second at the stage's end (0 or above).
    pub target: f64,
}

/// A piecewise-linear rate, from the start of its stream.
#[derive(Clone, Debug, PartialEq)]
pub struct Ramp {
    /// Requests per second at the start (k6's `startRate`).
    pub start_rate: f64,
    /// The stages, in order.
    pub stages: Vec<Stage>,
}

impl Ramp {
    /// The stages' total duration.
    pub fn total(&self) -> Duration {
        self.stages.iter().map(|s| s.duration).sum()
    }

    /// The highest rate anywhere on the ramp.
    pub fn peak(&self) -> f64 {
        self.stages
            .iter()
            .map(|s| s.target)
            .fold(self.start_rate, f64::max)
    }

    /// Each stage with its rate at its start.
    fn pieces(&self) -> impl Iterator<Item = (f64, &Stage)> {
        let starts = std::iter::once(self.start_rate).chain(self.stages.iter().map(|s| s.target));
        starts.zip(self.stages.iter())
    }

    /// `Λ(t)`: the expected number of requests in `[0, t)` (t past the end counts the whole
    /// ramp).
    pub fn integral(&self, t: Duration) -> f64 {
        let mut left = t.as_secs_f64();
        let mut sum = 0.0;
        for (r0, stage) in self.pieces() {
            let len = stage.duration.as_secs_f64();
            let tau = left.min(len);
            let slope = (stage.target - r0) / len;
            sum += r0 * tau + slope * tau * tau / 2.0;
            left -= tau;
            if left <= 0.0 {
                break;
            }
        }
        sum
    }

    /// The earliest time at which `Λ` reaches `s`; `None` when the whole ramp holds less.
    pub fn time_at(&self, s: f64) -> Option<Duration> {
        let mut start = 0.0;
        let mut need = s;
        for (r0, stage) in self.pieces() {
            let len = stage.duration.as_secs_f64();
            let area = (r0 + stage.target) / 2.0 * len;
            if need <= area && area > 0.0 {
                // r0·τ + a·τ² = need with a = (r1 − r0) / 2T, in the form that stays
                // stable for a = 0 and for r0 = 0: τ = 2·need / (r0 + √(r0² + 4·a·need)).
                let a = (stage.target - r0) / (2.0 * len);
                let root = (r0 * r0 + 4.0 * a * need).max(0.0).sqrt();
                let tau = if r0 + root > 0.0 {
                    (2.0 * need / (r0 + root)).min(len)
                } else {
                    0.0
                };
                return Some(Duration::from_nanos(((start + tau) * 1e9).round() as u64));
            }
            need -= area;
            start += len;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ramp() -> Ramp {
        Ramp {
            start_rate: 0.0,
            stages: vec![
                Stage {
                    duration: Duration::from_secs(10),
                    target: 20.0,
                },
                Stage {
                    duration: Duration::from_secs(10),
                    target: 20.0,
                },
                Stage {
                    duration: Duration::from_secs(5),
                    target: 0.0,
                },
            ],
        }
    }

    #[test]
    fn the_integral_is_the_area_under_the_rate() {
        let r = ramp();
        // Triangle 10 s × 20/s / 2 = 100, then a 200 plateau, then a 50 triangle.
        assert_eq!(r.integral(Duration::from_secs(10)), 100.0);
        assert_eq!(r.integral(Duration::from_secs(20)), 300.0);
        assert_eq!(r.integral(Duration::from_secs(99)), 350.0);
        assert_eq!(r.peak(), 20.0);
        assert_eq!(r.total(), Duration::from_secs(25));
    }

    #[test]
    fn time_at_inverts_the_integral() {
        let r = ramp();
        // Λ(t) = t² on the first stage: Λ = 25 at 5 s.
        assert_eq!(r.time_at(25.0), Some(Duration::from_secs(5)));
        assert_eq!(r.time_at(200.0), Some(Duration::from_secs(15)));
        for s in [0.5, 99.9, 100.0, 250.0, 349.0, 350.0] {
            let t = r.time_at(s).unwrap();
            assert!((r.integral(t) - s).abs() < 1e-6, "{s}: {t:?}");
        }
        assert_eq!(r.time_at(350.5), None);
    }
}
