//! `profile: portkey` beyond the fallback walk, each rule read from the Portkey gateway's
//! source (tag v1.15.2): `portkey_strategy: loadbalance` (`handlerUtils.ts`,
//! `tryTargetsRecursively`: one target drawn by weight, no other), `retry.on_status_codes`
//! (`portkey_retry_on_status_codes`), a target's own `retry` (the deployment's
//! `num_retries`), and a `retry-after` in seconds read by `Number.parseInt`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::disallowed_methods,
    reason = "tests fail loudly and drive tokio's paused clock directly"
)]

use std::sync::Arc;

use crate::common::*;
use routersim_engine::config::{Deployment, PortkeyStrategy, Profile, RouterSettings};
use routersim_engine::event::VecSink;
use routersim_engine::failure::{FailureKind as K, ProviderFailure, RetryAfter};
use routersim_engine::request::Request;
use routersim_engine::router::Router;

fn settings(num_retries: u32) -> RouterSettings {
    RouterSettings {
        profile: Some(Profile::Portkey),
        num_retries,
        ..RouterSettings::default()
    }
}

fn loadbalance(num_retries: u32) -> RouterSettings {
    RouterSettings {
        portkey_strategy: PortkeyStrategy::Loadbalance,
        ..settings(num_retries)
    }
}

fn weighted(id: &str, weight: Option<f64>) -> Deployment {
    Deployment {
        weight,
        ..dep("A", id)
    }
}

/// One request through a fresh router seeded `seed`: its attempts and the router's events.
async fn one_request(
    deployments: Vec<Deployment>,
    s: RouterSettings,
    provider: Scripted,
    seed: u64,
) -> (Vec<String>, String, Arc<VecSink>) {
    let sink = Arc::new(VecSink::new());
    let router = Router::builder(config(deployments, s), provider)
        .seed(seed)
        .sink(sink.clone())
        .build();
    let result = router.completion(Request::new(1, "A")).await;
    (attempts(&result), outcome(&result), sink)
}

/// The loadbalance pick over 2000 seeds, one request each: weights 3, 1, 0 and none (1), so
/// the targets' shares are 3/5, 1/5, 0 and 1/5 (`Math.random() * totalWeight`, the first
/// target whose weight exceeds what is left). Each count `k` of `n = 2000` draws is within
/// 5 standard deviations of `n·p` (`sqrt(n·p·(1−p))`; a fair draw lands outside less than
/// once in a million — the draws are seeded, so the test is deterministic); weight 0 is never
/// drawn; every request is one attempt on its one target.
#[tokio::test(start_paused = true)]
async fn loadbalance_picks_by_weight_over_many_seeds() {
    let n = 2000u64;
    let targets = [
        ("a", Some(3.0), 0.6),
        ("b", Some(1.0), 0.2),
        ("c", Some(0.0), 0.0),
        ("d", None, 0.2),
    ];
    let mut counts = [0u64; 4];
    for seed in 0..n {
        let deployments = targets.iter().map(|(id, w, _)| weighted(id, *w)).collect();
        let mut provider = Scripted::new();
        for (id, _, _) in &targets {
            provider = provider.always(id, Step::Ok);
        }
        let (calls, outcome, _) = one_request(deployments, loadbalance(2), provider, seed).await;
        assert_eq!(outcome, "ok");
        assert_eq!(calls.len(), 1, "seed {seed}: {calls:?}");
        let picked = targets
            .iter()
            .position(|(id, _, _)| calls[0] == format!("{id}:ok"))
            .unwrap();
        counts[picked] += 1;
    }
    assert_eq!(counts[2], 0, "weight 0 is never drawn: {counts:?}");
    for (i, (id, _, p)) in targets.iter().enumerate() {
        let expected = n as f64 * p;
        let sigma = (n as f64 * p * (1.0 - p)).sqrt();
        let k = counts[i] as f64;
        assert!(
            (k - expected).abs() <= 5.0 * sigma,
            "{id}: {k} of {n}, expected {expected} ± {}",
            5.0 * sigma
        );
    }
}

/// Loadbalance never falls back: both targets always 503 with `num_retries: 2`, so each
/// request spends its 1 + 2 attempts (waits 1 s, 2 s) on the one target drawn and returns
/// its 503 — never a call to the other, never a `fallback` event — whichever is drawn (both
/// are, over 40 seeds). A 400 is not retried and is the answer at once.
#[tokio::test(start_paused = true)]
async fn loadbalance_never_falls_back_to_another_target() {
    let mut drawn = std::collections::BTreeSet::new();
    for seed in 0..40 {
        let provider = Scripted::new()
            .always("a", fail(K::ServiceUnavailable))
            .always("b", fail(K::ServiceUnavailable));
        let deployments = vec![weighted("a", None), weighted("b", None)];
        let sink = Arc::new(VecSink::new());
        let router = Router::builder(config(deployments, loadbalance(2)), provider)
            .seed(seed)
            .sink(sink.clone())
            .build();
        let result = router.completion(Request::new(1, "A")).await;
        let calls = attempts(&result);
        let target = calls[0].split(':').next().unwrap().to_string();
        assert_eq!(
            calls,
            vec![format!("{target}:service_unavailable"); 3],
            "seed {seed}"
        );
        assert_eq!(waits_ms(&result), [0, 1000, 2000], "seed {seed}");
        assert_eq!(outcome(&result), "service_unavailable");
        assert!(events_named(&sink.events(), "fallback").is_empty());
        drawn.insert(target);
    }
    assert_eq!(drawn.len(), 2, "{drawn:?}");

    for seed in 0..10 {
        let provider = Scripted::new()
            .always("a", fail(K::BadRequest))
            .always("b", fail(K::BadRequest));
        let deployments = vec![weighted("a", None), weighted("b", None)];
        let (calls, outcome, _) = one_request(deployments, loadbalance(2), provider, seed).await;
        assert_eq!(calls.len(), 1, "seed {seed}: {calls:?}");
        assert_eq!(outcome, "bad_request");
    }
}

