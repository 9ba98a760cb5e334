//! How to explore: the seeds, the faults, the profiles, the workers, how often determinism is
//! checked and what one shrink may spend.
//!
//! Its own module because the CLI builds it and the explorer and the shrinker read it.

use super::faults::FaultMode;
use super::invariants::Bounds;
use super::profiles::ProfileChoice;

/// How to explore.
#[derive(Clone, Debug)]
pub struct ExploreOptions {
    /// The seeds, in order.
    pub seeds: Vec<u64>,
    /// Extra faults or none.
    pub faults: FaultMode,
    /// The profile each seed runs under.
    pub profiles: ProfileChoice,
    /// Worker threads (at least 1).
    pub workers: usize,
    /// Check determinism (a second run, every report file's bytes compared) on the seeds at
    /// positions 0, N, 2N… of `seeds`; 0 never, 1 every seed.
    pub determinism_every: usize,
    /// At most this many runs to shrink one violation.
    pub shrink_runs: usize,
    /// For tests: adjusts the derived bounds (a deliberately wrong bound makes every seed
    /// violate, to exercise shrinking).
    pub bounds_hook: Option<fn(&mut Bounds)>,
}

impl Default for ExploreOptions {
    fn default() -> Self {
        Self {
            seeds: vec![1],
            faults: FaultMode::Random,
            profiles: ProfileChoice::Scenario,
            workers: 1,
            determinism_every: DEFAULT_DETERMINISM_EVERY,
            shrink_runs: DEFAULT_SHRINK_RUNS,
            bounds_hook: None,
        }
    }
}

/// Determinism is checked on every 10th seed by default: it costs two full reports.
pub const DEFAULT_DETERMINISM_EVERY: usize = 10;
/// Runs one shrink may spend.
pub const DEFAULT_SHRINK_RUNS: usize = 300;
