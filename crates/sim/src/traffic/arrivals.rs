//! Traffic: the scenario's requests, generated lazily in arrival order.
//!
//! A scenario's traffic is a list of explicit requests (`at: 1.5s`) and generated streams
//! (`rate: 20/s`). Runs of millions of requests must not hold per-request data, so
//! [`Arrivals`] is an iterator that keeps one pending arrival per stream in a heap keyed by
//! `(time, traffic index)`: equal times come out in file order, deterministically. Request
//! ids are 0, 1, 2, … in arrival order.
//!
//! Randomness: stream `i` (its index in `traffic`) draws its arrival times from
//! `seeded_rng(seed, "traffic/<i>")`, its `input_tokens` (when a range) from
//! `seeded_rng(seed, "traffic/<i>/input_tokens")`, its `output_tokens` (when a range) from
//! `traffic/<i>/output_tokens`, and whether a request is streamed (when `stream` is a share
//! strictly between 0 and 1) from `traffic/<i>/stream`, so none of these ever moves an
//! arrival or another draw.
//!
//! In flight: every request in flight holds its router state (about 1.4 KB, 1.8 KB for a
//! stream, measured by `routersim bench --in-flight`), so at most [`MAX_IN_FLIGHT`] may be in
//! flight at once. Explicit requests at one instant are all in flight together, so more than
//! that at one instant is refused when the scenario loads ([`check_in_flight`]); what only a
//! run can tell (a fast stream into slow providers) stops the run when the limit is reached
//! ([`in_flight_exceeded`] says why).

use routersim_config::input::thousands;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::sync::Arc;
use std::time::Duration;

use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use routersim_engine::config::FallbackTarget;
use routersim_engine::request::{Request, ResponseFormat};
use routersim_mock_providers::duration::format_duration;
use routersim_mock_providers::rng::seeded_rng;
pub use routersim_mock_providers::spec::TokenRange;

use crate::scenario::ScenarioError;
use crate::traffic_file::{Row, RowReader, TrafficFile};

/// `input_tokens` when the scenario sets none.
pub const DEFAULT_INPUT_TOKENS: u32 = 500;

/// The most requests in flight at once: about 4 GB at [`BYTES_PER_IN_FLIGHT`] each.
pub const MAX_IN_FLIGHT: u64 = 2_000_000;

/// What one in-flight request is counted at in the limit's arithmetic: the measured footprint
/// (`routersim bench --in-flight`: about 0.9 KB, 1.3 KB for a stream; a deadline adds about
/// 0.35 KB), rounded up so that streams with deadlines still fit.
pub const BYTES_PER_IN_FLIGHT: u64 = 2048;

/// Explicit requests arriving at one instant are all in flight at once: refuses more than
/// [`MAX_IN_FLIGHT`] at any instant. On failure, the index of the entry (in file order) whose
/// `count` crosses the limit, and why.
pub fn check_in_flight(traffic: &[TrafficSpec]) -> Result<(), (usize, String)> {
    let explicit = || {
        traffic.iter().enumerate().filter_map(|(i, t)| match t {
            TrafficSpec::Request(r) => Some((i, r)),
            TrafficSpec::Stream(_) => None,
        })
    };
    let total: u64 = explicit().map(|(_, r)| u64::from(r.count)).sum();
    if total <= MAX_IN_FLIGHT {
        return Ok(());
    }
    let mut by_instant: BTreeMap<Duration, u64> = BTreeMap::new();
    for (i, r) in explicit() {
        let at_instant = by_instant.entry(r.at).or_default();
        let others = *at_instant;
        *at_instant += u64::from(r.count);
        if *at_instant > MAX_IN_FLIGHT {
            let here = if others == 0 {
                String::new()
            } else {
                format!(
                    " ({} here, {} from other entries)",
                    thousands(u64::from(r.count)),
                    thousands(others)
                )
            };
            return Err((
                i,
                format!(
                    "{} requests at {}{here} would be in flight at once, ~{} at {} each; {}",
                    thousands(*at_instant),
                    format_duration(r.at),
                    bytes(at_instant.saturating_mul(BYTES_PER_IN_FLIGHT)),
                    bytes(BYTES_PER_IN_FLIGHT),
                    at_most()
                ),
            ));
        }
    }
    Ok(())
}

/// Why a run stopped when `arrival` would have been one request too many in flight.
pub fn in_flight_exceeded(arrival: &Arrival) -> String {
    format!(
        "traffic[{}]: the request arriving at {} would be the {}st in flight at once ({} \
         each); {}: lower the rate, or the latencies that keep requests in flight",
        arrival.entry,
        format_duration(arrival.at),
        thousands(MAX_IN_FLIGHT + 1),
        bytes(BYTES_PER_IN_FLIGHT),
        at_most()
    )
}

