//! What a success says: its length, then a plain answer (with a body under a contract, maybe
//! a defective one, or a degenerate answer) or the plan of its stream.
//!
//! # The answer's length
//! The request's `output_tokens` (a continuation's is already reduced by the router); else
//! the spec's `output_tokens` (drawn per call when a range), less the request's
//! `prefill_tokens`; else the request's `max_tokens`; else [`DEFAULT_OUTPUT_TOKENS`] less
//! `prefill_tokens`. It never exceeds `max_tokens` (a stream then finishes with `length`).
//!
//! # A stream
//! A streamed call (`request.stream`) gets a stream, which a scripted stream fault
//! (`stream_break`, …) spoils; else each *stream* fault window active now, in file order,
//! draws its probability and the first that fires spoils it. So a scripted stream fault
//! beats a window's. A non-streamed call ignores stream faults (a scripted one counts as
//! `ok`; stream windows are not even drawn). Tokens then follow every `inter_token`, drawn
//! once per stream (see [`crate::stream`]).
//!
//! Separate because these are the last steps of a decision, taken only for a success.

use std::time::Duration;

use routersim_engine::request::{Completion, Request};
use routersim_engine::stream::{ChunkKind, FinishReason};

use super::call_time::CallTime;
use super::deployment::DeploymentState;
use crate::spec::{Degenerate, EmptyStream, FaultEffect, OutcomeSpec, StreamFault};
use crate::stream::{PlannedFault, StreamPlan, Terminal};
use routersim_engine::event::ValidationReason;

/// Output tokens of a success when neither the request nor the spec sets a length and the
/// request sets no `max_tokens`.
pub const DEFAULT_OUTPUT_TOKENS: u32 = 200;

/// What `{malformed: empty_choices}` does to a stream: no content, then the terminal marker.
static EMPTY_STREAM: StreamFault = StreamFault::Empty(EmptyStream::Nothing);

/// The answer's length in output tokens.
#[derive(Clone, Copy, Debug)]
pub(super) struct Length {
    /// Output tokens.
    pub tokens: u32,
    /// Whether `max_tokens` cut the answer.
    pub capped: bool,
}

/// The answer's length (see the module doc), and whether `max_tokens` cut it.
pub(super) fn length(state: &DeploymentState, request: &Request) -> Length {
    let wanted = match (request.output_tokens, &state.spec.output_tokens) {
        (Some(n), _) => n,
        (None, Some(range)) => range
            .sample(&mut *state.output_tokens_rng.borrow_mut())
            .saturating_sub(request.prefill_tokens),
        (None, None) => match request.max_tokens {
            Some(max) => max,
            None => DEFAULT_OUTPUT_TOKENS.saturating_sub(request.prefill_tokens),
        },
    };
    match request.max_tokens {
        Some(max) if wanted > max => Length {
            tokens: max,
            capped: true,
        },
        _ => Length {
            tokens: wanted,
            capped: false,
        },
    }
}

/// A non-streamed success of `tokens`: the degenerate answer scripted, else a plain one.
pub(super) fn completion(
    state: &DeploymentState,
    outcome: &OutcomeSpec,
    request: &Request,
    tokens: u32,
    now: CallTime,
) -> Completion {
    match outcome {
        OutcomeSpec::Degenerate {
            kind: Degenerate::EmptyChoices,
            ..
        } => Completion {
            empty_choices: true,
            ..Completion::default()
        },
        OutcomeSpec::Degenerate {
            kind: Degenerate::ContentFilter,
            ..
        } => Completion {
            output_tokens: tokens,
            finish_reason: FinishReason::ContentFilter,
            ..Completion::default()
        },
        _ => plain_answer(state, request, tokens, now.elapsed),
    }
}

