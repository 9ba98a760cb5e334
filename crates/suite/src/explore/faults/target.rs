//! What the fault generator knows of a scenario ([`Targets`]) and what it adds to it
//! ([`FaultMix`]).
//!
//! Below the generators: each of them reads the targets and fills a part of the mix (the
//! continuation chain's shape is here too, as a part of the mix).

use std::time::Duration;

use serde_json::Value;

/// Which extra faults `explore` adds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FaultMode {
    /// A seed-chosen mix (the default).
    #[default]
    Random,
    /// None: only the seed varies (traffic, latencies, picks).
    None,
}

/// What the generator needs to know about the scenario.
#[derive(Clone, Debug, Default)]
pub struct Targets {
    /// Deployment ids, in `model_list` order.
    pub deployments: Vec<String>,
    /// Model group names, in first-seen order.
    pub groups: Vec<String>,
    /// The scenario's duration.
    pub duration: Duration,
    /// Per traffic entry: whether it is a generated stream (`rate`) rather than an explicit
    /// request (`at`).
    pub traffic: Vec<bool>,
    /// Per traffic entry: the model it asks for.
    pub traffic_models: Vec<String>,
    /// The router's `max_fallbacks`.
    pub max_fallbacks: u32,
    /// Deployments whose `providers` entry has a `script` or `then` of its own (the mix does
    /// not replace it).
    pub scripted: Vec<String>,
}

/// The extra faults of one seed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FaultMix {
    /// Entries appended to `faults`.
    pub windows: Vec<Value>,
    /// Keys set under `providers.<deployment>` (`rpm_limit`, `tpm_limit`,
    /// `quota_retry_after_format`, `emits`, `script`).
    pub quotas: Vec<(String, String, Value)>,
    /// `stream` values for traffic entries that set none (by index), so stream faults bite
    /// in scenarios written without streams.
    pub streamed: Vec<(usize, Value)>,
    /// Fallback groups added to the router config for mid-stream continuations to chain
    /// through (their fault windows are in `windows`).
    pub chain: Option<ContinuationChain>,
}

impl FaultMix {
    /// How many fault windows and provider keys it adds.
    pub fn len(&self) -> usize {
        self.windows.len() + self.quotas.len()
    }

    /// Whether it adds nothing at all (no windows, no provider keys, no streamed traffic, no
    /// chain).
    pub fn adds_nothing(&self) -> bool {
        self.is_empty() && self.streamed.is_empty() && self.chain.is_none()
    }

    /// Whether it adds no fault window and no provider key.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The purpose string of the generator's random stream.
pub const PURPOSE: &str = "explore/faults";

/// How the chain's groups are linked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChainShape {
    /// Each group's own fallback: `from → [chain-1]`, `chain-1 → [chain-2]`, ….
    Chained,
    /// One list: `from → [chain-1, …, chain-k]`.
    List,
}

/// Fallback groups the mix adds to the router config (their fault windows go with the mix's
/// other windows).
#[derive(Clone, Debug, PartialEq)]
pub struct ContinuationChain {
    /// The scenario's group whose streams break after content.
    pub from: String,
    /// The groups added, in order: each its name and its deployments (id, whether it
    /// supports assistant prefill).
    pub groups: Vec<(String, Vec<(String, bool)>)>,
    /// How they are linked.
    pub shape: ChainShape,
    /// `max_fallbacks` for the run, when the chain sets one.
    pub max_fallbacks: Option<u32>,
}
