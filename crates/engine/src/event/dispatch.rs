//! [`EventKind::visit`]: which [`EventVisitor`] method an event calls, family by family.

use super::alternative::AlternativeEvent;
use super::kind::{EventKind, RoutingEvent};
use super::visit::EventVisitor;

impl EventKind {
    /// Calls the `visitor` method for this kind of event, with its fields.
    #[inline]
    pub fn visit<'e, V: EventVisitor<'e>>(&'e self, visitor: &mut V) -> V::Output {
        match self {
            EventKind::ClientTry { .. }
            | EventKind::RequestEnd { .. }
            | EventKind::AttemptStart { .. }
            | EventKind::AttemptEnd { .. }
            | EventKind::ResponseCost { .. }
            | EventKind::AmbiguousOutcome { .. } => self.visit_request(visitor),
            EventKind::Wait { .. }
            | EventKind::Retry { .. }
            | EventKind::GiveUp { .. }
            | EventKind::OrderFallback { .. }
            | EventKind::WeightedFailover { .. }
            | EventKind::Fallback { .. } => self.visit_routing(visitor),
            EventKind::CooldownSet { .. }
            | EventKind::CooldownEnd { .. }
            | EventKind::AllCooled { .. }
            | EventKind::HalfOpen { .. }
            | EventKind::Recovered { .. }
            | EventKind::ProbeOk { .. }
            | EventKind::ProbeFailed { .. } => self.visit_health(visitor),
            EventKind::StreamChunk { .. }
            | EventKind::StreamBreak { .. }
            | EventKind::StreamContinued { .. }
            | EventKind::RouteFiltered { .. }
            | EventKind::ValidationRejected { .. } => self.visit_stream(visitor),
            EventKind::Alternative(event) => event.visit(visitor),
        }
    }

    /// A request's own events and its attempts.
    #[inline]
    fn visit_request<'e, V: EventVisitor<'e>>(&'e self, visitor: &mut V) -> V::Output {
        match self {
            EventKind::ClientTry {
                try_number,
                retries,
                provider_calls_before,
            } => visitor.client_try(*try_number, *retries, *provider_calls_before),
            EventKind::RequestEnd {
                model,
                final_model_group,
                final_deployment_id,
                failure,
                status,
                attempts,
                retries,
                fallbacks,
                attempted_fallbacks,
                start,
                stream,
            } => visitor.request_end(
                model,
                final_model_group,
                final_deployment_id.as_ref(),
                *failure,
                *status,
                *attempts,
                *retries,
                *fallbacks,
                *attempted_fallbacks,
                *start,
                *stream,
            ),
            EventKind::AttemptStart {
                attempt,
                model_group,
                deployment_id,
                fallback_depth,
                max_tokens,
            } => visitor.attempt_start(
                *attempt,
                model_group,
                deployment_id,
                *fallback_depth,
                *max_tokens,
            ),
            EventKind::AttemptEnd {
                attempt,
                start,
                model_group,
                deployment_id,
                failure,
                status,
                retry_after,
                wait,
                fallback_depth,
            } => visitor.attempt_end(
                *attempt,
                *start,
                model_group,
                deployment_id,
                *failure,
                *status,
                *retry_after,
                *wait,
                *fallback_depth,
            ),
            EventKind::ResponseCost {
                model_group,
                deployment_id,
                input_tokens,
                output_tokens,
                usd,
            } => visitor.response_cost(
                model_group,
                deployment_id,
                *input_tokens,
                *output_tokens,
                *usd,
            ),
            EventKind::AmbiguousOutcome {
                model_group,
                deployment_id,
                operation_id,
                replay,
                executed,
            } => visitor.ambiguous_outcome(
                model_group,
                deployment_id,
                *operation_id,
                *replay,
                *executed,
            ),
            _ => V::Output::default(),
        }
    }

