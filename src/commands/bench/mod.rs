//! `routersim bench`: the harness against its floors (`run`), every profile in one run
//! (`profiles`), the wire (`wire`: serve and proxy against their floors), drive's load
//! (`drive`), and an import's speed and an in-flight request's memory (`footprint`).

mod args;
mod drive;
mod footprint;
mod profiles;
mod run;
mod wire;

pub use args::BenchArgs;
pub use run::run;
