//! `weighted` (and the deprecated `tag-based-routing`): a random pick by `weight`.
//!
//! DeltaLLM: *"`weighted` — Randomly picks by `model_info.weight`"*; *"Picks randomly, but
//! higher weight gets more traffic over time"*; and for `tag-based-routing`: *"It uses the same
//! weighted implementation as weighted - Request-tag eligibility filtering still runs first, as
//! it does for every strategy"* (the router applies the tag filter, not this strategy).
//!
//! A deployment without a weight counts [`DEFAULT_WEIGHT`] (DeltaLLM's default); a weight of 0
//! (or below) gets no traffic while any candidate has a positive weight; when every weight is
//! 0 the pick is uniform.

use rand_chacha::ChaCha8Rng;

use super::pick::{PickContext, SelectionStrategy, weighted_position};
use crate::config::Deployment;

/// The weight of a deployment that sets none.
pub const DEFAULT_WEIGHT: f64 = 1.0;

/// DeltaLLM's `weighted`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Weighted;

impl Weighted {
    /// A deployment's weight: its own, else [`DEFAULT_WEIGHT`].
    pub fn weight(d: &Deployment) -> f64 {
        d.weight.unwrap_or(DEFAULT_WEIGHT)
    }

    /// Picks among `positions` (positions in `ctx.candidates`) by weight; returns one of them.
    pub fn pick_among(ctx: &PickContext<'_>, positions: &[usize], rng: &mut ChaCha8Rng) -> usize {
        match positions {
            [] => 0,
            [only] => *only,
            _ => {
                let weights: Vec<f64> = positions
                    .iter()
                    .map(|&p| Self::weight(ctx.deployment(p)))
                    .collect();
                positions[weighted_position(&weights, rng)]
            }
        }
    }
}

impl SelectionStrategy for Weighted {
    fn pick(&self, ctx: &PickContext<'_>, rng: &mut ChaCha8Rng) -> usize {
        let all: Vec<usize> = (0..ctx.candidates.len()).collect();
        Self::pick_among(ctx, &all, rng)
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;
    use crate::request::Request;
    use crate::stats::DeploymentLoad;
    use crate::strategy::test_support::{count_picks, dep};

    fn weighted(id: &str, weight: Option<f64>) -> Deployment {
        Deployment { weight, ..dep(id) }
    }

    #[test]
    fn missing_weight_counts_one_and_all_zero_is_uniform() {
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let load = vec![DeploymentLoad::default(); 2];
        let req = Request::default();
        // 3 : (none = 1) → 75 / 25.
        let counts = count_picks(
            &Weighted,
            &[weighted("a", Some(3.0)), weighted("b", None)],
            &load,
            &req,
            10_000,
            &mut rng,
        );
        let share = f64::from(counts[0]) / 10_000.0;
        assert!((share - 0.75).abs() < 0.02, "{counts:?}");
        // A zero weight gets nothing beside a positive one.
        let counts = count_picks(
            &Weighted,
            &[weighted("a", Some(0.0)), weighted("b", None)],
            &load,
            &req,
            1000,
            &mut rng,
        );
        assert_eq!(counts, vec![0, 1000]);
        // All zero: uniform.
        let counts = count_picks(
            &Weighted,
            &[weighted("a", Some(0.0)), weighted("b", Some(0.0))],
            &load,
            &req,
            1000,
            &mut rng,
        );
        assert!(counts[0] > 400 && counts[1] > 400, "{counts:?}");
    }

    #[test]
    fn rpm_and_tpm_do_not_weigh() {
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let load = vec![DeploymentLoad::default(); 2];
        let a = Deployment {
            rpm: Some(1_000_000),
            ..dep("a")
        };
        let counts = count_picks(
            &Weighted,
            &[a, dep("b")],
            &load,
            &Request::default(),
            1000,
            &mut rng,
        );
        assert!(counts[0] > 400 && counts[1] > 400, "{counts:?}");
    }
}
