//! `summary.json`: the run in numbers, and the names scenario `expect` lines check.
//!
//! The struct's field order is the JSON key order and every map is a `BTreeMap`, so the file is
//! byte-stable; floats are rounded to 6 decimals when the summary is built. Deriving
//! `Deserialize` too lets later tools (sweeps, diffs) read a summary back; fields added later
//! (`streams`, `stream_breaks`) default when absent, so older files still read.
//!
//! Streams: `streams.outcomes` and `stream_breaks` list every outcome and break kind the engine
//! knows, with 0 for the ones never seen, so the shape of the file does not depend on the run.
//!
//! Layout, each file below the ones that use it: `sections` (the parts of the file),
//! `origin` (router profile, live target), `routing` (the reliability metrics), `document`
//! (the [`Summary`] made of them), `metrics` (values by name), `print` (the terminal lines).

mod document;
mod metrics;
mod origin;
mod print;
mod routing;
mod sections;

pub use crate::windows::{FaultWindowSummary, ScopedWindowSummary, TimeWindow, WindowStats};
pub use document::Summary;
pub use metrics::{METRICS, describe_metrics, is_known_metric};
pub use origin::{LiveInfo, RouterProfile};
pub use print::print_summary;
pub use routing::{NO_ROUTE, RouteLatencyStats, RoutingMetrics};
pub use sections::{
    AlternativesSummary, AttemptStats, ContractSummary, CooldownStats, DeploymentCooldownStats,
    DeploymentHalfOpenStats, HalfOpenStats, InterTokenStats, LatencyStats, ReplicaSummary,
    StreamSummary, TtftStats,
};
