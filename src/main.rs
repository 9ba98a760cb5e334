//! `routersim`: replay LLM-router incidents against LiteLLM's and DeltaLLM's reliability
//! rules, in seconds.
//!
//! Argument parsing and printing only; every command is a thin call into a library crate
//! (one file per command under `commands/`).

mod commands;
mod error;
mod out;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand, ValueEnum};
use routersim_sim::transport::Transport;
use routersim_suite::seeds::Seeds;

/// Exit code when an `expect` line (or a golden summary) fails.
pub const EXIT_EXPECT_FAILED: u8 = 1;
/// Exit code for bad input (a broken scenario, a bad flag) or an IO error.
pub const EXIT_ERROR: u8 = 2;

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

/// Which per-request traces to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Trace {
    /// Write requests.csv and attempts.csv.
    All,
    /// Skip the per-request and per-attempt CSVs (huge runs).
    None,
}

/// Which runtime runs a simulation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum RuntimeArg {
    /// The virtual-time executor: exact deadlines, 1.4-1.9x tokio's speed on the bench workload (the default).
    #[default]
    Virtual,
    /// tokio's paused current-thread runtime: timers rounded up to whole milliseconds.
    Tokio,
}

impl From<RuntimeArg> for routersim_runtime::RuntimeKind {
    fn from(arg: RuntimeArg) -> Self {
        match arg {
            RuntimeArg::Virtual => Self::Virtual,
            RuntimeArg::Tokio => Self::Tokio,
        }
    }
}

/// `routersim run`.
#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// The scenario file (YAML).
    pub scenario: PathBuf,
    /// Override the scenario's seed.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Report directory (default: reports/NAME/seed-N/).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Which per-request traces to write.
    #[arg(long, value_enum, default_value_t = Trace::All)]
    pub trace: Trace,
    /// Make every router config key routersim does not use an error (exit 2): keys LiteLLM
    /// would not know (typos) and keys routersim does not model.
    #[arg(long)]
    pub strict: bool,
    /// How the router reaches the fake providers, overriding the scenario's `transport`:
    /// `memory`, or `http` (the engine's HTTP adapter and the wire server, in memory).
    #[arg(long, value_name = "memory|http")]
    pub transport: Option<Transport>,
    /// The router's profile, overriding the config's `router_settings.profile` (`litellm`,
    /// `deltallm`, `litellm-1.110`); explicit settings still win over its bundle.
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
    /// Which runtime runs the simulation: `virtual` (exact deadlines) or `tokio` (paused
    /// tokio, millisecond timers). Each is deterministic; they differ below a millisecond.
    #[arg(long, value_enum, default_value_t = RuntimeArg::Virtual)]
    pub runtime: RuntimeArg,
    /// Print the result as one JSON document on stdout (warnings and notes go to stderr).
    #[arg(long, conflicts_with = "quiet")]
    pub json: bool,
    /// Print nothing but errors (the exit code is the verdict).
    #[arg(long, short)]
    pub quiet: bool,
}

/// `routersim bench`.
#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// Virtual duration of the traffic (e.g. 1h, 10h).
    #[arg(long, default_value = "1h", value_parser = parse_duration)]
    pub duration: Duration,
    /// Arrivals per second.
    #[arg(long, default_value_t = 50.0)]
    pub rate: f64,
    /// Routing strategy of the benchmark router.
    #[arg(long, default_value = "simple-shuffle")]
    pub strategy: String,
    /// `router_settings.profile` of the benchmark router (`litellm`, `deltallm`,
    /// `litellm-1.110`, `multigrid`, …); none: the documented rules.
    #[arg(long)]
    pub profile: Option<String>,
    /// Which per-request traces to write.
    #[arg(long, value_enum, default_value_t = Trace::All)]
    pub trace: Trace,
    /// Report directory of the benchmark run.
    #[arg(long, default_value = "reports/bench")]
    pub out: PathBuf,
    /// Runs of each kind (at least 1); the fastest of each is reported.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..))]
    pub repeat: u32,
    /// Share of streamed requests (0 to 1).
    #[arg(long, default_value_t = 0.0)]
    pub stream_share: f64,
    /// Instead: memory per in-flight request, with N requests in flight at once (the
    /// `--stream-share` of them streams).
    #[arg(
        long,
        value_name = "N",
        conflicts_with_all = ["duration", "rate", "strategy", "trace", "repeat"]
    )]
    pub in_flight: Option<u32>,
    /// Instead: the wire server's speed over loopback (`routersim serve`'s server, a load
    /// generator of routersim's own): non-streamed req/s, added latency, concurrent streams.
    #[arg(
        long,
        conflicts_with_all = ["duration", "rate", "strategy", "trace", "repeat", "in_flight"]
    )]
    pub serve: bool,
    /// With --serve: SSE streams held open at once.
    #[arg(long, default_value_t = 2000, requires = "serve")]
    pub streams: usize,
    /// With --serve: keep-alive connections of the throughput phase.
    #[arg(long, default_value_t = 64, requires = "serve")]
    pub connections: usize,
    /// The harness run's transport: `http` runs the bench workload through the engine's HTTP
    /// adapter and the wire server (in memory) and also reports its rate against `memory`.
    #[arg(
        long,
        value_name = "memory|http",
        default_value = "memory",
        conflicts_with_all = ["in_flight", "serve"]
    )]
    pub transport: Transport,
    /// The harness's runtime; the other runtime's harness and floor are timed beside it.
    #[arg(long, value_enum, default_value_t = RuntimeArg::Virtual, conflicts_with = "serve")]
    pub runtime: RuntimeArg,
    /// Time only the harness's own runtime (no comparison with the other).
    #[arg(long, conflicts_with = "serve")]
    pub no_compare: bool,
    /// Router replicas behind a round-robin balancer (`router.replicas`), each with its own
    /// state; the floor is the same traffic without routers.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=1024), conflicts_with = "serve")]
    pub replicas: u16,
}

