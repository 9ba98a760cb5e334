//! The router's configuration, validated.
//!
//! Read in two phases (as TensorZero does): the `routersim-config` crate parses LiteLLM's proxy
//! `config.yaml` shape into a raw tree and walks it into these validated types, naming the YAML
//! path of anything wrong. Everything the engine decides from lives here; keys it does not model
//! are listed in [`RouterConfig::ignored_keys`] and keys LiteLLM itself would not know (typos)
//! in [`RouterConfig::unknown_keys`]; values are never resolved (no `os.environ/…` secret is
//! ever read).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::failure::FailureKind;
use crate::stream::StreamRecovery;

/// Implements `ALL`, `NAMES`, `as_str`, `from_name` and `choices` for a fieldless enum from one
/// table: each variant with its canonical name, then any other spelling it accepts. A new
/// variant is one line of the table (`as_str` matches every variant, so the compiler asks for
/// it).
macro_rules! name_table {
    ($ty:ident { $($variant:ident => $name:literal $(| $alias:literal)*,)+ }) => {
        impl $ty {
            /// Every value, in table order.
            pub const ALL: [$ty; [$($ty::$variant),+].len()] = [$($ty::$variant),+];

            /// Every accepted spelling (each canonical name, then its other spellings), for
            /// error messages.
            pub const NAMES: [&'static str; [$($name $(, $alias)*),+].len()] =
                [$($name $(, $alias)*),+];

            /// The canonical name.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($ty::$variant => $name,)+
                }
            }

            /// Parses a name as users write it (trimmed; any accepted spelling).
            pub fn from_name(name: &str) -> Option<Self> {
                match name.trim() {
                    $($name $(| $alias)* => Some($ty::$variant),)+
                    _ => None,
                }
            }

            /// The canonical names as the choice an error message expects: `a or b`.
            pub fn choices() -> String {
                Self::ALL.map(Self::as_str).join(" or ")
            }
        }
    };
}

/// Default `num_retries` (LiteLLM's).
pub const DEFAULT_NUM_RETRIES: u32 = 2;
/// Default `cooldown_time` (LiteLLM's).
pub const DEFAULT_COOLDOWN_TIME: Duration = Duration::from_secs(5);
/// Default `max_fallbacks` (LiteLLM's), unless `ROUTER_MAX_FALLBACKS` says otherwise.
pub const DEFAULT_MAX_FALLBACKS: u32 = 5;
/// The longest duration any input may state: 10 years (87,600 h). Router timeouts, cooldowns
/// and intervals here; latencies, stalls, fault windows and traffic times in a scenario. The
/// virtual clock serves longer ones exactly (tokio re-files a timer past its 2.2-year wheel
/// each time the wheel turns), but an instant plus a duration must never overflow
/// (`timeout: 1e19` would), and a run's sums of durations (arrival, attempts, waits) stay far
/// inside the 584,000 years of the reports' microsecond counters with this bound.
pub const MAX_DURATION: Duration = Duration::from_secs(87_600 * 3600);
/// The environment variable LiteLLM reads for the fallback depth limit.
pub const MAX_FALLBACKS_ENV: &str = "ROUTER_MAX_FALLBACKS";

/// A validated router configuration.
#[derive(Clone, Debug, Default)]
pub struct RouterConfig {
    /// Every deployment, in `model_list` order.
    pub deployments: Vec<Deployment>,
    /// The router-wide settings.
    pub settings: RouterSettings,
    /// YAML paths of keys LiteLLM knows but the engine does not model (listed once, never an
    /// error).
    pub ignored_keys: Vec<String>,
    /// Keys LiteLLM itself would not know (a misspelt `router_settings` key or section), each
    /// with the closest known key; they load, and do nothing.
    pub unknown_keys: Vec<UnknownKey>,
    /// Things that load but look wrong (a fallback to an unknown group, a self-reference).
    pub warnings: Vec<String>,
}

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
    pub schema_modes: Vec<crate::contract::capability::SchemaMode>,
    /// `model_info.model_class` (`profile: contract`).
    pub model_class: Option<String>,
    /// `model_info.region` (`profile: contract`).
    pub region: Option<String>,
    /// Every other `litellm_params` key, as written.
    pub params: BTreeMap<String, Value>,
    /// Every other `model_info` key, as written.
    pub info: BTreeMap<String, Value>,
}

