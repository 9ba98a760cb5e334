//! The scripted stream provider: each deployment answers with the next entry of its script
//! (the last repeats), as the stream oracle's `ScriptedLLM.astreaming` does: content chunks
//! `<dep>:<i> ` (the last with `finish_reason: stop`), a raise after K chunks, a stall, a first
//! delay, a role-only delta first. The generator's end is a clean end (LiteLLM's stream
//! wrapper closes a custom provider's stream with `stop`).
//!
//! Tokens: LiteLLM lowers a continuation's `max_tokens` by the tokens its counter finds in the
//! text so far. For the oracle's chunk texts with a two-character id (`a1:0 a1:1 `, cl100k)
//! that is 5 for the first chunk and 4 for each one after (measured with
//! `litellm.token_counter`: 9 for two chunks, 41 for ten); each chunk carries that count.
//! Other ids are counted the same way, which is exact only for such ids.
//!
//! Each content chunk the router reads is logged with its text, so the harness can say what
//! the caller received.
//!
//! A deployment in the scenario's `openai_wire` is served, in the oracle, through LiteLLM's
//! real OpenAI provider over an in-memory transport; here it plays what that body sends, as the
//! engine's HTTP adapter would read it: OpenAI's role-only first chunk (unless `role_first:
//! false`), the content chunks, the finish reason with the last one (unless `no_finish`) and
//! `[DONE]` (an end without a finish reason is [`FinishReason::Missing`]); an error frame, a
//! connection reset (`api_connection`), a read timeout (`timeout`) or a cut body (the stream
//! closes) after K chunks; or an HTTP error with its Retry-After.

use std::cell::RefCell;
use std::collections::{BTreeMap, VecDeque};
use std::rc::Rc;
use std::time::Duration;

use routersim_engine::failure::{FailureKind, ProviderFailure};
use routersim_engine::provider::{Provider, ProviderCall, ProviderResponse};
use routersim_engine::request::Completion;
use routersim_engine::stream::{Chunk, ChunkKind, FinishReason, ProviderStream, StreamItem};

use super::scenario::StreamScript;
use crate::provider::failure_of;

/// Tokens of the first content chunk of a stream, and of each later one.
const FIRST_CHUNK_TOKENS: u32 = 5;
const LATER_CHUNK_TOKENS: u32 = 4;

/// What a scripted stream does next.
#[derive(Clone, Debug)]
enum Play {
    Chunk(Option<String>, u32),
    Break(ProviderFailure),
    ErrorFrame(ProviderFailure),
    Close,
    Done(FinishReason),
}

/// Texts the router read, in order, across every stream of the run.
pub type TextLog = Rc<RefCell<Vec<String>>>;

/// A scripted stream on tokio's clock.
#[derive(Debug)]
pub struct ScriptStream {
    plan: VecDeque<(Duration, Play)>,
    log: TextLog,
}

impl ProviderStream for ScriptStream {
    async fn next_item(&mut self) -> Option<Result<StreamItem, ProviderFailure>> {
        let (delay, play) = self.plan.pop_front()?;
        if !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
        Some(match play {
            Play::Chunk(text, tokens) => {
                let kind = match &text {
                    Some(text) => {
                        self.log.borrow_mut().push(text.clone());
                        ChunkKind::Text
                    }
                    None => ChunkKind::RoleOnly,
                };
                Ok(StreamItem::Chunk(Chunk {
                    kind,
                    tokens,
                    span: Duration::ZERO,
                }))
            }
            Play::Break(failure) => {
                self.plan.clear();
                Err(failure)
            }
            Play::ErrorFrame(failure) => {
                self.plan.clear();
                Ok(StreamItem::ErrorFrame(failure))
            }
            Play::Close => {
                self.plan.clear();
                return None;
            }
            Play::Done(reason) => Ok(StreamItem::Done(reason)),
        })
    }
}

/// Per deployment id: its script and how many calls it has had.
#[derive(Debug, Default)]
pub struct StreamProvider {
    scripts: BTreeMap<String, Vec<StreamScript>>,
    openai_wire: Vec<String>,
    calls: RefCell<BTreeMap<String, usize>>,
    /// Every content chunk the router read.
    pub texts: TextLog,
}

impl StreamProvider {
    /// A provider playing `scripts`; the deployments in `openai_wire` as the OpenAI wire does.
    pub fn new(scripts: BTreeMap<String, Vec<StreamScript>>, openai_wire: Vec<String>) -> Self {
        Self {
            scripts,
            openai_wire,
            ..Self::default()
        }
    }

