//! The run itself: the providers bound, the router waited for and checked, the clock started,
//! the arrivals sent in real time, the drain; what was seen, for the report.

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::rc::Rc;
use std::time::{Duration, SystemTime};

use routersim_mock_providers::wire::WireServer;
use tokio::time::Instant;

use super::error::DriveError;
use super::load::{self, Client, Counters, RateGuard, Target};
use super::metrics::{DriveMetrics, METRICS_PATH, serve_metrics};
use super::options::DriveOptions;
use super::providers;
use super::record::{RequestRecord, Unfinished};
use super::target::{check_routes, hold_providers_clock, identify, wait_for};
use crate::serve::Endpoints;
use crate::stop::Stop;
use routersim_sim::scenario::Scenario;

/// What the generator observed.
pub struct Observed {
    /// The run's t = 0.
    pub start: Instant,
    /// The same instant on the wall clock.
    pub started_at: SystemTime,
    /// Every request answered, in arrival order.
    pub records: Vec<RequestRecord>,
    /// Every request sent but not answered when the run ended.
    pub unfinished: Vec<Unfinished>,
    /// Requests sent.
    pub sent: u64,
    /// Why sending stopped.
    pub stopped_by: &'static str,
    /// t = 0 to the end of the drain.
    pub run_end: Duration,
    /// The router's name, when it said.
    pub target_name: Option<String>,
    /// Its version.
    pub target_version: Option<String>,
    /// A warning from the check of the router's deployments.
    pub routes_warning: Option<String>,
    /// The in-process providers.
    pub server: Option<Rc<WireServer>>,
    /// Requests never sent (the OS refused a socket), and the first refusal.
    pub not_sent: u64,
    /// What the OS said the first time it refused a socket.
    pub refusal: Option<String>,
    /// What drive's connection pool saw.
    pub pool: super::pool::PoolStats,
}

/// Runs the traffic. Ctrl-C or SIGTERM before the first request is sent is
/// [`DriveError::Interrupted`]: nothing was sent, so nothing is reported.
pub async fn observe(
    scenario: &Scenario,
    options: &DriveOptions,
    client: Rc<Client>,
    dir: &Path,
    ready: &mut dyn FnMut(&Endpoints) -> Result<Vec<super::header::ExtraHeader>, String>,
) -> Result<Observed, DriveError> {
    let signal = Stop::listen();
    let (counters, metrics_task) = counters_and_metrics(options).await?;
    let providers = bind_providers(scenario, options, &client, dir, ready)?;
    let interrupted = |signal: &'static str| DriveError::Interrupted {
        signal,
        out: options
            .out
            .clone()
            .unwrap_or_else(|| super::options::default_out_dir(scenario)),
    };
    if let Some(wait) = options.wait_for_target {
        tokio::select! {
            biased;
            () = signal.notified() => return Err(interrupted(signal.name())),
            ready = wait_for(&client, wait) => ready?,
        }
    }
    let here = providers.as_ref().map(|p| p.endpoints().addr);
    let routes_warning = tokio::select! {
        biased;
        () = signal.notified() => return Err(interrupted(signal.name())),
        checked = check_routes(&client, scenario, here) => checked?,
    };
    // With a running `serve`, this connection starts its fault timeline with the traffic and
    // keeps it serving until the last request is done.
    let held = match &options.providers {
        Some(url) => {
            Some(hold_providers_clock(&Target::parse(url).map_err(DriveError::Url)?).await?)
        }
        None => None,
    };
    let running = match providers {
        Some(p) => Some(p.start(scenario)?),
        None => None,
    };
    let started_at = SystemTime::now();
    // Asked beside the traffic (a router may take its time), read at the end.
    let identity = tokio::task::spawn_local({
        let client = client.clone();
        async move { identify(&client).await }
    });
    let start = running.as_ref().map_or_else(Instant::now, |r| r.start);
    let progress = (options.progress && std::io::stderr().is_terminal()).then(|| {
        tokio::task::spawn_local(show_progress(counters.clone(), start, scenario.duration))
    });
    let (sent, stopped_by) = generate(scenario, options, &client, start, &counters, &signal).await;
    if sent == 0
        && let Some(signal) = signal.came()
    {
        return Err(interrupted(signal));
    }
    drain(options, &counters, &signal, stopped_by).await;
    if let Some(task) = progress {
        task.abort();
        eprintln!();
    }
    // After a signal, a router slow to say its name does not hold the report up.
    if signal.came().is_some() && !identity.is_finished() {
        identity.abort();
    }
    let (target_name, target_version) = identity.await.unwrap_or((None, None));
    metrics_task.iter().for_each(tokio::task::JoinHandle::abort);
    let run_end = start.elapsed();
    drop(held);
    let records = std::mem::take(&mut *counters.records.borrow_mut());
    let slots = std::mem::take(&mut *counters.slots.borrow_mut());
    let (not_sent, refusal) = std::mem::take(&mut *counters.not_sent.borrow_mut());
    let unfinished = records
        .iter()
        .zip(&slots)
        .enumerate()
        .filter(|(i, (r, _))| r.is_none() && !not_sent.contains(i))
        .map(|(_, (_, slot))| *slot)
        .collect();
    Ok(Observed {
        start,
        started_at,
        records: records.into_iter().flatten().collect(),
        unfinished,
        sent: sent.saturating_sub(not_sent.len() as u64),
        stopped_by,
        run_end,
        target_name,
        target_version,
        routes_warning,
        server: running.map(crate::serve::Running::stop),
        not_sent: not_sent.len() as u64,
        refusal: refusal.map(|r| r.why),
        pool: client.pool.stats(),
    })
}