/// The routing strategy named by `router_settings.routing_strategy`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RoutingStrategyName {
    /// `simple-shuffle` (LiteLLM's default): random, by weight/rpm/tpm when given.
    #[default]
    SimpleShuffle,
    /// `weighted` (and the deprecated `tag-based-routing`): random by `weight`.
    Weighted,
    /// `priority-based-routing`: lowest `model_info.priority` first.
    PriorityBased,
    /// `least-busy`: fewest in-flight requests.
    LeastBusy,
    /// `latency-based-routing`: best recent latency.
    LatencyBased,
    /// `cost-based-routing`: cheapest per token.
    CostBased,
    /// `usage-based-routing` / `usage-based-routing-v2`: lowest RPM/TPM use this minute.
    UsageBased,
    /// `rate-limit-aware`: drop deployments near their limits, then pick.
    RateLimitAware,
}

name_table!(RoutingStrategyName {
    SimpleShuffle => "simple-shuffle",
    Weighted => "weighted" | "tag-based-routing",
    PriorityBased => "priority-based-routing",
    LeastBusy => "least-busy",
    LatencyBased => "latency-based-routing",
    CostBased => "cost-based-routing",
    UsageBased => "usage-based-routing" | "usage-based-routing-v2",
    RateLimitAware => "rate-limit-aware",
});

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

/// One fallback target: a model group, and params that override the request's for that hop.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FallbackTarget {
    /// The target model group.
    pub model: String,
    /// The target dict's other keys (e.g. `temperature: 0`), as written: merged into the
    /// hop's params.
    pub overrides: BTreeMap<String, Value>,
    /// `num_retries` among the overrides, read as a retry count (at most
    /// [`MAX_NUM_RETRIES`](load::MAX_NUM_RETRIES)): the hop's own retry count.
    pub num_retries: Option<u32>,
    /// `max_tokens` among the overrides, read as a count: the hop's own `max_tokens`.
    pub max_tokens: Option<u32>,
}

impl FallbackTarget {
    /// A plain target with no overrides.
    pub fn group(model: impl Into<String>) -> Self {
        Self {
            model: model.into(),
            ..Self::default()
        }
    }
}

/// A fallback list: single-key entries mapping a model group (or `"*"`) to ordered targets.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FallbackMap {
    /// Entries in the order written; the first entry for a group wins.
    pub entries: Vec<(String, Vec<FallbackTarget>)>,
}

impl FallbackMap {
    /// The targets for `group`, if an entry names it.
    pub fn get(&self, group: &str) -> Option<&[FallbackTarget]> {
        self.entries
            .iter()
            .find(|(key, _)| key == group)
            .map(|(_, targets)| targets.as_slice())
    }

