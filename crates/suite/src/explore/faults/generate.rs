//! A seed's whole fault mix: its windows, provider keys, streamed traffic and continuation
//! chain, drawn in that order from the seed's `explore/faults` stream.

use rand::RngExt;
use routersim_mock_providers::rng::seeded_rng;
use serde_json::json;

use super::chain::chain;
use super::providers::provider_keys;
use super::target::{FaultMix, PURPOSE, Targets};
use super::windows::window;

/// The fault mix of `seed` for a scenario with these targets.
pub fn generate(seed: u64, targets: &Targets) -> FaultMix {
    let mut rng = seeded_rng(seed, PURPOSE);
    let mut mix = FaultMix::default();
    if targets.deployments.is_empty() {
        return mix;
    }
    // About one seed in eight adds no window: the scenario's own faults under new draws.
    let windows = match rng.random_range(0..8u32) {
        0 => 0,
        n => n.min(6),
    };
    for _ in 0..windows {
        mix.windows.push(window(&mut rng, targets));
    }
    if rng.random_bool(0.3) {
        for _ in 0..rng.random_range(1..=2u32) {
            provider_keys(&mut rng, targets, &mut mix.quotas);
        }
    }
    // A third of the seeds stream some traffic (entries that say nothing about streams).
    if rng.random_bool(0.3) {
        for (i, &generated) in targets.traffic.iter().enumerate() {
            let value = if generated {
                json!(f64::from(rng.random_range(1..=10u32)) / 10.0)
            } else {
                json!(rng.random_bool(0.5))
            };
            mix.streamed.push((i, value));
        }
    }
    // A quarter of the seeds chain mid-stream continuations through added fallback groups.
    if rng.random_bool(0.25) {
        mix.chain = chain(&mut rng, targets, &mut mix.windows, &mut mix.streamed);
    }
    mix
}
