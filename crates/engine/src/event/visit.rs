//! Reading events by family: [`EventVisitor`] has one method per kind of event, grouped by
//! family (request lifecycle, attempts, retries and fallbacks, cooldowns and health, streams,
//! contracts, alternatives), each a no-op by default;
//! [`EventKind::visit`](crate::event::EventKind::visit) (`dispatch.rs`) calls the one that
//! fits. A consumer implements the methods of the events it reads, as small methods, instead
//! of one `match` over every kind (and a new kind of event changes no consumer that ignores
//! it).

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use super::contract::{FilterReason, ValidationReason};
use super::reasons::{
    CooldownReason, CooldownSource, FallbackLevel, GiveUpReason, RecoveredVia, WaitReason,
};
use crate::config::Replay;
use crate::failure::FailureKind;
use crate::stream::{BreakKind, StreamStats};

/// A consumer of routing events, one method per kind (see the module docs). The event's
/// fields come as arguments (`'e`: borrowed from the event, so the output may borrow too);
/// the event's time and request id are the caller's to keep beside the visitor.
pub trait EventVisitor<'e> {
    /// What a visit returns; an event the visitor does not read returns the default.
    type Output: Default;

    // Request lifecycle.

    /// `client_try`: the request is a send by a client that retries failures itself (see
    /// [`ClientTry`](crate::request::ClientTry)); the request's first event.
    fn client_try(
        &mut self,
        _try_number: u32,
        _retries: u32,
        _provider_calls_before: u32,
    ) -> Self::Output {
        Self::Output::default()
    }

    /// `request_end`: the request is done.
    #[allow(
        clippy::too_many_arguments,
        reason = "the event's fields, as the event has them"
    )]
    fn request_end(
        &mut self,
        _model: &'e Arc<str>,
        _final_model_group: &'e Arc<str>,
        _final_deployment_id: Option<&'e Arc<str>>,
        _failure: Option<FailureKind>,
        _status: Option<u16>,
        _attempts: u32,
        _retries: u32,
        _fallbacks: u32,
        _attempted_fallbacks: u32,
        _start: Instant,
        _stream: Option<StreamStats>,
    ) -> Self::Output {
        Self::Output::default()
    }

    // Attempts.

    /// `attempt_start`: a provider call starts.
    fn attempt_start(
        &mut self,
        _attempt: u32,
        _model_group: &'e Arc<str>,
        _deployment_id: &'e Arc<str>,
        _fallback_depth: u32,
        _max_tokens: Option<u32>,
    ) -> Self::Output {
        Self::Output::default()
    }

    /// `attempt_end`: a provider call ended.
    #[allow(
        clippy::too_many_arguments,
        reason = "the event's fields, as the event has them"
    )]
    fn attempt_end(
        &mut self,
        _attempt: u32,
        _start: Instant,
        _model_group: &'e Arc<str>,
        _deployment_id: &'e Arc<str>,
        _failure: Option<FailureKind>,
        _status: Option<u16>,
        _retry_after: Option<Duration>,
        _wait: Duration,
        _fallback_depth: u32,
    ) -> Self::Output {
        Self::Output::default()
    }

    /// `response_cost`: a successful attempt on a deployment with prices (`input_cost_per_token`,
    /// `output_cost_per_token`; one not set counts 0): what the accepted response cost.
    fn response_cost(
        &mut self,
        _model_group: &'e Arc<str>,
        _deployment_id: &'e Arc<str>,
        _input_tokens: u32,
        _output_tokens: u32,
        _usd: f64,
    ) -> Self::Output {
        Self::Output::default()
    }

    /// `ambiguous_outcome`: an attempt's connection was lost after the request was sent: the
    /// provider may have executed it (the contracts seed's ambiguous execution; see
    /// [`crate::replay`]).
    fn ambiguous_outcome(
        &mut self,
        _model_group: &'e Arc<str>,
        _deployment_id: &'e Arc<str>,
        _operation_id: u64,
        _replay: Replay,
        _executed: Option<bool>,
    ) -> Self::Output {
        Self::Output::default()
    }

    // Retries and fallbacks.

    /// `wait`: the router waits before the next attempt.
    fn wait(&mut self, _duration: Duration, _reason: WaitReason) -> Self::Output {
        Self::Output::default()
    }

    /// `retry`: the retry loop goes round again in the same group.
    fn retry(
        &mut self,
        _model_group: &'e Arc<str>,
        _failure: FailureKind,
        _retry: u32,
        _budget: u32,
    ) -> Self::Output {
        Self::Output::default()
    }

    /// `give_up`: the retry loop stopped in this group.
    fn give_up(
        &mut self,
        _model_group: &'e Arc<str>,
        _failure: FailureKind,
        _reason: GiveUpReason,
    ) -> Self::Output {
        Self::Output::default()
    }

    /// `order_fallback`: the next `order` level of the same group is tried.
    fn order_fallback(
        &mut self,
        _model_group: &'e Arc<str>,
        _from_order: Option<u32>,
        _to_order: Option<u32>,
    ) -> Self::Output {
        Self::Output::default()
    }

    /// `weighted_failover`: the failed deployment is excluded and the pick repeats.
    fn weighted_failover(
        &mut self,
        _model_group: &'e Arc<str>,
        _excluded: &'e Arc<str>,
    ) -> Self::Output {
        Self::Output::default()
    }

    /// `fallback`: a fallback hop to another model group.
    fn fallback(
        &mut self,
        _source: &'e Arc<str>,
        _target: &'e Arc<str>,
        _order: u32,
        _depth: u32,
        _level: FallbackLevel,
        _failure: FailureKind,
    ) -> Self::Output {
        Self::Output::default()
    }

    // Cooldowns and health.

    /// `cooldown_set`: a deployment is cooled down (or its cooldown extended).
    #[allow(
        clippy::too_many_arguments,
        reason = "the event's fields, as the event has them"
    )]
    fn cooldown_set(
        &mut self,
        _model_group: &'e Arc<str>,
        _deployment_id: &'e Arc<str>,
        _reason: CooldownReason,
        _failure: FailureKind,
        _duration: Duration,
        _source: CooldownSource,
        _until: Instant,
    ) -> Self::Output {
        Self::Output::default()
    }

    /// `cooldown_end`: a cooldown expired; the deployment is eligible again.
    fn cooldown_end(
        &mut self,
        _model_group: &'e Arc<str>,
        _deployment_id: &'e Arc<str>,
    ) -> Self::Output {
        Self::Output::default()
    }

    /// `all_cooled`: every candidate of a group is cooling: the pick fails with
    /// `router_rate_limit`.
    fn all_cooled(&mut self, _model_group: &'e Arc<str>, _retry_after: Duration) -> Self::Output {
        Self::Output::default()
    }

    /// `half_open`: a cooldown ended under half-open recovery: the deployment admits one trial
    /// request.
    fn half_open(
        &mut self,
        _model_group: &'e Arc<str>,
        _deployment_id: &'e Arc<str>,
    ) -> Self::Output {
        Self::Output::default()
    }

    /// `recovered`: a deployment is healthy again (its trial or a probe succeeded): cooldown,
    /// half-open state and failure counts are cleared.
    fn recovered(
        &mut self,
        _model_group: &'e Arc<str>,
        _deployment_id: &'e Arc<str>,
        _via: RecoveredVia,
    ) -> Self::Output {
        Self::Output::default()
    }

    /// `probe_ok`: a background health probe succeeded.
    fn probe_ok(
        &mut self,
        _model_group: &'e Arc<str>,
        _deployment_id: &'e Arc<str>,
    ) -> Self::Output {
        Self::Output::default()
    }

    /// `probe_failed`: a background health probe failed.
    fn probe_failed(
        &mut self,
        _model_group: &'e Arc<str>,
        _deployment_id: &'e Arc<str>,
        _failure: FailureKind,
    ) -> Self::Output {
        Self::Output::default()
    }

    // Streams.

    /// `stream_chunk`: content reached the caller: `tokens` tokens, the first `gap_before` after
    /// the previous token (`None` for the stream's first chunk), the rest `inner_gap` apart.
    fn stream_chunk(
        &mut self,
        _tokens: u32,
        _gap_before: Option<Duration>,
        _inner_gap: Duration,
    ) -> Self::Output {
        Self::Output::default()
    }

    /// `stream_break`: a stream broke (before or after content reached the caller).
    fn stream_break(
        &mut self,
        _model_group: &'e Arc<str>,
        _deployment_id: &'e Arc<str>,
        _failure: FailureKind,
        _how: BreakKind,
        _tokens_so_far: u32,
        _after_content: bool,
    ) -> Self::Output {
        Self::Output::default()
    }

    /// `stream_continued`: a broken stream continues on another deployment with the text so far as
    /// a prefill.
    fn stream_continued(
        &mut self,
        _from_group: &'e Arc<str>,
        _from_deployment: &'e Arc<str>,
        _to_group: &'e Arc<str>,
        _to_deployment: &'e Arc<str>,
        _prefill_tokens: u32,
    ) -> Self::Output {
        Self::Output::default()
    }

    // Contracts.

    /// `route_filtered` (`profile: contract`): a route that cannot satisfy the request's contract
    /// was left out of the walk before ranking (it is never tried).
    fn route_filtered(
        &mut self,
        _model_group: &'e Arc<str>,
        _deployment_id: &'e Arc<str>,
        _reason: FilterReason,
    ) -> Self::Output {
        Self::Output::default()
    }

    /// `validation_rejected` (`profile: contract`): a successful (200) answer failed validation
    /// before acceptance.
    fn validation_rejected(
        &mut self,
        _model_group: &'e Arc<str>,
        _deployment_id: &'e Arc<str>,
        _attempt: u32,
        _reason: ValidationReason,
    ) -> Self::Output {
        Self::Output::default()
    }

    // Alternatives.

    /// `ejected`: outlier detection ejected a deployment: no pick lands on it until `until`.
    fn ejected(
        &mut self,
        _model_group: &'e Arc<str>,
        _deployment_id: &'e Arc<str>,
        _duration: Duration,
        _until: Instant,
        _ejections: u32,
        _consecutive_5xx: u32,
    ) -> Self::Output {
        Self::Output::default()
    }

    /// `unejected`: an ejection ended; the deployment is eligible again.
    fn unejected(
        &mut self,
        _model_group: &'e Arc<str>,
        _deployment_id: &'e Arc<str>,
    ) -> Self::Output {
        Self::Output::default()
    }

    /// `hedged`: the first attempt had not answered after `delay`: a second one started on `hedge`.
    fn hedged(
        &mut self,
        _model_group: &'e Arc<str>,
        _primary: &'e Arc<str>,
        _hedge: &'e Arc<str>,
        _delay: Duration,
        _extra_input_tokens: u32,
        _extra_cost_usd: f64,
    ) -> Self::Output {
        Self::Output::default()
    }

    /// `hedge_end`: a hedged request's race ended: `winner` answered first (or failed last) and the
    /// other call was cancelled.
    fn hedge_end(
        &mut self,
        _model_group: &'e Arc<str>,
        _winner: &'e Arc<str>,
        _hedge_won: bool,
    ) -> Self::Output {
        Self::Output::default()
    }
}
