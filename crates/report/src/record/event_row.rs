//! `events.csv`: one row per routing decision (every event but attempts, request ends and
//! stream chunks): its time, name, group, deployment and a `key=value` detail.
//!
//! Why its own module: the detail of each kind is a format of its own ([`Detail`], an
//! [`EventVisitor`] whose methods are the kinds with a row), and the row is written from a
//! scratch string so no event allocates.

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

use routersim_engine::config::Replay;
use routersim_engine::event::{
    CooldownReason, CooldownSource, EventKind, EventVisitor, FallbackLevel, FilterReason,
    GiveUpReason, RecoveredVia, RoutingEvent, ValidationReason, WaitReason,
};
use routersim_engine::failure::FailureKind;
use routersim_engine::stream::BreakKind;
use tokio::time::Instant;

use super::csv::write_row;
use super::state::State;
use crate::units::{Ms, micros, micros_since, round6};

impl State {
    /// Writes the event's `events.csv` row, if its kind has one.
    pub(super) fn event_row(&mut self, event: &RoutingEvent, at: u64) {
        // Most events are attempts and request ends: tell them apart without a visit.
        if !has_row(&event.kind) {
            return;
        }
        self.detail.clear();
        let mut detail = Detail {
            out: &mut self.detail,
            start: self.start,
        };
        let Some((group, deployment)) = event.kind.visit(&mut detail) else {
            return;
        };
        if let Some(id) = event.request_id {
            let sep = if self.detail.is_empty() { "" } else { " " };
            let _ = write!(self.detail, "{sep}request={id}");
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

/// Whether `kind` has an `events.csv` row: all but the events with files of their own
/// (attempts, request ends) and stream chunks (thousands per request). [`Detail`] agrees: it
/// returns no row for these.
fn has_row(kind: &EventKind) -> bool {
    !matches!(
        kind,
        EventKind::AttemptStart { .. }
            | EventKind::AttemptEnd { .. }
            | EventKind::RequestEnd { .. }
            | EventKind::StreamChunk { .. }
    )
}

/// Writes an event's `detail` into `out`; a visit returns the row's group and deployment, or
/// `None` for the kinds without a row (the default). Writing into a `String` cannot fail, so
/// the results of `write!` are ignored.
struct Detail<'d> {
    out: &'d mut String,
    /// The run start, for the times in a detail.
    start: Instant,
}

/// The group and deployment of an `events.csv` row (`None`: no row).
type Row<'e> = Option<(&'e str, &'e str)>;

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

// Requests and their attempts: only the reliability events have rows (attempts and request
// ends have files of their own).
impl<'e> EventVisitor<'e> for Detail<'_> {
    type Output = Row<'e>;

    fn client_try(&mut self, try_number: u32, retries: u32, provider_calls_before: u32) -> Row<'e> {
        let _ = write!(
            self.out,
            "try={try_number} retries={retries} provider_calls_before={provider_calls_before}"
        );
        Some(("", ""))
    }

