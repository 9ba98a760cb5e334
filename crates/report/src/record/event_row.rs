//! `events.csv`: one row per routing decision (every event but attempts, request ends and
//! stream chunks): its time, name, group, deployment and a `key=value` detail.
//!
//! Why its own module: the detail of each kind is a format of its own, and the row is written
//! from a scratch string so no event allocates.

use std::fmt::Write as _;

use routersim_engine::alternatives::AlternativeEvent;
use routersim_engine::event::{EventKind, RoutingEvent};
use tokio::time::Instant;

use super::csv::write_row;
use super::state::State;
use crate::units::{Ms, micros, micros_since};

impl State {
    pub(super) fn event_row(&mut self, event: &RoutingEvent, at: u64) {
        let detail = &mut self.detail;
        detail.clear();
        // Writing into a String cannot fail; the results are ignored.
        let (group, deployment): (&str, &str) = match &event.kind {
            EventKind::Wait { duration, reason } => {
                let _ = write!(
                    detail,
                    "reason={} duration_ms={}",
                    reason.as_str(),
                    Ms(micros(*duration))
                );
                ("", "")
            }
            EventKind::Retry {
                model_group,
                failure,
                retry,
                budget,
            } => {
                let _ = write!(detail, "failure={failure} retry={retry} budget={budget}");
                (model_group, "")
            }
            EventKind::GiveUp {
                model_group,
                failure,
                reason,
            } => {
                let _ = write!(detail, "failure={failure} reason={}", reason.as_str());
                (model_group, "")
            }
            EventKind::OrderFallback {
                model_group,
                from_order,
                to_order,
            } => {
                let _ = write!(
                    detail,
                    "from_order={} to_order={}",
                    OptOrNone(*from_order),
                    OptOrNone(*to_order)
                );
                (model_group, "")
            }
            EventKind::WeightedFailover {
                model_group,
                excluded,
            } => {
                let _ = write!(detail, "excluded={excluded}");
                (model_group, excluded)
            }
            EventKind::Fallback {
                source,
                target,
                order,
                depth,
                level,
                failure,
            } => {
                let _ = write!(
                    detail,
                    "from={source} to={target} depth={depth} order={order} level={} failure={failure}",
                    level.as_str()
                );
                (source, "")
            }
            EventKind::CooldownSet {
                model_group,
                deployment_id,
                reason,
                failure,
                duration,
                until,
                // Not in events.csv: its bytes stay as they were (the sweep reads the source
                // from the event itself).
                source: _,
            } => {
                let _ = write!(
                    detail,
                    "reason={} failure={failure} duration_ms={} until_ms={}",
                    reason.as_str(),
                    Ms(micros(*duration)),
                    Ms(micros_since(self.start, *until))
                );
                (model_group, deployment_id)
            }
            EventKind::CooldownEnd {
                model_group,
                deployment_id,
            } => (model_group, deployment_id),
            EventKind::AllCooled {
                model_group,
                retry_after,
            } => {
                let _ = write!(detail, "retry_after_ms={}", Ms(micros(*retry_after)));
                (model_group, "")
            }
            EventKind::HalfOpen {
                model_group,
                deployment_id,
            }
            | EventKind::ProbeOk {
                model_group,
                deployment_id,
            } => (model_group, deployment_id),
            EventKind::Recovered {
                model_group,
                deployment_id,
                via,
            } => {
                let _ = write!(detail, "via={}", via.as_str());
                (model_group, deployment_id)
            }
            EventKind::ProbeFailed {
                model_group,
                deployment_id,
                failure,
            } => {
                let _ = write!(detail, "failure={failure}");
                (model_group, deployment_id)
            }
            EventKind::StreamBreak {
                model_group,
                deployment_id,
                failure,
                how,
                tokens_so_far,
                after_content,
            } => {
                let _ = write!(
                    detail,
                    "failure={failure} how={} tokens_so_far={tokens_so_far} after_content={after_content}",
                    how.as_str()
                );
                (model_group, deployment_id)
            }
            EventKind::ResponseCost { .. }
            | EventKind::ClientTry { .. }
            | EventKind::AmbiguousOutcome { .. } => reliability_detail(detail, &event.kind),
            EventKind::StreamContinued {
                from_group,
                from_deployment,
                to_group,
                to_deployment,
                prefill_tokens,
            } => {
                let _ = write!(
                    detail,
                    "to_group={to_group} to_deployment={to_deployment} prefill_tokens={prefill_tokens}"
                );
                (from_group, from_deployment)
            }
            kind @ (EventKind::RouteFiltered { .. } | EventKind::ValidationRejected { .. }) => {
                contract_detail(kind, detail)
            }
            EventKind::Alternative(alt) => alternative_detail(alt, detail, self.start),
            EventKind::AttemptStart { .. }
            | EventKind::AttemptEnd { .. }
            | EventKind::RequestEnd { .. }
            | EventKind::StreamChunk { .. } => return,
        };
        if let Some(id) = event.request_id {
            let sep = if detail.is_empty() { "" } else { " " };
            let _ = write!(detail, "{sep}request={id}");
        }
        let detail = &self.detail;
        let name = event.kind.name();
        write_row(&mut self.events, &mut self.error, |w| {
            w.fmt(Ms(at))?;
            w.str(name)?;
            w.str(group)?;
            w.str(deployment)?;
            w.str(detail)?;
            w.end()
        });
    }
}

