//! `routersim bench`.

use std::io::Write;
use std::process::ExitCode;

use routersim_sim::bench::{BenchOptions, run_bench};
use routersim_sim::footprint::measure_in_flight;

use crate::error::CliError;
use crate::out::Out;
use crate::{BenchArgs, Trace};

/// Runs the benchmark and prints its figures.
pub fn run(args: BenchArgs) -> Result<ExitCode, CliError> {
    if let Some(n) = args.in_flight {
        return in_flight(n, &args);
    }
    let options = BenchOptions {
        duration: args.duration,
        rate: args.rate,
        strategy: args.strategy,
        trace: args.trace == Trace::All,
        out_dir: args.out,
        repeat: args.repeat,
        stream_share: args.stream_share,
    };
    let result = run_bench(&options)?;
    let mut out = Out::stdout();
    writeln!(out, "requests simulated:     {}", result.requests)?;
    writeln!(
        out,
        "harness:                {:.3} s wall, {:.0} simulated req/s (traces {})",
        result.sim_wall_secs,
        result.sim_rate(),
        if options.trace { "on" } else { "off" }
    )?;
    writeln!(
        out,
        "floor (sleep+record):   {:.3} s wall, {:.0} simulated req/s",
        result.floor_wall_secs,
        result.floor_rate()
    )?;
    writeln!(out, "ratio harness/floor:    {:.3}", result.ratio())?;
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
