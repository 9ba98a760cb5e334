//! FakeProviders under paused time: exact outcome sequences at exact virtual instants.
#![allow(
    clippy::disallowed_methods,
    reason = "these tests run on tokio's paused runtime and read its clock directly, as the seam does there"
)]

use std::collections::BTreeMap;
use std::time::Duration;

use routersim_engine::config::{Deployment, RouterConfig};
use routersim_engine::failure::{FailureKind, ProviderFailure, RetryAfter};
use routersim_engine::provider::{Provider, ProviderCall, ProviderResponse};
use routersim_engine::request::Request;
use routersim_engine::retry_after::{parse_rfc3339_utc, resolve};
use routersim_mock_providers::rng::seeded_rng;
use routersim_mock_providers::{FakeProviders, FaultSpec, LatencySpec, ProviderSpec};
use tokio::time::{Instant, sleep, sleep_until};

const EPOCH: i64 = 1_767_225_600_000; // 2026-01-01T00:00:00Z

fn config() -> RouterConfig {
    let dep = |id: &str, group: &str| Deployment {
        id: id.into(),
        model_name: group.into(),
        model: format!("openai/{id}"),
        ..Deployment::default()
    };
    RouterConfig {
        deployments: vec![dep("a", "gpt"), dep("b", "gpt"), dep("c", "claude")],
        ..RouterConfig::default()
    }
}

fn providers_yaml(yaml: &str) -> BTreeMap<String, ProviderSpec> {
    serde_saphyr::from_str(yaml).expect("providers parse")
}

fn faults_yaml(yaml: &str) -> Vec<FaultSpec> {
    serde_saphyr::from_str(yaml).expect("faults parse")
}

struct Harness {
    config: RouterConfig,
    fakes: FakeProviders,
}

impl Harness {
    fn new(providers: &str, faults: &str, seed: u64) -> Self {
        let config = config();
        let fakes = FakeProviders::new(
            &config,
            &providers_yaml(providers),
            &faults_yaml(faults),
            seed,
            EPOCH,
            Instant::now(),
        )
        .expect("valid specs");
        Self { config, fakes }
    }

    async fn call(&self, index: usize, request: &Request) -> Result<u32, ProviderFailure> {
        let call = ProviderCall {
            deployment: &self.config.deployments[index],
            deployment_index: index,
            request,
            attempt: 1,
        };
        match self.fakes.call(call).await? {
            ProviderResponse::Complete(c) => Ok(c.output_tokens),
            ProviderResponse::Stream(_) => panic!("a non-streamed request got a stream"),
        }
    }

