//! `routersim serve SCENARIO`: the scenario's fake providers over HTTP, in real time.

use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use routersim_live::serve::config_file::{check_target, write_config};
use routersim_live::serve::litellm_config::litellm_config;
use routersim_live::serve::{Endpoints, ServeError, ServeOptions, is_loopback, serve};
use routersim_mock_providers::wire::ConnLimits;
use routersim_mock_providers::wire::guard;
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
    /// Replace an existing --emit-litellm-config FILE that routersim did not write (never the
    /// scenario or its router file).
    #[arg(long, requires = "emit_litellm_config")]
    pub force: bool,
    #[command(flatten)]
    pub limits: ConnArgs,
}

/// The bounds on each client of `serve` and `proxy` (docs/limits.md); the defaults are
/// `routersim_mock_providers::wire::guard`'s.
#[derive(clap::Args, Debug, Clone, Copy)]
pub struct ConnArgs {
    /// A request's head, then its body, must arrive within this of its first byte (a new
    /// connection's first request: of its opening); else the connection is closed (a late
    /// body gets a 408).
    #[arg(long, default_value = "10s", value_name = "DURATION", value_parser = crate::args::parse_duration)]
    pub header_timeout: Duration,
    /// A connection with no request in progress, or whose client stopped reading an answer,
    /// is closed after this.
    #[arg(long, default_value = "60s", value_name = "DURATION", value_parser = crate::args::parse_duration)]
    pub idle_timeout: Duration,
    /// Connections open at once; more wait in the accept queue until one closes.
    #[arg(long, default_value_t = guard::DEFAULT_MAX_CONNECTIONS as u32, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_connections: u32,
}

impl ConnArgs {
    /// As the servers take them.
    pub fn limits(self) -> ConnLimits {
        ConnLimits {
            header_timeout: self.header_timeout,
            idle_timeout: self.idle_timeout,
            max_connections: self.max_connections as usize,
        }
    }
}

/// Serves until the scenario's duration ends, Ctrl-C or SIGTERM.
pub fn run(args: ServeArgs) -> Result<ExitCode, CliError> {
    let scenario = load_scenario(&args.scenario)?;
    if let Some(file) = &args.emit_litellm_config {
        check_target(file, &scenario, args.force).map_err(ServeError::EmitConfig)?;
    }
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
            let text = litellm_config(&scenario, &roots, "serve")?;
            write_config(file, &text, &scenario, args.force)?;
        }
        print_endpoints(
            &scenario.name,
            scenario.duration,
            endpoints,
            args.emit_litellm_config.as_deref(),
        )
        .map_err(|e| format!("cannot write to stdout: {e}"))
    };
    let report = serve(&scenario, &options, args.limits.limits(), &mut ready)?;
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
