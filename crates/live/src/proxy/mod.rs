//! `routersim proxy`: routersim's own engine served as an OpenAI-compatible router.
//!
//! The router config is a LiteLLM proxy config (or a routersim router file), loaded by the
//! engine's one loader with the usual key warnings. Every deployment is reached over HTTP at
//! its `litellm_params.api_base` by the engine's HTTP adapter (`HttpProvider<TcpConnector>`):
//! `routersim serve`'s fake providers, or real plain-HTTP ones. The engine runs on the real
//! clock (tokio's, not paused) in a current-thread runtime with a `LocalSet` (the adapter
//! spawns its connections with `spawn_local`), with the cooldown sweeper and health probes
//! beside the traffic, as in a simulated run. It serves until Ctrl-C or SIGTERM.
//!
//! Each chat request runs on a task of its own: a caller that hangs up does not cancel the
//! engine's request (dropping it mid-attempt would leave its in-flight count and cooldown
//! bookkeeping half done); it runs to its end and its answer is dropped.
//!
//! With `router_settings.redis_host` (or `redis_url`) the cooldowns and allowed-fails counters
//! live in Redis ([`shared_state`], `routersim_state_redis`), shared with every other replica
//! on the same Redis: each request first refreshes the store's memory tier from Redis (the
//! keys not cooling here and not read within the last second, as LiteLLM 1.110.2 reads).
//!
//! Each client is bounded as `serve`'s are (header and idle timeouts, a connection cap:
//! `routersim_mock_providers::wire::guard`).
//!
//! Concerns: [`frontend`] reads the caller's request, [`events`] routes a stream's engine
//! events to its response, [`render`] writes the answers, [`shared_state`] reads the Redis
//! settings and connects the store, [`report`] is what the stop lines say.

pub mod bench;
pub mod events;
pub mod frontend;
pub mod metrics;
pub mod render;
pub mod report;
pub mod shared_state;

use std::cell::Cell;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::Path;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use crate::redis::RedisState;
use http::{Method, Response, StatusCode};
use hyper::body::Incoming;
use routersim_config::ConfigError;
use routersim_config::load::load_router_config_file_with;
use routersim_engine::Router;
use routersim_engine::clock::{Clock, TokioClock};
use routersim_engine::config::RouterConfig;
use routersim_engine::request::CompletionResult;
use routersim_mock_providers::wire::guard::{BodyDeadline, read_body, serve_guarded};
use routersim_mock_providers::wire::{ConnGate, ConnLimits};
use routersim_wire::client::{HttpProvider, Pool, TcpConnector};
use routersim_wire::openai::server::Meta;
use serde_json::json;
use tokio::net::TcpListener;

use crate::serve::{bind, is_loopback};
use crate::stop::Stop;
use events::{StreamMsg, StreamRoutes};
use frontend::{ChatRequest, parse_chat};
use metrics::{METRICS_PATH, ProxySink, metrics_response};
use render::{ProxyBody, Tally, json_response, plain_error, result_response, stream_response};
pub use report::{ProxyReport, RedisReport};
use routersim_report::live_metrics::LiveMetrics;
use shared_state::{RedisTarget, connect_store};

/// The largest request body read (a bigger one is a 413).
pub const MAX_BODY_BYTES: usize = 32 * 1024 * 1024;

/// The first id given to a request without `x-routersim-request-id`: far above the ids a
/// drive sends, far below the engine's probe ids.
pub const FIRST_OWN_REQUEST_ID: u64 = 1 << 48;

/// How to serve.
#[derive(Clone, Debug)]
pub struct ProxyOptions {
    /// The listener's address (port 0: any free port).
    pub listen: SocketAddr,
    /// Allow a non-loopback address.
    pub allow_remote: bool,
    /// The wall clock's reading now, ms since the Unix epoch (the engine's clock starts there;
    /// the caller reads it: only the CLI reads the system clock).
    pub epoch_unix_ms: i64,
    /// Keep cooldowns and allowed-fails counters in this Redis (from `router_settings`).
    pub redis: Option<RedisTarget>,
    /// How long a read of that Redis before routing may take
    /// ([`READ_TIMEOUT`](crate::redis::READ_TIMEOUT) by default).
    pub redis_read_timeout: Duration,
    /// The bounds on each client.
    pub limits: ConnLimits,
}

