//! `routersim drive SCENARIO --target URL`: the scenario's traffic, in real time, against a
//! real router in front of the scenario's fake providers; the same report as `run`.
//!
//! - [`header`]: `--header NAME: VALUE`, sent on every request.
//! - [`load`]: the open-loop generator and the HTTP client (one connection per request).
//! - [`record`]: what the client saw of each request (`live_requests.csv`).
//! - [`providers`]: the fake providers, in-process on a loopback port as `serve` runs them
//!   (their fault timeline starts with the traffic), or a running `serve` (`--providers`).
//! - [`report`]: observations to the engine's events, fed to the same `Recorder`.
//!
//! The report folder is all or nothing ([`ReportDir`]); Ctrl-C and SIGTERM stop the arrivals
//! and still write a complete report of what happened. Requests still unanswered when the
//! drain ends are left out of the counts and counted in `live.unfinished`.

pub mod header;
pub mod load;
pub mod providers;
pub mod record;
pub mod report;

use std::cell::Cell;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Duration;

use routersim_mock_providers::wire::{CallRow, WireServer};
use routersim_report::record::{Recorder, RecorderOptions, RunMeta};
use routersim_report::summary::Summary;
use routersim_report::{LiveInfo, PageTitle, ReportError, write_report_html};
use serde_json::Value;
use tokio::sync::Notify;
use tokio::time::Instant;

use crate::serve::{Endpoints, ServeError};
use load::{Client, Counters, RateGuard, Target};
use record::{LIVE_REQUESTS_CSV, RequestRecord, write_live_requests};
use routersim_sim::report_dir::{ReportDir, ReportDirError};
use routersim_sim::run::{VERSION, plot_context};
use routersim_sim::scenario::Scenario;

/// How to drive.
#[derive(Clone, Debug)]
pub struct DriveOptions {
    /// The router: `http://host:port` (requests go to `/v1/chat/completions`) or a base URL
    /// ending in `/v1`.
    pub target: String,
    /// Further replicas of the router (a fleet): chat requests go round-robin over `target`
    /// and these, in this order, one request each, as a round-robin load balancer would.
    pub replicas: Vec<String>,
    /// Sent as `Authorization: Bearer …`.
    pub api_key: Option<String>,
    /// Sent on every request (`--header`).
    pub headers: Vec<header::ExtraHeader>,
    /// The report folder (default `reports/<name>/live/`).
    pub out: Option<PathBuf>,
    /// A running `routersim serve` to use instead of in-process providers.
    pub providers: Option<String>,
    /// Stop the run when more than this many requests would be sent in one second.
    pub max_rps: Option<u64>,
    /// Stop the run after this many requests.
    pub max_requests: Option<u64>,
    /// Allow a non-loopback target or providers URL.
    pub allow_remote: bool,
    /// How long in-flight requests may take to finish after the last arrival.
    pub drain: Duration,
    /// Wait up to this long for the target to answer HTTP before starting (the providers are
    /// already listening: a router started after them can read their addresses).
    pub wait_for_target: Option<Duration>,
    /// Print a progress line on stderr.
    pub progress: bool,
}

/// What a live run produced.
#[derive(Clone, Debug)]
pub struct DriveReport {
    /// The summary (also in `summary.json`).
    pub summary: Summary,
    /// Where the report is.
    pub out_dir: PathBuf,
    /// What writing the folder had to tidy up first.
    pub notes: Vec<String>,
}

