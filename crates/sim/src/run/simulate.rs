//! One simulated run: the fakes (in memory or behind the wire), the fleet of routers, the
//! arrivals sent at their virtual times, and the recorder finished into a summary.
//!
//! The arrival loop is the simulator's hot path: each arrival becomes one local task whose
//! state is one allocation (see [`spawn_request`]), and nothing else is held per request.

use std::path::Path;
use std::rc::Rc;
use std::sync::Arc;

use routersim_engine::event::{EventSink, RoutingEvent};
use routersim_engine::provider::Provider;
use routersim_engine::request::{ClientTry, CompletionResult, Request};
use routersim_mock_providers::provider::FakeProviders;
use routersim_mock_providers::wire::{CallLog, WireServer};
use routersim_report::record::{Recorder, RecorderOptions, RunMeta};
use routersim_report::summary::Summary;
use routersim_runtime::time::{now, sleep_until, yield_now};
use routersim_runtime::{JoinHandle, spawn_local, spawn_local_with};
use tokio::time::Instant;

use super::context::{plot_context, router_profile, summary_context};
use super::options::{Recording, Rendering, SinkFactory};
use super::outcome::RunError;
use super::tasks::{InFlight, TaskGuard};
use crate::facts::{FactsSink, RunFacts};
use crate::fleet::{Connection, Fleet, FleetInputs, FleetRouter};
use crate::scenario::Scenario;
use crate::traffic::{MAX_IN_FLIGHT, in_flight_exceeded};
use crate::transport::{self, Transport};
use crate::version::VERSION;

/// Runs `scenario` with `seed` on the current runtime, writing the recorder's files into
/// `out_dir`: the summary and what the run's events say.
pub(super) async fn simulate(
    scenario: &Scenario,
    seed: u64,
    out_dir: &Path,
    recording: Recording,
    extra_sink: Option<SinkFactory<'_>>,
) -> Result<(Summary, RunFacts), RunError> {
    let start = now();
    let trace = !recording.no_trace;
    let recorder = Recorder::new(out_dir, start, RecorderOptions { trace })?
        .with_router_profile(router_profile(scenario.router.settings.profile))
        .with_summary_context(summary_context(scenario))?;
    let recorder = match recording.rendering {
        Rendering::Full => recorder.with_plot_context(plot_context(scenario)),
        Rendering::DataOnly => recorder.without_plots(),
    };
    let mut recorder =
        recorder.with_replicas(u32::try_from(scenario.fleet.replicas).unwrap_or(u32::MAX))?;
    if recording.own_thread {
        recorder = recorder.on_own_thread();
    }
    let providers = FakeProviders::new(
        &scenario.router,
        &scenario.providers,
        &scenario.faults,
        seed,
        scenario.epoch_unix_ms,
        start,
    )
    .map_err(|source| RunError::Providers {
        file: scenario.file.clone(),
        source,
    })?;
    let run = Simulation {
        scenario,
        seed,
        start,
        extra_sink,
        settle: 0,
    };
    match scenario.transport {
        Transport::Memory => run.drive(Arc::new(recorder), providers).await,
        Transport::Http => {
            // The same fakes, behind the wire server, reached through the engine's HTTP
            // adapter over in-memory pipes (see `crate::transport`).
            let server = WireServer::new(
                Rc::new(providers),
                scenario.router.deployments.clone(),
                CallLog::disabled(),
                start,
                scenario.epoch_unix_ms,
            );
            let provider = transport::http_provider(Rc::new(server), &scenario.router.deployments)
                .map_err(|e| RunError::Transport {
                    file: scenario.file.clone(),
                    message: e.to_string(),
                })?;
            let recorder = recorder.with_transport(Transport::Http.as_str());
            let run = Simulation {
                settle: transport::SETTLE_YIELDS,
                ..run
            };
            run.drive(Arc::new(recorder), provider).await
        }
    }
}

/// One run's fixed inputs; [`Simulation::drive`] runs it over any provider.
struct Simulation<'a> {
    scenario: &'a Scenario,
    seed: u64,
    start: Instant,
    extra_sink: Option<SinkFactory<'a>>,
    /// Times the arrival loop yields before starting each request (see
    /// [`transport::SETTLE_YIELDS`]); 0 in memory.
    settle: usize,
}

