//! `priority-based-routing`: the lowest `priority` number first.
//!
//! DeltaLLM: *"`priority-based-routing` — Tries the lowest `priority` number first"*; *"Tries all
//! priority 0 deployments first - Only falls through to higher numbers like 1 or 2 if the
//! higher-priority pool is unavailable"*. The router has already dropped cooling deployments,
//! so picking the lowest priority among the candidates falls through exactly when the better
//! pool is unavailable.
//!
//! A deployment without a priority sorts after every numbered one; ties are uniform.
//! (DeltaLLM's own code reads a missing priority as 0 and breaks ties by weight; we follow the
//! simulator's spec: unnumbered last, ties uniform.)

use rand_chacha::ChaCha8Rng;

use super::pick::{PickContext, SelectionStrategy, pick_lowest};

/// DeltaLLM's `priority-based-routing`.
#[derive(Clone, Copy, Debug, Default)]
pub struct PriorityBased;

impl SelectionStrategy for PriorityBased {
    fn pick(&self, ctx: &PickContext<'_>, rng: &mut ChaCha8Rng) -> usize {
        pick_lowest(ctx, rng, |p| {
            let priority = ctx.deployment(p).priority;
            (priority.is_none(), priority)
        })
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;
    use crate::config::Deployment;
    use crate::request::Request;
    use crate::stats::DeploymentLoad;
    use crate::strategy::test_support::{count_picks, dep};

    fn prio(id: &str, priority: Option<u32>) -> Deployment {
        Deployment {
            priority,
            ..dep(id)
        }
    }

    #[test]
    fn lowest_number_then_unnumbered_with_uniform_ties() {
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let load = vec![DeploymentLoad::default(); 4];
        let req = Request::default();
        let deps = [
            prio("none", None),
            prio("p1", Some(1)),
            prio("p0a", Some(0)),
            prio("p0b", Some(0)),
        ];
        let counts = count_picks(&PriorityBased, &deps, &load, &req, 1000, &mut rng);
        assert_eq!((counts[0], counts[1]), (0, 0));
        assert!(counts[2] > 400 && counts[3] > 400, "{counts:?}");
        // Unnumbered sorts after even the largest number.
        let deps = [prio("none", None), prio("max", Some(u32::MAX))];
        assert_eq!(
            count_picks(&PriorityBased, &deps, &load, &req, 100, &mut rng),
            vec![0, 100]
        );
    }
}
