//! `routersim bench`'s flags.

use std::path::PathBuf;
use std::time::Duration;

use routersim_sim::transport::Transport;

use crate::args::{RuntimeArg, Trace, parse_duration};

/// `routersim bench`.
#[derive(clap::Args, Debug)]
#[command(group(clap::ArgGroup::new("wire").args(["serve", "proxy"])))]
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
    /// `litellm-1.110`, `multigrid`, …); none: the documented rules. `all`: every profile and
    /// none, each with traces on and with `--trace none`, against the tokio floor (medians of
    /// `--repeat` rounds).
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
    /// generator of routersim's own): non-streamed req/s, added latency, concurrent streams,
    /// and its rate against a bare hyper server answering the same bytes (JSON and SSE on 64
    /// and 512 connections, medians of 5 rounds).
    #[arg(
        long,
        conflicts_with_all = ["duration", "rate", "strategy", "trace", "repeat", "in_flight"]
    )]
    pub serve: bool,
    /// Instead: `drive`'s rate straight at an in-process `serve` of a no-fault scenario over
    /// loopback: each of --drive-rates for --drive-seconds, then --repeat runs at 20000 req/s
    /// (their median).
    #[arg(
        long,
        conflicts_with_all = ["duration", "rate", "strategy", "trace", "in_flight", "serve", "import"]
    )]
    pub drive: bool,
    /// With --drive: the rates tried (requests per second).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "5000,10000,20000,30000",
        requires = "drive"
    )]
    pub drive_rates: Vec<u64>,
    /// With --drive: each run's length.
    #[arg(long, default_value = "3s", value_parser = parse_duration, requires = "drive")]
    pub drive_seconds: Duration,
    /// With --drive: the rate of the --repeat runs whose median is the figure (req/s).
    #[arg(long, default_value_t = routersim_live::drive::bench::HEADLINE_RATE, requires = "drive")]
    pub drive_headline: u64,
    /// With --drive: drive's --max-connections.
    #[arg(long, default_value_t = routersim_live::drive::pool::DEFAULT_MAX_CONNECTIONS, requires = "drive")]
    pub max_connections: usize,
    /// With --serve: SSE streams held open at once.
    #[arg(long, default_value_t = 2000, requires = "serve")]
    pub streams: usize,
    /// With --serve or --proxy: keep-alive connections of the throughput phase.
    #[arg(long, default_value_t = 64, requires = "wire")]
    pub connections: usize,
    /// Instead: `routersim proxy` against calling its fake provider directly, in one run (the
    /// same load generator and request bodies, JSON and SSE): req/s of each, their ratio,
    /// each thread's CPU per request and the ratio two busy cores allow with it, and the latency
    /// the proxy adds; medians of 5 rounds.
    #[arg(
        long,
        conflicts_with_all = ["duration", "rate", "strategy", "trace", "repeat", "in_flight", "serve", "import"]
    )]
    pub proxy: bool,
    /// With --serve or --proxy: the length of each measured phase of the ratio rounds.
    #[arg(long, default_value = "1s", value_parser = parse_duration, requires = "wire")]
    pub phase: Duration,
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
    /// Instead: `routersim import`'s speed and memory on a synthetic log of N rows (and of
    /// N/10, to show memory does not grow with the log), written into --out.
    #[arg(
        long,
        value_name = "N",
        conflicts_with_all = ["duration", "rate", "strategy", "trace", "repeat", "in_flight", "serve"]
    )]
    pub import: Option<u64>,
    /// With --import: the synthetic log's format (`csv` or `litellm`).
    #[arg(long, default_value = "csv", requires = "import", value_parser = parse_import_format)]
    pub import_format: routersim_import::format::Format,
    /// Router replicas behind a round-robin balancer (`router.replicas`), each with its own
    /// state; the floor is the same traffic without routers.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=1024), conflicts_with = "serve")]
    pub replicas: u16,
}

fn parse_import_format(text: &str) -> Result<routersim_import::format::Format, String> {
    use routersim_import::format::Format;
    match Format::from_name(text) {
        Some(f @ (Format::Csv | Format::LitellmPayload)) => Ok(f),
        _ => Err(format!("{text:?}: csv or litellm")),
    }
}
