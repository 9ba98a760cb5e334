//! The HTTP provider adapter: a [`Provider`] that sends each attempt as a real HTTP request
//! to an OpenAI-, Anthropic- or Azure-shaped endpoint and classifies the real response.
//!
//! Issue 11: *"A `Provider` implementation that sends the engine's attempts as real HTTP
//! requests (hyper client) […] and classifies the real response: status, error body, headers,
//! SSE frames and breaks — into the same failure kinds the engine already uses."* The wire
//! rules both ends follow are in `WIRE_CONTRACT.md` (issue 11); in short:
//! - [`format`]: the model prefix picks the format (`anthropic/`, `azure/`, else OpenAI);
//!   `litellm_params.api_base` gives the base URL (defaults: [`crate::endpoint::DEFAULT_OPENAI_API_BASE`],
//!   [`crate::endpoint::DEFAULT_ANTHROPIC_API_BASE`]; Azure has none and must name one); `api_key` goes
//!   in `Authorization: Bearer` / `x-api-key` / `api-key`. Each request also carries
//!   `x-routersim-*` hints (request id, attempt, input/prefill/output tokens): harmless headers
//!   a real provider ignores, which let the fake-provider server replay the exact call.
//! - [`errors`]: a non-2xx response → [`ProviderFailure`] (body code, then LiteLLM's string
//!   rules, then the status; `retry-after-ms` / `retry-after`).
//! - [`stream`]: a streamed 2xx → [`HttpStream`], parsed incrementally ([`sse`]).
//!
//! One HTTP/1.1 connection per call (`hyper::client::conn::http1`) by default: no state
//! shared between attempts, as the router's "one call per attempt, never retried below the
//! router" rule wants. [`HttpProvider::with_pool`] keeps connections alive per deployment
//! instead ([`pool`]: bounded, only whole answers hand a connection back, and a request is
//! resent only when a reused connection closed before its first byte went out). The provider
//! sets no timeout of its own: the router's deadlines drop the call's future, which drops
//! the connection.
//!
//! **Runtime requirement:** each call spawns its connection task with
//! [`tokio::task::spawn_local`] (so the IO need not be `Send`, e.g. an in-memory duplex under
//! the simulator), so calls must run inside a [`tokio::task::LocalSet`] (or a `LocalRuntime`);
//! the simulator's current-thread runtime runs in one. Outside one, `spawn_local` panics.
//!
//! ```no_run
//! # async fn demo(config: routersim_engine::config::RouterConfig) -> Result<(), routersim_config::ConfigError> {
//! use routersim_engine::Router;
//! use routersim_wire::client::{HttpProvider, TcpConnector};
//!
//! let provider = HttpProvider::new(TcpConnector, &config.deployments)?;
//! let router = Router::from_config(config, provider);
//! tokio::task::LocalSet::new()
//!     .run_until(router.completion(routersim_engine::request::Request::new(1, "gpt-4o")))
//!     .await;
//! # Ok(()) }
//! ```

pub mod connector;
pub mod pool;
pub mod stream;

use std::borrow::Cow;

use bytes::Bytes;
use http_body_util::BodyExt;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::client::conn::http1;
use hyper_util::rt::TokioIo;

use routersim_config::ConfigError;
use routersim_engine::config::Deployment;
use routersim_engine::failure::{FailureKind, ProviderFailure};
use routersim_engine::provider::{Provider, ProviderCall, ProviderResponse};

pub use crate::endpoint::Endpoint;
pub use crate::format::WireFormat;
pub use connector::{Connector, TcpConnector};
pub use pool::Pool;
use pool::{Lease, Sender};
pub use stream::HttpStream;

/// The most of a non-streamed success body read; a larger one is a malformed response (real
/// completions are far smaller; the bound keeps memory flat under any peer).
pub const MAX_RESPONSE_BODY: usize = 8 * 1024 * 1024;

/// The HTTP provider: one [`Endpoint`] per deployment, and a [`Connector`] to reach them.
#[derive(Debug)]
pub struct HttpProvider<C> {
    connector: C,
    endpoints: Vec<Endpoint>,
    pool: Option<Pool>,
}