/// A plain successful answer: its body when the request's contract validates, with the
/// defect of the first `invalid_response` window that fires.
fn plain_answer(
    state: &DeploymentState,
    request: &Request,
    tokens: u32,
    t: Duration,
) -> Completion {
    let defect = state.invalid.iter().find_map(|w| match &w.fault.effect {
        FaultEffect::InvalidResponse(defect) if w.fires(t) => Some(*defect),
        _ => None,
    });
    let finish_reason = if defect == Some(ValidationReason::Truncated) {
        FinishReason::Length
    } else {
        FinishReason::Stop
    };
    Completion {
        output_tokens: tokens,
        finish_reason,
        body: request
            .contract
            .as_deref()
            .and_then(|contract| crate::body::body(contract, defect)),
        ..Completion::default()
    }
}

/// A streamed success's plan: its fault (drawn first), its leading chunks, how it finishes,
/// then its pace (drawn last). `ttft` is the call's latency.
pub(super) fn stream_plan(
    state: &DeploymentState,
    outcome: &OutcomeSpec,
    request: &Request,
    length: Length,
    ttft: Duration,
    span_cap: Option<Duration>,
    now: CallTime,
) -> StreamPlan {
    let fault = stream_fault(state, outcome, now);
    let emits = emits(state, request);
    let sent = &emits[..emits.len().min(length.tokens as usize)];
    let finish = finish_reason(outcome, length.capped, sent);
    let inter_token = state
        .inter_token
        .sample(&mut *state.inter_token_rng.borrow_mut());
    StreamPlan {
        ttft,
        inter_token,
        tokens: length.tokens,
        emits,
        finish,
        span_cap,
        fault,
    }
}

/// The stream's fault: the scripted one (`{malformed: empty_choices}` is an empty stream),
/// else that of the first stream-fault window open now whose draw fires.
fn stream_fault(
    state: &DeploymentState,
    outcome: &OutcomeSpec,
    now: CallTime,
) -> Option<PlannedFault> {
    let fault = match outcome {
        OutcomeSpec::Stream(fault) => Some(fault),
        OutcomeSpec::Degenerate {
            kind: Degenerate::EmptyChoices,
            ..
        } => Some(&EMPTY_STREAM),
        _ => state
            .stream_faults
            .iter()
            .find_map(|w| match &w.fault.effect {
                FaultEffect::Stream(fault) if w.fires(now.elapsed) => Some(fault),
                _ => None,
            }),
    };
    fault.map(|fault| planned(fault, now.unix_ms))
}

/// A stream fault as the stream plays it, its error as the router receives it now.
fn planned(fault: &StreamFault, now_unix_ms: i64) -> PlannedFault {
    match fault {
        StreamFault::Break { at, error } => {
            PlannedFault::Terminal(*at, Terminal::Break(error.failure(now_unix_ms)))
        }
        StreamFault::ErrorFrame { at, error } => {
            PlannedFault::Terminal(*at, Terminal::ErrorFrame(error.failure(now_unix_ms)))
        }
        StreamFault::Truncated { at } => PlannedFault::Terminal(*at, Terminal::Truncated),
        StreamFault::Stall { at, pause } => PlannedFault::Stall(*at, *pause),
        StreamFault::Empty(kind) => PlannedFault::Empty(*kind, FinishReason::Stop),
        StreamFault::NoFinish(kind) => PlannedFault::Empty(*kind, FinishReason::Missing),
    }
}

/// The stream's leading one-token chunks: the spec's `emits`, a tool call only when the
/// request offers tools.
fn emits(state: &DeploymentState, request: &Request) -> Vec<ChunkKind> {
    state
        .spec
        .emits
        .iter()
        .map(|e| e.chunk_kind())
        .filter(|&kind| kind != ChunkKind::ToolCall || request.tools)
        .collect()
}

/// How a complete stream finishes: `content_filter` when scripted, else `length` when
/// `max_tokens` cut it, else `tool_calls` when one was `sent`, else `stop`.
fn finish_reason(outcome: &OutcomeSpec, capped: bool, sent: &[ChunkKind]) -> FinishReason {
    if matches!(
        outcome,
        OutcomeSpec::Degenerate {
            kind: Degenerate::ContentFilter,
            ..
        }
    ) {
        FinishReason::ContentFilter
    } else if capped {
        FinishReason::Length
    } else if sent.contains(&ChunkKind::ToolCall) {
        FinishReason::ToolCalls
    } else {
        FinishReason::Stop
    }
}
