//! `routersim bench`.

use std::io::Write;
use std::process::ExitCode;

use routersim_sim::bench::{BenchOptions, run_bench};

use crate::error::CliError;
use crate::out::Out;
use crate::{BenchArgs, Trace};

/// Runs the benchmark and prints its figures.
pub fn run(args: BenchArgs) -> Result<ExitCode, CliError> {
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