/// Why the proxy could not serve.
#[derive(Debug, thiserror::Error)]
pub enum ProxyError {
    /// A non-loopback address without `allow_remote`.
    #[error(
        "--listen {0}: not a loopback address; a router built for chaos tests must not be \
         reachable by accident (add --allow-remote to serve it anyway)"
    )]
    Remote(SocketAddr),
    /// The router config.
    #[error("{}: {source}", .file.display())]
    Config {
        /// The config file.
        file: std::path::PathBuf,
        /// What is wrong.
        source: ConfigError,
    },
    /// Binding or the runtime failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The caller's ready hook failed.
    #[error("{0}")]
    Ready(String),
    /// The Redis of `router_settings` could not be reached.
    #[error("{0}")]
    Redis(String),
}

/// Loads a LiteLLM proxy config (or routersim router file) with the load options every
/// scenario's router is loaded with.
pub fn load_config(path: &Path) -> Result<RouterConfig, ProxyError> {
    let config_error = |source| ProxyError::Config {
        file: path.to_path_buf(),
        source,
    };
    let config = load_router_config_file_with(path, routersim_sim::scenario::router_load_options())
        .map_err(config_error)?;
    // Every `api_base` must be a URL the adapter can call: said now, naming the file, rather
    // than as an `api_connection` failure of every call.
    let provider = HttpProvider::new(TcpConnector, &config.deployments).map_err(config_error)?;
    for (i, endpoint) in provider.endpoints().iter().enumerate() {
        if endpoint.uri.scheme_str() != Some("http") {
            return Err(config_error(ConfigError {
                path: format!("model_list[{i}].litellm_params.api_base"),
                message: format!(
                    "{} is not a plain http:// URL: routersim proxy speaks HTTP/1.1 without TLS \
                     (a deployment without api_base goes to its provider's https default)",
                    endpoint.uri
                ),
                file: None,
                location: None,
            }));
        }
    }
    Ok(config)
}

/// The `litellm_params` the HTTP adapter reads: the loader lists them as not modelled (a
/// simulation never calls a URL), but the proxy uses them.
pub const ADAPTER_KEYS: &[&str] = &[
    "model_list[*].litellm_params.api_base",
    "model_list[*].litellm_params.api_key",
    "model_list[*].litellm_params.api_version",
];

/// What `proxy` prints about its config: [`config_lines`](routersim_sim::config_keys::config_lines)
/// without the keys the adapter and the shared state use.
pub fn config_lines(config: &RouterConfig) -> Vec<String> {
    let mut shown = config.clone();
    shown.ignored_keys.retain(|k| {
        !ADAPTER_KEYS.contains(&k.as_str()) && !shared_state::REDIS_KEYS.contains(&k.as_str())
    });
    routersim_sim::config_keys::config_lines(&shown)
}

/// The hook called once the listener is up, with its address and the model groups.
pub type Ready<'a> = dyn FnMut(SocketAddr, &[Arc<str>]) -> Result<(), String> + 'a;

type ProxyRouter = Router<HttpProvider<TcpConnector>, TokioClock>;

/// The proxy: the engine, its event routes, its counters.
pub struct ProxyServer {
    router: ProxyRouter,
    routes: Arc<StreamRoutes>,
    metrics: Arc<LiveMetrics>,
    next_id: Cell<u64>,
    requests: Cell<u64>,
    ok: Cell<u64>,
    /// Requests (and of them streams) in the engine now: cut if the proxy stops.
    in_flight: Cell<u64>,
    streams_in_flight: Cell<u64>,
    /// The router's state store when it is Redis (refreshed before each request).
    redis: Option<RedisState>,
}

