//! `routersim`: replay LLM-router incidents against LiteLLM's and DeltaLLM's reliability
//! rules, in seconds.
//!
//! Argument parsing and printing only; every command is a thin call into a library crate
//! (one file per command under `commands/`).

mod args;
mod commands;
mod error;
mod exit;
mod out;

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use routersim_engine::config::Profile;

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

#[derive(Subcommand)]
enum Command {
    /// Write a commented template to start from: incident, ci or sweep.
    Init(commands::init::InitArgs),
    /// Run one scenario and write its report.
    Run(commands::run::RunArgs),
    /// Measure simulated requests per wall-second against a pass-through floor.
    Bench(commands::bench::BenchArgs),
    /// Run every scenario in a directory for each seed; a verdict for CI, with junit.xml.
    Check(commands::check::CheckArgs),
    /// Run a grid of settings on the same seeds and compare them.
    Sweep(commands::sweep::SweepArgs),
    /// Join the sweep.csv files of `sweep --shard` runs into one.
    Merge(commands::sweep::MergeArgs),
    /// Compare two reports: summary metrics and the first request that went differently.
    Diff(commands::diff::DiffArgs),
    /// Run a scenario under seed-chosen fault mixes and check invariants on every run.
    Explore(commands::explore::ExploreArgs),
    /// Serve the scenario's fake providers over HTTP (OpenAI, Anthropic, Azure) in real time.
    Serve(commands::serve::ServeArgs),
    /// Serve routersim's engine as an OpenAI-compatible router (LiteLLM proxy config).
    Proxy(commands::proxy::ProxyArgs),
    /// Send the scenario's traffic in real time to a real router in front of its fake providers.
    Drive(commands::drive::DriveArgs),
    /// Turn a router's logs into a scenario that replays the incident, and a report of it.
    Import(commands::import::ImportArgs),
}

/// `routersim --version`: clap's `routersim X.Y.Z`, then each LiteLLM release a profile models,
/// read from the engine's profile table (`routersim 0.1.0 (litellm-1.110 models LiteLLM
/// 1.110.2)`), so a CI log names both versions a verdict rests on.
fn version() -> &'static str {
    let modelled: Vec<String> = Profile::all()
        .filter_map(|p| {
            p.litellm_version()
                .map(|v| format!("{} models LiteLLM {v}", p.as_str()))
        })
        .collect();
    let version = format!("{} ({})", env!("CARGO_PKG_VERSION"), modelled.join(", "));
    // Once per process, for clap's `&'static str`.
    Box::leak(version.into_boxed_str())
}

fn main() -> ExitCode {
    let matches = Cli::command().version(version()).get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    // The one read of the environment: LiteLLM's `ROUTER_MAX_FALLBACKS`, passed to every
    // router config load (which names it in its warnings when it is set).
    #[allow(
        clippy::disallowed_methods,
        reason = "src/ is where the environment is read"
    )]
    let options = routersim_config::load::LoadOptions {
        max_fallbacks_env: std::env::var(routersim_engine::config::MAX_FALLBACKS_ENV).ok(),
    };
    let _ = routersim_sim::scenario::set_router_load_options(options);
    let result = match cli.command {
        Command::Init(args) => commands::init::run(args),
        Command::Run(args) => commands::run::run(args),
        Command::Bench(args) => commands::bench::run(args),
        Command::Check(args) => commands::check::run(args),
        Command::Sweep(args) => commands::sweep::run(args),
        Command::Merge(args) => commands::sweep::merge(args),
        Command::Diff(args) => commands::diff::run(args),
        Command::Explore(args) => commands::explore::run(args),
        Command::Serve(args) => commands::serve::run(args),
        Command::Proxy(args) => commands::proxy::run(args),
        Command::Drive(args) => commands::drive::run(args),
        Command::Import(args) => commands::import::run(args),
    };
    // The one error path: a command that could not do its work says why and exits 2.
    result.unwrap_or_else(|e| {
        eprintln!("error: {e}");
        ExitCode::from(exit::EXIT_ERROR)
    })
}
