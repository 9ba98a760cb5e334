//! A traffic entry's request template: the request fields every request of the entry
//! shares, from which [`request`](RequestTemplate::request) builds each arrival's request.

use std::collections::BTreeMap;
use std::sync::Arc;

use routersim_engine::config::FallbackTarget;
use routersim_engine::contract::Contract;
use routersim_engine::request::{Request, ResponseFormat};

/// The request fields an explicit request or a stream sets (everything but time and id).
#[derive(Clone, Debug, PartialEq)]
pub struct RequestTemplate {
    /// The model group (or alias) asked for.
    pub model: Arc<str>,
    /// `max_tokens`.
    pub max_tokens: Option<u32>,
    /// The request's own `num_retries`.
    pub num_retries: Option<u32>,
    /// The request's own fallbacks.
    pub fallbacks: Option<Vec<FallbackTarget>>,
    /// `disable_fallbacks` (or `allow_fallbacks: false`).
    pub disable_fallbacks: bool,
    /// `models: [...]`: the chain `profile: multigrid` walks after `model` (shared by every
    /// request of the entry).
    pub models: Arc<[Arc<str>]>,
    /// `metadata.tags`.
    pub tags: Vec<String>,
    /// `response_format` (`json` is constrained output: never continued mid-stream).
    pub response_format: ResponseFormat,
    /// `tools: true`: the request offers tools.
    pub tools: bool,
    /// `workload: NAME`: the workload's contract (`profile: contract`; shared).
    pub contract: Option<Arc<Contract>>,
}

impl RequestTemplate {
    /// A template for `model` with nothing else set.
    pub fn new(model: impl Into<Arc<str>>) -> Self {
        Self {
            model: model.into(),
            max_tokens: None,
            num_retries: None,
            fallbacks: None,
            disable_fallbacks: false,
            models: Arc::default(),
            tags: Vec::new(),
            response_format: ResponseFormat::Text,
            tools: false,
            contract: None,
        }
    }

    /// The request with `id` and `input_tokens` (not streamed, no `output_tokens`).
    pub fn request(&self, id: u64, input_tokens: u32) -> Request {
        Request {
            id,
            model: self.model.clone(),
            input_tokens,
            max_tokens: self.max_tokens,
            num_retries: self.num_retries,
            fallbacks: self.fallbacks.clone(),
            disable_fallbacks: self.disable_fallbacks,
            models: self.models.clone(),
            tags: self.tags.clone(),
            response_format: self.response_format,
            tools: self.tools,
            contract: self.contract.clone(),
            // Spelled out, not `..Request::default()`: that would build (and drop) an `Arc` for
            // the default model and models on every arrival.
            stream: false,
            prefill_tokens: 0,
            output_tokens: None,
            params: BTreeMap::new(),
            client: None,
        }
    }
}
