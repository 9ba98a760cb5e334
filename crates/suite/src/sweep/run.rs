//! The grid and its runs: preparing a sweep from a scenario and its `--set` keys (every
//! combination validated before anything runs), and the workers that run the jobs into the
//! output folder.
//!
//! Separate from `files` and `stats`: this is the only part that runs simulations.

use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use routersim_engine::sync::{lock_unpoisoned, unpoisoned};
use serde_json::Value;

use super::args::{Shard, SweepKey};
use super::baseline::{mark_baselines, router_tree};
use super::effect::{no_effect_lines, write_facts};
use super::error::{SweepError, file_error};
use super::files::{runs_index_csv, write, write_outputs};
use super::folder::{RUNS_DIR, RUNS_INDEX, is_shard_folder, run_dir};
use super::manifest::{METRICS, Manifest, RunRow};
use super::stats::ComboStats;
use crate::hash::content_hash;
use routersim_report::REPORT_HTML;
use routersim_sim::config_keys::set_does_nothing;
use routersim_sim::report_dir::{ReportDir, mark_complete};
use routersim_sim::run::{Rendering, VERSION, run_into};
use routersim_sim::scenario::{RouterSource, Scenario, parse_scenario_with_set, parse_set_value};

/// A prepared sweep: the manifest and one validated scenario per combination.
#[derive(Debug)]
pub struct Sweep {
    /// What is swept.
    pub manifest: Manifest,
    combos: Vec<Vec<usize>>,
    scenarios: Vec<Scenario>,
    /// Keep each run's `report.html` beside its summary (`sweep --reports`).
    pub keep_reports: bool,
}

