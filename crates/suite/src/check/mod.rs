//! `routersim check DIR`: every scenario of a directory, for each seed, as a CI verdict.
//!
//! Each (scenario, seed) is one test case. A case **fails** when one of the scenario's `expect`
//! lines does not hold or when its summary differs from the scenario's golden summary; it is an
//! **error** when the scenario cannot be used (it does not parse, an `expect` metric is unknown,
//! a golden is not JSON) or the run cannot happen. A scenario that does not load is one case
//! named `load` (its seed is unknown); the others still run.
//!
//! - **Discovery** ([`discover_cases`]): every YAML file under DIR is a case, except router
//!   configs a scenario there references; one that cannot be a scenario (unreadable, not
//!   UTF-8, a router config nothing references) is an error case, never skipped.
//! - **Reports**: `<out>/<scenario path relative to DIR, without extension>/seed-<N>/` (with
//!   the extension when `x.yaml` and `x.yml` sit side by side), and `<out>/junit.xml`
//!   ([`junit_xml`]). The whole of `<out>` is written at once ([`ReportDir`]): staged and
//!   renamed into place when every case has run, so no report of an earlier check survives.
//! - **Goldens** sit beside the scenario: `<stem>.golden.json` for the scenario's own `seed:`,
//!   `<stem>.seed-<N>.golden.json` for any other seed ([`golden_path`]; `<stem>` is the file
//!   name with its extension when `x.yaml` and `x.yml` sit side by side), so a plain `check`
//!   and a `check --seeds …` read the same file for the same run. A golden is the run's
//!   `summary.json`; the comparison ([`diff_summaries`], module [`golden`]) ignores the
//!   version, the transport and the run's frame (`duration_ms`, `run_end_ms`, `events`),
//!   holds each metric to a relative tolerance (`check --tolerance`, the scenario's
//!   `golden: {tolerance}`) and lists what moved, largest relative change first. No golden is
//!   not a failure. `bless` writes the golden of every run that happened (expectations are
//!   still checked and reported).
//! - **Determinism**: the cases run in path order, then seed order; junit.xml ([`junit`])
//!   carries virtual time only, so the file is byte-identical from run to run.

use std::path::{Path, PathBuf};

use routersim_report::summary::Summary;
use serde_json::Value;

pub mod golden;
mod junit;

pub use self::golden::{MetricDiff, Tolerances, diff_summaries, show_value};
pub use self::junit::{junit_xml, xml_escape};

use crate::discover::{discover_cases, problem};
use routersim_sim::config_keys::{config_lines, strict_errors};
use routersim_sim::expect::{self, ExpectationResult};
use routersim_sim::report_dir::{ReportDir, ReportDirError, mark_complete};
use routersim_sim::run::{Rendering, run_into};
use routersim_sim::scenario::load_scenario;
use routersim_sim::transport::Transport;

/// The JUnit file written in the output directory.
pub const JUNIT_XML: &str = "junit.xml";
/// The suite's name in junit.xml.
pub const SUITE_NAME: &str = "routersim check";
/// The summary key the golden comparison ignores.
pub const IGNORED_KEY: &str = "routersim_version";
/// A second key it ignores: `transport` (a run over `http` must match the golden of its
/// `memory` twin, and `check --transport` must be able to run any suite either way).
pub const IGNORED_TRANSPORT_KEY: &str = "transport";

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

/// The other spelling of a scenario file that sits beside it (`x.yml` for `x.yaml`), if any.
fn same_stem_sibling(file: &Path) -> Option<PathBuf> {
    let other = match file.extension()?.to_str()? {
        "yaml" => "yml",
        "yml" => "yaml",
        _ => return None,
    };
    let sibling = file.with_extension(other);
    sibling.is_file().then_some(sibling)
}

fn golden_file_name(stem: &str, seed: u64, own_seed: u64) -> String {
    if seed == own_seed {
        format!("{stem}.golden.json")
    } else {
        format!("{stem}.seed-{seed}.golden.json")
    }
}

