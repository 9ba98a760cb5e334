//! Profiles: one table, [`PROFILES`], holding everything a profile is — its spellings, the
//! LiteLLM release it models, the settings it presets, the walk and the keys it reads, and the
//! policies the router plugs in. Every profile fact is read here: the builder takes the
//! policies it was not given ([`crate::router::RouterBuilder`]), the config loader the presets
//! and the keys, the simulator the rules' name.
//!
//! Why a table: a profile is a bundle of policies, never a branch inside the router, so the
//! only place that knows which profile does what is its entry. A new profile is its policy
//! implementations, its variant in [`Profile`] (the name the settings hold) and one entry here.

use std::time::Duration;

use crate::backoff::{Backoff, LiteLlmBackoff};
use crate::config::{
    Classification, Deployment, Profile, Recovery, Replay, RouterConfig, StreamRecovery,
};
use crate::contract::{ContractAdmission, ContractRetryPolicy, NoAdmission, RouteAdmission};
use crate::cooldown::{CooldownTrigger, LiteLlmCooldown};
use crate::fallback::{DocumentedFallbacks, FallbackPolicy};
use crate::litellm110::{
    LiteLlm110Backoff, LiteLlm110Cooldown, LiteLlm110Fallbacks, LiteLlm110RetryPolicy,
};
use crate::multigrid::{MultigridBackoff, MultigridRetryPolicy};
use crate::portkey::{PortkeyAdmission, PortkeyBackoff, PortkeyCooldown, PortkeyRetryPolicy};
use crate::retry::{LiteLlmRetryPolicy, RetryPolicy};
use crate::stream_rules::{self, StreamRules};

/// How a request is walked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Walk {
    /// LiteLLM's: the group asked for (retries, order levels, failover), then the fallback
    /// lists depth first.
    FallbackLists,
    /// An ordered list of candidate routes — each deployment of the group asked for, then
    /// each model of the request's `models` chain — each with its own attempts, under one
    /// end-to-end deadline (`router/candidates.rs`).
    Candidates,
}

/// The settings a profile presets (an explicit setting still wins).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Presets {
    /// `recovery`.
    pub recovery: Recovery,
    /// `classification`.
    pub classification: Classification,
    /// `stream_recovery`.
    pub stream_recovery: StreamRecovery,
    /// `replay`.
    pub replay: Replay,
}

/// The policies a profile plugs into the router (each replaceable on the builder).
#[derive(Clone, Copy, Debug)]
pub struct Policies {
    /// The retry decision.
    pub retry: fn() -> Box<dyn RetryPolicy>,
    /// The wait before a retry.
    pub backoff: fn() -> Box<dyn Backoff>,
    /// The failure handler.
    pub cooldown: fn() -> Box<dyn CooldownTrigger>,
    /// The choice of fallback list.
    pub fallbacks: fn() -> Box<dyn FallbackPolicy>,
    /// What the candidate walk asks about contracts.
    pub admission: fn() -> Box<dyn RouteAdmission>,
    /// How streamed attempts are read.
    pub stream_rules: fn() -> Box<dyn StreamRules>,
}

/// One profile: everything the engine, the loader and the simulator know of it.
#[derive(Clone, Copy, Debug)]
pub struct ProfileSpec {
    /// The variant that names it.
    pub profile: Profile,
    /// Its spellings in `router_settings.profile`, the canonical one first.
    pub names: &'static [&'static str],
    /// The LiteLLM release whose code it reproduces, when it models one (`litellm` follows
    /// LiteLLM's documented rules, not one release).
    pub litellm_version: Option<&'static str>,
    /// The rules it follows, as `summary.json` names them.
    pub rules: &'static str,
    /// The settings it presets.
    pub presets: Presets,
    /// How a request is walked (the candidate walk also reads `allow_fallbacks`,
    /// `request_deadline`, `stream_deadline` and a request's `models`).
    pub walk: Walk,
    /// Whether the candidate walk has an end-to-end deadline (`request_deadline`,
    /// `stream_deadline`, a contract's `deadline_ms`), which it then reads.
    pub walk_deadline: bool,
    /// Whether it reads `attempts_per_candidate` (the tries each candidate route gets).
    pub reads_attempts_per_candidate: bool,
    /// Whether it reads the contract keys (`max_attempts`, `same_route_retries`, the
    /// allowances) and a workload's contract, and validates answers.
    pub reads_contracts: bool,
    /// Whether it reads the `portkey_*` keys (the Portkey gateway's config options).
    pub reads_portkey_keys: bool,
    /// Its policies.
    pub policies: Policies,
}

