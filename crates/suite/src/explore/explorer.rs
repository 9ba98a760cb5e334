//! The explorer: a scenario prepared once (its tree and what faults can target), then each
//! seed's variant run with the invariant checker beside the recorder, on every worker, with
//! the determinism check on every N-th seed.
//!
//! The only part of explore that runs simulations; the shrinker drives it through
//! [`Explorer::check`].

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use routersim_engine::event::EventSink;
use serde_json::Value;

use super::error::ExploreError;
use super::faults::{self, FaultMix, FaultMode, Targets};
use super::invariants::{Bounds, Checker, Invariant, ReplicaChecker, Violation};
use super::options::ExploreOptions;
use super::panics::catching_panics;
use super::scratch::{Scratch, compare_reports};
use super::tree::{apply_mix, inline_router, read_tree, to_yaml};
use routersim_engine::config::Profile;
use routersim_sim::run::{Rendering, RunOptions, run_with_sink};
use routersim_sim::scenario::RouterSource;
use routersim_sim::scenario::{Scenario, parse_scenario};
use routersim_sim::traffic::Arrivals;

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
    /// The scenario's tree, as read (variants are made from it).
    pub(super) tree: Value,
    /// The tree of its `router_file`, if it names one (inlined in a variant whose mix changes
    /// the router config).
    router_tree: Option<Value>,
    scenario: Scenario,
    targets: Targets,
    options: ExploreOptions,
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
        let targets = targets(&scenario, groups);
        let router_tree = match &scenario.router_source {
            RouterSource::File(file) => Some(read_tree(file)?),
            RouterSource::Inline => None,
        };
        Ok(Self {
            path: path.to_path_buf(),
            tree,
            router_tree,
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

    /// The profile seed `seed` runs under, when explore chooses one (`None`: the scenario's).
    pub fn profile(&self, seed: u64) -> Option<Profile> {
        self.options.profiles.pick(seed)
    }

    /// The tree seed `seed` runs: the scenario's, with its mix appended (its router config
    /// inline when the mix changes it), its profile set when explore chooses one (`set:
    /// {router_settings.profile: …}`), `seed: <seed>`, and no `expect` lines (extra faults
    /// break them; they are not invariants).
    pub fn variant(&self, seed: u64) -> Value {
        let mut tree = self.tree.clone();
        let mix = self.mix(seed);
        if mix.chain.is_some()
            && let Some(router) = &self.router_tree
        {
            inline_router(&mut tree, router);
        }
        apply_mix(&mut tree, &mix);
        if let Some(root) = tree.as_object_mut() {
            root.remove("expect");
            root.insert("seed".into(), Value::from(seed));
            if let Some(profile) = self.profile(seed) {
                let set = root
                    .entry("set")
                    .or_insert_with(|| Value::Object(serde_json::Map::new()));
                if !set.is_object() {
                    *set = Value::Object(serde_json::Map::new());
                }
                if let Some(set) = set.as_object_mut() {
                    set.insert(
                        routersim_sim::scenario::PROFILE_SET_PATH.into(),
                        Value::from(profile.as_str()),
                    );
                }
            }
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
            recorder_thread: false,
        };
        let rendering = if full {
            Rendering::Full
        } else {
            Rendering::DataOnly
        };
        let checker: RefCell<Option<Arc<Checker>>> = RefCell::new(None);
        // One checker for the run; each replica of a fleet reaches it through its own view.
        let factory = |start, replica| {
            let c = checker
                .borrow_mut()
                .get_or_insert_with(|| Arc::new(Checker::new(bounds.clone(), start)))
                .clone();
            Arc::new(ReplicaChecker {
                replica,
                checker: c,
            }) as Arc<dyn EventSink + Send + Sync>
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

/// What the fault generator may target in `scenario` (`groups`: its model groups, in
/// first-seen order).
fn targets(scenario: &Scenario, groups: Vec<String>) -> Targets {
    use routersim_sim::traffic::TrafficSpec;
    let template = |t: &TrafficSpec| match t {
        TrafficSpec::Request(r) => r.template.model.to_string(),
        TrafficSpec::Stream(s) => s.template.model.to_string(),
    };
    Targets {
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
            .map(|t| matches!(t, TrafficSpec::Stream(_)))
            .collect(),
        traffic_models: scenario.traffic.iter().map(template).collect(),
        max_fallbacks: scenario.router.settings.max_fallbacks,
        scripted: scenario
            .providers
            .iter()
            .filter(|(_, p)| !p.script.is_empty() || p.then.is_some())
            .map(|(id, _)| id.clone())
            .collect(),
    }
}

/// The lock, even when a worker panicked holding it (the results so far stay usable).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
