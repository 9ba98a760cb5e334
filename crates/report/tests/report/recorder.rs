//! The recorder on a hand-built event stream: exact bytes of every file.
//!
//! Scenario (times in ms since the run start):
//! - request 1 (`gpt-4o`): attempt 1 on `a` fails with a 429 at 200 → `a` cools until 5200,
//!   a retry after a 300 ms backoff goes to `b` and succeeds at 1500.
//! - request 2 (`gpt-4o`, arrives at 900): `b` answers 503 at 1200, the group gives up, a
//!   fallback hop goes to `claude` (deployment `c`), which times out at 2600.
//! - the sweeper ends `a`'s cooldown at 5200; the run ends at 6000.

use std::error::Error;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use routersim_engine::event::{
    CooldownReason, CooldownSource, EventKind, EventSink, FallbackLevel, GiveUpReason,
    RoutingEvent, WaitReason,
};
use routersim_engine::failure::FailureKind;
use routersim_report::{Recorder, RecorderOptions, RunMeta, Summary};
use tokio::time::Instant;

use super::out_dir;

type TestResult = Result<(), Box<dyn Error>>;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn s(text: &str) -> Arc<str> {
    Arc::from(text)
}

fn scenario(t0: Instant) -> Vec<RoutingEvent> {
    let ev = |at: u64, request_id: Option<u64>, kind: EventKind| RoutingEvent {
        at: t0 + ms(at),
        request_id,
        kind,
    };
    vec![
        ev(
            0,
            Some(1),
            EventKind::AttemptStart {
                attempt: 1,
                model_group: s("gpt-4o"),
                deployment_id: s("a"),
                fallback_depth: 0,
                max_tokens: None,
            },
        ),
        ev(
            200,
            Some(1),
            EventKind::AttemptEnd {
                attempt: 1,
                start: t0,
                model_group: s("gpt-4o"),
                deployment_id: s("a"),
                failure: Some(FailureKind::RateLimit),
                status: Some(429),
                retry_after: Some(ms(1000)),
                wait: Duration::ZERO,
                fallback_depth: 0,
            },
        ),
        ev(
            200,
            Some(1),
            EventKind::CooldownSet {
                model_group: s("gpt-4o"),
                deployment_id: s("a"),
                reason: CooldownReason::RateLimitInGroup,
                failure: FailureKind::RateLimit,
                duration: ms(5000),
                source: CooldownSource::Router,
                until: t0 + ms(5200),
            },
        ),
        ev(
            200,
            Some(1),
            EventKind::Retry {
                model_group: s("gpt-4o"),
                failure: FailureKind::RateLimit,
                retry: 1,
                budget: 2,
            },
        ),
        ev(
            200,
            Some(1),
            EventKind::Wait {
                duration: Duration::from_micros(300_250),
                reason: WaitReason::Backoff,
            },
        ),
        ev(
            500,
            Some(1),
            EventKind::AttemptStart {
                attempt: 2,
                model_group: s("gpt-4o"),
                deployment_id: s("b"),
                fallback_depth: 0,
                max_tokens: None,
            },
        ),
        ev(
            900,
            Some(2),
            EventKind::AttemptStart {
                attempt: 1,
                model_group: s("gpt-4o"),
                deployment_id: s("b"),
                fallback_depth: 0,
                max_tokens: None,
            },
        ),
        ev(
            1200,
            Some(2),
            EventKind::AttemptEnd {
                attempt: 1,
                start: t0 + ms(900),
                model_group: s("gpt-4o"),
                deployment_id: s("b"),
                failure: Some(FailureKind::ServiceUnavailable),
                status: Some(503),
                retry_after: None,
                wait: Duration::ZERO,
                fallback_depth: 0,
            },
        ),
        ev(
            1200,
            Some(2),
            EventKind::GiveUp {
                model_group: s("gpt-4o"),
                failure: FailureKind::ServiceUnavailable,
                reason: GiveUpReason::NoHealthyDeployment,
            },
        ),
        ev(
            1200,
            Some(2),
            EventKind::Fallback {
                source: s("gpt-4o"),
                target: s("claude"),
                order: 0,
                depth: 1,
                level: FallbackLevel::General,
                failure: FailureKind::ServiceUnavailable,
            },
        ),
        ev(
            1200,
            Some(2),
            EventKind::AttemptStart {
                attempt: 2,
                model_group: s("claude"),
                deployment_id: s("c"),
                fallback_depth: 1,
                max_tokens: None,
            },
        ),
        ev(
            1500,
            Some(1),
            EventKind::AttemptEnd {
                attempt: 2,
                start: t0 + ms(500),
                model_group: s("gpt-4o"),
                deployment_id: s("b"),
                failure: None,
                status: Some(200),
                retry_after: None,
                wait: Duration::from_micros(300_250),
                fallback_depth: 0,
            },
        ),
        ev(
            1500,
            Some(1),
            EventKind::RequestEnd {
                model: s("gpt-4o"),
                final_model_group: s("gpt-4o"),
                final_deployment_id: Some(s("b")),
                failure: None,
                status: Some(200),
                attempts: 2,
                retries: 1,
                fallbacks: 0,
                attempted_fallbacks: 0,
                start: t0,
                stream: None,
            },
        ),
        ev(
            2600,
            Some(2),
            EventKind::AttemptEnd {
                attempt: 2,
                start: t0 + ms(1200),
                model_group: s("claude"),
                deployment_id: s("c"),
                failure: Some(FailureKind::Timeout),
                status: None,
                retry_after: None,
                wait: Duration::ZERO,
                fallback_depth: 1,
            },
        ),
        ev(
            2600,
            Some(2),
            EventKind::RequestEnd {
                model: s("gpt-4o"),
                final_model_group: s("claude"),
                final_deployment_id: Some(s("c")),
                failure: Some(FailureKind::Timeout),
                status: None,
                attempts: 2,
                retries: 0,
                fallbacks: 1,
                attempted_fallbacks: 1,
                start: t0 + ms(900),
                stream: None,
            },
        ),
        ev(
            5200,
            None,
            EventKind::CooldownEnd {
                model_group: s("gpt-4o"),
                deployment_id: s("a"),
            },
        ),
    ]
}

