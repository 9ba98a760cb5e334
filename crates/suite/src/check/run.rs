//! Running a check: every scenario for each seed into a staged output folder, each run's
//! summary compared with (or blessed as) its golden, then junit.xml.
//!
//! Separate from the case types and the golden comparison: this is the only part that runs
//! simulations and writes files.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use routersim_report::summary::Summary;
use serde_json::Value;

use super::case::{CaseResult, CheckReport, GoldenStatus};
use super::golden::{Tolerances, diff_summaries};
use super::index::check_index_html;
use super::junit::junit_xml;
use super::paths::{ambiguous_golden, case_root, golden_path};
use crate::discover::{discover_cases, problem};
use crate::html::INDEX_HTML;
use routersim_sim::config_keys::{config_lines, strict_errors};
use routersim_sim::expect;
use routersim_sim::report_dir::{ReportDir, ReportDirError, mark_complete};
use routersim_sim::run::{Rendering, run_into};
use routersim_sim::scenario::load_scenario;
use routersim_sim::transport::Transport;

/// The JUnit file written in the output directory.
pub const JUNIT_XML: &str = "junit.xml";

/// How to check.
#[derive(Clone, Debug)]
pub struct CheckOptions {
    /// The seeds to run every scenario with (`None`: each scenario's own `seed:`); the CLI
    /// parses them with [`crate::seeds::Seeds`].
    pub seeds: Option<Vec<u64>>,
    /// Where every run's report and junit.xml go.
    pub out_dir: PathBuf,
    /// Write each run's summary beside its scenario as its golden, instead of comparing.
    pub bless: bool,
    /// A router config key routersim does not use (a typo, or a key it does not model) makes
    /// the scenario an error case instead of a warning.
    pub strict: bool,
    /// Overrides every scenario's `transport` (`check --transport`).
    pub transport: Option<Transport>,
    /// The relative tolerance of every golden metric (`check --tolerance`, a fraction); a
    /// scenario's `golden: {tolerance}` wins for the metrics it names.
    pub tolerance: f64,
    /// Runs at once (`check --jobs`; 0 or 1: one after the other). The cases, their reports
    /// and junit.xml are the same bytes whatever the number: each run is its own seeded
    /// simulation, and results are taken in path and seed order, never in completion order.
    pub jobs: usize,
}

/// Why a check could not happen at all (as opposed to a case that failed).
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// The directory could not be searched.
    #[error("{}: {source}", dir.display())]
    Discover {
        /// The directory.
        dir: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The directory holds no scenario.
    #[error("{}: no scenario files (*.yaml, *.yml) found", .0.display())]
    NoScenarios(PathBuf),
    /// junit.xml could not be written.
    #[error("cannot write {}: {source}; {note}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
        /// What became of the output folder.
        note: String,
    },
    /// The output folder cannot be written (another check writes it, it is not a report).
    #[error("{0}")]
    Output(#[from] ReportDirError),
}

/// The cases `check` would run ([`discover_cases`]: scenarios, and the files that cannot be
/// one, which become error cases), and an error when there are none.
pub fn find_scenarios(dir: &Path) -> Result<Vec<PathBuf>, CheckError> {
    let found = discover_cases(dir).map_err(|source| CheckError::Discover {
        dir: dir.to_path_buf(),
        source,
    })?;
    if found.is_empty() {
        return Err(CheckError::NoScenarios(dir.to_path_buf()));
    }
    Ok(found)
}

/// Runs every scenario (as found by [`find_scenarios`] under `root`) for each seed, calling
/// `on_case` as each case ends, and writes `junit.xml` into the output directory. The output
/// directory is replaced as a whole when everything is written ([`ReportDir`]).
pub fn check(
    root: &Path,
    scenarios: &[PathBuf],
    options: &CheckOptions,
    on_case: impl FnMut(&CaseResult),
) -> Result<CheckReport, CheckError> {
    let staged = ReportDir::begin(&options.out_dir)?;
    let prepared: Vec<Prepared> = scenarios
        .iter()
        .map(|file| prepare(root, file, options, staged.path()))
        .collect();
    let units: Vec<(usize, Option<u64>)> = prepared
        .iter()
        .enumerate()
        .flat_map(|(i, p)| match p {
            Prepared::Failed(_) => vec![(i, None)],
            Prepared::Ready(ready) => ready.seeds.iter().map(|&s| (i, Some(s))).collect(),
        })
        .collect();
    let run_unit = |&(i, seed): &(usize, Option<u64>)| match (&prepared[i], seed) {
        (Prepared::Ready(ready), Some(seed)) => run_seed(ready, seed, options),
        (Prepared::Failed(case), _) => (**case).clone(),
        (Prepared::Ready(ready), None) => error_case(&ready.file, None, "no seed".to_string()),
    };
    let cases = in_order(&units, options.jobs, &run_unit, on_case);
    let junit_path = options.out_dir.join(JUNIT_XML);
    let mut report = CheckReport {
        cases,
        junit_path: junit_path.clone(),
        out_dir: options.out_dir.clone(),
        notes: Vec::new(),
    };
    let index = check_index_html(&report, staged.path());
    for (name, text) in [(JUNIT_XML, junit_xml(&report)), (INDEX_HTML, index)] {
        std::fs::write(staged.path().join(name), text).map_err(|source| CheckError::Write {
            path: options.out_dir.join(name),
            source,
            note: staged.untouched(),
        })?;
    }
    report.notes = staged.commit()?;
    Ok(report)
}