/// `routersim check`.
#[derive(clap::Args, Debug)]
pub struct CheckArgs {
    /// A directory of scenarios (searched recursively) or one scenario file.
    pub dir: PathBuf,
    /// Seeds to run each scenario with: `1..5` (inclusive), `1,2,7`, `3`, or a mix
    /// (`1..3,9`); default: each scenario's own seed.
    #[arg(long, value_parser = SeedsParser)]
    pub seeds: Option<Seeds>,
    /// Where every run's report and junit.xml go.
    #[arg(long, default_value = "reports/check")]
    pub out: PathBuf,
    /// Write each run's summary beside its scenario as a golden (`*.golden.json`).
    #[arg(long)]
    pub bless: bool,
    /// Make every router config key routersim does not use an error (exit 2): keys LiteLLM
    /// would not know (typos) and keys routersim does not model.
    #[arg(long)]
    pub strict: bool,
    /// Run every scenario over this transport (`memory` or `http`), overriding its
    /// `transport`; goldens ignore the `transport` key.
    #[arg(long, value_name = "memory|http")]
    pub transport: Option<Transport>,
    /// How far every golden metric may move, relative to the golden (`2%`); a scenario's
    /// `golden: {tolerance: {METRIC: N%}}` wins for the metrics it names.
    #[arg(long, value_name = "N%", default_value = "0%", value_parser = parse_tolerance)]
    pub tolerance: f64,
    /// Print the result as one JSON document on stdout (warnings and notes go to stderr).
    #[arg(long, conflicts_with = "quiet")]
    pub json: bool,
    /// Print nothing but errors (the exit code is the verdict).
    #[arg(long, short)]
    pub quiet: bool,
}

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
    /// would not know (typos) and keys routersim does not model.
    #[arg(long)]
    pub strict: bool,
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

/// `routersim diff`.
#[derive(clap::Args, Debug)]
pub struct DiffArgs {
    /// The first report directory.
    pub report_a: PathBuf,
    /// The second report directory.
    pub report_b: PathBuf,
    /// Print the result as one JSON document on stdout (warnings and notes go to stderr).
    #[arg(long, conflicts_with = "quiet")]
    pub json: bool,
    /// Print nothing but errors (the exit code is the verdict).
    #[arg(long, short)]
    pub quiet: bool,
}

/// Which extra faults `explore` adds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Faults {
    /// A seed-chosen mix of fault windows and provider quotas on top of the scenario's own.
    Random,
    /// None: only the seed changes.
    None,
}

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

#[derive(Subcommand)]
enum Command {
    /// Run one scenario and write its report.
    Run(RunArgs),
    /// Measure simulated requests per wall-second against a pass-through floor.
    Bench(BenchArgs),
    /// Run every scenario in a directory for each seed; a verdict for CI, with junit.xml.
    Check(CheckArgs),
    /// Run a grid of settings on the same seeds and compare them.
    Sweep(SweepArgs),
    /// Join the sweep.csv files of `sweep --shard` runs into one.
    Merge(MergeArgs),
    /// Compare two reports: summary metrics and the first request that went differently.
    Diff(DiffArgs),
    /// Run a scenario under seed-chosen fault mixes and check invariants on every run.
    Explore(ExploreArgs),
    /// Serve the scenario's fake providers over HTTP (OpenAI, Anthropic, Azure) in real time.
    Serve(commands::serve::ServeArgs),
    /// Serve routersim's engine as an OpenAI-compatible router (LiteLLM proxy config).
    Proxy(commands::proxy::ProxyArgs),
    /// Send the scenario's traffic in real time to a real router in front of its fake providers.
    Drive(commands::drive::DriveArgs),
}

fn parse_tolerance(text: &str) -> Result<f64, String> {
    routersim_suite::check::golden::parse_tolerance(text)
}

fn parse_duration(text: &str) -> Result<Duration, String> {
    routersim_mock_providers::duration::parse_duration(text).map_err(|e| e.to_string())
}

/// `--seeds` for every command, in the one grammar of [`Seeds`]. A bad value is clap's usage
/// error (exit 2, nothing runs) worded `error: --seeds "TEXT": why`.
#[derive(Clone, Copy, Debug)]
struct SeedsParser;

impl clap::builder::TypedValueParser for SeedsParser {
    type Value = Seeds;

    fn parse_ref(
        &self,
        _cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<Seeds, clap::Error> {
        let text = value.to_string_lossy();
        Seeds::parse(&text).map_err(|e| {
            let flag = arg.and_then(clap::Arg::get_long).unwrap_or("seeds");
            clap::Error::raw(
                clap::error::ErrorKind::ValueValidation,
                format!("--{flag} {text:?}: {e}\n"),
            )
        })
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
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
    };
    // The one error path: a command that could not do its work says why and exits 2.
    result.unwrap_or_else(|e| {
        eprintln!("error: {e}");
        ExitCode::from(EXIT_ERROR)
    })
}
