//! `routersim explore`: run a scenario under thousands of seed-chosen fault mixes and check
//! invariants on every run.
//!
//! Each seed `S` takes the scenario's YAML tree, appends the fault mix of `S` ([`faults`]),
//! runs it with seed `S` on its own current-thread runtime (one per run, on every core, like
//! `sweep`) with the invariant checker ([`invariants`]) beside the recorder, and checks:
//! nothing panicked (the run is wrapped in `catch_unwind`; a panic in a request task, which
//! tokio catches, makes the run panic once every task is out, and a panic hook keeps the
//! first message with its location), the event invariants, and, for every N-th seed
//! ([`ExploreOptions::determinism_every`]), that a second run writes the same bytes in every
//! report file. The first seed breaking each invariant is shrunk ([`shrink`]) to a small
//! scenario file that `routersim run` replays.
//!
//! Runs write their report (data files only, no traces, no plots) into a scratch directory per
//! worker under the system's temporary directory, removed at the end; the determinism check
//! writes full reports (traces, plots, page) twice.

pub mod faults;
pub mod invariants;
pub mod shrink;

use std::cell::{Cell, RefCell};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Once};

use routersim_engine::event::EventSink;
use routersim_mock_providers::rng::fnv1a64;
use serde_json::{Map, Value};

use faults::{FaultMix, FaultMode, Targets};
use invariants::{Bounds, Checker, Invariant, Violation};
use routersim_sim::run::{Rendering, RunOptions, run_with_sink};
use routersim_sim::scenario::{RouterSource, Scenario, ScenarioError, parse_scenario};
use routersim_sim::traffic::Arrivals;

/// Why `explore` could not start (bad input, exit 2) or write its findings.
#[derive(Debug, thiserror::Error)]
pub enum ExploreError {
    /// A bad argument.
    #[error("{0}")]
    Usage(String),
    /// The scenario does not load.
    #[error("{0}")]
    Scenario(Box<ScenarioError>),
    /// Reading or writing a file.
    #[error("{}: {message}", .path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
}