impl ProxyServer {
    /// The engine for `config`, every deployment reached over TCP at its `api_base`, on tokio's
    /// clock with the wall clock at `epoch_unix_ms` now.
    pub fn new(config: RouterConfig, epoch_unix_ms: i64) -> Result<Self, ConfigError> {
        Self::with_state(config, epoch_unix_ms, None)
    }

    /// [`new`](Self::new), its cooldowns and allowed-fails counters in `redis` when given.
    pub fn with_state(
        config: RouterConfig,
        epoch_unix_ms: i64,
        redis: Option<RedisState>,
    ) -> Result<Self, ConfigError> {
        // Upstream connections kept alive per deployment (bounded: `routersim_wire::client::pool`).
        let pool = Pool::with_defaults(config.deployments.len(), tokio::time::Instant::now);
        let provider = HttpProvider::new(TcpConnector, &config.deployments)?.with_pool(pool);
        let routes = Arc::new(StreamRoutes::default());
        let metrics = Arc::new(LiveMetrics::new(&[]));
        let mut builder = Router::builder(config, provider)
            .clock(TokioClock::with_epoch(epoch_unix_ms))
            .sink(Arc::new(ProxySink {
                routes: routes.clone(),
                metrics: metrics.clone(),
            }));
        if let Some(store) = &redis {
            builder = builder.state_store(store.clone());
        }
        Ok(Self {
            router: builder.build(),
            routes,
            metrics,
            next_id: Cell::new(FIRST_OWN_REQUEST_ID),
            requests: Cell::new(0),
            ok: Cell::new(0),
            in_flight: Cell::new(0),
            streams_in_flight: Cell::new(0),
            redis,
        })
    }

    /// LiteLLM's pre-routing read: the cooldowns other replicas wrote, into the memory tier.
    async fn refresh_shared_state(&self) {
        if let Some(store) = &self.redis {
            store.refresh().await;
        }
    }

    /// The live counters `GET /metrics` renders.
    pub fn metrics(&self) -> &LiveMetrics {
        &self.metrics
    }

    /// The engine.
    pub fn router(&self) -> &ProxyRouter {
        &self.router
    }

    /// Model groups, in config order.
    pub fn model_groups(&self) -> Vec<Arc<str>> {
        let mut groups: Vec<Arc<str>> = Vec::new();
        for d in &self.router.config().deployments {
            if !groups.contains(&d.model_name) {
                groups.push(d.model_name.clone());
            }
        }
        groups
    }

    /// A fresh request id, not streaming now.
    fn fresh_id(&self) -> u64 {
        loop {
            let id = self.next_id.get();
            self.next_id.set(id.wrapping_add(1));
            if !self.routes.is_open(id) {
                return id;
            }
        }
    }

    /// Answers one request.
    async fn handle(
        self: Rc<Self>,
        req: http::Request<Incoming>,
    ) -> Result<Response<ProxyBody>, Infallible> {
        let path = req.uri().path().to_string();
        let method = req.method().clone();
        let path = path.trim_end_matches('/');
        let response = match (method.clone(), path) {
            (Method::POST, "/v1/chat/completions" | "/chat/completions") => self.chat(req).await,
            (Method::GET, "/v1/models" | "/models") => self.models(),
            (Method::GET, METRICS_PATH) => self.metrics_page(),
            (Method::GET, "/health/liveliness" | "/health/liveness") => json_response(
                StatusCode::OK,
                serde_json::to_vec(&json!("I'm alive!")).unwrap_or_default(),
            ),
            (_, p) => plain_error(
                StatusCode::NOT_FOUND,
                &format!(
                    "Unknown request URL: {method} {p}. routersim proxy serves POST \
                     /v1/chat/completions, GET /v1/models, GET /health/liveliness and GET /metrics."
                ),
                Some("unknown_url"),
            ),
        };
        let mut response = response;
        // Names the router, as `drive` reads it (`server: name/version`).
        response.headers_mut().insert(
            http::header::SERVER,
            http::HeaderValue::from_static(concat!("routersim/", env!("CARGO_PKG_VERSION"))),
        );
        Ok(response)
    }

