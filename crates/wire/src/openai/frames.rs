//! The hot bodies of an OpenAI answer as typed records: a stream's content chunk and a whole
//! completion. Both are written once per call or per chunk, so they are serialized straight
//! from borrowed fields instead of building a `serde_json::Value` (an ordered map with owned
//! keys) each time. Field order is the wire's key order; `server_tests.rs` pins the bytes.

use routersim_engine::stream::{Chunk, ChunkKind};
use serde::Serialize;

/// `{"prompt_tokens", "completion_tokens", "total_tokens"}`.
#[derive(Serialize)]
pub(super) struct Usage {
    pub prompt_tokens: u32,
    pub completion_tokens: u32,
    pub total_tokens: u64,
}

impl Usage {
    pub fn new(input_tokens: u32, output_tokens: u32) -> Self {
        Self {
            prompt_tokens: input_tokens,
            completion_tokens: output_tokens,
            total_tokens: u64::from(input_tokens) + u64::from(output_tokens),
        }
    }
}

/// A non-streamed success.
#[derive(Serialize)]
pub(super) struct CompletionBody<'a> {
    pub id: &'a str,
    pub object: &'static str,
    pub created: i64,
    pub model: &'a str,
    /// Empty, or the one choice.
    pub choices: &'a [Choice<'a>],
    pub usage: Usage,
}

#[derive(Serialize)]
pub(super) struct Choice<'a> {
    pub index: u32,
    pub message: Message<'a>,
    pub finish_reason: &'static str,
}

#[derive(Serialize)]
pub(super) struct Message<'a> {
    pub role: &'static str,
    pub content: &'a str,
}

/// One content chunk of a stream: `data: {…}` without the framing.
#[derive(Serialize)]
pub(super) struct ChunkFrame<'a> {
    pub id: &'a str,
    pub object: &'static str,
    pub created: i64,
    pub model: &'a str,
    pub choices: [DeltaChoice<'a>; 1],
    pub x_routersim: Extension,
}

/// The last chunks of a stream: the finish chunk (`choices: [{"delta": {}, …}]`) and the usage
/// chunk (`choices: []` and `usage`).
#[derive(Serialize)]
pub(super) struct EndFrame<'a> {
    pub id: &'a str,
    pub object: &'static str,
    pub created: i64,
    pub model: &'a str,
    pub choices: &'a [FinishChoice],
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
}

#[derive(Serialize)]
pub(super) struct FinishChoice {
    pub index: u32,
    pub delta: EmptyDelta,
    pub finish_reason: &'static str,
}

/// `{}`.
#[derive(Serialize)]
pub(super) struct EmptyDelta {}

#[derive(Serialize)]
pub(super) struct DeltaChoice<'a> {
    pub index: u32,
    pub delta: Delta<'a>,
    /// Always `null` on a content chunk.
    pub finish_reason: Option<&'static str>,
}

/// A chunk's delta, one shape per [`ChunkKind`].
#[derive(Serialize)]
#[serde(untagged)]
pub(super) enum Delta<'a> {
    RoleOnly {
        role: &'static str,
        content: &'static str,
    },
    Text {
        content: &'a str,
    },
    ToolCall {
        tool_calls: [ToolCall; 1],
    },
    Thinking {
        reasoning_content: &'a str,
    },
    Audio {
        audio: Audio,
    },
    Image {
        images: [Image; 1],
    },
}

#[derive(Serialize)]
pub(super) struct ToolCall {
    index: u32,
    id: &'static str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: Function,
}

#[derive(Serialize)]
pub(super) struct Function {
    name: &'static str,
    arguments: &'static str,
}

#[derive(Serialize)]
pub(super) struct Audio {
    id: &'static str,
    data: &'static str,
}

#[derive(Serialize)]
pub(super) struct Image {
    #[serde(rename = "type")]
    kind: &'static str,
    image_url: ImageUrl,
}

#[derive(Serialize)]
pub(super) struct ImageUrl {
    url: &'static str,
}

impl<'a> Delta<'a> {
    /// The delta of a chunk of `kind`; `text` is its words (content or reasoning).
    pub fn of(kind: ChunkKind, text: &'a str) -> Self {
        match kind {
            ChunkKind::RoleOnly => Delta::RoleOnly {
                role: "assistant",
                content: "",
            },
            ChunkKind::Text => Delta::Text { content: text },
            ChunkKind::ToolCall => Delta::ToolCall {
                tool_calls: [ToolCall {
                    index: 0,
                    id: "call_routersim",
                    kind: "function",
                    function: Function {
                        name: "routersim_tool",
                        arguments: "{}",
                    },
                }],
            },
            ChunkKind::Thinking => Delta::Thinking {
                reasoning_content: text,
            },
            ChunkKind::Audio => Delta::Audio {
                audio: Audio {
                    id: "audio_routersim",
                    data: "AAAA",
                },
            },
            ChunkKind::Image => Delta::Image {
                images: [Image {
                    kind: "image_url",
                    image_url: ImageUrl {
                        url: "data:image/png;base64,AAAA",
                    },
                }],
            },
        }
    }
}

/// A streamed chunk's `x_routersim` extension: its exact tokens, span and kind.
#[derive(Serialize)]
pub(super) struct Extension {
    pub tokens: u32,
    pub span_us: u64,
    pub kind: &'static str,
}

impl Extension {
    pub fn of(chunk: &Chunk) -> Self {
        Self {
            tokens: chunk.tokens,
            span_us: chunk.span.as_micros() as u64,
            kind: chunk.kind.as_str(),
        }
    }
}