/// Runs `run` over every unit on `jobs` threads (as sweep's workers do: each takes the next
/// unit), handing each result to `on_case` in unit order as soon as the ones before it are
/// done: the same results, in the same order, as one after the other.
fn in_order<U: Sync, R: Send>(
    units: &[U],
    jobs: usize,
    run: &(dyn Fn(&U) -> R + Sync),
    mut on_case: impl FnMut(&R),
) -> Vec<R> {
    let workers = jobs.max(1).min(units.len().max(1));
    if workers == 1 {
        return units
            .iter()
            .map(|unit| {
                let result = run(unit);
                on_case(&result);
                result
            })
            .collect();
    }
    let next = AtomicUsize::new(0);
    let mut done: Vec<Option<R>> = std::iter::repeat_with(|| None).take(units.len()).collect();
    std::thread::scope(|scope| {
        let (sender, receiver) = std::sync::mpsc::channel();
        for _ in 0..workers {
            let (sender, next) = (sender.clone(), &next);
            scope.spawn(move || {
                loop {
                    let slot = next.fetch_add(1, Ordering::Relaxed);
                    let Some(unit) = units.get(slot) else { break };
                    if sender.send((slot, run(unit))).is_err() {
                        break;
                    }
                }
            });
        }
        drop(sender);
        let mut emitted = 0;
        for (slot, result) in receiver {
            done[slot] = Some(result);
            while let Some(Some(result)) = done.get(emitted) {
                on_case(result);
                emitted += 1;
            }
        }
    });
    done.into_iter().flatten().collect()
}

fn error_case(file: &Path, seed: Option<u64>, error: String) -> CaseResult {
    CaseResult {
        scenario: file.to_path_buf(),
        seed,
        out_dir: None,
        golden_path: None,
        golden: GoldenStatus::NotChecked,
        expectations: Vec::new(),
        error: Some(error),
        summary: None,
        config_lines: Vec::new(),
        wall_seconds: 0.0,
    }
}

/// A scenario file, loaded and validated once: its seeds to run, or the one error case it is.
enum Prepared {
    /// The file cannot be run: one error case.
    Failed(Box<CaseResult>),
    /// The file's runs.
    Ready(Box<Ready>),
}

/// A loaded scenario and where its runs go.
struct Ready {
    file: PathBuf,
    scenario: routersim_sim::scenario::Scenario,
    seeds: Vec<u64>,
    notes: Vec<String>,
    /// `<out>/<case>/`, as reported.
    dir: PathBuf,
    /// The same under the staging folder, where the runs write.
    staged_dir: PathBuf,
}

/// Loads and validates one scenario; its reports go under `staging` (the output folder being
/// written).
fn prepare(root: &Path, file: &Path, options: &CheckOptions, staging: &Path) -> Prepared {
    let failed = |seed, e| Prepared::Failed(Box::new(error_case(file, seed, e)));
    if let Some(why) = problem(file) {
        return failed(None, format!("{}: {why}", file.display()));
    }
    let mut scenario = match load_scenario(file) {
        Ok(scenario) => scenario,
        Err(e) => return failed(None, e.to_string()),
    };
    if let Some(transport) = options.transport {
        scenario.transport = transport;
    }
    if let Err(e) = expect::validate(&scenario.expect, &scenario.file) {
        return failed(None, e.to_string());
    }
    if options.strict {
        let errors = strict_errors(&scenario);
        if !errors.is_empty() {
            let lines: Vec<String> = errors.iter().map(ToString::to_string).collect();
            return failed(None, lines.join("\n"));
        }
    }
    Prepared::Ready(Box::new(Ready {
        file: file.to_path_buf(),
        notes: config_lines(&scenario.router),
        seeds: options.seeds.clone().unwrap_or_else(|| vec![scenario.seed]),
        dir: case_root(root, file, &options.out_dir),
        staged_dir: case_root(root, file, staging),
        scenario,
    }))
}

