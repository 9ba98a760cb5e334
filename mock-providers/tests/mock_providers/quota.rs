//! The provider's own quota (`rpm_limit`, `tpm_limit`) under paused time: token buckets that
//! refill on the virtual clock, 429s with an exact Retry-After, nothing charged when rejected.
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
use routersim_mock_providers::{FakeProviders, FaultSpec, ProviderSpec, QUOTA_REJECT_LATENCY};
use tokio::time::{Instant, sleep_until};

const EPOCH: i64 = 1_767_225_600_000; // 2026-01-01T00:00:00Z

fn config() -> RouterConfig {
    let dep = |id: &str| Deployment {
        id: id.into(),
        model_name: "gpt".into(),
        model: format!("openai/{id}"),
        ..Deployment::default()
    };
    RouterConfig {
        deployments: vec![dep("a"), dep("b")],
        ..RouterConfig::default()
    }
}

struct Harness {
    config: RouterConfig,
    fakes: FakeProviders,
    start: Instant,
}

impl Harness {
    fn new(providers: &str, faults: &str) -> Self {
        let config = config();
        let specs: BTreeMap<String, ProviderSpec> =
            serde_saphyr::from_str(providers).expect("providers parse");
        let faults: Vec<FaultSpec> = serde_saphyr::from_str(faults).expect("faults parse");
        let start = Instant::now();
        let fakes =
            FakeProviders::new(&config, &specs, &faults, 1, EPOCH, start).expect("valid specs");
        Self {
            config,
            fakes,
            start,
        }
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

    /// One call of `input` tokens (answer: `output` tokens) to deployment `a` at `at_ms` after
    /// the start: the outcome (`ok`, or the kind and Retry-After), and how long it took.
    async fn at(&self, at_ms: u64, input: u32, output: u32) -> (String, Duration) {
        sleep_until(self.start + ms(at_ms)).await;
        let mut request = Request::new(0, "gpt");
        request.input_tokens = input;
        request.output_tokens = Some(output);
        let began = Instant::now();
        let outcome = match self.call(0, &request).await {
            Ok(_) => "ok".to_string(),
            Err(f) => match f.retry_after {
                Some(RetryAfter::Delay(d)) => format!("{} {}ms", f.kind.as_str(), d.as_millis()),
                Some(RetryAfter::HttpDate(date)) => format!("{} {date}", f.kind.as_str()),
                None => f.kind.as_str().to_string(),
            },
        };
        (outcome, began.elapsed())
    }
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[tokio::test(start_paused = true)]
async fn the_61st_call_in_a_minute_fails_with_retry_after_1s_and_refill_restores_room() {
    let h = Harness::new("a: {latency: 0s, rpm_limit: 60}\n", "[]");
    for i in 0..60 {
        assert_eq!(h.at(0, 100, 10).await, ("ok".into(), ms(0)), "call {i}");
    }
    // The bucket is empty; one request comes back every second.
    assert_eq!(
        h.at(0, 100, 10).await,
        ("rate_limit 1000ms".into(), QUOTA_REJECT_LATENCY)
    );
    // Half a second later half a request is back: still 1 s (whole seconds, rounded up).
    assert_eq!(h.at(500, 100, 10).await.0, "rate_limit 1000ms");
    // Rejections charged nothing: at 1 s there is exactly one request of room.
    assert_eq!(h.at(1000, 100, 10).await.0, "ok");
    assert_eq!(h.at(1000, 100, 10).await.0, "rate_limit 1000ms");
    // Ten seconds later, ten requests of room.
    let mut oks = 0;
    for _ in 0..12 {
        if h.at(11_000, 100, 10).await.0 == "ok" {
            oks += 1;
        }
    }
    assert_eq!(oks, 10);
    // Deployment b has no quota.
    for _ in 0..100 {
        assert!(h.call(1, &Request::new(1, "gpt")).await.is_ok());
    }

    let stats = h.fakes.stats_by_id("a").expect("a");
    assert_eq!(stats.quota_rejections, 5);
    assert_eq!(stats.failures_of(FailureKind::RateLimit), 5);
    assert_eq!(stats.ok, 71);
}

#[tokio::test(start_paused = true)]
async fn the_ms_format_sends_the_exact_wait_and_http_date_the_wall_clock() {
    let h = Harness::new(
        "a: {latency: 0s, rpm_limit: 120, quota_retry_after_format: ms}\n\
         b: {latency: 0s, rpm_limit: 1, quota_retry_after_format: http-date}\n",
        "[]",
    );
    for _ in 0..120 {
        assert_eq!(h.at(0, 1, 1).await.0, "ok");
    }
    // 2 per second: 500 ms to the next one; 300 ms later, 200 ms.
    assert_eq!(h.at(0, 1, 1).await.0, "rate_limit 500ms");
    assert_eq!(h.at(300, 1, 1).await.0, "rate_limit 200ms");

    let req = Request::new(1, "gpt");
    assert!(h.call(1, &req).await.is_ok());
    let rejected = h.call(1, &req).await.expect_err("over 1 rpm");
    // Checked at 300 ms: a minute later is 00:01:00.300, rounded up to the second.
    assert_eq!(
        rejected.retry_after,
        Some(RetryAfter::HttpDate("Thu, 01 Jan 2026 00:01:01 GMT".into()))
    );
    assert_eq!(rejected.status, Some(429));
}

#[tokio::test(start_paused = true)]
async fn tpm_charges_input_and_output_up_front() {
    let h = Harness::new("a: {latency: 0s, tpm_limit: 12000}\n", "[]");
    // 4000 in + 1000 out = 5000 per call: two fit, the third needs 3000 more tokens at
    // 200 per second: 15 s.
    assert_eq!(h.at(0, 4000, 1000).await.0, "ok");
    assert_eq!(h.at(0, 4000, 1000).await.0, "ok");
    assert_eq!(h.at(0, 4000, 1000).await.0, "rate_limit 15000ms");
    // A small call still fits in the 2000 left.
    assert_eq!(h.at(0, 1500, 500).await.0, "ok");
    // A prompt larger than the whole minute's quota never fits: 429 with no Retry-After.
    assert_eq!(h.at(0, 12_000, 1).await.0, "rate_limit");
    // 25 s later, 5000 are back.
    assert_eq!(h.at(25_000, 4000, 1000).await.0, "ok");
    assert_eq!(h.at(25_000, 1, 0).await.0, "rate_limit 1000ms");
}

#[tokio::test(start_paused = true)]
async fn the_answer_length_drawn_for_the_quota_is_the_answer() {
    // No request length: the provider's output_tokens is drawn once and both charged and sent.
    let h = Harness::new(
        "a: {latency: 0s, tpm_limit: 6000, output_tokens: 100..2000}\n",
        "[]",
    );
    let mut charged = 0u64;
    let mut rejected = false;
    for _ in 0..10 {
        let mut request = Request::new(0, "gpt");
        request.input_tokens = 1000;
        match h.call(0, &request).await {
            Ok(out) => {
                assert!((100..=2000).contains(&out));
                charged += 1000 + u64::from(out);
            }
            Err(f) => {
                assert_eq!(f.kind, FailureKind::RateLimit);
                rejected = true;
                break;
            }
        }
    }
    assert!(rejected && charged <= 6000, "charged {charged}");
}

#[tokio::test(start_paused = true)]
async fn context_window_comes_first_then_quota_then_script_then_windows() {
    let h = Harness::new(
        "a:\n  latency: 300ms\n  rpm_limit: 2\n  context_window: 1000\n  script: [internal_server, ok, ok, ok]\n",
        "- {deployment: a, from: 0s, error: bad_gateway, latency: 10ms}\n",
    );
    // Over the window: 400 and not charged (it consumes a script entry, as every call does).
    assert_eq!(
        h.at(0, 5000, 1).await,
        ("context_window_exceeded".into(), ms(300))
    );
    // Admitted, then script entry 2 (ok), then the window's bad_gateway: charged anyway.
    assert_eq!(h.at(0, 10, 1).await, ("bad_gateway".into(), ms(10)));
    assert_eq!(h.at(0, 10, 1).await, ("bad_gateway".into(), ms(10)));
    // Two requests used: the quota decides before the script and the window.
    assert_eq!(
        h.at(0, 10, 1).await,
        ("rate_limit 30000ms".into(), QUOTA_REJECT_LATENCY)
    );
}

#[tokio::test(start_paused = true)]
async fn a_scripted_error_after_admission_still_uses_the_quota() {
    let h = Harness::new(
        "a: {latency: 0s, rpm_limit: 1, script: [internal_server]}\n",
        "[]",
    );
    assert_eq!(h.at(0, 10, 1).await.0, "internal_server");
    assert_eq!(h.at(0, 10, 1).await.0, "rate_limit 60000ms");
    assert_eq!(h.at(60_000, 10, 1).await.0, "ok");
}

#[tokio::test(start_paused = true)]
async fn a_storm_is_deterministic() {
    async fn run() -> Vec<(String, Duration)> {
        let h = Harness::new(
            "a: {latency: {p50: 50ms, p99: 400ms}, rpm_limit: 30, tpm_limit: 20000}\n",
            "[]",
        );
        let mut seen = Vec::new();
        for i in 0..200u64 {
            seen.push(h.at(i * 700, 300 + (i as u32 % 7) * 200, 150).await);
        }
        seen
    }
    let first = run().await;
    assert!(first.iter().any(|(o, _)| o.starts_with("rate_limit")));
    assert!(first.iter().any(|(o, _)| o == "ok"));
    assert_eq!(first, run().await);
}

#[test]
fn a_zero_limit_is_an_error() {
    let err = serde_saphyr::from_str::<BTreeMap<String, ProviderSpec>>("a: {rpm_limit: 0}\n")
        .expect_err("0 is no limit");
    assert!(err.to_string().contains("at least 1"), "{err}");
    let spec: BTreeMap<String, ProviderSpec> =
        serde_saphyr::from_str("a: {rpm_limit: 120, tpm_limit: 90000}\n").expect("parses");
    assert_eq!(
        (spec["a"].rpm_limit, spec["a"].tpm_limit),
        (Some(120), Some(90000))
    );
}
