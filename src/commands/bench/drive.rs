//! `routersim bench --drive`: drive's rate straight at an in-process `serve`, each rate once,
//! then the headline rate `--repeat` times (the median is the figure).

use std::io::Write;
use std::process::ExitCode;

use routersim_live::drive::bench::{
    DriveBenchOptions, DrivePoint, HEADLINE_RATE, median_achieved, run_point,
};

use super::args::BenchArgs;
use crate::error::CliError;
use crate::out::Out;

/// Runs the drive benchmark and prints a line per run, then the median at the headline rate.
pub fn drive(args: &BenchArgs) -> Result<ExitCode, CliError> {
    if args.drive_rates.contains(&0) || args.drive_headline == 0 || args.max_connections == 0 {
        return Err(CliError::Usage(
            "--drive-rates, --drive-headline and --max-connections must be at least 1",
        ));
    }
    let target = args.drive_headline;
    let options = DriveBenchOptions {
        rates: args.drive_rates.clone(),
        repeat: usize::try_from(args.repeat).unwrap_or(1),
        seconds: args.drive_seconds,
        out: args.out.clone(),
        max_connections: args.max_connections,
    };
    let mut out = Out::stdout();
    writeln!(
        out,
        "drive straight at an in-process serve (one deployment answering in 0 ms), {:.1} s a run, loopback; {} cores",
        options.seconds.as_secs_f64(),
        std::thread::available_parallelism().map_or(1, |n| n.get())
    )?;
    for &rate in &options.rates {
        let point = run_point(rate, &options)?;
        print_point(&mut out, "", &point)?;
    }
    let mut headline = Vec::new();
    for i in 0..options.repeat {
        let point = run_point(target, &options)?;
        print_point(
            &mut out,
            &format!("run {}/{}: ", i + 1, options.repeat),
            &point,
        )?;
        headline.push(point);
    }
    let median = median_achieved(&headline);
    let failures: u64 = headline.iter().map(|p| p.failed + p.not_sent).sum();
    // The run's wall time includes its last answers and the report's bookkeeping: 1 % is
    // allowed for them.
    let met = median >= target as f64 * 0.99 && failures == 0;
    writeln!(
        out,
        "drive at {target} req/s: median {median:.0} req/s of {} runs, {failures} failed or not sent; target >= {HEADLINE_RATE} req/s (within 1 %) without failures: {}",
        headline.len(),
        if met && target >= HEADLINE_RATE {
            "met"
        } else {
            "NOT met"
        }
    )?;
    Ok(ExitCode::SUCCESS)
}

fn print_point(out: &mut Out, prefix: &str, p: &DrivePoint) -> Result<(), CliError> {
    writeln!(
        out,
        "{prefix}asked {:>6} req/s: achieved {:>8.0} req/s, {} requests, {} failed, {} not sent, p99 {:.1} ms; fd budget {} connections, {} opened, {} waited for one",
        p.rate, p.achieved, p.requests, p.failed, p.not_sent, p.p99_ms, p.budget, p.opened, p.waits
    )?;
    Ok(())
}
