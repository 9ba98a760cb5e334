//! Selection strategies: which deployment of the eligible ones gets the attempt.
//!
//! The router filters first (cooldowns, order level, exclusions); a [`SelectionStrategy`] only
//! chooses among what is left, drawing from the router's seeded RNG. LiteLLM's default,
//! `simple-shuffle`, is [`SimpleShuffle`]: *"random, by `weight`, else `rpm`, else `tpm` when
//! given; uniform otherwise"*.

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use crate::config::{Deployment, RoutingStrategyName};
use crate::request::Request;
use crate::stats::DeploymentLoad;

/// What a strategy may look at when it picks.
#[derive(Clone, Copy, Debug)]
pub struct PickContext<'a> {
    /// Every deployment of the router (candidates index into it).
    pub deployments: &'a [Deployment],
    /// Indices of the eligible deployments (never empty).
    pub candidates: &'a [usize],
    /// The request being served.
    pub request: &'a Request,
    /// Every deployment's load (indexed like `deployments`).
    pub load: &'a [DeploymentLoad],
    /// The current minute (for [`DeploymentLoad::usage`]).
    pub minute: u64,
}

/// The strategy a name selects.
pub fn for_name(name: RoutingStrategyName) -> Box<dyn SelectionStrategy> {
    match name {
        RoutingStrategyName::SimpleShuffle
        | RoutingStrategyName::Weighted
        | RoutingStrategyName::PriorityBased
        | RoutingStrategyName::LeastBusy
        | RoutingStrategyName::LatencyBased
        | RoutingStrategyName::CostBased
        | RoutingStrategyName::UsageBased
        | RoutingStrategyName::RateLimitAware => Box::new(SimpleShuffle),
    }
}

/// Picks one candidate.
pub trait SelectionStrategy {
    /// Returns a position in `ctx.candidates`.
    fn pick(&self, ctx: &PickContext<'_>, rng: &mut ChaCha8Rng) -> usize;
}

/// Picks a position with probability proportional to `weights`; uniform when all are zero.
pub fn weighted_position(weights: &[f64], rng: &mut ChaCha8Rng) -> usize {
    let total: f64 = weights.iter().filter(|w| w.is_finite() && **w > 0.0).sum();
    if weights.is_empty() {
        return 0;
    }
    if total <= 0.0 {
        return rng.random_range(0..weights.len());
    }
    let mut point = rng.random_range(0.0..total);
    for (i, w) in weights.iter().enumerate() {
        if w.is_finite() && *w > 0.0 {
            if point < *w {
                return i;
            }
            point -= *w;
        }
    }
    weights.len() - 1
}

/// LiteLLM's `simple-shuffle`.
#[derive(Clone, Copy, Debug, Default)]
pub struct SimpleShuffle;

impl SimpleShuffle {
    /// The weights simple-shuffle uses: `weight` if any candidate sets it, else `rpm`, else
    /// `tpm`; `None` for a uniform pick.
    pub fn weights(ctx: &PickContext<'_>) -> Option<Vec<f64>> {
        let deployments = ctx.deployments;
        let field: [fn(&Deployment) -> Option<f64>; 3] = [
            |d| d.weight,
            |d| d.rpm.map(|v| v as f64),
            |d| d.tpm.map(|v| v as f64),
        ];
        field.iter().find_map(|get| {
            ctx.candidates
                .iter()
                .any(|&i| get(&deployments[i]).is_some())
                .then(|| {
                    ctx.candidates
                        .iter()
                        .map(|&i| get(&deployments[i]).unwrap_or(0.0))
                        .collect()
                })
        })
    }
}

impl SelectionStrategy for SimpleShuffle {
    fn pick(&self, ctx: &PickContext<'_>, rng: &mut ChaCha8Rng) -> usize {
        match Self::weights(ctx) {
            Some(weights) => weighted_position(&weights, rng),
            None => rng.random_range(0..ctx.candidates.len().max(1)),
        }
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;

    #[test]
    fn weighted_position_follows_weights() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut counts = [0u32; 2];
        for _ in 0..10_000 {
            counts[weighted_position(&[9.0, 1.0], &mut rng)] += 1;
        }
        let share = f64::from(counts[0]) / 10_000.0;
        assert!((share - 0.9).abs() < 0.02, "share {share}");
        assert_eq!(weighted_position(&[0.0, 5.0], &mut rng), 1);
    }
}
