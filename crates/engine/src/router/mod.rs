//! The router: the loop that ties picks, attempts, retries, cooldowns and fallbacks together.
//!
//! Seed (LiteLLM): *"A retry tries the same model group again, and the new pick can land on a
//! different deployment. A fallback moves the request to a different model group. A cooldown
//! takes one deployment out of every pick, for every request, for a few seconds."*
//!
//! The shape of one request, one file each:
//! - **fallback walk** (`walk.rs`, [`Router::completion`]): serve the group asked for; on
//!   failure, unless the request set `disable_fallbacks`, walk the fallback targets depth
//!   first, skipping groups already tried, until one succeeds or `max_fallbacks` levels are
//!   spent. The caller gets the original failure when every hop fails.
//! - **group visit** (`visit.rs`): the retry loop on the lowest healthy `order` level, then the
//!   next order levels (each its own retry loop), then weighted failover; failures with a
//!   dedicated fallback list (context window, content policy) skip both.
//! - **retry loop** (`retry_loop.rs`): pick, call, let the failure handler cool the deployment,
//!   ask the retry policy (and the retry budget) whether to go on and the backoff how long to
//!   wait, pick again.
//! - **attempt** (`attempt.rs`): one provider call with its deadline, events and record.
//! - **stream** (`stream.rs`): reading a streamed answer, its deadlines, its continuation.
//! - **health** (`health.rs`): cooling, restoring, the cooldown sweeper and health probes.
//! - **candidate walk** (`candidates.rs`): `profile: multigrid`'s walk (and `profile:
//!   contract`'s, with its routes filtered and ranked through the `RouteAdmission` seam), in
//!   place of the fallback walk and group visits when the profile's fallback policy asks for it.
//!
//! The decisions are policies injected on the [`RouterBuilder`] (strategy, classifier, retry
//! policy and budget, backoff, cooldown trigger, recovery); this module only orders them.
//!
//! Memory per request in flight: a caller may hold millions of these futures at once (the
//! simulator does), so what lives across an `.await` is kept small. The common path (walk,
//! group visit, retry loop, attempt, provider call) is one state machine, which a caller
//! holding many of them boxes once (the simulator boxes each request's task); the rarely taken
//! branches (a fallback walk, a mid-stream continuation, reading a stream, a call with a
//! deadline) are boxed where they start, so a request pays for them only when it takes them;
//! picks, retry decisions and an attempt's bookkeeping happen in plain functions or blocks
//! that end before the next `.await`, and a step does not keep what it can look up again
//! after one (each nested future would hold its own copy). The request's steps are written
//! as functions returning `async move` blocks rather than `async fn`: an `async fn` keeps
//! each argument twice in its state (once as passed, once moved into the body).

// Deliberate: see "Memory per request in flight" above.
#![allow(clippy::manual_async_fn)]

mod alternatives;
mod attempt;
mod builder;
mod candidates;
mod core;
mod group;
mod health;
mod hedge;
mod retry_loop;
mod run;
mod stream;
mod stream_cooldown;
mod visit;
mod walk;

pub use builder::{DEFAULT_EPOCH_UNIX_MS, RouterBuilder};
pub use core::Router;
pub use health::PROBE_REQUEST_ID_BASE;