/// The `detail` of a `profile: contract` event, and its group and deployment.
fn contract_detail<'e>(kind: &'e EventKind, detail: &mut String) -> (&'e str, &'e str) {
    match kind {
        EventKind::RouteFiltered {
            model_group,
            deployment_id,
            reason,
        } => {
            let _ = write!(detail, "reason={}", reason.as_str());
            (model_group, deployment_id)
        }
        EventKind::ValidationRejected {
            model_group,
            deployment_id,
            attempt,
            reason,
        } => {
            let _ = write!(detail, "attempt={attempt} reason={}", reason.as_str());
            (model_group, deployment_id)
        }
        _ => ("", ""),
    }
}

/// An optional number, `none` when absent.
struct OptOrNone(Option<u32>);

impl std::fmt::Display for OptOrNone {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(n) => write!(f, "{n}"),
            None => f.write_str("none"),
        }
    }
}

/// The `detail` (and group, deployment) of an alternative's event in `events.csv`.
fn alternative_detail<'e>(
    event: &'e AlternativeEvent,
    detail: &mut String,
    start: Instant,
) -> (&'e str, &'e str) {
    match event {
        AlternativeEvent::Ejected {
            model_group,
            deployment_id,
            duration,
            until,
            ejections,
            consecutive_5xx,
        } => {
            let _ = write!(
                detail,
                "duration_ms={} until_ms={} ejections={ejections} consecutive_5xx={consecutive_5xx}",
                Ms(micros(*duration)),
                Ms(micros_since(start, *until))
            );
            (model_group, deployment_id)
        }
        AlternativeEvent::Unejected {
            model_group,
            deployment_id,
        } => (model_group, deployment_id),
        AlternativeEvent::Hedged {
            model_group,
            primary,
            hedge,
            delay,
            extra_input_tokens,
            extra_cost_usd,
        } => {
            let _ = write!(
                detail,
                "primary={primary} delay_ms={} extra_input_tokens={extra_input_tokens} extra_cost_usd={extra_cost_usd}",
                Ms(micros(*delay))
            );
            (model_group, hedge)
        }
        AlternativeEvent::HedgeEnd {
            model_group,
            winner,
            hedge_won,
        } => {
            let _ = write!(detail, "hedge_won={hedge_won}");
            (model_group, winner)
        }
    }
}

/// The `detail` (and group, deployment) of the reliability events: `response_cost`,
/// `client_try`, `ambiguous_outcome`.
fn reliability_detail<'k>(detail: &mut String, kind: &'k EventKind) -> (&'k str, &'k str) {
    match kind {
        EventKind::ResponseCost {
            model_group,
            deployment_id,
            input_tokens,
            output_tokens,
            usd,
        } => {
            let _ = write!(
                detail,
                "input_tokens={input_tokens} output_tokens={output_tokens} usd={}",
                crate::units::round6(*usd * 1000.0) / 1000.0
            );
            (model_group, deployment_id)
        }
        EventKind::ClientTry {
            try_number,
            retries,
            provider_calls_before,
        } => {
            let _ = write!(
                detail,
                "try={try_number} retries={retries} provider_calls_before={provider_calls_before}"
            );
            ("", "")
        }
        EventKind::AmbiguousOutcome {
            model_group,
            deployment_id,
            operation_id,
            replay,
            executed,
        } => {
            let executed = executed.map_or("unknown", |e| if e { "true" } else { "false" });
            let _ = write!(
                detail,
                "operation={operation_id} replay={} executed={executed}",
                replay.as_str()
            );
            (model_group, deployment_id)
        }
        _ => ("", ""),
    }
}