    /// Retries and fallbacks.
    #[inline]
    fn visit_routing<'e, V: EventVisitor<'e>>(&'e self, visitor: &mut V) -> V::Output {
        match self {
            EventKind::Wait { duration, reason } => visitor.wait(*duration, *reason),
            EventKind::Retry {
                model_group,
                failure,
                retry,
                budget,
            } => visitor.retry(model_group, *failure, *retry, *budget),
            EventKind::GiveUp {
                model_group,
                failure,
                reason,
            } => visitor.give_up(model_group, *failure, *reason),
            EventKind::OrderFallback {
                model_group,
                from_order,
                to_order,
            } => visitor.order_fallback(model_group, *from_order, *to_order),
            EventKind::WeightedFailover {
                model_group,
                excluded,
            } => visitor.weighted_failover(model_group, excluded),
            EventKind::Fallback {
                source,
                target,
                order,
                depth,
                level,
                failure,
            } => visitor.fallback(source, target, *order, *depth, *level, *failure),
            _ => V::Output::default(),
        }
    }

    /// Cooldowns and health.
    #[inline]
    fn visit_health<'e, V: EventVisitor<'e>>(&'e self, visitor: &mut V) -> V::Output {
        match self {
            EventKind::CooldownSet {
                model_group,
                deployment_id,
                reason,
                failure,
                duration,
                source,
                until,
            } => visitor.cooldown_set(
                model_group,
                deployment_id,
                *reason,
                *failure,
                *duration,
                *source,
                *until,
            ),
            EventKind::CooldownEnd {
                model_group,
                deployment_id,
            } => visitor.cooldown_end(model_group, deployment_id),
            EventKind::AllCooled {
                model_group,
                retry_after,
            } => visitor.all_cooled(model_group, *retry_after),
            EventKind::HalfOpen {
                model_group,
                deployment_id,
            } => visitor.half_open(model_group, deployment_id),
            EventKind::Recovered {
                model_group,
                deployment_id,
                via,
            } => visitor.recovered(model_group, deployment_id, *via),
            EventKind::ProbeOk {
                model_group,
                deployment_id,
            } => visitor.probe_ok(model_group, deployment_id),
            EventKind::ProbeFailed {
                model_group,
                deployment_id,
                failure,
            } => visitor.probe_failed(model_group, deployment_id, *failure),
            _ => V::Output::default(),
        }
    }

    /// Streams and contracts.
    #[inline]
    fn visit_stream<'e, V: EventVisitor<'e>>(&'e self, visitor: &mut V) -> V::Output {
        match self {
            EventKind::StreamChunk {
                tokens,
                gap_before,
                inner_gap,
            } => visitor.stream_chunk(*tokens, *gap_before, *inner_gap),
            EventKind::StreamBreak {
                model_group,
                deployment_id,
                failure,
                how,
                tokens_so_far,
                after_content,
            } => visitor.stream_break(
                model_group,
                deployment_id,
                *failure,
                *how,
                *tokens_so_far,
                *after_content,
            ),
            EventKind::StreamContinued {
                from_group,
                from_deployment,
                to_group,
                to_deployment,
                prefill_tokens,
            } => visitor.stream_continued(
                from_group,
                from_deployment,
                to_group,
                to_deployment,
                *prefill_tokens,
            ),
            EventKind::RouteFiltered {
                model_group,
                deployment_id,
                reason,
            } => visitor.route_filtered(model_group, deployment_id, *reason),
            EventKind::ValidationRejected {
                model_group,
                deployment_id,
                attempt,
                reason,
            } => visitor.validation_rejected(model_group, deployment_id, *attempt, *reason),
            _ => V::Output::default(),
        }
    }
}

