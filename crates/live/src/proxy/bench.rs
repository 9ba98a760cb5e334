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
use crate::serve::load::{LoadFigures, Pair, closed_loop, median};
use crate::serve::thread_cpu::{CpuClock, ThreadCpu};

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
    /// CPU per non-streamed call on `connections` connections, each round's.
    pub json_cpu: Vec<CpuSplit>,
    /// CPU per SSE stream on `connections` connections, each round's.
    pub sse_cpu: Vec<CpuSplit>,
}

/// CPU µs per answered request of each thread, in a direct phase and in a proxied one
/// (`None` where the OS does not say). On a machine whose cores are all busy in both phases,
/// proxy/direct can be at most `direct total ÷ proxied total`: the cores' bound.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CpuSplit {
    /// The load generator, calling the provider.
    pub direct_load: Option<f64>,
    /// The provider, called directly.
    pub direct_provider: Option<f64>,
    /// The load generator, calling the proxy.
    pub proxied_load: Option<f64>,
    /// The provider, called by the proxy.
    pub proxied_provider: Option<f64>,
    /// The proxy.
    pub proxy: Option<f64>,
}

impl CpuSplit {
    /// CPU per request of the direct phase, every thread together.
    pub fn direct_total(&self) -> Option<f64> {
        Some(self.direct_load? + self.direct_provider?)
    }

    /// CPU per request of the proxied phase, every thread together.
    pub fn proxied_total(&self) -> Option<f64> {
        Some(self.proxied_load? + self.proxied_provider? + self.proxy?)
    }

    /// The highest proxy/direct the CPU allows when the cores are the limit.
    pub fn cores_bound(&self) -> Option<f64> {
        Some(self.direct_total()? / self.proxied_total()?.max(1e-9))
    }

    /// The median of each field over `splits` (a field unknown in any split stays unknown).
    pub fn median(splits: &[CpuSplit]) -> CpuSplit {
        let of = |field: fn(&CpuSplit) -> Option<f64>| -> Option<f64> {
            let values: Option<Vec<f64>> = splits.iter().map(field).collect();
            values.filter(|v| !v.is_empty()).map(|v| median(&v))
        };
        CpuSplit {
            direct_load: of(|s| s.direct_load),
            direct_provider: of(|s| s.direct_provider),
            proxied_load: of(|s| s.proxied_load),
            proxied_provider: of(|s| s.proxied_provider),
            proxy: of(|s| s.proxy),
        }
    }
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
    // The load generator (this thread), the provider and the proxy, in that order.
    let cpu = CpuClock::new(vec![ThreadCpu::current(), upstream.cpu, proxy.cpu]);
    let addrs = (upstream.addr, proxy.addr);
    let result = local.block_on(&runtime, rounds(addrs, &cpu, options));
    let stopped = proxy.stop().and(upstream.stop());
    let result = result?;
    stopped?;
    Ok(result)
}

async fn rounds(
    (direct, proxy): (SocketAddr, SocketAddr),
    cpu: &CpuClock,
    options: &ProxyBenchOptions,
) -> Result<ProxyBenchResult, ServeError> {
    let mut result = ProxyBenchResult::default();
    let phase = options.phase;
    let n = options.connections;
    for _ in 0..options.rounds {
        for stream in [false, true] {
            let (base, base_cpu) =
                measured(cpu, closed_loop(direct, DIRECT_PATH, stream, n, phase)).await?;
            let (via, via_cpu) =
                measured(cpu, closed_loop(proxy, PROXY_PATH, stream, n, phase)).await?;
            let split = CpuSplit {
                direct_load: base_cpu[0],
                direct_provider: base_cpu[1],
                proxied_load: via_cpu[0],
                proxied_provider: via_cpu[1],
                proxy: via_cpu[2],
            };
            let (pair, splits) = if stream {
                (&mut result.sse, &mut result.sse_cpu)
            } else {
                (&mut result.json, &mut result.json_cpu)
            };
            pair.base.push(base);
            pair.measured.push(via);
            splits.push(split);
        }
        let single = &mut result.single;
        single
            .base
            .push(closed_loop(direct, DIRECT_PATH, false, 1, phase).await?);
        single
            .measured
            .push(closed_loop(proxy, PROXY_PATH, false, 1, phase).await?);
    }
    Ok(result)
}

/// A phase's figures and each thread's CPU per request answered in it.
async fn measured(
    cpu: &CpuClock,
    phase: impl Future<Output = Result<LoadFigures, ServeError>>,
) -> Result<(LoadFigures, Vec<Option<f64>>), ServeError> {
    let before = cpu.read();
    let figures = phase.await?;
    let after = cpu.read();
    let per_request = CpuClock::per_request(&before, &after, figures.requests);
    Ok((figures, per_request))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(load: f64, provider: f64, proxy: Option<f64>) -> CpuSplit {
        CpuSplit {
            direct_load: Some(load),
            direct_provider: Some(provider),
            proxied_load: Some(load + 1.0),
            proxied_provider: Some(provider + 1.0),
            proxy,
        }
    }

    #[test]
    fn the_cores_bound_is_the_direct_cpu_over_the_proxied_cpu() {
        let s = split(7.0, 8.0, Some(23.0));
        assert_eq!(s.direct_total(), Some(15.0));
        assert_eq!(s.proxied_total(), Some(40.0));
        assert_eq!(s.cores_bound(), Some(0.375));
        assert_eq!(split(7.0, 8.0, None).cores_bound(), None);
    }

    #[test]
    fn medians_are_taken_field_by_field_and_an_unknown_stays_unknown() {
        let rounds = [
            split(9.0, 1.0, Some(30.0)),
            split(7.0, 3.0, Some(10.0)),
            split(8.0, 2.0, Some(20.0)),
        ];
        let m = CpuSplit::median(&rounds);
        assert_eq!(m, split(8.0, 2.0, Some(20.0)));
        let mut with_unknown = rounds.to_vec();
        with_unknown.push(split(1.0, 1.0, None));
        assert_eq!(CpuSplit::median(&with_unknown).proxy, None);
        assert_eq!(CpuSplit::median(&[]), CpuSplit::default());
    }
}
