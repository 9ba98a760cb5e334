//! `profile: multigrid`: Multigrid's failover and retries (`multigrid-failover-and-retries.md`)
//! as a bundle of policy implementations (see [`crate::profile`]); the walk itself is the
//! router's (`router/candidates.rs`), chosen by the profile table's `walk`.
//!
//! - **Two loops, not one** (seed: *"A request walks a list of candidate routes, and each
//!   candidate gets several attempts of its own before the walk moves on"*): the candidates
//!   are every deployment of the group asked for, in `order` then `model_list` order, then
//!   each model of the request's `models: [...]` chain and its deployments (*"Every provider
//!   for the first is tried before the second model is considered at all"*). The router's
//!   LiteLLM fallback lists are not walked.
//! - **Attempts per candidate** ([`MultigridRetryPolicy`]): *"Three attempts per candidate by
//!   default, the first included"* — `router_settings.attempts_per_candidate` (default 3; a
//!   request's `num_retries: n` means `n + 1`). The seed's "What counts as transient" section
//!   is empty: routersim retries on the same candidate the failures a caller's own retry could
//!   help ([`RouterFailure::is_retryable`](crate::request::RouterFailure::is_retryable): 408, 409, 429, 5xx, timeouts, connection errors,
//!   malformed responses); any other failure moves the walk on at once (*"the outer means
//!   'this provider is no use to us'"*).
//! - **Usable route** (seed: *"Set provider.allow_fallbacks: false to stop after the first
//!   usable route"*): a candidate deployment the router may call now — not cooling (nor
//!   holding its half-open trial), carrying the request's tags, within its pre-call limits
//!   (the filters of a LiteLLM pick). Unusable candidates are skipped by the walk;
//!   `allow_fallbacks: false` (per request, or `router_settings.allow_fallbacks`) ends the
//!   walk after the first usable one has had its attempts.
//! - **Backoff** ([`MultigridBackoff`]): *"Full jitter. The delay is a uniform pick from zero
//!   up to a capped exponential, starting at 250 ms and ceilinged at 4 s"*; *"The provider's
//!   Retry-After wins over our backoff, in either legal form — seconds or an HTTP date"*.
//! - **Deadline**: *"The whole walk has a deadline: 60 seconds non-streaming, 300 seconds
//!   streaming. If a wait would consume what is left of it, we fail over now instead."* —
//!   `router_settings.request_deadline` / `stream_deadline`, from the request's arrival; no
//!   attempt starts at or past it, and a wait that would reach it ends the candidate's
//!   attempts (`give_up` with `deadline_exhausted`); a call still running at the deadline is
//!   cut there (a `timeout`), so a retried request never takes longer than the deadline. A
//!   stream's body, once the call has returned it, is bounded by the stream timeouts only.
//! - Cooldowns are LiteLLM's documented ones; streams follow `stream_recovery: multigrid`,
//!   which the profile presets.

mod backoff;
mod retry;

pub use backoff::{BACKOFF_CAP, BACKOFF_START, MultigridBackoff};
pub use retry::MultigridRetryPolicy;
