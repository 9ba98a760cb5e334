//! Runs a scenario's requests through the engine, one at a time, on a paused current-thread
//! runtime (a `{"wait": s}` step moves virtual time on), and reads each request's decisions
//! from the engine's events.
//!
//! Random picks are replayed, not drawn: [`ReplayPicks`] (the engine's strategy seam) picks,
//! for each pick, the deployment real LiteLLM's next attempt went to, provided routersim's
//! candidates include it; otherwise it reports the disagreement and lets the configured
//! strategy draw. So the candidate set routersim offers is checked at every pick, and one
//! random draw cannot make the two runs drift apart. Jitter is not replayed: each wait is
//! compared with LiteLLM's base, within the jitter range.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rand_chacha::ChaCha8Rng;
use routersim_engine::Router;
use routersim_engine::clock::TokioClock;
use routersim_engine::config::{FallbackTarget, RouterConfig};
use routersim_engine::event::{EventKind, VecSink};
use routersim_engine::request::{CompletionResult, Request};
use routersim_engine::strategy::{PickContext, SelectionStrategy};
use serde_json::Value;

use crate::decisions::{Attempt, Decisions, End};
use crate::error::OracleError;
use crate::provider::{ScriptedProvider, WALL_EPOCH_UNIX_MS};
use crate::scenario::{RequestSpec, Scenario, Step};

/// The expected picks of each request in flight, and the picks that could not be replayed.
#[derive(Debug, Default)]
pub struct PickLog {
    /// Per request id: LiteLLM's attempts' deployments still to pick, and the picks made.
    expected: BTreeMap<u64, (VecDeque<String>, usize)>,
    /// Per request id: `(pick number, what LiteLLM picked, routersim's candidates)`.
    misses: BTreeMap<u64, Vec<Miss>>,
}

/// A pick that could not be replayed: `(pick number, LiteLLM's pick, routersim's candidates)`.
pub type Miss = (usize, String, Vec<String>);

fn locked(log: &Mutex<PickLog>) -> std::sync::MutexGuard<'_, PickLog> {
    log.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl PickLog {
    /// Request `id`'s expected picks (LiteLLM's attempts' deployments, in order).
    pub fn expect(log: &Mutex<PickLog>, id: u64, picks: VecDeque<String>) {
        locked(log).expected.insert(id, (picks, 0));
    }

    /// Request `id`'s picks that could not be replayed.
    pub fn take_misses(log: &Mutex<PickLog>, id: u64) -> Vec<Miss> {
        locked(log).misses.remove(&id).unwrap_or_default()
    }
}

/// The strategy seam that replays LiteLLM's picks (see the module docs).
pub struct ReplayPicks {
    log: Arc<Mutex<PickLog>>,
    fallback: Box<dyn SelectionStrategy>,
}

impl ReplayPicks {
    /// Replays the picks `log` expects; `fallback` draws when one cannot be replayed.
    pub fn new(log: Arc<Mutex<PickLog>>, fallback: Box<dyn SelectionStrategy>) -> Self {
        Self { log, fallback }
    }
}

impl SelectionStrategy for ReplayPicks {
    fn pick(&self, ctx: &PickContext<'_>, rng: &mut ChaCha8Rng) -> usize {
        let mut log = locked(&self.log);
        let id = ctx.request.id;
        let (queue, picks) = log.expected.entry(id).or_default();
        *picks += 1;
        let n = *picks;
        if let Some(want) = queue.pop_front() {
            if let Some(pos) = ctx
                .candidates
                .iter()
                .position(|&c| *ctx.deployments[c].id == *want)
            {
                return pos;
            }
            let ids = ctx
                .candidates
                .iter()
                .map(|&c| ctx.deployments[c].id.to_string())
                .collect();
            log.misses.entry(id).or_default().push((n, want, ids));
        }
        drop(log);
        self.fallback.pick(ctx, rng)
    }
}

/// What one request came to in routersim.
#[derive(Debug)]
pub struct Ran {
    /// Its decisions.
    pub decisions: Decisions,
    /// Picks that could not be replayed.
    pub misses: Vec<Miss>,
}

