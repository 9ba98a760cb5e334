//! The import itself: two passes over the log (the survey, then the requests), the scenario,
//! the router copy and the imported report, all written into a staging folder that replaces
//! `--out` only when everything was written (as every routersim report folder).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use routersim_report::summary::Summary;
use routersim_sim::report_dir::{ReportDir, mark_complete};
use routersim_sim::scenario::{Scenario, load_scenario};

use crate::error::ImportError;
use crate::faults::{FoundFault, find_faults};
use crate::fit::ProviderModel;
use crate::format::intern::Interner;
use crate::format::{Format, ReadOptions, read_calls};
use crate::notes::{fallback_note, fault_notes, format_notes, read_notes};
use crate::options::{ImportOptions, SLOTS_PER_BUCKET};
use crate::report::{ImportedReport, write_error_series};
use crate::requests::Assembler;
use crate::router::Router;
use crate::scenario::{ScenarioSpec, TrafficSection, render};
use crate::survey::Survey;
use crate::traffic::{Arrival, EXPLICIT_MAX, TRAFFIC_CSV, TrafficWriter, explicit_entries};

/// The scenario file's name in the output folder.
pub const SCENARIO_YAML: &str = "scenario.yaml";
/// The imported report's folder in the output folder.
pub const IMPORTED_DIR: &str = "imported";

/// One deployment as the log shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct DeploymentSeen {
    /// Its id (the router's).
    pub id: Arc<str>,
    /// Provider calls the log shows.
    pub calls: u64,
    /// Of those, failed.
    pub failed: u64,
    /// The fitted model.
    pub model: ProviderModel,
}

/// What an import did.
#[derive(Clone, Debug)]
pub struct Imported {
    /// The format read.
    pub format: Format,
    /// Rows read, and kept by the filters.
    pub rows: (u64, u64),
    /// Requests imported.
    pub requests: u64,
    /// The log's span, seconds.
    pub span: f64,
    /// The log's first start, Unix seconds (the scenario's t = 0).
    pub t0: f64,
    /// Deployments the log called.
    pub deployments: Vec<DeploymentSeen>,
    /// The fault windows found (Unix seconds).
    pub faults: Vec<FoundFault>,
    /// Where the import assumed.
    pub notes: Vec<String>,
    /// The output folder.
    pub out: PathBuf,
    /// Whether the traffic went into the scenario (else `traffic.csv`).
    pub explicit_traffic: bool,
    /// The imported report's summary.
    pub summary: Summary,
}

/// Imports `options.log` into `options.out`.
pub fn import(options: &ImportOptions) -> Result<Imported, ImportError> {
    let mut router = match &options.config {
        Some(path) => Router::load(path)?,
        None => Router::inferred(),
    };
    let read = read_options(options)?;
    let bucket = options.bucket.as_secs_f64();
    if bucket <= 0.0 {
        return Err(ImportError::Option(
            "--bucket must be longer than 0s".into(),
        ));
    }
    let (survey, summary1) = first_pass(options, &read, &mut router, bucket)?;
    let format = summary1.format.unwrap_or(Format::Csv);
    let faults = find_faults(&survey.series);
    for group in &survey.groups {
        router.add_group(group);
    }
    let staged = ReportDir::begin(&options.out).map_err(|e| ImportError::Output(e.to_string()))?;
    let dir = staged.path().to_path_buf();
    let (router_file, router_notes) = router.write(&dir, &dir_of(&options.out))?;
    let mut notes = format_notes(format, &survey);
    notes.extend(router_notes);
    notes.extend(fault_notes(&faults, survey.t_min));
    let name = options
        .name
        .clone()
        .unwrap_or_else(|| default_name(&options.log));
    let providers = provider_models(&survey);
    let spec = Spec {
        name: &name,
        description: &description(options, format, &survey, &faults),
        t0: survey.t_min,
        duration: survey.t_max - survey.t_min,
        router_file: &router_file,
        providers: &providers,
        faults: &faults,
    };
    let draft = write_scenario(&dir, &spec, &TrafficSection::None, &notes)?;
    let imported_dir = dir.join(IMPORTED_DIR);
    let pass = second_pass(
        options,
        &read,
        &mut router,
        &survey,
        &draft,
        &dir,
        &imported_dir,
    )?;
    notes.extend(read_notes(&summary1, pass.late));
    notes.extend(fallback_note(format, pass.fell_back));
    let traffic = if pass.requests <= EXPLICIT_MAX {
        let text = explicit_entries(&dir.join(TRAFFIC_CSV))?;
        let _ = std::fs::remove_file(dir.join(TRAFFIC_CSV));
        TrafficSection::Explicit(text)
    } else {
        TrafficSection::File(TRAFFIC_CSV.to_string())
    };
    write_scenario(&dir, &spec, &traffic, &notes)?;
    write_error_series(&imported_dir, &survey.series, survey.t_min, bucket)?;
    crate::summary_file::write_import_json(
        &imported_dir,
        options,
        format,
        &summary1,
        &faults,
        &notes,
        survey.t_min,
    )?;
    mark_complete(&imported_dir).map_err(|e| ImportError::Output(e.to_string()))?;
    staged
        .commit()
        .map_err(|e| ImportError::Output(e.to_string()))?;
    Ok(Imported {
        format,
        rows: (summary1.rows, summary1.kept),
        requests: pass.requests,
        span: survey.t_max - survey.t_min,
        t0: survey.t_min,
        deployments: deployments_seen(&survey, providers),
        faults,
        notes,
        out: options.out.clone(),
        explicit_traffic: matches!(traffic, TrafficSection::Explicit(_)),
        summary: pass.summary,
    })
}

