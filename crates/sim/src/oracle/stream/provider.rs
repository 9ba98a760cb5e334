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

use std::cell::RefCell;
use std::collections::{BTreeMap, VecDeque};
use std::rc::Rc;
use std::time::Duration;

use routersim_engine::failure::ProviderFailure;
use routersim_engine::provider::{Provider, ProviderCall, ProviderResponse};
use routersim_engine::request::Completion;
use routersim_engine::stream::{Chunk, ChunkKind, FinishReason, ProviderStream, StreamItem};

use super::super::provider::failure_of;
use super::scenario::StreamScript;

/// Tokens of the first content chunk of a stream, and of each later one.
const FIRST_CHUNK_TOKENS: u32 = 5;
const LATER_CHUNK_TOKENS: u32 = 4;

/// What a scripted stream does next.
#[derive(Clone, Debug)]
enum Play {
    Chunk(Option<String>, u32),
    Break(ProviderFailure),
    Done,
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
            Play::Done => Ok(StreamItem::Done(FinishReason::Stop)),
        })
    }
}

/// Per deployment id: its script and how many calls it has had.
#[derive(Debug, Default)]
pub struct StreamProvider {
    scripts: BTreeMap<String, Vec<StreamScript>>,
    calls: RefCell<BTreeMap<String, usize>>,
    /// Every content chunk the router read.
    pub texts: TextLog,
}

impl StreamProvider {
    /// A provider playing `scripts`.
    pub fn new(scripts: BTreeMap<String, Vec<StreamScript>>) -> Self {
        Self {
            scripts,
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
        let tokens = if i == 0 {
            FIRST_CHUNK_TOKENS
        } else {
            LATER_CHUNK_TOKENS
        };
        push(
            &mut plan,
            Play::Chunk(Some(format!("{id}:{i} ")), tokens),
            &mut pending,
        );
    }
    push(&mut plan, Play::Done, &mut pending);
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
        async move { result }
    }
}