/// LiteLLM's documented rules (also DeltaLLM's retry, backoff and cooldown trigger).
const DOCUMENTED: Policies = Policies {
    retry: || Box::new(LiteLlmRetryPolicy::default()),
    backoff: || Box::new(LiteLlmBackoff),
    cooldown: || Box::new(LiteLlmCooldown::default()),
    fallbacks: || Box::new(DocumentedFallbacks),
    admission: || Box::new(NoAdmission),
    stream_rules: || Box::new(stream_rules::Documented),
};

/// Every profile (none set: the first, `litellm`), in [`Profile`]'s order.
const TABLE: [ProfileSpec; 6] = [
    ProfileSpec {
        profile: Profile::LiteLlm,
        names: &["litellm"],
        litellm_version: None,
        rules: "litellm-documented",
        presets: Presets {
            recovery: Recovery::Ttl,
            classification: Classification::LiteLlm,
            stream_recovery: StreamRecovery::LiteLlm,
            replay: Replay::Always,
        },
        walk: Walk::FallbackLists,
        walk_deadline: false,
        reads_attempts_per_candidate: false,
        reads_contracts: false,
        reads_portkey_keys: false,
        policies: DOCUMENTED,
    },
    ProfileSpec {
        profile: Profile::DeltaLlm,
        names: &["deltallm"],
        litellm_version: None,
        rules: "deltallm-documented",
        presets: Presets {
            recovery: Recovery::HalfOpen,
            classification: Classification::DeltaLlm,
            stream_recovery: StreamRecovery::LiteLlm,
            replay: Replay::Always,
        },
        walk: Walk::FallbackLists,
        walk_deadline: false,
        reads_attempts_per_candidate: false,
        reads_contracts: false,
        reads_portkey_keys: false,
        policies: DOCUMENTED,
    },
    // What LiteLLM 1.110.2's code does, decision for decision (`crate::litellm110`).
    ProfileSpec {
        profile: Profile::LiteLlm110,
        names: &["litellm-1.110", "litellm-1.110.2"],
        litellm_version: Some("1.110.2"),
        rules: "litellm-1.110.2",
        presets: Presets {
            recovery: Recovery::Ttl,
            classification: Classification::LiteLlm,
            stream_recovery: StreamRecovery::LiteLlm,
            replay: Replay::Always,
        },
        walk: Walk::FallbackLists,
        walk_deadline: false,
        reads_attempts_per_candidate: false,
        reads_contracts: false,
        reads_portkey_keys: false,
        policies: Policies {
            retry: || Box::new(LiteLlm110RetryPolicy::default()),
            backoff: || Box::new(LiteLlm110Backoff),
            cooldown: || Box::new(LiteLlm110Cooldown::default()),
            fallbacks: || Box::new(LiteLlm110Fallbacks),
            admission: || Box::new(NoAdmission),
            stream_rules: || Box::new(stream_rules::LiteLlm110),
        },
    },
    // Multigrid's failover and retries (`crate::multigrid`).
    ProfileSpec {
        profile: Profile::Multigrid,
        names: &["multigrid"],
        litellm_version: None,
        rules: "multigrid-documented",
        presets: Presets {
            recovery: Recovery::Ttl,
            classification: Classification::LiteLlm,
            stream_recovery: StreamRecovery::Multigrid,
            replay: Replay::Always,
        },
        walk: Walk::Candidates,
        walk_deadline: true,
        reads_attempts_per_candidate: true,
        reads_contracts: false,
        reads_portkey_keys: false,
        policies: Policies {
            retry: || Box::new(MultigridRetryPolicy),
            backoff: || Box::new(MultigridBackoff),
            ..DOCUMENTED
        },
    },
    // Contract-aware routing (`crate::contract`), with Multigrid's full-jitter backoff: the
    // contract seed's "capped exponential backoff with jitter", where a Retry-After wins.
    // `dedupe`: *"Ambiguous execution … Deduplicate before replaying"*.
    ProfileSpec {
        profile: Profile::Contract,
        names: &["contract"],
        litellm_version: None,
        rules: "contract-documented",
        presets: Presets {
            recovery: Recovery::Ttl,
            classification: Classification::LiteLlm,
            stream_recovery: StreamRecovery::LiteLlm,
            replay: Replay::Dedupe,
        },
        walk: Walk::Candidates,
        walk_deadline: true,
        reads_attempts_per_candidate: false,
        reads_contracts: true,
        reads_portkey_keys: false,
        policies: Policies {
            retry: || Box::new(ContractRetryPolicy),
            backoff: || Box::new(MultigridBackoff),
            admission: || Box::new(ContractAdmission::default()),
            ..DOCUMENTED
        },
    },
    // The Portkey AI gateway 1.15.2 under the config `drive --emit-portkey-config` writes
    // (`crate::portkey`): its fallback strategy is the candidate walk (its loadbalance one
    // weighted pick of it), a target's retries `num_retries`, its waits async-retry's, no
    // cooldowns.
    ProfileSpec {
        profile: Profile::Portkey,
        names: &["portkey", "portkey-1.15", "portkey-1.15.2"],
        litellm_version: None,
        rules: "portkey-1.15.2",
        presets: Presets {
            recovery: Recovery::Ttl,
            classification: Classification::LiteLlm,
            stream_recovery: StreamRecovery::Multigrid,
            replay: Replay::Always,
        },
        walk: Walk::Candidates,
        walk_deadline: false,
        reads_attempts_per_candidate: false,
        reads_contracts: false,
        reads_portkey_keys: true,
        policies: Policies {
            retry: || Box::new(PortkeyRetryPolicy),
            backoff: || Box::new(PortkeyBackoff),
            cooldown: || Box::new(PortkeyCooldown),
            admission: || Box::new(PortkeyAdmission),
            ..DOCUMENTED
        },
    },
];

