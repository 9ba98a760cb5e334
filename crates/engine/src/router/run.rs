//! What one request keeps while it is in flight: its records and counters ([`RequestRun`]),
//! what the caller's stream has received ([`StreamProgress`]), a failure whose cooldown lands
//! later ([`DeferredFailure`]), and how a step failed ([`Failed`], [`NoCandidate`]). Plain data: every step of
//! the router reads and writes it, none owns it.

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use crate::cooldown::FailureOrigin;
use crate::event::GiveUpReason;
use crate::failure::ProviderFailure;
use crate::request::{AttemptRecord, RouterFailure};
use crate::small::Tried;
use crate::stream::BreakKind;

/// Per-request bookkeeping.
pub(super) struct RequestRun {
    pub(super) attempts: Vec<AttemptRecord>,
    pub(super) tried_groups: Tried,
    pub(super) retries: u32,
    pub(super) fallbacks: u32,
    /// Hops as LiteLLM's `x-litellm-attempted-fallbacks` counts them (see [`RequestRun::hop`]).
    pub(super) attempted_fallbacks: u32,
    /// Retries since the last hop (LiteLLM's `x-litellm-attempted-retries`).
    pub(super) scope_retries: u32,
    /// Order and failover hops nested in the visit of the group asked for (each later hop
    /// of the request is nested inside them).
    pub(super) outer_nesting: u32,
    /// Deployments a failover scope's retry loop may not pick (`None` outside one; boxed:
    /// only a request in a failover scope pays for it).
    pub(super) failover_excluded: Option<Box<Tried>>,
    pub(super) pending_wait: Duration,
    /// `profile: multigrid`: the request's end-to-end deadline, which cuts an attempt still
    /// running there (`None` under every other walk).
    pub(super) walk_deadline: Option<Instant>,
    /// `profile: contract`: what the request's answers cost so far (rejected ones too).
    pub(super) spent_usd: f64,
    pub(super) last_group: Option<Arc<str>>,
    /// The deployment of the last attempt (its id is the request's final deployment).
    pub(super) last_deployment_index: Option<usize>,
    pub(super) start: Instant,
    pub(super) stream: StreamProgress,
    /// A failure whose cooldown is written later (see `StreamRules::cooldown_timing`).
    pub(super) deferred_failure: Option<Box<DeferredFailure>>,
    /// Provider calls started and cancelled (a hedge race's loser) or still running beside
    /// this run (a hedge's scratch run counts its first attempt): they have numbers but no
    /// record, so the next attempt's number counts them.
    pub(super) uncounted_attempts: u32,
}

impl RequestRun {
    /// The number of the next attempt (from 1, across the request).
    pub(super) fn next_attempt(&self) -> u32 {
        self.attempts.len() as u32 + self.uncounted_attempts + 1
    }

    /// A request's run, begun at `start`: nothing attempted yet.
    pub(super) fn new(start: Instant) -> Self {
        RequestRun {
            attempts: Vec::new(),
            tried_groups: Tried::new(),
            retries: 0,
            fallbacks: 0,
            attempted_fallbacks: 0,
            scope_retries: 0,
            outer_nesting: 0,
            failover_excluded: None,
            pending_wait: Duration::ZERO,
            walk_deadline: None,
            spent_usd: 0.0,
            last_group: None,
            last_deployment_index: None,
            start,
            stream: StreamProgress::default(),
            deferred_failure: None,
            uncounted_attempts: 0,
        }
    }

    /// A run for a hedge racing this run's next attempt: same start and deadline, no records,
    /// numbered after that attempt.
    pub(super) fn scratch(&self) -> Self {
        RequestRun {
            walk_deadline: self.walk_deadline,
            spent_usd: self.spent_usd,
            uncounted_attempts: self.next_attempt(),
            ..RequestRun::new(self.start)
        }
    }

    /// A fallback hop to `depth` (1 = from the group asked for): a new retry scope begins.
    /// LiteLLM nests a hop inside the level that failed, and its
    /// `x-litellm-attempted-fallbacks` header counts the hops of the outermost level only:
    /// those from the group asked for, unless an order or failover hop nested its visit.
    pub(super) fn hop(&mut self, depth: u32) {
        if depth + self.outer_nesting <= 1 {
            self.attempted_fallbacks += 1;
        }
        self.scope_retries = 0;
    }

