//! What a sweep is and what one run gave: the manifest (`sweep.json`'s content, the grid in
//! order), the metrics recorded per run, and one run's row.
//!
//! Its own module because everything after the runs (statistics, verdict, files, plot,
//! merge) reads these and nothing else of the sweep; it runs nothing and writes nothing.

use serde::{Deserialize, Serialize};

use super::args::{Shard, SweepKey};

/// The metrics a sweep records per run, in column order (names of
/// [`Summary::metric`](routersim_report::Summary::metric)).
pub const METRICS: [&str; 9] = [
    "fallback_rate",
    "failed_rate",
    "retry_rate",
    "p50_latency_ms",
    "p99_latency_ms",
    "cooled_ms_total",
    "attempts_per_request_mean",
    "deadline_exhaustion_rate",
    "validation_rejection_rate",
];

/// What a sweep is, written to `sweep.json`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// The scenario's name.
    pub scenario: String,
    /// The scenario file, as given.
    pub scenario_file: String,
    /// A content hash of the scenario file's bytes
    /// ([`content_hash`](crate::hash::content_hash)): shards of one sweep must have the same.
    #[serde(default)]
    pub scenario_hash: String,
    /// The same for its `router_file`, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub router_file_hash: Option<String>,
    /// routersim's version.
    pub routersim_version: String,
    /// The swept keys, in `--set` order.
    pub keys: Vec<SweepKey>,
    /// The seeds, in `--seeds` order.
    pub seeds: Vec<u64>,
    /// The metrics of `runs.csv` ([`METRICS`]).
    pub metrics: Vec<String>,
    /// Counts per run, after the metrics in `runs.csv` and `sweep.csv` (see
    /// `run::count_columns`); absent in sweeps of earlier versions.
    #[serde(default)]
    pub counts: Vec<String>,
    /// The shard this directory holds; `None` for the whole sweep (or a merge).
    pub shard: Option<Shard>,
    /// The swept keys that changed no run's summary, each with why where the engine can tell
    /// ([`no_effect_lines`](super::effect::no_effect_lines)); empty (and absent from the file)
    /// for a shard.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub no_effect: Vec<String>,
}

impl Manifest {
    /// Every combination, in grid order (first key slowest): the value index of each key.
    pub fn combinations(&self) -> Vec<Vec<usize>> {
        let mut combos = vec![Vec::new()];
        for key in &self.keys {
            combos = combos
                .into_iter()
                .flat_map(|prefix| {
                    (0..key.values.len()).map(move |v| {
                        let mut c = prefix.clone();
                        c.push(v);
                        c
                    })
                })
                .collect();
        }
        combos
    }

    /// The per-run columns after the keys and seed: the metrics, then the counts.
    pub fn columns(&self) -> impl Iterator<Item = &String> {
        self.metrics.iter().chain(&self.counts)
    }

    /// Jobs in the whole sweep: combinations × seeds.
    pub fn job_count(&self) -> usize {
        self.keys.iter().map(|k| k.values.len()).product::<usize>() * self.seeds.len()
    }

    /// `key=value key=value` for a combination (`(scenario as is)` with no keys).
    pub fn describe(&self, combo: &[usize]) -> String {
        if self.keys.is_empty() {
            return "(scenario as is)".to_string();
        }
        self.keys
            .iter()
            .zip(combo)
            .map(|(k, &v)| format!("{}={}", k.path, k.values[v]))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// [`describe`](Manifest::describe) for people: the config's own values labelled
    /// `(config)` (`router_settings.allowed_fails=null (config)`).
    pub fn label(&self, combo: &[usize]) -> String {
        if self.keys.is_empty() {
            return "(scenario as is)".to_string();
        }
        self.keys
            .iter()
            .zip(combo)
            .map(|(k, &v)| format!("{}={}", k.path, k.label(v)))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// One run's result: which job, and the metrics in [`METRICS`] order.
#[derive(Clone, Debug, PartialEq)]
pub struct RunRow {
    /// Combination index (grid order).
    pub combo: usize,
    /// Index into the manifest's seeds.
    pub seed_index: usize,
    /// The seed.
    pub seed: u64,
    /// The metric values.
    pub metrics: Vec<f64>,
}