fn at_most() -> String {
    format!(
        "at most {} can be (~{})",
        thousands(MAX_IN_FLIGHT),
        bytes(MAX_IN_FLIGHT * BYTES_PER_IN_FLIGHT)
    )
}

/// Bytes in binary units with one decimal: `2 KiB`, `3.8 GiB`, `8.0 TiB`.
fn bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if value.fract() == 0.0 && value < 1000.0 && unit < 2 {
        format!("{value} {}", UNITS[unit])
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// The request fields an explicit request or a stream sets (everything but time and id).
#[derive(Clone, Debug, PartialEq)]
pub struct RequestTemplate {
    /// The model group (or alias) asked for.
    pub model: Arc<str>,
    /// `max_tokens`.
    pub max_tokens: Option<u32>,
    /// The request's own `num_retries`.
    pub num_retries: Option<u32>,
    /// The request's own fallbacks.
    pub fallbacks: Option<Vec<FallbackTarget>>,
    /// `disable_fallbacks` (or `allow_fallbacks: false`).
    pub disable_fallbacks: bool,
    /// `models: [...]`: the chain `profile: multigrid` walks after `model` (shared by every
    /// request of the entry).
    pub models: Arc<[Arc<str>]>,
    /// `metadata.tags`.
    pub tags: Vec<String>,
    /// `response_format` (`json` is constrained output: never continued mid-stream).
    pub response_format: ResponseFormat,
    /// `tools: true`: the request offers tools.
    pub tools: bool,
    /// `workload: NAME`: the workload's contract (`profile: contract`; shared).
    pub contract: Option<Arc<routersim_engine::contract::Contract>>,
}

impl RequestTemplate {
    /// A template for `model` with nothing else set.
    pub fn new(model: impl Into<Arc<str>>) -> Self {
        Self {
            model: model.into(),
            max_tokens: None,
            num_retries: None,
            fallbacks: None,
            disable_fallbacks: false,
            models: Arc::default(),
            tags: Vec::new(),
            response_format: ResponseFormat::Text,
            tools: false,
            contract: None,
        }
    }

    /// The request with `id` and `input_tokens` (not streamed, no `output_tokens`).
    pub fn request(&self, id: u64, input_tokens: u32) -> Request {
        Request {
            id,
            model: self.model.clone(),
            input_tokens,
            max_tokens: self.max_tokens,
            num_retries: self.num_retries,
            fallbacks: self.fallbacks.clone(),
            disable_fallbacks: self.disable_fallbacks,
            models: self.models.clone(),
            tags: self.tags.clone(),
            response_format: self.response_format,
            tools: self.tools,
            contract: self.contract.clone(),
            // Spelled out, not `..Request::default()`: that would build (and drop) an `Arc` for
            // the default model and models on every arrival.
            stream: false,
            prefill_tokens: 0,
            output_tokens: None,
            params: BTreeMap::new(),
            client: None,
        }
    }
}

/// `count` identical requests arriving at `at`.
#[derive(Clone, Debug, PartialEq)]
pub struct ExplicitRequest {
    /// Arrival time from the start of the run.
    pub at: Duration,
    /// How many (default 1).
    pub count: u32,
    /// Prompt size.
    pub input_tokens: u32,
    /// `stream: true`.
    pub stream: bool,
    /// The answer's length (`Request::output_tokens`), when set.
    pub output_tokens: Option<u32>,
    /// The request.
    pub template: RequestTemplate,
}

/// How a stream spaces its arrivals.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ArrivalProcess {
    /// Exponential gaps with mean `1/rate` (open-loop traffic).
    #[default]
    Poisson,
    /// Fixed gaps of `1/rate`, the first at `from`.
    Uniform,
}

/// Generated traffic: `rate` requests per second between `from` and `to` (exclusive).
#[derive(Clone, Debug, PartialEq)]
pub struct TrafficStream {
    /// Requests per second.
    pub rate_per_sec: f64,
    /// First possible arrival.
    pub from: Duration,
    /// No arrival at or after this.
    pub to: Duration,
    /// Spacing.
    pub arrival: ArrivalProcess,
    /// Prompt sizes, drawn uniformly (inclusive).
    pub input_tokens: TokenRange,
    /// Share of its requests that are streamed: 0 none, 1 all (`stream: true`), else each
    /// request is streamed with this probability.
    pub stream: f64,
    /// Answer lengths (`Request::output_tokens`), drawn uniformly (inclusive), when set.
    pub output_tokens: Option<TokenRange>,
    /// The request.
    pub template: RequestTemplate,
}

