//! The invariants `routersim explore` checks on every run, as an event sink.
//!
//! Hand-written tests check what their author thought of; an invariant holds for *every* run,
//! so a checker that watches thousands of seed-chosen runs finds the cases nobody wrote down
//! (the way FoundationDB's simulator and TigerBeetle's VOPR do). The checker sees the engine's
//! typed events as they happen, keeps state only for requests in flight (plus one bit per
//! ended request id and one slot per deployment), and stops recording after the first
//! violation (it still counts them).
//!
//! What each invariant means here, precisely:
//! - [`Invariant::EndsOnce`]: every arrival ends with exactly one `request_end`; nothing of a
//!   request comes after it; at the end, requests ended = arrivals and the summary's
//!   `ok + failed` = `requests` = arrivals.
//! - [`Invariant::EventsConsistent`]: a request's attempts are numbered 1, 2, 3… and each
//!   `attempt_start` is closed by its `attempt_end` before the next one starts; no attempt
//!   starts before the wait announced before it is over; `request_end` counts the attempts,
//!   retries and fallback hops its events showed; a cooldown's `until` is the later of the old
//!   deadline and `at + duration`; `cooldown_end` follows a cooldown.
//! - [`Invariant::AttemptBound`]: attempts per request ≤ [`Bounds::max_attempts`], every
//!   `retry` within its `budget` and every budget ≤ the largest retry count the config and the
//!   traffic can produce, every fallback hop within `max_fallbacks` levels and the group count.
//! - [`Invariant::NoRetryAfterCommit`]: once a stream delivered content to the caller (a
//!   `stream_chunk` event), no `retry`, `fallback`, `order_fallback` or `weighted_failover`
//!   follows, a break is reported `after_content`, a `give_up` says
//!   `stream_content_delivered`, and the only attempt allowed after it is the one a
//!   `stream_continued` announces (once, only with `enable_mid_stream_fallback_continuation`
//!   under `stream_recovery: litellm`, and on the deployment it names). Multigrid commits
//!   earlier (at the first byte, which events do not show), so this is a weaker check there.
//!   Under `stream_recovery: litellm` a break is not reported `after_content` without content
//!   ([`Invariant::EventsConsistent`]: the request could still have been retried).
//! - [`Invariant::CooldownEnds`]: a cooldown set until `U` is ended (`cooldown_end` at exactly
//!   `U`) or cleared (`recovered`) before any event later than `U` + [`TIMER_SLACK`]; at the
//!   run's end (its last `request_end`) every cooldown still open has `U` + [`TIMER_SLACK`] ≥
//!   the end (the run end clips it).
//! - [`Invariant::NoWaitPastDeadline`]: "deadline" is what the engine has today: a
//!   Retry-After wait is in (0, 60 s]; a backoff wait is below `max(8 s, retry_after)` + 750 ms
//!   of jitter; a non-streamed attempt lasts at most its `timeout` (the deployment's, else the
//!   router's); a stream's first content token arrives within the first-token timeout (plus
//!   the stall timeout, a documented slack for one non-content frame first) of its attempt's
//!   start, and no gap between its content chunks, or from the last one to the attempt's end,
//!   exceeds `stream_stall_timeout`. Each timer-enforced deadline gets [`TIMER_SLACK`]. A
//!   streamed attempt as a whole has no deadline in the engine, so none is checked.
//!
//! - [`Invariant::WithinWalkDeadline`] (profiles that walk candidates, `profile: multigrid`):
//!   *"a retried request never takes longer than one that failed outright would have"* — no
//!   attempt starts at or past the request's end-to-end deadline, no wait ends at or past it,
//!   and a non-streamed request ends by it (+ [`TIMER_SLACK`]); see `deadline`.
//!
//! [`Invariant::NoPanic`] and [`Invariant::Deterministic`] are checked around the run (see
//! the parent module).
//!
//! Layout: this file holds the public types (`Invariant`, `Violation`, `Checker`); `bounds`
//! derives what the settings allow from a scenario; `verdict` keeps the per-request state and
//! checks background events and the end of the run; `request` checks one request's events.

mod bounds;
mod deadline;
mod request;
mod verdict;

pub use self::bounds::{Bounds, DeploymentLimits, WalkDeadline};
use self::verdict::{State, Verdict};

use std::fmt;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use routersim_engine::event::{EventSink, RoutingEvent};
use routersim_report::summary::Summary;
use tokio::time::Instant;

