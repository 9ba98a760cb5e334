//! `routersim serve`: the scenario's fake providers over real HTTP, in real time.
//!
//! The fault timeline plays on tokio's real clock from the first connection (fault windows,
//! scripts and quotas count from then: [`first_connection`]) until the scenario's `duration`
//! and the first client's close, Ctrl-C or SIGTERM.
//! One listener serves every deployment under `/d/<deployment_id>/…`; with
//! `port_per_deployment`, each deployment also gets a listener of its own at the root. Every
//! call is logged to `provider_calls.csv` in the `--out` folder, which is all or nothing like
//! every report (staged, renamed into place when the server stops).

pub mod bare;
pub mod bench;
pub mod bench_server;
pub mod config_file;
pub mod early_scrape;
pub mod first_connection;
pub mod litellm_config;
pub mod load;
pub mod portkey_config;
pub mod thread_cpu;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use routersim_mock_providers::wire::{
    CallLog, ConnGate, ConnLimits, Mount, WireServer, listen_with,
};
use routersim_mock_providers::{FakeProviders, Pacing};
use routersim_wire::limits::MAX_OUTPUT_TOKENS;
use routersim_wire::route::percent_encode;
use tokio::net::TcpListener;
use tokio::time::Instant;

use crate::stop::Stop;
use routersim_sim::report_dir::{ReportDir, ReportDirError};
use routersim_sim::scenario::Scenario;

/// The call log's file name in the `--out` folder.
pub const PROVIDER_CALLS_CSV: &str = "provider_calls.csv";

/// How to serve.
#[derive(Clone, Debug)]
pub struct ServeOptions {
    /// The shared listener's address (port 0: any free port).
    pub listen: SocketAddr,
    /// Allow a non-loopback address.
    pub allow_remote: bool,
    /// One extra listener per deployment, without the `/d/<id>` prefix.
    pub port_per_deployment: bool,
    /// Where `provider_calls.csv` goes.
    pub out: Option<PathBuf>,
    /// Stop after this long (default: the scenario's duration).
    pub duration: Option<Duration>,
}

/// Where the server listens.
#[derive(Clone, Debug)]
pub struct Endpoints {
    /// The shared listener.
    pub addr: SocketAddr,
    /// Each deployment: its id, its model, its root URL on the shared listener
    /// (`http://H:P/d/<id>`), and its own listener with `port_per_deployment`.
    pub deployments: Vec<DeploymentEndpoint>,
}

/// One deployment's endpoint.
#[derive(Clone, Debug)]
pub struct DeploymentEndpoint {
    /// The deployment id.
    pub id: Arc<str>,
    /// `litellm_params.model`.
    pub model: String,
    /// `http://H:P/d/<id>` (percent-encoded).
    pub root: String,
    /// Its own listener, if any.
    pub own: Option<SocketAddr>,
}

/// What a served session did.
#[derive(Clone, Debug)]
pub struct ServeReport {
    /// Calls served (rows of `provider_calls.csv`).
    pub calls: u64,
    /// Why it stopped.
    pub stopped_by: &'static str,
    /// The report folder, when `--out` was given.
    pub out_dir: Option<PathBuf>,
    /// Notes of the report folder (leftovers tidied).
    pub notes: Vec<String>,
}

