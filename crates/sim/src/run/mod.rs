//! The runner: a scenario in, a report out.
//!
//! Everything runs on a current-thread tokio runtime with paused time, so the clock jumps from
//! one timer to the next and a ten-minute incident replays in milliseconds. Each arrival is a
//! local task calling the real [`Router`](routersim_engine::Router); the fake providers live in the same process (no
//! sockets, no `spawn_blocking`), called directly or, with `transport: http`, through the
//! engine's HTTP adapter and the wire server over in-memory pipes ([`crate::transport`]).
//! Randomness comes from per-purpose ChaCha streams derived from the seed (`router`,
//! `provider/<id>/…`, `traffic/<i>`), so the same scenario, seed and version give
//! byte-identical reports.
//!
//! Besides the recorder's files, every run writes the plots (`deployments.svg`,
//! `timeline.svg`, `latency.svg`, `attempts.svg`: the recorder draws them, told every
//! deployment and fault window here) and, once the `expect` lines are checked,
//! `report.html`. [`run_with_rendering`] with [`Rendering::DataOnly`] skips both (the
//! benchmark's timing should not include drawing).
//!
//! Layout, bottom up: `options` (how a run is asked for), `outcome` (its report or error),
//! `context` (what the recorder is told about the scenario), `tasks` (the request tasks in
//! flight), `simulate` (one run: fleet, arrival loop, summary), `entry` (the public entry
//! points: folders, runtime, `report.html`). This file only declares and re-exports.

mod context;
mod entry;
mod options;
mod outcome;
mod simulate;
mod tasks;

pub use self::context::{plot_context, router_profile, summary_context};
pub use self::entry::{
    default_out_dir, run, run_file, run_into, run_into_with_sink, run_with_rendering, run_with_sink,
};
pub use self::options::{Rendering, RunOptions, SinkFactory, spare_core};
pub use self::outcome::{RunError, RunReport};
pub use crate::version::VERSION;
