//! `routersim drive SCENARIO --target URL`: the scenario's traffic, in real time, against a
//! real router in front of the scenario's fake providers; the same report as `run`.
//!
//! - [`header`]: `--header NAME: VALUE`, sent on every request.
//! - [`load`]: the open-loop generator and the HTTP client; [`pool`]: its keep-alive
//!   connections, bounded by a stated file-descriptor budget.
//! - [`record`]: what the client saw of each request (`live_requests.csv`).
//! - [`providers`]: the fake providers, in-process on a loopback port as `serve` runs them
//!   (their fault timeline starts with the traffic), or a running `serve` (`--providers`).
//! - [`report`]: observations to the engine's events, fed to the same `Recorder`.
//! - [`metrics`]: `GET /metrics` while the run goes on (`--metrics-addr`).
//! - [`observe`]: the run (the router waited for and checked, [`target`]; the arrivals; the
//!   drain; Ctrl-C and SIGTERM, [`stop`]); [`write`]: the report, with what [`checks`] doubts
//!   (failures the scenario did not [`injected`]) and the [`error`]s.
//!
//! The report folder is all or nothing ([`ReportDir`]); Ctrl-C and SIGTERM stop the arrivals
//! and still write a complete report of what happened — once a request was sent: before
//! that, nothing is written and the folder keeps the report it had. Requests still unanswered when the
//! drain ends are left out of the counts and counted in `live.unfinished`.

pub mod bench;
pub mod checks;
pub mod error;
pub mod header;
pub mod injected;
pub mod load;
pub mod metrics;
pub mod observe;
pub mod options;
pub mod pool;
pub mod providers;
pub mod record;
pub mod report;
pub mod target;
pub mod write;

use std::path::PathBuf;
use std::rc::Rc;

use routersim_report::summary::Summary;

use crate::serve::Endpoints;
pub use error::DriveError;
use load::{Client, Target};
use observe::observe;
pub use options::{DriveOptions, default_out_dir};
use routersim_sim::report_dir::ReportDir;
use routersim_sim::scenario::Scenario;
use write::write_report;

/// What a live run produced.
#[derive(Clone, Debug)]
pub struct DriveReport {
    /// The summary (also in `summary.json`).
    pub summary: Summary,
    /// Where the report is.
    pub out_dir: PathBuf,
    /// What writing the folder had to tidy up first.
    pub notes: Vec<String>,
    /// What makes the report doubtful (also in `summary.json`'s `live.warnings`).
    pub warnings: Vec<String>,
    /// Why the run tested nothing of the scenario (no request reached the router, or it does
    /// not route to the scenario's deployments): the report is written, and the command fails.
    pub fatal: Option<String>,
}

/// Drives `scenario` against `options.target` and writes the report. `ready` is called once
/// the in-process providers listen (write a LiteLLM config pointing at them); the headers it
/// returns are sent on every request besides `options.headers` (a Portkey config naming the
/// providers' addresses).
pub fn drive(
    scenario: &Scenario,
    options: &DriveOptions,
    ready: &mut dyn FnMut(&Endpoints) -> Result<Vec<header::ExtraHeader>, String>,
) -> Result<DriveReport, DriveError> {
    // A host name is refused before it is resolved: no DNS query leaves for a remote name.
    if !options.allow_remote
        && let Some(remote) = std::iter::once(&options.target)
            .chain(&options.replicas)
            .chain(&options.providers)
            .find(|url| !crate::serve::is_loopback_url(url))
    {
        return Err(DriveError::Remote(remote.clone()));
    }
    let target = Target::parse(&options.target).map_err(DriveError::Url)?;
    let mut replicas = vec![target.clone()];
    for url in &options.replicas {
        replicas.push(Target::parse(url).map_err(DriveError::Url)?);
    }
    if let Some(remote) = replicas.iter().find(|t| !t.is_loopback())
        && !options.allow_remote
    {
        return Err(DriveError::Remote(remote.url.clone()));
    }
    if let Some(addr) = options.metrics_addr
        && !options.allow_remote
        && !addr.ip().is_loopback()
    {
        return Err(DriveError::RemoteMetrics(addr));
    }
    if let Some(url) = &options.providers {
        let providers = Target::parse(url).map_err(DriveError::Url)?;
        if !options.allow_remote && !providers.is_loopback() {
            return Err(DriveError::Remote(url.clone()));
        }
    }
    let out = options
        .out
        .clone()
        .unwrap_or_else(|| default_out_dir(scenario));
    let staged = ReportDir::begin(&out)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let local = tokio::task::LocalSet::new();
    let client = Rc::new(Client {
        target,
        replicas,
        api_key: options.api_key.clone(),
        headers: std::cell::RefCell::new(options.headers.clone()),
        pool: pool::Pool::new(options.connection_budget()),
    });
    // Interrupted before anything was sent: the staged folder is dropped, the old report kept.
    let observed = local.block_on(
        &runtime,
        observe(scenario, options, client, staged.path(), ready),
    )?;
    // Streams still open are cut here (their rows are logged), then the log is read.
    drop(local);
    let calls = match &observed.server {
        Some(server) => providers::finish(server)?,
        None => Vec::new(),
    };
    let (summary, checks) = write_report(scenario, options, &observed, &calls, staged.path())?;
    let notes = staged.commit()?;
    Ok(DriveReport {
        summary,
        out_dir: out,
        notes,
        warnings: checks.warnings,
        fatal: checks.fatal,
    })
}