impl<C: Connector> HttpProvider<C> {
    /// A provider for `deployments` — the router's deployment list, in its order
    /// (`RouterConfig::deployments`): index `i` there is the `deployment_index` the router passes
    /// for it, and the index the connector is given.
    ///
    /// Fails, naming the YAML path, when a deployment's `api_base` is not an absolute URL, an
    /// Azure deployment has none, or an `api_key` cannot be an HTTP header.
    pub fn new(connector: C, deployments: &[Deployment]) -> Result<Self, ConfigError> {
        let endpoints = deployments
            .iter()
            .enumerate()
            .map(|(index, d)| Endpoint::from_deployment(d, index))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self::from_endpoints(connector, endpoints))
    }

    /// A provider for `deployments` served by routersim's fake-provider server at `origin`:
    /// every `api_base` is replaced by the deployment's address there
    /// ([`crate::endpoint::wire_server_api_base`]); `api_key` and `api_version` are kept. The
    /// simulator's `transport: http` uses this with a connector that ignores the host (e.g.
    /// `http://routersim.invalid`) and serves each connection over an in-memory pipe.
    pub fn for_wire_server(
        connector: C,
        deployments: &[Deployment],
        origin: &str,
    ) -> Result<Self, ConfigError> {
        let endpoints = deployments
            .iter()
            .enumerate()
            .map(|(index, d)| {
                let mut d = d.clone();
                let (format, _) = WireFormat::from_model(&d.model);
                let base = crate::endpoint::wire_server_api_base(origin, &d.id, format);
                d.params
                    .insert("api_base".into(), serde_json::Value::String(base));
                Endpoint::from_deployment(&d, index)
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self::from_endpoints(connector, endpoints))
    }

    /// A provider with endpoints built by the caller (e.g. with every `api_base` pointed at a
    /// fake-provider server): `endpoints[i]` serves `deployment_index` `i`.
    pub fn from_endpoints(connector: C, endpoints: Vec<Endpoint>) -> Self {
        Self {
            connector,
            endpoints,
            pool: None,
        }
    }

    /// Keeps connections alive in `pool` and reuses them ([`pool`] says how).
    pub fn with_pool(mut self, pool: Pool) -> Self {
        self.pool = Some(pool);
        self
    }

    /// The pool, when connections are kept alive.
    pub fn pool(&self) -> Option<&Pool> {
        self.pool.as_ref()
    }

    /// The endpoints, by deployment index.
    pub fn endpoints(&self) -> &[Endpoint] {
        &self.endpoints
    }

    /// The connector.
    pub fn connector(&self) -> &C {
        &self.connector
    }

    /// The call's endpoint: the prepared one, else (a deployment list other than the one given
    /// at construction) one read from the call's deployment now.
    fn endpoint(&self, call: &ProviderCall<'_>) -> Option<Cow<'_, Endpoint>> {
        match self.endpoints.get(call.deployment_index) {
            Some(e) if e.deployment_id == call.deployment.id => Some(Cow::Borrowed(e)),
            _ => Endpoint::from_deployment(call.deployment, call.deployment_index)
                .ok()
                .map(Cow::Owned),
        }
    }
}

/// A failure before any response: the connection could not be made or broke.
fn connection_failure() -> ProviderFailure {
    ProviderFailure::new(FailureKind::ApiConnection).with_status(None)
}

impl<C: Connector> Provider for HttpProvider<C> {
    type Stream = HttpStream;

    async fn call(
        &self,
        call: ProviderCall<'_>,
    ) -> Result<ProviderResponse<HttpStream>, ProviderFailure> {
        // An endpoint that cannot be built, or a request that cannot be encoded, never leaves
        // the client: LiteLLM reports such client-side failures as `APIConnectionError`.
        let endpoint = self.endpoint(&call).ok_or_else(connection_failure)?;
        let request = endpoint.request(&call).map_err(|_| connection_failure())?;
        let index = call.deployment_index;
        let (response, sender) = self.send(index, &endpoint.uri, request).await?;
        // Pooled: handed back once the answer was read whole. Unpooled: held to the end of
        // the call, as it always was (the connection closes once its answer is done).
        let (lease, _unpooled) = match &self.pool {
            Some(pool) => (Some(Lease::new(pool.clone(), index, sender)), None),
            None => (None, Some(sender)),
        };
        let (parts, body) = response.into_parts();
        let status = parts.status.as_u16();
        if !parts.status.is_success() {
            // A body cut short still has its status: classify what arrived.
            let (body, end) = read_bounded(body, crate::errors::MAX_ERROR_BODY).await;
            give_back_if_whole(lease, end);
            return Err(crate::errors::classify(
                endpoint.format,
                status,
                &parts.headers,
                &body,
            ));
        }
        if call.request.stream {
            return Ok(ProviderResponse::Stream(
                HttpStream::new(endpoint.format, body).with_lease(lease),
            ));
        }
        let (body, end) = read_bounded(body, MAX_RESPONSE_BODY).await;
        give_back_if_whole(lease, end);
        let completion = match end {
            BodyEnd::Broken => return Err(connection_failure()),
            BodyEnd::Complete => crate::endpoint::decode_completion(endpoint.format, &body),
            BodyEnd::TooLarge => None,
        };
        // A 2xx the client cannot read is a success with no usable choices (DeltaLLM's
        // `malformed_response`), with the status it came with.
        completion.map(ProviderResponse::Complete).ok_or_else(|| {
            ProviderFailure::new(FailureKind::MalformedResponse).with_status(Some(status))
        })
    }
}

impl<C: Connector> HttpProvider<C> {
    /// A fresh connection to `uri` for deployment `index`, its task spawned.
    async fn open(&self, index: usize, uri: &http::Uri) -> Result<Sender, ProviderFailure> {
        let io = self
            .connector
            .connect(index, uri)
            .await
            .map_err(|_| connection_failure())?;
        let (sender, connection) = http1::handshake(TokioIo::new(io))
            .await
            .map_err(|_| connection_failure())?;
        // The connection's own errors surface on the request and the body.
        self.connector.spawn_connection(async move {
            let _ = connection.await;
        });
        Ok(sender)
    }

    /// Sends `request` on a pooled connection when one is idle, else on a fresh one; the
    /// response and the connection it came on. A reused connection that closed before the
    /// request's first byte went out gives the request back: it is sent once more, on a
    /// fresh connection (never a request that was written: the provider may have counted it).
    async fn send(
        &self,
        index: usize,
        uri: &http::Uri,
        mut request: http::Request<Full<Bytes>>,
    ) -> Result<(http::Response<Incoming>, Sender), ProviderFailure> {
        if let Some(mut sender) = self.pool.as_ref().and_then(|pool| pool.take(index))
            && sender.ready().await.is_ok()
        {
            match sender.try_send_request(request).await {
                Ok(response) => return Ok((response, sender)),
                Err(mut error) => match error.take_message() {
                    Some(unsent) => request = unsent,
                    None => return Err(connection_failure()),
                },
            }
        }
        let mut sender = self.open(index, uri).await?;
        sender.ready().await.map_err(|_| connection_failure())?;
        let response = sender
            .send_request(request)
            .await
            .map_err(|_| connection_failure())?;
        Ok((response, sender))
    }
}

/// A pooled connection goes back once its answer was read whole.
fn give_back_if_whole(lease: Option<Lease>, end: BodyEnd) {
    if let Some(lease) = lease
        && end == BodyEnd::Complete
    {
        lease.give_back();
    }
}

/// How reading a body ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BodyEnd {
    /// The whole body arrived.
    Complete,
    /// The connection broke mid-body.
    Broken,
    /// The body went past the limit (what arrived is cut at it).
    TooLarge,
}

/// Reads a body up to `limit` bytes.
async fn read_bounded(mut body: Incoming, limit: usize) -> (Bytes, BodyEnd) {
    let mut out = Vec::new();
    while let Some(frame) = body.frame().await {
        let Ok(frame) = frame else {
            return (Bytes::from(out), BodyEnd::Broken);
        };
        if let Ok(data) = frame.into_data() {
            let room = limit.saturating_sub(out.len());
            if data.len() > room {
                out.extend_from_slice(&data[..room]);
                return (Bytes::from(out), BodyEnd::TooLarge);
            }
            out.extend_from_slice(&data);
        }
    }
    (Bytes::from(out), BodyEnd::Complete)
}
