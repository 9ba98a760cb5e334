//! One clock for `serve` and the traffic: the fault timeline starts at the first connection
//! (t = 0 is when traffic starts, not when the server came up: a router may take 20 s to
//! start), and the server outlives that first client.
//!
//! `routersim drive --providers URL` connects to the server at its own t = 0 and holds that
//! connection open until its last request is done, so the two timelines start together and
//! `serve` never stops while drive is still sending. Any other first client (curl, a router's
//! pooled connection) starts the timeline the same way; the server then waits, past the
//! scenario's duration, until that connection closes, at most [`OUTLIVE_AT_MOST`].
//!
//! Drive's clock connection sends nothing, so it is held, not served: the header timeout that
//! cuts a silent client would end the shared clock. A first client that sends a byte is an
//! ordinary client, served under the same [`ConnLimits`] as every other. A connection that
//! opens with `GET /metrics` before any traffic is a scrape, not a first client
//! ([`super::early_scrape`]).

use std::future::poll_fn;
use std::rc::Rc;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use routersim_mock_providers::wire::{CallLog, ConnLimits, Mount, WireServer, serve_client};
use routersim_sim::scenario::Scenario;
use tokio::sync::OwnedSemaphorePermit;

use routersim_report::provider_metrics::ProviderCallMetrics;
use tokio::time::Instant;

use super::early_scrape::{answer_scrapes, is_scrape};
use super::{Bound, ServeError, start_serving_from};
use crate::stop::Stop;

/// The longest the server waits, after the scenario's duration, for its first client to close.
pub const OUTLIVE_AT_MOST: Duration = Duration::from_secs(300);

/// Waits for the first connection on any of `bound`'s listeners (or a signal), starts the
/// fault timeline then, serves until `duration` has passed since, then until the first client
/// closes its connection ([`OUTLIVE_AT_MOST`] at most); Ctrl-C or SIGTERM stop it at any
/// point. Every client is served under `limits`. Returns the server and why it stopped.
pub(super) async fn serve_from_first_connection(
    scenario: &Scenario,
    bound: Bound,
    log: CallLog,
    limits: ConnLimits,
    duration: Duration,
    stop: &Stop,
) -> Result<(Rc<WireServer>, &'static str), ServeError> {
    let metrics = log.shared_metrics();
    let first = tokio::select! {
        biased;
        () = stop.notified() => Err(stop.name()),
        first = first_traffic(&bound, &metrics) => Ok(first),
    };
    let start = first.as_ref().map_or_else(|_| Instant::now(), |f| f.2);
    let running = start_serving_from(scenario, bound, log, limits, start)?;
    let (stream, mount) = match first {
        Ok((stream, mount, _)) => (stream, mount),
        Err(signal) => return Ok((running.stop(), signal)),
    };
    // Its permit is taken before any other listener accepts: the cap counts it.
    let permit = running.gate.try_admit();
    let mut first_client = tokio::task::spawn_local(first_client(
        running.server.clone(),
        stream,
        mount,
        limits,
        permit,
    ));
    let stopped_by = tokio::select! {
        biased;
        () = stop.notified() => stop.name(),
        () = tokio::time::sleep_until(running.start + duration) => "duration",
    };
    if stopped_by == "duration" {
        let outlived = tokio::select! {
            biased;
            () = stop.notified() => stop.name(),
            _ = &mut first_client => "duration",
            () = tokio::time::sleep(OUTLIVE_AT_MOST) => "duration",
        };
        return Ok((running.stop(), outlived));
    }
    Ok((running.stop(), stopped_by))
}

/// The first client until it closes: held while it sends nothing (drive's clock connection),
/// served under `limits` once it sends a byte.
async fn first_client(
    server: Rc<WireServer>,
    stream: tokio::net::TcpStream,
    mount: Mount,
    limits: ConnLimits,
    permit: Option<OwnedSemaphorePermit>,
) {
    let mut byte = [0_u8; 1];
    if let Ok(1..) = stream.peek(&mut byte).await {
        serve_client(server, stream, mount, limits).await;
    }
    drop(permit);
}

/// The first connection that is not a scrape of the shared listener's `/metrics`
/// ([`super::early_scrape`]: those are answered aside), where, and when it was accepted.
async fn first_traffic(
    bound: &Bound,
    metrics: &Arc<ProviderCallMetrics>,
) -> (tokio::net::TcpStream, Mount, Instant) {
    loop {
        let (stream, mount) = first_accept(bound).await;
        let accepted = Instant::now();
        if mount == Mount::Shared && is_scrape(&stream).await {
            tokio::task::spawn_local(answer_scrapes(stream, metrics.clone()));
            continue;
        }
        return (stream, mount, accepted);
    }
}

/// The first connection accepted on any listener, and where (a failed accept, out of file
/// descriptors, is retried after 10 ms, as [`routersim_mock_providers::wire::listen`] does).
#[allow(
    clippy::disallowed_methods,
    reason = "a real listener: only ever on tokio's real-time runtime, never simulated"
)]
async fn first_accept(bound: &Bound) -> (tokio::net::TcpStream, Mount) {
    loop {
        if let Some(first) = try_accept(bound).await {
            return first;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn try_accept(bound: &Bound) -> Option<(tokio::net::TcpStream, Mount)> {
    poll_fn(|cx| {
        if let Poll::Ready(accepted) = bound.shared.poll_accept(cx) {
            return Poll::Ready(accepted.ok().map(|(s, _)| (s, Mount::Shared)));
        }
        for (i, listener) in bound.own.iter().enumerate() {
            if let Poll::Ready(accepted) = listener.poll_accept(cx) {
                return Poll::Ready(accepted.ok().map(|(s, _)| (s, Mount::Deployment(i))));
            }
        }
        Poll::Pending
    })
    .await
    .map(|(stream, mount)| {
        let _ = stream.set_nodelay(true);
        (stream, mount)
    })
}
