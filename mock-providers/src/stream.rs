//! [`FakeStream`]: a fake provider's open stream, paced by tokio's (paused) clock.
//!
//! # Timeline
//! The stream opens when the call returns (the call itself sleeps nothing). Token `i`
//! (0-based) of the answer arrives at `open + ttft + i × inter_token`. The first tokens are
//! the provider's `emits` (one token each, in the spec's order; `tool_calls` only when the
//! request offers tools), the rest is text. The terminal marker (`Done`) comes at the instant
//! of the last token: [`FinishReason::Length`] when the answer was cut at `max_tokens`, else
//! [`FinishReason::ToolCalls`] when a tool call was emitted, else [`FinishReason::Stop`].
//!
//! # Coalescing
//! A real SSE client sees one frame per token; 500 timers per answer would sink the
//! benchmark, so steady runs are coalesced into one [`Chunk`] of `n` tokens with
//! `span = (n − 1) × inter_token`, delivered when its *last* token arrives (the router dates
//! its first token at `now − span`). Always alone: the first token (so time to first token is
//! exact), each `emits` token, and the first token after a stall (so the stall's gap is
//! exact). A chunk never spans more than half the router's `stream_stall_timeout`, when one
//! is set: the router measures its stall deadline from the previous item's arrival, so a
//! longer chunk would look like a stall while tokens were flowing. With
//! `inter_token >= stall / 2` every token is its own chunk.
//!
//! # Faults
//! A [`StreamCut`] cuts the token sequence: `after_tokens: N` delivers `N` tokens (all of them
//! when `N` is at least the answer's length) and the fault happens at the instant the `N`-th
//! arrived (at the first-token instant for 0); `after: d` delivers the tokens arriving up to
//! `first-token instant + d`, and the fault happens then; a time cut later than the last
//! token never fires. What happens at the cut:
//! - break: `next_item` gives `Some(Err(failure))`, then `None`;
//! - error frame: `Some(Ok(StreamItem::ErrorFrame(failure)))`, then `None`
//!   (in both, the failure's `tokens_delivered` counts the tokens this stream sent);
//! - truncated: `None` (and `None` forever);
//! - stall: nothing for `for`; the next token (or the terminal marker, when all were sent)
//!   arrives `for` after the cut, and the rest follows at the usual pace;
//! - empty: a role-only chunk (or nothing) and `Done(Stop)`, both at the first-token instant
//!   (`Done(Missing)` for `stream_no_finish`).
//!
//! `next_item` sleeps once, with `tokio::time::sleep_until`, to the item's instant (not at
//! all when it is due already). Its state advances only when the item is handed out, so a
//! call dropped mid-sleep (the router's deadline fired) loses nothing.

use std::time::Duration;

use routersim_engine::failure::ProviderFailure;
use routersim_engine::stream::{Chunk, ChunkKind, FinishReason, ProviderStream, StreamItem};
use tokio::time::Instant;

use crate::spec::{EmptyStream, StreamCut};

/// What ends a stream early.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Terminal {
    /// The connection drops.
    Break(ProviderFailure),
    /// An error event.
    ErrorFrame(ProviderFailure),
    /// Closed without a terminal marker.
    Truncated,
}

/// What a stream will do, as the provider decided it.
#[derive(Clone, Debug)]
pub(crate) struct StreamPlan {
    /// Time to first token.
    pub ttft: Duration,
    /// Time between tokens.
    pub inter_token: Duration,
    /// Content tokens of the answer (the `emits` included).
    pub tokens: u32,
    /// Kinds of the leading one-token chunks.
    pub emits: Vec<ChunkKind>,
    /// The terminal marker's reason when the stream completes.
    pub finish: FinishReason,
    /// Half the router's stall timeout, if it has one.
    pub span_cap: Option<Duration>,
    /// The fault, if any.
    pub fault: Option<PlannedFault>,
}

/// A stream fault, resolved against the plan.
#[derive(Clone, Debug)]
pub(crate) enum PlannedFault {
    /// Cut and end.
    Terminal(StreamCut, Terminal),
    /// Cut, pause, resume.
    Stall(StreamCut, Duration),
    /// No content, then the end marker with this reason.
    Empty(EmptyStream, FinishReason),
}