/// The golden summary of a scenario run with `seed`: `<stem>.golden.json` beside the scenario
/// for its own seed, `<stem>.seed-<N>.golden.json` for another. `<stem>` is the file's stem,
/// or its whole name when `x.yaml` and `x.yml` sit side by side (so they never share one).
pub fn golden_path(scenario_file: &Path, seed: u64, own_seed: u64) -> PathBuf {
    let stem = if same_stem_sibling(scenario_file).is_some() {
        scenario_file.file_name()
    } else {
        scenario_file.file_stem()
    }
    .map(|s| s.to_string_lossy().into_owned())
    .unwrap_or_default();
    scenario_file.with_file_name(golden_file_name(&stem, seed, own_seed))
}

/// A golden named after the bare stem where `x.yaml` and `x.yml` sit side by side: it could
/// be either's, so it is an error rather than silently ignored.
fn ambiguous_golden(scenario_file: &Path, seed: u64, own_seed: u64) -> Option<String> {
    let sibling = same_stem_sibling(scenario_file)?;
    let stem = scenario_file.file_stem()?.to_string_lossy().into_owned();
    let bare = scenario_file.with_file_name(golden_file_name(&stem, seed, own_seed));
    bare.exists().then(|| {
        format!(
            "{} is ambiguous: both {} and {} exist; rename it to {} or {}",
            bare.display(),
            scenario_file.display(),
            sibling.display(),
            golden_path(scenario_file, seed, own_seed).display(),
            golden_path(&sibling, seed, own_seed).display()
        )
    })
}

/// What became of a case's golden.
#[derive(Clone, Debug, PartialEq)]
pub enum GoldenStatus {
    /// Not looked at (the run did not happen).
    NotChecked,
    /// The scenario has no golden for this seed (not a failure).
    Missing,
    /// The summary matches the golden.
    Matched,
    /// The summary differs from the golden in these metrics.
    Changed(Vec<MetricDiff>),
    /// `bless` wrote the golden.
    Blessed,
}

/// How a case ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Every `expect` line holds and the golden (if any) matches.
    Pass,
    /// An `expect` line failed or the golden changed.
    Fail,
    /// The scenario could not be used or run.
    Error,
}

/// One scenario run with one seed (or a scenario that could not be loaded).
#[derive(Clone, Debug)]
pub struct CaseResult {
    /// The scenario file, as discovered (under the checked directory).
    pub scenario: PathBuf,
    /// The seed (`None` when the scenario could not be loaded).
    pub seed: Option<u64>,
    /// Where the run's report is.
    pub out_dir: Option<PathBuf>,
    /// The golden this case reads or writes.
    pub golden_path: Option<PathBuf>,
    /// What became of the golden.
    pub golden: GoldenStatus,
    /// Every `expect` line, checked.
    pub expectations: Vec<ExpectationResult>,
    /// Why the case could not run.
    pub error: Option<String>,
    /// The run's summary.
    pub summary: Option<Summary>,
    /// What the scenario's router config does not use ([`config_lines`]): printed under the
    /// case and in its `<system-out>`.
    pub config_lines: Vec<String>,
}

impl CaseResult {
    /// The case's verdict.
    pub fn verdict(&self) -> Verdict {
        if self.error.is_some() {
            Verdict::Error
        } else if self.expectations.iter().any(|e| !e.passed)
            || matches!(self.golden, GoldenStatus::Changed(_))
        {
            Verdict::Fail
        } else {
            Verdict::Pass
        }
    }

    /// The case's name: `seed-<N>`, or `load` for a scenario that did not load.
    pub fn name(&self) -> String {
        match self.seed {
            Some(seed) => format!("seed-{seed}"),
            None => "load".into(),
        }
    }

    /// The `expect` lines that failed.
    pub fn failed_expectations(&self) -> impl Iterator<Item = &ExpectationResult> {
        self.expectations.iter().filter(|e| !e.passed)
    }

    /// The golden's differing metrics (empty unless it changed).
    pub fn golden_diffs(&self) -> &[MetricDiff] {
        match &self.golden {
            GoldenStatus::Changed(diffs) => diffs,
            _ => &[],
        }
    }

