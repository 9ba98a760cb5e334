//! The seam the candidate walk asks about contracts ([`RouteAdmission`]): which routes may
//! serve a request, how they rank, whether an answer is accepted, and how much time an attempt
//! needs. A profile without contracts plugs in [`NoAdmission`], whose every answer is "no
//! opinion".

use std::time::Duration;

use super::class::{FailureClass, classify};
use super::{budget, capability, health, validate};
use crate::config::{Deployment, RouterSettings};
use crate::event::{FilterReason, ValidationReason};
use crate::failure::ProviderFailure;
use crate::request::{Completion, Request};

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
    fn ends_walk(&self, _failure: &ProviderFailure, _settings: &RouterSettings) -> bool {
        false
    }

    /// Whether the walk tries only the one route [`RouteAdmission::pick_route`] picks.
    fn picks_one_route(&self, _settings: &RouterSettings) -> bool {
        false
    }

    /// That route's position in `routes` (the group's routes still open; `None`: none).
    fn pick_route(&self, routes: &[&Deployment], _: &mut rand_chacha::ChaCha8Rng) -> Option<usize> {
        (!routes.is_empty()).then_some(0)
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

    fn ends_walk(&self, failure: &ProviderFailure, _settings: &RouterSettings) -> bool {
        classify(failure.kind) == FailureClass::Permanent
    }
}
