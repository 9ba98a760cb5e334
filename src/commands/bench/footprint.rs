//! `routersim bench --import` and `--in-flight`: an import's speed and an in-flight
//! request's memory.

use std::io::Write;
use std::process::ExitCode;

use routersim_suite::footprint::measure_in_flight;

use super::args::BenchArgs;
use crate::error::CliError;
use crate::out::Out;

/// `--import N`: writes a synthetic log of N/10 and N rows, imports each, prints wall time and
/// peak resident set.
pub(super) fn import_bench(rows: u64, args: &BenchArgs) -> Result<ExitCode, CliError> {
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

/// `--in-flight N`: memory per in-flight request.
pub(super) fn in_flight(n: u32, args: &BenchArgs) -> Result<ExitCode, CliError> {
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
