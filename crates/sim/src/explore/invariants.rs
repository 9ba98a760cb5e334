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
//! [`Invariant::NoPanic`] and [`Invariant::Deterministic`] are checked around the run (see
//! the parent module).

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use routersim_engine::backoff::{MAX_BACKOFF, MAX_JITTER, MAX_RETRY_AFTER};
use routersim_engine::config::{FallbackTarget, KindPolicy, RouterConfig};
use routersim_engine::event::{EventKind, EventSink, GiveUpReason, RoutingEvent, WaitReason};
use routersim_engine::stream::StreamRecovery;
use routersim_report::summary::Summary;
use tokio::time::Instant;

use crate::scenario::Scenario;
use crate::traffic::TrafficSpec;

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
    /// The same seed twice gives the same report bytes.
    Deterministic,
    /// The generated scenario loads and runs (a failure here is explore's own bug).
    Runs,
}

impl Invariant {
    /// Every invariant, in report order.
    pub const ALL: [Invariant; 9] = [
        Invariant::NoPanic,
        Invariant::EndsOnce,
        Invariant::EventsConsistent,
        Invariant::AttemptBound,
        Invariant::NoRetryAfterCommit,
        Invariant::CooldownEnds,
        Invariant::NoWaitPastDeadline,
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

/// Per-deployment deadlines.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeploymentLimits {
    /// Index into the checker's cooldown slots.
    pub index: usize,
    /// A non-streamed attempt's deadline (`timeout`, the deployment's else the router's).
    pub timeout: Option<Duration>,
    /// A stream's first-token deadline (`stream_timeout`, the deployment's else the router's).
    pub stream_timeout: Option<Duration>,
}

/// What the settings allow, derived once per scenario.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bounds {
    /// Arrivals of the run (request ids are `0..arrivals`).
    pub arrivals: u64,
    /// Attempts one request can make (see [`Bounds::derive`]).
    pub max_attempts: u32,
    /// The largest retry budget any failure can get.
    pub max_retry_budget: u32,
    /// `max_fallbacks`: the deepest hop.
    pub max_fallback_depth: u32,
    /// Hops one request can make: one per group other than the first.
    pub max_fallback_hops: u32,
    /// A committed stream may be continued (once).
    pub continuation: bool,
    /// `stream_recovery: litellm`: a stream commits at its first content (Multigrid commits
    /// at the first byte, which events do not show).
    pub commits_at_content: bool,
    /// The longest backoff wait (before it: `max(8 s, retry_after)` plus the jitter).
    pub backoff_cap: Duration,
    /// The longest Retry-After wait honoured.
    pub retry_after_cap: Duration,
    /// `stream_stall_timeout`.
    pub stall_timeout: Option<Duration>,
    /// By deployment id.
    pub deployments: BTreeMap<Arc<str>, DeploymentLimits>,
}