fn meta(t0: Instant, end_ms: u64) -> RunMeta {
    RunMeta {
        scenario: "two-requests".into(),
        seed: 7,
        version: "0.1.0".into(),
        end: t0 + ms(end_ms),
    }
}

fn run(name: &str, trace: bool) -> Result<(PathBuf, Summary), Box<dyn Error>> {
    let dir = out_dir("report", name)?;
    let t0 = Instant::now();
    let recorder = Recorder::new(&dir, t0, RecorderOptions { trace })?;
    let sink: &dyn EventSink = &recorder;
    for event in scenario(t0) {
        sink.emit(&event);
    }
    let summary = recorder.finish(meta(t0, 6000))?;
    Ok((dir, summary))
}

fn read(dir: &Path, file: &str) -> Result<String, Box<dyn Error>> {
    Ok(fs::read_to_string(dir.join(file))?)
}

const REQUESTS: &str = "\
request_id,arrival_ms,model,final_model_group,final_deployment_id,outcome,status,attempts,retries,fallbacks,latency_ms,stream,stream_outcome,ttft_ms,tokens_delivered,tokens_billed,attempted_fallbacks,routing_failures,client_try
1,0.000,gpt-4o,gpt-4o,b,ok,200,2,1,0,1500.000,false,,,,,0,a:429:http_429,
2,900.000,gpt-4o,claude,c,timeout,,2,0,1,1700.000,false,,,,,1,b:503:http_503;c::timeout,
";

const ATTEMPTS: &str = "\
request_id,attempt,start_ms,end_ms,model_group,deployment_id,outcome,status,retry_after_ms,wait_ms,fallback_depth
1,1,0.000,200.000,gpt-4o,a,rate_limit,429,1000.000,0.000,0
2,1,900.000,1200.000,gpt-4o,b,service_unavailable,503,,0.000,0
1,2,500.000,1500.000,gpt-4o,b,ok,200,,300.250,0
2,2,1200.000,2600.000,claude,c,timeout,,,0.000,1
";

