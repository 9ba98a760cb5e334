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
//!   `summary.json`; the comparison ([`diff_summaries`]) ignores `routersim_version`, so a
//!   version bump alone never fails a golden, and `transport` (a run over `http` gives the
//!   same summary as in memory). No golden is not a failure. `bless` writes the
//!   golden of every run that happened (expectations are still checked and reported).
//! - **Determinism**: the cases run in path order, then seed order; junit.xml carries no wall
//!   time (`time="0"`: the file is byte-identical from run to run) and gives each case's virtual
//!   duration in its `<system-out>`.

use std::fmt;
use std::path::{Path, PathBuf};

use routersim_report::summary::Summary;
use serde_json::Value;

use crate::config_keys::{config_lines, strict_errors};
use crate::discover::{discover_cases, problem};
use crate::expect::{self, ExpectationResult, format_value};
use crate::report_dir::{ReportDir, ReportDirError, mark_complete};
use crate::run::{Rendering, run_into};
use crate::scenario::load_scenario;
use crate::transport::Transport;

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

/// One metric that differs between a golden and a new summary.
#[derive(Clone, Debug, PartialEq)]
pub struct MetricDiff {
    /// Its path in summary.json, keys joined with dots (`latency_ms.p99`,
    /// `cooldowns.by_deployment.east.count`).
    pub path: String,
    /// The golden's value (`None`: absent from the golden).
    pub golden: Option<Value>,
    /// The new value (`None`: absent from the new summary).
    pub new: Option<Value>,
}

impl fmt::Display for MetricDiff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: golden {}, new {}",
            self.path,
            show_value(self.golden.as_ref()),
            show_value(self.new.as_ref())
        )
    }
}

/// A JSON value for people: numbers without float noise, `absent` for a missing one.
pub fn show_value(value: Option<&Value>) -> String {
    match value {
        None => "absent".into(),
        Some(Value::Number(n)) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
            (Some(u), _, _) => u.to_string(),
            (None, Some(i), _) => i.to_string(),
            (None, None, Some(f)) => format_value(f),
            _ => n.to_string(),
        },
        Some(other) => other.to_string(),
    }
}

/// Every leaf that differs between two summaries (as JSON trees), in the golden's key order
/// (then keys only the new one has), ignoring the top-level `routersim_version` and
/// `transport`. Numbers
/// compare by value (`1` equals `1.0`).
pub fn diff_summaries(golden: &Value, new: &Value) -> Vec<MetricDiff> {
    let mut diffs = Vec::new();
    diff_values("", Some(golden), Some(new), &mut diffs);
    diffs
}

fn diff_values(path: &str, golden: Option<&Value>, new: Option<&Value>, out: &mut Vec<MetricDiff>) {
    match (golden, new) {
        (Some(Value::Object(g)), Some(Value::Object(n))) => {
            let keys = g.keys().chain(n.keys().filter(|k| !g.contains_key(*k)));
            for key in keys {
                if path.is_empty() && (key == IGNORED_KEY || key == IGNORED_TRANSPORT_KEY) {
                    continue;
                }
                let child = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                diff_values(&child, g.get(key), n.get(key), out);
            }
        }
        (Some(Value::Number(g)), Some(Value::Number(n)))
            if g == n || (g.as_f64().is_some() && g.as_f64() == n.as_f64()) => {}
        (g, n) if g == n => {}
        (g, n) => out.push(MetricDiff {
            path: path.to_string(),
            golden: g.cloned(),
            new: n.cloned(),
        }),
    }
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
                compare(&golden_file, &report.summary)
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

fn compare(golden: &Path, summary: &Summary) -> Result<GoldenStatus, String> {
    let text = match routersim_engine::config::input::read_text_file(golden) {
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
    let diffs = diff_summaries(&expected, &new);
    Ok(if diffs.is_empty() {
        GoldenStatus::Matched
    } else {
        GoldenStatus::Changed(diffs)
    })
}

/// Escapes text for XML content and attribute values; characters XML 1.0 cannot hold become
/// `?`, so any message makes a well-formed file.
pub fn xml_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            '\t' => out.push_str("&#9;"),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('?'),
            c => out.push(c),
        }
    }
    out
}

/// Element content: like [`xml_escape`] but keeps line breaks and tabs readable.
fn xml_text(text: &str) -> String {
    xml_escape(text)
        .replace("&#10;", "\n")
        .replace("&#9;", "\t")
}

