//! A traffic entry's request template, and the engine request built from it per arrival.
//!
//! Why two types and not the engine's [`Request`] alone: a template is what a traffic entry
//! (or a `traffic_file` row) says about *every* request it produces, and a `Request` is one of
//! them. The template holds no id, none of what each arrival draws (`input_tokens` from a
//! range, `stream` from a share, `output_tokens` from a range: the [`Draw`]) and none of the
//! router's own fields (`prefill_tokens` and `params`, which the router sets per hop, and
//! `client`, which the run loop sets); a `Request` used as a template would carry all of
//! those with values that mean nothing, silently overwritten per arrival. The template is
//! kept for the whole run while its requests come and go, and compared as a value (a parsed
//! scenario's traffic, entry by entry), which a `Request` is not.
//!
//! So the relationship is one way and in one place: [`RequestTemplate::into_request`] is the
//! only code that lists a `Request`'s fields, and every arrival (explicit, stream, file row)
//! goes through it. It spells the router's fields out rather than `..Request::default()`:
//! that would build (and drop) an `Arc` for the default model and models on every arrival,
//! and this is the hot path of a run of millions.

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

/// What one arrival decides for its request; everything else is its template's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Draw {
    /// The request's id: arrivals counted from 0.
    pub id: u64,
    /// The prompt's size (drawn from the entry's range, or its one size).
    pub input_tokens: u32,
    /// Whether it is streamed (drawn from the entry's share, or as written).
    pub stream: bool,
    /// The answer's length, when the entry sets one (drawn from its range).
    pub output_tokens: Option<u32>,
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

    /// The request of one arrival of a template that stays (a `traffic` entry's): the shared
    /// fields are reference-counted, the rest copied.
    pub fn request(&self, draw: Draw) -> Request {
        self.clone().into_request(draw)
    }

    /// The request of one arrival, the template used up (a `traffic_file` row's own).
    pub fn into_request(self, draw: Draw) -> Request {
        let Self {
            model,
            max_tokens,
            num_retries,
            fallbacks,
            disable_fallbacks,
            models,
            tags,
            response_format,
            tools,
            contract,
        } = self;
        let Draw {
            id,
            input_tokens,
            stream,
            output_tokens,
        } = draw;
        Request {
            id,
            model,
            input_tokens,
            max_tokens,
            num_retries,
            fallbacks,
            disable_fallbacks,
            models,
            tags,
            stream,
            response_format,
            tools,
            output_tokens,
            contract,
            // The router's own: it sets them per hop (`prefill_tokens`, `params`), the run
            // loop per send (`client`).
            prefill_tokens: 0,
            params: BTreeMap::new(),
            client: None,
        }
    }
}