const EVENTS: &str = "\
at_ms,event,model_group,deployment_id,detail
200.000,cooldown_set,gpt-4o,a,reason=rate_limit_in_group failure=rate_limit duration_ms=5000.000 until_ms=5200.000 request=1
200.000,retry,gpt-4o,,failure=rate_limit retry=1 budget=2 request=1
200.000,wait,,,reason=backoff duration_ms=300.250 request=1
1200.000,give_up,gpt-4o,,failure=service_unavailable reason=no_healthy_deployment request=2
1200.000,fallback,gpt-4o,,from=gpt-4o to=claude depth=1 order=0 level=general failure=service_unavailable request=2
5200.000,cooldown_end,gpt-4o,a,
";

// Arrivals land in the second of `start` (request 2 arrives at 900 ms but ends at 2600 ms);
// `a` cools over [200, 5200) ms, so seconds 0..=5 have one cooling deployment.
//
// Latency columns: request 1 ends in second 1 after 1500 ms, request 2 in second 2 after
// 1700 ms; one request per second, so p50 = p90 = p99 = its latency (percentiles are capped at
// the second's maximum); the other seconds have no request end: empty cells.
const TIMESERIES: &str = "\
second,arrivals,ok,failed,retries,fallbacks,deployments_cooling,deployments_half_open,p50_ms,p90_ms,p99_ms,continuations
0,2,0,0,1,0,1,0,,,,0
1,0,1,0,0,1,1,0,1500.000,1500.000,1500.000,0
2,0,0,1,0,0,1,0,1700.000,1700.000,1700.000,0
3,0,0,0,0,0,1,0,,,,0
4,0,0,0,0,0,1,0,,,,0
5,0,0,0,0,0,1,0,,,,0
";

// By hand: second 0, `a`'s 429 (200 ms) and its cooldown [200, 5200) ms; second 1, `b`'s 503
// (900 → 1200: 300 ms) and its 200 (500 → 1500: 1000 ms), p50 the 300 ms sample's HdrHistogram
// bucket top (300.031 ms: 256 µs buckets at this magnitude), p99 capped at the max; second 2,
// `c`'s timeout (1200 → 2600: 1400 ms); `a` cooling, without attempts, through second 5 (the
// run ends at 6000 ms). Quiet, healthy deployments have no rows.
const DEPLOYMENTS: &str = "\
second,deployment_id,attempts,ok,errors,rate_limited,cooling,half_open,p50_ms,p99_ms
0,a,1,0,0,1,1,0,200.000,200.000
1,a,0,0,0,0,1,0,,
1,b,2,1,1,0,0,0,300.031,1000.000
2,a,0,0,0,0,1,0,,
2,c,1,0,1,0,0,0,1400.000,1400.000
3,a,0,0,0,0,1,0,,
4,a,0,0,0,0,1,0,,
5,a,0,0,0,0,1,0,,
";

// 1500 ms and 1700 ms in µs at 3 significant digits: buckets of 1024 µs, so the highest
// equivalent values are 1500.159 ms and 1700.863 ms.
const HGRM: &str = "       Value     Percentile TotalCount 1/(1-Percentile)

    1500.159 0.000000000000          1           1.00
    1500.159 0.100000000000          1           1.11
    1500.159 0.200000000000          1           1.25
    1500.159 0.300000000000          1           1.43
    1500.159 0.400000000000          1           1.67
    1500.159 0.500000000000          1           2.00
    1700.863 0.550000000000          2           2.22
    1700.863 1.000000000000          2
#[Mean    =     1600.000, StdDeviation   =      100.352]
#[Max     =     1700.863, Total count    =            2]
#[Buckets =           11, SubBuckets     =         2048]
";