/// One `traffic` entry.
#[derive(Clone, Debug, PartialEq)]
pub enum TrafficSpec {
    /// An explicit request (`at:`).
    Request(ExplicitRequest),
    /// A generated stream (`rate:`).
    Stream(TrafficStream),
}

/// A warning when traffic sets `models: [...]` under a profile that does not walk them (any
/// but `profile: multigrid`): the key then does nothing.
pub(crate) fn unread_models(
    router: &routersim_engine::config::RouterConfig,
    traffic: &[TrafficSpec],
) -> Option<String> {
    let profile = router.settings.profile;
    if profile.is_some_and(routersim_engine::config::Profile::walks_candidates) {
        return None;
    }
    let i = traffic.iter().position(|t| {
        let template = match t {
            TrafficSpec::Request(r) => &r.template,
            TrafficSpec::Stream(s) => &s.template,
        };
        !template.models.is_empty()
    })?;
    Some(format!(
        "traffic[{i}].models: read by profile: multigrid and contract only; it does nothing here"
    ))
}

/// A warning when traffic names a `workload` under a profile that does not read contracts
/// (any but `profile: contract`): nothing is filtered or validated then.
pub(crate) fn unread_workloads(
    router: &routersim_engine::config::RouterConfig,
    traffic: &[TrafficSpec],
) -> Option<String> {
    let profile = router.settings.profile;
    if profile.is_some_and(routersim_engine::config::Profile::reads_contracts) {
        return None;
    }
    let i = traffic.iter().position(|t| {
        let template = match t {
            TrafficSpec::Request(r) => &r.template,
            TrafficSpec::Stream(s) => &s.template,
        };
        template.contract.is_some()
    })?;
    Some(format!(
        "traffic[{i}].workload: read by profile: contract only; requests carry the contract, \
         but nothing filters or validates by it here"
    ))
}

impl TrafficSpec {
    /// How many requests this entry is expected to produce (exact for explicit requests and
    /// uniform streams, the mean for Poisson streams).
    pub fn expected_count(&self) -> f64 {
        match self {
            TrafficSpec::Request(r) => f64::from(r.count),
            TrafficSpec::Stream(s) => match s.arrival {
                ArrivalProcess::Poisson => s.rate_per_sec * (s.to - s.from).as_secs_f64(),
                ArrivalProcess::Uniform => uniform_count(s) as f64,
            },
        }
    }
}

/// Arrivals of a uniform stream: `k` such that `from + k/rate < to`.
fn uniform_count(s: &TrafficStream) -> u64 {
    let mut k = ((s.to - s.from).as_secs_f64() * s.rate_per_sec).ceil() as u64;
    // Correct float edge cases against the exact arrival times.
    while k > 0 && uniform_offset(s.rate_per_sec, k - 1) >= s.to - s.from {
        k -= 1;
    }
    k
}

/// The `k`-th gap sum of a uniform stream, rounded to the nanosecond (not accumulated, so
/// spacing never drifts).
fn uniform_offset(rate_per_sec: f64, k: u64) -> Duration {
    Duration::from_nanos((k as f64 * 1e9 / rate_per_sec).round() as u64)
}

/// One request arriving at a virtual time.
#[derive(Clone, Debug)]
pub struct Arrival {
    /// From the start of the run.
    pub at: Duration,
    /// Its `traffic` entry (index in the file).
    pub entry: usize,
    /// The request (its id counts arrivals from 0).
    pub request: Request,
}

enum Source {
    /// Explicit requests, sorted by `at` (stable), with the next one's position.
    Explicit {
        items: Vec<(usize, ExplicitRequest)>,
        next: usize,
    },
    Stream(Box<StreamState>),
    /// A traffic file's rows, with the next one read ahead.
    File(Box<FileState>),
}

struct FileState {
    /// Its index in `traffic` (the tie-break).
    index: usize,
    spec: TrafficFile,
    /// Opened at the first read; `None` before, and once the file is done or failed.
    reader: Option<RowReader>,
    opened: bool,
    next: Option<Row>,
    rows_read: u64,
}

struct StreamState {
    /// Its index in `traffic` (the tie-break).
    index: usize,
    spec: TrafficStream,
    time_rng: ChaCha8Rng,
    token_rng: ChaCha8Rng,
    output_rng: ChaCha8Rng,
    stream_rng: ChaCha8Rng,
    /// Arrivals emitted so far (uniform spacing is computed from it).
    emitted: u64,
    /// The pending arrival's offset from `from`.
    offset: Duration,
}

