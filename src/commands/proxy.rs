//! `routersim proxy --config FILE`: routersim's engine as an OpenAI-compatible router.

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use routersim_live::proxy::shared_state::redis_settings;
use routersim_live::proxy::{ProxyError, ProxyOptions, config_lines, load_config, proxy};
use routersim_live::serve::is_loopback;

use crate::commands::serve::ConnArgs;
use crate::error::CliError;

/// `routersim proxy`.
#[derive(clap::Args, Debug)]
pub struct ProxyArgs {
    /// The router config: a LiteLLM proxy config.yaml (e.g. from `serve --emit-litellm-config`)
    /// or a routersim router file. Each deployment is called at its `litellm_params.api_base`.
    #[arg(long)]
    pub config: PathBuf,
    /// Address to listen on (port 0: any free port). Loopback unless --allow-remote.
    #[arg(long, default_value = "127.0.0.1:4000")]
    pub listen: SocketAddr,
    /// Allow a non-loopback --listen address.
    #[arg(long)]
    pub allow_remote: bool,
    /// With router_settings.redis_host: the longest a read of Redis before routing may take;
    /// past it the request routes on this replica's own state and the proxy falls back to it
    /// until Redis answers again.
    #[arg(long, default_value = "50ms", value_name = "DURATION", value_parser = crate::args::parse_duration)]
    pub redis_read_timeout: Duration,
    #[command(flatten)]
    pub limits: ConnArgs,
}

/// Serves until Ctrl-C or SIGTERM.
pub fn run(args: ProxyArgs) -> Result<ExitCode, CliError> {
    let config = load_config(&args.config)?;
    for line in config_lines(&config) {
        eprintln!("{line}");
    }
    if args.allow_remote && !is_loopback(&args.listen) {
        eprintln!(
            "warning: serving on {} (not loopback): anything that reaches this address can send \
             requests through this router to its deployments",
            args.listen
        );
    }
    // The engine's wall clock starts at the system clock's reading now (read here: only the
    // CLI reads the system clock).
    let epoch_unix_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    // `router_settings.redis_host` (LiteLLM's shared state): `os.environ/NAME` values are read
    // here, where the environment is read.
    #[allow(
        clippy::disallowed_methods,
        reason = "src/ is where the environment is read"
    )]
    let env = |name: &str| std::env::var(name).ok();
    let redis = redis_settings(&args.config)
        .and_then(|settings| settings.map(|s| s.target(&env)).transpose())
        .map_err(ProxyError::Redis)?;
    match &redis {
        Some(target) => eprintln!(
            "shared state: cooldowns and allowed-fails counters in Redis at {} ({}), shared \
             with every replica using it",
            target.shown, target.key
        ),
        None => eprintln!(
            "state: per process (no router_settings.redis_host): cooldowns are not shared with \
             other replicas"
        ),
    }
    let options = ProxyOptions {
        listen: args.listen,
        allow_remote: args.allow_remote,
        epoch_unix_ms,
        redis,
        redis_read_timeout: args.redis_read_timeout,
        limits: args.limits.limits(),
    };
    let file = args.config.display().to_string();
    let mut ready = |addr: SocketAddr, groups: &[Arc<str>]| -> Result<(), String> {
        let mut out = std::io::stdout().lock();
        let names: Vec<&str> = groups.iter().map(|g| &**g).collect();
        writeln!(
            out,
            "routersim proxy: router config {file} (Ctrl-C or SIGTERM stops it)"
        )
        .and_then(|()| writeln!(out, "listening on http://{addr}"))
        .and_then(|()| writeln!(out, "  POST http://{addr}/v1/chat/completions"))
        .and_then(|()| writeln!(out, "  GET  http://{addr}/metrics (Prometheus)"))
        .and_then(|()| writeln!(out, "  model groups: {}", names.join(", ")))
        .and_then(|()| out.flush())
        .map_err(|e| format!("cannot write to stdout: {e}"))
    };
    let report = proxy(config, &options, &mut ready)?;
    let mut out = std::io::stdout().lock();
    for line in report.stop_lines() {
        writeln!(out, "{line}")?;
    }
    Ok(ExitCode::SUCCESS)
}
