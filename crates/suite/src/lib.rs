//! # routersim-suite
//!
//! Commands over many runs of the simulator: [`check`] (every scenario of a folder for each
//! seed: a verdict for CI, goldens, junit.xml), [`sweep`] (a grid of settings on the same
//! seeds, with verdicts; also `merge` of sharded sweeps), [`diff`] (two reports, metric by
//! metric and the first request that went differently), [`explore`] (seed-chosen fault mixes
//! and invariants, shrunk to a scenario file), and [`bench`](mod@bench) (simulated requests per
//! wall-second against a floor; [`footprint`]: the memory of in-flight requests).
//!
//! Each run is the simulator's (`routersim-sim`); this crate only chooses runs, compares them
//! and writes what they add up to. [`discover`] finds scenarios in a folder, [`seeds`] reads
//! `--seeds 1..10`, [`hash`] names a sweep's inputs, [`html`] writes the `index.html` of
//! `check` and `sweep` folders.

pub mod bench;
pub mod check;
pub mod diff;
pub mod discover;
pub mod explore;
pub mod footprint;
pub mod hash;
pub mod html;
pub mod rate_check;
pub mod seeds;
pub mod sweep;