/// The scenario's traffic as a lazy, time-ordered iterator.
pub struct Arrivals {
    sources: Vec<Source>,
    /// `(time, traffic index, source)` of each source's next arrival.
    heap: BinaryHeap<Reverse<(Duration, usize, usize)>>,
    /// Copies left of the explicit request being emitted: time, entry, copies, request.
    repeat: Option<(Duration, usize, u32, Request)>,
    next_id: u64,
    /// Why a traffic file stopped before its end (see [`Arrivals::take_error`]).
    error: Option<ScenarioError>,
}

impl Arrivals {
    /// The arrivals of `traffic` under `seed`.
    pub fn new(traffic: &[TrafficSpec], seed: u64) -> Self {
        Self::with_file(traffic, None, seed)
    }

    /// The arrivals of `traffic` and of a `traffic_file`'s rows (read as they are needed),
    /// under `seed`.
    pub fn with_file(traffic: &[TrafficSpec], file: Option<&TrafficFile>, seed: u64) -> Self {
        let mut explicit: Vec<(usize, ExplicitRequest)> = traffic
            .iter()
            .enumerate()
            .filter_map(|(i, t)| match t {
                TrafficSpec::Request(r) if r.count > 0 => Some((i, r.clone())),
                _ => None,
            })
            .collect();
        explicit.sort_by_key(|(i, r)| (r.at, *i));
        let mut sources = vec![Source::Explicit {
            items: explicit,
            next: 0,
        }];
        for (i, t) in traffic.iter().enumerate() {
            if let TrafficSpec::Stream(spec) = t {
                sources.push(Source::Stream(Box::new(StreamState {
                    index: i,
                    spec: spec.clone(),
                    time_rng: seeded_rng(seed, &format!("traffic/{i}")),
                    token_rng: seeded_rng(seed, &format!("traffic/{i}/input_tokens")),
                    output_rng: seeded_rng(seed, &format!("traffic/{i}/output_tokens")),
                    stream_rng: seeded_rng(seed, &format!("traffic/{i}/stream")),
                    emitted: 0,
                    offset: Duration::ZERO,
                })));
            }
        }
        if let Some(file) = file {
            sources.push(Source::File(Box::new(FileState {
                // After every `traffic` entry: at equal times, they come first.
                index: traffic.len(),
                spec: file.clone(),
                reader: None,
                opened: false,
                next: None,
                rows_read: 0,
            })));
        }
        let mut arrivals = Self {
            sources,
            heap: BinaryHeap::new(),
            repeat: None,
            next_id: 0,
            error: None,
        };
        for s in 0..arrivals.sources.len() {
            arrivals.schedule(s);
        }
        arrivals
    }

    /// Requests this traffic is expected to produce in total (see
    /// [`TrafficSpec::expected_count`]).
    pub fn expected_count(traffic: &[TrafficSpec]) -> f64 {
        traffic.iter().map(TrafficSpec::expected_count).sum()
    }

    /// Why the arrivals ended early: a traffic file that no longer reads as it did when the
    /// scenario was loaded (it changed since). The iterator ends at such an error, so a run
    /// must check this after it and fail rather than report part of the traffic.
    pub fn take_error(&mut self) -> Option<ScenarioError> {
        self.error.take()
    }

    /// Puts source `s`'s next arrival on the heap, if it has one.
    fn schedule(&mut self, s: usize) {
        match &mut self.sources[s] {
            Source::File(file) => match file.read_ahead() {
                Ok(Some(at)) => self.heap.push(Reverse((at, file.index, s))),
                Ok(None) => {}
                Err(e) => self.error = Some(e),
            },
            Source::Explicit { items, next } => {
                if let Some((index, item)) = items.get(*next) {
                    self.heap.push(Reverse((item.at, *index, s)));
                }
            }
            Source::Stream(stream) => {
                let StreamState {
                    index,
                    spec,
                    time_rng,
                    emitted,
                    offset,
                    ..
                } = &mut **stream;
                *offset = match spec.arrival {
                    ArrivalProcess::Uniform => uniform_offset(spec.rate_per_sec, *emitted),
                    ArrivalProcess::Poisson => {
                        // Exponential gap, −ln(U)/rate with U in (0, 1], summed in whole
                        // nanoseconds so the clock never drifts with float error.
                        let u: f64 = 1.0 - time_rng.random::<f64>();
                        let gap_ns = (-u.ln() / spec.rate_per_sec * 1e9).round();
                        offset.saturating_add(Duration::from_nanos(gap_ns as u64))
                    }
                };
                let at = spec.from.saturating_add(*offset);
                if at < spec.to {
                    self.heap.push(Reverse((at, *index, s)));
                }
            }
        }
    }
}