// Each entry sits at its variant's index: `Profile::spec` is one lookup.
const _: () = {
    let mut i = 0;
    while i < TABLE.len() {
        assert!(
            TABLE[i].profile as usize == i,
            "PROFILES is in Profile's order"
        );
        i += 1;
    }
};

/// Every profile, in [`Profile`]'s order.
pub static PROFILES: [ProfileSpec; TABLE.len()] = TABLE;

/// The entry of `profile` (none: `litellm`'s, whose rules are the defaults).
pub fn spec(profile: Option<Profile>) -> &'static ProfileSpec {
    profile.unwrap_or(Profile::LiteLlm).spec()
}

/// The canonical names of the profiles `pred` holds for, as a message lists them: `a`,
/// `a and b`, `a, b and c`.
pub fn names_where(pred: impl Fn(&ProfileSpec) -> bool) -> String {
    let names: Vec<&str> = PROFILES
        .iter()
        .filter(|p| pred(p))
        .map(ProfileSpec::name)
        .collect();
    match names.split_last() {
        Some((last, [])) => (*last).to_string(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    }
}

impl ProfileSpec {
    /// The canonical name.
    pub fn name(&self) -> &'static str {
        self.names[0]
    }
}

impl Profile {
    /// Its entry in [`PROFILES`].
    pub fn spec(self) -> &'static ProfileSpec {
        &PROFILES[self as usize]
    }

    /// Every profile, in table order.
    pub fn all() -> impl Iterator<Item = Profile> {
        PROFILES.iter().map(|p| p.profile)
    }

    /// The canonical name.
    pub fn as_str(self) -> &'static str {
        self.spec().name()
    }

    /// Parses a name as users write it (trimmed; any accepted spelling).
    pub fn from_name(name: &str) -> Option<Self> {
        let name = name.trim();
        PROFILES
            .iter()
            .find(|p| p.names.contains(&name))
            .map(|p| p.profile)
    }

    /// The canonical names as the choice an error message expects: `a or b`.
    pub fn choices() -> String {
        Self::all()
            .map(Self::as_str)
            .collect::<Vec<_>>()
            .join(" or ")
    }

    /// Whether the profile walks candidate routes (and reads `allow_fallbacks`,
    /// `request_deadline`, `stream_deadline`, a request's `models`).
    pub fn walks_candidates(self) -> bool {
        self.spec().walk == Walk::Candidates
    }

    /// Whether the profile reads the contract keys and validates answers.
    pub fn reads_contracts(self) -> bool {
        self.spec().reads_contracts
    }

    /// Whether the candidate walk has an end-to-end deadline (`request_deadline`,
    /// `stream_deadline`).
    pub fn has_walk_deadline(self) -> bool {
        self.spec().walk_deadline
    }

    /// The LiteLLM release whose code the profile reproduces, when it models one.
    pub fn litellm_version(self) -> Option<&'static str> {
        self.spec().litellm_version
    }

    /// The rules it follows, as `summary.json` names them.
    pub fn rules(self) -> &'static str {
        self.spec().rules
    }
}

