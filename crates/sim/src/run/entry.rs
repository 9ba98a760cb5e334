//! The runner's entry points: which folder a run writes (staged and committed whole, or a
//! folder the caller owns), the virtual-time runtime it runs on, and the report page once
//! its `expect` lines are checked.
//!
//! Separate from the simulation itself, which neither knows about folders being replaced nor
//! about `report.html`.

use std::path::{Path, PathBuf};

use routersim_report::summary::Summary;
use routersim_report::{ExpectRow, PageTitle, write_report_html};

use super::options::{Recording, Rendering, RunOptions, SinkFactory};
use super::outcome::{RunError, RunReport};
use super::simulate::simulate;
use crate::expect::{self, ExpectationResult};
use crate::report_dir::ReportDir;
use crate::scenario::{Scenario, load_scenario};

/// The default report directory: `reports/<name>/seed-<N>/`.
pub fn default_out_dir(scenario: &Scenario, seed: u64) -> PathBuf {
    Path::new("reports")
        .join(&scenario.name)
        .join(format!("seed-{seed}"))
}

/// Loads and runs a scenario file.
pub fn run_file(path: &Path, options: &RunOptions) -> Result<RunReport, RunError> {
    let scenario = load_scenario(path)?;
    run(&scenario, options)
}

/// Runs a scenario and writes its report, plots and `report.html` included.
pub fn run(scenario: &Scenario, options: &RunOptions) -> Result<RunReport, RunError> {
    run_with_rendering(scenario, options, Rendering::Full)
}

/// Runs a scenario and writes its report, drawing what `rendering` asks for.
///
/// The report is all or nothing ([`ReportDir`]): it is written into a staging folder beside
/// the target and renamed into place when complete, replacing the previous report as a whole;
/// if the run fails, the previous report is left untouched. A second process writing the same
/// folder meanwhile is refused.
pub fn run_with_rendering(
    scenario: &Scenario,
    options: &RunOptions,
    rendering: Rendering,
) -> Result<RunReport, RunError> {
    run_with_sink(scenario, options, rendering, None)
}

/// [`run_with_rendering`] with an extra sink that sees every routing event beside the
/// recorder, in the same order (`routersim explore` checks its invariants there).
pub fn run_with_sink(
    scenario: &Scenario,
    options: &RunOptions,
    rendering: Rendering,
    extra_sink: Option<SinkFactory<'_>>,
) -> Result<RunReport, RunError> {
    expect::validate(&scenario.expect, &scenario.file)?;
    let seed = options.seed.unwrap_or(scenario.seed);
    let out_dir = options
        .out_dir
        .clone()
        .unwrap_or_else(|| default_out_dir(scenario, seed));
    let staged = ReportDir::begin(&out_dir)?;
    let run = run_in(
        scenario,
        seed,
        staged.path(),
        Recording {
            no_trace: options.no_trace,
            rendering,
            own_thread: options.recorder_thread,
        },
        extra_sink,
    );
    let mut report = match run {
        Ok(report) => report,
        Err(source) => {
            return Err(RunError::NotWritten {
                note: staged.untouched(),
                source: Box::new(source),
            });
        }
    };
    report.notes = staged.commit()?;
    report.out_dir = out_dir;
    Ok(report)
}

/// Runs a scenario with `seed` and writes its report straight into `dir`, which the caller
/// owns: a fresh folder inside a [`ReportDir`]'s staging folder (each run of a sweep or a
/// check). No lock, no rename, no completion marker (see
/// [`mark_complete`](crate::report_dir::mark_complete)).
pub fn run_into(
    scenario: &Scenario,
    seed: u64,
    dir: &Path,
    no_trace: bool,
    rendering: Rendering,
) -> Result<RunReport, RunError> {
    run_into_with_sink(scenario, seed, dir, no_trace, rendering, None)
}

/// [`run_into`] with an extra sink beside the recorder (see [`run_with_sink`]).
pub fn run_into_with_sink(
    scenario: &Scenario,
    seed: u64,
    dir: &Path,
    no_trace: bool,
    rendering: Rendering,
    extra_sink: Option<SinkFactory<'_>>,
) -> Result<RunReport, RunError> {
    let recording = Recording {
        no_trace,
        rendering,
        own_thread: false,
    };
    run_in(scenario, seed, dir, recording, extra_sink)
}

/// [`run_into_with_sink`], the recorder's thread chosen.
fn run_in(
    scenario: &Scenario,
    seed: u64,
    dir: &Path,
    recording: Recording,
    extra_sink: Option<SinkFactory<'_>>,
) -> Result<RunReport, RunError> {
    expect::validate(&scenario.expect, &scenario.file)?;
    // Its own `Arc`s: runs on other threads (sweep, check, explore) never share a count.
    let own = scenario.unshared();
    let (summary, facts) = scenario.runtime.block_on_from(
        scenario.virtual_origin,
        simulate(&own, seed, dir, recording, extra_sink),
    )??;
    let expectations = expect::evaluate(&scenario.expect, &summary);
    if recording.rendering == Rendering::Full {
        write_page(scenario, dir, &summary, &expectations)?;
    }
    Ok(RunReport {
        summary,
        out_dir: dir.to_path_buf(),
        seed,
        expectations,
        ignored_keys: scenario.router.ignored_keys.clone(),
        warnings: scenario.router.warnings.clone(),
        notes: Vec::new(),
        facts,
    })
}

/// `report.html`: the summary, and every `expect` line with what was measured.
fn write_page(
    scenario: &Scenario,
    dir: &Path,
    summary: &Summary,
    expectations: &[ExpectationResult],
) -> Result<(), RunError> {
    let rows: Vec<ExpectRow> = expectations
        .iter()
        .map(|e| ExpectRow {
            // A windowed line says its window: `p99_latency_ms in 5m..15m`.
            metric: match e.expectation.window {
                Some(w) => format!("{} in {}", e.expectation.metric, expect::format_window(w)),
                None => e.expectation.metric.clone(),
            },
            min: e.expectation.min,
            max: e.expectation.max,
            measured: e.measured,
            passed: e.passed,
        })
        .collect();
    write_report_html(
        dir,
        summary,
        &rows,
        PageTitle {
            title: &scenario.name,
            description: &scenario.description,
        },
    )?;
    Ok(())
}