    fn response_cost(
        &mut self,
        model_group: &'e Arc<str>,
        deployment_id: &'e Arc<str>,
        input_tokens: u32,
        output_tokens: u32,
        usd: f64,
    ) -> Row<'e> {
        let _ = write!(
            self.out,
            "input_tokens={input_tokens} output_tokens={output_tokens} usd={}",
            round6(usd * 1000.0) / 1000.0
        );
        Some((model_group, deployment_id))
    }

    fn ambiguous_outcome(
        &mut self,
        model_group: &'e Arc<str>,
        deployment_id: &'e Arc<str>,
        operation_id: u64,
        replay: Replay,
        executed: Option<bool>,
    ) -> Row<'e> {
        let executed = executed.map_or("unknown", |e| if e { "true" } else { "false" });
        let _ = write!(
            self.out,
            "operation={operation_id} replay={} executed={executed}",
            replay.as_str()
        );
        Some((model_group, deployment_id))
    }

    // Retries and fallbacks.

    fn wait(&mut self, duration: Duration, reason: WaitReason) -> Row<'e> {
        let _ = write!(
            self.out,
            "reason={} duration_ms={}",
            reason.as_str(),
            Ms(micros(duration))
        );
        Some(("", ""))
    }

    fn retry(
        &mut self,
        model_group: &'e Arc<str>,
        failure: FailureKind,
        retry: u32,
        budget: u32,
    ) -> Row<'e> {
        let _ = write!(self.out, "failure={failure} retry={retry} budget={budget}");
        Some((model_group, ""))
    }

    fn give_up(
        &mut self,
        model_group: &'e Arc<str>,
        failure: FailureKind,
        reason: GiveUpReason,
    ) -> Row<'e> {
        let _ = write!(self.out, "failure={failure} reason={}", reason.as_str());
        Some((model_group, ""))
    }

    fn order_fallback(
        &mut self,
        model_group: &'e Arc<str>,
        from_order: Option<u32>,
        to_order: Option<u32>,
    ) -> Row<'e> {
        let _ = write!(
            self.out,
            "from_order={} to_order={}",
            OptOrNone(from_order),
            OptOrNone(to_order)
        );
        Some((model_group, ""))
    }

    fn weighted_failover(&mut self, model_group: &'e Arc<str>, excluded: &'e Arc<str>) -> Row<'e> {
        let _ = write!(self.out, "excluded={excluded}");
        Some((model_group, excluded))
    }

    fn fallback(
        &mut self,
        source: &'e Arc<str>,
        target: &'e Arc<str>,
        order: u32,
        depth: u32,
        level: FallbackLevel,
        failure: FailureKind,
    ) -> Row<'e> {
        let _ = write!(
            self.out,
            "from={source} to={target} depth={depth} order={order} level={} failure={failure}",
            level.as_str()
        );
        Some((source, ""))
    }

    // Cooldowns and health.

    fn cooldown_set(
        &mut self,
        model_group: &'e Arc<str>,
        deployment_id: &'e Arc<str>,
        reason: CooldownReason,
        failure: FailureKind,
        duration: Duration,
        // Not in events.csv: its bytes stay as they were (the sweep reads the source from the
        // event itself).
        _source: CooldownSource,
        until: Instant,
    ) -> Row<'e> {
        let _ = write!(
            self.out,
            "reason={} failure={failure} duration_ms={} until_ms={}",
            reason.as_str(),
            Ms(micros(duration)),
            Ms(micros_since(self.start, until))
        );
        Some((model_group, deployment_id))
    }

    fn cooldown_end(&mut self, model_group: &'e Arc<str>, deployment_id: &'e Arc<str>) -> Row<'e> {
        Some((model_group, deployment_id))
    }

    fn all_cooled(&mut self, model_group: &'e Arc<str>, retry_after: Duration) -> Row<'e> {
        let _ = write!(self.out, "retry_after_ms={}", Ms(micros(retry_after)));
        Some((model_group, ""))
    }

    fn half_open(&mut self, model_group: &'e Arc<str>, deployment_id: &'e Arc<str>) -> Row<'e> {
        Some((model_group, deployment_id))
    }

    fn recovered(
        &mut self,
        model_group: &'e Arc<str>,
        deployment_id: &'e Arc<str>,
        via: RecoveredVia,
    ) -> Row<'e> {
        let _ = write!(self.out, "via={}", via.as_str());
        Some((model_group, deployment_id))
    }

    fn probe_ok(&mut self, model_group: &'e Arc<str>, deployment_id: &'e Arc<str>) -> Row<'e> {
        Some((model_group, deployment_id))
    }

    fn probe_failed(
        &mut self,
        model_group: &'e Arc<str>,
        deployment_id: &'e Arc<str>,
        failure: FailureKind,
    ) -> Row<'e> {
        let _ = write!(self.out, "failure={failure}");
        Some((model_group, deployment_id))
    }

    // Streams (a chunk has no row: there may be thousands per request).

    fn stream_break(
        &mut self,
        model_group: &'e Arc<str>,
        deployment_id: &'e Arc<str>,
        failure: FailureKind,
        how: BreakKind,
        tokens_so_far: u32,
        after_content: bool,
    ) -> Row<'e> {
        let _ = write!(
            self.out,
            "failure={failure} how={} tokens_so_far={tokens_so_far} after_content={after_content}",
            how.as_str()
        );
        Some((model_group, deployment_id))
    }

    fn stream_continued(
        &mut self,
        from_group: &'e Arc<str>,
        from_deployment: &'e Arc<str>,
        to_group: &'e Arc<str>,
        to_deployment: &'e Arc<str>,
        prefill_tokens: u32,
    ) -> Row<'e> {
        let _ = write!(
            self.out,
            "to_group={to_group} to_deployment={to_deployment} prefill_tokens={prefill_tokens}"
        );
        Some((from_group, from_deployment))
    }

    // Contracts (`profile: contract`).

    fn route_filtered(
        &mut self,
        model_group: &'e Arc<str>,
        deployment_id: &'e Arc<str>,
        reason: FilterReason,
    ) -> Row<'e> {
        let _ = write!(self.out, "reason={}", reason.as_str());
        Some((model_group, deployment_id))
    }

    fn validation_rejected(
        &mut self,
        model_group: &'e Arc<str>,
        deployment_id: &'e Arc<str>,
        attempt: u32,
        reason: ValidationReason,
    ) -> Row<'e> {
        let _ = write!(self.out, "attempt={attempt} reason={}", reason.as_str());
        Some((model_group, deployment_id))
    }

    // Alternatives.

    fn ejected(
        &mut self,
        model_group: &'e Arc<str>,
        deployment_id: &'e Arc<str>,
        duration: Duration,
        until: Instant,
        ejections: u32,
        consecutive_5xx: u32,
    ) -> Row<'e> {
        let _ = write!(
            self.out,
            "duration_ms={} until_ms={} ejections={ejections} consecutive_5xx={consecutive_5xx}",
            Ms(micros(duration)),
            Ms(micros_since(self.start, until))
        );
        Some((model_group, deployment_id))
    }

    fn unejected(&mut self, model_group: &'e Arc<str>, deployment_id: &'e Arc<str>) -> Row<'e> {
        Some((model_group, deployment_id))
    }

    fn hedged(
        &mut self,
        model_group: &'e Arc<str>,
        primary: &'e Arc<str>,
        hedge: &'e Arc<str>,
        delay: Duration,
        extra_input_tokens: u32,
        extra_cost_usd: f64,
    ) -> Row<'e> {
        let _ = write!(
            self.out,
            "primary={primary} delay_ms={} extra_input_tokens={extra_input_tokens} extra_cost_usd={extra_cost_usd}",
            Ms(micros(delay))
        );
        Some((model_group, hedge))
    }

    fn hedge_end(
        &mut self,
        model_group: &'e Arc<str>,
        winner: &'e Arc<str>,
        hedge_won: bool,
    ) -> Row<'e> {
        let _ = write!(self.out, "hedge_won={hedge_won}");
        Some((model_group, winner))
    }
}