impl Bounds {
    /// The bounds a scenario's settings imply, for a run with `arrivals` requests.
    ///
    /// Attempts: a request visits each model group at most once (the walk skips groups
    /// already tried). A visit runs one retry loop per `order` level, each at most
    /// `B + 1` attempts (`B`, [`Bounds::max_retry_budget`]: the largest of `num_retries`,
    /// every `retry_policy` and `model_group_retry_policy` count, every deployment's
    /// `num_retries`, every traffic entry's `num_retries` and every fallback target's
    /// `num_retries` override), then weighted failover or DeltaLLM's remaining-deployments
    /// walk, at most one attempt per deployment of the group. A mid-stream continuation adds
    /// one. So `max_attempts = Σ_groups (levels·(B+1) + deployments) + continuation`: loose
    /// (it assumes every group is reachable and every retry fails), never too small.
    pub fn derive(scenario: &Scenario, arrivals: u64) -> Self {
        let router = &scenario.router;
        let settings = &router.settings;
        let budget = max_retry_budget(scenario);
        let mut groups: BTreeMap<&str, (u32, Vec<Option<u32>>)> = BTreeMap::new();
        for d in &router.deployments {
            let entry = groups.entry(&d.model_name).or_default();
            entry.0 += 1;
            if !entry.1.contains(&d.order) {
                entry.1.push(d.order);
            }
        }
        let continuation = settings.enable_mid_stream_fallback_continuation
            && settings.stream_recovery == StreamRecovery::LiteLlm;
        let per_group = |(size, levels): &(u32, Vec<Option<u32>>)| {
            (levels.len() as u32)
                .saturating_mul(budget.saturating_add(1))
                .saturating_add(*size)
        };
        let max_attempts = groups
            .values()
            .map(per_group)
            .fold(u32::from(continuation), u32::saturating_add);
        let deployments = router
            .deployments
            .iter()
            .enumerate()
            .map(|(index, d)| {
                (
                    d.id.clone(),
                    DeploymentLimits {
                        index,
                        timeout: d.timeout.or(settings.timeout),
                        stream_timeout: d.stream_timeout.or(settings.stream_timeout),
                    },
                )
            })
            .collect();
        Bounds {
            arrivals,
            max_attempts,
            max_retry_budget: budget,
            max_fallback_depth: settings.max_fallbacks,
            max_fallback_hops: (groups.len() as u32).saturating_sub(1),
            continuation,
            commits_at_content: settings.stream_recovery == StreamRecovery::LiteLlm,
            backoff_cap: MAX_BACKOFF.max(settings.retry_after) + MAX_JITTER,
            retry_after_cap: MAX_RETRY_AFTER,
            stall_timeout: settings.stream_stall_timeout,
            deployments,
        }
    }
}

/// The largest retry budget the config and the traffic can produce (see [`Bounds::derive`]).
fn max_retry_budget(scenario: &Scenario) -> u32 {
    let router: &RouterConfig = &scenario.router;
    let settings = &router.settings;
    let policy_max = |p: &KindPolicy| p.per_kind.values().copied().chain(p.default).max();
    let target_max = |targets: &[FallbackTarget]| {
        targets
            .iter()
            .filter_map(|t| t.overrides.get("num_retries"))
            .filter_map(|v| v.as_u64())
            // The engine reads the override as `as u32`.
            .map(|v| v as u32)
            .max()
    };
    let maps = [
        &settings.fallbacks,
        &settings.context_window_fallbacks,
        &settings.content_policy_fallbacks,
    ];
    let traffic = scenario.traffic.iter().map(|t| match t {
        TrafficSpec::Request(r) => &r.template,
        TrafficSpec::Stream(s) => &s.template,
    });
    std::iter::once(settings.num_retries)
        .chain(settings.retry_policy.as_ref().and_then(policy_max))
        .chain(
            settings
                .model_group_retry_policy
                .values()
                .filter_map(policy_max),
        )
        .chain(router.deployments.iter().filter_map(|d| d.num_retries))
        .chain(
            maps.iter()
                .flat_map(|m| m.entries.iter())
                .filter_map(|(_, targets)| target_max(targets)),
        )
        .chain(traffic.clone().filter_map(|t| t.num_retries))
        .chain(traffic.filter_map(|t| t.fallbacks.as_deref().and_then(target_max)))
        .max()
        .unwrap_or(0)
}

/// A request in flight, as its events have shown it so far.
#[derive(Debug, Default)]
struct RequestState {
    attempts: u32,
    retries: u32,
    fallbacks: u32,
    /// The attempt started and not yet ended: (number, start, deployment id).
    open_attempt: Option<(u32, Instant, Arc<str>)>,
    /// A `stream_chunk` reached the caller.
    content: bool,
    /// `stream_continued` was seen and its attempt (on this deployment) has not started yet.
    continuation_pending: Option<Arc<str>>,
    /// A continuation happened.
    continued: bool,
    /// The attempt after a `wait` may not start before this.
    wait_until: Option<Instant>,
    /// The last content chunk of the open attempt.
    last_chunk: Option<Instant>,
    /// The first attempt that outlived its timeout: (attempt, took, limit); a violation
    /// unless the request turns out to be streamed.
    over_timeout: Option<(u32, Duration, Duration)>,
}