const SUMMARY: &str = r#"{
  "scenario": "two-requests",
  "seed": 7,
  "routersim_version": "0.1.0",
  "requests": 2,
  "ok": 1,
  "failed": 1,
  "failed_by_kind": {
    "timeout": 1
  },
  "fallback_rate": 0.5,
  "retry_rate": 0.5,
  "retries": 1,
  "fallbacks": 1,
  "attempts": 4,
  "attempts_per_request": {
    "mean": 2.0,
    "max": 2
  },
  "latency_ms": {
    "p50": 1500.159,
    "p90": 1700.0,
    "p99": 1700.0,
    "p99_9": 1700.0,
    "max": 1700.0,
    "mean": 1600.0
  },
  "cooldowns": {
    "total": 1,
    "sets": 1,
    "periods": 1,
    "cooled_ms_total": 5000.0,
    "by_deployment": {
      "a": {
        "count": 1,
        "sets": 1,
        "periods": 1,
        "total_cooled_ms": 5000.0
      }
    }
  },
  "all_cooled": 0,
  "half_open": {
    "total": 0,
    "half_open_ms_total": 0.0,
    "recovered": 0,
    "probe_failed": 0,
    "by_deployment": {}
  },
  "streams": {
    "requests": 0,
    "outcomes": {
      "broken_after_content": 0,
      "broken_before_content": 0,
      "completed": 0,
      "continued": 0,
      "empty": 0,
      "stalled": 0
    },
    "continuation_rate": 0.0,
    "tokens_delivered": 0,
    "tokens_billed": 0,
    "ttft_ms": {
      "p50": 0.0,
      "p90": 0.0,
      "p99": 0.0,
      "max": 0.0
    },
    "inter_token_ms": {
      "p50": 0.0,
      "p99": 0.0,
      "max": 0.0
    }
  },
  "stream_breaks": {
    "connection": 0,
    "content_filter": 0,
    "empty_response": 0,
    "error_frame": 0,
    "first_token_timeout": 0,
    "stall": 0,
    "truncated": 0
  },
  "duration_ms": 5200.0,
  "run_end_ms": 6000.0,
  "windows": [],
  "events": {
    "attempt_end": 4,
    "attempt_start": 4,
    "cooldown_end": 1,
    "cooldown_set": 1,
    "fallback": 1,
    "give_up": 1,
    "request_end": 2,
    "retry": 1,
    "wait": 1
  },
  "deadline_exhausted": 0,
  "deadline_exhaustion_rate": 0.0,
  "attempts_per_completed_request": 2.0,
  "ambiguous_outcomes": 0,
  "ambiguous_replays": 0,
  "duplicate_executions": 0,
  "cost_per_accepted_response": null,
  "client_retries": 0,
  "user_requests": 2,
  "provider_calls_per_user_request": {
    "mean": 2.0,
    "max": 2
  },
  "latency_by_final_route": {
    "b": {
      "count": 1,
      "p50": 1500.0,
      "p99": 1500.0
    },
    "c": {
      "count": 1,
      "p50": 1700.0,
      "p99": 1700.0
    }
  }
}
"#;

/// One line per request, in `RequestEnd` order.
const ROUTING: &str = r#"{"id":1,"model":"gpt-4o","attempts":2,"routing":{"failures":[{"provider":"a","status":429,"reason":"http_429"}]},"final_deployment":"b","outcome":"ok"}
{"id":2,"model":"gpt-4o","attempts":2,"routing":{"failures":[{"provider":"b","status":503,"reason":"http_503"},{"provider":"c","status":null,"reason":"timeout"}]},"final_deployment":"c","outcome":"timeout"}
"#;

const ALL_FILES: [&str; 11] = [
    "deployments.csv",
    "latency.hlog",
    "requests.csv",
    "routing.jsonl",
    "attempts.csv",
    "events.csv",
    "timeseries.csv",
    "latency.hgrm",
    "ttft.hgrm",
    "inter_token.hgrm",
    "summary.json",
];

// A run without streams still writes both stream histograms, empty.
const EMPTY_HGRM: &str = "       Value     Percentile TotalCount 1/(1-Percentile)

#[Mean    =        0.000, StdDeviation   =        0.000]
#[Max     =        0.000, Total count    =            0]
#[Buckets =            1, SubBuckets     =         2048]
";

#[test]
fn trace_files_are_exact() -> TestResult {
    let (dir, _) = run("trace", true)?;
    assert_eq!(read(&dir, "requests.csv")?, REQUESTS);
    assert_eq!(read(&dir, "attempts.csv")?, ATTEMPTS);
    assert_eq!(read(&dir, "events.csv")?, EVENTS);
    assert_eq!(read(&dir, "routing.jsonl")?, ROUTING);
    Ok(())
}

#[test]
fn timeseries_counts_arrivals_at_start_and_cooling_across_seconds() -> TestResult {
    let (dir, _) = run("timeseries", true)?;
    assert_eq!(read(&dir, "timeseries.csv")?, TIMESERIES);
    Ok(())
}

