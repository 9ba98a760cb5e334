//! What a profile plugs into the router: one implementation of each policy trait.
//!
//! A profile is a bundle of policies, never a branch inside the router: the builder asks the
//! bundle for each policy the caller did not replace ([`crate::router::RouterBuilder`]), and
//! the loader presets the settings a profile names (`recovery`, `classification`).
//! `litellm-1.110` plugs in [`crate::litellm110`]'s policies, `multigrid`
//! [`crate::multigrid`]'s, `contract` [`crate::contract`]'s (with Multigrid's full-jitter
//! backoff, which is the contract seed's "capped exponential backoff with jitter" and lets a
//! Retry-After win); every other profile (and none) the documented LiteLLM rules.

use crate::backoff::{Backoff, LiteLlmBackoff};
use crate::config::Profile;
use crate::contract::{
    ContractAdmission, ContractFallbacks, ContractRetryPolicy, NoAdmission, RouteAdmission,
};
use crate::cooldown::{CooldownTrigger, LiteLlmCooldown};
use crate::fallback::{DocumentedFallbacks, FallbackPolicy};
use crate::litellm110::{
    LiteLlm110Backoff, LiteLlm110Cooldown, LiteLlm110Fallbacks, LiteLlm110RetryPolicy,
};
use crate::multigrid::{MultigridBackoff, MultigridFallbacks, MultigridRetryPolicy};
use crate::retry::{LiteLlmRetryPolicy, RetryPolicy};
use crate::stream_rules::{self, StreamRules};

/// Which policies a profile uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PolicyBundle {
    /// LiteLLM's documented rules (also DeltaLLM's retry, backoff and cooldown trigger).
    Documented,
    /// What LiteLLM 1.110.2's code does.
    LiteLlm110,
    /// Multigrid's failover and retries (`crate::multigrid`).
    Multigrid,
    /// Contract-aware routing (`crate::contract`).
    Contract,
}

impl PolicyBundle {
    /// The bundle of `profile` (none: the documented rules).
    pub fn for_profile(profile: Option<Profile>) -> Self {
        match profile {
            Some(Profile::LiteLlm110) => PolicyBundle::LiteLlm110,
            Some(Profile::Multigrid) => PolicyBundle::Multigrid,
            Some(Profile::Contract) => PolicyBundle::Contract,
            Some(Profile::LiteLlm | Profile::DeltaLlm) | None => PolicyBundle::Documented,
        }
    }

    /// The retry policy.
    pub fn retry(self) -> Box<dyn RetryPolicy> {
        match self {
            PolicyBundle::Documented => Box::new(LiteLlmRetryPolicy),
            PolicyBundle::LiteLlm110 => Box::new(LiteLlm110RetryPolicy),
            PolicyBundle::Multigrid => Box::new(MultigridRetryPolicy),
            PolicyBundle::Contract => Box::new(ContractRetryPolicy),
        }
    }

    /// The backoff.
    pub fn backoff(self) -> Box<dyn Backoff> {
        match self {
            PolicyBundle::Documented => Box::new(LiteLlmBackoff),
            PolicyBundle::LiteLlm110 => Box::new(LiteLlm110Backoff),
            PolicyBundle::Multigrid | PolicyBundle::Contract => Box::new(MultigridBackoff),
        }
    }

    /// The cooldown trigger.
    pub fn cooldown(self) -> Box<dyn CooldownTrigger> {
        match self {
            PolicyBundle::Documented | PolicyBundle::Multigrid | PolicyBundle::Contract => {
                Box::new(LiteLlmCooldown::default())
            }
            PolicyBundle::LiteLlm110 => Box::new(LiteLlm110Cooldown::default()),
        }
    }

    /// The choice of fallback list.
    pub fn fallbacks(self) -> Box<dyn FallbackPolicy> {
        match self {
            PolicyBundle::Documented => Box::new(DocumentedFallbacks),
            PolicyBundle::LiteLlm110 => Box::new(LiteLlm110Fallbacks),
            PolicyBundle::Multigrid => Box::new(MultigridFallbacks),
            PolicyBundle::Contract => Box::new(ContractFallbacks),
        }
    }

    /// What the candidate walk asks about contracts (filters, validation, the budget).
    pub fn admission(self) -> Box<dyn RouteAdmission> {
        match self {
            PolicyBundle::Contract => Box::new(ContractAdmission::default()),
            PolicyBundle::Documented | PolicyBundle::LiteLlm110 | PolicyBundle::Multigrid => {
                Box::new(NoAdmission)
            }
        }
    }

    /// How streamed attempts are read (`crate::stream_rules`).
    pub fn stream_rules(self) -> Box<dyn StreamRules> {
        match self {
            PolicyBundle::Documented | PolicyBundle::Multigrid | PolicyBundle::Contract => {
                Box::new(stream_rules::Documented)
            }
            PolicyBundle::LiteLlm110 => Box::new(stream_rules::LiteLlm110),
        }
    }
}
