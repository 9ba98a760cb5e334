//! Traffic: the scenario's requests, generated lazily in arrival order.
//!
//! A scenario's traffic is a list of explicit requests (`at: 1.5s`) and generated streams
//! (`rate: 20/s`), plus the rows of a `traffic_file`. Runs of millions of requests must not
//! hold per-request data, so [`Arrivals`] is an iterator that keeps one pending arrival per
//! source in a heap keyed by `(time, traffic index)`: equal times come out in file order,
//! deterministically. Request ids are 0, 1, 2, … in arrival order.
//!
//! Randomness: stream `i` (its index in `traffic`) draws its arrival times from
//! `seeded_rng(seed, "traffic/<i>")`, its `input_tokens` (when a range) from
//! `seeded_rng(seed, "traffic/<i>/input_tokens")`, its `output_tokens` (when a range) from
//! `traffic/<i>/output_tokens`, and whether a request is streamed (when `stream` is a share
//! strictly between 0 and 1) from `traffic/<i>/stream`, so none of these ever moves an
//! arrival or another draw.
//!
//! Layout, bottom up: `template` is an entry's [`RequestTemplate`] and the engine request
//! built from it per arrival (why two types: see there); `spec` the validated entries;
//! `ramp` a stream's linear `stages`;
//! `arrivals` the generator; `in_flight` the limit on requests in flight at once. This file
//! only declares and re-exports.

mod arrivals;
mod in_flight;
mod ramp;
mod spec;
mod template;

pub use routersim_mock_providers::spec::TokenRange;

pub use self::arrivals::{Arrival, Arrivals};
pub use self::in_flight::{
    BYTES_PER_IN_FLIGHT, MAX_IN_FLIGHT, check_in_flight, in_flight_exceeded,
};
pub use self::ramp::{Ramp, Stage};
pub use self::spec::{
    ArrivalProcess, DEFAULT_INPUT_TOKENS, ExplicitRequest, TrafficSpec, TrafficStream,
};
pub use self::template::{Draw, RequestTemplate};
