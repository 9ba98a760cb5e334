//! Stream rules: how the router reads a streamed attempt where LiteLLM's documented rules and
//! LiteLLM 1.110.2's code part ways. The mechanism (reading the stream, its deadlines, the
//! continuation) is `router/stream.rs`; these are its decisions, one policy per profile.
//!
//! [`Documented`] is the seed's reading ("Streams" in the rules) and every profile's but one;
//! [`LiteLlm110`] is what the real `litellm.Router` 1.110.2 did on the stream oracle's
//! scenarios (`tools/litellm-oracle/stream/README.md`), selected by `profile: litellm-1.110`:
//! - the provider gets `stream_timeout` as its HTTP read timeout, so it limits every gap
//!   between chunks, not only the first chunk ([`StreamRules::gap_limit`]);
//! - an SSE error frame inside a 200 reaches the router as an `APIConnectionError` (500),
//!   whatever code it carried ([`StreamRules::read_error_frame`]);
//! - the OpenAI SDK path raises "Stream ended before a finish_reason was received" when a
//!   stream that sent something ends without a finish reason, by `[DONE]` or by the body
//!   closing; one that sent nothing is an empty success ([`StreamRules::unfinished_end`]);
//! - the first chunk is read inside the attempt: once it arrived (even role-only), a break goes
//!   to the fallback path only, never to a retry in the group
//!   ([`StreamRules::break_ends_retries`]);
//! - a 4xx other than 429 after content is raised, not continued
//!   ([`StreamRules::may_continue_after`]); a continuation goes through the fallback path
//!   ([`StreamRules::continues_as_fallback`]): it counts as a fallback
//!   (`x-litellm-attempted-fallbacks`), one refused for want of a prefill deployment is still
//!   a hop into its group, and one that breaks after its own content is continued again;
//! - a broken stream's partial usage is logged ([`StreamRules::billed_after_break`]);
//! - the cooldown of a stream that broke (even before its first chunk) is written by a
//!   background task, which lands after the instant retry's pick; an HTTP error answered
//!   before the stream opened is cooled at once ([`StreamRules::cooldown_timing`]; the
//!   source, and the oracle's condition for it, in `router/stream_cooldown.rs`).

use std::time::Duration;

use crate::config::{Deployment, RouterSettings};
use crate::failure::{FailureKind, ProviderFailure};

/// The stream decisions a profile selects.
pub trait StreamRules {
    /// The longest gap allowed between two items of `deployment`'s stream once the first
    /// arrived, beside routersim's own `stream_stall_timeout` (the shorter wins).
    fn gap_limit(&self, deployment: &Deployment, settings: &RouterSettings) -> Option<Duration>;
    /// The failure an error frame inside a 200 stands for.
    fn read_error_frame(&self, failure: ProviderFailure) -> ProviderFailure;
    /// The failure a stream that ended without a finish reason stands for: with its end
    /// marker (`end_marker`: `[DONE]` alone) or by the body closing (a truncated stream);
    /// `any_frame`: something (even a role-only delta) arrived before the end. `None`: a
    /// success.
    fn unfinished_end(&self, end_marker: bool, any_frame: bool) -> Option<ProviderFailure>;
    /// Whether a break ends the group's retries (the request goes to its fallbacks);
    /// `after_frame`: something (even a role-only delta) of this attempt's stream came first.
    fn break_ends_retries(&self, after_frame: bool) -> bool;
    /// Whether a stream broken after content by `failure` may be continued (on top of the
    /// documented disqualifiers).
    fn may_continue_after(&self, failure: &ProviderFailure) -> bool;
    /// Whether a continuation goes through the fallback path: it counts in LiteLLM's
    /// attempted fallbacks, a group without a deployment supporting assistant prefill is still
    /// entered (a `give_up` there, `no_continuation_deployment`), and a continuation that
    /// breaks after its own content is continued again from its group (otherwise the original
    /// error is raised).
    fn continues_as_fallback(&self) -> bool;
    /// The output tokens a stream that broke bills (under LiteLLM's stream recovery), of the
    /// `delivered` ones.
    fn billed_after_break(&self, delivered: u32) -> u32;
    /// When the failure handler hears of a failed attempt (`stream_broke`: a stream broke,
    /// rather than a call failing before its stream opened).
    fn cooldown_timing(&self, stream_broke: bool) -> CooldownTiming;
}

/// When the failure handler hears of a failed attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CooldownTiming {
    /// At once.
    Now,
    /// After the request's next pick (or when time moves on), as a background task would land.
    AfterNextPick,
}