    /// One line saying why the case did not pass (empty when it passed): the first failing
    /// assertion with its measured value, the golden's first differences, or the error.
    pub fn headline(&self) -> String {
        if let Some(error) = &self.error {
            // One line in the table; every line is in the failure list.
            let mut lines = error.lines();
            let first = lines.next().unwrap_or_default().to_string();
            return match lines.count() {
                0 => first,
                more => format!("{first} (+{more} more)"),
            };
        }
        let mut parts = Vec::new();
        let failed: Vec<&ExpectationResult> = self.failed_expectations().collect();
        if let Some(first) = failed.first() {
            let mut part = assertion(first);
            if failed.len() > 1 {
                part.push_str(&format!(" (+{} more)", failed.len() - 1));
            }
            parts.push(part);
        }
        let diffs = self.golden_diffs();
        if !diffs.is_empty() {
            let shown: Vec<String> = diffs
                .iter()
                .take(2)
                .map(|d| {
                    format!(
                        "{} {} -> {}",
                        d.path,
                        show_value(d.golden.as_ref()),
                        show_value(d.new.as_ref())
                    )
                })
                .collect();
            let more = if diffs.len() > 2 { ", ..." } else { "" };
            parts.push(format!(
                "golden: {} metric(s) differ ({}{more})",
                diffs.len(),
                shown.join(", ")
            ));
        }
        parts.join("; ")
    }

    /// Every reason the case did not pass, one per line: the failing `expect` lines, then the
    /// golden's differing metrics, or the error.
    pub fn failure_lines(&self) -> Vec<String> {
        if let Some(error) = &self.error {
            return error.lines().map(String::from).collect();
        }
        let mut lines: Vec<String> = self.failed_expectations().map(|e| e.to_string()).collect();
        let diffs = self.golden_diffs();
        if !diffs.is_empty() {
            let golden = self
                .golden_path
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_default();
            lines.push(format!(
                "golden {golden} differs in {} metric(s):",
                diffs.len()
            ));
            lines.extend(diffs.iter().map(|d| format!("  {d}")));
        }
        lines
    }
}

/// The failing assertion as written, with its measured value: `failed <= 0 (measured 1)`.
pub fn assertion(result: &ExpectationResult) -> String {
    let text = result.to_string();
    text.strip_prefix("FAIL ")
        .or_else(|| text.strip_prefix("ok   "))
        .unwrap_or(&text)
        .to_string()
}

/// Every case of a check, in order.
#[derive(Clone, Debug)]
pub struct CheckReport {
    /// The cases, in scenario path order, then seed order.
    pub cases: Vec<CaseResult>,
    /// The junit.xml written.
    pub junit_path: PathBuf,
    /// The output directory.
    pub out_dir: PathBuf,
    /// What writing the output folder had to tidy up first, for the user.
    pub notes: Vec<String>,
}

impl CheckReport {
    /// Cases with this verdict.
    pub fn count(&self, verdict: Verdict) -> usize {
        self.cases.iter().filter(|c| c.verdict() == verdict).count()
    }

    /// Goldens written by `bless`.
    pub fn blessed(&self) -> usize {
        self.cases
            .iter()
            .filter(|c| c.golden == GoldenStatus::Blessed)
            .count()
    }
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

/// Where a scenario's reports go: `<out>/<path relative to root, without extension>/` (with
/// its extension when `x.yaml` and `x.yml` sit side by side).
pub fn case_root(root: &Path, scenario: &Path, out_dir: &Path) -> PathBuf {
    let relative = scenario
        .strip_prefix(root)
        .ok()
        .filter(|r| !r.as_os_str().is_empty())
        .or_else(|| scenario.file_name().map(Path::new))
        .unwrap_or(scenario);
    if same_stem_sibling(scenario).is_some() {
        out_dir.join(relative)
    } else {
        out_dir.join(relative.with_extension(""))
    }
}

/// Runs every scenario (as found by [`find_scenarios`] under `root`) for each seed, calling
/// `on_case` as each case ends, and writes `junit.xml` into the output directory. The output
/// directory is replaced as a whole when everything is written ([`ReportDir`]).
pub fn check(
    root: &Path,
    scenarios: &[PathBuf],
    options: &CheckOptions,
    mut on_case: impl FnMut(&CaseResult),
) -> Result<CheckReport, CheckError> {
    let staged = ReportDir::begin(&options.out_dir)?;
    let mut cases = Vec::new();
    for file in scenarios {
        for case in check_scenario(root, file, options, staged.path()) {
            on_case(&case);
            cases.push(case);
        }
    }
    let junit_path = options.out_dir.join(JUNIT_XML);
    let mut report = CheckReport {
        cases,
        junit_path: junit_path.clone(),
        out_dir: options.out_dir.clone(),
        notes: Vec::new(),
    };
    std::fs::write(staged.path().join(JUNIT_XML), junit_xml(&report)).map_err(|source| {
        CheckError::Write {
            path: junit_path,
            source,
            note: staged.untouched(),
        }
    })?;
    report.notes = staged.commit()?;
    Ok(report)
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
    }
}

