//! `routersim bench --profile all`: the harness's ratio to the tokio floor under every
//! profile, traces on and off, in one run.

use std::io::Write;
use std::process::ExitCode;

use routersim_sim::transport::Transport;
use routersim_suite::bench::BenchOptions;

use super::args::BenchArgs;
use crate::args::{RuntimeArg, Trace};
use crate::error::CliError;
use crate::out::Out;

/// `--profile all`: the harness's median ratio to the tokio floor under every profile, traces
/// on and off, and whether each meets its target.
pub(crate) fn every_profile(args: BenchArgs) -> Result<ExitCode, CliError> {
    use routersim_suite::bench::run_bench_profiles;
    if args.runtime != RuntimeArg::Virtual
        || args.transport != Transport::Memory
        || args.replicas > 1
        || args.no_compare
        || args.trace != Trace::All
    {
        return Err(CliError::Usage(
            "--profile all times the virtual harness in memory (traces on and off) against the tokio floor: drop --runtime, --transport, --replicas, --no-compare and --trace",
        ));
    }
    let options = BenchOptions {
        duration: args.duration,
        rate: args.rate,
        strategy: args.strategy,
        out_dir: args.out,
        repeat: args.repeat,
        stream_share: args.stream_share,
        ..BenchOptions::default()
    };
    let rows = run_bench_profiles(&options).map_err(CliError::Run)?;
    let mut out = Out::stdout();
    writeln!(
        out,
        "medians of {} round{}; ratio = tokio floor / harness (virtual); targets: traces on >= {TRACED_TARGET:.1}, --trace none >= {UNTRACED_TARGET:.1}",
        options.repeat,
        if options.repeat == 1 { "" } else { "s" },
    )?;
    writeln!(
        out,
        "{:<15}{:>9}{:>12}{:>12}{:>13}{:>11}{:>13}  met",
        "profile", "requests", "traces on", "trace none", "tokio floor", "ratio on", "ratio none"
    )?;
    for r in &rows {
        let (on, off) = (r.traced_ratio(), r.untraced_ratio());
        let met = match (on >= TRACED_TARGET, off >= UNTRACED_TARGET) {
            (true, true) => "yes",
            (true, false) => "traces on only",
            (false, true) => "trace none only",
            (false, false) => "no",
        };
        writeln!(
            out,
            "{:<15}{:>9}{:>10.3} s{:>10.3} s{:>11.3} s{:>11.3}{:>13.3}  {met}",
            r.profile, r.requests, r.traced_secs, r.untraced_secs, r.tokio_floor_secs, on, off,
        )?;
    }
    let met = rows
        .iter()
        .all(|r| r.traced_ratio() >= TRACED_TARGET && r.untraced_ratio() >= UNTRACED_TARGET);
    writeln!(
        out,
        "targets: {}",
        if met {
            "met by every profile"
        } else {
            "not met by every profile"
        }
    )?;
    Ok(ExitCode::SUCCESS)
}

/// `--profile all`'s target ratio with traces on.
const TRACED_TARGET: f64 = 1.0;
/// `--profile all`'s target ratio with `--trace none`.
const UNTRACED_TARGET: f64 = 1.3;
