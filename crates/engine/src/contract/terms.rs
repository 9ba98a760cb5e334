//! A workload's contract: what a successful response must provide (the seed: *"Start by
//! describing what a successful response must provide"*). Requests carry it, so it sits below
//! the request and names nothing of the router.

use std::sync::Arc;
use std::time::Duration;

/// `structured_output` of a contract.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StructuredOutput {
    /// `required`: the answer must be JSON of the schema.
    pub required: bool,
    /// `schema_id`: a schema of the built-in registry ([`schema::lookup`](crate::contract::schema::lookup)).
    pub schema_id: Arc<str>,
    /// `strict`: the route must offer strict (constrained) schema mode.
    pub strict: bool,
}

/// A workload's routing contract: what a successful response must provide.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Contract {
    /// The workload's name.
    pub name: Arc<str>,
    /// `modalities`: every one must be supported by the route (default `[text]`).
    pub modalities: Vec<String>,
    /// `max_input_tokens`: the largest prompt of the workload (checked against the traffic).
    pub max_input_tokens: Option<u32>,
    /// `requires_tools`: the route must support function calling; tool calls are validated.
    pub requires_tools: bool,
    /// `structured_output`.
    pub structured_output: Option<StructuredOutput>,
    /// `allowed_model_classes` (empty: any).
    pub allowed_model_classes: Vec<String>,
    /// `allowed_regions` (empty: any).
    pub allowed_regions: Vec<String>,
    /// `max_cost_usd`: the request's cost budget, spent by accepted and rejected answers.
    pub max_cost_usd: Option<f64>,
    /// `deadline_ms`: the end-to-end deadline from arrival.
    pub deadline: Option<Duration>,
    /// `require_complete`: reject a truncated answer (`finish_reason: length`) even without
    /// structured output or tools (the seed's "a required finish reason").
    pub require_complete: bool,
}

impl Contract {
    /// Whether a response must pass validation (structured output, tool calls, or a complete
    /// finish).
    pub fn validates(&self) -> bool {
        self.require_complete || self.has_body_checks()
    }

    /// Whether a response's content is checked (structured output, or tool calls).
    pub fn has_body_checks(&self) -> bool {
        self.requires_tools || self.structured_output.as_ref().is_some_and(|s| s.required)
    }
}
