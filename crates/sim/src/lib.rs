//! # routersim-sim
//!
//! The simulator: a scenario in, a run, a report out. The scenario file and its validation
//! ([`scenario`]), seeded lazy traffic ([`traffic`], [`traffic_file`]), the runner that drives
//! the real router engine against fake providers in virtual time ([`run`]), over memory or the
//! wire through in-memory pipes ([`transport`]), router fleets ([`fleet`]), `expect` lines
//! ([`expect`]), the report folder ([`report_dir`]), what a config key does here
//! ([`config_keys`], [`facts`]), and the version both the runner and the report folder write
//! ([`version`]).
//!
//! Files depend downwards only: shared types sit in small modules below their users
//! (`scenario::error`, `scenario::ctx`, `traffic::spec`, `run::options`, `version`),
//! children import their siblings directly, and the `mod.rs` of `scenario`, `traffic` and
//! `run` only declare and re-export, so no file is reached again from what it imports
//! (`scripts/house-check.py` checks it).
//!
//! It links no socket, no Redis and no wall clock (`clippy.toml` bans them): the same scenario
//! and seed give the same bytes. Commands over many runs (`check`, `sweep`, `diff`, `explore`,
//! `bench`) are in `routersim-suite`; real-time networking (`serve`, `proxy`, `drive`) in
//! `routersim-live`.

pub mod config_keys;
pub mod expect;
pub mod facts;
pub mod fleet;
pub mod report_dir;
pub mod run;
pub mod scenario;
pub mod traffic;
pub mod traffic_file;
pub mod transport;
pub mod version;
pub mod yaml;
