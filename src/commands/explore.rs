//! `routersim explore SCENARIO --seeds 1..10000 [--faults random|none] [--profiles
//! scenario|all|NAME,…]`.

use routersim_suite::seeds::Seeds;
use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use routersim_mock_providers::duration::format_duration;
use routersim_suite::explore::faults::FaultMode;
use routersim_suite::explore::shrink::{Size, shrink};
use routersim_suite::explore::{ExploreOptions, Explorer, ProfileChoice, Scratch, SeedResult};
use routersim_suite::sweep::worker_count;

use crate::args::{Faults, SeedsParser};
use crate::error::CliError;
use crate::exit::EXIT_EXPECT_FAILED;
use crate::out::Out;

/// `routersim explore`.
#[derive(clap::Args, Debug)]
pub struct ExploreArgs {
    /// The scenario file (YAML).
    pub scenario: PathBuf,
    /// Seeds: `1..10000` (inclusive), `1,2,7`, `3`, or a mix (`1..3,9`).
    #[arg(long, default_value = "1..100", value_parser = SeedsParser)]
    pub seeds: Seeds,
    /// Extra faults per seed.
    #[arg(long, value_enum, default_value_t = Faults::Random)]
    pub faults: Faults,
    /// The profile each seed runs under: `scenario` (its own), `all` (one drawn per seed from
    /// every profile), or a comma-separated list to draw from (`litellm-1.110,multigrid`).
    #[arg(long, default_value = "scenario", value_parser = ProfileChoice::parse)]
    pub profiles: ProfileChoice,
    /// Worker threads (default: every core).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Where shrunk scenarios go (default: reports/explore/NAME/).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Check that a second run writes the same bytes on every N-th seed (0: never, 1: all).
    #[arg(long, default_value_t = routersim_suite::explore::DEFAULT_DETERMINISM_EVERY)]
    pub determinism_every: usize,
    /// Runs one shrink may spend.
    #[arg(long, default_value_t = routersim_suite::explore::DEFAULT_SHRINK_RUNS)]
    pub shrink_runs: usize,
}

fn describe(before: &Size, after: &Size) -> String {
    format!(
        "fault windows {} -> {}, provider faults {} -> {}, duration {} -> {}, requests {} -> {}",
        before.fault_windows,
        after.fault_windows,
        before.provider_faults,
        after.provider_faults,
        format_duration(before.duration),
        format_duration(after.duration),
        before.arrivals,
        after.arrivals
    )
}

/// Explores the seeds, prints every violation in seed order, shrinks the first of each
/// invariant into a scenario file, and exits 1 when anything broke.
pub fn run(args: ExploreArgs) -> Result<ExitCode, CliError> {
    let seeds = args.seeds.into_vec();
    let workers = worker_count(args.jobs, seeds.len())?;
    let options = ExploreOptions {
        seeds,
        faults: match args.faults {
            Faults::Random => FaultMode::Random,
            Faults::None => FaultMode::None,
        },
        profiles: args.profiles.clone(),
        workers,
        determinism_every: args.determinism_every,
        shrink_runs: args.shrink_runs,
        bounds_hook: None,
    };
    let explorer = Explorer::prepare(&args.scenario, options)?;
    let name = explorer.scenario().name.clone();
    let out = args
        .out
        .unwrap_or_else(|| Path::new("reports").join("explore").join(&name));
    let total = explorer.options().seeds.len();
    let determinism = match args.determinism_every {
        0 => "never".to_string(),
        1 => "every seed".to_string(),
        n => format!("every {n}th seed"),
    };
    eprintln!(
        "explore {name}: {total} seed(s), faults {}, profiles {}, {workers} worker(s), \
         determinism checked on {determinism}",
        match args.faults {
            Faults::Random => "random",
            Faults::None => "none",
        },
        args.profiles.describe()
    );
    let bar = super::progress_bar(total, "seeds");
    let started = Instant::now();
    let results = explorer.run_seeds(&|done| bar.set_position(done as u64));
    bar.finish_and_clear();
    let elapsed = started.elapsed().as_secs_f64();

    let mut stdout = Out::stdout();
    let (violating, files) = print_violations(&mut stdout, &explorer, &results, &out, workers)?;
    let checked = results.iter().filter(|r| r.determinism_checked).count();
    let arrivals: u64 = results.iter().map(|r| r.arrivals).sum();
    writeln!(
        stdout,
        "explore {name}: {} seed(s) in {elapsed:.1} s ({:.1} seeds/s, {arrivals} requests), \
         determinism checked on {checked}: {violating} violating seed(s)",
        results.len(),
        results.len() as f64 / elapsed.max(1e-9),
    )?;
    if violating == 0 {
        Ok(ExitCode::SUCCESS)
    } else {
        writeln!(
            stdout,
            "shrunk scenario(s) in {}: {}",
            out.display(),
            files.len()
        )?;
        Ok(ExitCode::from(EXIT_EXPECT_FAILED))
    }
}

/// Each violating seed, and the first violation of each invariant shrunk to a scenario file:
/// how many seeds violated, and the files written.
fn print_violations(
    stdout: &mut Out,
    explorer: &Explorer,
    results: &[SeedResult],
    out: &Path,
    workers: usize,
) -> std::io::Result<(usize, Vec<PathBuf>)> {
    let mut shrunk_invariants = BTreeSet::new();
    let mut violating = 0usize;
    let mut files: Vec<PathBuf> = Vec::new();
    let scratch = Scratch::new(workers);
    for result in results {
        let Some((violation, count)) = &result.violation else {
            continue;
        };
        violating += 1;
        let more = if *count > 1 {
            format!(" ({} more in this run)", count - 1)
        } else {
            String::new()
        };
        let profile = explorer
            .profile(result.seed)
            .map_or(String::new(), |p| format!(" (profile {})", p.as_str()));
        writeln!(stdout, "seed {}{profile}: {violation}{more}", result.seed)?;
        if !shrunk_invariants.insert(violation.invariant) {
            continue;
        }
        let tree = explorer.variant(result.seed);
        let shrunk = shrink(
            explorer,
            tree,
            result.seed,
            violation.clone(),
            explorer.options().shrink_runs,
            &scratch,
        );
        match explorer.write_scenario(out, &shrunk.tree, result.seed, &shrunk.violation) {
            Ok(file) => {
                writeln!(
                    stdout,
                    "  shrunk in {} run(s): {}\n  still: {}\n  file: {}\n  replay: routersim run \
                     {}\n  check: routersim explore {} --seeds {} --faults none",
                    shrunk.runs,
                    describe(&shrunk.before, &shrunk.after),
                    shrunk.violation,
                    file.display(),
                    file.display(),
                    file.display(),
                    result.seed
                )?;
                files.push(file);
            }
            Err(e) => {
                writeln!(stdout, "  could not write the shrunk scenario: {e}")?;
            }
        }
    }
    Ok((violating, files))
}
