//! `routersim sweep`: a grid of router settings, each run on the same seeds.
//!
//! A capacity planner asks "what would `allowed_fails` 0, 1, 3 or 5 have done to this
//! incident?". A sweep answers with every combination of the swept values (`--set
//! KEY=V1,V2,…`, one key per `--set`, any router config path [`apply_set`](crate::scenario::apply_set) accepts), each run on
//! the same seeds, so the differences between combinations come from the settings, not from
//! the traffic's noise.
//!
//! # The job list
//!
//! Combinations are in grid order: the first key varies slowest (nested loops, first key
//! outermost). Job `i` is combination `i / seeds` with seed `seeds[i % seeds]`. A shard `K/N`
//! runs the jobs with `i % N == K − 1`. Workers (`std::thread::scope`) pull jobs from a shared
//! counter; each run builds its own current-thread runtime, and the results are put back in job
//! order, so the files do not depend on the number of workers or on which finished first.
//!
//! # The output directory
//!
//! - `sweep.json`: what was swept (scenario name and file, keys and values, seeds, metrics,
//!   routersim version, shard); `routersim merge` checks shards against each other with it.
//! - `runs.csv`: one row per (combination, seed): one column per key (the value as written on
//!   the command line), `seed`, then [`METRICS`], printed as the shortest text that reads back
//!   to the same number (so a merge recomputes exactly what the sweep computed).
//! - `sweep.csv`: one row per combination (with at least one run): the keys, `runs`, then for
//!   each metric `<m>_mean,<m>_ci95_low,<m>_ci95_high`: the mean over seeds and the 95 %
//!   interval of that mean, `mean ± t(0.975, n−1)·s/√n` (`s` the sample standard deviation);
//!   with one seed the interval is the mean itself. Six decimals.
//! - `sweep.svg`: see [`sweep_plot`](crate::sweep_plot).
//! - `runs/c<NNN>/seed-<S>/summary.json`: each run's summary (`NNN` is the combination's
//!   1-based grid position, zero-padded to 3). A run writes its report there with
//!   `no_trace`; everything but `summary.json` (and the completion marker) is deleted when the
//!   run ends, so a sweep of hundreds of runs stays small. Beside it, `facts.json`: counts
//!   from the run's events ([`RunFacts`](crate::facts::RunFacts)) that say why a key changed
//!   nothing ([`sweep_effect`](crate::sweep_effect)).
//!
//! The folder is written whole ([`ReportDir`]): into a staging folder renamed into place when
//! every run and file is done, replacing the previous sweep's folder as a whole (no run of an
//! earlier, larger grid survives); a failed sweep leaves the previous one untouched. `merge`
//! reads only complete shard folders and records, like a sweep, a content hash of the scenario
//! file (and its `router_file`) in `sweep.json`, so shards made from different contents are
//! refused.

use std::collections::HashMap;
use std::fmt;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use routersim_engine::sync::{lock_unpoisoned, unpoisoned};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::config_keys::set_does_nothing;
use crate::hash::content_hash;
use crate::report_dir::{ReportDir, ReportDirError, mark_complete, require_complete};
use crate::run::{Rendering, RunError, VERSION, run_into};
use crate::scenario::{
    RouterSource, Scenario, ScenarioError, parse_scenario_with_set, parse_set_value,
};
use crate::sweep_effect::{no_effect_lines, write_facts};

/// The metrics a sweep records per run, in column order (names of
/// [`Summary::metric`](routersim_report::Summary::metric)).
pub const METRICS: [&str; 7] = [
    "fallback_rate",
    "failed_rate",
    "retry_rate",
    "p50_latency_ms",
    "p99_latency_ms",
    "cooled_ms_total",
    "attempts_per_request_mean",
];

/// The manifest's file name.
pub const SWEEP_JSON: &str = "sweep.json";
/// One row per run.
pub const RUNS_CSV: &str = "runs.csv";
/// One row per combination.
pub const SWEEP_CSV: &str = "sweep.csv";
/// The plot.
pub const SWEEP_SVG: &str = "sweep.svg";
/// Where the per-run summaries go.
pub const RUNS_DIR: &str = "runs";