/// Reads the log once: its survey (series, fits, span).
fn first_pass(
    options: &ImportOptions,
    read: &ReadOptions,
    router: &mut Router,
    bucket: f64,
) -> Result<(Survey, crate::format::ReadSummary), ImportError> {
    let mut survey = Survey::new(bucket / f64::from(SLOTS_PER_BUCKET));
    let summary = read_calls(&options.log, read, &mut Interner::default(), &mut |call| {
        survey.add(&call, router);
        Ok(())
    })?;
    if summary.kept == 0 {
        return Err(ImportError::Empty {
            path: options.log.clone(),
            message: if summary.rows == 0 {
                "the log has no rows".into()
            } else {
                format!(
                    "all {} rows were left out by --since, --until or --model-group",
                    summary.rows
                )
            },
        });
    }
    // A scenario lasts at most 10 years (`87600h`).
    if survey.t_max - survey.t_min > 87_600.0 * 3600.0 {
        return Err(ImportError::Option(format!(
            "{}: the log spans more than 10 years, the longest a scenario may last: narrow it with --since and --until",
            options.log.display()
        )));
    }
    Ok((survey, summary))
}

/// The folder a path is in (for relative paths from the output folder).
fn dir_of(out: &Path) -> PathBuf {
    out.to_path_buf()
}

fn default_name(log: &Path) -> String {
    let file = log
        .file_name()
        .map_or("log".into(), |s| s.to_string_lossy().to_string());
    let file = file.strip_suffix(".gz").unwrap_or(&file);
    let stem = file.rsplit_once('.').map_or(file, |(stem, _)| stem);
    let clean: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    format!("imported-{clean}")
}

fn description(
    options: &ImportOptions,
    format: Format,
    survey: &Survey,
    faults: &[FoundFault],
) -> String {
    let file = options
        .log
        .file_name()
        .map_or_else(String::new, |f| f.to_string_lossy().to_string());
    format!(
        "imported from {file} ({}): {:.1} s, {} fault windows found",
        format.describe(),
        survey.t_max - survey.t_min,
        faults.len()
    )
}

/// The filters, with `--since`/`--until` durations resolved against the log's first row.
fn read_options(options: &ImportOptions) -> Result<ReadOptions, ImportError> {
    let mut read = ReadOptions {
        format: options.format,
        since: None,
        until: None,
        model_groups: options.model_groups.clone(),
    };
    let relative = [options.since, options.until]
        .iter()
        .any(|b| matches!(b, Some(crate::options::TimeBound::After(_))));
    let start = if relative {
        let mut first = f64::INFINITY;
        read_calls(&options.log, &read, &mut Interner::default(), &mut |call| {
            first = first.min(call.start);
            Ok(())
        })?;
        first
    } else {
        0.0
    };
    read.since = options.since.map(|b| b.resolve(start));
    read.until = options.until.map(|b| b.resolve(start));
    if let (Some(s), Some(u)) = (read.since, read.until)
        && u <= s
    {
        return Err(ImportError::Option("--until must be after --since".into()));
    }
    Ok(read)
}

