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

mod attempts;
pub(crate) mod collect;
mod deployments;
mod latency;
mod latency_time;
mod share;
mod style;
mod timeline;

use std::time::Duration;

pub(crate) use collect::PlotRecorder;
pub(crate) use latency::Distribution;
pub(crate) use share::ShareSeries;

/// Lanes of deployments: healthy, cooling and half-open periods.
pub const DEPLOYMENTS_SVG: &str = "deployments.svg";
/// Per-second arrivals, outcomes, retries and fallbacks, with fault windows.
pub const TIMELINE_SVG: &str = "timeline.svg";
/// Latency (and TTFT) CDF with percentile markers.
pub const LATENCY_SVG: &str = "latency.svg";
/// Attempts per request and fallback hops.
pub const ATTEMPTS_SVG: &str = "attempts.svg";
/// p50 and p99 latency per second, with fault windows.
pub const LATENCY_OVER_TIME_SVG: &str = "latency_over_time.svg";
/// Each deployment's share of the attempts over time, stacked.
pub const TRAFFIC_SHARE_SVG: &str = "traffic_share.svg";
/// Every plot, in the order `report.html` shows them.
pub const PLOT_FILES: [&str; 6] = [
    DEPLOYMENTS_SVG,
    TIMELINE_SVG,
    TRAFFIC_SHARE_SVG,
    LATENCY_OVER_TIME_SVG,
    LATENCY_SVG,
    ATTEMPTS_SVG,
];

/// Closed intervals kept per deployment and lane (cooling, half-open); later ones are
/// counted and the plot says how many it could not draw.
pub const MAX_INTERVALS_PER_DEPLOYMENT: usize = 100_000;
/// Attempt counts `0..=MAX_ATTEMPTS_COUNTED` get a bar each; more fall in one `N+` bar.
pub const MAX_ATTEMPTS_COUNTED: usize = 10;

/// A deployment the plots show a lane for, even when it never cooled.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeploymentLane {
    /// Deployment id (`model_info.id`).
    pub id: String,
    /// Its model group (`model_name`).
    pub model_group: String,
}

/// A fault window, shaded on the timeline and behind the lanes it hits.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FaultWindow {
    /// What the plots print, e.g. `east: rate_limit 90%` (also the window's name in
    /// `summary.json`'s `windows`).
    pub label: String,
    /// What the plots add after the label where there is room: the `Retry-After` sent and the
    /// time range, e.g. `Retry-After 5s, 2m–12m` (empty: nothing).
    pub detail: String,
    /// The deployment ids it hits.
    pub deployments: Vec<String>,
    /// Start, virtual time since the run start.
    pub from: Duration,
    /// End (exclusive); `None` means it lasts to the run end.
    pub to: Option<Duration>,
}

impl FaultWindow {
    /// The label with its detail: what a plot prints where there is room.
    pub(crate) fn full_label(&self) -> String {
        if self.detail.is_empty() {
            self.label.clone()
        } else {
            format!("{} {}", self.label, self.detail)
        }
    }
}

/// What the plots need to know about the run besides its events: every deployment (in
/// `model_list` order) and the fault windows. Without it the lanes are the deployments seen in
/// cooldown events and no fault is shaded.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PlotContext {
    /// Every deployment, in the order the lanes are drawn within their groups.
    pub deployments: Vec<DeploymentLane>,
    /// The fault windows, in scenario order.
    pub faults: Vec<FaultWindow>,
}
