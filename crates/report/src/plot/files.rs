//! The names of the SVG files, and the order `report.html` shows them in.
//!
//! Why apart: the recorder writes them, `report.html` links them and other crates read them
//! back; one list below all of them.

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