/// Why a live run failed.
#[derive(Debug, thiserror::Error)]
pub enum DriveError {
    /// A URL that cannot be used.
    #[error("{0}")]
    Url(String),
    /// A non-loopback URL without `--allow-remote`.
    #[error(
        "{0}: not a loopback address; drive sends chaos traffic only to this machine unless \
         --allow-remote is given"
    )]
    Remote(String),
    /// The target never answered.
    #[error("{target}: no HTTP answer within {waited:?}")]
    NotReady {
        /// The target.
        target: String,
        /// How long drive waited.
        waited: Duration,
    },
    /// The fake providers.
    #[error("{0}")]
    Serve(#[from] ServeError),
    /// The report folder.
    #[error("{0}")]
    Output(#[from] ReportDirError),
    /// Writing the report.
    #[error("{0}")]
    Report(#[from] ReportError),
    /// The caller's ready hook (writing a LiteLLM config).
    #[error("{0}")]
    Ready(String),
    /// The runtime.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// A report file drive writes itself.
    #[error("{}: {message}", .path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// What failed.
        message: String,
    },
}

fn file_error(path: &Path, e: impl std::fmt::Display) -> DriveError {
    DriveError::File {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

/// The default report folder: `reports/<name>/live/`.
pub fn default_out_dir(scenario: &Scenario) -> PathBuf {
    Path::new("reports").join(&scenario.name).join("live")
}

/// What the generator observed.
struct Observed {
    start: Instant,
    records: Vec<RequestRecord>,
    sent: u64,
    stopped_by: &'static str,
    run_end: Duration,
    target_name: Option<String>,
    target_version: Option<String>,
    server: Option<Rc<WireServer>>,
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
    });
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
    let summary = write_report(scenario, options, &observed, &calls, staged.path())?;
    let notes = staged.commit()?;
    Ok(DriveReport {
        summary,
        out_dir: out,
        notes,
    })
}

async fn observe(
    scenario: &Scenario,
    options: &DriveOptions,
    client: Rc<Client>,
    dir: &Path,
    ready: &mut dyn FnMut(&Endpoints) -> Result<Vec<header::ExtraHeader>, String>,
) -> Result<Observed, DriveError> {
    let signal = Stop::listen();
    let providers = match options.providers {
        Some(_) => None,
        None => {
            let providers = providers::Providers::bind(scenario, dir)?;
            let headers = ready(providers.endpoints()).map_err(DriveError::Ready)?;
            client.headers.borrow_mut().extend(headers);
            Some(providers)
        }
    };
    if let Some(wait) = options.wait_for_target {
        tokio::select! {
            biased;
            () = signal.notified() => {}
            ready = wait_for(&client, wait) => ready?,
        }
    }
    let running = match providers {
        Some(p) => Some(p.start(scenario)?),
        None => None,
    };
    // Asked beside the traffic (a router may take its time), read at the end.
    let identity = tokio::task::spawn_local({
        let client = client.clone();
        async move { identify(&client).await }
    });
    let start = running.as_ref().map_or_else(Instant::now, |r| r.start);
    let counters = Rc::new(Counters::default());
    let progress = (options.progress && std::io::stderr().is_terminal()).then(|| {
        tokio::task::spawn_local(show_progress(counters.clone(), start, scenario.duration))
    });
    let (sent, stopped_by) = generate(scenario, options, &client, start, &counters, &signal).await;
    // After a signal, in-flight requests get a second at most; otherwise the drain timeout,
    // which a signal cuts short.
    let signalled = matches!(stopped_by, "ctrl-c" | "sigterm");
    let drain = if signalled {
        Duration::from_secs(1)
    } else {
        options.drain
    };
    let deadline = Instant::now() + drain;
    while counters.in_flight.get() > 0 && Instant::now() < deadline {
        tokio::select! {
            biased;
            () = signal.notified(), if !signalled => break,
            () = counters.done.notified() => {}
            () = tokio::time::sleep_until(deadline) => break,
        }
    }
    if let Some(task) = progress {
        task.abort();
        eprintln!();
    }
    let (target_name, target_version) = identity.await.unwrap_or((None, None));
    let run_end = start.elapsed();
    let records = std::mem::take(&mut *counters.records.borrow_mut())
        .into_iter()
        .flatten()
        .collect();
    Ok(Observed {
        start,
        records,
        sent,
        stopped_by,
        run_end,
        target_name,
        target_version,
        server: running.map(crate::serve::Running::stop),
    })
}

/// Sends every arrival at its instant until the scenario ends, a cap or a signal.
async fn generate(
    scenario: &Scenario,
    options: &DriveOptions,
    client: &Rc<Client>,
    start: Instant,
    counters: &Rc<Counters>,
    signal: &Stop,
) -> (u64, &'static str) {
    let mut guard = options.max_rps.map(RateGuard::new);
    let mut sent = 0_u64;
    for arrival in scenario.arrivals_with_seed(scenario.seed) {
        if arrival.at > scenario.duration {
            break;
        }
        if options.max_requests.is_some_and(|max| sent >= max) {
            return (sent, "max-requests");
        }
        let at = start + arrival.at;
        tokio::select! {
            biased;
            () = signal.notified() => return (sent, signal.name()),
            () = tokio::time::sleep_until(at) => {}
        }
        if let Some(guard) = guard.as_mut()
            && !guard.admit(Instant::now())
        {
            return (sent, "max-rps");
        }
        let replica = usize::try_from(sent).unwrap_or(0);
        sent += 1;
        counters.sent.set(sent);
        counters.in_flight.set(counters.in_flight.get() + 1);
        let slot = counters.records.borrow().len();
        counters.records.borrow_mut().push(None);
        let (client, counters) = (client.clone(), counters.clone());
        tokio::task::spawn_local(async move {
            let record = load::request(client, replica, arrival.request, start, at).await;
            if record.failure().is_some() {
                counters.failed.set(counters.failed.get() + 1);
            }
            counters.records.borrow_mut()[slot] = Some(record);
            counters.in_flight.set(counters.in_flight.get() - 1);
            counters.done.notify_one();
        });
    }
    // Wait out the scenario's duration, so the providers' timeline and the report span it.
    tokio::select! {
        biased;
        () = signal.notified() => (sent, signal.name()),
        () = tokio::time::sleep_until(start + scenario.duration) => (sent, "duration"),
    }
}

/// Ctrl-C or SIGTERM, listened for from the start of the run (a signal while drive waits for
/// the target still stops it cleanly).
#[derive(Debug, Default)]
struct Stop {
    name: Cell<Option<&'static str>>,
    notify: Notify,
}

impl Stop {
    /// Installs the handlers now (call inside the `LocalSet`).
    fn listen() -> Rc<Self> {
        let stop = Rc::new(Self::default());
        #[cfg(unix)]
        let streams = {
            use tokio::signal::unix::{SignalKind, signal};
            (
                signal(SignalKind::interrupt()).ok(),
                signal(SignalKind::terminate()).ok(),
            )
        };
        tokio::task::spawn_local({
            let stop = stop.clone();
            async move {
                #[cfg(unix)]
                let name = {
                    let (mut int, mut term) = streams;
                    let recv = |s: &mut Option<tokio::signal::unix::Signal>| {
                        let s = s.take();
                        async move {
                            match s {
                                Some(mut s) => {
                                    s.recv().await;
                                }
                                None => std::future::pending::<()>().await,
                            }
                        }
                    };
                    tokio::select! {
                        biased;
                        () = recv(&mut int) => "ctrl-c",
                        () = recv(&mut term) => "sigterm",
                    }
                };
                #[cfg(not(unix))]
                let name = {
                    let _ = tokio::signal::ctrl_c().await;
                    "ctrl-c"
                };
                stop.name.set(Some(name));
                stop.notify.notify_waiters();
            }
        });
        stop
    }

    /// Resolves once a signal came.
    async fn notified(&self) {
        while self.name.get().is_none() {
            self.notify.notified().await;
        }
    }

    /// Which signal (`ctrl-c` until one came).
    fn name(&self) -> &'static str {
        self.name.get().unwrap_or("ctrl-c")
    }
}