/// Where the stream stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Content (tokens `next..`), then whatever ends the stream.
    Content,
    /// An empty stream's role-only chunk was sent; `Done` is next.
    RoleOnlySent,
    /// Nothing more (`None` forever).
    Finished,
}

/// How the stream ends, with offsets from `open`.
#[derive(Clone, Debug)]
enum End {
    /// `Done(finish)` at this offset.
    Done(Duration),
    /// The fault at this offset, once `cut` tokens were delivered.
    Fault {
        cut: u32,
        at: Duration,
        how: Terminal,
    },
}

/// A fake provider's open stream (see the module doc for its timeline). Boxed: a call's
/// result may carry it, so every call's future would otherwise be as large as the stream.
#[derive(Debug)]
pub struct FakeStream(Box<StreamState>);

impl FakeStream {
    /// The stream `plan` describes, opened at `open`.
    pub(crate) fn new(open: Instant, plan: StreamPlan) -> Self {
        Self(Box::new(StreamState::new(open, plan)))
    }
}

/// The state of a [`FakeStream`].
#[derive(Debug)]
struct StreamState {
    open: Instant,
    ttft: Duration,
    inter_token: Duration,
    tokens: u32,
    emits: [ChunkKind; 4],
    emit_count: u32,
    finish: FinishReason,
    /// Most tokens in one coalesced chunk.
    max_run: u32,
    /// A stall: tokens from `.0` on are shifted to start at offset `.1`.
    stall: Option<(u32, Duration)>,
    /// An empty stream, and its end marker's reason.
    empty: Option<(EmptyStream, FinishReason)>,
    end: End,
    /// The next token to deliver.
    next: u32,
    phase: Phase,
}

impl StreamState {
    /// The stream `plan` describes, opened at `open`.
    fn new(open: Instant, plan: StreamPlan) -> Self {
        let StreamPlan {
            ttft,
            inter_token,
            tokens,
            emits: emit_list,
            finish,
            span_cap,
            fault,
        } = plan;
        let mut emits = [ChunkKind::Text; 4];
        let emit_count = emit_list.len().min(4).min(tokens as usize);
        emits[..emit_count].copy_from_slice(&emit_list[..emit_count]);
        let max_run = match span_cap {
            None => u32::MAX,
            Some(_) if inter_token.is_zero() => u32::MAX,
            Some(cap) if inter_token >= cap => 1,
            Some(cap) => {
                u32::try_from(cap.as_nanos() / inter_token.as_nanos()).unwrap_or(u32::MAX - 1) + 1
            }
        };
        let base = |i: u32| ttft.saturating_add(inter_token.saturating_mul(i));
        // The instant the last token arrives (the first-token instant for an empty answer).
        let last = base(tokens.saturating_sub(1));
        // A cut: tokens delivered before it, its offset, and whether it fires at all.
        let cut = |at: StreamCut| -> Option<(u32, Duration)> {
            match at {
                StreamCut::Tokens(n) => {
                    let k = n.min(tokens);
                    Some((k, base(k.saturating_sub(1))))
                }
                StreamCut::Time(d) => {
                    let instant = ttft.saturating_add(d);
                    if instant > last {
                        return None;
                    }
                    let k = if inter_token.is_zero() {
                        tokens
                    } else {
                        let arrived = d.as_nanos() / inter_token.as_nanos() + 1;
                        u32::try_from(arrived).unwrap_or(u32::MAX).min(tokens)
                    };
                    Some((k, instant))
                }
            }
        };
        let mut stall = None;
        let mut empty = None;
        let mut end = End::Done(last);
        match fault {
            None => {}
            Some(PlannedFault::Empty(kind, reason)) => {
                empty = Some((kind, reason));
                end = End::Done(ttft);
            }
            Some(PlannedFault::Terminal(at, mut how)) => {
                if let Some((k, at)) = cut(at) {
                    if let Terminal::Break(failure) | Terminal::ErrorFrame(failure) = &mut how {
                        failure.tokens_delivered = k;
                    }
                    end = End::Fault { cut: k, at, how };
                }
            }
            Some(PlannedFault::Stall(at, pause)) => {
                if let Some((k, at)) = cut(at) {
                    let resume = at.saturating_add(pause);
                    if k >= tokens {
                        end = End::Done(resume);
                    } else {
                        // Never earlier than the token would have come anyway.
                        let resume = resume.max(base(k));
                        stall = Some((k, resume));
                        end = End::Done(
                            resume.saturating_add(inter_token.saturating_mul(tokens - 1 - k)),
                        );
                    }
                }
            }
        }
        Self {
            open,
            ttft,
            inter_token,
            tokens,
            emits,
            emit_count: emit_count as u32,
            finish,
            max_run,
            stall,
            empty,
            end,
            next: 0,
            phase: Phase::Content,
        }
    }