/// `retry.on_status_codes` replaces the default list (`normalizeRetryConfig`: `onStatusCodes
/// ?? RETRY_STATUS_CODES`): with `[503]` a 500 is not retried (the default list retries it)
/// and the fallback moves on; the 503 target is retried 1 s, 2 s. A connection error is
/// retried whatever the list (`fetch` throws; async-retry retries every throw).
#[tokio::test(start_paused = true)]
async fn retry_on_status_codes_replaces_the_default_list() {
    let listed = RouterSettings {
        portkey_retry_on_status_codes: Some(vec![503]),
        ..settings(2)
    };
    let run = |s: RouterSettings, first: Step| async move {
        let provider = Scripted::new()
            .always("a1", first)
            .always("a2", fail(K::ServiceUnavailable));
        let (router, _) = make_router(config(vec![dep("A", "a1"), dep("A", "a2")], s), provider);
        let result = router.completion(Request::new(1, "A")).await;
        (attempts(&result), waits_ms(&result))
    };
    let (calls, waits) = run(listed.clone(), fail(K::InternalServer)).await;
    assert_eq!(
        calls,
        [
            "a1:internal_server",
            "a2:service_unavailable",
            "a2:service_unavailable",
            "a2:service_unavailable"
        ]
    );
    assert_eq!(waits, [0, 0, 1000, 2000]);
    let (calls, _) = run(settings(2), fail(K::InternalServer)).await;
    assert_eq!(calls.iter().filter(|c| c.starts_with("a1")).count(), 3);
    let (calls, _) = run(listed, fail(K::ApiConnection)).await;
    assert_eq!(calls.iter().filter(|c| c.starts_with("a1")).count(), 3);
}

/// A target's own `retry` replaces the config's (`tryTargetsRecursively`: `currentTarget.retry
/// ? {...currentTarget.retry} : {...inheritedConfig.retry}`): the deployment's `num_retries: 0`
/// gives its target no retry, while the router's `num_retries: 2` still applies to the next.
#[tokio::test(start_paused = true)]
async fn a_deployments_num_retries_is_its_targets_retry() {
    let provider = Scripted::new()
        .always("a1", fail(K::ServiceUnavailable))
        .always("a2", fail(K::ServiceUnavailable));
    let first = Deployment {
        num_retries: Some(0),
        ..dep("A", "a1")
    };
    let (router, _) = make_router(config(vec![first, dep("A", "a2")], settings(2)), provider);
    let result = router.completion(Request::new(1, "A")).await;
    assert_eq!(
        attempts(&result),
        [
            "a1:service_unavailable",
            "a2:service_unavailable",
            "a2:service_unavailable",
            "a2:service_unavailable"
        ]
    );
}

/// `retry-after: 2.7` (seconds with a fraction; the wire client keeps such a value as text):
/// the gateway reads `Number.parseInt("2.7") * 1000` = 2000 ms, so with
/// `use_retry_after_header` it waits 2 s before the retry and 2 s after the last 429, before
/// the next target; `0.5` reads 0, which is no Retry-After (the backoff's 1 s, none after).
#[tokio::test(start_paused = true)]
async fn a_fractional_retry_after_in_seconds_loses_its_fraction() {
    for (header, expected) in [("2.7", [0, 2000, 2000]), ("0.5", [0, 1000, 0])] {
        let failure = ProviderFailure::new(K::RateLimit)
            .with_retry_after(RetryAfter::HttpDate(header.to_string()));
        let provider = Scripted::new()
            .always("a1", Step::Fail(failure))
            .always("a2", Step::Ok);
        let s = RouterSettings {
            portkey_use_retry_after_header: true,
            ..settings(1)
        };
        let (router, _) = make_router(config(vec![dep("A", "a1"), dep("A", "a2")], s), provider);
        let result = router.completion(Request::new(1, "A")).await;
        assert_eq!(
            attempts(&result),
            ["a1:rate_limit", "a1:rate_limit", "a2:ok"],
            "{header}"
        );
        assert_eq!(waits_ms(&result), expected, "retry-after: {header}");
    }
}