    /// The outcome name of one call to deployment `index`, and how long it took.
    async fn outcome(&self, index: usize) -> (&'static str, Duration) {
        let start = Instant::now();
        let result = self.call(index, &Request::new(0, "gpt")).await;
        let name = match result {
            Ok(_) => "ok",
            Err(f) => f.kind.as_str(),
        };
        (name, start.elapsed())
    }
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[tokio::test(start_paused = true)]
async fn script_runs_in_order_then_the_then_outcome() {
    let h = Harness::new(
        "a:\n  latency: 300ms\n  script:\n    - ok\n    - rate_limit\n    - {error: internal_server, latency: 50ms}\n    - {ok: {latency: 1s}}\n  then: service_unavailable\n",
        "[]",
        1,
    );
    let mut seen = Vec::new();
    for _ in 0..6 {
        seen.push(h.outcome(0).await);
    }
    assert_eq!(
        seen,
        vec![
            ("ok", ms(300)),
            ("rate_limit", ms(300)),
            ("internal_server", ms(50)),
            ("ok", ms(1000)),
            ("service_unavailable", ms(300)),
            ("service_unavailable", ms(300)),
        ]
    );
    // Deployment b has no spec: default 200 ms, always ok, 200 output tokens.
    assert_eq!(h.outcome(1).await, ("ok", ms(200)));
    assert_eq!(h.call(1, &Request::new(1, "gpt")).await, Ok(200));
    let mut with_max = Request::new(2, "gpt");
    with_max.max_tokens = Some(64);
    assert_eq!(h.call(1, &with_max).await, Ok(64));

    let stats = h.fakes.stats_by_id("a").expect("a exists");
    assert_eq!(stats.calls, 6);
    assert_eq!(stats.ok, 2);
    assert_eq!(stats.failures_of(FailureKind::ServiceUnavailable), 2);
    assert_eq!(stats.failures_of(FailureKind::RateLimit), 1);
    assert_eq!(h.fakes.stats(1).map(|s| s.calls), Some(3));
}

#[tokio::test(start_paused = true)]
async fn scripted_status_and_the_kinds_default_status() {
    let h = Harness::new(
        "a:\n  script: [rate_limit, {error: overloaded, status: 503}]\n",
        "[]",
        1,
    );
    let req = Request::new(0, "gpt");
    let first = h.call(0, &req).await.expect_err("scripted error");
    assert_eq!(
        (first.kind, first.status, first.retry_after),
        (FailureKind::RateLimit, Some(429), None)
    );
    let second = h.call(0, &req).await.expect_err("scripted error");
    assert_eq!(
        (second.kind, second.status),
        (FailureKind::Overloaded, Some(503))
    );
}

#[tokio::test(start_paused = true)]
async fn a_window_is_active_only_between_from_and_to() {
    let h = Harness::new(
        "a: {latency: 0s}\n",
        "- {deployment: a, from: 2s, to: 5s, error: rate_limit}\n",
        1,
    );
    let start = Instant::now();
    let mut seen = Vec::new();
    for at in [0, 1999, 2000, 3500, 4999, 5000, 9000] {
        sleep_until(start + ms(at)).await;
        seen.push((at, h.outcome(0).await.0));
    }
    assert_eq!(
        seen,
        vec![
            (0, "ok"),
            (1999, "ok"),
            (2000, "rate_limit"),
            (3500, "rate_limit"),
            (4999, "rate_limit"),
            (5000, "ok"),
            (9000, "ok"),
        ]
    );
    // Deployment b is not targeted.
    sleep_until(start + ms(12_000)).await;
    assert_eq!(h.outcome(1).await.0, "ok");
}

#[tokio::test(start_paused = true)]
async fn a_model_group_fault_hits_every_deployment_of_the_group_and_a_slowdown_changes_latency() {
    let h = Harness::new(
        "",
        "- {model_group: gpt, from: 0s, to: 10s, error: bad_gateway, latency: 20ms}\n\
         - {model_group: claude, from: 1s, latency: {uniform: [3s, 3s]}}\n",
        1,
    );
    assert_eq!(h.outcome(0).await, ("bad_gateway", ms(20)));
    assert_eq!(h.outcome(1).await, ("bad_gateway", ms(20)));
    let start = Instant::now();
    assert_eq!(h.outcome(2).await, ("ok", ms(200)));
    sleep_until(start + ms(1000)).await;
    assert_eq!(h.outcome(2).await, ("ok", ms(3000)));
}

#[tokio::test(start_paused = true)]
async fn the_last_active_slowdown_wins_and_an_outcome_latency_beats_both() {
    let h = Harness::new(
        "a:\n  script: [ok, ok, {ok: {latency: 7ms}}]\n",
        "- {deployment: a, latency: 1s}\n- {deployment: a, from: 0s, to: 1m, latency: 2s}\n",
        1,
    );
    assert_eq!(h.outcome(0).await, ("ok", ms(2000)));
    assert_eq!(h.outcome(0).await, ("ok", ms(2000)));
    assert_eq!(h.outcome(0).await, ("ok", ms(7)));
    sleep(Duration::from_secs(60)).await;
    assert_eq!(h.outcome(0).await, ("ok", ms(1000)));
}

#[tokio::test(start_paused = true)]
async fn a_scripted_error_beats_a_fault_and_a_fault_beats_a_scripted_ok() {
    let h = Harness::new(
        "a:\n  latency: 0s\n  script: [timeout, ok]\n",
        "- {deployment: a, error: rate_limit}\n",
        1,
    );
    assert_eq!(h.outcome(0).await.0, "timeout");
    assert_eq!(h.outcome(0).await.0, "rate_limit");
    assert_eq!(h.outcome(0).await.0, "rate_limit");
}

async fn fault_sequence(seed: u64, calls: usize) -> Vec<bool> {
    let h = Harness::new(
        "a: {latency: 1ms}\n",
        "- {deployment: a, from: 0s, to: 1h, error: rate_limit, probability: 0.8}\n",
        seed,
    );
    let mut hits = Vec::with_capacity(calls);
    for _ in 0..calls {
        hits.push(h.outcome(0).await.0 == "rate_limit");
    }
    hits
}

#[tokio::test(start_paused = true)]
async fn probability_fires_at_its_rate_and_the_seed_fixes_the_sequence() {
    let a = fault_sequence(42, 10_000).await;
    let rate = a.iter().filter(|&&hit| hit).count() as f64 / a.len() as f64;
    assert!((rate - 0.8).abs() < 0.02, "rate {rate}");
    assert_eq!(fault_sequence(42, 500).await, a[..500]);
    assert_ne!(fault_sequence(43, 500).await, a[..500]);
}

#[tokio::test(start_paused = true)]
async fn retry_after_formats() {
    let h = Harness::new(
        "a:\n  latency: 0s\n  script:\n    - {error: rate_limit, retry_after: 1.5s}\n    - {error: rate_limit, retry_after: 1.5s, retry_after_format: ms}\n    - {error: rate_limit, retry_after: 20s, retry_after_format: http-date}\n    - {error: rate_limit, retry_after: 20s, retry_after_format: http-date}\n",
        "[]",
        1,
    );
    let req = Request::new(0, "gpt");
    let retry_after = |r: Result<u32, ProviderFailure>| r.expect_err("scripted").retry_after;
    assert_eq!(
        retry_after(h.call(0, &req).await),
        Some(RetryAfter::Delay(ms(2000)))
    );
    assert_eq!(
        retry_after(h.call(0, &req).await),
        Some(RetryAfter::Delay(ms(1500)))
    );

    // At virtual time 0 the wall clock reads the epoch: the date is exactly epoch + 20 s.
    let at_zero = retry_after(h.call(0, &req).await).expect("sent");
    assert_eq!(
        at_zero,
        RetryAfter::HttpDate("Thu, 01 Jan 2026 00:00:20 GMT".into())
    );
    assert_eq!(resolve(&at_zero, EPOCH), Some(Duration::from_secs(20)));

    // At 1.3 s the date rounds up to a whole second: it resolves to at least 20 s, under 21 s.
    sleep(ms(1300)).await;
    let later = retry_after(h.call(0, &req).await).expect("sent");
    assert_eq!(
        later,
        RetryAfter::HttpDate("Thu, 01 Jan 2026 00:00:22 GMT".into())
    );
    assert_eq!(resolve(&later, EPOCH + 1300), Some(ms(20_700)));
    assert_eq!(parse_rfc3339_utc("2026-01-01T00:00:00Z"), Some(EPOCH));
}

#[tokio::test(start_paused = true)]
async fn a_fault_sends_its_retry_after_and_status() {
    let h = Harness::new(
        "",
        "- {deployment: a, error: rate_limit, status: 503, retry_after: 20s, retry_after_format: http-date}\n",
        1,
    );
    sleep(Duration::from_secs(60)).await;
    let failure = h.call(0, &Request::new(0, "gpt")).await.expect_err("fault");
    assert_eq!(failure.status, Some(503));
    assert_eq!(
        failure.retry_after,
        Some(RetryAfter::HttpDate("Thu, 01 Jan 2026 00:01:20 GMT".into()))
    );
}

#[tokio::test(start_paused = true)]
async fn context_window_overflow_is_a_400_before_anything_else() {
    let h = Harness::new(
        "a:\n  context_window: 8000\n  script: [rate_limit, ok]\n",
        "[]",
        1,
    );
    let mut big = Request::new(0, "gpt");
    big.input_tokens = 8001;
    let failure = h.call(0, &big).await.expect_err("too long");
    assert_eq!(
        (failure.kind, failure.status),
        (FailureKind::ContextWindowExceeded, Some(400))
    );
    // The script entry was consumed by that call: the next is `ok`.
    let mut fits = Request::new(1, "gpt");
    fits.input_tokens = 8000;
    assert_eq!(h.call(0, &fits).await, Ok(200));
}

#[tokio::test(start_paused = true)]
async fn fixed_latency_is_exact() {
    let h = Harness::new("a: {latency: 1.5s}\n", "[]", 1);
    let start = Instant::now();
    for _ in 0..3 {
        assert_eq!(h.outcome(0).await, ("ok", ms(1500)));
    }
    assert_eq!(start.elapsed(), ms(4500));
}

#[test]
fn uniform_latency_stays_in_bounds_and_covers_them() {
    let spec = LatencySpec::Uniform {
        min: ms(200),
        max: ms(900),
    };
    let mut rng = seeded_rng(5, "test/uniform");
    let samples: Vec<Duration> = (0..10_000).map(|_| spec.sample(&mut rng)).collect();
    assert!(samples.iter().all(|d| (ms(200)..=ms(900)).contains(d)));
    assert_eq!(samples.iter().min(), Some(&ms(200)));
    assert_eq!(samples.iter().max(), Some(&ms(900)));
    let mean = samples.iter().map(|d| d.as_secs_f64()).sum::<f64>() / samples.len() as f64;
    assert!((mean - 0.55).abs() < 0.01, "mean {mean}");
}

#[test]
fn log_normal_latency_has_the_asked_median_and_p99() {
    let spec = LatencySpec::LogNormal {
        p50: ms(800),
        p99: ms(4000),
    };
    let mut rng = seeded_rng(5, "test/lognormal");
    let mut samples: Vec<Duration> = (0..10_000).map(|_| spec.sample(&mut rng)).collect();
    samples.sort();
    let p50 = samples[5_000].as_secs_f64();
    let p99 = samples[9_900].as_secs_f64();
    assert!((p50 / 0.8 - 1.0).abs() < 0.05, "p50 {p50}");
    assert!((p99 / 4.0 - 1.0).abs() < 0.15, "p99 {p99}");
    // Whole milliseconds.
    assert!(samples.iter().all(|d| d.subsec_nanos() % 1_000_000 == 0));
}

#[tokio::test(start_paused = true)]
async fn malformed_and_content_filter_successes_are_returned_as_written() {
    use routersim_engine::stream::{FinishReason, ProviderStream, StreamItem};
    let h = Harness::new(
        "a: {latency: 10ms, script: [{malformed: empty_choices}, {finish_reason: content_filter}, {finish_reason: content_filter}]}",
        "[]",
        1,
    );
    let call = |request: Request| {
        let h = &h;
        async move {
            h.fakes
                .call(ProviderCall {
                    deployment: &h.config.deployments[0],
                    deployment_index: 0,
                    request: &request,
                    attempt: 1,
                })
                .await
        }
    };
    match call(Request::new(1, "gpt")).await {
        Ok(ProviderResponse::Complete(c)) => assert!(c.empty_choices),
        other => panic!("{other:?}"),
    }
    match call(Request::new(2, "gpt")).await {
        Ok(ProviderResponse::Complete(c)) => {
            assert_eq!(c.finish_reason, FinishReason::ContentFilter);
            assert!(!c.empty_choices && c.output_tokens > 0);
        }
        other => panic!("{other:?}"),
    }
    let mut streamed = Request::new(3, "gpt");
    streamed.stream = true;
    let Ok(ProviderResponse::Stream(mut stream)) = call(streamed).await else {
        panic!("a streamed request gets a stream");
    };
    let mut last = None;
    while let Some(item) = stream.next_item().await {
        last = Some(item);
    }
    assert_eq!(
        last,
        Some(Ok(StreamItem::Done(FinishReason::ContentFilter)))
    );
}

/// The draws of each kind of latency are pinned: a provider draws its base latency from the
/// spec prepared once, and a speed-up must not move one draw (these are the draws of the
/// version that worked out a log-normal's logarithms on every call).
#[test]
fn latency_draws_are_pinned_for_a_seed() {
    let specs = [
        LatencySpec::LogNormal {
            p50: ms(800),
            p99: ms(4000),
        },
        LatencySpec::Uniform {
            min: ms(200),
            max: ms(900),
        },
        LatencySpec::Fixed(ms(300)),
    ];
    let draws: Vec<Vec<u128>> = specs
        .iter()
        .map(|spec| {
            let mut rng = seeded_rng(7, "test/pinned");
            let prepared = spec.prepare();
            (0..6)
                .map(|i| {
                    let d = if i % 2 == 0 {
                        spec.sample(&mut rng)
                    } else {
                        prepared.sample(&mut rng)
                    };
                    d.as_millis()
                })
                .collect()
        })
        .collect();
    assert_eq!(
        draws,
        [
            vec![3608, 319, 924, 764, 1591, 665],
            vec![838, 884, 632, 518, 347, 340],
            vec![300; 6],
        ]
    );
}
