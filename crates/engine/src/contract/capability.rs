//! Capability filtering: which routes can still satisfy a request's contract, checked in the
//! seed's order (*"candidates = routes.filter(supports_required_modalities)
//! .filter(context_limit >= estimated_input_size).filter(supports_required_tools)
//! .filter(supports_requested_schema_mode).filter(model_class in allowed_model_classes)
//! .filter(estimated_cost <= remaining_cost_budget).filter(not_temporarily_suppressed)"*).
//!
//! A deployment's capabilities are its `model_info` (LiteLLM's key names where they exist):
//! `modalities` (default `[text]`), `max_input_tokens`, `supports_function_calling`,
//! `supports_response_schema` / `schema_modes`, `model_class`, `region`, and the prices.
//! What a deployment does not declare it does not have (except text, and an unknown price or
//! context, which never filters): a fallback group is built from tested capabilities.

use crate::config::Deployment;
use crate::request::Request;

/// Output tokens a cost estimate assumes when the request sets no `max_tokens`.
pub const DEFAULT_ESTIMATED_OUTPUT_TOKENS: u32 = 256;

/// A structured-output mode a route offers (`model_info.schema_modes`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum SchemaMode {
    /// JSON mode: JSON, any shape.
    JsonObject,
    /// A JSON schema, best effort.
    JsonSchema,
    /// A JSON schema, constrained decoding.
    Strict,
}

impl SchemaMode {
    /// Its name in configs.
    pub const fn as_str(self) -> &'static str {
        match self {
            SchemaMode::JsonObject => "json_object",
            SchemaMode::JsonSchema => "json_schema",
            SchemaMode::Strict => "strict",
        }
    }

    /// Parses a config name.
    pub fn from_name(name: &str) -> Option<Self> {
        [
            SchemaMode::JsonObject,
            SchemaMode::JsonSchema,
            SchemaMode::Strict,
        ]
        .into_iter()
        .find(|m| m.as_str() == name)
    }
}

/// Why a route was filtered out before ranking (the `route_filtered` event's `reason`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum FilterReason {
    /// A required modality is not supported.
    Modalities,
    /// The route's context window is under the estimated input.
    Context,
    /// The contract needs tools; the route has no function calling.
    Tools,
    /// The route lacks the schema mode the contract's structured output needs.
    SchemaMode,
    /// The route's model class is not allowed.
    ModelClass,
    /// The route's region is not allowed.
    Region,
    /// The estimated cost is over what is left of the cost budget.
    Cost,
    /// The route is cooling (or held by recovery).
    Suppressed,
}

impl FilterReason {
    /// Every reason, in filter order.
    pub const ALL: [FilterReason; 8] = [
        FilterReason::Modalities,
        FilterReason::Context,
        FilterReason::Tools,
        FilterReason::SchemaMode,
        FilterReason::ModelClass,
        FilterReason::Region,
        FilterReason::Cost,
        FilterReason::Suppressed,
    ];

    /// Its name in reports.
    pub const fn as_str(self) -> &'static str {
        match self {
            FilterReason::Modalities => "modalities",
            FilterReason::Context => "context",
            FilterReason::Tools => "tools",
            FilterReason::SchemaMode => "schema_mode",
            FilterReason::ModelClass => "model_class",
            FilterReason::Region => "region",
            FilterReason::Cost => "cost",
            FilterReason::Suppressed => "suppressed",
        }
    }
}

/// The estimated cost of one answer of `d` to `request`, in USD (unknown prices count 0).
pub fn estimated_cost(request: &Request, d: &Deployment) -> f64 {
    let output = request
        .max_tokens
        .unwrap_or(DEFAULT_ESTIMATED_OUTPUT_TOKENS);
    f64::from(request.input_tokens) * d.input_cost_per_token.unwrap_or(0.0)
        + f64::from(output) * d.output_cost_per_token.unwrap_or(0.0)
}

/// The cost of an answer of `output_tokens` tokens from `d`, in USD.
pub fn answer_cost(request: &Request, d: &Deployment, output_tokens: u32) -> f64 {
    f64::from(request.input_tokens) * d.input_cost_per_token.unwrap_or(0.0)
        + f64::from(output_tokens) * d.output_cost_per_token.unwrap_or(0.0)
}

/// The first filter `d` fails for `request`'s contract (none without a contract).
pub fn filter(
    request: &Request,
    d: &Deployment,
    suppressed: bool,
    spent_usd: f64,
) -> Option<FilterReason> {
    let contract = request.contract.as_deref()?;
    let supports = |m: &String| {
        d.modalities.iter().any(|own| own == m) || (d.modalities.is_empty() && m == "text")
    };
    if !contract.modalities.iter().all(supports) {
        return Some(FilterReason::Modalities);
    }
    if d.max_input_tokens
        .is_some_and(|limit| limit < request.input_tokens)
    {
        return Some(FilterReason::Context);
    }
    if contract.requires_tools && !d.supports_function_calling {
        return Some(FilterReason::Tools);
    }
    if let Some(structured) = contract.structured_output.as_ref().filter(|s| s.required) {
        let needed = if structured.strict {
            SchemaMode::Strict
        } else {
            SchemaMode::JsonSchema
        };
        if !d.schema_modes.contains(&needed) {
            return Some(FilterReason::SchemaMode);
        }
    }
    if !contract.allowed_model_classes.is_empty()
        && !d
            .model_class
            .as_ref()
            .is_some_and(|c| contract.allowed_model_classes.contains(c))
    {
        return Some(FilterReason::ModelClass);
    }
    if !contract.allowed_regions.is_empty()
        && !d
            .region
            .as_ref()
            .is_some_and(|r| contract.allowed_regions.contains(r))
    {
        return Some(FilterReason::Region);
    }
    if let Some(budget) = contract.max_cost_usd
        && estimated_cost(request, d) > budget - spent_usd
    {
        return Some(FilterReason::Cost);
    }
    if suppressed {
        return Some(FilterReason::Suppressed);
    }
    None
}
