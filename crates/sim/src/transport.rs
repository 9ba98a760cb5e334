//! `transport: memory | http`: how the router reaches the fake providers in a simulated run.
//!
//! `memory` (the default) hands the engine
//! [`FakeProviders`](routersim_mock_providers::FakeProviders) itself. `http` puts the wire in
//! between: the engine's [`HttpProvider`] sends every attempt as a real HTTP/1.1 request, and
//! routersim's fake-provider server ([`WireServer`], the one `routersim serve` runs) answers
//! it from the same `FakeProviders`, over an in-memory pipe ([`DuplexConnector`]). Nothing
//! leaves the process and the clock stays paused, so an `http` run is as deterministic as a
//! `memory` run — and, because both ends follow the wire contract (the `x_routersim`
//! extension carries what the real APIs cannot: exact token counts, chunk spans and kinds,
//! status overrides), it gives the same attempts, kinds, statuses, Retry-Afters, tokens and
//! timings (but for the order of work inside one virtual millisecond: see [`SETTLE_YIELDS`] and
//! the README). What it adds is coverage: every CI run exercises the wire formats and the
//! adapter.

use std::fmt;
use std::rc::Rc;

use http::Uri;
use routersim_config::ConfigError;
use routersim_engine::config::Deployment;
use routersim_mock_providers::wire::{WireServer, serve_connection};
use routersim_wire::client::{Connector, HttpProvider};
use serde::Deserialize;
use tokio::io::DuplexStream;

/// The origin every deployment's `api_base` is rewritten to in an `http` run: never
/// resolved ([`DuplexConnector`] ignores the host), and `.invalid` so it never could be.
pub const SIMULATED_ORIGIN: &str = "http://routersim.invalid";

/// Bytes each direction of a connection's pipe buffers (a full pipe makes the writer wait,
/// as a socket would).
pub const PIPE_BYTES: usize = 64 * 1024;

/// Yields of the arrival loop before it starts a request in an `http` run.
///
/// In memory, a provider's answer reaches its request task in the poll its timer wakes, so
/// whatever answers arrive at a virtual instant are handled (a fallback picked, a retry
/// started) before a request arriving at that instant starts: the arrival loop is polled
/// first and its new task queues behind them. Over the wire the same answer takes a few task
/// hops at the same instant (server task, client connection task, request task); the arrival
/// loop yields first — each yield lets a `LocalSet` tick of up to 61 tasks run — so the hops
/// finish first and the router's and the fakes' seeded draws happen in the same order.
pub const SETTLE_YIELDS: usize = 8;

/// How a run's router reaches its fake providers (`transport:`, `routersim run --transport`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Transport {
    /// The engine calls the fake providers directly.
    #[default]
    Memory,
    /// Through the engine's HTTP adapter and the wire server, over in-memory pipes.
    Http,
}

impl Transport {
    /// The name used in scenarios, flags and `summary.json`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Memory => "memory",
            Self::Http => "http",
        }
    }
}

impl fmt::Display for Transport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Transport {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "memory" => Ok(Self::Memory),
            "http" => Ok(Self::Http),
            _ => Err(format!("expected `memory` or `http`, found {text:?}")),
        }
    }
}

impl<'de> Deserialize<'de> for Transport {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // A string first, so a list or a map says "expected a string", not serde's enum jargon.
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// A [`Connector`] that serves each connection itself: `connect` makes a
/// `tokio::io::duplex` pipe, spawns the wire server on one half (a local task, like every
/// connection of `routersim serve`) and returns the other. Call it inside a `LocalSet`.
#[derive(Clone, Debug)]
pub struct DuplexConnector {
    server: Rc<WireServer>,
}

impl DuplexConnector {
    /// A connector to `server`.
    pub fn new(server: Rc<WireServer>) -> Self {
        Self { server }
    }

    /// The server it connects to.
    pub fn server(&self) -> &WireServer {
        &self.server
    }
}

impl Connector for DuplexConnector {
    type Io = DuplexStream;

    async fn connect(&self, _deployment_index: usize, _uri: &Uri) -> std::io::Result<DuplexStream> {
        let (client, server_half) = tokio::io::duplex(PIPE_BYTES);
        let server = self.server.clone();
        routersim_runtime::spawn_local(async move {
            // A failed connection is the client's to see (a stream break is an aborted body
            // on purpose); nothing to do here.
            let _ = serve_connection(server, server_half).await;
        });
        Ok(client)
    }

    fn spawn_connection(&self, task: impl Future<Output = ()> + 'static) {
        drop(routersim_runtime::spawn_local(task));
    }
}

/// The engine's HTTP provider for `deployments` (the router's, in its order), served by
/// `server` over in-memory pipes.
pub fn http_provider(
    server: Rc<WireServer>,
    deployments: &[Deployment],
) -> Result<HttpProvider<DuplexConnector>, ConfigError> {
    HttpProvider::for_wire_server(DuplexConnector::new(server), deployments, SIMULATED_ORIGIN)
}