    /// True when no entry exists.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// `router_settings` (with fallback keys also read from `litellm_settings`).
#[derive(Clone, Debug)]
pub struct RouterSettings {
    /// `routing_strategy`.
    pub routing_strategy: RoutingStrategyName,
    /// `num_retries` (default 2).
    pub num_retries: u32,
    /// `retry_after`: the floor of the exponential backoff (default 0).
    pub retry_after: Duration,
    /// `cooldown_time` (default 5 s).
    pub cooldown_time: Duration,
    /// `allowed_fails`: `Some` only when the config sets it (LiteLLM: "takes part only when it
    /// was set explicitly").
    pub allowed_fails: Option<u32>,
    /// `allowed_fails_policy`.
    pub allowed_fails_policy: Option<KindPolicy>,
    /// `retry_policy`.
    pub retry_policy: Option<KindPolicy>,
    /// `model_group_retry_policy`: per model group.
    pub model_group_retry_policy: BTreeMap<String, KindPolicy>,
    /// `fallbacks`, with `default_fallbacks` appended as the `"*"` entry.
    pub fallbacks: FallbackMap,
    /// `context_window_fallbacks`.
    pub context_window_fallbacks: FallbackMap,
    /// `content_policy_fallbacks`.
    pub content_policy_fallbacks: FallbackMap,
    /// `max_fallbacks` (default 5, or `ROUTER_MAX_FALLBACKS`).
    pub max_fallbacks: u32,
    /// `enable_weighted_failover`.
    pub enable_weighted_failover: bool,
    /// `disable_cooldowns`.
    pub disable_cooldowns: bool,
    /// `enable_health_check_routing`.
    pub enable_health_check_routing: bool,
    /// `timeout`: a deadline on each attempt, unless the deployment sets its own.
    pub timeout: Option<Duration>,
    /// `model_group_alias`: alias → model group.
    pub model_group_alias: BTreeMap<String, String>,
    /// `model_group_alias` entries LiteLLM loads but cannot route (a list, a number, a mapping
    /// without a `model` string): alias → what it maps to. A request for one fails with
    /// `bad_request` (see `router::walk`), as in LiteLLM 1.110.2.
    pub unroutable_aliases: BTreeMap<String, String>,
    /// `stream_timeout`: time allowed to a stream's first token.
    pub stream_timeout: Option<Duration>,
    /// `stream_stall_timeout`: longest gap between chunks before a stream counts as stalled.
    pub stream_stall_timeout: Option<Duration>,
    /// `enable_mid_stream_fallback_continuation`.
    pub enable_mid_stream_fallback_continuation: bool,
    /// `stream_recovery: litellm | multigrid`.
    pub stream_recovery: StreamRecovery,
    /// `enable_pre_call_checks`: skip deployments over their RPM/TPM (or a prompt's window).
    pub enable_pre_call_checks: bool,
    /// `recovery: ttl | half_open`.
    pub recovery: Recovery,
    /// `classification: litellm | deltallm`.
    pub classification: Classification,
    /// `health_check_interval`: background probes of every deployment (DeltaLLM).
    pub health_check_interval: Option<Duration>,
    /// `profile: litellm | deltallm`, as written (its bundle is already applied).
    pub profile: Option<Profile>,
    /// `attempts_per_candidate` (`profile: multigrid`): tries each candidate route gets, the
    /// first included (default 3).
    pub attempts_per_candidate: u32,
    /// `allow_fallbacks` (`profile: multigrid`): `false` stops every request after its first
    /// usable route (default true).
    pub allow_fallbacks: bool,
    /// `request_deadline` (`profile: multigrid`): the end-to-end deadline of a non-streamed
    /// request (default 60 s).
    pub request_deadline: Duration,
    /// `stream_deadline` (`profile: multigrid`): the end-to-end deadline of a streamed request
    /// (default 300 s).
    pub stream_deadline: Duration,
    /// `max_attempts` (`profile: contract`): provider attempts per request, every route and
    /// retry included (default 2: one primary attempt plus one fallback).
    pub max_attempts: u32,
    /// `same_route_retries` (`profile: contract`): retries on the same route, for connection
    /// failures and capacity failures with a Retry-After (default 1).
    pub same_route_retries: u32,
    /// `connect_allowance` (`profile: contract`): time an attempt needs before its call
    /// (default 300 ms).
    pub connect_allowance: Duration,
    /// `generation_allowance` (`profile: contract`): time an answer needs; unset, the
    /// deployment's measured mean latency (1 s before one is measured).
    pub generation_allowance: Option<Duration>,
    /// `validation_allowance` (`profile: contract`): time validation needs (default 50 ms).
    pub validation_allowance: Duration,
    /// `retry_budget` (tower's `TpsBudget`; off when `None`).
    pub retry_budget: Option<crate::alternatives::RetryBudgetSettings>,
    /// `retry_throttling` (gRPC's retry throttling; off when `None`).
    pub retry_throttling: Option<crate::alternatives::RetryThrottlingSettings>,
    /// `outlier_detection` (Envoy's consecutive-5xx ejection; off when `None`).
    pub outlier_detection: Option<crate::alternatives::OutlierSettings>,
    /// `hedge_after` (request hedging; off when `None`).
    pub hedge_after: Option<crate::alternatives::HedgeAfter>,
    /// `replay: always | dedupe | never`: what follows an ambiguous attempt (every profile;
    /// default `always`, see [`crate::replay`]).
    pub replay: crate::replay::Replay,
}

/// Default `max_attempts` (the contract seed: "one primary attempt plus one fallback").
pub const DEFAULT_MAX_ATTEMPTS: u32 = 2;
/// Default `same_route_retries` (the contract seed: "an optional same-route retry only for
/// an early connection failure").
pub const DEFAULT_SAME_ROUTE_RETRIES: u32 = 1;

/// Default `attempts_per_candidate` (Multigrid: "Three attempts per candidate by default, the
/// first included").
pub const DEFAULT_ATTEMPTS_PER_CANDIDATE: u32 = 3;
/// Default `request_deadline` (Multigrid: "60 seconds non-streaming").
pub const DEFAULT_REQUEST_DEADLINE: Duration = Duration::from_secs(60);
/// Default `stream_deadline` (Multigrid: "300 seconds streaming").
pub const DEFAULT_STREAM_DEADLINE: Duration = Duration::from_secs(300);

/// What happens when a cooldown expires.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Recovery {
    /// LiteLLM's: simply eligible again.
    #[default]
    Ttl,
    /// DeltaLLM's: one trial request at a time; success closes, failure re-cools at once.
    HalfOpen,
}

