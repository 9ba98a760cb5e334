//! `routersim bench`.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use routersim_sim::run::RunError;
use routersim_sim::transport::Transport;
use routersim_suite::bench::{BenchOptions, BenchResult, run_bench};
use routersim_suite::footprint::measure_in_flight;

use crate::args::{RuntimeArg, Trace, parse_duration};
use crate::error::{CliError, from_profile_flag};
use crate::out::Out;

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
    /// generator of routersim's own): non-streamed req/s, added latency, concurrent streams,
    /// and its rate against a bare hyper server answering the same bytes (JSON and SSE on 64
    /// and 512 connections, medians of 5 rounds).
    #[arg(
        long,
        conflicts_with_all = ["duration", "rate", "strategy", "trace", "repeat", "in_flight"]
    )]
    pub serve: bool,
    /// With --serve: SSE streams held open at once.
    #[arg(long, default_value_t = 2000, requires = "serve")]
    pub streams: usize,
    /// With --serve or --proxy: keep-alive connections of the throughput phase.
    #[arg(long, default_value_t = 64, requires = "wire")]
    pub connections: usize,
    /// Instead: `routersim proxy` against calling its fake provider directly, in one run (the
    /// same load generator and request bodies, JSON and SSE): req/s of each, their ratio and
    /// the latency the proxy adds; medians of 5 rounds.
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

