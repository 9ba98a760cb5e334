//! `routersim bench --serve`: how fast the wire server is, measured with a load generator of
//! our own over loopback (keep-alive HTTP/1.1 connections, bounded in count and time).
//!
//! The server runs on its own thread (its single-threaded runtime, as `routersim serve` runs
//! it); the load generator on the calling thread. Four phases:
//! 1. **Throughput**: `connections` keep-alive connections send non-streamed requests back to
//!    back to a deployment that answers in 0 ms, for `phase` seconds: requests per second.
//! 2. **Added latency**: `latency_connections` connections call a deployment scripted at
//!    [`SCRIPTED_LATENCY`]: the client-observed latency minus the scripted one (p50, p99, max);
//!    then one connection against the 0 ms deployment (the round trip without a timer). tokio's
//!    timer has millisecond resolution (a sleep ends on the next millisecond tick, and the
//!    runtime parks in whole milliseconds), so the first figure includes up to ~2 ms that no
//!    server on tokio's clock avoids; the second is the server's and the client's own work.
//! 3. **Concurrent streams**: `streams` SSE streams opened (a connection each) and held open
//!    at once, each [`STREAM_TOKENS`] tokens [`INTER_TOKEN`] apart: how many were open at
//!    once, how many completed with every token, and each token's lateness against its
//!    schedule (measured from the stream's headers): first tokens apart (all streams open
//!    in one burst, so theirs include the burst's queueing), later tokens in steady state.
//! 4. **Floor**: `serve` against a bare hyper server ([`super::bare`]) answering the bytes
//!    `serve` answered, JSON and SSE on 64 and 512 connections: each round measures both
//!    servers back to back with the same load generator ([`super::load`]); the ratio printed
//!    is the median of the rounds' ratios (a ratio from one run holds on a loaded machine
//!    where absolute rates do not).

use std::cell::Cell;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use hdrhistogram::Histogram;
use http_body_util::BodyExt;
use routersim_engine::config::{Deployment, RouterConfig};
use routersim_mock_providers::wire::{CallLog, Mount, WireServer, listen};
use routersim_mock_providers::{FakeProviders, Pacing, ProviderSpec};
use tokio::time::Instant;

use super::ServeError;
use super::bare::{Recorded, spawn_bare_server};
use super::bench_server::BenchServer;
use super::load::{Pair, call_once, closed_loop, connect, histogram, request};

/// The scripted latency of phase 2.
pub const SCRIPTED_LATENCY: Duration = Duration::from_millis(20);
/// Tokens per stream in phase 3.
pub const STREAM_TOKENS: u32 = 60;
/// Time between a stream's tokens in phase 3.
pub const INTER_TOKEN: Duration = Duration::from_millis(100);
/// Time to a stream's first token in phase 3.
pub const STREAM_TTFT: Duration = Duration::from_millis(10);

/// How hard to push.
#[derive(Clone, Debug)]
pub struct ServeBenchOptions {
    /// Length of phases 1 and 2.
    pub phase: Duration,
    /// Connections of phase 1.
    pub connections: usize,
    /// Connections of phase 2.
    pub latency_connections: usize,
    /// Streams of phase 3.
    pub streams: usize,
    /// Length of each phase of the floor rounds.
    pub floor_phase: Duration,
    /// Floor rounds (each measures every pair once).
    pub rounds: usize,
}

impl Default for ServeBenchOptions {
    fn default() -> Self {
        Self {
            phase: Duration::from_secs(5),
            connections: 64,
            latency_connections: 32,
            streams: 2000,
            floor_phase: Duration::from_secs(1),
            rounds: 5,
        }
    }
}

/// Quantiles of a latency in microseconds.
#[derive(Clone, Copy, Debug, Default)]
pub struct Quantiles {
    /// Samples.
    pub count: u64,
    /// Median.
    pub p50_us: u64,
    /// 99th percentile.
    pub p99_us: u64,
    /// Maximum.
    pub max_us: u64,
}

impl std::fmt::Display for Quantiles {
    /// `p50 0.296 ms, p99 0.794 ms, max 2.871 ms`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ms = |us: u64| us as f64 / 1000.0;
        write!(
            f,
            "p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms",
            ms(self.p50_us),
            ms(self.p99_us),
            ms(self.max_us)
        )
    }
}