name_table!(Recovery {
    Ttl => "ttl",
    HalfOpen => "half_open" | "half-open",
});

/// How provider failures are classified.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Classification {
    /// LiteLLM's rules.
    #[default]
    LiteLlm,
    /// DeltaLLM's rules.
    DeltaLlm,
}

name_table!(Classification {
    LiteLlm => "litellm",
    DeltaLlm => "deltallm",
});

/// A named bundle of settings (`router_settings.profile`); explicit settings still win.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Profile {
    /// LiteLLM: `recovery: ttl`, `classification: litellm`, `stream_recovery: litellm`.
    LiteLlm,
    /// DeltaLLM: `recovery: half_open`, `classification: deltallm`.
    DeltaLlm,
    /// What LiteLLM 1.110.2's code does where it departs from its documentation, decision for
    /// decision (checked against recorded traces of the real `litellm.Router`).
    LiteLlm110,
    /// Multigrid's failover and retries (`multigrid-failover-and-retries.md`): an ordered
    /// walk of candidate routes, each with its own attempts, under one end-to-end deadline
    /// (see [`crate::multigrid`]); `stream_recovery: multigrid`.
    Multigrid,
    /// Contract-aware routing with validation before acceptance
    /// (`reliable-llm-routing-contracts.md`): the candidate walk, routes filtered by the
    /// request's contract, bounded attempts, one deadline budget (see [`crate::contract`]).
    Contract,
}

name_table!(Profile {
    LiteLlm => "litellm",
    DeltaLlm => "deltallm",
    LiteLlm110 => "litellm-1.110" | "litellm-1.110.2",
    Multigrid => "multigrid",
    Contract => "contract",
});

impl Profile {
    /// What the profile sets: `(recovery, classification)`.
    pub fn bundle(self) -> (Recovery, Classification) {
        match self {
            Profile::LiteLlm | Profile::LiteLlm110 | Profile::Multigrid | Profile::Contract => {
                (Recovery::Ttl, Classification::LiteLlm)
            }
            Profile::DeltaLlm => (Recovery::HalfOpen, Classification::DeltaLlm),
        }
    }

    /// The `stream_recovery` the profile presets (an explicit `stream_recovery` still wins).
    pub fn stream_recovery(self) -> StreamRecovery {
        match self {
            Profile::Multigrid => StreamRecovery::Multigrid,
            Profile::LiteLlm | Profile::DeltaLlm | Profile::LiteLlm110 | Profile::Contract => {
                StreamRecovery::default()
            }
        }
    }

    /// The `replay` the profile presets (an explicit `replay` still wins): `dedupe` under
    /// `contract` (the contracts seed: *"Ambiguous execution … Deduplicate before
    /// replaying"*), else `always` (what LiteLLM, DeltaLLM and Multigrid do).
    pub fn replay(self) -> crate::replay::Replay {
        match self {
            Profile::Contract => crate::replay::Replay::Dedupe,
            Profile::LiteLlm | Profile::DeltaLlm | Profile::LiteLlm110 | Profile::Multigrid => {
                crate::replay::Replay::Always
            }
        }
    }

    /// Whether the profile reads the candidate-walk keys (`attempts_per_candidate`,
    /// `allow_fallbacks`, `request_deadline`, `stream_deadline`, a request's `models`).
    pub fn walks_candidates(self) -> bool {
        matches!(self, Profile::Multigrid | Profile::Contract)
    }

    /// Whether the profile reads the contract keys (`max_attempts`, `same_route_retries`,
    /// the allowances) and validates answers.
    pub fn reads_contracts(self) -> bool {
        self == Profile::Contract
    }

    /// The LiteLLM release whose code the profile reproduces, when it models one (`litellm`
    /// follows LiteLLM's documented rules, not one release).
    pub fn litellm_version(self) -> Option<&'static str> {
        match self {
            Profile::LiteLlm110 => Some("1.110.2"),
            Profile::LiteLlm | Profile::DeltaLlm | Profile::Multigrid | Profile::Contract => None,
        }
    }
}

