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
//!   retries and fallback hops its events showed; a cooldown's `until` is `at + duration` over
//!   no live cooldown, and over a live one the later of the old deadline and `at + duration`
//!   (under `litellm-1.110` the earlier of the first write's deadline and `at + duration`:
//!   its store never extends a live cooldown, [`Bounds::cooldown_rewrite`]); `cooldown_end`
//!   follows a cooldown.
//! - [`Invariant::AttemptBound`]: attempts per request ≤ [`Bounds::max_attempts`] (LiteLLM's
//!   walk: per group a retry loop per `order` level plus the group's size; the candidate
//!   walks of `multigrid` and `contract`: each deployment once with its own retries, capped by
//!   the contract's `max_attempts`; plus the continuations the profile allows), every
//!   `retry` within its `budget` and every budget ≤ the largest retry count the config and the
//!   traffic can produce, every fallback hop within `max_fallbacks` levels and the group count.
//! - [`Invariant::NoRetryAfterCommit`]: once a stream delivered content to the caller (a
//!   `stream_chunk` event), no `retry`, `fallback`, `order_fallback` or `weighted_failover`
//!   follows, a break is reported `after_content`, a `give_up` says
//!   `stream_content_delivered`, and the only attempt allowed after it is the one a
//!   `stream_continued` announces (only with `enable_mid_stream_fallback_continuation` under
//!   `stream_recovery: litellm`, on the deployment it names, and once — or, where a broken
//!   continuation is continued again, at most [`Bounds::max_continuations`] times). Multigrid commits
//!   earlier (at the first byte, which events do not show), so this is a weaker check there.
//!   Under `stream_recovery: litellm` a break is not reported `after_content` without content
//!   ([`Invariant::EventsConsistent`]: the request could still have been retried).
//! - [`Invariant::CooldownEnds`] (per replica in a fleet: each router keeps its own
//!   cooldowns): a cooldown set until `U` is ended (`cooldown_end` at exactly
//!   `U`) or cleared (`recovered`) before any event later than `U` + [`TIMER_SLACK`]; at the
//!   run's end (its last `request_end`) every cooldown still open has `U` + [`TIMER_SLACK`] ≥
//!   the end (the run end clips it).
//! - [`Invariant::NoWaitPastDeadline`]: "deadline" is what the engine has today: a
//!   Retry-After wait is in (0, 60 s] (LiteLLM's documented rule; up to 60.75 s under
//!   `litellm-1.110`, whose jitter is added to it; [0, the walk's deadline] under the Multigrid
//!   wait, where the provider's Retry-After wins); a backoff wait is below `max(8 s, retry_after)` + 750 ms
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
//! # Layout
//!
//! `invariant` names the invariants and a violation; `bounds` derives what the settings allow
//! from a scenario; `state` is what the checker keeps; `verdict` reports violations and sends
//! each event to its checks. A deployment's cooldown events go to `cooldowns`; a request's
//! events to `request`, whose [`EventVisitor`](routersim_engine::event::EventVisitor) lists,
//! per kind of event, the checks it meets, each a small method in its invariant's family:
//! `consistent`, `attempt_bound`, `commit`, `timeouts`, `deadline`. `checker` is the event
//! sink the run sees. Each module imports only modules listed before it (the families import
//! `request` for the type they extend); this file declares them and re-exports every public
//! item.
//!
//! # Rules that differ by profile
//!
//! A check never asks which profile the run has: [`Bounds::derive`] reads the settings and the
//! profile once and says what they allow ([`Bounds::commits_at_content`],
//! [`Bounds::continuation`], [`Bounds::max_continuations`], [`Bounds::retry_after_cap`],
//! [`Bounds::walk_deadline`], [`Bounds::cooldown_rewrite`]), and each rule reads that. A profile with its own rule (chained
//! stream continuations under `profile: litellm-1.110`, a Retry-After of 0 under Multigrid) is
//! a field of [`Bounds`] and a change to the one method that applies the rule.

mod attempt_bound;
mod bounds;
mod checker;
mod commit;
mod consistent;
mod cooldowns;
mod deadline;
mod invariant;
mod request;
mod state;
mod timeouts;
mod verdict;

pub use self::bounds::{Bounds, CooldownRewrite, DeploymentLimits, WalkDeadline};
pub use self::checker::{Checker, ReplicaChecker};
pub use self::invariant::{Invariant, TIMER_SLACK, Violation};

#[cfg(test)]
mod tests;
