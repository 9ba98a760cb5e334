//! `routersim bench`.

use std::process::ExitCode;

use routersim_sim::bench::{BenchOptions, run_bench};

use crate::{BenchArgs, EXIT_ERROR, Trace};

/// Runs the benchmark and prints its figures.
pub fn run(args: BenchArgs) -> ExitCode {
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