impl Iterator for Arrivals {
    type Item = Arrival;

    fn next(&mut self) -> Option<Arrival> {
        if self.error.is_some() {
            return None;
        }
        if let Some((at, entry, left, request)) = &mut self.repeat {
            let mut request = request.clone();
            let (at, entry) = (*at, *entry);
            request.id = self.next_id;
            self.next_id += 1;
            *left -= 1;
            if *left == 0 {
                self.repeat = None;
            }
            return Some(Arrival { at, entry, request });
        }
        let Reverse((at, entry, s)) = self.heap.pop()?;
        let id = self.next_id;
        self.next_id += 1;
        let request = match &mut self.sources[s] {
            Source::File(file) => {
                let row = file.next.take()?;
                Request {
                    id,
                    model: row.model,
                    input_tokens: row.input_tokens,
                    stream: row.stream,
                    output_tokens: row.output_tokens,
                    tags: row.tags,
                    ..Request::default()
                }
            }
            Source::Explicit { items, next } => {
                let item = &items[*next].1;
                *next += 1;
                let mut request = item.template.request(id, item.input_tokens);
                request.stream = item.stream;
                request.output_tokens = item.output_tokens;
                if item.count > 1 {
                    self.repeat = Some((at, entry, item.count - 1, request.clone()));
                }
                request
            }
            Source::Stream(stream) => {
                let StreamState {
                    spec,
                    token_rng,
                    output_rng,
                    stream_rng,
                    emitted,
                    ..
                } = &mut **stream;
                *emitted += 1;
                let mut request = spec
                    .template
                    .request(id, spec.input_tokens.sample(token_rng));
                request.output_tokens = spec.output_tokens.map(|r| r.sample(output_rng));
                request.stream = if spec.stream <= 0.0 {
                    false
                } else if spec.stream >= 1.0 {
                    true
                } else {
                    stream_rng.random_bool(spec.stream)
                };
                request
            }
        };
        self.schedule(s);
        Some(Arrival { at, entry, request })
    }
}

impl FileState {
    /// Reads the next row into `next` and returns its time; `None` at the end. The file was
    /// validated when the scenario was loaded, so an error, or a row count that differs,
    /// means it changed since.
    fn read_ahead(&mut self) -> Result<Option<Duration>, ScenarioError> {
        if !self.opened {
            self.opened = true;
            self.reader = Some(RowReader::open(&self.spec.path)?);
        }
        let Some(reader) = &mut self.reader else {
            return Ok(None);
        };
        let changed = |now: String| ScenarioError {
            file: self.spec.path.clone(),
            line: None,
            column: None,
            path: String::new(),
            message: format!(
                "the file changed after the scenario was loaded: it had {} rows, now {now}",
                self.spec.rows
            ),
        };
        match reader.next_row() {
            Some(Ok(_)) if self.rows_read == self.spec.rows => {
                self.reader = None;
                Err(changed("more".to_string()))
            }
            Some(Ok(row)) => {
                self.rows_read += 1;
                let at = row.at;
                self.next = Some(row);
                Ok(Some(at))
            }
            Some(Err(e)) => {
                self.reader = None;
                Err(e)
            }
            None => {
                self.reader = None;
                if self.rows_read == self.spec.rows {
                    Ok(None)
                } else {
                    Err(changed(self.rows_read.to_string()))
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_like_numbers() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(4_294_967_295), "4,294,967,295");
        assert_eq!(bytes(2048), "2 KiB");
        assert_eq!(bytes(1536), "1.5 KiB");
        assert_eq!(bytes(MAX_IN_FLIGHT * BYTES_PER_IN_FLIGHT), "3.8 GiB");
        assert_eq!(bytes(4_294_967_295 * BYTES_PER_IN_FLIGHT), "8.0 TiB");
    }

    #[test]
    fn a_run_past_the_limit_says_which_entry_and_when() {
        let arrival = Arrival {
            at: Duration::from_millis(12_500),
            entry: 1,
            request: Request::new(0, "gpt"),
        };
        assert_eq!(
            in_flight_exceeded(&arrival),
            "traffic[1]: the request arriving at 12500ms would be the 2,000,001st in flight at \
             once (2 KiB each); at most 2,000,000 can be (~3.8 GiB): lower the rate, or the \
             latencies that keep requests in flight"
        );
    }
}
