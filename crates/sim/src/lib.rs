//! # routersim-sim
//!
//! The simulation runtime: the scenario file and its validation ([`scenario`]), seeded lazy
//! traffic ([`traffic`]), the runner that drives the real router engine against fake
//! providers on a paused tokio clock ([`run`]), over memory or the wire ([`transport`]),
//! `expect` lines ([`expect`]), invariant exploration ([`explore`](mod@explore)), the speed
//! benchmark ([`bench`](mod@bench)) and the memory of in-flight requests ([`footprint`]).

pub mod bench;
pub mod check;
pub mod config_keys;
pub mod diff;
pub mod discover;
pub mod drive;
pub mod expect;
pub mod explore;
pub mod facts;
pub mod fleet;
pub mod footprint;
pub mod hash;
pub mod oracle;
pub mod proxy;
pub mod report_dir;
pub mod run;
pub mod scenario;
pub mod seeds;
pub mod serve;
pub mod sweep;
pub mod sweep_effect;
pub mod sweep_plot;
pub mod traffic;
pub mod traffic_file;
pub mod transport;
pub mod yaml;
