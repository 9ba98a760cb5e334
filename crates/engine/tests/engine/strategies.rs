//! Each routing strategy on a seeded run through the real router (paused time).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::too_many_lines,
    clippy::disallowed_methods,
    reason = "tests fail loudly, read as one story, and drive tokio's paused clock directly"
)]

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use routersim_engine::Router;
use routersim_engine::config::{Deployment, RouterConfig, RouterSettings, RoutingStrategyName};
use routersim_engine::event::VecSink;
use routersim_engine::failure::{FailureKind as K, ProviderFailure};
use routersim_engine::provider::{NoStream, Provider, ProviderCall, ProviderResponse};
use routersim_engine::request::{Completion, CompletionResult, Request};
use tokio::time::Instant;

use crate::common::*;

fn settings(strategy: RoutingStrategyName) -> RouterSettings {
    RouterSettings {
        routing_strategy: strategy,
        ..RouterSettings::default()
    }
}

/// The deployment that served each result, counted.
fn served(results: &[CompletionResult]) -> BTreeMap<String, u32> {
    let mut counts = BTreeMap::new();
    for r in results {
        assert!(r.outcome.is_ok(), "{:?}", attempts(r));
        let id = r.final_deployment_id.as_deref().unwrap_or("-").to_string();
        *counts.entry(id).or_insert(0) += 1;
    }
    counts
}

fn count(counts: &BTreeMap<String, u32>, id: &str) -> u32 {
    counts.get(id).copied().unwrap_or(0)
}

/// Runs `n` requests one after the other.
async fn sequential<P: Provider>(
    router: &Router<P>,
    next: &mut impl FnMut() -> Request,
    n: usize,
) -> Vec<CompletionResult> {
    let mut results = Vec::with_capacity(n);
    for _ in 0..n {
        results.push(router.completion(next()).await);
    }
    results
}

/// Runs `n` requests that all arrive at the same instant.
async fn burst<P: Provider>(
    router: &Router<P>,
    next: &mut impl FnMut() -> Request,
    n: usize,
) -> Vec<CompletionResult> {
    let futures: Vec<_> = (0..n)
        .map(|_| Box::pin(router.completion(next())))
        .collect();
    poll_all(futures).await
}

