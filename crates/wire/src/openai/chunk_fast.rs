//! A typed first reading of an SSE `chat.completion.chunk`, for the frames that make up almost
//! every stream (a content, role or finish chunk with routersim's extension). Building a
//! `serde_json::Value` per frame (an ordered map with owned keys and strings) was the proxy's
//! largest cost on streams; this reads the same fields borrowed from the frame's text.
//!
//! It answers only where its answer is the `Value` reading's: any field of an unexpected type,
//! a duplicate key, an `error` object or a `tool_calls` delta makes it decline
//! ([`read`] returns `None`), and the caller reads the frame as a `Value`. The property test
//! below holds the two readings equal over generated frames.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::time::Duration;

use routersim_engine::stream::{Chunk, ChunkKind, StreamItem};
use serde::Deserialize;
use serde::de::IgnoredAny;

use super::client::finish_reason;
use crate::format::estimate_tokens;
use crate::typed::Obj;

#[derive(Deserialize)]
struct Frame<'a> {
    /// Present and not null: an error frame, read the slow way.
    error: Option<IgnoredAny>,
    #[serde(borrow)]
    choices: Option<Vec<Obj<Choice<'a>>>>,
    #[serde(borrow)]
    x_routersim: Option<Obj<Extension<'a>>>,
}

#[derive(Deserialize)]
struct Choice<'a> {
    #[serde(borrow)]
    finish_reason: Option<Cow<'a, str>>,
    #[serde(borrow)]
    delta: Option<Obj<Delta<'a>>>,
}

#[derive(Deserialize)]
struct Delta<'a> {
    #[serde(borrow)]
    content: Option<Cow<'a, str>>,
    #[serde(borrow)]
    reasoning_content: Option<Cow<'a, str>>,
    tool_calls: Option<IgnoredAny>,
    audio: Option<IgnoredAny>,
    images: Option<IgnoredAny>,
    role: Option<IgnoredAny>,
}

#[derive(Deserialize)]
struct Extension<'a> {
    tokens: Option<u64>,
    span_us: Option<u64>,
    #[serde(borrow)]
    kind: Option<Cow<'a, str>>,
}

/// The items of one frame (not `[DONE]`), or `None` when the frame must be read as a `Value`.
pub(super) fn read(data: &str, out: &mut VecDeque<StreamItem>) -> Option<()> {
    let Obj(frame): Obj<Frame> = serde_json::from_str(data).ok()?;
    if frame.error.is_some() {
        return None;
    }
    let choices = frame.choices?;
    let ext = frame.x_routersim.as_ref().map(|Obj(e)| e);
    // `choices: []` is the usage chunk (`include_usage`): nothing for the caller.
    let Some(Obj(choice)) = choices.first() else {
        return Some(());
    };
    let finish = choice.finish_reason.as_deref().map(finish_reason);
    let chunk = match &choice.delta {
        Some(Obj(delta)) => delta_chunk(delta, ext, finish.is_some())?,
        // No delta (or `null`): the `Value` reading sees no key present, a role-only chunk
        // unless the frame finishes.
        None if finish.is_some() => None,
        None => Some(chunk_of(ChunkKind::RoleOnly, None, ext)),
    };
    out.extend(chunk.map(StreamItem::Chunk));
    out.extend(finish.map(StreamItem::Done));
    Some(())
}

/// As `client::delta_chunk`; `None` outside: decline (a tool call, read the slow way).
fn delta_chunk(
    delta: &Delta<'_>,
    ext: Option<&Extension<'_>>,
    finishing: bool,
) -> Option<Option<Chunk>> {
    fn text<'s>(s: &'s Option<Cow<'_, str>>) -> Option<&'s str> {
        s.as_deref().filter(|s| !s.is_empty())
    }
    let (kind, words) = if let Some(content) = text(&delta.content) {
        (ChunkKind::Text, Some(content))
    } else if delta.tool_calls.is_some() {
        return None;
    } else if let Some(reasoning) = text(&delta.reasoning_content) {
        (ChunkKind::Thinking, Some(reasoning))
    } else if delta.audio.is_some() {
        (ChunkKind::Audio, Some(""))
    } else if delta.images.is_some() {
        (ChunkKind::Image, Some(""))
    } else if finishing && delta.role.is_none() {
        return Some(None);
    } else {
        (ChunkKind::RoleOnly, None)
    };
    Some(Some(chunk_of(kind, words, ext)))
}

fn chunk_of(kind: ChunkKind, words: Option<&str>, ext: Option<&Extension<'_>>) -> Chunk {
    let counted = ext.and_then(|e| {
        let tokens = u32::try_from(e.tokens?).ok()?;
        Some((tokens, Duration::from_micros(e.span_us.unwrap_or(0))))
    });
    let (tokens, span) =
        counted.unwrap_or_else(|| (words.map_or(0, estimate_tokens), Duration::ZERO));
    let named = ext
        .and_then(|e| e.kind.as_deref())
        .and_then(ChunkKind::from_name);
    Chunk {
        kind: named.unwrap_or(kind),
        tokens,
        span,
    }
}

#[cfg(test)]
#[path = "chunk_fast_tests.rs"]
mod tests;
