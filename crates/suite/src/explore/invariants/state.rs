//! What the checker keeps: each request in flight as its events have shown it so far, one bit
//! per ended request, each deployment's open cooldown, and the first violation.
//!
//! Its own module because every family of checks reads and updates it; it holds no rule.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use super::invariant::Violation;

/// A request in flight, as its events have shown it so far.
#[derive(Debug, Default)]
pub(super) struct RequestState {
    pub(super) attempts: u32,
    pub(super) retries: u32,
    pub(super) fallbacks: u32,
    /// The attempt started and not yet ended: (number, start, deployment id).
    pub(super) open_attempt: Option<(u32, Instant, Arc<str>)>,
    /// A `stream_chunk` reached the caller.
    pub(super) content: bool,
    /// `stream_continued` was seen and its attempt (on this deployment) has not started yet.
    pub(super) continuation_pending: Option<Arc<str>>,
    /// Continuations announced so far.
    pub(super) continuations: u32,
    /// The attempt after a `wait` may not start before this.
    pub(super) wait_until: Option<Instant>,
    /// The last content chunk of the open attempt.
    pub(super) last_chunk: Option<Instant>,
    /// The first attempt that outlived its timeout: (attempt, took, limit); a violation
    /// unless the request turns out to be streamed.
    pub(super) over_timeout: Option<(u32, Duration, Duration)>,
    /// A hedge race (`hedged` seen, `hedge_end` not yet): a second attempt may run beside the
    /// open one; this is it.
    pub(super) racing: bool,
    pub(super) hedge_attempt: Option<(u32, Instant, Arc<str>)>,
    /// Hedges started (each allows one attempt more than the settings' bound).
    pub(super) hedges: u32,
    /// Attempts a hedge race cancelled: started, never ended, not in `request_end`'s count.
    pub(super) cancelled: u32,
    /// The latest attempt to start: (number, when) (see `deadline`).
    pub(super) last_attempt_start: Option<(u32, Instant)>,
    /// When the latest wait ends (see `deadline`).
    pub(super) latest_wait_end: Option<Instant>,
}

/// Everything the checker keeps.
#[derive(Debug, Default)]
pub(super) struct State {
    pub(super) requests: HashMap<u64, RequestState>,
    /// One bit per ended request id.
    pub(super) ended: Vec<u64>,
    pub(super) ended_count: u64,
    /// Open cooldown deadline per deployment slot.
    pub(super) cooling: Vec<Option<Instant>>,
    /// Per slot: the deadline the write that began the open cooldown set (what a profile
    /// whose re-write never extends a live cooldown keeps to).
    pub(super) first_until: Vec<Option<Instant>>,
    /// The soonest open deadline (a fast path for the per-event check).
    pub(super) soonest: Option<Instant>,
    pub(super) last_request_end: Option<Instant>,
    pub(super) first: Option<Violation>,
    pub(super) violations: u64,
}
