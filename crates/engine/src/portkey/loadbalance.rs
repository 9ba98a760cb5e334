//! `portkey_strategy: loadbalance` (the gateway's `strategy: {mode: loadbalance}`;
//! `handlerUtils.ts`, `tryTargetsRecursively` at v1.15.2): one target per request, picked at
//! random by `weight` — a target without one weighs 1, a weight of 0 is never picked —
//! `Math.random() * totalWeight`, then the first target whose weight exceeds what is left of
//! that draw. The picked target is tried with its retries and its answer is the request's: the
//! loadbalance branch calls `tryTargetsRecursively` on that one target and `break`s, so no other
//! target is ever tried (no fallback).

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use crate::config::Deployment;

/// A target's weight: its `weight`, else 1 (`if (t.weight === undefined) t.weight = 1`).
pub fn target_weight(deployment: &Deployment) -> f64 {
    deployment.weight.unwrap_or(1.0)
}

/// The gateway's pick over `weights` for a draw `u` in [0, 1) (`Math.random()`): the index of
/// the target, or `None` when every weight is 0 (the gateway then has no target and no answer).
pub fn pick_by_weight(weights: &[f64], u: f64) -> Option<usize> {
    let total = weights.iter().fold(0.0, |sum, w| sum + w);
    let mut left = u * total;
    for (i, &w) in weights.iter().enumerate() {
        if left < w {
            return Some(i);
        }
        left -= w;
    }
    None
}

/// [`pick_by_weight`] with a draw from `rng`.
pub fn draw(weights: &[f64], rng: &mut ChaCha8Rng) -> Option<usize> {
    pick_by_weight(weights, rng.random::<f64>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_draw_walks_the_weights_in_order() {
        // Weights 3, 1, 0 (total 4): a draw below 3/4 is the first target, the rest the second.
        let weights = [3.0, 1.0, 0.0];
        assert_eq!(pick_by_weight(&weights, 0.0), Some(0));
        assert_eq!(pick_by_weight(&weights, 0.749), Some(0));
        assert_eq!(pick_by_weight(&weights, 0.75), Some(1));
        assert_eq!(pick_by_weight(&weights, 0.999_999), Some(1));
        // A weight of 0 is never picked; all zero: no target.
        assert_eq!(pick_by_weight(&[0.0, 2.0], 0.0), Some(1));
        assert_eq!(pick_by_weight(&[0.0, 0.0], 0.5), None);
    }
}
