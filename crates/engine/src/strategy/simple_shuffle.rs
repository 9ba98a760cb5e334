//! `simple-shuffle`: LiteLLM's default.
//!
//! LiteLLM: *"random, by `weight`, else `rpm`, else `tpm` when given; uniform otherwise"* — the
//! first of those fields that any candidate sets gives every candidate its weight (a candidate
//! without it weighs 0).
//!
//! DeltaLLM's page says its `simple-shuffle` *"Picks randomly from the healthy eligible pool -
//! Ignores weight"*; we keep LiteLLM's weighted shuffle (a config without weights, rpm or tpm
//! gets the same uniform pick either way). Use `weighted` for DeltaLLM's weighted pick.

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use super::pick::{PickContext, SelectionStrategy, weighted_position};
use crate::config::Deployment;

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
    use crate::request::Request;
    use crate::stats::DeploymentLoad;
    use crate::strategy::test_support::{count_picks, dep};

    #[test]
    fn weight_then_rpm_then_tpm_then_uniform() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let load = vec![DeploymentLoad::default(); 2];
        let req = Request::default();
        let mut a = dep("a");
        let mut b = dep("b");
        // tpm only: by tpm.
        a.tpm = Some(0);
        b.tpm = Some(100);
        assert_eq!(
            count_picks(
                &SimpleShuffle,
                &[a.clone(), b.clone()],
                &load,
                &req,
                100,
                &mut rng
            ),
            vec![0, 100]
        );
        // rpm wins over tpm.
        a.rpm = Some(100);
        assert_eq!(
            count_picks(
                &SimpleShuffle,
                &[a.clone(), b.clone()],
                &load,
                &req,
                100,
                &mut rng
            ),
            vec![100, 0]
        );
        // weight wins over rpm.
        b.weight = Some(1.0);
        assert_eq!(
            count_picks(&SimpleShuffle, &[a, b], &load, &req, 100, &mut rng),
            vec![0, 100]
        );
        // Nothing set: uniform.
        let counts = count_picks(
            &SimpleShuffle,
            &[dep("a"), dep("b")],
            &load,
            &req,
            1000,
            &mut rng,
        );
        assert!(counts[0] > 400 && counts[1] > 400, "{counts:?}");
    }
}