    /// Offset of token `i` from `open`.
    fn token_at(&self, i: u32) -> Duration {
        match self.stall {
            Some((k, resume)) if i >= k => {
                resume.saturating_add(self.inter_token.saturating_mul(i - k))
            }
            _ => self.ttft.saturating_add(self.inter_token.saturating_mul(i)),
        }
    }

    /// The next item, its offset from `open`, and the state after it.
    fn peek(&self) -> Option<Step> {
        let step = |at, item, next, phase| Step {
            at,
            item,
            next,
            phase,
        };
        let done = |reason| Some(Ok(StreamItem::Done(reason)));
        match self.phase {
            Phase::Finished => None,
            Phase::RoleOnlySent => Some(step(
                self.ttft,
                done(self.empty.map_or(FinishReason::Stop, |(_, reason)| reason)),
                0,
                Phase::Finished,
            )),
            Phase::Content => {
                if let Some((kind, reason)) = self.empty {
                    return Some(match kind {
                        EmptyStream::RoleOnly => step(
                            self.ttft,
                            Some(Ok(StreamItem::Chunk(Chunk {
                                kind: ChunkKind::RoleOnly,
                                tokens: 0,
                                span: Duration::ZERO,
                            }))),
                            0,
                            Phase::RoleOnlySent,
                        ),
                        EmptyStream::Nothing => step(self.ttft, done(reason), 0, Phase::Finished),
                    });
                }
                let limit = match &self.end {
                    End::Fault { cut, .. } => *cut,
                    End::Done(_) => self.tokens,
                };
                let start = self.next;
                if start < limit {
                    let (kind, end) = if start < self.emit_count {
                        (self.emits[start as usize], start + 1)
                    } else if start == 0 || self.stall.is_some_and(|(k, _)| k == start) {
                        (ChunkKind::Text, start + 1)
                    } else {
                        let mut end = limit.min(start.saturating_add(self.max_run));
                        if let Some((k, _)) = self.stall
                            && start < k
                        {
                            end = end.min(k);
                        }
                        (ChunkKind::Text, end)
                    };
                    let first = self.token_at(start);
                    let last = self.token_at(end - 1);
                    let chunk = Chunk {
                        kind,
                        tokens: end - start,
                        span: last.saturating_sub(first),
                    };
                    return Some(step(
                        last,
                        Some(Ok(StreamItem::Chunk(chunk))),
                        end,
                        Phase::Content,
                    ));
                }
                Some(match &self.end {
                    End::Done(at) => step(*at, done(self.finish), start, Phase::Finished),
                    End::Fault { at, how, .. } => {
                        let item = match how {
                            Terminal::Break(failure) => Some(Err(failure.clone())),
                            Terminal::ErrorFrame(failure) => {
                                Some(Ok(StreamItem::ErrorFrame(failure.clone())))
                            }
                            Terminal::Truncated => None,
                        };
                        step(*at, item, start, Phase::Finished)
                    }
                })
            }
        }
    }
}

/// One item to hand out: when, what, and the state after it.
struct Step {
    /// Offset from `open`.
    at: Duration,
    item: Option<Result<StreamItem, ProviderFailure>>,
    next: u32,
    phase: Phase,
}

impl ProviderStream for FakeStream {
    async fn next_item(&mut self) -> Option<Result<StreamItem, ProviderFailure>> {
        let stream = &mut *self.0;
        let at = stream.open + stream.peek()?.at;
        if at > routersim_runtime::time::now() {
            routersim_runtime::time::sleep_until(at).await;
        }
        // The same step again (peeking is pure): only the timer is kept while a stream waits.
        let Step {
            item, next, phase, ..
        } = stream.peek()?;
        stream.next = next;
        stream.phase = phase;
        item
    }
}
