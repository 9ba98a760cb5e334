//! A scripted fake provider and config builders for the engine's rule tests.
#![allow(dead_code)]

use std::cell::RefCell;
use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use routersim_engine::Router;
use routersim_engine::config::{
    Deployment, FallbackMap, FallbackTarget, RouterConfig, RouterSettings,
};
use routersim_engine::event::{EventKind, RoutingEvent, VecSink};
use routersim_engine::failure::{FailureKind, ProviderFailure, RetryAfter};
use routersim_engine::provider::{Provider, ProviderCall, ProviderResponse};
use routersim_engine::request::{Completion, CompletionResult, Request};
use routersim_engine::stream::{Chunk, ChunkKind, FinishReason, ProviderStream, StreamItem};

/// Every call takes this long.
pub const LATENCY: Duration = Duration::from_millis(100);

/// One scripted outcome.
#[derive(Clone, Debug)]
pub enum Step {
    Ok,
    Fail(ProviderFailure),
    /// Succeed with this response (finish reason, empty choices).
    Complete(Completion),
    /// Fail with this failure after this long (instead of [`LATENCY`]).
    SlowFail(Duration, ProviderFailure),
    /// Succeed after this long (instead of [`LATENCY`]).
    SlowOk(Duration),
    /// Open a stream that plays this plan (each entry: delay after the previous one, then what).
    Stream(Vec<(Duration, Play)>),
}

/// What a scripted stream does next.
#[derive(Clone, Debug)]
pub enum Play {
    Item(StreamItem),
    Break(ProviderFailure),
    Close,
}

/// A text chunk of `tokens` tokens.
pub fn text(tokens: u32) -> Play {
    Play::Item(StreamItem::Chunk(Chunk {
        kind: ChunkKind::Text,
        tokens,
        span: Duration::ZERO,
    }))
}

pub fn chunk(kind: ChunkKind, tokens: u32) -> Play {
    Play::Item(StreamItem::Chunk(Chunk {
        kind,
        tokens,
        span: Duration::ZERO,
    }))
}

pub fn done() -> Play {
    Play::Item(StreamItem::Done(FinishReason::Stop))
}

pub fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// A stream playing a plan on tokio's clock.
#[derive(Debug)]
pub struct TestStream {
    plan: VecDeque<(Duration, Play)>,
}

impl ProviderStream for TestStream {
    async fn next_item(&mut self) -> Option<Result<StreamItem, ProviderFailure>> {
        let (delay, play) = self.plan.pop_front()?;
        tokio::time::sleep(delay).await;
        match play {
            Play::Item(item) => Some(Ok(item)),
            Play::Break(f) => Some(Err(f)),
            Play::Close => None,
        }
    }
}

pub fn fail(kind: FailureKind) -> Step {
    Step::Fail(ProviderFailure::new(kind))
}

pub fn fail_after(kind: FailureKind, retry_after: Duration) -> Step {
    Step::Fail(ProviderFailure::new(kind).with_retry_after(RetryAfter::Delay(retry_after)))
}

/// Outcomes per deployment id: scripted steps first, then the deployment's `then` (default ok).
#[derive(Default)]
pub struct Scripted {
    scripts: RefCell<BTreeMap<String, VecDeque<Step>>>,
    then: RefCell<BTreeMap<String, Step>>,
    /// (deployment id, request params as seen) per call.
    pub seen: RefCell<Vec<(String, Request)>>,
}

impl Scripted {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn script(self, id: &str, steps: Vec<Step>) -> Self {
        self.scripts.borrow_mut().insert(id.into(), steps.into());
        self
    }

    pub fn always(self, id: &str, step: Step) -> Self {
        self.then.borrow_mut().insert(id.into(), step);
        self
    }
}

impl Provider for Scripted {
    type Stream = TestStream;

