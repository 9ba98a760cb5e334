//! `routersim drive SCENARIO --target URL`: the scenario's traffic against a real router in
//! front of the scenario's fake providers, in real time; the same report as `run`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use routersim_live::drive::header::ExtraHeader;
use routersim_live::drive::{DriveError, DriveOptions, drive};
use routersim_live::serve::config_file::{
    check_target, check_target_of, never_known, write_config,
};
use routersim_live::serve::litellm_config::litellm_config;
use routersim_live::serve::portkey_config::portkey_config;
use routersim_live::serve::{Endpoints, ServeError};
use routersim_report::print_summary;
use routersim_sim::scenario::{Scenario, load_scenario};

use crate::error::CliError;
use crate::out::Out;

/// Added to an emitted LiteLLM config: LiteLLM then passes drive's `x-routersim-request-id`
/// on to the providers, and attempts join their requests exactly.
const FORWARD_HEADERS: &str = "general_settings:\n  # routersim drive: pass x-routersim-request-id on, so provider calls join their requests\n  forward_client_headers_to_llm_api: true\n";

/// `routersim drive`.
#[derive(clap::Args, Debug)]
pub struct DriveArgs {
    /// The scenario file (YAML).
    pub scenario: PathBuf,
    /// The router under test: http://HOST:PORT (requests go to /v1/chat/completions) or a
    /// base URL ending in /v1. Loopback unless --allow-remote. Repeated or comma-separated:
    /// router replicas, each request sent to the next one in turn (round-robin).
    #[arg(long, required = true, value_delimiter = ',')]
    pub target: Vec<String>,
    /// Sent as `Authorization: Bearer KEY` (LiteLLM's master key).
    #[arg(long, value_name = "KEY")]
    pub api_key: Option<String>,
    /// A header sent on every request, 'NAME: VALUE' (repeatable): what the router needs on
    /// each call, e.g. the Portkey gateway's `x-portkey-config`.
    #[arg(long = "header", short = 'H', value_name = "NAME: VALUE", value_parser = ExtraHeader::parse)]
    pub headers: Vec<ExtraHeader>,
    /// The report folder (default reports/<scenario>/live/).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// A running `routersim serve` the router already points at, instead of starting the
    /// scenario's fake providers in-process (provider calls are then not in this report).
    #[arg(long, value_name = "URL")]
    pub providers: Option<String>,
    /// Stop the run if more than N requests would be sent within one second.
    #[arg(long, value_name = "N")]
    pub max_rps: Option<u64>,
    /// Stop the run after N requests.
    #[arg(long, value_name = "N")]
    pub max_requests: Option<u64>,
    /// Keep-alive connections open at once at most: drive's file-descriptor budget is
    /// min(N, RLIMIT_NOFILE / 4), read once at start. A request finding all busy waits for
    /// one (the load generator's wait: its latency counts from when it was sent, and the
    /// report counts such waits); a socket the OS refuses is said once and the request
    /// counted as not sent, never as the target's failure.
    #[arg(long, value_name = "N", default_value_t = routersim_live::drive::pool::DEFAULT_MAX_CONNECTIONS,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub max_connections: usize,
    /// After the last arrival, wait this long for requests in flight.
    #[arg(long, default_value = "30s", value_parser = crate::args::parse_duration)]
    pub drain: Duration,
    /// Write a LiteLLM proxy config routing through the in-process providers to FILE before
    /// the run starts (with forward_client_headers_to_llm_api, so calls join their requests).
    #[arg(long, value_name = "FILE", conflicts_with = "providers")]
    pub emit_litellm_config: Option<PathBuf>,
    /// Write the Portkey gateway config routing through the in-process providers to FILE (the
    /// traffic's model group as fallback targets, num_retries as retry.attempts, drive's
    /// request ids forwarded) and send it as `x-portkey-config` on every request (unless a
    /// --header gives one).
    #[arg(long, value_name = "FILE", conflicts_with = "providers")]
    pub emit_portkey_config: Option<PathBuf>,
    /// Wait up to this long for the target to answer HTTP before the run starts (start the
    /// router from the emitted config meanwhile).
    #[arg(long, value_name = "DURATION", value_parser = crate::args::parse_duration)]
    pub wait_for_target: Option<Duration>,
    /// Serve Prometheus metrics (GET /metrics: the requests sent, their outcomes and latency)
    /// on ADDR while the run goes on (loopback unless --allow-remote; port 0: any free port).
    #[arg(long, value_name = "ADDR")]
    pub metrics_addr: Option<std::net::SocketAddr>,
    /// Allow a non-loopback --target, --providers or --metrics-addr.
    #[arg(long)]
    pub allow_remote: bool,
    /// Replace an existing --emit-litellm-config or --emit-portkey-config FILE that routersim
    /// did not write (never the scenario or its router file).
    #[arg(long)]
    pub force: bool,
}