/// The shortest gap any deployment's stream may leave between two items under `config`'s
/// profile and settings (a fake provider keeps its coalesced chunks shorter than half of it,
/// so that tokens flowing never look like a stall).
pub fn shortest_gap_limit(config: &RouterConfig) -> Option<Duration> {
    let rules = (spec(config.settings.profile).policies.stream_rules)();
    let settings = &config.settings;
    config
        .deployments
        .iter()
        .filter_map(|d: &Deployment| rules.gap_limit(d, settings))
        .chain(settings.stream_stall_timeout)
        .min()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_parses_and_names_round_trip() {
        for profile in Profile::all() {
            assert_eq!(Profile::from_name(profile.as_str()), Some(profile));
            for name in profile.spec().names {
                assert_eq!(Profile::from_name(name), Some(profile), "{name}");
            }
        }
        assert_eq!(
            Profile::choices(),
            "litellm or deltallm or litellm-1.110 or multigrid or contract or portkey"
        );
        assert_eq!(
            Profile::from_name(" litellm-1.110.2 "),
            Some(Profile::LiteLlm110)
        );
    }

    #[test]
    fn lists_of_profiles_read_as_sentences() {
        assert_eq!(
            names_where(|p| p.walk == Walk::Candidates),
            "multigrid, contract and portkey"
        );
        assert_eq!(names_where(|p| p.reads_contracts), "contract");
        assert_eq!(
            names_where(|_| true),
            "litellm, deltallm, litellm-1.110, multigrid, contract and portkey"
        );
    }

    #[test]
    fn the_shortest_gap_counts_stream_timeout_only_under_1_110() {
        let mut config = RouterConfig::default();
        config.deployments.push(Deployment {
            stream_timeout: Some(Duration::from_secs(3)),
            ..Deployment::default()
        });
        config.settings.stream_stall_timeout = Some(Duration::from_secs(10));
        assert_eq!(shortest_gap_limit(&config), Some(Duration::from_secs(10)));
        config.settings.profile = Some(Profile::LiteLlm110);
        assert_eq!(shortest_gap_limit(&config), Some(Duration::from_secs(3)));
    }
}