impl Simulation<'_> {
    /// Runs the traffic through a router over `provider` to the end and finishes the report.
    async fn drive<P: Provider + 'static>(
        self,
        recorder: Arc<Recorder>,
        provider: P,
    ) -> Result<(Summary, RunFacts), RunError> {
        let sink = Arc::new(FactsSink::new(recorder.clone()));
        let mut fleet = self.build_fleet(&recorder, &sink, provider);
        let background = spawn_background(&fleet);
        let in_flight = Rc::new(InFlight::default());
        self.send_arrivals(&mut fleet, &in_flight).await?;
        in_flight.all_done().await;
        if in_flight.abandoned() > 0 {
            // The task's panic message was printed when it happened; a report without its
            // request would lie.
            return Err(RunError::TaskPanicked(in_flight.abandoned()));
        }
        let end = now();
        for task in background {
            task.cancel().await;
        }
        drop(fleet);
        let facts = sink.facts();
        drop(sink);
        let recorder = sole_recorder(recorder)?;
        let summary = recorder.finish(RunMeta {
            scenario: self.scenario.name.clone(),
            seed: self.seed,
            version: VERSION.to_string(),
            end,
        })?;
        Ok((summary, facts))
    }

    /// Every replica's router over `provider`; their events go to `sink` (and to the extra
    /// sink, when the caller gave one).
    fn build_fleet<P: Provider + 'static>(
        &self,
        recorder: &Arc<Recorder>,
        sink: &Arc<FactsSink<Recorder>>,
        provider: P,
    ) -> Fleet<P> {
        let scenario = self.scenario;
        let sink_for = |replica: usize| -> Arc<dyn EventSink + Send + Sync> {
            match self.extra_sink {
                Some(extra) => Arc::new(Tee(sink.clone(), extra(self.start, replica))),
                None => sink.clone(),
            }
        };
        Fleet::build(
            FleetInputs {
                config: &scenario.router,
                fleet: &scenario.fleet,
                seed: self.seed,
                epoch_unix_ms: scenario.epoch_unix_ms,
                start: self.start,
                recorder,
                sink: &sink_for,
            },
            provider,
        )
    }

    /// Starts a request task for each arrival at its virtual time, at the replica the
    /// balancer picks. Stops at the in-flight limit, or when a traffic file changed since it
    /// was validated (no report of part of the traffic).
    async fn send_arrivals<P: Provider + 'static>(
        &self,
        fleet: &mut Fleet<P>,
        in_flight: &Rc<InFlight>,
    ) -> Result<(), RunError> {
        let mut arrivals = self.scenario.arrivals_with_seed(self.seed);
        for arrival in arrivals.by_ref() {
            sleep_until(self.start + arrival.at).await;
            if in_flight.running() as u64 >= MAX_IN_FLIGHT {
                return Err(RunError::InFlight {
                    file: self.scenario.file.clone(),
                    message: in_flight_exceeded(&arrival),
                });
            }
            for _ in 0..self.settle {
                yield_now().await;
            }
            let ((router, connection), task) = (fleet.pick(), InFlight::enter(in_flight));
            let request = self.first_send(arrival.request);
            spawn_request(router, connection, task, request);
        }
        match arrivals.take_error() {
            Some(e) => Err(e.into()),
            None => Ok(()),
        }
    }

    /// The request as the client sends it first: with `client_retries`, it says which send
    /// it is, and the client may send it again.
    fn first_send(&self, mut request: Request) -> Request {
        let client_retries = self.scenario.client_retries;
        if client_retries > 0 {
            request.client = Some(ClientTry {
                retries: client_retries,
                ..ClientTry::default()
            });
        }
        request
    }
}

/// Each router's cooldown sweeper and health checks, running beside the traffic until the
/// run cancels them.
fn spawn_background<P: Provider + 'static>(fleet: &Fleet<P>) -> Vec<JoinHandle<()>> {
    let mut background = Vec::with_capacity(2 * fleet.routers.len());
    for router in &fleet.routers {
        background.push(spawn_local({
            let router = router.clone();
            async move { router.run_cooldown_sweeper().await }
        }));
        background.push(spawn_local({
            let router = router.clone();
            async move { router.run_health_checks().await }
        }));
    }
    background
}

/// One request's task: the client's sends of it through `router`, then counted out of the
/// replica (`connection`) and of the run (`task`).
fn spawn_request<P: Provider + 'static>(
    router: Rc<FleetRouter<P>>,
    connection: Connection,
    task: TaskGuard,
    mut request: Request,
) {
    let serve = move || async move {
        // By reference: the task holds the only copy of the request while it is in
        // flight.
        // Only a failure's provider calls outlive the result (the task stays small).
        let failed_calls = |r: CompletionResult| r.outcome.is_err().then_some(r.attempts.len());
        let mut failed = failed_calls(router.completion_of(&request).await);
        // `client_retries`: the client sends a failed request again at once, same id.
        while let Some(calls) = failed
            && let Some(client) = request.client.as_mut()
            && client.try_number < client.retries
        {
            client.try_number += 1;
            client.provider_calls_before += calls as u32;
            failed = failed_calls(router.completion_of(&request).await);
        }
        drop(connection);
        task.finished();
    };
    if routersim_runtime::is_virtual() {
        // The virtual executor's task is one allocation of the future's own size, the future
        // made in it (moving a made future copies all of its size, every time).
        drop(spawn_local_with(serve));
    } else {
        // Boxed on tokio: its task cell is aligned to 128 bytes, so it then holds only
        // a pointer and the request's state is one allocation of its own size.
        drop(spawn_local(Box::pin(serve())));
    }
}

/// The recorder once every other holder (router, sinks, tasks) has let go of it.
fn sole_recorder(recorder: Arc<Recorder>) -> Result<Recorder, RunError> {
    Arc::try_unwrap(recorder).map_err(|_| RunError::RecorderShared)
}

/// Sends each event to the recorder, then to an extra sink.
struct Tee(Arc<FactsSink<Recorder>>, Arc<dyn EventSink + Send + Sync>);

impl EventSink for Tee {
    fn emit(&self, event: &RoutingEvent) {
        self.0.emit(event);
        self.1.emit(event);
    }
}

#[cfg(test)]
#[allow(
    clippy::disallowed_methods,
    reason = "the test builds a recorder on the wall clock directly"
)]
mod tests {
    use super::*;

    #[test]
    fn a_recorder_still_shared_says_so_not_histogram() -> Result<(), Box<dyn std::error::Error>> {
        let dir = std::env::temp_dir().join(format!("routersim-shared-{}", std::process::id()));
        let recorder = Arc::new(Recorder::new(
            &dir,
            Instant::now(),
            RecorderOptions::default(),
        )?);
        let _other = recorder.clone();
        let message = sole_recorder(recorder).err().map(|e| e.to_string());
        std::fs::remove_dir_all(&dir)?;
        let message = message.ok_or("a shared recorder was taken")?;
        assert!(message.contains("still shared"), "{message}");
        assert!(!message.contains("histogram"), "{message}");
        Ok(())
    }
}
