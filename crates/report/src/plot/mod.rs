//! The report's pictures: six SVG files drawn with plotters' SVG backend at the end of a run.
//!
//! - `deployments.svg`: one lane per deployment, grouped by model group, showing when it was
//!   healthy, cooling and half-open, with the scenario's fault windows shaded behind the lanes
//!   they hit. The picture an engineer replaying an incident looks at first.
//! - `timeline.svg`: per virtual second, arrivals, ok, failed, retries, fallbacks and stream
//!   continuations (the numbers of `timeseries.csv`), averaged into round buckets past 300 s,
//!   with the fault windows shaded and labelled (time range, `Retry-After`).
//! - `latency.svg`: the end-to-end latency distribution as a CDF on a "nines" scale, with
//!   p50/p90/p99/p99.9 marked (and the TTFT distribution when the run streamed).
//! - `attempts.svg`: how many provider attempts requests needed, and the fallback hops taken
//!   (`source → target`).
//! - `latency_over_time.svg`: p50 and p99 end-to-end latency per second (`timeseries.csv`'s
//!   columns), fault windows shaded.
//! - `traffic_share.svg`: each deployment's share of the attempts over time, stacked (the
//!   picture of a fallback), fault windows shaded.
//!
//! No fonts, no C libraries: plotters is built without `ttf`, so its text layout is a crude
//! estimate (`plotters::style::font::naive`) and the SVG backend writes `<text>` elements that
//! the viewer lays out with its own fonts. A machine with no font files renders the same bytes.
//!
//! Bytes are deterministic: every input is ordered (lanes in `model_list` order, maps are
//! `BTreeMap`s), coordinates are integers or floats printed by Rust's formatter, and nothing
//! reads the clock. Rendering costs a few milliseconds: a timeline longer than 300 seconds is
//! averaged into at most 300 points, the latency CDF keeps the first and last point of each pixel
//! column, and lane intervals closer than a pixel are merged.
//!
//! What the recorder keeps for the plots is small: the cooling and half-open intervals of each
//! deployment (memory grows with the number of cooldowns, never with requests; capped at
//! [`MAX_INTERVALS_PER_DEPLOYMENT`] per deployment and lane, the rest counted and noted on the
//! plot), a fixed array of attempt counts and one counter per fallback pair.
//!
//! Layout, each file below the ones that use it: `collect` keeps what the recorder tells the
//! plots and renders them, one file per plot (`deployments`, `timeline`, `share`,
//! `latency_time`, `latency`, `attempts`); below them `intervals` (a lane's periods),
//! `context` (deployments and fault windows), `files` (the names), and the house style:
//! [`palette`] (every colour), [`axis`] (frames, grids, ticks) and [`style`] (canvas, text,
//! legend), the first two shared with the sweep's plot.

mod attempts;
pub mod axis;
mod collect;
mod context;
mod deployments;
mod files;
mod intervals;
mod latency;
mod latency_time;
pub mod palette;
mod share;
pub mod style;
mod timeline;

pub use attempts::MAX_ATTEMPTS_COUNTED;
pub(crate) use collect::{PlotRecorder, RenderInput};
pub use context::{DeploymentLane, FaultWindow, PlotContext};
pub use files::{
    ATTEMPTS_SVG, DEPLOYMENTS_SVG, LATENCY_OVER_TIME_SVG, LATENCY_SVG, PLOT_FILES, TIMELINE_SVG,
    TRAFFIC_SHARE_SVG,
};
pub use intervals::MAX_INTERVALS_PER_DEPLOYMENT;
pub(crate) use latency::Distribution;
pub(crate) use share::ShareSeries;