/// Why a sweep (or a merge) could not happen; every one is the user's input or an IO error.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    /// A bad argument (`--set`, `--seeds`, `--shard`, `--jobs`).
    #[error("{0}")]
    Usage(String),
    /// The scenario is invalid on its own.
    #[error("{0}")]
    Scenario(Box<ScenarioError>),
    /// A `--set` entry does not fit the scenario's router config.
    #[error("invalid --set {setting}: {source}")]
    Setting {
        /// `key=value`.
        setting: String,
        /// Where and why.
        source: Box<ScenarioError>,
    },
    /// A combination of settings is invalid together.
    #[error("with {settings}: {source}")]
    Combination {
        /// `key=value key=value`.
        settings: String,
        /// Where and why.
        source: Box<ScenarioError>,
    },
    /// A run failed.
    #[error("run with {settings}, seed {seed}: {source}")]
    Run {
        /// `key=value key=value`.
        settings: String,
        /// The seed.
        seed: u64,
        /// What went wrong.
        source: Box<RunError>,
    },
    /// Reading or writing a file.
    #[error("{}: {message}", .path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// Shards that do not belong together, or rows that do not fit their sweep.
    #[error("{0}")]
    Merge(String),
    /// The output folder cannot be written, or a shard folder is not complete.
    #[error("{0}")]
    Output(#[from] ReportDirError),
    /// The sweep failed after its folder was begun: nothing of it is kept.
    #[error("{source}; {note}")]
    NotWritten {
        /// Why it failed.
        source: Box<SweepError>,
        /// What became of the target folder.
        note: String,
    },
}

fn file_error(path: &Path, e: impl fmt::Display) -> SweepError {
    SweepError::File {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

/// One swept key: a router config path and the values to try, as written.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SweepKey {
    /// The router config path (`router_settings.allowed_fails`).
    pub path: String,
    /// The values, as written on the command line (each read as YAML, see
    /// [`parse_set_value`]).
    pub values: Vec<String>,
}

/// A shard `K/N` (K from 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    /// K, from 1.
    pub index: usize,
    /// N.
    pub count: usize,
}

