//! What is checked, by name, and what a broken invariant reports; the timer slack every
//! timer-enforced deadline is checked with.
//!
//! Its own module because the checker, every family of checks and the explorer name these;
//! kept below them all, it imports none of theirs.

use std::fmt;
use std::time::Duration;

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