#[test]
fn deployments_csv_has_a_row_per_second_with_attempts_or_a_cooldown() -> TestResult {
    let (dir, _) = run("deployments", true)?;
    assert_eq!(read(&dir, "deployments.csv")?, DEPLOYMENTS);
    Ok(())
}

#[test]
fn latency_hlog_reads_back_one_interval_per_ten_seconds_with_a_request_end() -> TestResult {
    use base64::Engine as _;
    use hdrhistogram::serialization::Deserializer;
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};

    let (dir, summary) = run("hlog", true)?;
    let log = fs::read(dir.join("latency.hlog"))?;
    let text = String::from_utf8(log.clone())?;
    // Virtual time, not the wall clock: the run's epoch is 0.
    assert!(
        text.contains("#[StartTime: 0.000 (seconds since epoch)]"),
        "{text}"
    );
    assert!(
        text.contains("#[BaseTime: 0.000 (seconds since epoch)]"),
        "{text}"
    );
    let mut intervals = Vec::new();
    let mut total = 0;
    for entry in IntervalLogIterator::new(&log) {
        let LogEntry::Interval(interval) = entry.map_err(|e| format!("{e:?}"))? else {
            continue;
        };
        let bytes =
            base64::engine::general_purpose::STANDARD.decode(interval.encoded_histogram())?;
        let hist: hdrhistogram::Histogram<u64> = Deserializer::new()
            .deserialize(&mut bytes.as_slice())
            .map_err(|e| format!("{e:?}"))?;
        total += hist.len();
        intervals.push((
            interval.start_timestamp().as_secs(),
            interval.duration().as_secs(),
            hist.len(),
            hist.equivalent_range(hist.max()) > 0 && hist.equivalent(hist.max(), 1_500_000),
        ));
    }
    // Request 1 ends in second 1 (1500 ms), request 2 in second 2 (1700 ms): one 10 s
    // interval from 0 holds both, and its max is the 1700 ms one.
    assert_eq!(intervals, vec![(0, 10, 2, false)]);
    assert_eq!(total, summary.requests);
    Ok(())
}

#[test]
fn hgrm_has_the_standard_layout() -> TestResult {
    let (dir, _) = run("hgrm", true)?;
    let text = read(&dir, "latency.hgrm")?;
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines.first().copied(),
        Some("       Value     Percentile TotalCount 1/(1-Percentile)")
    );
    assert!(lines.contains(&"    1500.159 0.500000000000          1           2.00"));
    assert_eq!(
        lines.last().copied(),
        Some("#[Buckets =           11, SubBuckets     =         2048]")
    );
    assert_eq!(text, HGRM);
    assert_eq!(read(&dir, "ttft.hgrm")?, EMPTY_HGRM);
    assert_eq!(read(&dir, "inter_token.hgrm")?, EMPTY_HGRM);
    Ok(())
}

#[test]
fn summary_numbers_and_json() -> TestResult {
    let (dir, summary) = run("summary", true)?;
    assert_eq!(read(&dir, "summary.json")?, SUMMARY);
    assert_eq!((summary.requests, summary.ok, summary.failed), (2, 1, 1));
    assert_eq!(summary.failed_by_kind.get("timeout"), Some(&1));
    assert_eq!(summary.fallback_rate, 0.5);
    assert_eq!(summary.retry_rate, 0.5);
    assert_eq!(summary.attempts_per_request.mean, 2.0);
    assert_eq!(summary.latency_ms.p50, 1500.159);
    assert_eq!(summary.latency_ms.max, 1700.0);
    assert_eq!(summary.cooldowns.total, 1);
    assert_eq!(summary.duration_ms, 5200.0);
    // The file reads back as the returned summary.
    let parsed: Summary = serde_json::from_str(&read(&dir, "summary.json")?)?;
    assert_eq!(parsed, summary);
    Ok(())
}