/// LiteLLM's documented rules (the seed's "Streams").
#[derive(Clone, Copy, Debug, Default)]
pub struct Documented;

impl StreamRules for Documented {
    fn gap_limit(&self, _: &Deployment, _: &RouterSettings) -> Option<Duration> {
        None
    }

    fn read_error_frame(&self, failure: ProviderFailure) -> ProviderFailure {
        failure
    }

    /// The end marker is a `stop`; a truncated stream is an `api_connection` failure.
    fn unfinished_end(&self, end_marker: bool, _any_frame: bool) -> Option<ProviderFailure> {
        (!end_marker).then(|| ProviderFailure::new(FailureKind::ApiConnection))
    }

    fn break_ends_retries(&self, _after_frame: bool) -> bool {
        false
    }

    fn may_continue_after(&self, _: &ProviderFailure) -> bool {
        true
    }

    fn continues_as_fallback(&self) -> bool {
        false
    }

    /// A failed stream bills nothing.
    fn billed_after_break(&self, _delivered: u32) -> u32 {
        0
    }

    fn cooldown_timing(&self, _stream_broke: bool) -> CooldownTiming {
        CooldownTiming::Now
    }
}

/// What LiteLLM 1.110.2's code does (see the module docs).
#[derive(Clone, Copy, Debug, Default)]
pub struct LiteLlm110;

/// LiteLLM's `APIConnectionError` status.
const API_CONNECTION_STATUS: u16 = 500;

fn api_connection(tokens_delivered: u32) -> ProviderFailure {
    let mut failure =
        ProviderFailure::new(FailureKind::ApiConnection).with_status(Some(API_CONNECTION_STATUS));
    failure.tokens_delivered = tokens_delivered;
    failure
}

impl StreamRules for LiteLlm110 {
    fn gap_limit(&self, deployment: &Deployment, settings: &RouterSettings) -> Option<Duration> {
        deployment.stream_timeout.or(settings.stream_timeout)
    }

    fn read_error_frame(&self, failure: ProviderFailure) -> ProviderFailure {
        api_connection(failure.tokens_delivered)
    }

    /// The OpenAI SDK stops at `[DONE]` and at the end of the body alike; LiteLLM then fails
    /// a stream that sent something ("Stream ended before a finish_reason was received") and
    /// answers an empty one.
    fn unfinished_end(&self, _end_marker: bool, any_frame: bool) -> Option<ProviderFailure> {
        any_frame.then(|| api_connection(0))
    }

    /// The first chunk was read inside the attempt.
    fn break_ends_retries(&self, after_frame: bool) -> bool {
        after_frame
    }

    fn may_continue_after(&self, failure: &ProviderFailure) -> bool {
        !matches!(failure.effective_status(), Some(s) if (400..500).contains(&s) && s != 429)
    }

    fn continues_as_fallback(&self) -> bool {
        true
    }

    /// The partial usage is logged.
    fn billed_after_break(&self, delivered: u32) -> u32 {
        delivered
    }

    /// A broken stream's outcome is recorded by a background task.
    fn cooldown_timing(&self, stream_broke: bool) -> CooldownTiming {
        if stream_broke {
            CooldownTiming::AfterNextPick
        } else {
            CooldownTiming::Now
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_4xx_other_than_429_stops_a_continuation_under_1_110() {
        let rules = LiteLlm110;
        for (kind, ok) in [
            (FailureKind::BadRequest, false),
            (FailureKind::Timeout, false),
            (FailureKind::NotFound, false),
            (FailureKind::RateLimit, true),
            (FailureKind::ApiConnection, true),
            (FailureKind::InternalServer, true),
        ] {
            assert_eq!(
                rules.may_continue_after(&ProviderFailure::new(kind)),
                ok,
                "{kind:?}"
            );
        }
        assert!(Documented.may_continue_after(&ProviderFailure::new(FailureKind::BadRequest)));
    }

    #[test]
    fn an_error_frame_keeps_only_its_delivered_tokens() {
        let mut frame = ProviderFailure::new(FailureKind::RateLimit);
        frame.tokens_delivered = 7;
        let read = LiteLlm110.read_error_frame(frame.clone());
        assert_eq!(read.kind, FailureKind::ApiConnection);
        assert_eq!(read.effective_status(), Some(500));
        assert_eq!(read.tokens_delivered, 7);
        assert_eq!(Documented.read_error_frame(frame.clone()), frame);
    }
}
