//! `profile: contract`: contract-aware routing with validation before acceptance
//! (`reliable-llm-routing-contracts.md`), as a bundle of policy implementations (see
//! [`crate::bundle`]). The walk is the router's candidate walk (`router/candidates.rs`, shared
//! with `profile: multigrid`); this module supplies what the seed adds to it through the
//! [`RouteAdmission`] seam:
//!
//! - **A contract per workload** ([`Contract`]): *"Start by describing what a successful
//!   response must provide"* — modalities, context, tools, structured output, model classes,
//!   cost and deadline. A request carries its workload's contract (`Request::contract`).
//! - **Filter before ranking** ([`capability::filter`]): *"Filter candidate routes against the
//!   contract before considering health, latency, or price"*, in the seed's order: modalities,
//!   context ≥ estimated input, tools, schema mode, model class, estimated cost ≤ remaining
//!   budget, not temporarily suppressed. A filtered route is never tried; the router reports
//!   it (`route_filtered`). The survivors are ranked by health (failures among their last
//!   8 attempts, [`health`]), measured latency, then cost.
//! - **Failure classes** ([`class::FailureClass`]) and a bounded attempt policy
//!   ([`ContractRetryPolicy`]): *"one primary attempt plus one fallback, with an optional
//!   same-route retry only for an early connection failure"* — `max_attempts` (default 2) and
//!   `same_route_retries` (default 1, for connection failures and hinted capacity failures).
//! - **Validation before acceptance** ([`validate::validate`]): every non-streamed response,
//!   the primary's included, against the contract's schema and registered tools ([`schema`]);
//!   a rejected 200 is a `malformed_response` failure with status 200 and a
//!   `validation_rejected` event.
//! - **One latency budget** ([`budget`]): an absolute deadline at arrival (the contract's
//!   `deadline_ms`, else `request_deadline` / `stream_deadline`); no attempt starts when the
//!   time left is under `connect_allowance + generation + validation_allowance`.

pub mod budget;
pub mod capability;
pub mod class;
pub mod health;
mod retry;
pub mod schema;
pub mod validate;

use std::sync::Arc;
use std::time::Duration;

pub use capability::FilterReason;
pub use class::FailureClass;
pub use retry::ContractRetryPolicy;
pub use validate::ValidationReason;

use crate::config::{Deployment, RouterSettings};
use crate::failure::ProviderFailure;
use crate::fallback::FallbackPolicy;
use crate::request::{Completion, Request};

/// `structured_output` of a contract.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StructuredOutput {
    /// `required`: the answer must be JSON of the schema.
    pub required: bool,
    /// `schema_id`: a schema of the built-in registry ([`schema::lookup`]).
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

/// What the candidate walk asks a profile about contracts. Every method has a default that
/// does nothing, so profiles without contracts are unchanged.
pub trait RouteAdmission {
    /// Why deployment `d` may not serve `request` (`None`: it may). `suppressed`: the route
    /// is cooling or held by recovery; `spent_usd`: what the request's answers cost so far.
    fn filter(
        &self,
        _request: &Request,
        _d: &Deployment,
        _suppressed: bool,
        _spent_usd: f64,
    ) -> Option<FilterReason> {
        None
    }

    /// Whether the walk ranks a group's routes by health, measured latency, then cost
    /// (default: config order).
    fn ranks_routes(&self) -> bool {
        false
    }

    /// An attempt on deployment `d` ended (`ok`: an accepted answer).
    fn record(&self, _d: usize, _ok: bool) {}

    /// How unhealthy deployment `d` is for ranking (lower is better; default 0).
    fn unhealth(&self, _d: usize) -> u32 {
        0
    }

    /// Why a successful response is not acceptable (`None`: accept it).
    fn validate(&self, _request: &Request, _done: &Completion) -> Option<ValidationReason> {
        None
    }

    /// The request's end-to-end deadline, when the profile sets one per request.
    fn deadline(&self, _request: &Request) -> Option<Duration> {
        None
    }

    /// The time an attempt on `d` needs before the deadline for it to be launched.
    fn attempt_allowance(
        &self,
        _d: &Deployment,
        _measured: Option<Duration>,
        _settings: &RouterSettings,
    ) -> Duration {
        Duration::ZERO
    }

    /// The most provider attempts one request may make (`None`: no cap of its own).
    fn max_attempts(&self, _settings: &RouterSettings) -> Option<u32> {
        None
    }

    /// Whether `failure` ends the whole walk (not only the candidate's attempts).
    fn ends_walk(&self, _failure: &ProviderFailure) -> bool {
        false
    }
}

/// No contracts: every default.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoAdmission;

impl RouteAdmission for NoAdmission {}

/// The contract profile's admission rules (and the route health its ranking reads).
#[derive(Debug, Default)]
pub struct ContractAdmission {
    health: health::RouteHealth,
}

impl RouteAdmission for ContractAdmission {
    fn filter(
        &self,
        request: &Request,
        d: &Deployment,
        suppressed: bool,
        spent_usd: f64,
    ) -> Option<FilterReason> {
        capability::filter(request, d, suppressed, spent_usd)
    }

    fn ranks_routes(&self) -> bool {
        true
    }

    fn record(&self, d: usize, ok: bool) {
        self.health.record(d, ok);
    }

    fn unhealth(&self, d: usize) -> u32 {
        self.health.failures(d)
    }

    fn validate(&self, request: &Request, done: &Completion) -> Option<ValidationReason> {
        let contract = request.contract.as_deref()?;
        validate::validate(contract, done).err()
    }

    fn deadline(&self, request: &Request) -> Option<Duration> {
        request.contract.as_ref().and_then(|c| c.deadline)
    }

    fn attempt_allowance(
        &self,
        d: &Deployment,
        measured: Option<Duration>,
        settings: &RouterSettings,
    ) -> Duration {
        budget::allowance(d, measured, settings)
    }

    fn max_attempts(&self, settings: &RouterSettings) -> Option<u32> {
        Some(settings.max_attempts)
    }

    fn ends_walk(&self, failure: &ProviderFailure) -> bool {
        class::classify(failure.kind) == FailureClass::Permanent
    }
}

/// The contract profile walks candidates (every deployment of the group asked for, then the
/// request's `models` chain), as Multigrid does.
#[derive(Clone, Copy, Debug, Default)]
pub struct ContractFallbacks;

impl FallbackPolicy for ContractFallbacks {
    fn walks_candidates(&self) -> bool {
        true
    }
}
