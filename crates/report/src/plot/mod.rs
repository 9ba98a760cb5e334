//! The report's pictures: six SVG files drawn with plotters' SVG backend at the end of a run.
//!
//! - `deployments.svg`: one lane per deployment, grouped by model group, showing when it was
//!   healthy, failing while not cooling (most of its attempts failed and the router did not
//!   cool it), cooling and half-open, with the scenario's fault windows shaded behind the lanes
//!   they hit. The picture an engineer replaying an incident looks at first.
//! - `timeline.svg`: per virtual second, arrivals, ok, failed (above), retries, fallbacks and
//!   stream continuations (below, on their own scale) — the numbers of `timeseries.csv` —,
//!   averaged into round buckets past 150 s, with the fault windows shaded and labelled (time
//!   range, `Retry-After`).
//! - `latency.svg`: the end-to-end latency distribution as a CDF on a "nines" scale, with
//!   p50/p90/p99/p99.9 marked (and the TTFT distribution when the run streamed).
//! - `attempts.svg`: how many provider attempts requests needed, and the fallback hops taken
//!   (`source → target`).
//! - `latency_over_time.svg`: p50 and p99 end-to-end latency of the requests that ended in each
//!   round bucket (per second, per 10 s, per minute, …), fault windows shaded.
//! - `traffic_share.svg`: which deployment served the traffic — each deployment's served
//!   requests (ok attempts) per round bucket, stacked under the line of all attempts, and its
//!   failed attempts below — fault windows shaded.
//!
//! No fonts, no C libraries: plotters is built without `ttf`, so its text layout is a crude
//! estimate (`plotters::style::font::naive`) and the SVG backend writes `<text>` elements that
//! the viewer lays out with its own fonts. A machine with no font files renders the same bytes.
//!
//! Bytes are deterministic: every input is ordered (lanes in `model_list` order, maps are
//! `BTreeMap`s), coordinates are integers or floats printed by Rust's formatter, and nothing
//! reads the clock. Rendering costs a few milliseconds: a timeline longer than 150 seconds is
//! averaged into at most 150 buckets, the latency CDF keeps the first and last point of each
//! pixel column, and lane intervals closer than a pixel are merged.
//!
//! What the recorder keeps for the plots is small: the cooling, half-open and failing periods
//! of each deployment (memory grows with the number of periods, never with requests; capped at
//! [`MAX_INTERVALS_PER_DEPLOYMENT`] per deployment and lane, the rest counted and noted on the
//! plot), a fixed array of attempt counts, one counter per fallback pair, the attempts per
//! deployment per bucket and a small latency histogram per bucket (the buckets grow with the
//! run, so both are bounded whatever its length).
//!
//! Layout, each file below the ones that use it: `collect` keeps what the recorder tells the
//! plots and renders them, one file per plot (`deployments`, `timeline`, `share`,
//! `latency_time`, `latency`, `attempts`); below them `intervals` (a lane's periods),
//! `failing` (the seconds a deployment failed), `stack` (stacked bands), `buckets` (round
//! bucket sizes), `context` (deployments and fault windows), `files` (the names), and the house
//! style: [`palette`] (every colour), [`axis`] (frames, grids, ticks) and [`style`] (canvas,
//! text, legend), the first two shared with the sweep's plot.

mod attempts;
pub mod axis;
mod buckets;
mod collect;
mod context;
mod deployments;
mod failing;
mod files;
mod intervals;
mod latency;
mod latency_time;
pub mod palette;
mod share;
mod stack;
pub mod style;
mod timeline;

pub use attempts::MAX_ATTEMPTS_COUNTED;
pub(crate) use collect::{PlotRecorder, RenderInput};
pub use context::{DeploymentLane, FaultWindow, PlotContext};
pub(crate) use failing::FailingSeconds;
pub use files::{
    ATTEMPTS_SVG, DEPLOYMENTS_SVG, LATENCY_OVER_TIME_SVG, LATENCY_SVG, PLOT_FILES, TIMELINE_SVG,
    TRAFFIC_SHARE_SVG,
};
pub use intervals::MAX_INTERVALS_PER_DEPLOYMENT;
pub(crate) use latency::Distribution;
pub(crate) use share::ServedSeries;
