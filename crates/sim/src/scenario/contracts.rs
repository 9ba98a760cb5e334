//! `contracts:` — the workloads' routing contracts (`profile: contract`), read as plain serde
//! types and then validated, each mistake named by its YAML path. Traffic names its workload
//! (`workload: NAME`); each request of the entry carries the contract.
//!
//! ```yaml
//! contracts:
//!   - name: invoice_extraction
//!     modalities: [text, image]          # default [text]
//!     max_input_tokens: 50000            # the workload's largest prompt (traffic must fit)
//!     requires_tools: false
//!     structured_output: {required: true, schema_id: invoice-v3, strict: true}
//!     allowed_model_classes: [document-extraction]
//!     allowed_regions: [eu-west]         # default: any
//!     max_cost_usd: 0.08
//!     deadline_ms: 8000                  # 1 ms to 10 years; default: router_settings.request_deadline
//!     require_complete: true             # reject finish_reason: length (default false)
//! ```

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use routersim_config::duration::{DurationError, MAX_DURATION};
use routersim_engine::contract::{Contract, StructuredOutput, schema};
use serde::Deserialize;

use super::ctx::Ctx;
use super::error::ScenarioError;

/// One `contracts` entry, as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawContract {
    name: String,
    modalities: Option<Vec<String>>,
    max_input_tokens: Option<u32>,
    requires_tools: Option<bool>,
    structured_output: Option<RawStructured>,
    allowed_model_classes: Option<Vec<String>>,
    allowed_regions: Option<Vec<String>>,
    max_cost_usd: Option<f64>,
    deadline_ms: Option<u64>,
    require_complete: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawStructured {
    required: Option<bool>,
    schema_id: String,
    strict: Option<bool>,
}

/// The modalities a contract may require.
const MODALITIES: [&str; 4] = ["text", "image", "audio", "file"];

/// Every contract, by name, validated.
pub(super) fn validate_contracts(
    ctx: &Ctx<'_>,
    raw: Vec<RawContract>,
) -> Result<BTreeMap<String, Arc<Contract>>, ScenarioError> {
    let mut contracts = BTreeMap::new();
    for (i, c) in raw.into_iter().enumerate() {
        let at = |key: &str| format!("contracts[{i}].{key}");
        if c.name.trim().is_empty() {
            return Err(ctx.error(&at("name"), "must not be empty"));
        }
        if contracts.contains_key(&c.name) {
            return Err(ctx.error(&at("name"), format!("duplicate contract name {:?}", c.name)));
        }
        let modalities = c.modalities.unwrap_or_else(|| vec!["text".to_string()]);
        for (j, m) in modalities.iter().enumerate() {
            if !MODALITIES.contains(&m.as_str()) {
                return Err(ctx.error(
                    &format!("contracts[{i}].modalities[{j}]"),
                    format!("expected one of {}, found {m:?}", MODALITIES.join(", ")),
                ));
            }
        }
        let structured_output = match c.structured_output {
            None => None,
            Some(s) => {
                if schema::lookup(&s.schema_id).is_none() {
                    return Err(ctx.error(
                        &at("structured_output.schema_id"),
                        format!(
                            "no built-in schema {:?}; known: {}",
                            s.schema_id,
                            schema::schema_ids()
                        ),
                    ));
                }
                Some(StructuredOutput {
                    required: s.required.unwrap_or(true),
                    schema_id: Arc::from(s.schema_id.as_str()),
                    strict: s.strict.unwrap_or(false),
                })
            }
        };
        if let Some(cost) = c.max_cost_usd
            && !(cost.is_finite() && cost >= 0.0)
        {
            return Err(ctx.error(
                &at("max_cost_usd"),
                format!("expected a cost in USD of 0 or more, found {cost}"),
            ));
        }
        if c.deadline_ms == Some(0) {
            return Err(ctx.error(&at("deadline_ms"), "the deadline must be above 0 ms"));
        }
        let deadline = c.deadline_ms.map(Duration::from_millis);
        if let Some(ms) = c.deadline_ms
            && deadline.is_some_and(|d| d > MAX_DURATION)
        {
            let too_long = DurationError::TooLong {
                found: format!("{ms} ms"),
            };
            return Err(ctx.error(&at("deadline_ms"), too_long.to_string()));
        }
        let contract = Contract {
            name: Arc::from(c.name.as_str()),
            modalities,
            max_input_tokens: c.max_input_tokens,
            requires_tools: c.requires_tools.unwrap_or(false),
            structured_output,
            allowed_model_classes: c.allowed_model_classes.unwrap_or_default(),
            allowed_regions: c.allowed_regions.unwrap_or_default(),
            max_cost_usd: c.max_cost_usd,
            deadline,
            require_complete: c.require_complete.unwrap_or(false),
        };
        contracts.insert(c.name, Arc::new(contract));
    }
    Ok(contracts)
}

/// The contract `traffic[i].workload` names (`None` when the entry names none).
pub(super) fn workload_contract(
    ctx: &Ctx<'_>,
    path: &str,
    workload: Option<&str>,
    contracts: &BTreeMap<String, Arc<Contract>>,
) -> Result<Option<Arc<Contract>>, ScenarioError> {
    let Some(name) = workload else {
        return Ok(None);
    };
    if let Some(contract) = contracts.get(name) {
        return Ok(Some(contract.clone()));
    }
    let known: Vec<&str> = contracts.keys().map(String::as_str).collect();
    let known = if known.is_empty() {
        "none".to_string()
    } else {
        known.join(", ")
    };
    Err(ctx.error(
        &format!("{path}.workload"),
        format!("no contract named {name:?}; `contracts` has: {known}"),
    ))
}

/// A traffic entry's prompts fit its workload's `max_input_tokens`.
pub(super) fn check_input_tokens(
    ctx: &Ctx<'_>,
    path: &str,
    contract: Option<&Contract>,
    max_input: u32,
) -> Result<(), ScenarioError> {
    match contract.and_then(|c| c.max_input_tokens) {
        Some(limit) if max_input > limit => Err(ctx.error(
            &format!("{path}.input_tokens"),
            format!(
                "up to {max_input} input tokens, over the workload's max_input_tokens ({limit})"
            ),
        )),
        _ => Ok(()),
    }
}
