//! `usage-based-routing` (and `usage-based-routing-v2`): the lowest utilisation this minute.
//!
//! DeltaLLM: *"`usage-based-routing` — Prefers the deployment with the lowest current RPM/TPM
//! utilization"*; *"Looks at recent request-per-minute and token-per-minute usage - Prefers the
//! least utilized deployment"*, best with *"accurate rpm_limit and tpm_limit"* (loaded into
//! `rpm` / `tpm`).
//!
//! A deployment's utilisation is `max(requests / rpm, tokens / tpm)` over the limits it sets,
//! counted in the router's current minute (a limit of 0 counts as unset, as in DeltaLLM). A
//! deployment without any limit has nothing to use up: its utilisation is 0, as in DeltaLLM.
//! Equal utilisations (for instance when no candidate sets a limit) go to the fewest tokens this
//! minute, then uniformly.

use rand_chacha::ChaCha8Rng;

use super::pick::{PickContext, SelectionStrategy, TotalF64, pick_lowest};
use crate::config::Deployment;

/// `max(requests / rpm, tokens / tpm)` over the limits `d` sets (non-zero); `None` without any.
pub fn utilisation(d: &Deployment, requests: u64, tokens: u64) -> Option<f64> {
    let ratio =
        |used: u64, limit: Option<u64>| limit.filter(|&l| l > 0).map(|l| used as f64 / l as f64);
    match (ratio(requests, d.rpm), ratio(tokens, d.tpm)) {
        (Some(r), Some(t)) => Some(r.max(t)),
        (r, t) => r.or(t),
    }
}

/// DeltaLLM's `usage-based-routing`.
#[derive(Clone, Copy, Debug, Default)]
pub struct UsageBased;

impl SelectionStrategy for UsageBased {
    fn pick(&self, ctx: &PickContext<'_>, rng: &mut ChaCha8Rng) -> usize {
        pick_lowest(ctx, rng, |p| {
            let (requests, tokens) = ctx.usage_of(p);
            let used = utilisation(ctx.deployment(p), requests, tokens).unwrap_or(0.0);
            (TotalF64(used), tokens)
        })
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;
    use crate::request::Request;
    use crate::strategy::test_support::{Loads, count_picks, dep};

    fn limited(id: &str, rpm: Option<u64>, tpm: Option<u64>) -> Deployment {
        Deployment {
            rpm,
            tpm,
            ..dep(id)
        }
    }

    #[test]
    fn utilisation_is_the_larger_ratio_over_set_limits() {
        assert_eq!(
            utilisation(&limited("a", Some(10), Some(1000)), 5, 100),
            Some(0.5)
        );
        assert_eq!(
            utilisation(&limited("a", Some(10), Some(100)), 5, 90),
            Some(0.9)
        );
        assert_eq!(
            utilisation(&limited("a", None, Some(100)), 5, 90),
            Some(0.9)
        );
        assert_eq!(utilisation(&limited("a", Some(0), None), 5, 90), None);
        assert_eq!(utilisation(&dep("a"), 5, 90), None);
    }

    #[test]
    fn least_utilised_then_fewest_tokens() {
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let req = Request::default();
        let loads = Loads::new(3);
        // a: 5 of 10 rpm (0.5); b: 40 of 100 rpm (0.4); c: 1 request, 800 of 1000 tpm (0.8).
        for _ in 0..5 {
            loads.tracker.on_start(0, loads.start, 1);
        }
        for _ in 0..40 {
            loads.tracker.on_start(1, loads.start, 1);
        }
        loads.tracker.on_start(2, loads.start, 800);
        let deps = [
            limited("a", Some(10), None),
            limited("b", Some(100), None),
            limited("c", Some(100), Some(1000)),
        ];
        let counts = count_picks(&UsageBased, &deps, &loads.snapshot(), &req, 100, &mut rng);
        assert_eq!(counts, vec![0, 100, 0]);
        // Without limits: fewest tokens this minute (b: 40, a: 5, c: 800).
        let plain = [dep("a"), dep("b"), dep("c")];
        let counts = count_picks(&UsageBased, &plain, &loads.snapshot(), &req, 100, &mut rng);
        assert_eq!(counts, vec![100, 0, 0]);
        // Next minute: all idle again, uniform.
        let candidates = [0, 1, 2];
        let load = loads.snapshot();
        let ctx = PickContext {
            deployments: &plain,
            candidates: &candidates,
            request: &req,
            load: &load,
            minute: 1,
        };
        let mut seen = [0u32; 3];
        for _ in 0..900 {
            seen[UsageBased.pick(&ctx, &mut rng)] += 1;
        }
        assert!(seen.iter().all(|&n| n > 250), "{seen:?}");
    }
}