/// `--import N`: writes a synthetic log of N/10 and N rows, imports each, prints wall time and
/// peak resident set.
fn import_bench(rows: u64, args: &BenchArgs) -> Result<ExitCode, CliError> {
    use routersim_import::format::Format;
    let format = args.import_format;
    std::fs::create_dir_all(&args.out)?;
    let mut out = Out::stdout();
    for n in [(rows / 10).max(1), rows] {
        let ext = if format == Format::Csv {
            "csv"
        } else {
            "jsonl"
        };
        let log = args.out.join(format!("import-{n}.{ext}"));
        routersim_import::bench::write_synthetic_log(&log, n, format)?;
        let bytes = std::fs::metadata(&log)?.len();
        let reset = routersim_suite::bench::reset_peak_rss();
        let options =
            routersim_import::ImportOptions::new(&log, args.out.join(format!("import-{n}")));
        let start = std::time::Instant::now();
        let imported = routersim_import::import(&options)?;
        let wall = start.elapsed().as_secs_f64();
        let peak = routersim_suite::bench::peak_rss_kib()
            .filter(|_| reset)
            .map_or("n/a".to_string(), |kib| {
                format!("{:.1} MiB", kib as f64 / 1024.0)
            });
        writeln!(
            out,
            "import of {n} rows ({}, {:.1} MB): {wall:.3} s wall, {:.0} rows/s, {} requests, {} fault windows, peak RSS {peak}",
            format.describe(),
            bytes as f64 / 1e6,
            n as f64 / wall,
            imported.requests,
            imported.faults.len()
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Runs the benchmark and prints its figures.
pub fn run(args: BenchArgs) -> Result<ExitCode, CliError> {
    if let Some(rows) = args.import {
        return import_bench(rows, &args);
    }
    if let Some(n) = args.in_flight {
        return in_flight(n, &args);
    }
    if args.serve {
        return serve(&args);
    }
    if args.proxy {
        return proxy(&args);
    }
    let options = BenchOptions {
        duration: args.duration,
        rate: args.rate,
        strategy: args.strategy,
        profile: args.profile,
        trace: args.trace == Trace::All,
        out_dir: args.out,
        repeat: args.repeat,
        stream_share: args.stream_share,
        transport: args.transport,
        runtime: args.runtime.into(),
        compare: !args.no_compare,
        replicas: usize::from(args.replicas),
    };
    let result = run_bench(&options).map_err(|e| match e {
        RunError::Scenario(e) => from_profile_flag(e),
        other => CliError::Run(other),
    })?;
    let mut out = Out::stdout();
    writeln!(out, "requests simulated:     {}", result.requests)?;
    if options.replicas > 1 {
        writeln!(
            out,
            "router replicas:        {} (round robin)",
            options.replicas
        )?;
    }
    writeln!(
        out,
        "{:<24}{:.3} s wall, {:.0} simulated req/s (traces {}{}){}",
        format!("harness ({}):", result.runtime.name()),
        result.sim_wall_secs,
        result.sim_rate(),
        if options.trace { "on" } else { "off" },
        match options.transport {
            Transport::Memory => String::new(),
            other => format!(", transport {other}"),
        },
        median_note(&result, result.medians.sim_wall_secs),
    )?;
    if let (Some(secs), Some(rate), Some(ratio)) = (
        result.memory_wall_secs,
        result.memory_rate(),
        result.transport_ratio(),
    ) {
        writeln!(
            out,
            "same in memory:         {secs:.3} s wall, {rate:.0} simulated req/s"
        )?;
        writeln!(out, "ratio http/memory:      {ratio:.3}")?;
    }
    print_floors(&mut out, &result)?;
    if let Some(kib) = result.peak_rss_kib {
        writeln!(
            out,
            "peak RSS of the process: {:.1} MiB",
            kib as f64 / 1024.0
        )?;
    }
    writeln!(out, "report: {}", result.report.out_dir.display())?;
    Ok(ExitCode::SUCCESS)
}

/// The floors, the other runtime and the ratios.
fn print_floors(out: &mut Out, result: &BenchResult) -> Result<(), CliError> {
    let own = result.runtime.name();
    let medians = result.medians;
    writeln!(
        out,
        "{:<24}{:.3} s wall, {:.0} simulated req/s{}",
        format!("floor ({own}):"),
        result.floor_wall_secs,
        result.floor_rate(),
        median_note(result, medians.floor_wall_secs),
    )?;
    if let (Some(other), Some((median_sim, median_floor))) = (result.other, medians.other) {
        let name = other.runtime.name();
        writeln!(
            out,
            "{:<24}{:.3} s wall, {:.0} simulated req/s{}",
            format!("harness ({name}):"),
            other.sim_wall_secs,
            result.rate_of(other.sim_wall_secs),
            median_note(result, median_sim),
        )?;
        writeln!(
            out,
            "{:<24}{:.3} s wall, {:.0} simulated req/s{}",
            format!("floor ({name}):"),
            other.floor_wall_secs,
            result.rate_of(other.floor_wall_secs),
            median_note(result, median_floor),
        )?;
    }
    ratio_line(
        out,
        format!("ratio harness/floor ({own}):"),
        format!("{:.3}", result.ratio()),
    )?;
    if let Some(other) = result.other {
        let name = other.runtime.name();
        ratio_line(
            out,
            format!("ratio harness/floor ({name}):"),
            format!(
                "{:.3}",
                other.floor_wall_secs / other.sim_wall_secs.max(1e-9)
            ),
        )?;
        ratio_line(
            out,
            format!("ratio harness ({own})/tokio floor:"),
            format!(
                "{:.3}",
                result.sim_rate() / result.tokio_floor_rate().max(1e-9)
            ),
        )?;
        ratio_line(
            out,
            format!("harness {own} vs {name}:"),
            format!(
                "{:.2}x",
                other.sim_wall_secs / result.sim_wall_secs.max(1e-9)
            ),
        )?;
    }
    if medians.runs > 1 {
        print_median_ratios(out, result)?;
    }
    Ok(())
}

/// One ratio line: the label padded to the column of numbers.
fn ratio_line(out: &mut Out, label: String, value: String) -> Result<(), CliError> {
    writeln!(out, "{label:<44}{value}")?;
    Ok(())
}

/// After a line's fastest run: the median of all of them (nothing for a single run).
fn median_note(result: &BenchResult, median_secs: f64) -> String {
    if result.medians.runs < 2 {
        return String::new();
    }
    format!(
        "; median of {}: {median_secs:.3} s, {:.0} req/s",
        result.medians.runs,
        result.rate_of(median_secs)
    )
}

/// The ratios again, of the medians.
fn print_median_ratios(out: &mut Out, result: &BenchResult) -> Result<(), CliError> {
    let m = result.medians;
    let own = result.runtime.name();
    ratio_line(
        out,
        format!("median ratio harness/floor ({own}):"),
        format!("{:.3}", m.floor_wall_secs / m.sim_wall_secs.max(1e-9)),
    )?;
    if let (Some(other), Some((other_sim, other_floor))) = (result.other, m.other) {
        let tokio_floor = match result.runtime {
            routersim_runtime::RuntimeKind::Tokio => m.floor_wall_secs,
            routersim_runtime::RuntimeKind::Virtual => other_floor,
        };
        ratio_line(
            out,
            format!("median ratio harness ({own})/tokio floor:"),
            format!("{:.3}", tokio_floor / m.sim_wall_secs.max(1e-9)),
        )?;
        ratio_line(
            out,
            format!("median harness {own} vs {}:", other.runtime.name()),
            format!("{:.2}x", other_sim / m.sim_wall_secs.max(1e-9)),
        )?;
    }
    Ok(())
}

/// `--in-flight N`: memory per in-flight request.
fn in_flight(n: u32, args: &BenchArgs) -> Result<ExitCode, CliError> {
    if n == 0 || !(0.0..=1.0).contains(&args.stream_share) {
        return Err(CliError::Usage(
            "--in-flight needs N >= 1 and --stream-share between 0 and 1",
        ));
    }
    let streamed = (f64::from(n) * args.stream_share).round() as u32;
    let Some(f) = measure_in_flight(n, streamed, &args.out)? else {
        return Err(CliError::Usage(
            "--in-flight reads /proc/self/status (Linux only)",
        ));
    };
    let mut out = Out::stdout();
    writeln!(
        out,
        "in flight at once:      {} requests ({} streamed), each waiting 1 h",
        f.requests, f.streamed
    )?;
    writeln!(
        out,
        "resident set:           {:.1} MiB before, {:.1} MiB peak",
        f.before_kib as f64 / 1024.0,
        f.peak_kib as f64 / 1024.0
    )?;
    writeln!(
        out,
        "per in-flight request:  {:.0} bytes",
        f.bytes_per_request()
    )?;
    Ok(ExitCode::SUCCESS)
}

/// `--proxy`: the proxy against its provider called directly.
fn proxy(args: &BenchArgs) -> Result<ExitCode, CliError> {
    use routersim_live::proxy::bench::{ProxyBenchOptions, run_proxy_bench};
    if args.connections == 0 || args.phase.is_zero() || args.phase > Duration::from_secs(60) {
        return Err(CliError::Usage(
            "--connections must be at least 1 and --phase between 1ms and 60s",
        ));
    }
    let options = ProxyBenchOptions {
        connections: args.connections,
        phase: args.phase,
        ..ProxyBenchOptions::default()
    };
    let r = run_proxy_bench(&options)?;
    let mut out = Out::stdout();
    let phase_ms = options.phase.as_millis();
    for (name, pair) in [("JSON", &r.json), ("SSE", &r.sse)] {
        writeln!(
            out,
            "{name:<4} on {} connections: direct {:.0} req/s, proxy {:.0} req/s, proxy/direct {:.2} ({} errors)",
            options.connections,
            pair.base_per_sec(),
            pair.measured_per_sec(),
            pair.ratio(),
            pair.errors()
        )?;
    }
    writeln!(
        out,
        "added p50 on 1 connection: {:.3} ms (direct p50 {:.3} ms)",
        r.single.added_p50_ms(),
        r.single.base_p50_ms()
    )?;
    writeln!(
        out,
        "medians of {} rounds of {phase_ms} ms phases (direct and proxy in turn, one run)",
        options.rounds
    )?;
    Ok(ExitCode::SUCCESS)
}

/// `--serve`: the wire server's speed over loopback.
fn serve(args: &BenchArgs) -> Result<ExitCode, CliError> {
    use routersim_live::serve::bench::{
        INTER_TOKEN, SCRIPTED_LATENCY, STREAM_TOKENS, ServeBenchOptions, run_serve_bench,
    };
    if args.connections == 0 || args.streams == 0 {
        return Err(CliError::Usage(
            "--connections and --streams must be at least 1",
        ));
    }
    if args.phase.is_zero() || args.phase > Duration::from_secs(60) {
        return Err(CliError::Usage("--phase must be between 1ms and 60s"));
    }
    let options = ServeBenchOptions {
        connections: args.connections,
        streams: args.streams,
        floor_phase: args.phase,
        ..ServeBenchOptions::default()
    };
    let r = run_serve_bench(&options)?;
    let mut out = Out::stdout();
    writeln!(
        out,
        "non-streamed, 0 ms provider:  {:.0} req/s ({} requests on {} keep-alive connections in {:.2} s, {} errors)",
        r.requests_per_sec(),
        r.requests,
        options.connections,
        r.throughput_secs,
        r.request_errors
    )?;
    writeln!(
        out,
        "added latency over {} ms:     {} ({} requests on {} connections)",
        SCRIPTED_LATENCY.as_millis(),
        r.added,
        r.added.count,
        options.latency_connections
    )?;
    writeln!(
        out,
        "round trip at 0 ms:           {} ({} requests on {} connection)",
        r.round_trip, r.round_trip.count, 1
    )?;
    writeln!(
        out,
        "concurrent SSE streams:       {} open at once, {} of {} completed ({} tokens each, every {} ms)",
        r.peak_open_streams,
        r.streams_completed,
        r.streams,
        STREAM_TOKENS,
        INTER_TOKEN.as_millis()
    )?;
    writeln!(
        out,
        "first-token lateness:         {} ({} streams opened in one burst)",
        r.first_token_lateness, r.first_token_lateness.count
    )?;
    writeln!(
        out,
        "later tokens' lateness:       {} ({} tokens, against each stream's schedule)",
        r.token_lateness, r.token_lateness.count
    )?;
    for row in &r.floor {
        writeln!(
            out,
            "serve/bare {:<4} on {:>3} connections: serve {:.0} req/s, bare hyper {:.0} req/s, serve/bare {:.2} ({} errors)",
            if row.stream { "SSE" } else { "JSON" },
            row.connections,
            row.pair.measured_per_sec(),
            row.pair.base_per_sec(),
            row.pair.ratio(),
            row.pair.errors()
        )?;
    }
    writeln!(
        out,
        "floor: medians of {} rounds of {} ms phases (bare hyper server and serve in turn, one run)",
        options.rounds,
        options.floor_phase.as_millis()
    )?;
    Ok(ExitCode::SUCCESS)
}
