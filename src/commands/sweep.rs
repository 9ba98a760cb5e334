//! `routersim sweep SCENARIO --set KEY=V1,V2 … --seeds A..B` and `routersim merge SHARD…`.

use routersim_suite::seeds::Seeds;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use routersim_suite::sweep::{
    self, SWEEP_CSV, SWEEP_SVG, default_out_dir, format_table, parse_set_args, parse_shard,
    prepare, worker_count,
};

use routersim_sim::config_keys::{config_lines, strict_errors_across};

use crate::args::SeedsParser;
use crate::error::{CliError, strict};
use crate::out::Out;

/// `routersim sweep`.
#[derive(clap::Args, Debug)]
pub struct SweepArgs {
    /// The scenario file (YAML).
    pub scenario: PathBuf,
    /// A router config path and the values to try: `router_settings.allowed_fails=0,1,3,5`.
    /// Repeat for a grid.
    #[arg(long = "set", value_name = "KEY=V1,V2,…")]
    pub set: Vec<String>,
    /// Seeds, the same for every combination: `1..20` (inclusive), `1,2,7`, `3`, or a mix
    /// (`1..3,9`).
    #[arg(long, default_value = "1..10", value_parser = SeedsParser)]
    pub seeds: Seeds,
    /// Output directory (default: reports/sweep/NAME/).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Run only a deterministic slice `K/N` of the grid (K from 1); `routersim merge` joins
    /// the slices.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<String>,
    /// Worker threads (default: every core).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Make every router config key routersim does not use an error (exit 2): keys LiteLLM
    /// would not know (typos), keys routersim does not model, and keys (traffic's `models`
    /// and `workload` too) the chosen profile does not read.
    #[arg(long)]
    pub strict: bool,
    /// Sweep only the values listed: without it, each key's own value in the config (`null`
    /// when unset) is added to its values, labelled `(config)`, when not listed.
    #[arg(long)]
    pub no_baseline: bool,
    /// Keep each run's `report.html` (its plots inline) beside its summary, linked from
    /// `index.html`; without it a run keeps only `summary.json`.
    #[arg(long)]
    pub reports: bool,
}

/// `routersim merge`.
#[derive(clap::Args, Debug)]
pub struct MergeArgs {
    /// The shards' output directories, or a quoted glob such as 'shards/*' (expanded by
    /// routersim, sorted; matching nothing is an error).
    #[arg(required = true)]
    pub shards: Vec<PathBuf>,
    /// Where the merged sweep.csv and sweep.svg go.
    #[arg(long)]
    pub out: PathBuf,
}

/// Runs the grid (or a shard of it), writes runs.csv, sweep.csv, sweep.svg and sweep.json,
/// and prints a table of the combinations.
pub fn run(args: SweepArgs) -> Result<ExitCode, CliError> {
    let keys = parse_set_args(&args.set)?;
    let seeds = args.seeds.into_vec();
    let shard = args.shard.as_deref().map(parse_shard).transpose()?;
    let mut sweep = prepare(&args.scenario, keys, seeds, shard, !args.no_baseline)?;
    sweep.keep_reports = args.reports;
    let scenario = sweep.scenario(0);
    if args.strict {
        strict(strict_errors_across(sweep.scenarios()))?;
    }
    for line in config_lines(&scenario.router) {
        eprintln!("{line}");
    }
    let manifest = &sweep.manifest;
    let jobs = sweep.jobs();
    let workers = worker_count(args.jobs, jobs.len())?;
    let out = args
        .out
        .unwrap_or_else(|| default_out_dir(&manifest.scenario, shard));
    let combos = manifest.combinations().len();
    let shard_note = shard.map_or(String::new(), |s| format!(", shard {s}"));
    eprintln!(
        "sweep {}: {combos} combination(s) × {} seed(s){shard_note}: {} run(s) on {workers} worker(s)",
        manifest.scenario,
        manifest.seeds.len(),
        jobs.len()
    );
    let bar = super::progress_bar(jobs.len(), "runs");
    let started = Instant::now();
    let result = sweep.run_into_folder(&out, workers, &|done| bar.set_position(done as u64));
    bar.finish_and_clear();
    let sweep::SweepOutput {
        rows,
        stats,
        notes,
        manifest,
    } = result?;
    let elapsed = started.elapsed();
    for note in &notes {
        eprintln!("note: {note}");
    }
    let mut stdout = Out::stdout();
    write!(stdout, "{}", format_table(&manifest, &stats))?;
    for line in &manifest.no_effect {
        writeln!(stdout, "note: {line}")?;
    }
    writeln!(
        stdout,
        "{} run(s) in {:.1} s; {} and {}: mean and 95% interval over seeds",
        rows.len(),
        elapsed.as_secs_f64(),
        SWEEP_CSV,
        SWEEP_SVG
    )?;
    if let Some(s) = shard {
        writeln!(
            stdout,
            "shard {s}: join the shards with `routersim merge SHARD_DIR… --out DIR` (or a quoted \
             glob: `routersim merge 'shards/*' --out DIR`)"
        )?;
    }
    writeln!(stdout, "report: {}", out.display())?;
    Ok(ExitCode::SUCCESS)
}

/// Joins shards' runs.csv and recomputes sweep.csv and sweep.svg.
pub fn merge(args: MergeArgs) -> Result<ExitCode, CliError> {
    // A quoted pattern (`'shards/*'`) is expanded here, sorted, the same on every shell.
    let shards = sweep::expand_globs(&args.shards)?;
    let merged = sweep::merge(&shards, &args.out)?;
    for note in &merged.notes {
        eprintln!("note: {note}");
    }
    let mut stdout = Out::stdout();
    write!(stdout, "{}", format_table(&merged.manifest, &merged.stats))?;
    for line in &merged.manifest.no_effect {
        writeln!(stdout, "note: {line}")?;
    }
    writeln!(
        stdout,
        "merged {} shard(s): {} run(s) of sweep {}",
        shards.len(),
        merged.rows.len(),
        merged.manifest.scenario
    )?;
    writeln!(stdout, "report: {}", args.out.display())?;
    Ok(ExitCode::SUCCESS)
}
