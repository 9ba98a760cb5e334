//! `routersim bench --serve` and `--proxy`: the fake providers and the proxy on real sockets,
//! each against its floor in the same run.

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use routersim_live::proxy::bench::CpuSplit;

use super::args::BenchArgs;
use crate::error::CliError;
use crate::out::Out;

/// `--proxy`: the proxy against its provider called directly.
pub(super) fn proxy(args: &BenchArgs) -> Result<ExitCode, CliError> {
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
    for (name, splits) in [("JSON", &r.json_cpu), ("SSE", &r.sse_cpu)] {
        writeln!(out, "{}", cpu_line(name, &CpuSplit::median(splits)))?;
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

/// CPU µs per request of each thread (medians of the rounds), and the proxy/direct the cores
/// allow with them; says so where the OS does not give threads' CPU time.
fn cpu_line(name: &str, split: &CpuSplit) -> String {
    let us = |v: Option<f64>| v.map_or_else(|| "?".to_string(), |v| format!("{v:.1}"));
    match (
        split.direct_total(),
        split.proxied_total(),
        split.cores_bound(),
    ) {
        (Some(direct), Some(proxied), Some(bound)) => format!(
            "CPU per {name} request: direct {} load generator + {} provider = {direct:.1} µs; \
             proxied {} + {} + {} proxy = {proxied:.1} µs; cores' bound on proxy/direct {bound:.2}",
            us(split.direct_load),
            us(split.direct_provider),
            us(split.proxied_load),
            us(split.proxied_provider),
            us(split.proxy),
        ),
        _ => format!("CPU per {name} request: not measured (no per-thread CPU time on this OS)"),
    }
}

/// `--serve`: the wire server's speed over loopback.
pub(super) fn serve(args: &BenchArgs) -> Result<ExitCode, CliError> {
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
