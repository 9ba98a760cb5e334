//! The names of the files the recorder writes (the plots name theirs in [`crate::plot`]).
//!
//! Why a module of their own: the recorder creates them, `finish` writes the end-of-run ones
//! and other crates read them back; one list below all of those.

/// One row per finished request.
pub const REQUESTS_CSV: &str = "requests.csv";
/// One row per provider attempt.
pub const ATTEMPTS_CSV: &str = "attempts.csv";
/// Every routing decision (all events but attempts, request ends and stream chunks).
pub const EVENTS_CSV: &str = "events.csv";
/// One row per virtual second.
pub const TIMESERIES_CSV: &str = "timeseries.csv";
/// One row per virtual second and deployment with activity (see `deployments`).
pub const DEPLOYMENTS_CSV: &str = "deployments.csv";
/// HdrHistogram interval log of the end-to-end latency, one interval per 10 seconds (see
/// `intervals`).
pub const LATENCY_HLOG: &str = "latency.hlog";
/// End-to-end latency distribution.
pub const LATENCY_HGRM: &str = "latency.hgrm";
/// Time-to-first-token distribution of streamed requests.
pub const TTFT_HGRM: &str = "ttft.hgrm";
/// Distribution of the gaps between consecutive streamed tokens.
pub const INTER_TOKEN_HGRM: &str = "inter_token.hgrm";
/// The run in numbers.
pub const SUMMARY_JSON: &str = "summary.json";