fn file_error(path: &Path, e: impl fmt::Display) -> ExploreError {
    ExploreError::File {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

/// How to explore.
#[derive(Clone, Debug)]
pub struct ExploreOptions {
    /// The seeds, in order.
    pub seeds: Vec<u64>,
    /// Extra faults or none.
    pub faults: FaultMode,
    /// Worker threads (at least 1).
    pub workers: usize,
    /// Check determinism (a second run, every report file's bytes compared) on the seeds at
    /// positions 0, N, 2N… of `seeds`; 0 never, 1 every seed.
    pub determinism_every: usize,
    /// At most this many runs to shrink one violation.
    pub shrink_runs: usize,
    /// For tests: adjusts the derived bounds (a deliberately wrong bound makes every seed
    /// violate, to exercise shrinking).
    pub bounds_hook: Option<fn(&mut Bounds)>,
}

impl Default for ExploreOptions {
    fn default() -> Self {
        Self {
            seeds: vec![1],
            faults: FaultMode::Random,
            workers: 1,
            determinism_every: DEFAULT_DETERMINISM_EVERY,
            shrink_runs: DEFAULT_SHRINK_RUNS,
            bounds_hook: None,
        }
    }
}

/// Determinism is checked on every 10th seed by default: it costs two full reports.
pub const DEFAULT_DETERMINISM_EVERY: usize = 10;
/// Runs one shrink may spend.
pub const DEFAULT_SHRINK_RUNS: usize = 300;

/// What one seed's run showed.
#[derive(Clone, Debug)]
pub struct SeedResult {
    /// The seed.
    pub seed: u64,
    /// Extra fault windows and quota keys its mix added.
    pub extra_faults: usize,
    /// Its arrivals.
    pub arrivals: u64,
    /// Whether determinism was checked.
    pub determinism_checked: bool,
    /// The first violation, and how many the run had.
    pub violation: Option<(Violation, u64)>,
}

/// A scenario prepared for exploring: its tree, its targets, its file.
#[derive(Debug)]
pub struct Explorer {
    path: PathBuf,
    tree: Value,
    scenario: Scenario,
    targets: Targets,
    options: ExploreOptions,
}

/// A scenario file as a YAML tree (anchors and merge keys resolved).
pub fn read_tree(path: &Path) -> Result<Value, ExploreError> {
    let text = std::fs::read_to_string(path).map_err(|e| file_error(path, e))?;
    routersim_sim::yaml::from_str::<Value>(&text).map_err(|e| {
        ExploreError::Scenario(Box::new(ScenarioError {
            file: path.to_path_buf(),
            line: e.line,
            column: e.column,
            path: e.path,
            message: e.message,
        }))
    })
}

/// A tree as YAML text.
pub fn to_yaml(tree: &Value) -> String {
    serde_saphyr::to_string(tree).unwrap_or_else(|e| format!("# cannot write YAML: {e}\n"))
}

impl Explorer {
    /// Loads and validates the scenario (a mistake is the user's: exit 2).
    pub fn prepare(path: &Path, options: ExploreOptions) -> Result<Self, ExploreError> {
        if options.seeds.is_empty() {
            return Err(ExploreError::Usage("no seeds to explore".into()));
        }
        let scenario = routersim_sim::scenario::load_scenario(path)
            .map_err(|e| ExploreError::Scenario(Box::new(e)))?;
        let tree = read_tree(path)?;
        if !tree.is_object() {
            return Err(ExploreError::Usage(format!(
                "{}: a scenario is a mapping",
                path.display()
            )));
        }
        let mut groups: Vec<String> = Vec::new();
        for d in &scenario.router.deployments {
            if !groups.iter().any(|g| **g == *d.model_name) {
                groups.push(d.model_name.to_string());
            }
        }
        let targets = Targets {
            deployments: scenario
                .router
                .deployments
                .iter()
                .map(|d| d.id.to_string())
                .collect(),
            groups,
            duration: scenario.duration,
            traffic: scenario
                .traffic
                .iter()
                .map(|t| matches!(t, routersim_sim::traffic::TrafficSpec::Stream(_)))
                .collect(),
        };
        Ok(Self {
            path: path.to_path_buf(),
            tree,
            scenario,
            targets,
            options,
        })
    }

    /// The scenario as loaded.
    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }

    /// The scenario file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The options.
    pub fn options(&self) -> &ExploreOptions {
        &self.options
    }

    /// The extra faults of `seed`.
    pub fn mix(&self, seed: u64) -> FaultMix {
        match self.options.faults {
            FaultMode::Random => faults::generate(seed, &self.targets),
            FaultMode::None => FaultMix::default(),
        }
    }

    /// The tree seed `seed` runs: the scenario's, with its mix appended, `seed: <seed>`, and no
    /// `expect` lines (extra faults break them; they are not invariants).
    pub fn variant(&self, seed: u64) -> Value {
        let mut tree = self.tree.clone();
        apply_mix(&mut tree, &self.mix(seed));
        if let Some(root) = tree.as_object_mut() {
            root.remove("expect");
            root.insert("seed".into(), Value::from(seed));
        }
        tree
    }

    /// Whether the seed at `position` gets the determinism check.
    pub fn checks_determinism(&self, position: usize) -> bool {
        let every = self.options.determinism_every;
        every > 0 && position.is_multiple_of(every)
    }

    /// Runs every seed on the workers; results in seed order. `progress` is called after
    /// each seed with the number done.
    pub fn run_seeds(&self, progress: &(dyn Fn(usize) + Sync)) -> Vec<SeedResult> {
        let seeds = &self.options.seeds;
        let next = AtomicUsize::new(0);
        let done = AtomicUsize::new(0);
        let results: Mutex<Vec<Option<SeedResult>>> = Mutex::new(vec![None; seeds.len()]);
        let workers = self.options.workers.max(1).min(seeds.len().max(1));
        std::thread::scope(|s| {
            for worker in 0..workers {
                let (next, done, results) = (&next, &done, &results);
                s.spawn(move || {
                    let scratch = Scratch::new(worker);
                    loop {
                        let slot = next.fetch_add(1, Ordering::Relaxed);
                        let Some(&seed) = seeds.get(slot) else { break };
                        let result = self.run_seed(seed, self.checks_determinism(slot), &scratch);
                        lock(results)[slot] = Some(result);
                        progress(done.fetch_add(1, Ordering::Relaxed) + 1);
                    }
                });
            }
        });
        let results = results.into_inner().unwrap_or_else(|e| e.into_inner());
        results.into_iter().flatten().collect()
    }

    fn run_seed(&self, seed: u64, determinism: bool, scratch: &Scratch) -> SeedResult {
        let mix = self.mix(seed);
        let tree = self.variant(seed);
        let checked = self.check(&tree, seed, determinism, scratch);
        SeedResult {
            seed,
            extra_faults: mix.len(),
            arrivals: checked.arrivals,
            determinism_checked: determinism,
            violation: checked.violation,
        }
    }

    /// Runs `tree` with `seed` and checks every invariant (determinism too when asked).
    pub fn check(&self, tree: &Value, seed: u64, determinism: bool, scratch: &Scratch) -> Checked {
        let text = to_yaml(tree);
        let scenario = match parse_scenario(&text, &self.path) {
            Ok(s) => s,
            Err(e) => return Checked::broken(Invariant::Runs, format!("does not load: {e}")),
        };
        let arrivals = Arrivals::new(&scenario.traffic, seed).count() as u64;
        let mut bounds = Bounds::derive(&scenario, arrivals);
        if let Some(hook) = self.options.bounds_hook {
            hook(&mut bounds);
        }
        let first = self.run_checked(&scenario, seed, &bounds, &scratch.dir("a"), determinism);
        let mut checked = Checked {
            arrivals,
            violation: first,
        };
        if checked.violation.is_none() && determinism {
            let again = self.run_checked(&scenario, seed, &bounds, &scratch.dir("b"), true);
            checked.violation = again.or_else(|| {
                compare_reports(&scratch.dir("a"), &scratch.dir("b")).map(|detail| {
                    (
                        Violation {
                            invariant: Invariant::Deterministic,
                            request_id: None,
                            at_ms: None,
                            detail,
                        },
                        1,
                    )
                })
            });
        }
        checked
    }

    /// One run with the checker; a full report (traces, plots) when `full`.
    fn run_checked(
        &self,
        scenario: &Scenario,
        seed: u64,
        bounds: &Bounds,
        out: &Path,
        full: bool,
    ) -> Option<(Violation, u64)> {
        let options = RunOptions {
            seed: Some(seed),
            out_dir: Some(out.to_path_buf()),
            no_trace: !full,
        };
        let rendering = if full {
            Rendering::Full
        } else {
            Rendering::DataOnly
        };
        let checker: RefCell<Option<Arc<Checker>>> = RefCell::new(None);
        let factory = |start| {
            let c = Arc::new(Checker::new(bounds.clone(), start));
            *checker.borrow_mut() = Some(c.clone());
            c as Arc<dyn EventSink + Send + Sync>
        };
        let outcome =
            catching_panics(|| run_with_sink(scenario, &options, rendering, Some(&factory)));
        let checker = checker.take();
        match outcome {
            Err(panic) => Some((
                Violation {
                    invariant: Invariant::NoPanic,
                    request_id: None,
                    at_ms: None,
                    detail: panic,
                },
                1,
            )),
            Ok(Err(e)) => Some((
                Violation {
                    invariant: Invariant::Runs,
                    request_id: None,
                    at_ms: None,
                    detail: format!("the run failed: {e}"),
                },
                1,
            )),
            Ok(Ok(report)) => checker.and_then(|c| c.finish(Some(&report.summary))),
        }
    }

    /// Writes a shrunk scenario file into `out` (created) and returns its path.
    pub fn write_scenario(
        &self,
        out: &Path,
        tree: &Value,
        seed: u64,
        violation: &Violation,
    ) -> Result<PathBuf, ExploreError> {
        std::fs::create_dir_all(out).map_err(|e| file_error(out, e))?;
        let file = out.join(format!(
            "{}-seed-{seed}-{}.yaml",
            safe_name(&self.scenario.name),
            violation.invariant
        ));
        let mut tree = tree.clone();
        self.absolutize(&mut tree);
        if let Some(root) = tree.as_object_mut() {
            root.insert(
                "name".into(),
                Value::from(format!(
                    "{}-explore-seed-{seed}",
                    safe_name(&self.scenario.name)
                )),
            );
        }
        let mut text = String::new();
        text.push_str(&format!(
            "# Shrunk by `routersim explore` from {}, seed {seed}.\n",
            self.path.display()
        ));
        for line in violation.to_string().lines() {
            text.push_str(&format!("# {line}\n"));
        }
        text.push_str(&format!(
            "# Replay it:        routersim run {}\n# Check it again:   routersim explore {} \
             --seeds {seed} --faults none\n",
            file.display(),
            file.display()
        ));
        text.push_str(&to_yaml(&tree));
        std::fs::write(&file, text).map_err(|e| file_error(&file, e))?;
        Ok(file)
    }

    /// Paths in the tree relative to the scenario's folder, made absolute so the file works
    /// from anywhere.
    fn absolutize(&self, tree: &mut Value) {
        let Some(root) = tree.as_object_mut() else {
            return;
        };
        if let RouterSource::File(path) = &self.scenario.router_source
            && root.contains_key("router_file")
        {
            let absolute = std::path::absolute(path).unwrap_or_else(|_| path.clone());
            root.insert(
                "router_file".into(),
                Value::from(absolute.to_string_lossy().into_owned()),
            );
        }
    }
}

/// What checking one tree found.
#[derive(Clone, Debug)]
pub struct Checked {
    /// Its arrivals.
    pub arrivals: u64,
    /// The first violation and how many there were.
    pub violation: Option<(Violation, u64)>,
}

impl Checked {
    fn broken(invariant: Invariant, detail: String) -> Self {
        Self {
            arrivals: 0,
            violation: Some((
                Violation {
                    invariant,
                    request_id: None,
                    at_ms: None,
                    detail,
                },
                1,
            )),
        }
    }
}

/// Appends a mix to a scenario tree: its windows to `faults`, its quotas under `providers`.
pub fn apply_mix(tree: &mut Value, mix: &FaultMix) {
    let Some(root) = tree.as_object_mut() else {
        return;
    };
    if !mix.windows.is_empty() {
        let faults = root
            .entry("faults")
            .or_insert_with(|| Value::Array(Vec::new()));
        if !faults.is_array() {
            *faults = Value::Array(Vec::new());
        }
        if let Some(list) = faults.as_array_mut() {
            list.extend(mix.windows.iter().cloned());
        }
    }
    if let Some(traffic) = root.get_mut("traffic").and_then(Value::as_array_mut) {
        for (i, value) in &mix.streamed {
            if let Some(entry) = traffic.get_mut(*i).and_then(Value::as_object_mut)
                && !entry.contains_key("stream")
            {
                entry.insert("stream".into(), value.clone());
            }
        }
    }
    if !mix.quotas.is_empty() {
        let providers = root
            .entry("providers")
            .or_insert_with(|| Value::Object(Map::new()));
        if !providers.is_object() {
            *providers = Value::Object(Map::new());
        }
        if let Some(providers) = providers.as_object_mut() {
            for (deployment, key, value) in &mix.quotas {
                let spec = providers
                    .entry(deployment.clone())
                    .or_insert_with(|| Value::Object(Map::new()));
                if !spec.is_object() {
                    *spec = Value::Object(Map::new());
                }
                if let Some(spec) = spec.as_object_mut() {
                    spec.insert(key.clone(), value.clone());
                }
            }
        }
    }
}

/// A name safe as one path component.
fn safe_name(name: &str) -> String {
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if safe.is_empty() {
        "scenario".into()
    } else {
        safe
    }
}

/// A worker's scratch directory (removed when dropped).
#[derive(Debug)]
pub struct Scratch {
    root: PathBuf,
}

impl Scratch {
    /// A fresh scratch directory for worker `worker` of this process.
    pub fn new(worker: usize) -> Self {
        let root =
            std::env::temp_dir().join(format!("routersim-explore-{}-{worker}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        Self { root }
    }

    /// A sub-directory for one run's report.
    pub fn dir(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// The first difference between two report directories: a file only one has, or a file
/// whose bytes differ (compared by a 64-bit hash of each file).
pub fn compare_reports(a: &Path, b: &Path) -> Option<String> {
    let listing = |dir: &Path| -> Result<Vec<(String, u64)>, String> {
        let mut files = Vec::new();
        let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        for entry in entries {
            let entry = entry.map_err(|e| format!("{}: {e}", dir.display()))?;
            let path = entry.path();
            let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            files.push((
                entry.file_name().to_string_lossy().into_owned(),
                fnv1a64(&bytes),
            ));
        }
        files.sort();
        Ok(files)
    };
    let (a, b) = match (listing(a), listing(b)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => return Some(format!("cannot read a report: {e}")),
    };
    let names = |files: &[(String, u64)]| files.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    if names(&a) != names(&b) {
        return Some(format!(
            "the two runs wrote different files: {:?} and {:?}",
            names(&a),
            names(&b)
        ));
    }
    a.iter()
        .zip(&b)
        .find(|(x, y)| x.1 != y.1)
        .map(|(x, _)| format!("{} differs between two runs of the same seed", x.0))
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

thread_local! {
    /// Whether panics on this thread are being captured (not printed).
    static CAPTURING: Cell<bool> = const { Cell::new(false) };
    /// The first panic captured on this thread, as the hook printed it.
    static CAPTURED: RefCell<Option<String>> = const { RefCell::new(None) };
}

static HOOK: Once = Once::new();

/// Runs `f`, turning a panic into its message (with its location). A panic inside a request
/// task is caught by tokio, not by `catch_unwind`; the hook still sees it, so it counts.
pub fn catching_panics<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if CAPTURING.with(Cell::get) {
                CAPTURED.with(|c| {
                    let mut c = c.borrow_mut();
                    if c.is_none() {
                        *c = Some(info.to_string());
                    }
                });
            } else {
                previous(info);
            }
        }));
    });
    CAPTURED.with(|c| c.borrow_mut().take());
    CAPTURING.with(|c| c.set(true));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    CAPTURING.with(|c| c.set(false));
    let captured = CAPTURED.with(|c| c.borrow_mut().take());
    match (result, captured) {
        (Ok(value), None) => Ok(value),
        (Ok(_), Some(message)) => Err(message),
        (Err(payload), captured) => Err(captured.unwrap_or_else(|| {
            payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic with no message".into())
        })),
    }
}

#[cfg(test)]
mod tests;