/// Runs every step; `expected` gives each request's LiteLLM attempts (for the picks).
pub fn run(
    scenario: &Scenario,
    config: RouterConfig,
    expected: &[Decisions],
) -> Result<Vec<Ran>, OracleError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .map_err(|e| OracleError::new(&scenario.name, format!("no runtime: {e}")))?;
    let log = Arc::new(Mutex::new(PickLog::default()));
    let sink = Arc::new(VecSink::new());
    let fallback = routersim_engine::strategy::for_name(config.settings.routing_strategy);
    runtime.block_on(async {
        let router = Router::builder(config, ScriptedProvider::new(scenario.scripts.clone()))
            .clock(TokioClock::with_epoch(WALL_EPOCH_UNIX_MS))
            .sink(sink.clone())
            .strategy(ReplayPicks {
                log: log.clone(),
                fallback,
            })
            .build();
        let mut results = Vec::new();
        for step in &scenario.steps {
            let specs = match step {
                Step::Wait(secs) => {
                    tokio::time::sleep(Duration::from_secs_f64(*secs)).await;
                    continue;
                }
                Step::Request(spec) => std::slice::from_ref(spec),
                Step::Concurrent(specs) => specs.as_slice(),
            };
            let first = results.len();
            let requests: Vec<Request> = specs
                .iter()
                .enumerate()
                .map(|(i, spec)| request((first + i) as u64, spec))
                .collect();
            for r in &requests {
                let queue = expected
                    .get(r.id as usize)
                    .map(|d| d.attempts.iter().map(|a| a.deployment.clone()).collect())
                    .unwrap_or_default();
                locked(&log).expected.insert(r.id, (queue, 0));
            }
            let futures = requests.iter().map(|r| Box::pin(router.completion_of(r)));
            results.extend(join_all(futures.collect()).await);
        }
        let events = sink.events();
        let mut log = locked(&log);
        Ok(results
            .iter()
            .map(|result| {
                let id = result.request_id;
                let mine = events.iter().filter(|e| e.request_id == Some(id));
                let mut decisions = read_events(mine.map(|e| &e.kind));
                finish(&mut decisions, result);
                let misses = log.misses.remove(&id).unwrap_or_default();
                Ran { decisions, misses }
            })
            .collect())
    })
}

/// Polls every future until all are done, in order of the list (biased, so a run is
/// deterministic); their outputs in the same order.
async fn join_all<F: Future + Unpin>(mut futures: Vec<F>) -> Vec<F::Output> {
    let mut outputs: Vec<Option<F::Output>> = futures.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (future, out) in futures.iter_mut().zip(outputs.iter_mut()) {
            if out.is_none() {
                match std::pin::Pin::new(future).poll(cx) {
                    std::task::Poll::Ready(v) => *out = Some(v),
                    std::task::Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            std::task::Poll::Pending
        } else {
            std::task::Poll::Ready(())
        }
    })
    .await;
    outputs.into_iter().flatten().collect()
}

/// The engine's request for a scenario request.
fn request(id: u64, spec: &RequestSpec) -> Request {
    let mut r = Request::new(id, spec.model.as_str());
    r.num_retries = spec.num_retries;
    r.fallbacks = spec
        .fallbacks
        .as_ref()
        .map(|f| own_fallbacks(f, &spec.model));
    r
}

/// A request's own `fallbacks`: `["C"]`, or `[{group: [targets]}]` read for the group asked
/// for (then `"*"`).
fn own_fallbacks(value: &Value, model: &str) -> Vec<FallbackTarget> {
    let names = |v: &Value| -> Vec<FallbackTarget> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(FallbackTarget::group)
                    .collect()
            })
            .unwrap_or_default()
    };
    let Some(items) = value.as_array() else {
        return Vec::new();
    };
    if items.iter().all(Value::is_string) {
        return names(value);
    }
    let entry = |key: &str| {
        items
            .iter()
            .find_map(|i| i.as_object().and_then(|m| m.get(key)))
    };
    entry(model)
        .or_else(|| entry("*"))
        .map(names)
        .unwrap_or_default()
}

/// A request's decisions from its events.
pub fn read_events<'a>(events: impl Iterator<Item = &'a EventKind>) -> Decisions {
    let mut d = Decisions::default();
    for kind in events {
        match kind {
            EventKind::AttemptStart {
                model_group,
                deployment_id,
                ..
            } => d.attempts.push(Attempt {
                deployment: deployment_id.to_string(),
                group: model_group.to_string(),
                outcome: String::new(),
            }),
            EventKind::AttemptEnd { failure, .. } => {
                if let Some(a) = d.attempts.last_mut() {
                    a.outcome = failure.map_or("ok", |f| f.as_str()).to_string();
                }
            }
            EventKind::Wait { duration, .. } if !duration.is_zero() => {
                d.waits.push(duration.as_secs_f64());
            }
            EventKind::Fallback { source, target, .. } => {
                d.hops.push((source.to_string(), target.to_string()));
            }
            EventKind::OrderFallback { model_group, .. }
            | EventKind::WeightedFailover { model_group, .. } => {
                d.hops
                    .push((model_group.to_string(), model_group.to_string()));
            }
            EventKind::CooldownSet {
                deployment_id,
                duration,
                ..
            } => d
                .cooldowns
                .push((deployment_id.to_string(), duration.as_secs_f64())),
            _ => {}
        }
    }
    d
}

/// The end and the header counts, from the result.
fn finish(d: &mut Decisions, result: &CompletionResult) {
    match &result.outcome {
        Ok(_) => {
            let id = result
                .final_deployment_id
                .as_deref()
                .unwrap_or_default()
                .to_string();
            d.end = Some(End::Ok(id));
            d.attempted_retries = Some(u64::from(result.attempted_retries));
            d.attempted_fallbacks = Some(u64::from(result.attempted_fallbacks));
        }
        Err(f) => d.end = Some(End::Failed(f.kind.as_str().to_string())),
    }
}
