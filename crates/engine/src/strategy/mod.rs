//! Selection strategies: which deployment of the eligible ones gets the attempt.
//!
//! The router filters first (cooldowns, order level, exclusions, tags, pre-call checks); a
//! [`SelectionStrategy`] only chooses among what is left, drawing from the router's seeded RNG.
//! DeltaLLM: *"Removes unhealthy or cooled-down deployments; Applies request tag filtering …;
//! Optionally skips deployments already above configured RPM or TPM limits; Selects one
//! deployment with the active routing strategy"*.
//!
//! One module per strategy; [`for_name`] maps `router_settings.routing_strategy` to it:
//!
//! | name | strategy |
//! |---|---|
//! | `simple-shuffle` | [`SimpleShuffle`] |
//! | `weighted`, `tag-based-routing` | [`Weighted`] |
//! | `priority-based-routing` | [`PriorityBased`] |
//! | `least-busy` | [`LeastBusy`] |
//! | `latency-based-routing` | [`LatencyBased`] |
//! | `cost-based-routing` | [`CostBased`] |
//! | `usage-based-routing`, `usage-based-routing-v2` | [`UsageBased`] |
//! | `rate-limit-aware` | [`RateLimitAware`] |
//!
//! Every strategy is deterministic given the RNG: it reads candidates in order, breaks ties with
//! a uniform draw from the passed RNG (no draw when one candidate is left), and never iterates a
//! hash map.

use crate::config::RoutingStrategyName;

pub mod cost;
pub mod latency;
pub mod least_busy;
pub mod pick;
pub mod priority;
pub mod rate_limit_aware;
pub mod simple_shuffle;
pub mod usage;
pub mod weighted;

pub use cost::CostBased;
pub use latency::LatencyBased;
pub use least_busy::LeastBusy;
pub use pick::{
    PickContext, SelectionStrategy, TotalF64, pick_lowest, uniform_among, weighted_position,
};
pub use priority::PriorityBased;
pub use rate_limit_aware::RateLimitAware;
pub use simple_shuffle::SimpleShuffle;
pub use usage::UsageBased;
pub use weighted::Weighted;

/// The strategy a name selects.
pub fn for_name(name: RoutingStrategyName) -> Box<dyn SelectionStrategy> {
    match name {
        RoutingStrategyName::SimpleShuffle => Box::new(SimpleShuffle),
        RoutingStrategyName::Weighted => Box::new(Weighted),
        RoutingStrategyName::PriorityBased => Box::new(PriorityBased),
        RoutingStrategyName::LeastBusy => Box::new(LeastBusy),
        RoutingStrategyName::LatencyBased => Box::new(LatencyBased),
        RoutingStrategyName::CostBased => Box::new(CostBased),
        RoutingStrategyName::UsageBased => Box::new(UsageBased),
        RoutingStrategyName::RateLimitAware => Box::new(RateLimitAware),
    }
}

#[cfg(test)]
pub(crate) mod test_support {
    //! Builds pick contexts for the strategies' unit tests.

    use std::sync::Arc;

    use tokio::time::Instant;

    use rand_chacha::ChaCha8Rng;

    use super::*;
    use crate::config::Deployment;
    use crate::request::Request;
    use crate::stats::{DeploymentLoad, LoadTracker};

    /// A deployment `id` of group `g`.
    pub fn dep(id: &str) -> Deployment {
        Deployment {
            id: Arc::from(id),
            model_name: Arc::from("g"),
            model: "openai/g".into(),
            ..Deployment::default()
        }
    }

    /// Loads built through the real tracker, at minute 0.
    pub struct Loads {
        pub tracker: LoadTracker,
        pub start: Instant,
    }

    impl Loads {
        pub fn new(n: usize) -> Self {
            let start = Instant::now();
            Self {
                tracker: LoadTracker::new(n, start),
                start,
            }
        }

        pub fn snapshot(&self) -> Vec<DeploymentLoad> {
            self.tracker.read(<[DeploymentLoad]>::to_vec)
        }
    }

    /// Counts picks (by deployment index) over `n` runs.
    pub fn count_picks(
        strategy: &dyn SelectionStrategy,
        deployments: &[Deployment],
        load: &[DeploymentLoad],
        request: &Request,
        n: u32,
        rng: &mut ChaCha8Rng,
    ) -> Vec<u32> {
        let candidates: Vec<usize> = (0..deployments.len()).collect();
        let ctx = PickContext {
            deployments,
            candidates: &candidates,
            request,
            load,
            minute: 0,
        };
        let mut counts = vec![0; deployments.len()];
        for _ in 0..n {
            counts[candidates[strategy.pick(&ctx, rng)]] += 1;
        }
        counts
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    use super::pick::lowest;
    use super::*;
    use crate::request::Request;
    use crate::stats::DeploymentLoad;

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

    #[test]
    fn every_name_maps_to_its_strategy() {
        let deployments = vec![
            test_support::dep("a"),
            test_support::dep("b"),
            test_support::dep("c"),
        ];
        let load = vec![DeploymentLoad::default(); 3];
        let candidates = [0, 2];
        let request = Request::default();
        let ctx = PickContext {
            deployments: &deployments,
            candidates: &candidates,
            request: &request,
            load: &load,
            minute: 0,
        };
        for name in RoutingStrategyName::NAMES {
            let strategy = for_name(RoutingStrategyName::from_name(name).expect("known name"));
            let mut rng = rand::SeedableRng::seed_from_u64(1);
            for _ in 0..50 {
                assert!(strategy.pick(&ctx, &mut rng) < candidates.len(), "{name}");
            }
        }
    }

    #[test]
    fn lowest_positions_keeps_every_tie_in_order() {
        let deployments = vec![test_support::dep("a"); 4];
        let load = vec![DeploymentLoad::default(); 4];
        let candidates = [0, 1, 2, 3];
        let request = Request::default();
        let ctx = PickContext {
            deployments: &deployments,
            candidates: &candidates,
            request: &request,
            load: &load,
            minute: 0,
        };
        let keys = [3, 1, 2, 1];
        assert_eq!(lowest(&ctx, |p| keys[p]).as_slice(), &[1, 3]);
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mut seen = [0u32; 4];
        for _ in 0..1000 {
            seen[pick_lowest(&ctx, &mut rng, |p| keys[p])] += 1;
        }
        assert_eq!((seen[0], seen[2]), (0, 0));
        assert!(seen[1] > 400 && seen[3] > 400, "{seen:?}");
    }
}