    fn next(&self, id: &str) -> StreamScript {
        let mut calls = self.calls.borrow_mut();
        let n = calls.entry(id.to_string()).or_default();
        let script = self
            .scripts
            .get(id)
            .and_then(|s| s.get(*n).or(s.last()))
            .cloned()
            .unwrap_or(StreamScript {
                chunks: Some(1),
                ..StreamScript::default()
            });
        *n += 1;
        script
    }
}

fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(s)
}

/// The plan `stream_oracle.py`'s generator plays for `script` on deployment `id`.
fn plan(id: &str, script: &StreamScript, chunks: u32) -> VecDeque<(Duration, Play)> {
    let mut plan = VecDeque::new();
    let mut pending = script.first_delay.map_or(Duration::ZERO, secs);
    let push = |plan: &mut VecDeque<_>, play, pending: &mut Duration| {
        plan.push_back((std::mem::take(pending), play));
    };
    if script.role_only_first {
        push(&mut plan, Play::Chunk(None, 0), &mut pending);
    }
    for i in 0..=chunks {
        if let Some(e) = script.error.as_ref().filter(|e| e.after == i) {
            let failure = failure_of(&e.class, e.status, None);
            push(&mut plan, Play::Break(failure), &mut pending);
            return plan;
        }
        if let Some((_, s)) = script.stall.filter(|(after, _)| *after == i) {
            pending += secs(s);
        }
        if i == chunks {
            break;
        }
        pending += script.inter_chunk.map_or(Duration::ZERO, secs);
        push(
            &mut plan,
            Play::Chunk(Some(format!("{id}:{i} ")), chunk_tokens(i)),
            &mut pending,
        );
    }
    push(&mut plan, Play::Done(FinishReason::Stop), &mut pending);
    plan
}

fn chunk_tokens(i: u32) -> u32 {
    if i == 0 {
        FIRST_CHUNK_TOKENS
    } else {
        LATER_CHUNK_TOKENS
    }
}

/// The plan an `openai_wire` deployment's body plays for `script` (see the module docs).
fn wire_plan(id: &str, script: &StreamScript) -> VecDeque<(Duration, Play)> {
    let w = &script.wire;
    let n = script.chunks.unwrap_or(10);
    let mut plan = VecDeque::new();
    let mut play = |p| plan.push_back((Duration::ZERO, p));
    if w.role_first.unwrap_or(true) {
        play(Play::Chunk(None, 0));
    }
    for i in 0..n {
        let cut = if w.read_error_after == Some(i) {
            Some(Play::Break(ProviderFailure::new(
                FailureKind::ApiConnection,
            )))
        } else if w.read_timeout_after == Some(i) {
            Some(Play::Break(ProviderFailure::new(FailureKind::Timeout)))
        } else if let Some((_, code)) = w.error_frame_after.filter(|(k, _)| *k == i) {
            let failure =
                ProviderFailure::new(FailureKind::from_status(code)).with_status(Some(code));
            Some(Play::ErrorFrame(failure))
        } else if w.truncate_after == Some(i) {
            Some(Play::Close)
        } else {
            None
        };
        if let Some(cut) = cut {
            play(cut);
            return plan;
        }
        play(Play::Chunk(Some(format!("{id}:{i} ")), chunk_tokens(i)));
    }
    let finish = if n > 0 && !script.no_finish {
        FinishReason::Stop
    } else {
        FinishReason::Missing
    };
    play(Play::Done(finish));
    plan
}

impl Provider for StreamProvider {
    type Stream = ScriptStream;

    fn call(
        &self,
        call: ProviderCall<'_>,
    ) -> impl Future<Output = Result<ProviderResponse<ScriptStream>, ProviderFailure>> {
        let id = call.deployment.id.to_string();
        let script = self.next(&id);
        if self.openai_wire.contains(&id) {
            let result = match (script.wire.status, call.request.stream) {
                (Some(status), _) => Err(failure_of(
                    "",
                    Some(status),
                    script.wire.retry_after.as_deref(),
                )),
                (None, true) => Ok(ProviderResponse::Stream(ScriptStream {
                    plan: wire_plan(&id, &script),
                    log: self.texts.clone(),
                })),
                (None, false) => Ok(ProviderResponse::Complete(Completion::default())),
            };
            return std::future::ready(result);
        }
        let result = match (call.request.stream, script.chunks) {
            (true, Some(chunks)) => Ok(ProviderResponse::Stream(ScriptStream {
                plan: plan(&id, &script, chunks),
                log: self.texts.clone(),
            })),
            (_, _) => match &script.error {
                Some(e) => Err(failure_of(&e.class, e.status, None)),
                None => Ok(ProviderResponse::Complete(Completion::default())),
            },
        };
        std::future::ready(result)
    }
}