/// Drives the scenario, prints the summary and the report's path.
pub fn run(args: DriveArgs) -> Result<ExitCode, CliError> {
    let scenario = load_scenario(&args.scenario)?;
    check_emit_targets(&args, &scenario)?;
    if args.allow_remote {
        eprintln!(
            "warning: --allow-remote: drive may send chaos traffic to {} (not only this machine)",
            args.target.join(", ")
        );
    }
    let options = DriveOptions {
        target: args.target.first().cloned().unwrap_or_default(),
        replicas: args.target.iter().skip(1).cloned().collect(),
        api_key: args.api_key.clone(),
        headers: args.headers.clone(),
        out: args.out.clone(),
        providers: args.providers.clone(),
        max_rps: args.max_rps,
        max_requests: args.max_requests,
        allow_remote: args.allow_remote,
        drain: args.drain,
        wait_for_target: args.wait_for_target,
        progress: true,
        metrics_addr: args.metrics_addr,
        max_connections: args.max_connections,
    };
    let mut ready = |endpoints: &Endpoints| -> Result<Vec<ExtraHeader>, String> {
        eprintln!("fake providers on http://{}", endpoints.addr);
        if let Some(file) = &args.emit_litellm_config {
            let roots: Vec<String> = endpoints
                .deployments
                .iter()
                .map(|d| d.root.clone())
                .collect();
            let mut text = litellm_config(&scenario, &roots, "drive")?;
            if text.lines().any(|l| l.starts_with("general_settings:")) {
                eprintln!(
                    "note: the router file has general_settings: add \
                     forward_client_headers_to_llm_api: true there, or calls join by time order"
                );
            } else {
                text.push_str(FORWARD_HEADERS);
            }
            write_config(file, &text, &scenario, args.force)?;
            eprintln!("litellm config: {}", file.display());
        }
        match &args.emit_portkey_config {
            Some(file) => portkey_header(&scenario, endpoints, file, &args.headers),
            None => Ok(Vec::new()),
        }
    };
    let report = match drive(&scenario, &options, &mut ready) {
        Ok(report) => report,
        // Nothing was sent, nothing written: the shell's code for the signal (128 + its number).
        Err(e @ DriveError::Interrupted { signal, .. }) => {
            eprintln!("{e}");
            return Ok(ExitCode::from(if signal == "sigterm" { 143 } else { 130 }));
        }
        Err(e) => return Err(e.into()),
    };
    for note in &report.notes {
        eprintln!("note: {note}");
    }
    let mut stdout = Out::stdout();
    print_summary(&report.summary, &mut stdout)?;
    if let Some(live) = &report.summary.live {
        writeln!(
            stdout,
            "live: target {} ({} {}), stopped by {}, sent {}, unfinished {}, provider calls {} \
             (joined by request id {}, by time {}, unjoined {}), cooldowns inferred {}",
            live.target,
            live.target_name.as_deref().unwrap_or("unnamed"),
            live.target_version.as_deref().unwrap_or("?"),
            live.stopped_by,
            live.sent,
            live.unfinished,
            live.provider_calls,
            live.joined_by_request_id,
            live.joined_by_time,
            live.unjoined_calls,
            live.inferred_cooldowns,
        )?;
    }
    writeln!(stdout, "report: {}", report.out_dir.display())?;
    for warning in &report.warnings {
        eprintln!("warning: {warning}");
    }
    if let Some(fatal) = &report.fatal {
        eprintln!(
            "error: {fatal}; the run tested nothing of the scenario (the report is in {})",
            report.out_dir.display()
        );
        return Ok(ExitCode::from(crate::exit::EXIT_ERROR));
    }
    Ok(ExitCode::SUCCESS)
}

/// Refuses, before anything runs, an `--emit-*-config` file that exists and is not routersim's
/// own (without `--force`).
fn check_emit_targets(args: &DriveArgs, scenario: &Scenario) -> Result<(), CliError> {
    if let Some(file) = &args.emit_litellm_config {
        check_target(file, scenario, args.force).map_err(ServeError::EmitConfig)?;
    }
    if let Some(file) = &args.emit_portkey_config {
        let not_ours = "the file exists; add --force to replace it";
        check_target_of(
            "--emit-portkey-config",
            file,
            scenario,
            args.force,
            (never_known, not_ours),
        )
        .map_err(ServeError::EmitConfig)?;
    }
    Ok(())
}

/// Writes the Portkey config to `file` and returns it as the `x-portkey-config` header, unless
/// the user's `--header`s already carry one (theirs wins; the file is still written).
fn portkey_header(
    scenario: &Scenario,
    endpoints: &Endpoints,
    file: &Path,
    given: &[ExtraHeader],
) -> Result<Vec<ExtraHeader>, String> {
    let roots: Vec<String> = endpoints
        .deployments
        .iter()
        .map(|d| d.root.clone())
        .collect();
    let config = portkey_config(scenario, &roots)?;
    write_config(file, &format!("{config}\n"), scenario, true)?;
    eprintln!("portkey config: {}", file.display());
    if given.iter().any(|h| h.name == PORTKEY_CONFIG) {
        eprintln!("note: --header {PORTKEY_CONFIG} is sent, not the emitted config");
        return Ok(Vec::new());
    }
    Ok(vec![ExtraHeader::parse(&format!(
        "{PORTKEY_CONFIG}: {config}"
    ))?])
}

/// The header the Portkey gateway reads its config from.
const PORTKEY_CONFIG: &str = "x-portkey-config";
