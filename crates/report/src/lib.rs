//! # routersim-report
//!
//! Everything routersim writes after (and while) a run, derived from the engine's
//! [`RoutingEvent`](routersim_engine::event::RoutingEvent)s alone: the report never reaches back
//! into the engine or the scenario, so any event stream (a simulation, a replay, a test) yields
//! the same files.
//!
//! - [`record::Recorder`] is the event sink: it streams `requests.csv`, `attempts.csv` and
//!   `events.csv` (and `deployments.csv`, `latency.hlog`, second by second) as events arrive
//!   and aggregates the rest, so memory stays flat in the number of
//!   requests and in virtual time; [`record::Recorder::finish`] writes `timeseries.csv`, `latency.hgrm`,
//!   `ttft.hgrm`, `inter_token.hgrm` and `summary.json`, and the SVG plots ([`plot`]).
//! - [`html::write_report_html`] writes `report.html`: the summary, the `expect` results and
//!   the plots on one self-contained page.
//! - [`live_metrics::LiveMetrics`] keeps `metrics.prom`'s counters while a real-time process
//!   runs, for a Prometheus scrape of `GET /metrics`.
//! - [`hgrm::write_hgrm`] prints an HdrHistogram percentile distribution (the crate has none).
//! - [`summary::Summary`] is `summary.json`, with [`summary::Summary::metric`] for scenario
//!   `expect` lines and [`summary::print_summary`] for the terminal.
//!
//! Every output is byte-deterministic for the same event sequence: times are printed from
//! integer microseconds, maps are ordered, floats in JSON are rounded to 6 decimals.

mod error;
pub mod hgrm;
pub mod html;
pub mod live_metrics;
pub mod plot;
pub mod prom;
pub mod provider_metrics;
pub mod record;
mod streams;
pub mod summary;
mod timeseries;
mod units;
pub mod windows;

pub use error::ReportError;
pub use html::{ExpectRow, PageTitle, REPORT_HTML, write_report_html};
pub use plot::{DeploymentLane, FaultWindow, PlotContext};
pub use record::{Recorder, RecorderOptions, RunMeta};
pub use summary::{
    LiveInfo, METRICS, RouterProfile, StreamSummary, Summary, describe_metrics, is_known_metric,
    print_summary,
};