/// Polls every future, in order, until all are done (single task, deterministic).
async fn poll_all<F: std::future::Future + Unpin>(mut futures: Vec<F>) -> Vec<F::Output> {
    use std::task::Poll;
    let mut results: Vec<Option<F::Output>> = futures.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (i, f) in futures.iter_mut().enumerate() {
            if results[i].is_none() {
                match std::pin::Pin::new(f).poll(cx) {
                    Poll::Ready(v) => results[i] = Some(v),
                    Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    })
    .await;
    results.into_iter().flatten().collect()
}

type LatencyFn = Box<dyn Fn(&str, &Request, Duration) -> Duration>;

/// A provider whose latency depends on the deployment, the request and the virtual time since
/// the provider was made; every call succeeds with 10 output tokens.
struct Timed {
    start: Instant,
    latency: LatencyFn,
    /// (deployment id, request id, call start since `start`) per call.
    calls: RefCell<Vec<(String, u64, Duration)>>,
}

impl Timed {
    fn new(latency: impl Fn(&str, &Request, Duration) -> Duration + 'static) -> Self {
        Self {
            start: Instant::now(),
            latency: Box::new(latency),
            calls: RefCell::new(Vec::new()),
        }
    }

    /// Calls to `id` and in total whose start falls in `[from, to)`.
    fn share(&self, id: &str, from: Duration, to: Duration) -> (usize, usize) {
        let calls = self.calls.borrow();
        let window: Vec<_> = calls
            .iter()
            .filter(|(_, _, at)| *at >= from && *at < to)
            .collect();
        let hits = window.iter().filter(|(d, _, _)| d == id).count();
        (hits, window.len())
    }
}

impl Provider for Timed {
    type Stream = NoStream;

    async fn call(
        &self,
        call: ProviderCall<'_>,
    ) -> Result<ProviderResponse<NoStream>, ProviderFailure> {
        let since = Instant::now().duration_since(self.start);
        let id = call.deployment.id.to_string();
        let latency = (self.latency)(&id, call.request, since);
        self.calls.borrow_mut().push((id, call.request.id, since));
        tokio::time::sleep(latency).await;
        Ok(ProviderResponse::Complete(Completion {
            output_tokens: 10,
            ..Completion::default()
        }))
    }
}

fn timed_router(config: RouterConfig, provider: Timed) -> Router<Timed> {
    Router::builder(config, provider)
        .seed(7)
        .sink(Arc::new(VecSink::new()))
        .build()
}

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

// ---------------------------------------------------------------------------------------------
// weighted / tag-based-routing

async fn nine_to_one(strategy: RoutingStrategyName) -> BTreeMap<String, u32> {
    let deployments = vec![
        Deployment {
            weight: Some(9.0),
            ..dep("A", "primary")
        },
        Deployment {
            weight: Some(1.0),
            ..dep("A", "canary")
        },
    ];
    let (router, _) = make_router(config(deployments, settings(strategy)), Scripted::new());
    served(&sequential(&router, &mut requests("A"), 10_000).await)
}

#[tokio::test(start_paused = true)]
async fn weighted_splits_nine_to_one_and_tag_based_routing_is_the_same() {
    let counts = nine_to_one(RoutingStrategyName::Weighted).await;
    let share = f64::from(count(&counts, "primary")) / 10_000.0;
    assert!((share - 0.9).abs() <= 0.02, "{counts:?}");
    let legacy = RoutingStrategyName::from_name("tag-based-routing").expect("known name");
    assert_eq!(nine_to_one(legacy).await, counts);
}

#[tokio::test(start_paused = true)]
async fn weighted_counts_a_missing_weight_as_one_and_ignores_rpm() {
    // simple-shuffle would weigh by rpm here (no weights set); weighted gives 1 : 1.
    let deployments = vec![
        Deployment {
            rpm: Some(9_000),
            ..dep("A", "a")
        },
        Deployment {
            rpm: Some(1_000),
            ..dep("A", "b")
        },
    ];
    let (router, _) = make_router(
        config(deployments, settings(RoutingStrategyName::Weighted)),
        Scripted::new(),
    );
    let counts = served(&sequential(&router, &mut requests("A"), 2_000).await);
    let share = f64::from(count(&counts, "a")) / 2_000.0;
    assert!((share - 0.5).abs() <= 0.04, "{counts:?}");
}

// ---------------------------------------------------------------------------------------------
// priority-based-routing

#[tokio::test(start_paused = true)]
async fn priority_sends_everything_to_priority_zero_until_it_cools() {
    let deployments = vec![
        dep("A", "unnumbered"),
        Deployment {
            priority: Some(1),
            ..dep("A", "standby")
        },
        Deployment {
            priority: Some(0),
            ..dep("A", "primary")
        },
    ];
    let mut script = vec![Step::Ok; 20];
    script.push(fail(K::RateLimit));
    let (router, _) = make_router(
        config(deployments, settings(RoutingStrategyName::PriorityBased)),
        Scripted::new().script("primary", script),
    );
    let mut next = requests("A");
    // Healthy: all traffic to priority 0.
    let healthy = sequential(&router, &mut next, 20).await;
    assert_eq!(served(&healthy), BTreeMap::from([("primary".into(), 20)]));
    // A 429 cools the primary at once (a group of 3); the retry goes to priority 1.
    let failed = router.completion(next()).await;
    assert_eq!(
        attempts(&failed),
        ["primary:rate_limit", "standby:ok"],
        "{failed:?}"
    );
    let cooled_at = failed.attempts[0].end;
    // While it cools (5 s), priority 1 takes everything.
    let mut during = Vec::new();
    while Instant::now() < cooled_at + secs(5) {
        during.push(router.completion(next()).await);
    }
    assert!(during.len() >= 45, "{}", during.len());
    assert_eq!(
        served(&during),
        BTreeMap::from([("standby".into(), during.len() as u32)])
    );
    // Cooldown over: back to priority 0; the unnumbered deployment never got a request.
    let after = sequential(&router, &mut next, 20).await;
    assert_eq!(served(&after), BTreeMap::from([("primary".into(), 20)]));
}

// ---------------------------------------------------------------------------------------------
// least-busy

#[tokio::test(start_paused = true)]
async fn least_busy_evens_out_a_burst() {
    let deployments = vec![dep("A", "a"), dep("A", "b"), dep("A", "c")];
    let (router, _) = make_router(
        config(deployments, settings(RoutingStrategyName::LeastBusy)),
        Scripted::new(),
    );
    let results = burst(&router, &mut requests("A"), 300).await;
    let counts = served(&results);
    assert_eq!(
        counts,
        BTreeMap::from([("a".into(), 100), ("b".into(), 100), ("c".into(), 100)])
    );
    // For comparison, simple-shuffle's uniform draw is not even.
    let deployments = vec![dep("A", "a"), dep("A", "b"), dep("A", "c")];
    let (router, _) = make_router(
        config(deployments, settings(RoutingStrategyName::SimpleShuffle)),
        Scripted::new(),
    );
    let shuffled = served(&burst(&router, &mut requests("A"), 300).await);
    assert_ne!(shuffled, counts);
}

#[tokio::test(start_paused = true)]
async fn least_busy_prefers_the_idle_deployment() {
    // Request 1 takes 10 s; every other request 100 ms.
    let provider = Timed::new(|_, req, _| if req.id == 1 { secs(10) } else { ms(100) });
    let router = timed_router(
        config(
            vec![dep("A", "a"), dep("A", "b")],
            settings(RoutingStrategyName::LeastBusy),
        ),
        provider,
    );
    let mut next = requests("A");
    let first = next();
    let (long, short) = tokio::join!(router.completion(first), async {
        sequential(&router, &mut next, 50).await
    });
    let busy = long.final_deployment_id.clone().expect("served");
    let idle = if &*busy == "a" { "b" } else { "a" };
    assert_eq!(
        served(&short),
        BTreeMap::from([(idle.to_string(), 50)]),
        "the long request holds {busy}"
    );
}

// ---------------------------------------------------------------------------------------------
// latency-based-routing

#[tokio::test(start_paused = true)]
async fn latency_moves_traffic_away_from_a_slowing_deployment_and_back_after_it_recovers() {
    // a: 100 ms throughout. b: 80 ms, then 400 ms from 30 s to 120 s, then 80 ms again.
    let provider = Timed::new(|id, _, at| match id {
        "b" if at >= secs(30) && at < secs(120) => ms(400),
        "b" => ms(80),
        _ => ms(100),
    });
    let router = timed_router(
        config(
            vec![dep("A", "a"), dep("A", "b")],
            settings(RoutingStrategyName::LatencyBased),
        ),
        provider,
    );
    let start = Instant::now();
    let mut next = requests("A");
    while Instant::now() < start + secs(300) {
        let r = router.completion(next()).await;
        assert!(r.outcome.is_ok());
    }
    let p = router.provider();
    // Fast: b takes nearly everything (a is 25 % slower, outside the 10 % buffer).
    let (b, total) = p.share("b", secs(1), secs(30));
    assert!(b * 100 >= total * 95, "b {b} of {total}");
    // Slow: traffic moves to a; b only gets the ~2 % exploration.
    let (b, total) = p.share("b", secs(32), secs(120));
    assert!(b * 100 <= total * 5 && b > 0, "b {b} of {total}");
    // Recovered: exploration re-measures b and the traffic comes back.
    let (b, total) = p.share("b", secs(200), secs(300));
    assert!(b * 100 >= total * 95, "b {b} of {total}");
}

#[tokio::test(start_paused = true)]
async fn latency_gives_an_unsampled_deployment_traffic() {
    // Every deployment answers in 100 ms; c's first call is a 429 (no latency sample) that
    // cools it for 5 s.
    let (router, _) = make_router(
        config(
            vec![dep("A", "a"), dep("A", "b"), dep("A", "c")],
            settings(RoutingStrategyName::LatencyBased),
        ),
        Scripted::new().script("c", vec![fail(K::RateLimit)]),
    );
    let mut next = requests("A");
    // Untried first: the first three requests reach all three deployments.
    let first = sequential(&router, &mut next, 3).await;
    let mut reached: Vec<String> = first
        .iter()
        .flat_map(|r| r.attempts.iter().map(|a| a.deployment_id.to_string()))
        .collect();
    reached.sort();
    reached.dedup();
    assert_eq!(reached, ["a", "b", "c"]);
    let c_failed = first
        .iter()
        .flat_map(|r| &r.attempts)
        .find(|a| &*a.deployment_id == "c")
        .expect("c tried");
    let cooled_until = c_failed.end + secs(5);
    // While c cools, a and b (sampled, equally fast) share the traffic.
    let mut during = Vec::new();
    while Instant::now() < cooled_until {
        during.push(router.completion(next()).await);
    }
    let counts = served(&during);
    assert_eq!(count(&counts, "c"), 0);
    assert!(
        count(&counts, "a") > 10 && count(&counts, "b") > 10,
        "{counts:?}"
    );
    // Back from its cooldown, c has been tried but never measured (its only call failed
    // fast): it ranks slowest, not "new", and exploration re-measures it within a few hundred
    // picks.
    let back = sequential(&router, &mut next, 400).await;
    let c_at = back
        .iter()
        .position(|r| attempts(r) == ["c:ok"])
        .expect("exploration reaches c");
    assert!(c_at > 0, "c is not treated as new after a failure");
    // Now sampled at the same latency, c shares the traffic evenly.
    let counts = served(&sequential(&router, &mut next, 300).await);
    assert!(
        ["a", "b", "c"].iter().all(|id| count(&counts, id) > 80),
        "{counts:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// cost-based-routing

fn priced(id: &str, input: f64, output: f64) -> Deployment {
    Deployment {
        input_cost_per_token: Some(input),
        output_cost_per_token: Some(output),
        ..dep("A", id)
    }
}

fn shaped(
    next: &mut impl FnMut() -> Request,
    input: u32,
    output: Option<u32>,
    max: Option<u32>,
) -> Request {
    Request {
        input_tokens: input,
        output_tokens: output,
        max_tokens: max,
        ..next()
    }
}

#[tokio::test(start_paused = true)]
async fn cost_based_picks_the_cheapest_for_the_request() {
    let deployments = vec![
        dep("A", "unpriced"),
        priced("cheap-input", 1e-6, 4e-6),
        priced("cheap-output", 2e-6, 2e-6),
    ];
    let (router, _) = make_router(
        config(deployments, settings(RoutingStrategyName::CostBased)),
        Scripted::new(),
    );
    let mut next = requests("A");
    // A long prompt with a short answer: 1000 × 1e-6 + 10 × 4e-6 < 1000 × 2e-6 + 10 × 2e-6.
    let mut results = Vec::new();
    for _ in 0..50 {
        let req = shaped(&mut next, 1000, Some(10), None);
        results.push(router.completion(req).await);
    }
    assert_eq!(
        served(&results),
        BTreeMap::from([("cheap-input".into(), 50)])
    );
    // A short prompt with a long answer (by max_tokens): the other one is cheaper.
    let mut results = Vec::new();
    for _ in 0..50 {
        let req = shaped(&mut next, 10, None, Some(1000));
        results.push(router.completion(req).await);
    }
    assert_eq!(
        served(&results),
        BTreeMap::from([("cheap-output".into(), 50)])
    );
}

#[tokio::test(start_paused = true)]
async fn cost_based_orders_unpriced_deployments_last() {
    let deployments = vec![
        dep("A", "unpriced"),
        priced("cheap-input", 1e-6, 4e-6),
        priced("cheap-output", 2e-6, 2e-6),
    ];
    let (router, _) = make_router(
        config(deployments, settings(RoutingStrategyName::CostBased)),
        Scripted::new()
            .script("cheap-input", vec![fail(K::RateLimit)])
            .script("cheap-output", vec![fail(K::RateLimit)]),
    );
    let mut next = requests("A");
    // Each 429 cools its deployment; the retries walk up the prices, unpriced last.
    let req = shaped(&mut next, 1000, Some(10), None);
    let r = router.completion(req).await;
    assert_eq!(
        attempts(&r),
        [
            "cheap-input:rate_limit",
            "cheap-output:rate_limit",
            "unpriced:ok"
        ]
    );
    // Once the cooldowns end, the cheapest is back.
    tokio::time::sleep(secs(6)).await;
    let req = shaped(&mut next, 1000, Some(10), None);
    assert_eq!(attempts(&router.completion(req).await), ["cheap-input:ok"]);
}

// ---------------------------------------------------------------------------------------------
// usage-based-routing

fn rpm(id: &str, rpm: u64) -> Deployment {
    Deployment {
        rpm: Some(rpm),
        ..dep("A", id)
    }
}

#[tokio::test(start_paused = true)]
async fn usage_based_spreads_by_utilisation_against_rpm_limits() {
    for name in ["usage-based-routing", "usage-based-routing-v2"] {
        let strategy = RoutingStrategyName::from_name(name).expect("known name");
        let (router, _) = make_router(
            config(
                vec![rpm("small", 100), rpm("large", 300)],
                settings(strategy),
            ),
            Scripted::new(),
        );
        let mut next = requests("A");
        // 400 requests in the first minute: both end up equally used (a quarter of the
        // traffic to the 100 rpm deployment).
        let counts = served(&sequential(&router, &mut next, 400).await);
        assert!(
            count(&counts, "small").abs_diff(100) <= 1,
            "{name}: {counts:?}"
        );
        assert!(
            count(&counts, "large").abs_diff(300) <= 1,
            "{name}: {counts:?}"
        );
        // Still in minute 0, a burst (every pick before any request ends) keeps the split.
        let counts = served(&burst(&router, &mut next, 40).await);
        assert!(
            count(&counts, "small").abs_diff(10) <= 1,
            "{name}: {counts:?}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn usage_based_without_limits_goes_to_the_fewest_tokens() {
    let (router, _) = make_router(
        config(
            vec![dep("A", "a"), dep("A", "b")],
            settings(RoutingStrategyName::UsageBased),
        ),
        Scripted::new(),
    );
    let mut next = requests("A");
    // One big request lands somewhere; the next ten small ones all go to the other.
    let big = Request {
        input_tokens: 10_000,
        ..next()
    };
    let heavy = router
        .completion(big)
        .await
        .final_deployment_id
        .expect("served");
    let light: Vec<_> = (0..10)
        .map(|_| Request {
            input_tokens: 100,
            ..next()
        })
        .collect();
    let mut results = Vec::new();
    for req in light {
        results.push(router.completion(req).await);
    }
    let other = if &*heavy == "a" { "b" } else { "a" };
    assert_eq!(served(&results), BTreeMap::from([(other.to_string(), 10)]));
}

// ---------------------------------------------------------------------------------------------
// rate-limit-aware

#[tokio::test(start_paused = true)]
async fn rate_limit_aware_avoids_a_deployment_near_its_rpm_until_the_next_minute() {
    let start = Instant::now();
    let (router, _) = make_router(
        config(
            vec![rpm("tight", 10), rpm("roomy", 10_000)],
            settings(RoutingStrategyName::RateLimitAware),
        ),
        Scripted::new(),
    );
    let mut next = requests("A");
    // Minute 0: the 9th request on `tight` would bring it to 90 % of 10 rpm, so it stops at 8.
    let minute0 = sequential(&router, &mut next, 100).await;
    assert!(minute0.iter().all(|r| r.end < start + secs(60)));
    let counts = served(&minute0);
    assert_eq!(count(&counts, "tight"), 8, "{counts:?}");
    let last_tight = minute0
        .iter()
        .rposition(|r| r.final_deployment_id.as_deref() == Some("tight"))
        .expect("tight served");
    assert!(last_tight < 40, "{last_tight}");
    // Minute 1: the counters start over and `tight` is back in the weighted pick.
    tokio::time::sleep_until(start + secs(60)).await;
    let minute1 = sequential(&router, &mut next, 40).await;
    let counts = served(&minute1);
    assert!((1..=8).contains(&count(&counts, "tight")), "{counts:?}");
    assert_eq!(
        minute1
            .iter()
            .position(|r| r.final_deployment_id.as_deref() == Some("tight"))
            .map(|p| p < 10),
        Some(true)
    );
}

#[tokio::test(start_paused = true)]
async fn rate_limit_aware_never_fails_the_pick_when_everyone_is_near() {
    // `a` weighs 9 but allows 2 rpm; `b` weighs 1 and allows 4. Once both are near their
    // limits (within a few requests), the weights no longer matter: the least utilised is
    // picked, so `b` takes about two thirds, and nothing fails.
    let deployments = vec![
        Deployment {
            weight: Some(9.0),
            ..rpm("a", 2)
        },
        Deployment {
            weight: Some(1.0),
            ..rpm("b", 4)
        },
    ];
    let (router, _) = make_router(
        config(deployments, settings(RoutingStrategyName::RateLimitAware)),
        Scripted::new(),
    );
    let counts = served(&sequential(&router, &mut requests("A"), 30).await);
    assert_eq!(counts.values().sum::<u32>(), 30);
    assert!(count(&counts, "b") >= 18, "{counts:?}");
}