/// The check as JUnit XML: one `<testsuite name="routersim check">`, one `<testcase>` per
/// case (`classname` the scenario path, `name` `seed-<N>` or `load`), a `<failure>` whose
/// message is the first failing assertion (body: every failing line and golden difference),
/// an `<error>` for a scenario that could not be used or run. `time="0"` everywhere, so the
/// file is deterministic; each run's virtual duration is in its `<system-out>`.
pub fn junit_xml(report: &CheckReport) -> String {
    let tests = report.cases.len();
    let failures = report.count(Verdict::Fail);
    let errors = report.count(Verdict::Error);
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    xml.push_str(&format!(
        "<testsuites name=\"{SUITE_NAME}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" time=\"0\">\n"
    ));
    xml.push_str(&format!(
        "  <testsuite name=\"{SUITE_NAME}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"0\" time=\"0\">\n"
    ));
    for case in &report.cases {
        xml.push_str(&format!(
            "    <testcase classname=\"{}\" name=\"{}\" time=\"0\">\n",
            xml_escape(&case.scenario.display().to_string()),
            xml_escape(&case.name())
        ));
        match case.verdict() {
            Verdict::Pass => {}
            Verdict::Fail => {
                let kind = if case.failed_expectations().next().is_some() {
                    "expectation"
                } else {
                    "golden"
                };
                xml.push_str(&format!(
                    "      <failure message=\"{}\" type=\"{kind}\">{}</failure>\n",
                    xml_escape(&case.headline()),
                    xml_text(&case.failure_lines().join("\n"))
                ));
            }
            Verdict::Error => {
                xml.push_str(&format!(
                    "      <error message=\"{}\" type=\"scenario\">{}</error>\n",
                    xml_escape(&case.headline()),
                    xml_text(&case.failure_lines().join("\n"))
                ));
            }
        }
        if let Some(out) = system_out(case) {
            xml.push_str(&format!(
                "      <system-out>{}</system-out>\n",
                xml_text(&out)
            ));
        }
        xml.push_str("    </testcase>\n");
    }
    xml.push_str("  </testsuite>\n</testsuites>\n");
    xml
}

/// What a case's `<system-out>` says: the run in one line, its report, every `expect` line and
/// the golden's status.
fn system_out(case: &CaseResult) -> Option<String> {
    let summary = case.summary.as_ref()?;
    let mut lines = vec![format!(
        "{} requests in {} s virtual: ok {}, failed {}",
        summary.requests,
        format_value(summary.run_end_ms / 1000.0),
        summary.ok,
        summary.failed
    )];
    if let Some(out) = &case.out_dir {
        lines.push(format!("report: {}", out.display()));
    }
    lines.extend(case.config_lines.iter().cloned());
    lines.extend(case.expectations.iter().map(|e| e.to_string()));
    let golden = case
        .golden_path
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    lines.push(match &case.golden {
        GoldenStatus::NotChecked => "golden: not checked".into(),
        GoldenStatus::Missing => format!("golden: none ({golden})"),
        GoldenStatus::Matched => format!("golden: matches {golden}"),
        GoldenStatus::Changed(d) => format!("golden: {} metric(s) differ from {golden}", d.len()),
        GoldenStatus::Blessed => format!("golden: written to {golden}"),
    });
    Some(lines.join("\n"))
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

    #[test]
    fn the_diff_ignores_the_version_and_names_each_changed_leaf() {
        let golden = serde_json::json!({
            "scenario": "s", "routersim_version": "0.1.0", "requests": 10,
            "latency_ms": {"p99": 1.5, "max": 2.0},
            "failed_by_kind": {"timeout": 1}
        });
        let new = serde_json::json!({
            "scenario": "s", "routersim_version": "9.9.9", "requests": 10,
            "latency_ms": {"p99": 1.75, "max": 2},
            "failed_by_kind": {"rate_limit": 3}
        });
        let diffs = diff_summaries(&golden, &new);
        let lines: Vec<String> = diffs.iter().map(|d| d.to_string()).collect();
        assert_eq!(
            lines,
            [
                "latency_ms.p99: golden 1.5, new 1.75",
                "failed_by_kind.timeout: golden 1, new absent",
                "failed_by_kind.rate_limit: golden absent, new 3",
            ]
        );
        assert!(diff_summaries(&golden, &golden).is_empty());
    }

    /// A run over `transport: http` matches the golden of its memory twin, and back.
    #[test]
    fn the_diff_ignores_the_transport() {
        let golden = serde_json::json!({"scenario": "s", "requests": 10});
        let http = serde_json::json!({"scenario": "s", "transport": "http", "requests": 10});
        assert!(diff_summaries(&golden, &http).is_empty());
        assert!(diff_summaries(&http, &golden).is_empty());
        let other = serde_json::json!({"scenario": "s", "transport": "http", "requests": 11});
        assert_eq!(diff_summaries(&golden, &other).len(), 1);
    }

    #[test]
    fn xml_escaping_covers_markup_quotes_and_control_characters() {
        assert_eq!(
            xml_escape("a<b & \"c\" 'd'>\n\u{1}"),
            "a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;&#10;?"
        );
    }
}
