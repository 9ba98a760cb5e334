//! `least-busy`: the fewest requests in flight.
//!
//! DeltaLLM: *"`least-busy` — Picks the deployment with the fewest active requests"*; *"Chooses
//! the deployment with the fewest active in-flight requests - Useful when latency is mostly
//! driven by queue depth"*. In-flight counts are the router's own attempts under way
//! ([`DeploymentLoad::in_flight`](crate::stats::DeploymentLoad::in_flight)); ties are uniform.

use rand_chacha::ChaCha8Rng;

use super::pick::{PickContext, SelectionStrategy, pick_lowest};

/// DeltaLLM's (and LiteLLM's) `least-busy`.
#[derive(Clone, Copy, Debug, Default)]
pub struct LeastBusy;

impl SelectionStrategy for LeastBusy {
    fn pick(&self, ctx: &PickContext<'_>, rng: &mut ChaCha8Rng) -> usize {
        pick_lowest(ctx, rng, |p| ctx.load_of(p).map_or(0, |l| l.in_flight))
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;
    use crate::request::Request;
    use crate::strategy::test_support::{Loads, count_picks, dep};

    #[test]
    fn fewest_in_flight_with_uniform_ties() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let loads = Loads::new(3);
        for _ in 0..2 {
            loads.tracker.on_start(0, loads.start, 0);
        }
        loads.tracker.on_start(1, loads.start, 0);
        loads.tracker.on_start(2, loads.start, 0);
        let deps = [dep("a"), dep("b"), dep("c")];
        let req = Request::default();
        let counts = count_picks(&LeastBusy, &deps, &loads.snapshot(), &req, 1000, &mut rng);
        assert_eq!(counts[0], 0);
        assert!(counts[1] > 400 && counts[2] > 400, "{counts:?}");
    }
}