impl AlternativeEvent {
    /// Calls the `visitor` method for this alternative's event, with its fields.
    #[inline]
    pub fn visit<'e, V: EventVisitor<'e>>(&'e self, visitor: &mut V) -> V::Output {
        match self {
            AlternativeEvent::Ejected {
                model_group,
                deployment_id,
                duration,
                until,
                ejections,
                consecutive_5xx,
            } => visitor.ejected(
                model_group,
                deployment_id,
                *duration,
                *until,
                *ejections,
                *consecutive_5xx,
            ),
            AlternativeEvent::Unejected {
                model_group,
                deployment_id,
            } => visitor.unejected(model_group, deployment_id),
            AlternativeEvent::Hedged {
                model_group,
                primary,
                hedge,
                delay,
                extra_input_tokens,
                extra_cost_usd,
            } => visitor.hedged(
                model_group,
                primary,
                hedge,
                *delay,
                *extra_input_tokens,
                *extra_cost_usd,
            ),
            AlternativeEvent::HedgeEnd {
                model_group,
                winner,
                hedge_won,
            } => visitor.hedge_end(model_group, winner, *hedge_won),
        }
    }
}

impl RoutingEvent {
    /// [`EventKind::visit`] of the event's kind.
    #[inline]
    pub fn visit<'e, V: EventVisitor<'e>>(&'e self, visitor: &mut V) -> V::Output {
        self.kind.visit(visitor)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use tokio::time::Instant;

    use super::*;
    use crate::event::reasons::{GiveUpReason, WaitReason};
    use crate::failure::FailureKind;

    /// Reads one event of each family; ignores the rest.
    #[derive(Default)]
    struct Families {
        seen: Vec<String>,
    }

    impl<'e> EventVisitor<'e> for Families {
        type Output = Option<&'e str>;

        fn retry(
            &mut self,
            model_group: &'e Arc<str>,
            _failure: FailureKind,
            retry: u32,
            _budget: u32,
        ) -> Self::Output {
            self.seen.push(format!("retry {retry}"));
            Some(model_group)
        }

        fn give_up(
            &mut self,
            model_group: &'e Arc<str>,
            _failure: FailureKind,
            reason: GiveUpReason,
        ) -> Self::Output {
            self.seen.push(reason.as_str().to_string());
            Some(model_group)
        }

        fn stream_chunk(
            &mut self,
            tokens: u32,
            _gap_before: Option<Duration>,
            _inner_gap: Duration,
        ) -> Self::Output {
            self.seen.push(format!("chunk {tokens}"));
            None
        }

        fn unejected(
            &mut self,
            _model_group: &'e Arc<str>,
            deployment_id: &'e Arc<str>,
        ) -> Self::Output {
            Some(deployment_id)
        }
    }

    #[test]
    fn each_event_reaches_its_method_and_the_rest_the_default() {
        let group: Arc<str> = Arc::from("g");
        let events = [
            EventKind::Retry {
                model_group: group.clone(),
                failure: FailureKind::RateLimit,
                retry: 2,
                budget: 3,
            },
            EventKind::GiveUp {
                model_group: group.clone(),
                failure: FailureKind::Timeout,
                reason: GiveUpReason::RetriesExhausted,
            },
            EventKind::StreamChunk {
                tokens: 4,
                gap_before: None,
                inner_gap: Duration::ZERO,
            },
            EventKind::Alternative(AlternativeEvent::Unejected {
                model_group: group.clone(),
                deployment_id: Arc::from("d"),
            }),
            EventKind::Wait {
                duration: Duration::from_secs(1),
                reason: WaitReason::Backoff,
            },
        ];
        let mut families = Families::default();
        let read: Vec<Option<&str>> = events.iter().map(|e| e.visit(&mut families)).collect();
        assert_eq!(read, [Some("g"), Some("g"), None, Some("d"), None]);
        assert_eq!(families.seen, ["retry 2", "retries_exhausted", "chunk 4"]);
        let routed = RoutingEvent {
            at: Instant::now(),
            request_id: Some(1),
            kind: events[0].clone(),
        };
        assert_eq!(routed.visit(&mut families), Some("g"));
    }
}
