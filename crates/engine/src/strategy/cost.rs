//! `cost-based-routing`: the cheapest estimated cost for this request.
//!
//! DeltaLLM: *"`cost-based-routing` — Prefers the lowest estimated unit cost for the request
//! mode"*; *"Estimates the cheapest eligible deployment for the current request - Works best when
//! deployment pricing metadata is accurate"*.
//!
//! The estimate for a chat request is `input_cost_per_token × input_tokens +
//! output_cost_per_token × output tokens`, where the output tokens are the request's
//! `output_tokens` (what a simulated answer will produce), else its `max_tokens`, else 0. A price
//! that is not set counts 0 when the other one is set; a deployment with neither sorts after
//! every priced one. Equal estimates are broken by the unit cost (input + output price per
//! token, DeltaLLM's one-prompt-one-completion-token estimate), so a request without token
//! counts still goes to the cheaper deployment; remaining ties are uniform.

use rand_chacha::ChaCha8Rng;

use super::pick::{PickContext, SelectionStrategy, TotalF64, pick_lowest};
use crate::config::Deployment;
use crate::request::Request;

/// DeltaLLM's (and LiteLLM's) `cost-based-routing`.
#[derive(Clone, Copy, Debug, Default)]
pub struct CostBased;

impl CostBased {
    /// The estimated cost of `request` on `d`; `None` when `d` has no pricing.
    pub fn estimate(d: &Deployment, request: &Request) -> Option<f64> {
        if d.input_cost_per_token.is_none() && d.output_cost_per_token.is_none() {
            return None;
        }
        let output = request.output_tokens.or(request.max_tokens).unwrap_or(0);
        Some(
            d.input_cost_per_token.unwrap_or(0.0) * f64::from(request.input_tokens)
                + d.output_cost_per_token.unwrap_or(0.0) * f64::from(output),
        )
    }

    /// The sort key: priced first, then the estimate, then the unit cost.
    fn key(d: &Deployment, request: &Request) -> (bool, TotalF64, TotalF64) {
        let estimate = Self::estimate(d, request);
        let unit = d.input_cost_per_token.unwrap_or(0.0) + d.output_cost_per_token.unwrap_or(0.0);
        (
            estimate.is_none(),
            TotalF64(estimate.unwrap_or(0.0)),
            TotalF64(unit),
        )
    }
}

impl SelectionStrategy for CostBased {
    fn pick(&self, ctx: &PickContext<'_>, rng: &mut ChaCha8Rng) -> usize {
        pick_lowest(ctx, rng, |p| Self::key(ctx.deployment(p), ctx.request))
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;
    use crate::stats::DeploymentLoad;
    use crate::strategy::test_support::{count_picks, dep};

    fn priced(id: &str, input: Option<f64>, output: Option<f64>) -> Deployment {
        Deployment {
            input_cost_per_token: input,
            output_cost_per_token: output,
            ..dep(id)
        }
    }

    fn request(input: u32, output: Option<u32>, max: Option<u32>) -> Request {
        Request {
            input_tokens: input,
            output_tokens: output,
            max_tokens: max,
            ..Request::default()
        }
    }

    #[test]
    fn estimate_uses_output_tokens_then_max_tokens_then_zero() {
        let d = priced("a", Some(1.0), Some(10.0));
        assert_eq!(
            CostBased::estimate(&d, &request(5, Some(2), Some(100))),
            Some(25.0)
        );
        assert_eq!(
            CostBased::estimate(&d, &request(5, None, Some(3))),
            Some(35.0)
        );
        assert_eq!(CostBased::estimate(&d, &request(5, None, None)), Some(5.0));
        let half = priced("b", None, Some(10.0));
        assert_eq!(
            CostBased::estimate(&half, &request(5, Some(1), None)),
            Some(10.0)
        );
        assert_eq!(
            CostBased::estimate(&dep("c"), &request(5, Some(1), None)),
            None
        );
    }

    #[test]
    fn cheapest_for_the_request_shape_and_unpriced_last() {
        let mut rng = ChaCha8Rng::seed_from_u64(8);
        let load = vec![DeploymentLoad::default(); 3];
        let deps = [
            dep("unpriced"),
            priced("cheap-in", Some(1e-6), Some(4e-6)),
            priced("cheap-out", Some(2e-6), Some(2e-6)),
        ];
        // Long prompt, short answer: cheap input wins.
        let counts = count_picks(
            &CostBased,
            &deps,
            &load,
            &request(1000, Some(10), None),
            100,
            &mut rng,
        );
        assert_eq!(counts, vec![0, 100, 0]);
        // Short prompt, long answer: cheap output wins.
        let counts = count_picks(
            &CostBased,
            &deps,
            &load,
            &request(10, None, Some(1000)),
            100,
            &mut rng,
        );
        assert_eq!(counts, vec![0, 0, 100]);
        // No token counts: the unit cost decides (5e-6 vs 4e-6).
        let counts = count_picks(
            &CostBased,
            &deps,
            &load,
            &request(0, None, None),
            100,
            &mut rng,
        );
        assert_eq!(counts, vec![0, 0, 100]);
        // Equal prices: uniform.
        let twins = [priced("x", Some(1e-6), None), priced("y", Some(1e-6), None)];
        let counts = count_picks(
            &CostBased,
            &twins,
            &load,
            &request(10, None, None),
            1000,
            &mut rng,
        );
        assert!(counts[0] > 400 && counts[1] > 400, "{counts:?}");
        // Only unpriced ones: uniform among them.
        let counts = count_picks(
            &CostBased,
            &[dep("u"), dep("v")],
            &load,
            &request(10, None, None),
            1000,
            &mut rng,
        );
        assert!(counts[0] > 400 && counts[1] > 400, "{counts:?}");
    }
}