impl Shard {
    /// Whether job `i` (0-based) is this shard's.
    pub fn owns(&self, job: usize) -> bool {
        job % self.count == self.index - 1
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// Parses `--shard K/N`.
pub fn parse_shard(text: &str) -> Result<Shard, SweepError> {
    let bad = || {
        SweepError::Usage(format!(
            "--shard {text:?}: expected K/N with 1 <= K <= N, such as 1/4"
        ))
    };
    let (k, n) = text.split_once('/').ok_or_else(bad)?;
    let index: usize = k.trim().parse().map_err(|_| bad())?;
    let count: usize = n.trim().parse().map_err(|_| bad())?;
    if index == 0 || count == 0 || index > count {
        return Err(bad());
    }
    Ok(Shard { index, count })
}

/// Splits a `--set` value list at commas outside brackets, braces and quotes, so
/// `fallbacks=[a, b],[c]` is two values.
fn split_values(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut quote, mut start) = (0i32, None, 0);
    for (i, c) in text.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '[' | '{') => depth += 1,
            (None, ']' | '}') => depth -= 1,
            (None, ',') if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

/// Parses one `--set KEY=V1,V2,…`.
pub fn parse_set_arg(arg: &str) -> Result<SweepKey, SweepError> {
    let Some((key, values)) = arg.split_once('=') else {
        return Err(SweepError::Usage(format!(
            "--set {arg:?}: expected KEY=V1,V2,… such as router_settings.allowed_fails=0,1,3"
        )));
    };
    let key = key.trim();
    if key.is_empty() {
        return Err(SweepError::Usage(format!(
            "--set {arg:?}: the key (a router config path) is empty"
        )));
    }
    let mut parsed = Vec::new();
    for value in split_values(values) {
        let value = value.trim();
        if value.is_empty() {
            return Err(SweepError::Usage(format!(
                "--set {arg:?}: expected values after `=`, separated by commas, none empty"
            )));
        }
        parse_set_value(value)
            .map_err(|e| SweepError::Usage(format!("--set {key}: invalid value {e}")))?;
        if parsed.iter().any(|v| v == value) {
            return Err(SweepError::Usage(format!(
                "--set {key}: the value {value} is repeated"
            )));
        }
        parsed.push(value.to_string());
    }
    Ok(SweepKey {
        path: key.to_string(),
        values: parsed,
    })
}

/// Parses every `--set`; a key given twice is an error.
pub fn parse_set_args(args: &[String]) -> Result<Vec<SweepKey>, SweepError> {
    let keys: Vec<SweepKey> = args
        .iter()
        .map(|a| parse_set_arg(a))
        .collect::<Result<_, _>>()?;
    for (i, key) in keys.iter().enumerate() {
        if keys[..i].iter().any(|k| k.path == key.path) {
            return Err(SweepError::Usage(format!(
                "--set {}: the key is given twice; list every value in one --set",
                key.path
            )));
        }
    }
    Ok(keys)
}

/// What a sweep is, written to `sweep.json`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// The scenario's name.
    pub scenario: String,
    /// The scenario file, as given.
    pub scenario_file: String,
    /// A content hash of the scenario file's bytes ([`content_hash`]): shards of one sweep
    /// must have the same.
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
    /// The shard this directory holds; `None` for the whole sweep (or a merge).
    pub shard: Option<Shard>,
    /// The swept keys that changed no run's summary, each with why where the engine can tell
    /// ([`no_effect_lines`]); empty (and absent from the file) for a shard.
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

/// A prepared sweep: the manifest and one validated scenario per combination.
#[derive(Debug)]
pub struct Sweep {
    /// What is swept.
    pub manifest: Manifest,
    combos: Vec<Vec<usize>>,
    scenarios: Vec<Scenario>,
}

/// Reads the scenario and validates every combination before anything runs: a `--set` path
/// that does not fit, or a value the engine rejects, is an error naming the path.
pub fn prepare(
    scenario_file: &Path,
    keys: Vec<SweepKey>,
    seeds: Vec<u64>,
    shard: Option<Shard>,
) -> Result<Sweep, SweepError> {
    let text = crate::scenario::read_scenario_text(scenario_file)
        .map_err(|e| SweepError::Scenario(Box::new(e)))?;
    if seeds.is_empty() {
        return Err(SweepError::Usage("--seeds: no seed".into()));
    }
    let base = crate::scenario::parse_scenario(&text, scenario_file)
        .map_err(|e| SweepError::Scenario(Box::new(e)))?;
    let values: Vec<Vec<Value>> = keys
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
        shard,
        no_effect: Vec::new(),
    };
    let combos = manifest.combinations();
    let scenarios = combos
        .iter()
        .map(|combo| {
            let set: Vec<(String, Value)> = manifest
                .keys
                .iter()
                .zip(combo)
                .enumerate()
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
    Ok(Sweep {
        manifest,
        combos,
        scenarios,
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
        // A sweep keeps only each run's summary: no traces, plots or page. `out` is a fresh
        // staging folder, so the run writes straight into it.
        let report = run_into(
            &self.scenarios[combo],
            seed,
            &dir,
            true,
            Rendering::DataOnly,
        )
        .map_err(|source| SweepError::Run {
            settings: settings(),
            seed,
            source: Box::new(source),
        })?;
        // Keep summary.json, and the facts that say why a key changed nothing.
        let entries = std::fs::read_dir(&dir).map_err(|e| file_error(&dir, e))?;
        for entry in entries {
            let entry = entry.map_err(|e| file_error(&dir, e))?;
            if entry.file_name() != "summary.json" {
                let path = entry.path();
                std::fs::remove_file(&path).map_err(|e| file_error(&path, e))?;
            }
        }
        write_facts(&dir, &report.facts).map_err(|e| file_error(&dir, e))?;
        mark_complete(&dir)?;
        let metrics = METRICS
            .iter()
            .map(|m| report.summary.metric(m).unwrap_or(f64::NAN))
            .collect();
        Ok(RunRow {
            combo,
            seed_index,
            seed,
            metrics,
        })
    }
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

/// A run's report directory in a sweep: `out/runs/c<NNN>/seed-<S>/`.
pub fn run_dir(out: &Path, combo: usize, seed: u64) -> PathBuf {
    out.join(RUNS_DIR)
        .join(format!("c{:03}", combo + 1))
        .join(format!("seed-{seed}"))
}

/// Whether a folder name is a shard's default folder, `shard-K-of-N`: shards run on one
/// machine sit inside the whole sweep's default folder, and survive its replacement.
pub fn is_shard_folder(name: &str) -> bool {
    let number = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    name.strip_prefix("shard-")
        .and_then(|rest| rest.split_once("-of-"))
        .is_some_and(|(k, n)| number(k) && number(n))
}

/// The default output directory: `reports/sweep/<name>/`, or
/// `reports/sweep/<name>/shard-K-of-N/` for a shard (so shards on one machine do not collide).
pub fn default_out_dir(name: &str, shard: Option<Shard>) -> PathBuf {
    let dir = Path::new("reports").join("sweep").join(name);
    match shard {
        None => dir,
        Some(s) => dir.join(format!("shard-{}-of-{}", s.index, s.count)),
    }
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

/// The mean of a metric over seeds and its 95 % interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Interval {
    /// Mean.
    pub mean: f64,
    /// `mean − t(0.975, n−1)·s/√n`.
    pub low: f64,
    /// `mean + t(0.975, n−1)·s/√n`.
    pub high: f64,
}

/// `t(0.975, df)` for df 1 to 30 (12 significant digits).
const T975: [f64; 30] = [
    12.7062047362,
    4.30265272975,
    3.18244630528,
    2.7764451052,
    2.57058183564,
    2.44691185114,
    2.36462425159,
    2.3060041352,
    2.2621571628,
    2.22813885199,
    2.20098516009,
    2.17881282967,
    2.16036865646,
    2.14478668792,
    2.13144954556,
    2.11990529922,
    2.10981557783,
    2.10092204024,
    2.09302405441,
    2.08596344727,
    2.07961384473,
    2.0738730679,
    2.06865761042,
    2.06389856163,
    2.05953855275,
    2.05552943864,
    2.05183051648,
    2.0484071418,
    2.04522964213,
    2.0422724563,
];

/// The 0.975 quantile of Student's t with `df` degrees of freedom: a table to 30, then the
/// Cornish–Fisher expansion around the normal quantile (error below 3e-8).
pub fn t975(df: usize) -> f64 {
    if df == 0 {
        return f64::NAN;
    }
    if df <= T975.len() {
        return T975[df - 1];
    }
    let z = 1.959_963_984_540_054_f64;
    let v = df as f64;
    let (z3, z5, z7, z9) = (z.powi(3), z.powi(5), z.powi(7), z.powi(9));
    z + (z3 + z) / (4.0 * v)
        + (5.0 * z5 + 16.0 * z3 + 3.0 * z) / (96.0 * v * v)
        + (3.0 * z7 + 19.0 * z5 + 17.0 * z3 - 15.0 * z) / (384.0 * v.powi(3))
        + (79.0 * z9 + 776.0 * z7 + 1482.0 * z5 - 1920.0 * z3 - 945.0 * z) / (92160.0 * v.powi(4))
}

/// Mean and 95 % interval of `values` (in the order given); one value gives the value itself.
pub fn mean_ci95(values: &[f64]) -> Interval {
    let n = values.len();
    if n == 0 {
        return Interval {
            mean: f64::NAN,
            low: f64::NAN,
            high: f64::NAN,
        };
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    if n == 1 {
        return Interval {
            mean,
            low: mean,
            high: mean,
        };
    }
    let var = values.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1) as f64;
    let half = t975(n - 1) * var.sqrt() / (n as f64).sqrt();
    Interval {
        mean,
        low: mean - half,
        high: mean + half,
    }
}

/// One combination's statistics over its runs.
#[derive(Clone, Debug, PartialEq)]
pub struct ComboStats {
    /// Combination index (grid order).
    pub combo: usize,
    /// The value index of each key.
    pub values: Vec<usize>,
    /// Runs it has.
    pub runs: usize,
    /// One interval per metric, in [`METRICS`] order.
    pub metrics: Vec<Interval>,
}

/// Statistics per combination, in grid order, from rows sorted by (combination, seed index).
pub fn combo_stats(manifest: &Manifest, rows: &[RunRow]) -> Vec<ComboStats> {
    let combos = manifest.combinations();
    let mut out = Vec::new();
    for group in rows.chunk_by(|a, b| a.combo == b.combo) {
        let combo = group[0].combo;
        let metrics = (0..manifest.metrics.len())
            .map(|m| mean_ci95(&group.iter().map(|r| r.metrics[m]).collect::<Vec<_>>()))
            .collect();
        out.push(ComboStats {
            combo,
            values: combos[combo].clone(),
            runs: group.len(),
            metrics,
        });
    }
    out
}

/// A number for `runs.csv`: the shortest text that reads back to the same `f64`.
fn exact(x: f64) -> String {
    format!("{x}")
}

/// A number for `sweep.csv`: six decimals, no negative zero.
fn fixed6(x: f64) -> String {
    let s = format!("{x:.6}");
    if s == "-0.000000" {
        "0.000000".into()
    } else {
        s
    }
}

/// The `runs.csv` header.
pub fn runs_header(manifest: &Manifest) -> Vec<String> {
    let mut header: Vec<String> = manifest.keys.iter().map(|k| k.path.clone()).collect();
    header.push("seed".into());
    header.extend(manifest.metrics.iter().cloned());
    header
}

/// The `sweep.csv` header.
pub fn sweep_header(manifest: &Manifest) -> Vec<String> {
    let mut header: Vec<String> = manifest.keys.iter().map(|k| k.path.clone()).collect();
    header.push("runs".into());
    for m in &manifest.metrics {
        for suffix in ["mean", "ci95_low", "ci95_high"] {
            header.push(format!("{m}_{suffix}"));
        }
    }
    header
}

fn csv_text(rows: impl IntoIterator<Item = Vec<String>>) -> Result<String, SweepError> {
    let mut writer = csv::WriterBuilder::new().from_writer(Vec::new());
    for row in rows {
        writer
            .write_record(&row)
            .map_err(|e| SweepError::Merge(e.to_string()))?;
    }
    let bytes = writer
        .into_inner()
        .map_err(|e| SweepError::Merge(e.to_string()))?;
    String::from_utf8(bytes).map_err(|e| SweepError::Merge(e.to_string()))
}

/// `runs.csv` text for rows sorted by (combination, seed index).
pub fn runs_csv(manifest: &Manifest, rows: &[RunRow]) -> Result<String, SweepError> {
    let combos = manifest.combinations();
    let body = rows.iter().map(|r| {
        let mut row: Vec<String> = manifest
            .keys
            .iter()
            .zip(&combos[r.combo])
            .map(|(k, &v)| k.values[v].clone())
            .collect();
        row.push(r.seed.to_string());
        row.extend(r.metrics.iter().map(|&x| exact(x)));
        row
    });
    csv_text(std::iter::once(runs_header(manifest)).chain(body))
}

/// `sweep.csv` text.
pub fn sweep_csv(manifest: &Manifest, stats: &[ComboStats]) -> Result<String, SweepError> {
    let body = stats.iter().map(|c| {
        let mut row: Vec<String> = manifest
            .keys
            .iter()
            .zip(&c.values)
            .map(|(k, &v)| k.values[v].clone())
            .collect();
        row.push(c.runs.to_string());
        for i in &c.metrics {
            row.extend([fixed6(i.mean), fixed6(i.low), fixed6(i.high)]);
        }
        row
    });
    csv_text(std::iter::once(sweep_header(manifest)).chain(body))
}

fn write(path: &Path, text: &str) -> Result<(), SweepError> {
    std::fs::write(path, text).map_err(|e| file_error(path, e))
}

/// Writes `sweep.json`, `runs.csv`, `sweep.csv` and `sweep.svg` into `out` from rows sorted by
/// (combination, seed index); returns the per-combination statistics.
pub fn write_outputs(
    out: &Path,
    manifest: &Manifest,
    rows: &[RunRow],
) -> Result<Vec<ComboStats>, SweepError> {
    std::fs::create_dir_all(out).map_err(|e| file_error(out, e))?;
    let mut json = serde_json::to_string_pretty(manifest).map_err(|e| file_error(out, e))?;
    json.push('\n');
    write(&out.join(SWEEP_JSON), &json)?;
    write(&out.join(RUNS_CSV), &runs_csv(manifest, rows)?)?;
    let stats = combo_stats(manifest, rows);
    write(&out.join(SWEEP_CSV), &sweep_csv(manifest, &stats)?)?;
    let svg = out.join(SWEEP_SVG);
    crate::sweep_plot::write_svg(&svg, manifest, &stats).map_err(|e| file_error(&svg, e))?;
    Ok(stats)
}

/// Reads a sweep directory's `sweep.json`.
pub fn read_manifest(dir: &Path) -> Result<Manifest, SweepError> {
    let path = dir.join(SWEEP_JSON);
    let text = routersim_engine::config::input::read_text_file(&path).map_err(|e| {
        file_error(
            &path,
            format!("cannot read it ({e}); is this a `routersim sweep` output directory?"),
        )
    })?;
    serde_json::from_str(&text).map_err(|e| file_error(&path, e))
}

/// Reads a sweep directory's `runs.csv` against its manifest: every row must be one of the
/// sweep's jobs (and the shard's, for a shard), once.
pub fn read_runs(dir: &Path, manifest: &Manifest) -> Result<Vec<RunRow>, SweepError> {
    let path = dir.join(RUNS_CSV);
    let mut reader = csv::Reader::from_path(&path).map_err(|e| file_error(&path, e))?;
    let header: Vec<String> = reader
        .headers()
        .map_err(|e| file_error(&path, e))?
        .iter()
        .map(String::from)
        .collect();
    let expected = runs_header(manifest);
    if header != expected {
        return Err(file_error(
            &path,
            format!(
                "the header does not match sweep.json: expected {}, found {}",
                expected.join(","),
                header.join(",")
            ),
        ));
    }
    let keys = manifest.keys.len();
    let value_index: Vec<HashMap<&str, usize>> = manifest
        .keys
        .iter()
        .map(|k| {
            k.values
                .iter()
                .enumerate()
                .map(|(i, v)| (v.as_str(), i))
                .collect()
        })
        .collect();
    let strides: Vec<usize> = (0..keys)
        .map(|k| {
            manifest.keys[k + 1..]
                .iter()
                .map(|k| k.values.len())
                .product()
        })
        .collect();
    let mut seen = std::collections::HashSet::new();
    let mut rows = Vec::new();
    for (line, record) in reader.records().enumerate() {
        let line = line + 2;
        let record = record.map_err(|e| file_error(&path, e))?;
        let bad = |why: String| file_error(&path, format!("line {line}: {why}"));
        let mut combo = 0;
        for k in 0..keys {
            let text = &record[k];
            let v = value_index[k].get(text).ok_or_else(|| {
                bad(format!(
                    "{}={text} is not one of the sweep's values",
                    manifest.keys[k].path
                ))
            })?;
            combo += v * strides[k];
        }
        let seed: u64 = record[keys]
            .parse()
            .map_err(|_| bad(format!("seed {:?} is not a number", &record[keys])))?;
        let seed_index = manifest
            .seeds
            .iter()
            .position(|&s| s == seed)
            .ok_or_else(|| bad(format!("seed {seed} is not one of the sweep's seeds")))?;
        let metrics = (0..manifest.metrics.len())
            .map(|m| {
                let text = &record[keys + 1 + m];
                text.parse::<f64>()
                    .map_err(|_| bad(format!("{} {text:?} is not a number", manifest.metrics[m])))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let job = combo * manifest.seeds.len() + seed_index;
        if let Some(shard) = manifest.shard
            && !shard.owns(job)
        {
            return Err(bad(format!("this run is not shard {shard}'s")));
        }
        if !seen.insert(job) {
            return Err(bad("this run is listed twice".into()));
        }
        rows.push(RunRow {
            combo,
            seed_index,
            seed,
            metrics,
        });
    }
    rows.sort_by_key(|r| (r.combo, r.seed_index));
    Ok(rows)
}

/// What a merge joined.
#[derive(Clone, Debug)]
pub struct Merged {
    /// The whole sweep's manifest.
    pub manifest: Manifest,
    /// Every run, sorted.
    pub rows: Vec<RunRow>,
    /// Per-combination statistics.
    pub stats: Vec<ComboStats>,
    /// What writing the folder had to tidy up first, for the user.
    pub notes: Vec<String>,
}

/// `routersim merge`: joins the shards' `runs.csv` (checking they are shards of one sweep, all
/// there, each once) and writes the whole sweep's files into `out`, byte-identical to an
/// unsharded sweep (`runs/` is not copied: each shard keeps its own).
pub fn merge(shard_dirs: &[PathBuf], out: &Path) -> Result<Merged, SweepError> {
    let mut manifests = Vec::new();
    for dir in shard_dirs {
        let manifest = read_manifest(dir)?;
        require_complete(dir)?;
        if same_folder(dir, out) {
            return Err(SweepError::Usage(format!(
                "merge: --out {} is one of the shards; the merged sweep replaces its folder as a \
                 whole, so give another --out",
                out.display()
            )));
        }
        manifests.push((dir, manifest));
    }
    let Some((first_dir, first)) = manifests.first().cloned() else {
        return Err(SweepError::Usage("merge: no shard directory given".into()));
    };
    let mut whole = first.clone();
    whole.shard = None;
    let mut owners: HashMap<usize, &PathBuf> = HashMap::new();
    let count = first.shard.map_or(1, |s| s.count);
    for (dir, m) in &manifests {
        let differs = |what: &str, a: String, b: String| {
            SweepError::Merge(format!(
                "{} and {} are not shards of the same sweep: {what} {a} vs {b}",
                first_dir.display(),
                dir.display()
            ))
        };
        if m.scenario != first.scenario {
            return Err(differs(
                "scenario",
                first.scenario.clone(),
                m.scenario.clone(),
            ));
        }
        if m.scenario_hash != first.scenario_hash {
            return Err(differs(
                "scenario contents",
                format!("{} ({})", first.scenario_hash, first.scenario_file),
                format!("{} ({})", m.scenario_hash, m.scenario_file),
            ));
        }
        if m.router_file_hash != first.router_file_hash {
            let show = |h: &Option<String>| h.clone().unwrap_or_else(|| "none (inline)".into());
            return Err(differs(
                "router file contents",
                show(&first.router_file_hash),
                show(&m.router_file_hash),
            ));
        }
        if m.keys != first.keys {
            let show = |m: &Manifest| {
                m.keys
                    .iter()
                    .map(|k| format!("{}={}", k.path, k.values.join(",")))
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            return Err(differs("keys", show(&first), show(m)));
        }
        if m.seeds != first.seeds {
            return Err(differs(
                "seeds",
                format!("{:?}", first.seeds),
                format!("{:?}", m.seeds),
            ));
        }
        if m.metrics != first.metrics || m.routersim_version != first.routersim_version {
            return Err(differs(
                "routersim version",
                first.routersim_version.clone(),
                m.routersim_version.clone(),
            ));
        }
        let (index, n) = m.shard.map_or((1, 1), |s| (s.index, s.count));
        if n != count {
            return Err(SweepError::Merge(format!(
                "{} is a shard of {count} and {} of {n}: shards must split the sweep the same way",
                first_dir.display(),
                dir.display()
            )));
        }
        if let Some(other) = owners.insert(index, dir) {
            return Err(SweepError::Merge(format!(
                "{} and {} are both shard {index}/{count}",
                other.display(),
                dir.display()
            )));
        }
    }
    let missing: Vec<String> = (1..=count)
        .filter(|k| !owners.contains_key(k))
        .map(|k| format!("{k}/{count}"))
        .collect();
    if !missing.is_empty() {
        return Err(SweepError::Merge(format!(
            "missing shard(s) {}: give every shard's directory",
            missing.join(", ")
        )));
    }
    let mut rows = Vec::new();
    for (dir, m) in &manifests {
        rows.extend(read_runs(dir, m)?);
    }
    rows.sort_by_key(|r| (r.combo, r.seed_index));
    let shard_of = |job: usize| owners[&(job % count + 1)].as_path();
    let seeds = whole.seeds.len();
    whole.no_effect = no_effect_lines(&whole, &|job| {
        run_dir(shard_of(job), job / seeds, whole.seeds[job % seeds])
    });
    if rows.len() != whole.job_count() {
        let have: std::collections::HashSet<usize> = rows
            .iter()
            .map(|r| r.combo * whole.seeds.len() + r.seed_index)
            .collect();
        let combos = whole.combinations();
        let first_missing = (0..whole.job_count())
            .find(|j| !have.contains(j))
            .map(|j| {
                format!(
                    "{}, seed {}",
                    whole.describe(&combos[j / whole.seeds.len()]),
                    whole.seeds[j % whole.seeds.len()]
                )
            })
            .unwrap_or_default();
        return Err(SweepError::Merge(format!(
            "the shards hold {} of the sweep's {} runs (missing: {first_missing}); was a shard \
             interrupted?",
            rows.len(),
            whole.job_count()
        )));
    }
    let staged = ReportDir::begin_keeping(out, is_shard_folder)?;
    let stats =
        write_outputs(staged.path(), &whole, &rows).map_err(|source| SweepError::NotWritten {
            note: staged.untouched(),
            source: Box::new(source),
        })?;
    let notes = staged.commit()?;
    Ok(Merged {
        manifest: whole,
        rows,
        stats,
        notes,
    })
}

/// Whether two paths name the same existing folder.
fn same_folder(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// A one-line-per-combination text table of the main metrics, for the terminal.
pub fn format_table(manifest: &Manifest, stats: &[ComboStats]) -> String {
    let shown = [
        ("failed_rate", "failed", 4),
        ("fallback_rate", "fallback", 4),
        ("retry_rate", "retry", 4),
        ("p99_latency_ms", "p99 ms", 1),
        ("cooled_ms_total", "cooled ms", 0),
    ];
    let combos = manifest.combinations();
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut header = vec!["settings".to_string(), "runs".to_string()];
    header.extend(shown.iter().map(|(_, label, _)| format!("{label} (±95%)")));
    rows.push(header);
    for c in stats {
        let mut row = vec![manifest.describe(&combos[c.combo]), c.runs.to_string()];
        for (name, _, decimals) in shown {
            let Some(m) = manifest.metrics.iter().position(|x| x == name) else {
                row.push(String::new());
                continue;
            };
            let i = c.metrics[m];
            row.push(format!(
                "{:.*} ±{:.*}",
                decimals,
                i.mean,
                decimals,
                (i.high - i.mean).abs()
            ));
        }
        rows.push(row);
    }
    let widths: Vec<usize> = (0..rows[0].len())
        .map(|col| {
            rows.iter()
                .map(|r| r[col].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut text = String::new();
    for row in &rows {
        let mut line = String::new();
        for (col, cell) in row.iter().enumerate() {
            if col == 0 {
                let _ = write!(line, "{cell:<w$}", w = widths[col]);
            } else {
                let _ = write!(line, "  {cell:>w$}", w = widths[col]);
            }
        }
        text.push_str(line.trim_end());
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_metric_a_sweep_records_is_a_summary_metric() {
        for name in METRICS {
            assert!(routersim_report::is_known_metric(name), "{name}");
        }
    }

    #[test]
    fn set_args_split_at_top_level_commas() {
        let k = parse_set_arg("router_settings.fallbacks=[{a: [b, c]}],[]").unwrap();
        assert_eq!(k.values, vec!["[{a: [b, c]}]", "[]"]);
        assert!(parse_set_arg("x").is_err());
        assert!(parse_set_arg("x=").is_err());
        assert!(parse_set_arg("x=1,,2").is_err());
        assert!(parse_set_arg("=1").is_err());
    }

    #[test]
    fn shards_partition_the_jobs() {
        let a = parse_shard("1/2").unwrap();
        let b = parse_shard("2/2").unwrap();
        assert!((0..10).all(|i| a.owns(i) != b.owns(i)));
        assert!(parse_shard("0/2").is_err());
        assert!(parse_shard("3/2").is_err());
    }

    #[test]
    fn interval_matches_a_hand_computation() {
        let i = mean_ci95(&[1.0, 2.0, 3.0]);
        assert_eq!(i.mean, 2.0);
        // s = 1, t(0.975, 2) = 4.302653, half = 4.302653 / sqrt(3).
        assert!((i.high - 2.0 - 4.30265272975 / 3f64.sqrt()).abs() < 1e-9);
        let one = mean_ci95(&[5.0]);
        assert_eq!((one.low, one.high), (5.0, 5.0));
        assert!((t975(31) - 2.0395134464).abs() < 1e-7);
        assert!((t975(1000) - 1.96233908083).abs() < 1e-9);
    }

    #[test]
    fn grid_order_is_first_key_slowest() {
        let m = Manifest {
            scenario: "s".into(),
            scenario_file: "s.yaml".into(),
            scenario_hash: content_hash(b"s"),
            router_file_hash: None,
            routersim_version: VERSION.into(),
            keys: vec![
                SweepKey {
                    path: "a".into(),
                    values: vec!["1".into(), "2".into()],
                },
                SweepKey {
                    path: "b".into(),
                    values: vec!["x".into(), "y".into(), "z".into()],
                },
            ],
            seeds: vec![1, 2],
            metrics: vec![],
            shard: None,
            no_effect: vec![],
        };
        let c = m.combinations();
        assert_eq!(c.len(), 6);
        assert_eq!(c[0], vec![0, 0]);
        assert_eq!(c[1], vec![0, 1]);
        assert_eq!(c[3], vec![1, 0]);
        assert_eq!(m.job_count(), 12);
    }
}
