//! The scenario file as written: the first of the two parsing phases.
//!
//! serde reads the file into these plain shapes (every key optional where the file may leave
//! it out, unknown keys denied), and the section validators then turn them into the
//! [`Scenario`](super::Scenario), naming each mistake by its YAML path. Kept apart from the
//! validators so the file's whole shape reads in one place.

use std::collections::BTreeMap;

use routersim_mock_providers::duration::HumanDuration;
use routersim_mock_providers::{FaultSpec, ProviderSpec};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::contracts::RawContract;
use super::golden::RawGolden;
use super::stages::RawStage;
use super::values::{Count, Fallback, Format, Rate, StreamShare};
use crate::traffic::{ArrivalProcess, TokenRange};
use crate::transport::Transport;

/// The whole file.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawScenario {
    pub(super) name: Option<String>,
    pub(super) description: Option<String>,
    pub(super) seed: Option<u64>,
    pub(super) duration: HumanDuration,
    pub(super) epoch: Option<String>,
    pub(super) router: Option<Value>,
    pub(super) router_file: Option<String>,
    pub(super) set: Option<Map<String, Value>>,
    #[serde(default)]
    pub(super) providers: BTreeMap<String, ProviderSpec>,
    #[serde(default)]
    pub(super) faults: Vec<FaultSpec>,
    #[serde(default)]
    pub(super) traffic: Vec<RawTraffic>,
    pub(super) traffic_file: Option<String>,
    #[serde(default)]
    pub(super) expect: Vec<RawExpect>,
    pub(super) transport: Option<Transport>,
    #[serde(default)]
    pub(super) contracts: Vec<RawContract>,
    pub(super) client_retries: Option<u32>,
    pub(super) golden: Option<RawGolden>,
}

/// One `expect` line.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawExpect {
    pub(super) metric: String,
    pub(super) min: Option<f64>,
    pub(super) max: Option<f64>,
    pub(super) window: Option<String>,
}

/// One `traffic` entry before we know which kind it is.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTraffic {
    pub(super) model: String,
    // An explicit request.
    pub(super) at: Option<HumanDuration>,
    pub(super) count: Option<Count>,
    // A stream.
    pub(super) rate: Option<Rate>,
    pub(super) from: Option<HumanDuration>,
    pub(super) to: Option<HumanDuration>,
    pub(super) arrival: Option<ArrivalProcess>,
    pub(super) stages: Option<Vec<RawStage>>,
    // Both.
    pub(super) input_tokens: Option<TokenRange>,
    pub(super) max_tokens: Option<u32>,
    pub(super) num_retries: Option<u32>,
    pub(super) fallbacks: Option<Vec<Fallback>>,
    pub(super) disable_fallbacks: Option<bool>,
    pub(super) allow_fallbacks: Option<bool>,
    pub(super) models: Option<Vec<String>>,
    pub(super) metadata: Option<Metadata>,
    pub(super) stream: Option<StreamShare>,
    pub(super) output_tokens: Option<TokenRange>,
    pub(super) response_format: Option<Format>,
    pub(super) tools: Option<bool>,
    pub(super) workload: Option<String>,
}

/// A traffic entry's `metadata`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Metadata {
    #[serde(default)]
    pub(super) tags: Vec<String>,
}