/// One scenario, every seed; its reports go under `staging` (the output folder being written).
fn check_scenario(
    root: &Path,
    file: &Path,
    options: &CheckOptions,
    staging: &Path,
) -> Vec<CaseResult> {
    if let Some(why) = problem(file) {
        return vec![error_case(file, None, format!("{}: {why}", file.display()))];
    }
    let mut scenario = match load_scenario(file) {
        Ok(scenario) => scenario,
        Err(e) => return vec![error_case(file, None, e.to_string())],
    };
    if let Some(transport) = options.transport {
        scenario.transport = transport;
    }
    if let Err(e) = expect::validate(&scenario.expect, &scenario.file) {
        return vec![error_case(file, None, e.to_string())];
    }
    if options.strict {
        let errors = strict_errors(&scenario);
        if !errors.is_empty() {
            let lines: Vec<String> = errors.iter().map(ToString::to_string).collect();
            return vec![error_case(file, None, lines.join("\n"))];
        }
    }
    let notes = config_lines(&scenario.router);
    let seeds = options.seeds.clone().unwrap_or_else(|| vec![scenario.seed]);
    let dir = case_root(root, file, &options.out_dir);
    let staged_dir = case_root(root, file, staging);
    seeds
        .into_iter()
        .map(|seed| {
            let out_dir = dir.join(format!("seed-{seed}"));
            let staged = staged_dir.join(format!("seed-{seed}"));
            let report = match run_into(&scenario, seed, &staged, false, Rendering::Full)
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
            let golden = if options.bless {
                bless(&golden_file, &report.summary)
            } else {
                let tolerances = Tolerances::new(options.tolerance, &scenario.golden.tolerance);
                compare(&golden_file, &report.summary, &tolerances)
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
                config_lines: notes.clone(),
            }
        })
        .collect()
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

fn compare(
    golden: &Path,
    summary: &Summary,
    tolerances: &Tolerances,
) -> Result<GoldenStatus, String> {
    let text = match routersim_config::input::read_text_file(golden) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(GoldenStatus::Missing),
        Err(e) => return Err(format!("cannot read the golden {}: {e}", golden.display())),
    };
    let expected: Value = serde_json::from_str(&text).map_err(|e| {
        format!(
            "{}: the golden is not JSON ({e}); rewrite it with `routersim check --bless`",
            golden.display()
        )
    })?;
    let new =
        serde_json::to_value(summary).map_err(|e| format!("cannot serialise the summary: {e}"))?;
    let diffs = diff_summaries(&expected, &new, tolerances);
    Ok(if diffs.is_empty() {
        GoldenStatus::Matched
    } else {
        GoldenStatus::Changed(diffs)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn goldens_are_named_after_the_seed() {
        let file = Path::new("scenarios/ci/storm.yaml");
        assert_eq!(
            golden_path(file, 7, 7),
            Path::new("scenarios/ci/storm.golden.json")
        );
        assert_eq!(
            golden_path(file, 2, 7),
            Path::new("scenarios/ci/storm.seed-2.golden.json")
        );
    }
}
