//! `routersim`: replay LLM-router incidents against LiteLLM's reliability rules, in seconds.
//!
//! Argument parsing and printing only; every command is a thin call into a library crate.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand, ValueEnum};
use routersim_report::print_summary;
use routersim_sim::bench::{BenchOptions, run_bench};
use routersim_sim::run::{RunOptions, run_file};

/// Exit code when an `expect` line fails.
const EXIT_EXPECT_FAILED: u8 = 1;
/// Exit code for bad input (a broken scenario, a bad flag) or an IO error.
const EXIT_ERROR: u8 = 2;

#[derive(Parser)]
#[command(
    name = "routersim",
    version,
    about = "Simulation and chaos-testing harness for LLM API routers"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Trace {
    /// Write requests.csv and attempts.csv.
    All,
    /// Skip the per-request and per-attempt CSVs (huge runs).
    None,
}

#[derive(Subcommand)]
enum Command {
    /// Run one scenario and write its report.
    Run {
        /// The scenario file (YAML).
        scenario: PathBuf,
        /// Override the scenario's seed.
        #[arg(long)]
        seed: Option<u64>,
        /// Report directory (default: reports/<name>/seed-<N>/).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Which per-request traces to write.
        #[arg(long, value_enum, default_value_t = Trace::All)]
        trace: Trace,
    },
    /// Measure simulated requests per wall-second against a pass-through floor.
    Bench {
        /// Virtual duration of the traffic (e.g. 1h, 10h).
        #[arg(long, default_value = "1h", value_parser = parse_duration)]
        duration: Duration,
        /// Arrivals per second.
        #[arg(long, default_value_t = 50.0)]
        rate: f64,
        /// Routing strategy of the benchmark router.
        #[arg(long, default_value = "simple-shuffle")]
        strategy: String,
        /// Which per-request traces to write.
        #[arg(long, value_enum, default_value_t = Trace::All)]
        trace: Trace,
        /// Report directory of the benchmark run.
        #[arg(long, default_value = "reports/bench")]
        out: PathBuf,
        /// Runs of each kind; the fastest of each is reported.
        #[arg(long, default_value_t = 3)]
        repeat: u32,
        /// Share of streamed requests (0 to 1).
        #[arg(long, default_value_t = 0.0)]
        stream_share: f64,
    },
}

fn parse_duration(text: &str) -> Result<Duration, String> {
    routersim_mock_providers::duration::parse_duration(text).map_err(|e| e.to_string())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Run {
            scenario,
            seed,
            out,
            trace,
        } => {
            let options = RunOptions {
                seed,
                out_dir: out,
                no_trace: trace == Trace::None,
            };
            match run_file(&scenario, &options) {
                Ok(report) => {
                    for warning in &report.warnings {
                        eprintln!("warning: router config: {warning}");
                    }
                    if !report.ignored_keys.is_empty() {
                        eprintln!(
                            "note: router config keys not modelled (ignored): {}",
                            report.ignored_keys.join(", ")
                        );
                    }
                    let mut stdout = std::io::stdout().lock();
                    let _ = print_summary(&report.summary, &mut stdout);
                    if !report.expectations.is_empty() {
                        let _ = writeln!(stdout, "expect:");
                        for result in &report.expectations {
                            let _ = writeln!(stdout, "  {result}");
                        }
                    }
                    let _ = writeln!(stdout, "report: {}", report.out_dir.display());
                    if report.passed() {
                        ExitCode::SUCCESS
                    } else {
                        let failed = report.failures().count();
                        eprintln!("{failed} expectation(s) failed:");
                        for result in report.failures() {
                            eprintln!("  {result}");
                        }
                        ExitCode::from(EXIT_EXPECT_FAILED)
                    }
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::from(EXIT_ERROR)
                }
            }
        }
        Command::Bench {
            duration,
            rate,
            strategy,
            trace,
            out,
            repeat,
            stream_share,
        } => {
            let options = BenchOptions {
                duration,
                rate,
                strategy,
                trace: trace == Trace::All,
                out_dir: out,
                repeat,
                stream_share,
            };
            match run_bench(&options) {
                Ok(result) => {
                    println!("requests simulated:     {}", result.requests);
                    println!(
                        "harness:                {:.3} s wall, {:.0} simulated req/s (traces {})",
                        result.sim_wall_secs,
                        result.sim_rate(),
                        if options.trace { "on" } else { "off" }
                    );
                    println!(
                        "floor (sleep+record):   {:.3} s wall, {:.0} simulated req/s",
                        result.floor_wall_secs,
                        result.floor_rate()
                    );
                    println!("ratio harness/floor:    {:.3}", result.ratio());
                    if let Some(kib) = result.peak_rss_kib {
                        println!("peak RSS after harness: {:.1} MiB", kib as f64 / 1024.0);
                    }
                    println!("report: {}", result.report.out_dir.display());
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::from(EXIT_ERROR)
                }
            }
        }
    }
}