impl Quantiles {
    fn of(h: &Histogram<u64>) -> Self {
        Self {
            count: h.len(),
            p50_us: h.value_at_quantile(0.5),
            p99_us: h.value_at_quantile(0.99),
            max_us: h.max(),
        }
    }
}

/// What the benchmark measured.
#[derive(Clone, Debug, Default)]
pub struct ServeBenchResult {
    /// Phase 1: non-streamed requests answered.
    pub requests: u64,
    /// Phase 1: its wall time.
    pub throughput_secs: f64,
    /// Phase 1: failed requests (non-200 or connection errors).
    pub request_errors: u64,
    /// Phase 2: client latency minus [`SCRIPTED_LATENCY`].
    pub added: Quantiles,
    /// Phase 3: streams asked for.
    pub streams: usize,
    /// Phase 3: most streams open at once.
    pub peak_open_streams: usize,
    /// Phase 3: streams that delivered every token and the terminal marker.
    pub streams_completed: usize,
    /// Phase 3: each stream's first token's lateness (the streams open in one burst).
    pub first_token_lateness: Quantiles,
    /// Phase 3: the lateness of every later token against its stream's schedule, anchored at
    /// the stream's earliest token.
    pub token_lateness: Quantiles,
    /// Phase 2: the round trip of a call to a 0 ms deployment on one connection (no timer, no
    /// queueing: the server's and the client's processing).
    pub round_trip: Quantiles,
    /// The floor: `serve` (measured) against a bare hyper server (base) answering the same
    /// bytes, JSON and SSE at each of [`FLOOR_CONNECTIONS`].
    pub floor: Vec<FloorRow>,
}

/// Connections of the floor rounds.
pub const FLOOR_CONNECTIONS: [usize; 2] = [64, 512];
/// The 0 ms deployment the floor rounds call (JSON and SSE, no pacing).
pub const FLOOR_PATH: &str = "/d/flat/v1/chat/completions";

/// One floor figure: a kind of call at a connection count, `serve` against the bare server.
#[derive(Clone, Debug)]
pub struct FloorRow {
    /// SSE (else JSON).
    pub stream: bool,
    /// Keep-alive connections.
    pub connections: usize,
    /// The bare server (base) and `serve` (measured), round by round.
    pub pair: Pair,
}

impl ServeBenchResult {
    /// Phase 1's rate.
    pub fn requests_per_sec(&self) -> f64 {
        self.requests as f64 / self.throughput_secs.max(1e-9)
    }
}

/// The bench's deployments: `zero` (0 ms), `fixed` ([`SCRIPTED_LATENCY`]), `stream` (paced tokens),
/// `flat` (0 ms, JSON and SSE unpaced: the floor's).
pub fn bench_config() -> (RouterConfig, BTreeMap<String, ProviderSpec>) {
    let dep = |id: &str| Deployment {
        id: Arc::from(id),
        model_name: Arc::from("bench"),
        model: "openai/bench".into(),
        ..Deployment::default()
    };
    let mut config = RouterConfig {
        deployments: vec![dep("zero"), dep("fixed"), dep("stream"), dep("flat")],
        ..RouterConfig::default()
    };
    // A stall timeout of twice the inter-token time: one token per SSE frame (no coalescing).
    config.settings.stream_stall_timeout = Some(INTER_TOKEN * 2);
    let yaml = format!(
        "{{zero: {{latency: 0ms, output_tokens: 20}}, fixed: {{latency: {}ms, output_tokens: 20}}, \
         stream: {{ttft: {}ms, inter_token: {}ms, output_tokens: {STREAM_TOKENS}}}, \
         flat: {{latency: 0ms, ttft: 0ms, inter_token: 0ms, output_tokens: 20}}}}",
        SCRIPTED_LATENCY.as_millis(),
        STREAM_TTFT.as_millis(),
        INTER_TOKEN.as_millis()
    );
    let specs = serde_saphyr::from_str(&yaml).unwrap_or_default();
    (config, specs)
}