async fn show_progress(counters: Rc<Counters>, start: Instant, duration: Duration) {
    loop {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let mut err = std::io::stderr().lock();
        let _ = write!(
            err,
            "\r{:>6.1}s / {:.0}s  sent {}  in flight {}  failed {}   ",
            start.elapsed().as_secs_f64(),
            duration.as_secs_f64(),
            counters.sent.get(),
            counters.in_flight.get(),
            counters.failed.get(),
        );
        let _ = err.flush();
    }
}

/// Polls every replica until each answers HTTP at all (any status).
async fn wait_for(client: &Client, wait: Duration) -> Result<(), DriveError> {
    let deadline = Instant::now() + wait;
    for target in &client.replicas {
        let path = format!("{}/health/liveliness", target.root);
        loop {
            if load::get_from(client, target, &path).await.is_some() {
                break;
            }
            if Instant::now() >= deadline {
                return Err(DriveError::NotReady {
                    target: target.url.clone(),
                    waited: wait,
                });
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }
    Ok(())
}

/// The target's name and version, when it says: LiteLLM's `/health/readiness` carries
/// `litellm_version` when public details are allowed, its `/health/readiness/details` (with
/// the API key) always; otherwise the `server` header of the answer. (Its `/openapi.json` names
/// it too, but takes seconds of the proxy's CPU the first time: never asked.)
async fn identify(client: &Client) -> (Option<String>, Option<String>) {
    let root = &client.target.root;
    let mut server = None;
    for path in ["/health/readiness", "/health/readiness/details"] {
        let Some((status, headers, body)) = load::get(client, &format!("{root}{path}")).await
        else {
            continue;
        };
        if status == 200
            && let Ok(json) = serde_json::from_slice::<Value>(&body)
            && let Some(version) = json.get("litellm_version").and_then(Value::as_str)
        {
            return (Some("litellm".to_string()), Some(version.to_string()));
        }
        server = server.or_else(|| {
            headers
                .get(http::header::SERVER)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        });
    }
    match server.as_deref().and_then(|s| s.split_once('/')) {
        Some((name, version)) => (Some(name.to_string()), Some(version.to_string())),
        None => (server, None),
    }
}

fn write_report(
    scenario: &Scenario,
    options: &DriveOptions,
    observed: &Observed,
    calls: &[CallRow],
    dir: &Path,
) -> Result<Summary, DriveError> {
    let start = observed.start;
    let path = dir.join(LIVE_REQUESTS_CSV);
    let file = std::fs::File::create(&path).map_err(|e| file_error(&path, e))?;
    write_live_requests(std::io::BufWriter::new(file), &observed.records)
        .map_err(|e| file_error(&path, e))?;
    let (events, stats) =
        report::events(scenario, start, &observed.records, calls, observed.run_end);
    let recorder = Recorder::new(dir, start, RecorderOptions::default())?
        .with_plot_context(plot_context(scenario))
        .with_summary_context(routersim_sim::run::summary_context(scenario))?;
    for event in &events {
        routersim_engine::event::EventSink::emit(&recorder, event);
    }
    let end = events.last().map_or(start + observed.run_end, |e| {
        e.at.max(start + observed.run_end)
    });
    let mut summary = recorder.finish(RunMeta {
        scenario: scenario.name.clone(),
        seed: scenario.seed,
        version: VERSION.to_string(),
        end,
    })?;
    summary.source = Some("live".to_string());
    summary.live = Some(LiveInfo {
        // With replicas, every URL in the order requests were dealt to them.
        target: std::iter::once(options.target.as_str())
            .chain(options.replicas.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(","),
        target_name: observed.target_name.clone(),
        target_version: observed.target_version.clone(),
        providers: options
            .providers
            .clone()
            .unwrap_or_else(|| "in-process".to_string()),
        stopped_by: observed.stopped_by.to_string(),
        sent: observed.sent,
        unfinished: observed.sent - observed.records.len() as u64,
        provider_calls: calls.len() as u64,
        joined_by_request_id: stats.by_request_id,
        joined_by_time: stats.by_time,
        inferred_cooldowns: stats.cooldowns,
    });
    let path = dir.join(routersim_report::record::SUMMARY_JSON);
    let mut text = serde_json::to_string_pretty(&summary).map_err(|source| ReportError::Json {
        path: path.clone(),
        source,
    })?;
    text.push('\n');
    std::fs::write(&path, text).map_err(|e| file_error(&path, e))?;
    write_report_html(
        dir,
        &summary,
        &[],
        PageTitle {
            title: &scenario.name,
            description: &scenario.description,
        },
    )?;
    Ok(summary)
}
