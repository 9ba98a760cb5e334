//! `rate-limit-aware`: stay away from deployments near their RPM/TPM ceiling.
//!
//! DeltaLLM: *"`rate-limit-aware` — Avoids deployments near configured RPM/TPM limits"*;
//! *"Filters out deployments already close to their configured RPM or TPM ceilings - Then picks
//! from the remaining pool"* (limits from `model_info.rpm_limit` / `tpm_limit`, loaded into
//! `rpm` / `tpm`).
//!
//! A candidate is near its ceiling when, counting this request (this minute's requests + 1 and
//! tokens + the request's input tokens), its [`utilisation`] reaches [`NEAR_LIMIT`] (90 %, as
//! DeltaLLM's `utilization_threshold`). The others are picked like `weighted`. A candidate
//! without limits is never near. When every candidate is near, the least utilised one is picked
//! (ties uniform): the pick never fails (DeltaLLM would return no deployment; dropping
//! deployments that are actually *over* their limits is the router's pre-call check).

use rand_chacha::ChaCha8Rng;

use super::pick::{PickContext, SelectionStrategy, TotalF64, pick_lowest};
use super::usage::utilisation;
use super::weighted::Weighted;

/// Utilisation (after counting the request) at or above which a deployment is "near" its limit.
pub const NEAR_LIMIT: f64 = 0.9;

/// DeltaLLM's `rate-limit-aware`.
#[derive(Clone, Copy, Debug, Default)]
pub struct RateLimitAware;

impl RateLimitAware {
    /// The utilisation of the candidate at `pos` once this request is counted; `None` without
    /// limits.
    pub fn utilisation_after(ctx: &PickContext<'_>, pos: usize) -> Option<f64> {
        let (requests, tokens) = ctx.usage_of(pos);
        utilisation(
            ctx.deployment(pos),
            requests + 1,
            tokens + u64::from(ctx.request.input_tokens),
        )
    }
}

impl SelectionStrategy for RateLimitAware {
    fn pick(&self, ctx: &PickContext<'_>, rng: &mut ChaCha8Rng) -> usize {
        let after: Vec<Option<f64>> = (0..ctx.candidates.len())
            .map(|p| Self::utilisation_after(ctx, p))
            .collect();
        let clear: Vec<usize> = (0..after.len())
            .filter(|&p| after[p].is_none_or(|u| u < NEAR_LIMIT))
            .collect();
        if clear.is_empty() {
            pick_lowest(ctx, rng, |p| TotalF64(after[p].unwrap_or(0.0)))
        } else {
            Weighted::pick_among(ctx, &clear, rng)
        }
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;
    use crate::config::Deployment;
    use crate::request::Request;
    use crate::strategy::test_support::{Loads, count_picks, dep};

    fn limited(id: &str, rpm: Option<u64>, tpm: Option<u64>, weight: Option<f64>) -> Deployment {
        Deployment {
            rpm,
            tpm,
            weight,
            ..dep(id)
        }
    }

    #[test]
    fn drops_near_ones_then_weighs_the_rest() {
        let mut rng = ChaCha8Rng::seed_from_u64(10);
        let loads = Loads::new(3);
        // a: 8 of 10 rpm → 9/10 with this request: near. b: 0 of 10. c: no limits.
        for _ in 0..8 {
            loads.tracker.on_start(0, loads.start, 0);
        }
        let deps = [
            limited("a", Some(10), None, None),
            limited("b", Some(10), None, Some(3.0)),
            limited("c", None, None, None),
        ];
        let req = Request::default();
        let counts = count_picks(
            &RateLimitAware,
            &deps,
            &loads.snapshot(),
            &req,
            10_000,
            &mut rng,
        );
        assert_eq!(counts[0], 0);
        let share_b = f64::from(counts[1]) / 10_000.0;
        assert!((share_b - 0.75).abs() < 0.02, "{counts:?}");
    }

    #[test]
    fn counts_the_request_tokens_and_never_fails() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let loads = Loads::new(2);
        // a: 500 of 1000 tpm; b: 300 of 1000 tpm.
        loads.tracker.on_start(0, loads.start, 500);
        loads.tracker.on_start(1, loads.start, 300);
        let deps = [
            limited("a", None, Some(1000), None),
            limited("b", None, Some(1000), None),
        ];
        // 350 input tokens: a would reach 0.85 (clear), b 0.65: both clear.
        let small = Request {
            input_tokens: 350,
            ..Request::default()
        };
        let counts = count_picks(
            &RateLimitAware,
            &deps,
            &loads.snapshot(),
            &small,
            1000,
            &mut rng,
        );
        assert!(counts[0] > 400 && counts[1] > 400, "{counts:?}");
        // 400: a would reach 0.9 (near), b 0.7.
        let medium = Request {
            input_tokens: 400,
            ..Request::default()
        };
        let counts = count_picks(
            &RateLimitAware,
            &deps,
            &loads.snapshot(),
            &medium,
            100,
            &mut rng,
        );
        assert_eq!(counts, vec![0, 100]);
        // 900: both near; the least utilised (b) still gets it.
        let big = Request {
            input_tokens: 900,
            ..Request::default()
        };
        let counts = count_picks(
            &RateLimitAware,
            &deps,
            &loads.snapshot(),
            &big,
            100,
            &mut rng,
        );
        assert_eq!(counts, vec![0, 100]);
    }
}