/// Reads the scenario and validates every combination before anything runs: a `--set` path
/// that does not fit, or a value the engine rejects, is an error naming the path. With
/// `baseline`, each key's own value in the config is added to its values when not listed
/// ([`mark_baselines`]).
pub fn prepare(
    scenario_file: &Path,
    mut keys: Vec<SweepKey>,
    seeds: Vec<u64>,
    shard: Option<Shard>,
    baseline: bool,
) -> Result<Sweep, SweepError> {
    let text = routersim_sim::scenario::read_scenario_text(scenario_file)
        .map_err(|e| SweepError::Scenario(Box::new(e)))?;
    if seeds.is_empty() {
        return Err(SweepError::Usage("--seeds: no seed".into()));
    }
    let base = routersim_sim::scenario::parse_scenario(&text, scenario_file)
        .map_err(|e| SweepError::Scenario(Box::new(e)))?;
    let mut values: Vec<Vec<Value>> = keys
        .iter()
        .map(|k| {
            k.values
                .iter()
                .map(|v| {
                    parse_set_value(v)
                        .map_err(|e| SweepError::Usage(format!("--set {}: {e}", k.path)))
                })
                .collect::<Result<Vec<_>, _>>()
        })
        .collect::<Result<_, _>>()?;
    mark_baselines(&mut keys, &mut values, &router_tree(&base, &text), baseline)?;
    let router_file_hash = match &base.router_source {
        RouterSource::Inline => None,
        RouterSource::File(path) => Some(content_hash(
            &std::fs::read(path).map_err(|e| file_error(path, e))?,
        )),
    };
    let manifest = Manifest {
        scenario: base.name.clone(),
        scenario_file: scenario_file.display().to_string(),
        scenario_hash: content_hash(text.as_bytes()),
        router_file_hash,
        routersim_version: VERSION.to_string(),
        keys,
        seeds,
        metrics: METRICS.iter().map(|m| m.to_string()).collect(),
        counts: Vec::new(),
        shard,
        no_effect: Vec::new(),
    };
    let combos = manifest.combinations();
    let scenarios = combos
        .iter()
        .map(|combo| {
            // A key at its baseline is left as the config has it.
            let set: Vec<(String, Value)> = manifest
                .keys
                .iter()
                .zip(combo)
                .enumerate()
                .filter(|(_, (key, v))| key.baseline != Some(**v))
                .map(|(k, (key, &v))| (key.path.clone(), values[k][v].clone()))
                .collect();
            parse_scenario_with_set(&text, scenario_file, &set).map_err(|source| {
                // A mistake located at one key's `set.<path>` is that value's alone.
                let culprit =
                    manifest.keys.iter().zip(combo).find(|(key, _)| {
                        source.path.strip_prefix("set.") == Some(key.path.as_str())
                    });
                match culprit {
                    Some((key, &v)) => SweepError::Setting {
                        setting: format!("{}={}", key.path, key.values[v]),
                        source: Box::new(source),
                    },
                    None => SweepError::Combination {
                        settings: manifest.describe(combo),
                        source: Box::new(source),
                    },
                }
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    // A swept key that LiteLLM would not know, or that routersim does not model, would give
    // every value the same runs: a comparison of nothing.
    for scenario in &scenarios {
        for key in &manifest.keys {
            if let Some(why) = set_does_nothing(&scenario.router, &base.router, &key.path) {
                return Err(SweepError::Usage(format!("--set {}: {why}", key.path)));
            }
        }
    }
    let mut manifest = manifest;
    manifest.counts = count_columns(&scenarios);
    Ok(Sweep {
        manifest,
        combos,
        scenarios,
        keep_reports: false,
    })
}

impl Sweep {
    /// The job indices this sweep (or its shard) runs, ascending.
    pub fn jobs(&self) -> Vec<usize> {
        (0..self.manifest.job_count())
            .filter(|&i| self.manifest.shard.is_none_or(|s| s.owns(i)))
            .collect()
    }

    /// The scenario of a combination.
    pub fn scenario(&self, combo: usize) -> &Scenario {
        &self.scenarios[combo]
    }

    /// Every combination's scenario, in combination order.
    pub fn scenarios(&self) -> &[Scenario] {
        &self.scenarios
    }

    /// Runs `jobs` on `workers` threads (at least 1), each run's report under
    /// `out/runs/c<NNN>/seed-<S>/` (only `summary.json` is kept). `progress` is called after
    /// each run with the number done so far. The first failure (in job order among those that
    /// failed) stops the sweep. `out` must be a fresh folder, such as a [`ReportDir`]'s staging
    /// folder: runs write straight into it ([`Sweep::run_into_folder`] does all of that).
    pub fn run_jobs(
        &self,
        jobs: &[usize],
        workers: usize,
        out: &Path,
        progress: &(dyn Fn(usize) + Sync),
    ) -> Result<Vec<RunRow>, SweepError> {
        let seeds = self.manifest.seeds.len();
        let next = AtomicUsize::new(0);
        let done = AtomicUsize::new(0);
        let stop = AtomicBool::new(false);
        let results: Mutex<Vec<Option<RunRow>>> = Mutex::new(vec![None; jobs.len()]);
        let errors: Mutex<Vec<(usize, SweepError)>> = Mutex::new(Vec::new());
        let worker = || {
            while !stop.load(Ordering::Relaxed) {
                let slot = next.fetch_add(1, Ordering::Relaxed);
                let Some(&job) = jobs.get(slot) else { break };
                let (combo, seed_index) = (job / seeds, job % seeds);
                match self.run_one(combo, seed_index, out) {
                    Ok(row) => {
                        lock_unpoisoned(&results)[slot] = Some(row);
                        progress(done.fetch_add(1, Ordering::Relaxed) + 1);
                    }
                    Err(e) => {
                        lock_unpoisoned(&errors).push((slot, e));
                        stop.store(true, Ordering::Relaxed);
                    }
                }
            }
        };
        std::thread::scope(|s| {
            for _ in 0..workers.max(1).min(jobs.len().max(1)) {
                s.spawn(worker);
            }
        });
        let mut errors = unpoisoned(errors.into_inner());
        errors.sort_by_key(|(slot, _)| *slot);
        if let Some((_, e)) = errors.into_iter().next() {
            return Err(e);
        }
        let results = unpoisoned(results.into_inner());
        Ok(results.into_iter().flatten().collect())
    }

    /// Runs the sweep (or its shard) and writes the whole output folder `out`, all or nothing
    /// (see the module docs): `runs/`, `sweep.json`, `runs.csv`, `sweep.csv`, `sweep.svg`.
    pub fn run_into_folder(
        &self,
        out: &Path,
        workers: usize,
        progress: &(dyn Fn(usize) + Sync),
    ) -> Result<SweepOutput, SweepError> {
        let staged = ReportDir::begin_keeping(out, is_shard_folder)?;
        let written = self
            .run_jobs(&self.jobs(), workers, staged.path(), progress)
            .and_then(|rows| {
                let mut manifest = self.manifest.clone();
                if manifest.shard.is_none() {
                    // A shard lacks the other runs: `merge` makes this check instead.
                    let seeds = &manifest.seeds;
                    manifest.no_effect = no_effect_lines(&manifest, &|job| {
                        run_dir(staged.path(), job / seeds.len(), seeds[job % seeds.len()])
                    });
                }
                let stats = write_outputs(staged.path(), &manifest, &rows)?;
                let index = staged.path().join(RUNS_DIR).join(RUNS_INDEX);
                std::fs::create_dir_all(staged.path().join(RUNS_DIR))
                    .map_err(|e| file_error(&index, e))?;
                write(&index, &runs_index_csv(&manifest, &rows)?)?;
                Ok((rows, stats, manifest))
            });
        let (rows, stats, manifest) = written.map_err(|source| SweepError::NotWritten {
            note: staged.untouched(),
            source: Box::new(source),
        })?;
        let notes = staged.commit()?;
        Ok(SweepOutput {
            rows,
            stats,
            notes,
            manifest,
        })
    }

    fn run_one(&self, combo: usize, seed_index: usize, out: &Path) -> Result<RunRow, SweepError> {
        let seed = self.manifest.seeds[seed_index];
        let dir = run_dir(out, combo, seed);
        let settings = || self.manifest.describe(&self.combos[combo]);
        // A sweep keeps only each run's summary (and, with `--reports`, its page, the plots
        // inline): no traces. `out` is a fresh staging folder, so the run writes straight
        // into it.
        let rendering = if self.keep_reports {
            Rendering::Full
        } else {
            Rendering::DataOnly
        };
        let report =
            run_into(&self.scenarios[combo], seed, &dir, true, rendering).map_err(|source| {
                SweepError::Run {
                    settings: settings(),
                    seed,
                    source: Box::new(source),
                }
            })?;
        // Keep summary.json (and report.html), and the facts that say why a key changed
        // nothing.
        let entries = std::fs::read_dir(&dir).map_err(|e| file_error(&dir, e))?;
        for entry in entries {
            let entry = entry.map_err(|e| file_error(&dir, e))?;
            let name = entry.file_name();
            let kept = name == "summary.json" || (self.keep_reports && name == REPORT_HTML);
            if !kept {
                let path = entry.path();
                std::fs::remove_file(&path).map_err(|e| file_error(&path, e))?;
            }
        }
        write_facts(&dir, &report.facts).map_err(|e| file_error(&dir, e))?;
        mark_complete(&dir)?;
        let metrics = METRICS
            .iter()
            .map(|m| report.summary.metric(m).unwrap_or(f64::NAN))
            .chain(
                self.manifest
                    .counts
                    .iter()
                    .map(|c| match c.strip_prefix(FALLBACKS_TO) {
                        Some(group) => {
                            report.facts.fallbacks_to.get(group).copied().unwrap_or(0) as f64
                        }
                        None => report.summary.metric(c).unwrap_or(f64::NAN),
                    }),
            )
            .collect();
        Ok(RunRow {
            combo,
            seed_index,
            seed,
            metrics,
        })
    }
}

/// The prefix of the per-target-group fallback count columns.
const FALLBACKS_TO: &str = "fallbacks_to.";

/// The counts a sweep records beside the rates: `failed` (failed requests),
/// `cooldown_periods` (intervals a deployment spent cooled) and `cooldown_sets` (every set,
/// re-sets of a live cooldown included), as the summary counts them, then `fallbacks_to.<group>`: fallback hops into each model group of the scenario (every
/// group any combination's `model_list` names, in first-seen order; 0 where none went there).
fn count_columns(scenarios: &[Scenario]) -> Vec<String> {
    let mut columns = vec![
        "failed".to_string(),
        "cooldown_periods".to_string(),
        "cooldown_sets".to_string(),
    ];
    for scenario in scenarios {
        for d in &scenario.router.deployments {
            let column = format!("{FALLBACKS_TO}{}", d.model_name);
            if !columns.contains(&column) {
                columns.push(column);
            }
        }
    }
    columns
}

/// What [`Sweep::run_into_folder`] produced.
#[derive(Clone, Debug)]
pub struct SweepOutput {
    /// Every run, sorted by (combination, seed index).
    pub rows: Vec<RunRow>,
    /// The manifest as written to `sweep.json` (with its `no_effect` lines).
    pub manifest: Manifest,
    /// Per-combination statistics.
    pub stats: Vec<ComboStats>,
    /// What writing the folder had to tidy up first, for the user.
    pub notes: Vec<String>,
}

/// Threads to use: `--jobs`, or every core; never more than the jobs.
pub fn worker_count(requested: Option<usize>, jobs: usize) -> Result<usize, SweepError> {
    let n = match requested {
        Some(0) => return Err(SweepError::Usage("--jobs must be at least 1".into())),
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    Ok(n.min(jobs.max(1)))
}