/// tokio's timer resolution: a sleep until `t` wakes on the first millisecond tick at or
/// after `t`, and other tasks woken on that tick may run first. Deadlines enforced by a
/// timer (a cooldown's end, an attempt's timeout, a stream's first-token and stall
/// deadlines) are checked with this much slack.
pub const TIMER_SLACK: Duration = Duration::from_millis(1);

/// One property every run must have.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Invariant {
    /// Nothing panics (the run, the engine, the recorder).
    NoPanic,
    /// Every arrival ends exactly once.
    EndsOnce,
    /// A request's events tell one consistent story.
    EventsConsistent,
    /// Attempts, retries and fallback hops stay within what the settings allow.
    AttemptBound,
    /// No retry or failover after a stream delivered content.
    NoRetryAfterCommit,
    /// Every cooldown ends.
    CooldownEnds,
    /// No wait, attempt or stream gap runs past its deadline.
    NoWaitPastDeadline,
    /// A retried request never takes longer than its end-to-end deadline allows.
    WithinWalkDeadline,
    /// The same seed twice gives the same report bytes.
    Deterministic,
    /// The generated scenario loads and runs (a failure here is explore's own bug).
    Runs,
}

impl Invariant {
    /// Every invariant, in report order.
    pub const ALL: [Invariant; 10] = [
        Invariant::NoPanic,
        Invariant::EndsOnce,
        Invariant::EventsConsistent,
        Invariant::AttemptBound,
        Invariant::NoRetryAfterCommit,
        Invariant::CooldownEnds,
        Invariant::NoWaitPastDeadline,
        Invariant::WithinWalkDeadline,
        Invariant::Deterministic,
        Invariant::Runs,
    ];

    /// Its name in output and file names.
    pub fn name(self) -> &'static str {
        match self {
            Invariant::NoPanic => "no_panic",
            Invariant::EndsOnce => "ends_once",
            Invariant::EventsConsistent => "events_consistent",
            Invariant::AttemptBound => "attempt_bound",
            Invariant::NoRetryAfterCommit => "no_retry_after_commit",
            Invariant::CooldownEnds => "cooldown_ends",
            Invariant::NoWaitPastDeadline => "no_wait_past_deadline",
            Invariant::WithinWalkDeadline => "within_walk_deadline",
            Invariant::Deterministic => "deterministic",
            Invariant::Runs => "runs",
        }
    }
}

impl fmt::Display for Invariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A broken invariant: which, where, and what happened.
#[derive(Clone, Debug, PartialEq)]
pub struct Violation {
    /// The invariant.
    pub invariant: Invariant,
    /// The request whose events broke it, if one did.
    pub request_id: Option<u64>,
    /// Virtual time of the event that broke it, in ms from the run's start.
    pub at_ms: Option<f64>,
    /// What happened, with the event.
    pub detail: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.invariant)?;
        if let Some(id) = self.request_id {
            write!(f, ": request {id}")?;
        }
        if let Some(ms) = self.at_ms {
            write!(f, " at {:.3} s", ms / 1000.0)?;
        }
        write!(f, ": {}", self.detail)
    }
}

/// The invariant checker: an [`EventSink`] that checks as events arrive, and
/// [`Checker::finish`] for the end-of-run checks.
#[derive(Debug)]
pub struct Checker {
    bounds: Bounds,
    start: Instant,
    state: Mutex<State>,
}

impl Checker {
    /// A checker for a run that started at `start`.
    pub fn new(bounds: Bounds, start: Instant) -> Self {
        let slots = bounds.deployments.len();
        Self {
            bounds,
            start,
            state: Mutex::new(State {
                cooling: vec![None; slots],
                ..State::default()
            }),
        }
    }

    /// The bounds it checks against.
    pub fn bounds(&self) -> &Bounds {
        &self.bounds
    }

    /// The end-of-run checks, given the run's summary (if it produced one); then the first
    /// violation seen, with how many there were in all.
    pub fn finish(&self, summary: Option<&Summary>) -> Option<(Violation, u64)> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let mut v = Verdict {
            state: &mut state,
            start: self.start,
        };
        v.finish(&self.bounds, summary);
        let count = v.state.violations;
        v.state.first.clone().map(|first| (first, count))
    }

    /// The first violation so far.
    pub fn first_violation(&self) -> Option<Violation> {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.first.clone()
    }
}

impl EventSink for Checker {
    fn emit(&self, event: &RoutingEvent) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let mut v = Verdict {
            state: &mut state,
            start: self.start,
        };
        v.on_event(&self.bounds, event);
    }
}

#[cfg(test)]
mod tests;
