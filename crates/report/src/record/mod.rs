//! The event sink that writes the run's reports as it goes.
//!
//! Why streaming: a run may have millions of requests, so nothing is kept per request. Trace rows
//! go straight to buffered CSV writers (`requests.csv`, `attempts.csv`, `events.csv`); what the
//! summary needs is folded into counters, three HdrHistograms (latency, TTFT, inter-token gap),
//! per-deployment cooldown state and one small row per virtual second with activity (see
//! `timeseries`: memory follows the activity, never the virtual duration).
//! `deployments.csv` (per second and deployment, see `deployments`) and `latency.hlog` (one
//! HdrHistogram interval per second, see `intervals`) are streamed too, each second written
//! once a later one starts.
//! [`Recorder::finish`] flushes the traces and writes `timeseries.csv`, `latency.hgrm`,
//! `ttft.hgrm`, `inter_token.hgrm` and `summary.json`, then the plots (`deployments.svg`,
//! `timeline.svg`, `latency.svg`, `attempts.svg`, `latency_over_time.svg`,
//! `traffic_share.svg`; see [`crate::plot`]) unless
//! [`Recorder::without_plots`] turned them off. For the plots the recorder also keeps each
//! deployment's cooling and half-open intervals (capped, see
//! [`crate::plot::MAX_INTERVALS_PER_DEPLOYMENT`]), a fixed array of attempt counts and one
//! counter per fallback pair; [`Recorder::with_plot_context`] names every deployment (so a
//! lane shows even for one that never cooled) and the fault windows.
//!
//! Streams: `requests.csv` ends with `stream,stream_outcome,ttft_ms,tokens_delivered,
//! tokens_billed`; a non-streamed request prints `false` and leaves the other four empty, a
//! streamed one prints `true`, its outcome (empty if no stream ever opened), its TTFT (empty
//! without a first token) and both token counts. `StreamBreak` and `StreamContinued` get
//! `events.csv` rows; `StreamChunk` does not (there may be thousands per request): it only
//! feeds `inter_token.hgrm`. A chunk of `n` tokens contributes `n` gaps: `gap_before` (absent
//! for a stream's first chunk) and `n − 1` times `inner_gap`; a chunk of 0 tokens contributes
//! none. `ttft.hgrm` has one sample per streamed request that received a token. Both
//! histogram files are always written, empty in a run without streams, so the set of files
//! does not depend on the scenario.
//!
//! [`EventSink::emit`](routersim_engine::event::EventSink::emit) takes `&self` and cannot
//! fail, so the state sits behind a `Mutex` (uncontended, so cheap; it also makes the recorder
//! `Send + Sync`, usable as `&Recorder`, `Arc<Recorder>`, or `&*rc` for an `Rc<Recorder>`: the
//! orphan rule forbids an `EventSink` impl for `Rc` here), and the first IO error is kept and
//! returned by `finish`. After an error the failing file stops being written; aggregation goes
//! on.
//!
//! Layout, each file below the ones that use it: `recorder` is the public API and `files` the
//! file names; `own_thread` and `numbered` move the folding to a thread of its own
//! ([`Recorder::on_own_thread`]); `state` is what a run is folded into. Per event: `fold` (counters, lanes,
//! per-second rows), `ends` (a request's or an attempt's end, with its trace rows),
//! `event_row` (`events.csv`), `replica_lanes` and `replicas` (fleet runs). At the end:
//! `summary` (the numbers) and `finish` (the files). Below them: `csv` and `routing` (the trace
//! writers), `deployments`, `intervals` and `hlog` (the streamed per-second files),
//! `windows`, `quantiles` and `histogram`.

mod csv;
mod deployments;
mod ends;
mod event_row;
mod files;
mod finish;
mod fold;
mod histogram;
mod hlog;
mod intervals;
mod numbered;
mod own_thread;
mod quantiles;
mod recorder;
mod replica_lanes;
mod replicas;
mod routing;
mod state;
mod summary;
mod windows;

pub use files::{
    ATTEMPTS_CSV, DEPLOYMENTS_CSV, EVENTS_CSV, INTER_TOKEN_HGRM, LATENCY_HGRM, LATENCY_HLOG,
    REQUESTS_CSV, SUMMARY_JSON, TIMESERIES_CSV, TTFT_HGRM,
};
pub use recorder::{Recorder, RecorderOptions, RunMeta};
pub use routing::ROUTING_JSONL;
pub use windows::SummaryContext;
