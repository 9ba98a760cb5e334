//! The provider: one async call per attempt.
//!
//! Seed: *"The router is the only retry loop. It sets `max_retries` to 0 on the provider call,
//! so neither the provider SDK nor the HTTP client retries on its own."* A [`Provider`] makes
//! exactly one call and classifies its failure; every decision after that is the router's.

use std::future::Future;

use crate::config::Deployment;
use crate::failure::ProviderFailure;
use crate::request::{Completion, Request};
use crate::stream::{ProviderStream, StreamItem};

/// What the router hands a provider for one attempt.
#[derive(Clone, Copy, Debug)]
pub struct ProviderCall<'a> {
    /// The deployment picked.
    pub deployment: &'a Deployment,
    /// Its index in the router's deployment list (stable; a cheap key for per-deployment state).
    pub deployment_index: usize,
    /// The request, with this hop's fallback overrides merged into `params`.
    pub request: &'a Request,
    /// Counts from 1 across the whole request.
    pub attempt: u32,
}

/// What a successful call returns: a whole response, or an open stream.
#[derive(Debug)]
pub enum ProviderResponse<S> {
    /// A complete (non-streamed) response.
    Complete(Completion),
    /// An open stream (the router wraps it; see the streaming issue).
    Stream(S),
}

/// A stream type for providers that never stream.
#[derive(Debug, Clone, Copy)]
pub enum NoStream {}

impl ProviderStream for NoStream {
    async fn next_item(&mut self) -> Option<Result<StreamItem, ProviderFailure>> {
        match *self {}
    }
}

/// One upstream call per attempt, generic so that the simulator's fake providers and a real
/// HTTP client plug into the same engine.
pub trait Provider {
    /// The stream a streamed call returns.
    type Stream: ProviderStream;

    /// Makes one call. Never retries.
    fn call(
        &self,
        call: ProviderCall<'_>,
    ) -> impl Future<Output = Result<ProviderResponse<Self::Stream>, ProviderFailure>>;
}