/// The in-process providers, listening (none with `--providers`); `ready`'s headers join the
/// client's.
fn bind_providers(
    scenario: &Scenario,
    options: &DriveOptions,
    client: &Client,
    dir: &Path,
    ready: &mut dyn FnMut(&Endpoints) -> Result<Vec<super::header::ExtraHeader>, String>,
) -> Result<Option<providers::Providers>, DriveError> {
    if options.providers.is_some() {
        return Ok(None);
    }
    let providers = providers::Providers::bind(scenario, dir)?;
    let headers = ready(providers.endpoints()).map_err(DriveError::Ready)?;
    client.headers.borrow_mut().extend(headers);
    Ok(Some(providers))
}

/// Waits for the requests in flight: after a signal a second at most; otherwise the drain
/// timeout, which a signal cuts short.
async fn drain(options: &DriveOptions, counters: &Counters, signal: &Stop, stopped_by: &str) {
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
        // An arrival already due is sent at once: a timer would hold it to the next
        // millisecond tick, and at thousands a second the generator would fall behind.
        if at > Instant::now() {
            tokio::select! {
                biased;
                () = signal.notified() => return (sent, signal.name()),
                () = tokio::time::sleep_until(at) => {}
            }
        } else if let Some(name) = signal.came() {
            return (sent, name);
        } else if sent % 64 == 63 {
            // Behind schedule: let the requests in flight read their answers now and then.
            tokio::task::yield_now().await;
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
        counters.slots.borrow_mut().push(Unfinished {
            id: arrival.request.id,
            arrival: at.saturating_duration_since(start),
        });
        let (client, counters) = (client.clone(), counters.clone());
        tokio::task::spawn_local(async move {
            let record = match load::request(client, replica, arrival.request, start, at).await {
                Ok(record) => record,
                Err(not_sent) => {
                    counters.refused(slot, not_sent);
                    counters.in_flight.set(counters.in_flight.get() - 1);
                    counters.done.notify_one();
                    return;
                }
            };
            if record.failure().is_some() {
                counters.failed.set(counters.failed.get() + 1);
            }
            if let Some(metrics) = &counters.metrics {
                metrics.record(&record);
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

/// The run's counters and, with `--metrics-addr`, the task answering its scrapes (from now,
/// all 0 while the router is awaited, until the drain ends); the address is said on stderr,
/// with the port a `:0` got.
async fn counters_and_metrics(
    options: &DriveOptions,
) -> Result<(Rc<Counters>, Option<tokio::task::JoinHandle<()>>), DriveError> {
    let Some(addr) = options.metrics_addr else {
        return Ok((Rc::new(Counters::default()), None));
    };
    let listener = tokio::net::TcpListener::bind(addr).await.map_err(|e| {
        DriveError::Io(std::io::Error::new(
            e.kind(),
            format!("--metrics-addr {addr}: {e}"),
        ))
    })?;
    eprintln!("metrics on http://{}{METRICS_PATH}", listener.local_addr()?);
    let metrics = Rc::new(DriveMetrics::default());
    let counters = Rc::new(Counters {
        metrics: Some(metrics.clone()),
        ..Counters::default()
    });
    let task = tokio::task::spawn_local(serve_metrics(listener, metrics, counters.clone()));
    Ok((counters, Some(task)))
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
