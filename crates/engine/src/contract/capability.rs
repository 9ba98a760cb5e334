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

pub use crate::config::SchemaMode;
pub use crate::event::FilterReason;

/// Output tokens a cost estimate assumes when the request sets no `max_tokens`.
pub const DEFAULT_ESTIMATED_OUTPUT_TOKENS: u32 = 256;

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
