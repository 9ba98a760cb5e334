//! `routersim bench`: which benchmark the flags ask for, and the harness's own: simulated
//! requests per wall-second against the pass-through floors.

use std::io::Write;
use std::process::ExitCode;

use routersim_sim::run::RunError;
use routersim_sim::transport::Transport;
use routersim_suite::bench::{BenchOptions, BenchResult, run_bench};

use super::args::BenchArgs;
use super::footprint::{import_bench, in_flight};
use super::wire::{proxy, serve};
use crate::args::Trace;
use crate::error::{CliError, from_profile_flag};
use crate::out::Out;

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
    if args.drive {
        return super::drive::drive(&args);
    }
    if args.profile.as_deref() == Some("all") {
        return super::profiles::every_profile(args);
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
