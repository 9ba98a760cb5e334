//! One case of a check (a scenario run with one seed) and what became of it: its verdict, the
//! line that says why it did not pass, and every reason in full; then the whole check's cases.
//!
//! Separate from the runs so junit.xml and the CLI read the results without knowing how they
//! were made.

use std::path::PathBuf;

use routersim_report::summary::Summary;
use routersim_sim::expect::ExpectationResult;

use super::golden::{MetricDiff, show_value};

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
    /// What the scenario's router config does not use
    /// ([`config_lines`](routersim_sim::config_keys::config_lines)): printed under the
    /// case and in its `<system-out>`.
    pub config_lines: Vec<String>,
    /// How long the run took on the wall clock, in seconds (0 when it did not run): junit's
    /// `time`, the one field of a check that changes from run to run.
    pub wall_seconds: f64,
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
