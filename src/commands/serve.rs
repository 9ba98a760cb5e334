//! `routersim serve SCENARIO`: the scenario's fake providers over HTTP, in real time.

use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use routersim_live::serve::litellm_config::litellm_config;
use routersim_live::serve::{Endpoints, ServeOptions, is_loopback, serve};
use routersim_sim::scenario::load_scenario;

use crate::error::CliError;

/// `routersim serve`.
#[derive(clap::Args, Debug)]
pub struct ServeArgs {
    /// The scenario file (YAML).
    pub scenario: PathBuf,
    /// Address to listen on (port 0: any free port). Loopback unless --allow-remote.
    #[arg(long, default_value = "127.0.0.1:0")]
    pub listen: SocketAddr,
    /// Write a LiteLLM proxy config routing through the fake providers to FILE.
    #[arg(long, value_name = "FILE")]
    pub emit_litellm_config: Option<PathBuf>,
    /// Write provider_calls.csv (one row per call served) into this folder when the server stops.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Also give each deployment a port of its own, serving `/v1/...` without the `/d/<id>` prefix.
    #[arg(long)]
    pub port_per_deployment: bool,
    /// Allow a non-loopback --listen address (a chaos server reachable from other machines).
    #[arg(long)]
    pub allow_remote: bool,
}

/// Serves until the scenario's duration ends, Ctrl-C or SIGTERM.
pub fn run(args: ServeArgs) -> Result<ExitCode, CliError> {
    let scenario = load_scenario(&args.scenario)?;
    if args.allow_remote && !is_loopback(&args.listen) {
        eprintln!(
            "warning: serving on {} (not loopback): anything that reaches this address gets the \
             scenario's faults",
            args.listen
        );
    }
    let options = ServeOptions {
        listen: args.listen,
        allow_remote: args.allow_remote,
        port_per_deployment: args.port_per_deployment,
        out: args.out.clone(),
        duration: None,
    };
    let mut ready = |endpoints: &Endpoints| -> Result<(), String> {
        if let Some(file) = &args.emit_litellm_config {
            let roots: Vec<String> = endpoints
                .deployments
                .iter()
                .map(|d| d.root.clone())
                .collect();
            let text = litellm_config(&scenario, &roots)?;
            write_atomically(file, &text)?;
        }
        print_endpoints(
            &scenario.name,
            scenario.duration,
            endpoints,
            args.emit_litellm_config.as_deref(),
        )
        .map_err(|e| format!("cannot write to stdout: {e}"))
    };
    let report = serve(&scenario, &options, &mut ready)?;
    for note in &report.notes {
        eprintln!("note: {note}");
    }
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "stopped ({}): {} calls served",
        report.stopped_by, report.calls
    )?;
    if let Some(dir) = &report.out_dir {
        writeln!(out, "report: {}", dir.display())?;
    }
    Ok(ExitCode::SUCCESS)
}

fn print_endpoints(
    name: &str,
    duration: std::time::Duration,
    endpoints: &Endpoints,
    config: Option<&Path>,
) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "serving scenario {name} for {} (Ctrl-C or SIGTERM stops it)",
        routersim_mock_providers::duration::format_duration(duration)
    )?;
    writeln!(out, "listening on http://{}", endpoints.addr)?;
    for d in &endpoints.deployments {
        let base = routersim_live::serve::litellm_config::api_base(&d.root, &d.model);
        match d.own {
            Some(own) => writeln!(
                out,
                "  {} ({}): {base}  own port: http://{own}",
                d.id, d.model
            )?,
            None => writeln!(out, "  {} ({}): {base}", d.id, d.model)?,
        }
    }
    if let Some(file) = config {
        writeln!(
            out,
            "litellm config: {} (litellm --config {})",
            file.display(),
            file.display()
        )?;
    }
    out.flush()
}

/// Writes `text` to a temporary name beside `file`, then renames it into place.
fn write_atomically(file: &Path, text: &str) -> Result<(), String> {
    let name = file
        .file_name()
        .ok_or_else(|| format!("{}: not a file name", file.display()))?;
    let tmp = file.with_file_name(format!(
        ".{}.tmp-{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    std::fs::write(&tmp, text)
        .and_then(|()| std::fs::rename(&tmp, file))
        .map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            format!("{}: {e}", file.display())
        })
}
