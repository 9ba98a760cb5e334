//! `routersim explore`: run a scenario under thousands of seed-chosen fault mixes and check
//! invariants on every run.
//!
//! Each seed `S` takes the scenario's YAML tree, appends the fault mix of `S` ([`faults`]),
//! sets the profile `S` draws when asked to ([`profiles`]), runs it with seed `S` on its own current-thread runtime (one per run, on every core, like
//! `sweep`) with the invariant checker ([`invariants`]) beside the recorder, and checks:
//! nothing panicked (the run is wrapped in `catch_unwind`; a panic in a request task, which
//! tokio catches, makes the run panic once every task is out, and a panic hook keeps the
//! first message with its location), the event invariants, and, for every N-th seed
//! ([`ExploreOptions::determinism_every`]), that a second run writes the same bytes in every
//! report file. The first seed breaking each invariant is shrunk ([`shrink`]) to a small
//! scenario file that `routersim run` replays.
//!
//! Runs write their report (data files only, no traces, no plots) into a scratch directory per
//! worker under the system's temporary directory, removed at the end; the determinism check
//! writes full reports (traces, plots, page) twice.

//! # Layout
//!
//! `error` (why explore could not start), `faults` (a seed's fault mix), `profiles` (a seed's
//! profile), `invariants` (the checker) and `options` (how to explore); `tree` (a scenario as
//! a YAML tree, a mix appended), `scratch` (per-worker report folders, two reports compared)
//! and `panics` (a panic as a message); `explorer` (a seed's variant run and checked),
//! `shrunk_file` (a shrunk scenario written out) and `shrink` (making a violating variant
//! small). Each imports only modules listed before it; this file declares them and re-exports
//! every public item.

mod error;
mod explorer;
pub mod faults;
pub mod invariants;
mod options;
mod panics;
pub mod profiles;
mod scratch;
pub mod shrink;
mod shrunk_file;
mod tree;

pub use self::error::ExploreError;
pub use self::explorer::{Checked, Explorer, SeedResult};
pub use self::options::{DEFAULT_DETERMINISM_EVERY, DEFAULT_SHRINK_RUNS, ExploreOptions};
pub use self::panics::catching_panics;
pub use self::profiles::ProfileChoice;
pub use self::scratch::{Scratch, compare_reports};
pub use self::tree::{apply_mix, inline_router, read_tree, to_yaml};

#[cfg(test)]
mod tests;