/// `routersim serve`'s wire server over the fake providers `build` describes (precise pacing,
/// no call log), on a thread of its own.
pub fn spawn_wire_server(
    build: fn() -> (RouterConfig, BTreeMap<String, ProviderSpec>),
) -> Result<BenchServer, ServeError> {
    BenchServer::spawn(move |listener| {
        let (config, specs) = build();
        let start = Instant::now();
        let providers = FakeProviders::new(&config, &specs, &[], 1, 0, start)
            .map_err(|e| ServeError::Providers(e.to_string()))?
            .with_pacing(Pacing::Precise);
        let server = Rc::new(WireServer::new(
            Rc::new(providers),
            config.deployments,
            CallLog::disabled(),
            start,
            0,
        ));
        Ok(listen(server, listener, Mount::Shared))
    })
}

/// Runs the three phases.
pub fn run_serve_bench(options: &ServeBenchOptions) -> Result<ServeBenchResult, ServeError> {
    let server = spawn_wire_server(bench_config)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let local = tokio::task::LocalSet::new();
    let result = local.block_on(&runtime, generate(server.addr, options));
    server.stop()?;
    result
}

async fn generate(
    addr: SocketAddr,
    options: &ServeBenchOptions,
) -> Result<ServeBenchResult, ServeError> {
    let mut result = ServeBenchResult {
        streams: options.streams,
        ..ServeBenchResult::default()
    };

    throughput_phase(addr, options, &mut result).await?;

    // Phase 2: added latency over the scripted latency, and the bare round trip.
    result.added = latency_phase(
        addr,
        "/d/fixed/v1/chat/completions",
        options,
        SCRIPTED_LATENCY,
    )
    .await?;
    let one = ServeBenchOptions {
        latency_connections: 1,
        ..options.clone()
    };
    result.round_trip =
        latency_phase(addr, "/d/zero/v1/chat/completions", &one, Duration::ZERO).await?;

    stream_phase(addr, options, &mut result).await?;
    result.floor = floor_rounds(addr, options).await?;
    Ok(result)
}

/// The floor: `serve`'s answers recorded, a bare server answering them started, then each
/// round measures both servers back to back for every kind and connection count.
async fn floor_rounds(
    addr: SocketAddr,
    options: &ServeBenchOptions,
) -> Result<Vec<FloorRow>, ServeError> {
    let recorded = Recorded::fetch(addr, FLOOR_PATH).await?;
    let bare = spawn_bare_server(recorded)?;
    let mut rows: Vec<FloorRow> = [false, true]
        .into_iter()
        .flat_map(|stream| {
            FLOOR_CONNECTIONS.map(|connections| FloorRow {
                stream,
                connections,
                pair: Pair::default(),
            })
        })
        .collect();
    let phase = options.floor_phase;
    let mut measured = Ok(());
    'rounds: for _ in 0..options.rounds {
        for row in &mut rows {
            let (stream, n) = (row.stream, row.connections);
            let base = closed_loop(bare.addr, FLOOR_PATH, stream, n, phase).await;
            let serve = closed_loop(addr, FLOOR_PATH, stream, n, phase).await;
            match (base, serve) {
                (Ok(base), Ok(serve)) => {
                    row.pair.base.push(base);
                    row.pair.measured.push(serve);
                }
                (Err(e), _) | (_, Err(e)) => {
                    measured = Err(e);
                    break 'rounds;
                }
            }
        }
    }
    bare.stop()?;
    measured.map(|()| rows)
}

/// Phase 1: `options.connections` keep-alive connections calling back to back for
/// `options.phase`: non-streamed requests per second.
async fn throughput_phase(
    addr: SocketAddr,
    options: &ServeBenchOptions,
    result: &mut ServeBenchResult,
) -> Result<(), ServeError> {
    let count = Rc::new(Cell::new(0u64));
    let errors = Rc::new(Cell::new(0u64));
    let started = Instant::now();
    let deadline = started + options.phase;
    let mut tasks = Vec::new();
    for _ in 0..options.connections {
        let mut sender = connect(addr).await?;
        let (count, errors) = (count.clone(), errors.clone());
        tasks.push(tokio::task::spawn_local(async move {
            while Instant::now() < deadline {
                if call_once(&mut sender, "/d/zero/v1/chat/completions", false).await {
                    count.set(count.get() + 1);
                } else {
                    errors.set(errors.get() + 1);
                    break;
                }
            }
        }));
    }
    for task in tasks {
        let _ = task.await;
    }
    result.requests = count.get();
    result.request_errors = errors.get();
    result.throughput_secs = started.elapsed().as_secs_f64();

    Ok(())
}