/// Everything the checker keeps.
#[derive(Debug, Default)]
struct State {
    requests: HashMap<u64, RequestState>,
    /// One bit per ended request id.
    ended: Vec<u64>,
    ended_count: u64,
    /// Open cooldown deadline per deployment slot.
    cooling: Vec<Option<Instant>>,
    /// The soonest open deadline (a fast path for the per-event check).
    soonest: Option<Instant>,
    last_request_end: Option<Instant>,
    first: Option<Violation>,
    violations: u64,
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

/// The checking logic over the state, one event at a time.
struct Verdict<'a> {
    state: &'a mut State,
    start: Instant,
}

fn secs(d: Duration) -> String {
    format!("{:.3} s", d.as_secs_f64())
}

impl Verdict<'_> {
    fn ms(&self, at: Instant) -> f64 {
        at.saturating_duration_since(self.start).as_secs_f64() * 1000.0
    }

    fn fail(&mut self, invariant: Invariant, id: Option<u64>, at: Option<Instant>, detail: String) {
        self.state.violations += 1;
        if self.state.first.is_none() {
            let at_ms = at.map(|at| self.ms(at));
            self.state.first = Some(Violation {
                invariant,
                request_id: id,
                at_ms,
                detail,
            });
        }
    }

    fn has_ended(&self, id: u64) -> bool {
        let (word, bit) = ((id / 64) as usize, id % 64);
        self.state
            .ended
            .get(word)
            .is_some_and(|w| w & (1 << bit) != 0)
    }

    fn mark_ended(&mut self, id: u64) {
        let (word, bit) = ((id / 64) as usize, id % 64);
        if self.state.ended.len() <= word {
            self.state.ended.resize(word + 1, 0);
        }
        self.state.ended[word] |= 1 << bit;
        self.state.ended_count += 1;
    }

    fn on_event(&mut self, bounds: &Bounds, event: &RoutingEvent) {
        self.check_cooldowns_ended(bounds, event.at, Some(event));
        match event.request_id {
            Some(id) => self.on_request_event(bounds, id, event),
            None => self.on_background_event(bounds, event),
        }
    }

    /// A cooldown whose deadline passed must have ended before time moved past it.
    fn check_cooldowns_ended(
        &mut self,
        bounds: &Bounds,
        now: Instant,
        event: Option<&RoutingEvent>,
    ) {
        let lapsed = |until: Instant| until + TIMER_SLACK < now;
        if self.state.soonest.is_none_or(|soonest| !lapsed(soonest)) {
            return;
        }
        let late: Vec<(usize, Instant)> = self
            .state
            .cooling
            .iter()
            .enumerate()
            .filter_map(|(i, until)| until.filter(|u| lapsed(*u)).map(|u| (i, u)))
            .collect();
        for (slot, until) in late {
            let id = deployment_at(bounds, slot);
            let when = match event {
                Some(e) => format!(
                    "a {} event at {:.3} s",
                    e.kind.name(),
                    self.ms(now) / 1000.0
                ),
                None => format!("the run's end at {:.3} s", self.ms(now) / 1000.0),
            };
            self.fail(
                Invariant::CooldownEnds,
                None,
                Some(until),
                format!(
                    "deployment {id} cooling until {:.3} s has no cooldown_end or recovered \
                     by {when}",
                    self.ms(until) / 1000.0
                ),
            );
            // Report each lapse once.
            self.state.cooling[slot] = None;
        }
        self.recompute_soonest();
    }

    fn recompute_soonest(&mut self) {
        self.state.soonest = self.state.cooling.iter().flatten().min().copied();
    }

    fn slot(&mut self, bounds: &Bounds, id: &str, event: &RoutingEvent) -> Option<usize> {
        let slot = bounds.deployments.get(id).map(|d| d.index);
        if slot.is_none() {
            self.fail(
                Invariant::EventsConsistent,
                event.request_id,
                Some(event.at),
                format!(
                    "{} names deployment {id:?}, not in the config",
                    event.kind.name()
                ),
            );
        }
        slot
    }

    fn on_background_event(&mut self, bounds: &Bounds, event: &RoutingEvent) {
        match &event.kind {
            EventKind::CooldownSet {
                deployment_id,
                duration,
                until,
                ..
            } => {
                let Some(slot) = self.slot(bounds, deployment_id, event) else {
                    return;
                };
                let asked = event.at + *duration;
                let expected = self.state.cooling[slot].map_or(asked, |old| old.max(asked));
                if *until != expected {
                    self.fail(
                        Invariant::EventsConsistent,
                        event.request_id,
                        Some(event.at),
                        format!(
                            "cooldown_set on {deployment_id} for {} says until {:.3} s; the \
                             later of the old deadline and at + duration is {:.3} s",
                            secs(*duration),
                            self.ms(*until) / 1000.0,
                            self.ms(expected) / 1000.0
                        ),
                    );
                }
                self.state.cooling[slot] = Some(*until);
                self.recompute_soonest();
            }
            EventKind::CooldownEnd { deployment_id, .. } => {
                let Some(slot) = self.slot(bounds, deployment_id, event) else {
                    return;
                };
                match self.state.cooling[slot].take() {
                    None => self.fail(
                        Invariant::EventsConsistent,
                        None,
                        Some(event.at),
                        format!("cooldown_end on {deployment_id}, which is not cooling"),
                    ),
                    Some(until) if until != event.at => self.fail(
                        Invariant::CooldownEnds,
                        None,
                        Some(event.at),
                        format!(
                            "the cooldown of {deployment_id} ends at {:.3} s, its deadline \
                             is {:.3} s",
                            self.ms(event.at) / 1000.0,
                            self.ms(until) / 1000.0
                        ),
                    ),
                    Some(_) => {}
                }
                self.recompute_soonest();
            }
            EventKind::Recovered { deployment_id, .. } => {
                if let Some(slot) = self.slot(bounds, deployment_id, event) {
                    self.state.cooling[slot] = None;
                    self.recompute_soonest();
                }
            }
            _ => {}
        }
    }

    fn on_request_event(&mut self, bounds: &Bounds, id: u64, event: &RoutingEvent) {
        let at = event.at;
        if id >= bounds.arrivals {
            self.fail(
                Invariant::EndsOnce,
                Some(id),
                Some(at),
                format!(
                    "{} for request {id}, but the run has {} arrivals (ids 0..{})",
                    event.kind.name(),
                    bounds.arrivals,
                    bounds.arrivals
                ),
            );
            return;
        }
        if self.has_ended(id) {
            self.fail(
                Invariant::EndsOnce,
                Some(id),
                Some(at),
                format!("{} after the request's request_end", event.kind.name()),
            );
            return;
        }
        // Cooldown events carry the request that caused them.
        if matches!(
            event.kind,
            EventKind::CooldownSet { .. }
                | EventKind::CooldownEnd { .. }
                | EventKind::Recovered { .. }
        ) {
            self.on_background_event(bounds, event);
            return;
        }
        let mut req = self.state.requests.remove(&id).unwrap_or_default();
        let ended = self.on_request(bounds, id, event, &mut req);
        if ended {
            self.mark_ended(id);
            self.state.last_request_end = Some(
                self.state
                    .last_request_end
                    .map_or(at, |last: Instant| last.max(at)),
            );
        } else {
            self.state.requests.insert(id, req);
        }
    }

    /// One event of request `id`; true when it ended the request.
    #[expect(
        clippy::too_many_lines,
        reason = "one match over a request's event kinds, each arm an invariant; next to split"
    )]
    fn on_request(
        &mut self,
        bounds: &Bounds,
        id: u64,
        event: &RoutingEvent,
        req: &mut RequestState,
    ) -> bool {
        let at = event.at;
        let name = event.kind.name();
        let (id, at_opt) = (Some(id), Some(at));
        let after_commit = |what: &str| format!("{what} after the stream delivered content");
        match &event.kind {
            EventKind::AttemptStart {
                attempt,
                deployment_id,
                ..
            } => {
                if let Some((open, _, _)) = &req.open_attempt {
                    let detail = format!("attempt {attempt} starts before attempt {open} ended");
                    self.fail(Invariant::EventsConsistent, id, at_opt, detail);
                }
                if *attempt != req.attempts + 1 {
                    let detail = format!(
                        "attempt {attempt} starts after {} attempt(s): attempts count from 1",
                        req.attempts
                    );
                    self.fail(Invariant::EventsConsistent, id, at_opt, detail);
                }
                req.attempts += 1;
                if req.attempts > bounds.max_attempts {
                    let detail = format!(
                        "attempt {} on {deployment_id}: the settings allow at most {}",
                        req.attempts, bounds.max_attempts
                    );
                    self.fail(Invariant::AttemptBound, id, at_opt, detail);
                }
                if req.content {
                    if let Some(announced) = req.continuation_pending.take() {
                        if announced != *deployment_id {
                            let detail = format!(
                                "the continuation announced on {announced} starts on \
                                 {deployment_id}"
                            );
                            self.fail(Invariant::NoRetryAfterCommit, id, at_opt, detail);
                        }
                    } else {
                        let detail = after_commit(&format!(
                            "attempt {attempt} on {deployment_id}, not a continuation,"
                        ));
                        self.fail(Invariant::NoRetryAfterCommit, id, at_opt, detail);
                    }
                }
                if let Some(until) = req.wait_until.take()
                    && at < until
                {
                    let detail = format!(
                        "attempt {attempt} starts {} before the wait before it is over",
                        secs(until - at)
                    );
                    self.fail(Invariant::EventsConsistent, id, at_opt, detail);
                }
                req.open_attempt = Some((*attempt, at, deployment_id.clone()));
                req.last_chunk = None;
            }
            EventKind::AttemptEnd {
                attempt,
                start,
                deployment_id,
                ..
            } => {
                match req.open_attempt.take() {
                    Some((open, open_start, _)) if open == *attempt && open_start == *start => {}
                    other => {
                        let detail = format!(
                            "attempt_end of attempt {attempt}, but the open attempt is {:?}",
                            other.map(|(n, _, d)| (n, d))
                        );
                        self.fail(Invariant::EventsConsistent, id, at_opt, detail);
                    }
                }
                let took = at.saturating_duration_since(*start);
                let limit = bounds
                    .deployments
                    .get(deployment_id)
                    .and_then(|d| d.timeout);
                if let Some(limit) = limit
                    && took > limit + TIMER_SLACK
                    && req.over_timeout.is_none()
                {
                    req.over_timeout = Some((*attempt, took, limit));
                }
                if let (Some(last), Some(stall)) = (req.last_chunk, bounds.stall_timeout)
                    && at.saturating_duration_since(last) > stall + TIMER_SLACK
                {
                    let detail = format!(
                        "attempt {attempt} on {deployment_id} ends {} after its last chunk: \
                         the stall timeout is {}",
                        secs(at - last),
                        secs(stall)
                    );
                    self.fail(Invariant::NoWaitPastDeadline, id, at_opt, detail);
                }
                req.last_chunk = None;
            }
            EventKind::StreamChunk { .. } => {
                let Some((attempt, start, deployment)) = req.open_attempt.clone() else {
                    let detail = "stream_chunk outside any attempt".to_string();
                    self.fail(Invariant::EventsConsistent, id, at_opt, detail);
                    return false;
                };
                match req.last_chunk {
                    None => {
                        let first_token = bounds
                            .deployments
                            .get(&deployment)
                            .and_then(|d| d.stream_timeout);
                        if let Some(limit) = first_token {
                            let slack = bounds.stall_timeout.unwrap_or_default();
                            let took = at.saturating_duration_since(start);
                            if took > limit + slack + TIMER_SLACK {
                                let detail = format!(
                                    "attempt {attempt} on {deployment}: first content after {}, \
                                     stream_timeout {} (+ stall slack {})",
                                    secs(took),
                                    secs(limit),
                                    secs(slack)
                                );
                                self.fail(Invariant::NoWaitPastDeadline, id, at_opt, detail);
                            }
                        }
                    }
                    Some(last) => {
                        if let Some(stall) = bounds.stall_timeout
                            && at.saturating_duration_since(last) > stall + TIMER_SLACK
                        {
                            let detail = format!(
                                "attempt {attempt} on {deployment}: {} between chunks, stall \
                                 timeout {}",
                                secs(at - last),
                                secs(stall)
                            );
                            self.fail(Invariant::NoWaitPastDeadline, id, at_opt, detail);
                        }
                    }
                }
                req.last_chunk = Some(at);
                req.content = true;
            }
            EventKind::Wait { duration, reason } => {
                let ok = match reason {
                    WaitReason::RetryAfter => {
                        !duration.is_zero() && *duration <= bounds.retry_after_cap
                    }
                    WaitReason::Backoff => *duration < bounds.backoff_cap,
                };
                if !ok {
                    let cap = match reason {
                        WaitReason::RetryAfter => {
                            format!("(0, {}]", secs(bounds.retry_after_cap))
                        }
                        WaitReason::Backoff => format!("below {}", secs(bounds.backoff_cap)),
                    };
                    let detail = format!(
                        "a {} wait of {}: it must be {cap}",
                        reason.as_str(),
                        secs(*duration)
                    );
                    self.fail(Invariant::NoWaitPastDeadline, id, at_opt, detail);
                }
                req.wait_until = Some(at + *duration);
            }
            EventKind::Retry {
                retry,
                budget,
                model_group,
                ..
            } => {
                req.retries += 1;
                if req.content {
                    let detail = after_commit(&format!("retry {retry} in {model_group}"));
                    self.fail(Invariant::NoRetryAfterCommit, id, at_opt, detail);
                }
                if retry > budget || *budget > bounds.max_retry_budget {
                    let detail = format!(
                        "retry {retry} of budget {budget} in {model_group} (the largest budget \
                         the settings give is {})",
                        bounds.max_retry_budget
                    );
                    self.fail(Invariant::AttemptBound, id, at_opt, detail);
                }
            }
            EventKind::GiveUp { reason, .. } => {
                if req.content
                    && !matches!(
                        reason,
                        GiveUpReason::StreamContentDelivered
                            | GiveUpReason::NoContinuationDeployment
                    )
                {
                    let detail = after_commit(&format!("give_up {}", reason.as_str()));
                    self.fail(Invariant::NoRetryAfterCommit, id, at_opt, detail);
                }
            }
            EventKind::Fallback {
                source,
                target,
                depth,
                ..
            } => {
                req.fallbacks += 1;
                if req.content {
                    let detail = after_commit(&format!("fallback {source} -> {target}"));
                    self.fail(Invariant::NoRetryAfterCommit, id, at_opt, detail);
                }
                if *depth > bounds.max_fallback_depth || req.fallbacks > bounds.max_fallback_hops {
                    let detail = format!(
                        "fallback hop {} ({source} -> {target}) at depth {depth}: max_fallbacks \
                         is {}, and there are {} other group(s)",
                        req.fallbacks, bounds.max_fallback_depth, bounds.max_fallback_hops
                    );
                    self.fail(Invariant::AttemptBound, id, at_opt, detail);
                }
            }
            EventKind::OrderFallback { .. } | EventKind::WeightedFailover { .. } => {
                if req.content {
                    let detail = after_commit(name);
                    self.fail(Invariant::NoRetryAfterCommit, id, at_opt, detail);
                }
            }
            EventKind::StreamBreak {
                after_content,
                deployment_id,
                ..
            } => {
                if req.content && !after_content {
                    let detail = format!(
                        "stream_break on {deployment_id} says after_content: false, but content \
                         reached the caller"
                    );
                    self.fail(Invariant::NoRetryAfterCommit, id, at_opt, detail);
                }
                if bounds.commits_at_content && *after_content && !req.content {
                    let detail = format!(
                        "stream_break on {deployment_id} says after_content: true, but no \
                         content reached the caller (a retry was still allowed)"
                    );
                    self.fail(Invariant::EventsConsistent, id, at_opt, detail);
                }
            }
            EventKind::StreamContinued { to_deployment, .. } => {
                if !req.content {
                    let detail = "stream_continued before any content".to_string();
                    self.fail(Invariant::EventsConsistent, id, at_opt, detail);
                }
                if !bounds.continuation || req.continued {
                    let detail = format!(
                        "stream_continued on {to_deployment}: {}",
                        if req.continued {
                            "a second continuation"
                        } else {
                            "continuation is off in the settings"
                        }
                    );
                    self.fail(Invariant::NoRetryAfterCommit, id, at_opt, detail);
                }
                req.continued = true;
                req.continuation_pending = Some(to_deployment.clone());
            }
            EventKind::RequestEnd {
                attempts,
                retries,
                fallbacks,
                stream,
                ..
            } => {
                if let Some((open, _, _)) = &req.open_attempt {
                    let detail = format!("request_end while attempt {open} is open");
                    self.fail(Invariant::EventsConsistent, id, at_opt, detail);
                }
                let seen = (req.attempts, req.retries, req.fallbacks);
                if (*attempts, *retries, *fallbacks) != seen {
                    let detail = format!(
                        "request_end counts {attempts} attempt(s), {retries} retry(ies), \
                         {fallbacks} fallback(s); the events showed {}, {}, {}",
                        seen.0, seen.1, seen.2
                    );
                    self.fail(Invariant::EventsConsistent, id, at_opt, detail);
                }
                if *attempts > bounds.max_attempts {
                    let detail = format!(
                        "{attempts} attempts: the settings allow at most {}",
                        bounds.max_attempts
                    );
                    self.fail(Invariant::AttemptBound, id, at_opt, detail);
                }
                if let Some((attempt, took, limit)) = req.over_timeout
                    && stream.is_none()
                {
                    let detail = format!(
                        "attempt {attempt} (not streamed) took {}: its timeout is {}",
                        secs(took),
                        secs(limit)
                    );
                    self.fail(Invariant::NoWaitPastDeadline, id, at_opt, detail);
                }
                return true;
            }
            EventKind::AllCooled { .. }
            | EventKind::CooldownSet { .. }
            | EventKind::CooldownEnd { .. }
            | EventKind::HalfOpen { .. }
            | EventKind::Recovered { .. }
            | EventKind::ProbeOk { .. }
            | EventKind::ProbeFailed { .. } => {}
        }
        false
    }

    fn finish(&mut self, bounds: &Bounds, summary: Option<&Summary>) {
        let end = self.state.last_request_end.unwrap_or(self.start);
        // A deadline at the end instant itself may not have been swept yet: clipped.
        self.check_cooldowns_ended(bounds, end, None);
        if self.state.ended_count != bounds.arrivals {
            let missing = (0..bounds.arrivals).find(|&id| !self.has_ended(id));
            let detail = format!(
                "{} arrivals, {} request_end(s){}",
                bounds.arrivals,
                self.state.ended_count,
                missing.map_or(String::new(), |m| format!("; request {m} never ended"))
            );
            self.fail(Invariant::EndsOnce, missing, None, detail);
        }
        if let Some(s) = summary
            && (s.ok + s.failed != bounds.arrivals || s.requests != bounds.arrivals)
        {
            let detail = format!(
                "summary: requests {}, ok {} + failed {} = {}; arrivals {}",
                s.requests,
                s.ok,
                s.failed,
                s.ok + s.failed,
                bounds.arrivals
            );
            self.fail(Invariant::EndsOnce, None, None, detail);
        }
    }
}

fn deployment_at(bounds: &Bounds, slot: usize) -> &str {
    bounds
        .deployments
        .iter()
        .find(|(_, d)| d.index == slot)
        .map_or("?", |(id, _)| id)
}

#[cfg(test)]
mod tests;