    async fn call(
        &self,
        call: ProviderCall<'_>,
    ) -> Result<ProviderResponse<TestStream>, ProviderFailure> {
        let id = call.deployment.id.to_string();
        self.seen
            .borrow_mut()
            .push((id.clone(), call.request.clone()));
        let step = self
            .scripts
            .borrow_mut()
            .get_mut(&id)
            .and_then(VecDeque::pop_front)
            .or_else(|| self.then.borrow().get(&id).cloned())
            .unwrap_or(Step::Ok);
        if let Step::Stream(plan) = step {
            return Ok(ProviderResponse::Stream(TestStream { plan: plan.into() }));
        }
        if let Step::SlowFail(after, failure) = step {
            tokio::time::sleep(after).await;
            return Err(failure);
        }
        if let Step::SlowOk(after) = step {
            tokio::time::sleep(after).await;
            return Ok(ProviderResponse::Complete(Completion {
                output_tokens: 10,
                ..Completion::default()
            }));
        }
        tokio::time::sleep(LATENCY).await;
        match step {
            Step::Ok => Ok(ProviderResponse::Complete(Completion {
                output_tokens: 10,
                ..Completion::default()
            })),
            Step::Complete(done) => Ok(ProviderResponse::Complete(done)),
            Step::Fail(f) => Err(f),
            Step::Stream(_) | Step::SlowFail(..) | Step::SlowOk(_) => unreachable!("handled above"),
        }
    }
}

/// A deployment of group `group` with id `id`.
pub fn dep(group: &str, id: &str) -> Deployment {
    Deployment {
        id: Arc::from(id),
        model_name: Arc::from(group),
        model: format!("openai/{group}"),
        ..Deployment::default()
    }
}

pub fn fallbacks(entries: &[(&str, &[&str])]) -> FallbackMap {
    FallbackMap {
        entries: entries
            .iter()
            .map(|(k, v)| {
                (
                    (*k).to_string(),
                    v.iter().map(|t| FallbackTarget::group(*t)).collect(),
                )
            })
            .collect(),
    }
}

pub fn config(deployments: Vec<Deployment>, settings: RouterSettings) -> RouterConfig {
    RouterConfig {
        deployments,
        settings,
        ..RouterConfig::default()
    }
}

/// A router on tokio's (paused) clock with a VecSink, seed 7.
pub fn make_router(config: RouterConfig, provider: Scripted) -> (Router<Scripted>, Arc<VecSink>) {
    let sink = Arc::new(VecSink::new());
    let router = Router::builder(config, provider)
        .seed(7)
        .sink(sink.clone())
        .build();
    (router, sink)
}

/// `id:outcome` per attempt.
pub fn attempts(result: &CompletionResult) -> Vec<String> {
    result
        .attempts
        .iter()
        .map(|a| format!("{}:{}", a.deployment_id, a.outcome_name()))
        .collect()
}

/// Waits before each attempt, in milliseconds.
pub fn waits_ms(result: &CompletionResult) -> Vec<u128> {
    result.attempts.iter().map(|a| a.wait.as_millis()).collect()
}

/// Attempt start times relative to the request's start, in milliseconds.
pub fn starts_ms(result: &CompletionResult) -> Vec<u128> {
    result
        .attempts
        .iter()
        .map(|a| a.start.duration_since(result.start).as_millis())
        .collect()
}

pub fn outcome(result: &CompletionResult) -> String {
    match &result.outcome {
        Ok(_) => "ok".into(),
        Err(f) => f.kind.as_str().into(),
    }
}

/// The named events, as `name detail` strings, filtered by name.
pub fn events_named(events: &[RoutingEvent], name: &str) -> Vec<EventKind> {
    events
        .iter()
        .filter(|e| e.kind.name() == name)
        .map(|e| e.kind.clone())
        .collect()
}

pub fn requests(model: &str) -> impl FnMut() -> Request {
    let model = model.to_string();
    let mut next = 0;
    move || {
        next += 1;
        Request::new(next, model.as_str())
    }
}