/// One run of a loaded scenario, compared with (or blessed as) its golden.
fn run_seed(ready: &Ready, seed: u64, options: &CheckOptions) -> CaseResult {
    let (file, scenario) = (ready.file.as_path(), &ready.scenario);
    let out_dir = ready.dir.join(format!("seed-{seed}"));
    let staged = ready.staged_dir.join(format!("seed-{seed}"));
    let started = Instant::now();
    let report = match run_into(scenario, seed, &staged, false, Rendering::Full)
        .map_err(|e| e.to_string())
        .and_then(|report| {
            mark_complete(&staged)
                .map(|()| report)
                .map_err(|e| e.to_string())
        }) {
        Ok(report) => report,
        Err(e) => {
            // No half-written report in the output: the error row says what happened.
            let _ = std::fs::remove_dir_all(&staged);
            return error_case(file, Some(seed), e);
        }
    };
    let golden_file = golden_path(file, seed, scenario.seed);
    if let Some(why) = ambiguous_golden(file, seed, scenario.seed) {
        return error_case(file, Some(seed), why);
    }
    let wall_seconds = started.elapsed().as_secs_f64();
    let tolerances = Tolerances::new(options.tolerance, &scenario.golden.tolerance);
    let golden = if options.bless {
        unused_tolerances(file, &tolerances, &report.summary, None)
            .and_then(|()| bless(&golden_file, &report.summary))
    } else {
        compare(file, &golden_file, &report.summary, &tolerances)
    };
    let (golden, error) = match golden {
        Ok(status) => (status, None),
        Err(e) => (GoldenStatus::NotChecked, Some(e)),
    };
    CaseResult {
        scenario: file.to_path_buf(),
        seed: Some(seed),
        out_dir: Some(out_dir),
        golden_path: Some(golden_file),
        golden,
        expectations: report.expectations,
        error,
        summary: Some(report.summary),
        config_lines: ready.notes.clone(),
        wall_seconds,
    }
}

/// The summary as `summary.json` writes it (pretty, with a final newline).
fn summary_text(summary: &Summary) -> Result<String, String> {
    serde_json::to_string_pretty(summary)
        .map(|text| text + "\n")
        .map_err(|e| format!("cannot serialise the summary: {e}"))
}

fn bless(golden: &Path, summary: &Summary) -> Result<GoldenStatus, String> {
    let text = summary_text(summary)?;
    std::fs::write(golden, text)
        .map_err(|e| format!("cannot write the golden {}: {e}", golden.display()))?;
    Ok(GoldenStatus::Blessed)
}

/// The summary as JSON, as the comparison reads it.
fn summary_value(summary: &Summary) -> Result<Value, String> {
    serde_json::to_value(summary).map_err(|e| format!("cannot serialise the summary: {e}"))
}

/// An error naming every golden tolerance path that covers no number of the run's summary
/// (nor of the golden's): a tolerance that loosens nothing is a key that does nothing.
fn unused_tolerances(
    scenario: &Path,
    tolerances: &Tolerances,
    summary: &Summary,
    golden: Option<&Value>,
) -> Result<(), String> {
    let new = summary_value(summary)?;
    let mut summaries = vec![&new];
    summaries.extend(golden);
    let lines = tolerances.unmatched(&summaries);
    if lines.is_empty() {
        return Ok(());
    }
    Err(lines
        .iter()
        .map(|line| format!("{}: {line}", scenario.display()))
        .collect::<Vec<_>>()
        .join("\n"))
}

fn compare(
    scenario: &Path,
    golden: &Path,
    summary: &Summary,
    tolerances: &Tolerances,
) -> Result<GoldenStatus, String> {
    let text = match routersim_config::input::read_text_file(golden) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            unused_tolerances(scenario, tolerances, summary, None)?;
            return Ok(GoldenStatus::Missing);
        }
        Err(e) => return Err(format!("cannot read the golden {}: {e}", golden.display())),
    };
    let expected: Value = serde_json::from_str(&text).map_err(|e| {
        format!(
            "{}: the golden is not JSON ({e}); rewrite it with `routersim check --bless`",
            golden.display()
        )
    })?;
    unused_tolerances(scenario, tolerances, summary, Some(&expected))?;
    let new = summary_value(summary)?;
    let diffs = diff_summaries(&expected, &new, tolerances);
    Ok(if diffs.is_empty() {
        GoldenStatus::Matched
    } else {
        GoldenStatus::Changed(diffs)
    })
}

#[cfg(test)]
mod tests {
    use super::in_order;
    use std::time::Duration;

    #[test]
    fn results_are_handed_over_in_unit_order_whatever_finishes_first() {
        let units: Vec<u64> = (0..8).collect();
        // The later units finish first.
        let run = |&u: &u64| {
            std::thread::sleep(Duration::from_millis((8 - u) * 5));
            u * 10
        };
        for jobs in [1, 3, 8] {
            let mut seen = Vec::new();
            let results = in_order(&units, jobs, &run, |r| seen.push(*r));
            assert_eq!(results, (0..8).map(|u| u * 10).collect::<Vec<_>>());
            assert_eq!(seen, results);
        }
    }
}