    /// What the session did so far (the stop lines' numbers), `stopped_by` its reason.
    fn report(&self, stopped_by: &'static str) -> ProxyReport {
        let redis = self.redis.as_ref().map(|store| RedisReport {
            reads: store.reads(),
            writes: store.writes(),
            errors: store.errors(),
            skipped: store.skipped_writes(),
            degraded: store.degraded_time(),
            outages: store.outages(),
            still_degraded: store.is_degraded(),
        });
        ProxyReport {
            requests: self.requests.get(),
            ok: self.ok.get(),
            cut: self.in_flight.get(),
            cut_streams: self.streams_in_flight.get(),
            stopped_by,
            redis,
        }
    }

    /// `GET /metrics`: the engine's counters under `metrics.prom`'s names, then the proxy's
    /// own ([`ProxyReport::metrics_text`]: in flight, Redis) now.
    fn metrics_page(&self) -> Response<ProxyBody> {
        metrics_response(&self.metrics, &self.report("running").metrics_text())
    }

    fn models(&self) -> Response<ProxyBody> {
        let data: Vec<_> = self
            .model_groups()
            .iter()
            .map(|g| json!({"id": &**g, "object": "model", "created": 0, "owned_by": "routersim"}))
            .collect();
        json_response(
            StatusCode::OK,
            serde_json::to_vec(&json!({"object": "list", "data": data})).unwrap_or_default(),
        )
    }

    async fn chat(self: Rc<Self>, req: http::Request<Incoming>) -> Response<ProxyBody> {
        let (parts, body) = req.into_parts();
        let deadline = parts.extensions.get::<BodyDeadline>().copied();
        let body = match read_body(body, MAX_BODY_BYTES, deadline).await {
            Ok(body) => body,
            Err(e) => {
                let status = StatusCode::from_u16(e.status()).unwrap_or(StatusCode::BAD_REQUEST);
                return plain_error(status, &e.to_string(), None);
            }
        };
        let mut chat = match parse_chat(&body, &parts.headers, 0) {
            Ok(chat) => chat,
            Err(why) => return plain_error(StatusCode::BAD_REQUEST, &why, None),
        };
        // A hinted id is kept unless a stream with that id is open (its events would mix).
        if !chat.hinted_id || (chat.request.stream && self.routes.is_open(chat.request.id)) {
            chat.request.id = self.fresh_id();
        }
        let meta = Meta {
            id: format!("chatcmpl-routersim{}", chat.request.id),
            model: chat.model.clone(),
            created: self.router.clock().unix_millis().div_euclid(1000),
            input_tokens: chat.request.input_tokens,
        };
        self.refresh_shared_state().await;
        if chat.request.stream {
            self.stream(chat, meta).await
        } else {
            let (tx, rx) = tokio::sync::oneshot::channel();
            let server = self.clone();
            server.begin(false);
            tokio::task::spawn_local(async move {
                let result = server.router.completion(chat.request).await;
                server.count(&result, false);
                let _ = tx.send(result);
            });
            match rx.await {
                Ok(result) => result_response(&result, &meta),
                Err(_) => plain_error(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "routersim proxy is stopping",
                    None,
                ),
            }
        }
    }

    /// A request enters the engine.
    fn begin(&self, stream: bool) {
        self.in_flight.set(self.in_flight.get() + 1);
        if stream {
            self.streams_in_flight.set(self.streams_in_flight.get() + 1);
        }
    }

    /// A request leaves the engine with `result`.
    fn count(&self, result: &CompletionResult, stream: bool) {
        self.in_flight.set(self.in_flight.get().saturating_sub(1));
        if stream {
            self.streams_in_flight
                .set(self.streams_in_flight.get().saturating_sub(1));
        }
        self.requests.set(self.requests.get() + 1);
        if result.outcome.is_ok() {
            self.ok.set(self.ok.get() + 1);
        }
    }