#[test]
fn metrics_answer_expect_lines() -> TestResult {
    let (_, summary) = run("metrics", true)?;
    let m = |name: &str| summary.metric(name);
    assert_eq!(m("requests"), Some(2.0));
    assert_eq!(m("failed_rate"), Some(0.5));
    assert_eq!(m("fallback_rate"), Some(0.5));
    assert_eq!(m("retries"), Some(1.0));
    assert_eq!(m("attempts_per_request_mean"), Some(2.0));
    assert_eq!(m("attempts_max"), Some(2.0));
    assert_eq!(m("p50_latency_ms"), Some(1500.159));
    assert_eq!(m("p999_latency_ms"), Some(1700.0));
    assert_eq!(m("mean_latency_ms"), Some(1600.0));
    assert_eq!(m("cooldowns"), Some(1.0));
    assert_eq!(m("cooled_ms_total"), Some(5000.0));
    assert_eq!(m("all_cooled"), Some(0.0));
    assert_eq!(m("failed.timeout"), Some(1.0));
    assert_eq!(m("failed.rate_limit"), Some(0.0));
    assert_eq!(m("failed.nonsense"), None);
    assert_eq!(m("cooldowns.a"), Some(1.0));
    assert_eq!(m("cooled_ms.a"), Some(5000.0));
    assert_eq!(m("cooled_ms.zzz"), Some(0.0));
    assert_eq!(m("p42_latency_ms"), None);
    // No streams: every stream metric is 0, not missing.
    assert_eq!(m("streamed"), Some(0.0));
    assert_eq!(m("continuation_rate"), Some(0.0));
    assert_eq!(m("p99_ttft_ms"), Some(0.0));
    assert_eq!(m("stream_breaks"), Some(0.0));
    // Every plain listed name is answered (but the cost of a run without prices: none).
    assert_eq!(m("cost_per_accepted_response"), None);
    for name in routersim_report::METRICS
        .iter()
        .filter(|n| !n.contains('<') && **n != "cost_per_accepted_response")
    {
        assert!(m(name).is_some(), "{name}");
        assert!(routersim_report::is_known_metric(name), "{name}");
    }
    assert!(routersim_report::is_known_metric(
        "failed.context_window_exceeded"
    ));
    assert!(!routersim_report::is_known_metric("failed.nonsense"));
    assert!(!routersim_report::is_known_metric("cooldowns."));
    assert!(routersim_report::describe_metrics().contains("p99_latency_ms"));
    Ok(())
}

#[test]
fn print_summary_is_short() -> TestResult {
    let (_, summary) = run("print", true)?;
    let mut out = Vec::new();
    routersim_report::print_summary(&summary, &mut out)?;
    assert_eq!(
        String::from_utf8(out)?,
        "two-requests (seed 7): 2 requests in 5.200 s virtual
  ok 1, failed 1 (timeout 1)
  fallback rate 50.00% (1 hops), retry rate 50.00% (1 retries), 2.00 attempts/request (max 2)
  latency p50 1500.159 ms, p99 1700.000 ms, max 1700.000 ms
  cooldown periods 1, cooldown sets 1 (5000.000 ms cooled), all-cooled picks 0: a 1 period/1 set/5000.000 ms
  deadline exhausted 0 (0.00%), 2.00 attempts/completed request; by final route: b 1× p99 1500.000 ms, c 1× p99 1700.000 ms
"
    );
    Ok(())
}

#[test]
fn trace_none_skips_request_and_attempt_files() -> TestResult {
    let (dir, summary) = run("notrace", false)?;
    assert!(!dir.join("requests.csv").exists());
    assert!(!dir.join("attempts.csv").exists());
    assert!(!dir.join("routing.jsonl").exists());
    assert_eq!(read(&dir, "events.csv")?, EVENTS);
    assert_eq!(read(&dir, "timeseries.csv")?, TIMESERIES);
    assert_eq!(read(&dir, "deployments.csv")?, DEPLOYMENTS);
    assert_eq!(read(&dir, "latency.hgrm")?, HGRM);
    assert_eq!(read(&dir, "summary.json")?, SUMMARY);
    assert_eq!(summary.requests, 2);
    Ok(())
}

#[test]
fn replaying_the_same_events_gives_identical_bytes() -> TestResult {
    let (first, _) = run("replay-1", true)?;
    let (second, _) = run("replay-2", true)?;
    for file in ALL_FILES {
        assert_eq!(
            fs::read(first.join(file))?,
            fs::read(second.join(file))?,
            "{file}"
        );
    }
    Ok(())
}
