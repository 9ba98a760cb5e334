//! The scenario's traffic as a lazy iterator of arrivals, in time order.
//!
//! Runs of millions of requests must not hold per-request data, so [`Arrivals`] keeps one
//! pending arrival per source (the explicit requests, each stream, the traffic file) in a heap
//! keyed by `(time, traffic index)`: equal times come out in file order, deterministically.
//! Request ids are 0, 1, 2, … in arrival order; each request is built from its entry's
//! template and what the arrival draws ([`Draw`]).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Duration;

use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use routersim_engine::request::Request;
use routersim_mock_providers::rng::seeded_rng;

use super::spec::{ArrivalProcess, ExplicitRequest, TrafficSpec, TrafficStream, uniform_offset};
use super::template::{Draw, RequestTemplate};
use crate::scenario::ScenarioError;
use crate::traffic_file::{Row, RowReader, TrafficFile};

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
    /// With a ramp: the pending arrival's position on the ramp's integral.
    ramp_pos: f64,
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
                    ramp_pos: 0.0,
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
                    ramp_pos,
                    ..
                } = &mut **stream;
                if let Some(ramp) = &spec.ramp {
                    *ramp_pos = match spec.arrival {
                        ArrivalProcess::Uniform => (*emitted + 1) as f64,
                        ArrivalProcess::Poisson => {
                            let u: f64 = 1.0 - time_rng.random::<f64>();
                            *ramp_pos - u.ln()
                        }
                    };
                    if let Some(at) = ramp.time_at(*ramp_pos).map(|t| spec.from.saturating_add(t))
                        && at < spec.to
                    {
                        self.heap.push(Reverse((at, *index, s)));
                    }
                    return;
                }
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
            Source::File(file) => row_request(file.next.take()?, id),
            Source::Explicit { items, next } => {
                let item = &items[*next].1;
                *next += 1;
                let request = item.template.request(Draw {
                    id,
                    input_tokens: item.input_tokens,
                    stream: item.stream,
                    output_tokens: item.output_tokens,
                });
                if item.count > 1 {
                    self.repeat = Some((at, entry, item.count - 1, request.clone()));
                }
                request
            }
            Source::Stream(stream) => stream.request(id),
        };
        self.schedule(s);
        Some(Arrival { at, entry, request })
    }
}

/// A traffic-file row's request: a template of its model and tags (a row has no other
/// request keys), and its own sizes.
fn row_request(row: Row, id: u64) -> Request {
    let Row {
        at: _,
        model,
        stream,
        input_tokens,
        output_tokens,
        tags,
    } = row;
    RequestTemplate {
        tags,
        ..RequestTemplate::new(model)
    }
    .into_request(Draw {
        id,
        input_tokens,
        stream,
        output_tokens,
    })
}

impl StreamState {
    /// The next request of the stream: its sizes and whether it is streamed drawn, each from
    /// its own random stream.
    fn request(&mut self, id: u64) -> Request {
        self.emitted += 1;
        let spec = &self.spec;
        let input_tokens = spec.input_tokens.sample(&mut self.token_rng);
        let output_tokens = spec.output_tokens.map(|r| r.sample(&mut self.output_rng));
        let stream = if spec.stream <= 0.0 {
            false
        } else if spec.stream >= 1.0 {
            true
        } else {
            self.stream_rng.random_bool(spec.stream)
        };
        spec.template.request(Draw {
            id,
            input_tokens,
            stream,
            output_tokens,
        })
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