    /// A streamed request: the headers leave with the first content the engine delivers (or
    /// with its end, when none comes), carrying the attempts so far.
    async fn stream(self: Rc<Self>, chat: ChatRequest, meta: Meta) -> Response<ProxyBody> {
        let id = chat.request.id;
        let Some((tx, mut rx)) = self.routes.open(id) else {
            return plain_error(
                StatusCode::CONFLICT,
                &format!("a stream with request id {id} is already open"),
                None,
            );
        };
        let server = self.clone();
        server.begin(true);
        tokio::task::spawn_local(async move {
            let result = server.router.completion(chat.request).await;
            server.routes.close(id);
            server.count(&result, true);
            let _ = tx.send(StreamMsg::End(Box::new(result)));
        });
        let mut tally = Tally::default();
        loop {
            let Some(msg) = rx.recv().await else {
                return plain_error(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "routersim proxy is stopping",
                    None,
                );
            };
            match msg {
                StreamMsg::Chunk { .. } => {
                    return stream_response(meta, chat.include_usage, &tally, id, msg, rx);
                }
                StreamMsg::End(result) => {
                    let tally = Tally::of(&result);
                    return match &result.outcome {
                        Ok(_) => stream_response(
                            meta,
                            chat.include_usage,
                            &tally,
                            id,
                            StreamMsg::End(result),
                            rx,
                        ),
                        Err(failure) => {
                            render::failure_response(failure, &result, &chat.model, &tally)
                        }
                    };
                }
                other => tally.hear(&other),
            }
        }
    }
}

/// Accepts connections forever, each on its own local task, bounded by `limits`.
async fn listen(server: Rc<ProxyServer>, listener: TcpListener, limits: ConnLimits) {
    ConnGate::new(limits.max_connections)
        .accept(listener, |stream| {
            let server = server.clone();
            serve_guarded(stream, limits, move |req| server.clone().handle(req))
        })
        .await;
}

/// Serves `config` until Ctrl-C or SIGTERM; `ready` is called with the bound address and the
/// model groups once the listener is up.
pub fn proxy(
    config: RouterConfig,
    options: &ProxyOptions,
    ready: &mut Ready<'_>,
) -> Result<ProxyReport, ProxyError> {
    if !options.allow_remote && !is_loopback(&options.listen) {
        return Err(ProxyError::Remote(options.listen));
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let local = tokio::task::LocalSet::new();
    let report = local.block_on(&runtime, run(config, options, ready))?;
    // In-flight requests are dropped with the local set.
    drop(local);
    Ok(report)
}

async fn run(
    config: RouterConfig,
    options: &ProxyOptions,
    ready: &mut Ready<'_>,
) -> Result<ProxyReport, ProxyError> {
    let file_less = |source| ProxyError::Config {
        file: "(config)".into(),
        source,
    };
    let redis = match &options.redis {
        Some(target) => {
            let ids = config
                .deployments
                .iter()
                .map(|d| d.id.to_string())
                .collect();
            let store = connect_store(target, ids, options.redis_read_timeout)
                .await
                .map_err(ProxyError::Redis)?;
            Some(store)
        }
        None => None,
    };
    let server =
        Rc::new(ProxyServer::with_state(config, options.epoch_unix_ms, redis).map_err(file_less)?);
    let stop = Stop::listen();
    let listener = bind(options.listen)?;
    let addr = listener.local_addr()?;
    ready(addr, &server.model_groups()).map_err(ProxyError::Ready)?;
    let tasks = [
        tokio::task::spawn_local(listen(server.clone(), listener, options.limits)),
        tokio::task::spawn_local({
            let server = server.clone();
            async move { server.router.run_cooldown_sweeper().await }
        }),
        tokio::task::spawn_local({
            let server = server.clone();
            async move { server.router.run_health_checks().await }
        }),
    ];
    stop.notified().await;
    let stopped_by = stop.name();
    for task in tasks {
        task.abort();
    }
    if let Some(store) = &server.redis {
        // The cooldowns set last are sent before the process ends (bounded: Redis may hang).
        let _ = tokio::time::timeout(Duration::from_secs(2), store.flush()).await;
    }
    Ok(server.report(stopped_by))
}