/// Phase 3: `options.streams` SSE streams held open at once: how many opened and completed,
/// and how late their tokens came against the stream's own schedule.
async fn stream_phase(
    addr: SocketAddr,
    options: &ServeBenchOptions,
    result: &mut ServeBenchResult,
) -> Result<(), ServeError> {
    let open = Rc::new(Cell::new(0usize));
    let peak = Rc::new(Cell::new(0usize));
    let completed = Rc::new(Cell::new(0usize));
    let lateness = Rc::new(std::cell::RefCell::new(histogram()?));
    let first_lateness = Rc::new(std::cell::RefCell::new(histogram()?));
    let mut tasks = Vec::new();
    for _ in 0..options.streams {
        let sender = connect(addr).await?;
        let (open, peak, completed) = (open.clone(), peak.clone(), completed.clone());
        let (lateness, first_lateness) = (lateness.clone(), first_lateness.clone());
        tasks.push(tokio::task::spawn_local(async move {
            let mut sender = sender;
            if sender.ready().await.is_err() {
                return;
            }
            let Ok(response) = sender
                .send_request(request("/d/stream/v1/chat/completions", true))
                .await
            else {
                return;
            };
            let opened = Instant::now();
            open.set(open.get() + 1);
            peak.set(peak.get().max(open.get()));
            let mut body = response.into_body();
            // Each token's arrival minus its due offset (ttft + i × inter_token).
            let mut offsets: Vec<i64> = Vec::with_capacity(STREAM_TOKENS as usize);
            let mut done = false;
            while let Some(Ok(frame)) = body.frame().await {
                let Ok(data) = frame.into_data() else {
                    continue;
                };
                let now = opened.elapsed().as_micros() as i64;
                for _ in 0..count_matches(&data, b"\"x_routersim\"") {
                    let due = STREAM_TTFT + INTER_TOKEN * offsets.len() as u32;
                    offsets.push(now - due.as_micros() as i64);
                }
                done |= count_matches(&data, b"data: [DONE]") > 0;
            }
            open.set(open.get() - 1);
            let tokens = offsets.len() as u32;
            if let Some(&first) = offsets.first() {
                let _ = first_lateness.borrow_mut().record(first.max(1) as u64);
            }
            // Later tokens against the stream's own schedule, anchored at its earliest token
            // (the client cannot see when the server opened the stream, and the burst of
            // openings delays the headers' reading): a lower bound of the true lateness.
            let origin = offsets.iter().copied().min().unwrap_or(0);
            for offset in offsets.iter().skip(1) {
                let _ = lateness
                    .borrow_mut()
                    .record((offset - origin).max(1) as u64);
            }
            if done && tokens == STREAM_TOKENS {
                completed.set(completed.get() + 1);
            }
        }));
    }
    for task in tasks {
        let _ = task.await;
    }
    result.peak_open_streams = peak.get();
    result.streams_completed = completed.get();
    result.token_lateness = Quantiles::of(&lateness.borrow());
    result.first_token_lateness = Quantiles::of(&first_lateness.borrow());
    Ok(())
}

/// `options.latency_connections` connections calling `path` back to back for `options.phase`:
/// the client-observed latency minus `scripted`.
async fn latency_phase(
    addr: SocketAddr,
    path: &'static str,
    options: &ServeBenchOptions,
    scripted: Duration,
) -> Result<Quantiles, ServeError> {
    let added = Rc::new(std::cell::RefCell::new(histogram()?));
    let deadline = Instant::now() + options.phase;
    let mut tasks = Vec::new();
    for _ in 0..options.latency_connections {
        let mut sender = connect(addr).await?;
        let added = added.clone();
        tasks.push(tokio::task::spawn_local(async move {
            while Instant::now() < deadline {
                let sent = Instant::now();
                if !call_once(&mut sender, path, false).await {
                    break;
                }
                let extra = sent.elapsed().saturating_sub(scripted);
                let _ = added.borrow_mut().record(extra.as_micros().max(1) as u64);
            }
        }));
    }
    for task in tasks {
        let _ = task.await;
    }
    let quantiles = Quantiles::of(&added.borrow());
    Ok(quantiles)
}

fn count_matches(haystack: &[u8], needle: &[u8]) -> usize {
    haystack
        .windows(needle.len())
        .filter(|w| *w == needle)
        .count()
}
