//! What every strategy shares: the context of a pick ([`PickContext`]), the trait
//! ([`SelectionStrategy`]), and the draws they break ties with.

use std::cmp::Ordering;

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use crate::config::Deployment;
use crate::request::Request;
use crate::small::Indices;
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

impl PickContext<'_> {
    /// The deployment at `pos` in `candidates`.
    pub fn deployment(&self, pos: usize) -> &Deployment {
        &self.deployments[self.candidates[pos]]
    }

    /// The load of the deployment at `pos` in `candidates` (`None` when the tracker has none).
    pub fn load_of(&self, pos: usize) -> Option<&DeploymentLoad> {
        self.load.get(self.candidates[pos])
    }

    /// `(requests, tokens)` this minute of the deployment at `pos` in `candidates`.
    pub fn usage_of(&self, pos: usize) -> (u64, u64) {
        self.load
            .get(self.candidates[pos])
            .map_or((0, 0), |l| l.usage(self.minute))
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

/// One of `positions`, uniformly; no draw when there is only one (0 when there is none).
pub fn uniform_among(positions: &[usize], rng: &mut ChaCha8Rng) -> usize {
    match positions {
        [] => 0,
        [only] => *only,
        _ => positions[rng.random_range(0..positions.len())],
    }
}

/// The positions in `ctx.candidates` whose `key` is the smallest, in candidate order (on the
/// stack: every pick of the load-aware strategies runs this).
pub(crate) fn lowest<K: Ord>(ctx: &PickContext<'_>, mut key: impl FnMut(usize) -> K) -> Indices {
    let mut best: Option<K> = None;
    let mut positions = Indices::new();
    for pos in 0..ctx.candidates.len() {
        let k = key(pos);
        match best.as_ref().map(|b| k.cmp(b)) {
            Some(Ordering::Greater) => {}
            Some(Ordering::Equal) => positions.push(pos),
            None | Some(Ordering::Less) => {
                best = Some(k);
                positions.clear();
                positions.push(pos);
            }
        }
    }
    positions
}

/// The position with the smallest `key`; ties uniform.
pub fn pick_lowest<K: Ord>(
    ctx: &PickContext<'_>,
    rng: &mut ChaCha8Rng,
    key: impl FnMut(usize) -> K,
) -> usize {
    uniform_among(lowest(ctx, key).as_slice(), rng)
}

/// An `f64` with a total order ([`f64::total_cmp`]), for sort keys.
#[derive(Clone, Copy, Debug)]
pub struct TotalF64(pub f64);

impl PartialEq for TotalF64 {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for TotalF64 {}

impl PartialOrd for TotalF64 {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for TotalF64 {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0)
    }
}