fn provider_models(survey: &Survey) -> BTreeMap<Arc<str>, ProviderModel> {
    survey
        .fits
        .deployments
        .iter()
        .map(|(id, fit)| (id.clone(), fit.model()))
        .collect()
}

fn deployments_seen(
    survey: &Survey,
    providers: BTreeMap<Arc<str>, ProviderModel>,
) -> Vec<DeploymentSeen> {
    providers
        .into_iter()
        .map(|(id, model)| {
            let buckets = survey.series.deployments.get(&id);
            let (calls, ok) = buckets
                .into_iter()
                .flat_map(|b| b.values())
                .fold((0, 0), |(c, o), b| {
                    (c + u64::from(b.calls), o + u64::from(b.ok))
                });
            DeploymentSeen {
                id,
                calls,
                failed: calls - ok,
                model,
            }
        })
        .collect()
}

/// The scenario's parts that do not change between the draft and the final file.
struct Spec<'a> {
    name: &'a str,
    description: &'a str,
    t0: f64,
    duration: f64,
    router_file: &'a str,
    providers: &'a BTreeMap<Arc<str>, ProviderModel>,
    faults: &'a [FoundFault],
}

/// Writes `scenario.yaml` and loads it back (it must load: that is what `run` will do).
fn write_scenario(
    dir: &Path,
    spec: &Spec,
    traffic: &TrafficSection,
    notes: &[String],
) -> Result<Scenario, ImportError> {
    let text = render(&ScenarioSpec {
        name: spec.name,
        description: spec.description,
        duration: spec.duration,
        t0: spec.t0,
        router_file: spec.router_file,
        providers: spec.providers,
        faults: spec.faults,
        traffic,
        notes,
    });
    let path = dir.join(SCENARIO_YAML);
    std::fs::write(&path, text).map_err(|e| ImportError::output(&path, e))?;
    load_scenario(&path).map_err(|e| ImportError::Scenario {
        path: path.clone(),
        message: e.to_string(),
    })
}

/// What the second pass produced.
struct SecondPass {
    requests: u64,
    late: u64,
    /// Requests that moved to another group.
    fell_back: u64,
    summary: Summary,
}

/// Reads the log again: requests into the traffic file and the imported report.
#[allow(clippy::too_many_arguments, reason = "the import's state, passed once")]
fn second_pass(
    options: &ImportOptions,
    read: &ReadOptions,
    router: &mut Router,
    survey: &Survey,
    draft: &Scenario,
    dir: &Path,
    imported_dir: &Path,
) -> Result<SecondPass, ImportError> {
    std::fs::create_dir_all(imported_dir).map_err(|e| ImportError::output(imported_dir, e))?;
    let mut traffic = TrafficWriter::create(dir)?;
    let mut report = ImportedReport::new(imported_dir, draft, survey.t_min)?;
    let mut assembler = Assembler::new(survey.max_disorder, survey.max_latency);
    let t0 = survey.t_min;
    let mut fell_back = 0;
    let mut out = |request: crate::requests::Request| -> Result<(), ImportError> {
        fell_back += u64::from(request.fell_back());
        traffic.write(&Arrival::of(&request, t0))?;
        report.add(&request);
        Ok(())
    };
    read_calls(
        &options.log,
        read,
        &mut Interner::default(),
        &mut |mut call| {
            if call.outcome.reached_a_provider() {
                call.deployment = Some(router.resolve(&call));
            }
            assembler.push(call, &mut out)
        },
    )?;
    let late = assembler.finish(&mut out)?;
    traffic.finish()?;
    let requests = report.requests;
    let summary = report.finish(imported_dir, draft, survey.t_max)?;
    Ok(SecondPass {
        requests,
        late,
        fell_back,
        summary,
    })
}