    /// An order fallback or failover hop inside the visit of a group at `depth`: a nested
    /// level of its own.
    pub(super) fn nested_hop(&mut self, depth: u32) {
        self.hop(depth + 1);
        if depth == 0 {
            self.outer_nesting += 1;
        }
    }
}

/// How a group visit, level or single attempt failed.
#[derive(Clone, Debug)]
pub(super) struct Failed {
    pub(super) failure: ProviderFailure,
    /// The deployment whose attempt failed; `None` when the pick itself failed (every
    /// deployment cooling, over its limits, or no tag match).
    pub(super) deployment: Option<usize>,
    /// Time until the soonest cooldown ends, for `router_rate_limit`.
    pub(super) retry_after: Option<Duration>,
    /// A stream broke after the point of no return (content, or Multigrid's first byte):
    /// nothing may retry or fall back; only a mid-stream continuation can go on.
    pub(super) committed: bool,
    /// A stream broke after its first chunk under rules where that ends the group's retries
    /// (`StreamRules::break_ends_retries`): only the fallbacks may go on.
    pub(super) retries_closed: bool,
    /// An ambiguous attempt under `replay: never`: nothing may send the operation again (no
    /// retry, no fallback); the request fails with it.
    pub(super) no_replay: bool,
    /// The candidate walk stops after this failure (its deadline is reached, the profile's
    /// attempt cap is, a permanent failure, or a stream past its first byte).
    pub(super) ends_walk: bool,
}

impl Failed {
    /// Why a failure ends the group's retries whatever the retry policy says: an ambiguous
    /// attempt that may not be replayed, content reached the caller, or (LiteLLM 1.110.2) the
    /// first chunk was read inside the attempt.
    pub(super) fn forced_give_up_reason(&self) -> Option<GiveUpReason> {
        if self.no_replay {
            Some(GiveUpReason::AmbiguousNotReplayed)
        } else if self.committed {
            Some(GiveUpReason::StreamContentDelivered)
        } else if self.retries_closed {
            Some(GiveUpReason::StreamFirstChunkRead)
        } else {
            None
        }
    }

    pub(super) fn into_router_failure(self) -> RouterFailure {
        RouterFailure {
            kind: self.failure.kind,
            status: self.failure.effective_status(),
            retry_after: self.retry_after,
        }
    }
}

/// What the caller's stream has received so far, across attempts.
#[derive(Debug, Default)]
pub(super) struct StreamProgress {
    /// Some frame (even role-only) reached the caller: Multigrid's first byte.
    pub(super) first_byte: bool,
    /// Content tokens delivered.
    pub(super) delivered: u32,
    /// Content that forbids a continuation (tool calls, thinking, audio, images) was sent.
    pub(super) non_text_content: bool,
    /// When the first content token reached the caller.
    pub(super) first_token_at: Option<Instant>,
    /// When the last token reached the caller.
    pub(super) last_token_at: Option<Instant>,
    /// How the last stream broke, if one did.
    pub(super) last_break: Option<BreakKind>,
    /// A continuation carried the stream on.
    pub(super) continued: bool,
}

impl StreamProgress {
    pub(super) fn any_content(&self) -> bool {
        self.delivered > 0 || self.non_text_content
    }
}

/// A failure the failure handler has not heard of yet.
#[derive(Debug)]
pub(super) struct DeferredFailure {
    pub(super) deployment: usize,
    pub(super) group_size: usize,
    pub(super) failure: ProviderFailure,
    pub(super) origin: FailureOrigin,
    pub(super) retry_after: Option<Duration>,
    pub(super) now: Instant,
    pub(super) request_id: Option<u64>,
}

/// Why a group level had no deployment to pick.
pub(super) enum NoCandidate {
    /// Every deployment is cooling (or holding its half-open trial).
    AllCooling { retry_after: Duration },
    /// No deployment carries the request's tags (nor `default`).
    NoTagMatch,
    /// Pre-call checks: every deployment is over its RPM/TPM this minute.
    OverLimits { retry_after: Duration },
    /// Pre-call checks: the prompt overflows every deployment's `max_input_tokens`.
    ContextTooLarge,
}
