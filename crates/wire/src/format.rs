//! The three wire formats, and what their decoders share (the `x_routersim` extension, the
//! token estimate). Where a deployment's requests go and the dispatch over the formats are
//! `endpoint.rs`.
//!
//! The format comes from `litellm_params.model`'s prefix, as LiteLLM picks its provider:
//! `anthropic/…` → Anthropic messages, `azure/…` → Azure OpenAI, anything else (`openai/…`, no
//! prefix, other OpenAI-compatible providers) → OpenAI chat completions. Azure shares OpenAI's
//! bodies and differs in its path, its `api-version` query and its `api-key` header.

use serde_json::Value;

/// A wire format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WireFormat {
    /// OpenAI chat completions (and every OpenAI-compatible provider).
    OpenAi,
    /// Anthropic messages.
    Anthropic,
    /// Azure OpenAI.
    Azure,
}

impl WireFormat {
    /// Its name in `provider_calls.csv` and messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::OpenAi => "openai",
            Self::Anthropic => "anthropic",
            Self::Azure => "azure",
        }
    }

    /// The format a `litellm_params.model` picks, and the model name sent upstream (the
    /// prefix stripped; for Azure, the deployment name in the path).
    pub fn from_model(model: &str) -> (Self, &str) {
        if let Some(name) = model.strip_prefix("anthropic/") {
            (Self::Anthropic, name)
        } else if let Some(name) = model.strip_prefix("azure/") {
            (Self::Azure, name)
        } else {
            (Self::OpenAi, model.strip_prefix("openai/").unwrap_or(model))
        }
    }
}

/// A stream event the format could not read (not JSON, or not the format's shape).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MalformedEvent;

/// Whitespace-separated words, the token estimate when a chunk carries no `x_routersim`
/// count (≥ 1 for a content delta).
pub(crate) fn estimate_tokens(text: &str) -> u32 {
    u32::try_from(text.split_whitespace().count())
        .unwrap_or(u32::MAX)
        .max(1)
}

/// The contract's `"x_routersim": {"tokens": N, "span_us": S}` on a chunk, when present.
pub(crate) fn routersim_extension(value: &Value) -> Option<(u32, std::time::Duration)> {
    let ext = value.get("x_routersim")?;
    let tokens = u32::try_from(ext.get("tokens")?.as_u64()?).ok()?;
    let span = ext.get("span_us").and_then(Value::as_u64).unwrap_or(0);
    Some((tokens, std::time::Duration::from_micros(span)))
}

/// The chunk kind the extension names (`"x_routersim": {"kind": "audio", …}`), when it names
/// one: it wins over the delta's shape, which cannot tell every kind apart (Anthropic has no
/// audio or image delta: the fake provider sends those as text).
pub(crate) fn routersim_kind(value: &Value) -> Option<routersim_engine::stream::ChunkKind> {
    let name = value.get("x_routersim")?.get("kind")?.as_str()?;
    routersim_engine::stream::ChunkKind::from_name(name)
}
