//! `routersim bench --proxy`: what `routersim proxy` costs against calling the fake provider
//! directly, measured in one run so the ratio holds on a loaded machine.
//!
//! Two servers run on threads of their own: `routersim serve`'s wire server over one 0 ms
//! deployment (JSON and SSE, no faults), and the proxy's engine routing model `bench` to it.
//! One load generator ([`crate::serve::load`]) sends the same request bodies to each in
//! turn: `connections` keep-alive connections back to back for `phase` (JSON, then SSE), and
//! one connection for the latency the proxy adds (its p50 minus the direct p50). Each round
//! measures every pair; the figures printed are the medians of the rounds.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use routersim_engine::config::{Deployment, RouterConfig};
use routersim_mock_providers::ProviderSpec;
use routersim_mock_providers::wire::ConnLimits;
use routersim_wire::WireFormat;
use routersim_wire::endpoint::wire_server_api_base;

use super::{ProxyServer, listen};
use crate::serve::ServeError;
use crate::serve::bench::spawn_wire_server;
use crate::serve::bench_server::BenchServer;
use crate::serve::load::{Pair, closed_loop};

/// The fake provider's path on the wire server (called directly).
pub const DIRECT_PATH: &str = "/d/zero/v1/chat/completions";
/// The proxy's chat path.
pub const PROXY_PATH: &str = "/v1/chat/completions";

/// How hard and how long to push.
#[derive(Clone, Debug)]
pub struct ProxyBenchOptions {
    /// Keep-alive connections of the throughput phases.
    pub connections: usize,
    /// Length of each phase.
    pub phase: Duration,
    /// Rounds (each measures every pair once).
    pub rounds: usize,
}

impl Default for ProxyBenchOptions {
    fn default() -> Self {
        Self {
            connections: 64,
            phase: Duration::from_secs(1),
            rounds: 5,
        }
    }
}

/// What the benchmark measured (in each [`Pair`], `base` is the direct call, `measured` the
/// proxied one).
#[derive(Clone, Debug, Default)]
pub struct ProxyBenchResult {
    /// Non-streamed calls on `connections` connections.
    pub json: Pair,
    /// SSE streams on `connections` connections.
    pub sse: Pair,
    /// Non-streamed calls on one connection (the latency the proxy adds).
    pub single: Pair,
}

/// One 0 ms deployment, answering JSON and SSE (20 tokens, no pacing).
fn provider_config() -> (RouterConfig, BTreeMap<String, ProviderSpec>) {
    let config = RouterConfig {
        deployments: vec![Deployment {
            id: Arc::from("zero"),
            model_name: Arc::from("bench"),
            model: "openai/bench".into(),
            ..Deployment::default()
        }],
        ..RouterConfig::default()
    };
    let yaml = "{zero: {latency: 0ms, ttft: 0ms, inter_token: 0ms, output_tokens: 20}}";
    (config, serde_saphyr::from_str(yaml).unwrap_or_default())
}

/// The proxy's router: model `bench` → the wire server's `zero` deployment at `upstream`.
fn proxy_config(upstream: SocketAddr) -> RouterConfig {
    let mut deployment = Deployment {
        id: Arc::from("zero"),
        model_name: Arc::from("bench"),
        model: "openai/bench".into(),
        ..Deployment::default()
    };
    let base = wire_server_api_base(&format!("http://{upstream}"), "zero", WireFormat::OpenAi);
    deployment
        .params
        .insert("api_base".into(), serde_json::Value::String(base));
    RouterConfig {
        deployments: vec![deployment],
        ..RouterConfig::default()
    }
}

/// Starts the wire server and the proxy in front of it, runs the rounds, stops both.
pub fn run_proxy_bench(options: &ProxyBenchOptions) -> Result<ProxyBenchResult, ServeError> {
    let upstream = spawn_wire_server(provider_config)?;
    let proxy = BenchServer::spawn(move |listener| {
        // The engine's clock starts at the Unix epoch: a bench reads no wall clock.
        let server = ProxyServer::new(proxy_config(upstream.addr), 0)
            .map_err(|e| ServeError::Bench(format!("the proxy's config: {e}")))?;
        Ok(listen(Rc::new(server), listener, ConnLimits::default()))
    });
    let proxy = match proxy {
        Ok(proxy) => proxy,
        Err(e) => {
            let _ = upstream.stop();
            return Err(e);
        }
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let local = tokio::task::LocalSet::new();
    let result = local.block_on(&runtime, rounds(upstream.addr, proxy.addr, options));
    let stopped = proxy.stop().and(upstream.stop());
    let result = result?;
    stopped?;
    Ok(result)
}

async fn rounds(
    direct: SocketAddr,
    proxy: SocketAddr,
    options: &ProxyBenchOptions,
) -> Result<ProxyBenchResult, ServeError> {
    let mut result = ProxyBenchResult::default();
    let phase = options.phase;
    for _ in 0..options.rounds {
        for (pair, stream, connections) in [
            (&mut result.json, false, options.connections),
            (&mut result.sse, true, options.connections),
            (&mut result.single, false, 1),
        ] {
            pair.base
                .push(closed_loop(direct, DIRECT_PATH, stream, connections, phase).await?);
            pair.measured
                .push(closed_loop(proxy, PROXY_PATH, stream, connections, phase).await?);
        }
    }
    Ok(result)
}