impl Default for RouterSettings {
    fn default() -> Self {
        Self {
            routing_strategy: RoutingStrategyName::default(),
            num_retries: DEFAULT_NUM_RETRIES,
            retry_after: Duration::ZERO,
            cooldown_time: DEFAULT_COOLDOWN_TIME,
            allowed_fails: None,
            allowed_fails_policy: None,
            retry_policy: None,
            model_group_retry_policy: BTreeMap::new(),
            fallbacks: FallbackMap::default(),
            context_window_fallbacks: FallbackMap::default(),
            content_policy_fallbacks: FallbackMap::default(),
            max_fallbacks: DEFAULT_MAX_FALLBACKS,
            enable_weighted_failover: false,
            disable_cooldowns: false,
            enable_health_check_routing: false,
            timeout: None,
            model_group_alias: BTreeMap::new(),
            unroutable_aliases: BTreeMap::new(),
            stream_timeout: None,
            stream_stall_timeout: None,
            enable_mid_stream_fallback_continuation: false,
            stream_recovery: StreamRecovery::default(),
            enable_pre_call_checks: false,
            recovery: Recovery::default(),
            classification: Classification::default(),
            health_check_interval: None,
            profile: None,
            attempts_per_candidate: DEFAULT_ATTEMPTS_PER_CANDIDATE,
            allow_fallbacks: true,
            request_deadline: DEFAULT_REQUEST_DEADLINE,
            stream_deadline: DEFAULT_STREAM_DEADLINE,
            max_attempts: DEFAULT_MAX_ATTEMPTS,
            same_route_retries: DEFAULT_SAME_ROUTE_RETRIES,
            connect_allowance: crate::contract::budget::DEFAULT_CONNECT_ALLOWANCE,
            generation_allowance: None,
            validation_allowance: crate::contract::budget::DEFAULT_VALIDATION_ALLOWANCE,
            retry_budget: None,
            retry_throttling: None,
            outlier_detection: None,
            hedge_after: None,
            replay: crate::replay::Replay::default(),
        }
    }
}

/// `max_fallbacks`: the config's value, else `ROUTER_MAX_FALLBACKS` (when it parses), else 5.
pub fn resolve_max_fallbacks(configured: Option<u32>, env_value: Option<&str>) -> u32 {
    configured
        .or_else(|| env_value.and_then(|v| v.trim().parse().ok()))
        .unwrap_or(DEFAULT_MAX_FALLBACKS)
}

/// A key LiteLLM itself would not know, with the closest key it does.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct UnknownKey {
    /// Its YAML path (`router_settings.allowed_fail`, `router_setting`).
    pub path: String,
    /// The closest known key, as a full path (`router_settings.allowed_fails`).
    pub suggestion: Option<String>,
}

impl UnknownKey {
    /// What is wrong with it, without its path: "LiteLLM's Router has no such setting (…);
    /// did you mean …?".
    pub fn message(&self) -> String {
        let policy = |model: &str| {
            format!("LiteLLM's {model} has no such field (it ignores it, and so does routersim)")
        };
        let mut text = if self.path.contains("retry_policy.") {
            policy("RetryPolicy")
        } else if self.path.contains("allowed_fails_policy.") {
            policy("AllowedFailsPolicy")
        } else if self.path.contains('.') {
            "LiteLLM's Router has no such setting (its proxy ignores it, and so does routersim)"
                .to_string()
        } else {
            "not a section LiteLLM's proxy reads (ignored, by routersim too)".to_string()
        };
        if let Some(suggestion) = &self.suggestion {
            text.push_str(&format!("; did you mean {suggestion}?"));
        }
        text
    }
}

impl std::fmt::Display for UnknownKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path, self.message())
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

    #[test]
    fn name_tables_round_trip_and_every_spelling_parses() {
        macro_rules! check {
            ($ty:ident) => {
                for value in $ty::ALL {
                    assert_eq!($ty::from_name(value.as_str()), Some(value));
                }
                for name in $ty::NAMES {
                    assert!($ty::from_name(name).is_some(), "{name}");
                }
            };
        }
        check!(RoutingStrategyName);
        check!(Recovery);
        check!(Classification);
        check!(Profile);
        assert_eq!(Recovery::choices(), "ttl or half_open");
        assert_eq!(RoutingStrategyName::ALL.len(), 8);
        assert_eq!(RoutingStrategyName::NAMES.len(), 10);
    }

    #[test]
    fn max_fallbacks_prefers_config_then_env_then_default() {
        assert_eq!(resolve_max_fallbacks(Some(2), Some("9")), 2);
        assert_eq!(resolve_max_fallbacks(None, Some("9")), 9);
        assert_eq!(resolve_max_fallbacks(None, Some("x")), 5);
        assert_eq!(resolve_max_fallbacks(None, None), 5);
    }
}
