//! A deployment (`model_list` entry) as the engine reads it, and the per-kind counts
//! (`retry_policy`, `allowed_fails_policy`) a deployment or the router may set.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::modes::SchemaMode;
use crate::failure::FailureKind;

/// One deployment: a `model_list` entry.
#[derive(Clone, Debug, Default)]
pub struct Deployment {
    /// `model_info.id`, else `<model_name>-<index>` (index counting from 0 in `model_list`).
    pub id: Arc<str>,
    /// The model group (`model_name`).
    pub model_name: Arc<str>,
    /// `litellm_params.model`, as written (never resolved).
    pub model: String,
    /// `litellm_params.order`: lower is preferred; `None` sorts after every numbered order.
    pub order: Option<u32>,
    /// `litellm_params.weight` (or `model_info.weight`).
    pub weight: Option<f64>,
    /// `litellm_params.rpm`.
    pub rpm: Option<u64>,
    /// `litellm_params.tpm`.
    pub tpm: Option<u64>,
    /// The deployment's own cooldown time (`litellm_params` or `model_info` `cooldown_time`).
    pub cooldown_time: Option<Duration>,
    /// `litellm_params.num_retries`.
    pub num_retries: Option<u32>,
    /// `litellm_params.timeout`: a deadline on each attempt.
    pub timeout: Option<Duration>,
    /// `model_info.allowed_fails`.
    pub allowed_fails: Option<u32>,
    /// `model_info.allowed_fails_policy`.
    pub allowed_fails_policy: Option<KindPolicy>,
    /// `model_info.tags` (or `litellm_params.tags`).
    pub tags: Vec<String>,
    /// `model_info.priority` (lower first) for `priority-based-routing`.
    pub priority: Option<u32>,
    /// `input_cost_per_token` (`model_info` or `litellm_params`).
    pub input_cost_per_token: Option<f64>,
    /// `output_cost_per_token` (`model_info` or `litellm_params`).
    pub output_cost_per_token: Option<f64>,
    /// `model_info.max_input_tokens`: the pre-call check skips deployments a prompt overflows.
    pub max_input_tokens: Option<u32>,
    /// `model_info.supports_assistant_prefill`: may continue a broken stream.
    pub supports_assistant_prefill: bool,
    /// `litellm_params.stream_timeout`: time allowed to the first token of a stream.
    pub stream_timeout: Option<Duration>,
    /// `model_info.modalities` (`profile: contract`): input modalities (empty: text only).
    pub modalities: Vec<String>,
    /// `model_info.supports_function_calling` (`profile: contract`): tools.
    pub supports_function_calling: bool,
    /// `model_info.schema_modes`, or `supports_response_schema: true` as `[json_object,
    /// json_schema]` (`profile: contract`).
    pub schema_modes: Vec<SchemaMode>,
    /// `model_info.model_class` (`profile: contract`).
    pub model_class: Option<String>,
    /// `model_info.region` (`profile: contract`).
    pub region: Option<String>,
    /// Every other `litellm_params` key, as written.
    pub params: BTreeMap<String, Value>,
    /// Every other `model_info` key, as written.
    pub info: BTreeMap<String, Value>,
}

/// A per-kind count: `retry_policy` (retries) or `allowed_fails_policy` (allowed fails).
///
/// Keys are read from LiteLLM's field names (`RateLimitErrorRetries`,
/// `TimeoutErrorAllowedFails`, …) or from the snake_case kind names (`rate_limit`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KindPolicy {
    /// Counts set for a kind.
    pub per_kind: BTreeMap<FailureKind, u32>,
    /// `DefaultRetries` / `DefaultAllowedFails`.
    pub default: Option<u32>,
}

impl KindPolicy {
    /// The count for `kind`: its own, else the kinds it falls back to
    /// ([`FailureKind::policy_chain`]), else the default.
    pub fn get(&self, kind: FailureKind) -> Option<u32> {
        kind.policy_chain()
            .iter()
            .find_map(|k| self.per_kind.get(k).copied())
            .or(self.default)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy_chain_falls_back_to_bad_request_then_default() {
        let mut policy = KindPolicy::default();
        policy.per_kind.insert(FailureKind::BadRequest, 1);
        policy.default = Some(7);
        assert_eq!(policy.get(FailureKind::ContextWindowExceeded), Some(1));
        assert_eq!(policy.get(FailureKind::ContentPolicyViolation), Some(1));
        assert_eq!(policy.get(FailureKind::Timeout), Some(7));
        policy
            .per_kind
            .insert(FailureKind::ContentPolicyViolation, 0);
        assert_eq!(policy.get(FailureKind::ContentPolicyViolation), Some(0));
    }
}
