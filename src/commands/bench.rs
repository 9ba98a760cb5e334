//! `routersim bench`.

use std::process::ExitCode;

use routersim_sim::bench::{BenchOptions, run_bench};
use routersim_sim::footprint::measure_in_flight;

use crate::{BenchArgs, EXIT_ERROR, Trace};

/// Runs the benchmark and prints its figures.
pub fn run(args: BenchArgs) -> ExitCode {
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
                println!("peak RSS of the process: {:.1} MiB", kib as f64 / 1024.0);
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

/// `--in-flight N`: memory per in-flight request.
fn in_flight(n: u32, args: &BenchArgs) -> ExitCode {
    if n == 0 || !(0.0..=1.0).contains(&args.stream_share) {
        eprintln!("error: --in-flight needs N >= 1 and --stream-share between 0 and 1");
        return ExitCode::from(EXIT_ERROR);
    }
    let streamed = (f64::from(n) * args.stream_share).round() as u32;
    match measure_in_flight(n, streamed, &args.out) {
        Ok(Some(f)) => {
            println!(
                "in flight at once:      {} requests ({} streamed), each waiting 1 h",
                f.requests, f.streamed
            );
            println!(
                "resident set:           {:.1} MiB before, {:.1} MiB peak",
                f.before_kib as f64 / 1024.0,
                f.peak_kib as f64 / 1024.0
            );
            println!("per in-flight request:  {:.0} bytes", f.bytes_per_request());
            ExitCode::SUCCESS
        }
        Ok(None) => {
            eprintln!("error: --in-flight reads /proc/self/status (Linux only)");
            ExitCode::from(EXIT_ERROR)
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(EXIT_ERROR)
        }
    }
}