/// Why serving failed.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// A non-loopback address without `allow_remote`.
    #[error(
        "--listen {0}: not a loopback address; a chaos server must not be reachable by accident \
         (add --allow-remote to serve it anyway)"
    )]
    Remote(SocketAddr),
    /// Binding or the runtime failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The fake providers could not be built.
    #[error("{0}")]
    Providers(String),
    /// The report folder.
    #[error("{0}")]
    Output(#[from] ReportDirError),
    /// Writing the call log failed.
    #[error("{0}")]
    Wire(#[from] routersim_mock_providers::wire::WireError),
    /// The caller's ready hook failed (writing the LiteLLM config).
    #[error("{0}")]
    Ready(String),
    /// `--emit-litellm-config FILE` may not be written (the scenario, a file of the user's).
    #[error("{0}")]
    EmitConfig(String),
    /// `bench --serve` could not run.
    #[error("bench --serve: {0}")]
    Bench(String),
}

/// A listener on `addr` with a deep accept queue (4096, the kernel's usual `somaxconn`): a
/// test that opens thousands of connections at once must not see refused or delayed SYNs.
/// Call inside a runtime. An error names the address (`--listen 127.0.0.1:4000: Address
/// already in use`).
pub fn bind(addr: SocketAddr) -> std::io::Result<TcpListener> {
    let bound = (|| {
        let socket = if addr.is_ipv4() {
            tokio::net::TcpSocket::new_v4()?
        } else {
            tokio::net::TcpSocket::new_v6()?
        };
        socket.set_reuseaddr(true)?;
        socket.bind(addr)?;
        socket.listen(4096)
    })();
    bound.map_err(|e| std::io::Error::new(e.kind(), format!("--listen {addr}: {e}")))
}

/// Whether `addr` may be served without `allow_remote`.
pub fn is_loopback(addr: &SocketAddr) -> bool {
    addr.ip().is_loopback()
}

/// Whether a URL's host (`127.0.0.1`, `[::1]`, `localhost`, `example.com`) is loopback without
/// resolving it: a literal loopback address or `localhost` (RFC 6761: it is loopback). Any
/// other name is not: a name is refused before any DNS lookup (unless `--allow-remote`), so
/// a typo never sends chaos traffic, or even a query, off the machine.
pub fn is_loopback_host(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    match host.parse::<std::net::IpAddr>() {
        Ok(ip) => ip.is_loopback(),
        Err(_) => host.eq_ignore_ascii_case("localhost"),
    }
}

/// Whether an `http://host[:port][/path]` URL names a loopback host, by
/// [`is_loopback_host`] (nothing is resolved). A URL without `http://` is judged by its
/// parser elsewhere: `true` here.
pub fn is_loopback_url(url: &str) -> bool {
    let Some(rest) = url.strip_prefix("http://") else {
        return true;
    };
    let authority = rest.split('/').next().unwrap_or(rest);
    let host = match authority.strip_prefix('[') {
        // `[::1]:8000`
        Some(v6) => v6.split(']').next().unwrap_or(v6),
        None => authority
            .rsplit_once(':')
            .map_or(authority, |(host, _)| host),
    };
    is_loopback_host(host)
}

/// Refuses a scenario whose fake providers would write answers longer than the wire's cap
/// ([`MAX_OUTPUT_TOKENS`]): their text would not fit in memory.
fn check_answer_lengths(scenario: &Scenario) -> Result<(), ServeError> {
    for (id, spec) in &scenario.providers {
        if let Some(range) = spec.output_tokens
            && range.max > MAX_OUTPUT_TOKENS
        {
            return Err(ServeError::Providers(format!(
                "{}: providers.{id}.output_tokens: up to {} tokens, more than the \
                 {MAX_OUTPUT_TOKENS} routersim serves in one answer (one word a token); the \
                 simulator runs it, a server cannot",
                scenario.file.display(),
                range.max
            )));
        }
    }
    Ok(())
}

/// Serves `scenario` until its duration (or `options.duration`) ends or Ctrl-C, each client
/// under `limits`; `ready` is called once every listener is bound (print the addresses, write
/// the LiteLLM config).
pub fn serve(
    scenario: &Scenario,
    options: &ServeOptions,
    limits: ConnLimits,
    ready: &mut dyn FnMut(&Endpoints) -> Result<(), String>,
) -> Result<ServeReport, ServeError> {
    if !options.allow_remote && !is_loopback(&options.listen) {
        return Err(ServeError::Remote(options.listen));
    }
    check_answer_lengths(scenario)?;
    let staged = match &options.out {
        Some(out) => Some(ReportDir::begin(out)?),
        None => None,
    };
    let log =
        match &staged {
            Some(dir) => {
                let path = dir.path().join(PROVIDER_CALLS_CSV);
                CallLog::new(std::fs::File::create(&path).map_err(|e| {
                    std::io::Error::new(e.kind(), format!("{}: {e}", path.display()))
                })?)
            }
            None => CallLog::disabled(),
        };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let local = tokio::task::LocalSet::new();
    let duration = options.duration.unwrap_or(scenario.duration);
    let (server, stopped_by) = local.block_on(
        &runtime,
        run(scenario, options, limits, log, duration, ready),
    )?;
    // Cut the streams still open (their rows say so), then close the log.
    drop(local);
    let calls = server.call_log().finish()?;
    drop(server);
    let (out_dir, notes) = match staged {
        Some(dir) => {
            let target = dir.target().to_path_buf();
            (Some(target), dir.commit()?)
        }
        None => (None, Vec::new()),
    };
    Ok(ServeReport {
        calls,
        stopped_by,
        out_dir,
        notes,
    })
}

async fn run(
    scenario: &Scenario,
    options: &ServeOptions,
    limits: ConnLimits,
    log: CallLog,
    duration: Duration,
    ready: &mut dyn FnMut(&Endpoints) -> Result<(), String>,
) -> Result<(Rc<WireServer>, &'static str), ServeError> {
    let stop = Stop::listen();
    let bound = bind_endpoints(scenario, options)?;
    ready(&bound.endpoints).map_err(ServeError::Ready)?;
    first_connection::serve_from_first_connection(scenario, bound, log, limits, duration, &stop)
        .await
}

/// The listeners of a server not started yet, and their addresses.
#[derive(Debug)]
pub struct Bound {
    shared: TcpListener,
    own: Vec<TcpListener>,
    /// Where each deployment will be served.
    pub endpoints: Endpoints,
}

/// Binds the shared listener (and one per deployment with `port_per_deployment`); call inside
/// a runtime. Connections wait in the accept queue until [`start_serving`].
pub fn bind_endpoints(scenario: &Scenario, options: &ServeOptions) -> Result<Bound, ServeError> {
    if !options.allow_remote && !is_loopback(&options.listen) {
        return Err(ServeError::Remote(options.listen));
    }
    check_answer_lengths(scenario)?;
    let shared = bind(options.listen)?;
    let addr = shared.local_addr()?;
    let mut own = Vec::new();
    if options.port_per_deployment {
        for _ in &scenario.router.deployments {
            let listener = bind(SocketAddr::new(options.listen.ip(), 0))?;
            own.push(listener);
        }
    }
    let endpoints = Endpoints {
        addr,
        deployments: scenario
            .router
            .deployments
            .iter()
            .enumerate()
            .map(|(i, d)| DeploymentEndpoint {
                id: d.id.clone(),
                model: d.model.clone(),
                root: format!("http://{addr}/d/{}", percent_encode(&d.id)),
                own: own.get(i).and_then(|l| l.local_addr().ok()),
            })
            .collect(),
    };
    Ok(Bound {
        shared,
        own,
        endpoints,
    })
}

/// A server answering calls; [`Running::stop`] stops accepting.
#[derive(Debug)]
pub struct Running {
    /// The server (its call log).
    pub server: Rc<WireServer>,
    /// When the fault timeline started.
    pub start: Instant,
    /// The connection cap its listeners share.
    pub gate: ConnGate,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Running {
    /// Stops accepting connections (open streams go on until the `LocalSet` is dropped).
    pub fn stop(self) -> Rc<WireServer> {
        for task in &self.tasks {
            task.abort();
        }
        self.server
    }
}

/// Starts the fault timeline now and serves `bound`'s listeners with the default
/// [`ConnLimits`] (local tasks: call inside a `LocalSet`).
pub fn start_serving(
    scenario: &Scenario,
    bound: Bound,
    log: CallLog,
) -> Result<Running, ServeError> {
    start_serving_with(scenario, bound, log, ConnLimits::default())
}

/// [`start_serving`], each client under `limits` (every listener shares one connection cap).
pub fn start_serving_with(
    scenario: &Scenario,
    bound: Bound,
    log: CallLog,
    limits: ConnLimits,
) -> Result<Running, ServeError> {
    start_serving_from(scenario, bound, log, limits, Instant::now())
}

/// [`start_serving_with`], the fault timeline counted from `start` (now or a moment ago: the
/// first connection's accept, when telling a scrape from traffic took a few milliseconds).
pub fn start_serving_from(
    scenario: &Scenario,
    bound: Bound,
    log: CallLog,
    limits: ConnLimits,
    start: Instant,
) -> Result<Running, ServeError> {
    let since_start = i64::try_from(start.elapsed().as_millis()).unwrap_or(0);
    let epoch_unix_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .saturating_sub(since_start);
    let providers = FakeProviders::new(
        &scenario.router,
        &scenario.providers,
        &scenario.faults,
        scenario.seed,
        epoch_unix_ms,
        start,
    )
    .map_err(|e| ServeError::Providers(format!("{}: {e}", scenario.file.display())))?
    // On the wall clock: latencies to the microsecond, not on tokio's millisecond ticks.
    .with_pacing(Pacing::Precise);
    let server = Rc::new(WireServer::new(
        Rc::new(providers),
        scenario.router.deployments.clone(),
        log,
        start,
        epoch_unix_ms,
    ));
    let gate = ConnGate::new(limits.max_connections);
    let mut tasks = vec![tokio::task::spawn_local(listen_with(
        server.clone(),
        bound.shared,
        Mount::Shared,
        limits,
        gate.clone(),
    ))];
    for (i, listener) in bound.own.into_iter().enumerate() {
        tasks.push(tokio::task::spawn_local(listen_with(
            server.clone(),
            listener,
            Mount::Deployment(i),
            limits,
            gate.clone(),
        )));
    }
    // Rows reach the file at least once a second, so it can be tailed while serving.
    tasks.push(tokio::task::spawn_local({
        let server = server.clone();
        async move {
            loop {
                tokio::time::sleep(Duration::from_secs(1)).await;
                server.call_log().flush();
            }
        }
    }));
    Ok(Running {
        server,
        start,
        gate,
        tasks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_name_other_than_localhost_is_not_loopback_and_is_not_resolved() {
        for url in [
            "http://127.0.0.1:4000",
            "http://127.9.9.9/v1",
            "http://localhost:4000/v1",
            "http://[::1]:4000",
            "http://LOCALHOST",
        ] {
            assert!(is_loopback_url(url), "{url}");
        }
        for url in [
            "http://10.0.0.1:4000",
            "http://example.invalid:4000",
            "http://router/v1",
            "http://[2001:db8::1]:80",
            "http://localhost.example.com",
        ] {
            assert!(!is_loopback_url(url), "{url}");
        }
    }
}
