//! `routersim import LOG --config PROXY_CONFIG --out DIR`: a router's log in, a scenario that
//! replays the incident out (`DIR/scenario.yaml`), and the log as a report (`DIR/imported/`).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use routersim_import::format::Format;
use routersim_import::traffic::seconds;
use routersim_import::{ImportOptions, Imported, TimeBound, import};

use crate::error::CliError;
use crate::out::Out;

/// `routersim import`.
#[derive(clap::Args, Debug)]
pub struct ImportArgs {
    /// The router's log: LiteLLM's standard logging payload (JSON lines), its spend logs (JSON
    /// or CSV), or a plain CSV with one row per provider call.
    pub log: PathBuf,
    /// The proxy config the router ran with (its deployments, retries, fallbacks); without it
    /// the router is inferred from the deployments the log names.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// The output folder: scenario.yaml, router.yaml, traffic.csv (long logs), imported/.
    #[arg(long)]
    pub out: PathBuf,
    /// The log's format, when it is not to be detected.
    #[arg(long, value_parser = parse_format)]
    pub format: Option<Format>,
    /// Leave out rows that started before this: an instant (RFC 3339, Unix seconds) or a
    /// duration after the log's first row (`90s`).
    #[arg(long, value_parser = TimeBound::parse)]
    pub since: Option<TimeBound>,
    /// Leave out rows that started at or after this (same forms as --since).
    #[arg(long, value_parser = TimeBound::parse)]
    pub until: Option<TimeBound>,
    /// Keep only the rows of this model group (repeat for more).
    #[arg(long = "model-group")]
    pub model_group: Vec<String>,
    /// The error series' bucket width: failures are counted per deployment per bucket (and
    /// windows are placed to a tenth of it).
    #[arg(long, default_value = "10s", value_parser = crate::args::parse_duration)]
    pub bucket: Duration,
    /// The scenario's name (default: imported-<log file name>).
    #[arg(long)]
    pub name: Option<String>,
}

fn parse_format(text: &str) -> Result<Format, String> {
    Format::from_name(text).ok_or_else(|| {
        let names: Vec<&str> = Format::ALL.iter().map(|f| f.name()).collect();
        format!("{text:?}: one of {}", names.join(", "))
    })
}

/// Imports the log.
pub fn run(args: ImportArgs) -> Result<ExitCode, CliError> {
    let options = ImportOptions {
        log: args.log,
        config: args.config,
        out: args.out,
        format: args.format,
        since: args.since,
        until: args.until,
        model_groups: args.model_group,
        bucket: args.bucket,
        name: args.name,
    };
    let imported = import(&options)?;
    print(&mut Out::stdout(), &options, &imported)?;
    Ok(ExitCode::SUCCESS)
}

fn print(out: &mut Out, options: &ImportOptions, i: &Imported) -> std::io::Result<()> {
    writeln!(
        out,
        "imported {} ({}): {} rows, {} requests over {}",
        options.log.display(),
        i.format.describe(),
        i.rows.1,
        i.requests,
        seconds((i.span * 1000.0).round() / 1000.0)
    )?;
    for d in &i.deployments {
        writeln!(out, "  {}: {} calls, {} failed", d.id, d.calls, d.failed)?;
    }
    writeln!(out, "fault windows: {}", i.faults.len())?;
    let drawn = routersim_import::scenario::drawn_probabilities(&i.faults);
    for (f, p) in i.faults.iter().zip(drawn) {
        let to =
            f.to.map_or("end".to_string(), |t| seconds(round_ms(t - i.t0)));
        let from = if f.background {
            "0s".to_string()
        } else {
            seconds(round_ms(f.from - i.t0))
        };
        let mut line = format!(
            "  {} {} [{from}, {to}): {} of {} calls failed, probability {:.2}",
            f.deployment,
            f.kind.name(),
            f.failures,
            f.calls,
            p
        );
        if let Some(ra) = f.retry_after {
            line.push_str(&format!(", retry_after {}", seconds(ra)));
        }
        writeln!(out, "{line}")?;
    }
    if !i.notes.is_empty() {
        writeln!(out, "assumed:")?;
        for note in &i.notes {
            writeln!(out, "  - {note}")?;
        }
    }
    let scenario = i.out.join("scenario.yaml");
    writeln!(
        out,
        "scenario: {} (routersim run {})",
        scenario.display(),
        scenario.display()
    )?;
    writeln!(out, "report: {}", i.out.join("imported").display())?;
    out.flush()
}

fn round_ms(s: f64) -> f64 {
    (s * 1000.0).round() / 1000.0
}
