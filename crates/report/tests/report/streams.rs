//! Streams in the reports: the `requests.csv` stream columns, `stream_break` and
//! `stream_continued` rows, `ttft.hgrm` and `inter_token.hgrm`, the summary's stream section and
//! the stream metrics.
//!
//! Scenario (times in ms since the run start; attempts left out, the recorder needs none):
//! - request 1 streams from `a`: a 1-token chunk, then 5 tokens 30 ms later, 20 ms apart;
//!   completed, TTFT 100 ms, 6 tokens.
//! - request 2 streams 3 tokens from `a`, which drops the connection at 200; the stream
//!   continues on `claude`/`c` (400 ms to its first token, then 10 ms apart); continued,
//!   TTFT 250 ms, 8 tokens.
//! - request 3 streams 2 tokens from `b`, then an error frame at 300; the group gives up
//!   (content was delivered) and the request fails: broken after content, TTFT 50 ms, 2 tokens
//!   delivered, none billed.
//! - request 4 is streamed but no stream ever opened (it fails up front): no outcome, no TTFT.
//! - request 5 is not streamed.

use std::error::Error;
use std::fs;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use routersim_engine::event::{EventKind, EventSink, GiveUpReason, RoutingEvent};
use routersim_engine::failure::FailureKind;
use routersim_engine::stream::{BreakKind, StreamOutcome, StreamStats};
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

fn chunk(tokens: u32, gap_before: Option<u64>, inner_gap: u64) -> EventKind {
    EventKind::StreamChunk {
        tokens,
        gap_before: gap_before.map(ms),
        inner_gap: ms(inner_gap),
    }
}

fn end(
    t0: Instant,
    deployment: &str,
    failure: Option<FailureKind>,
    stream: Option<StreamStats>,
) -> EventKind {
    EventKind::RequestEnd {
        model: s("gpt-4o"),
        final_model_group: s("gpt-4o"),
        final_deployment_id: Some(s(deployment)),
        failure,
        status: if failure.is_none() { Some(200) } else { None },
        attempts: 1,
        retries: 0,
        fallbacks: 0,
        attempted_fallbacks: 0,
        start: t0,
        stream,
    }
}

fn stats(
    outcome: Option<StreamOutcome>,
    ttft: Option<u64>,
    delivered: u32,
    billed: u32,
) -> StreamStats {
    StreamStats {
        outcome,
        ttft: ttft.map(ms),
        tokens_delivered: delivered,
        tokens_billed: billed,
    }
}

fn scenario(t0: Instant) -> Vec<RoutingEvent> {
    let ev = |at: u64, id: u64, kind: EventKind| RoutingEvent {
        at: t0 + ms(at),
        request_id: Some(id),
        kind,
    };
    vec![
        ev(50, 3, chunk(2, None, 40)),
        ev(100, 1, chunk(1, None, 0)),
        ev(100, 2, chunk(3, None, 10)),
        // A content-less delivery: no token, no gap.
        ev(110, 1, chunk(0, Some(5), 0)),
        ev(
            200,
            2,
            EventKind::StreamBreak {
                model_group: s("gpt-4o"),
                deployment_id: s("a"),
                failure: FailureKind::ApiConnection,
                how: BreakKind::Connection,
                tokens_so_far: 3,
                after_content: true,
            },
        ),
        ev(
            200,
            2,
            EventKind::StreamContinued {
                from_group: s("gpt-4o"),
                from_deployment: s("a"),
                to_group: s("claude"),
                to_deployment: s("c"),
                prefill_tokens: 3,
            },
        ),
        ev(210, 1, chunk(5, Some(30), 20)),
        ev(
            210,
            1,
            end(
                t0,
                "a",
                None,
                Some(stats(Some(StreamOutcome::Completed), Some(100), 6, 6)),
            ),
        ),
        ev(
            300,
            3,
            EventKind::StreamBreak {
                model_group: s("gpt-4o"),
                deployment_id: s("b"),
                failure: FailureKind::InternalServer,
                how: BreakKind::ErrorFrame,
                tokens_so_far: 2,
                after_content: true,
            },
        ),
        ev(
            300,
            3,
            EventKind::GiveUp {
                model_group: s("gpt-4o"),
                failure: FailureKind::InternalServer,
                reason: GiveUpReason::StreamContentDelivered,
            },
        ),
        ev(
            300,
            3,
            end(
                t0,
                "b",
                Some(FailureKind::InternalServer),
                Some(stats(
                    Some(StreamOutcome::BrokenAfterContent),
                    Some(50),
                    2,
                    0,
                )),
            ),
        ),
        ev(
            400,
            4,
            end(
                t0,
                "a",
                Some(FailureKind::ServiceUnavailable),
                Some(stats(None, None, 0, 0)),
            ),
        ),
        ev(500, 5, end(t0, "a", None, None)),
        ev(600, 2, chunk(5, Some(400), 10)),
        ev(
            640,
            2,
            end(
                t0,
                "c",
                None,
                Some(stats(Some(StreamOutcome::Continued), Some(250), 8, 8)),
            ),
        ),
    ]
}

fn run(name: &str) -> Result<(PathBuf, Summary), Box<dyn Error>> {
    let dir = out_dir("report-streams", name)?;
    let t0 = Instant::now();
    let recorder = Recorder::new(&dir, t0, RecorderOptions::default())?;
    for event in scenario(t0) {
        recorder.emit(&event);
    }
    let summary = recorder.finish(RunMeta {
        scenario: "streams".into(),
        seed: 3,
        version: "test".into(),
        end: t0 + ms(1000),
    })?;
    Ok((dir, summary))
}

fn read(dir: &std::path::Path, file: &str) -> Result<String, Box<dyn Error>> {
    Ok(fs::read_to_string(dir.join(file))?)
}

#[test]
fn requests_csv_appends_the_stream_columns() -> TestResult {
    let (dir, _) = run("requests")?;
    assert_eq!(
        read(&dir, "requests.csv")?,
        "\
request_id,arrival_ms,model,final_model_group,final_deployment_id,outcome,status,attempts,retries,fallbacks,latency_ms,stream,stream_outcome,ttft_ms,tokens_delivered,tokens_billed,attempted_fallbacks,routing_failures,client_try
1,0.000,gpt-4o,gpt-4o,a,ok,200,1,0,0,210.000,true,completed,100.000,6,6,0,,
3,0.000,gpt-4o,gpt-4o,b,internal_server,,1,0,0,300.000,true,broken_after_content,50.000,2,0,0,,
4,0.000,gpt-4o,gpt-4o,a,service_unavailable,,1,0,0,400.000,true,,,0,0,0,,
5,0.000,gpt-4o,gpt-4o,a,ok,200,1,0,0,500.000,false,,,,,0,,
2,0.000,gpt-4o,gpt-4o,c,ok,200,1,0,0,640.000,true,continued,250.000,8,8,0,,
"
    );
    Ok(())
}

#[test]
fn events_csv_has_breaks_and_continuations_but_no_chunks() -> TestResult {
    let (dir, _) = run("events")?;
    assert_eq!(
        read(&dir, "events.csv")?,
        "\
at_ms,event,model_group,deployment_id,detail
200.000,stream_break,gpt-4o,a,failure=api_connection how=connection tokens_so_far=3 after_content=true request=2
200.000,stream_continued,gpt-4o,a,to_group=claude to_deployment=c prefill_tokens=3 request=2
300.000,stream_break,gpt-4o,b,failure=internal_server how=error_frame tokens_so_far=2 after_content=true request=3
300.000,give_up,gpt-4o,,failure=internal_server reason=stream_content_delivered request=3
"
    );
    Ok(())
}

/// `timeseries.csv`'s last column counts the continuations per second (one at 200 ms).
#[test]
fn timeseries_counts_continuations_in_its_last_column() -> TestResult {
    let (dir, _) = run("continuations")?;
    let csv = read(&dir, "timeseries.csv")?;
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap_or_default().split(',').collect();
    assert_eq!(header.last(), Some(&"continuations"), "{csv}");
    let column = header.len() - 1;
    let total: u64 = lines
        .map(|l| {
            l.split(',')
                .nth(column)
                .unwrap_or("x")
                .parse::<u64>()
                .unwrap()
        })
        .sum();
    assert_eq!(total, 1, "{csv}");
    Ok(())
}

/// A chunk of 5 tokens 20 ms apart is four 20 ms gaps (20000 µs sits in a bucket of 16 µs,
/// printed as its highest equivalent value, 20.015 ms; the mean uses the bucket's middle).
#[test]
fn inter_token_hgrm_counts_inner_gaps() -> TestResult {
    let dir = out_dir("report-streams", "inner-gaps")?;
    let t0 = Instant::now();
    let recorder = Recorder::new(&dir, t0, RecorderOptions { trace: false })?;
    recorder.emit(&RoutingEvent {
        at: t0 + ms(100),
        request_id: Some(1),
        kind: chunk(5, None, 20),
    });
    let summary = recorder.finish(RunMeta {
        scenario: "chunk".into(),
        seed: 0,
        version: "test".into(),
        end: t0 + ms(100),
    })?;
    assert_eq!(
        read(&dir, "inter_token.hgrm")?,
        "       Value     Percentile TotalCount 1/(1-Percentile)

      20.015 0.000000000000          4           1.00
      20.015 1.000000000000          4
#[Mean    =       20.008, StdDeviation   =        0.000]
#[Max     =       20.015, Total count    =            4]
#[Buckets =            5, SubBuckets     =         2048]
"
    );
    // No RequestEnd: no TTFT sample, and the chunk alone does not make a streamed request.
    assert!(read(&dir, "ttft.hgrm")?.contains("Total count    =            0]"));
    assert_eq!(summary.streams.requests, 0);
    assert_eq!(summary.streams.inter_token_ms.p50, 20.0);
    assert_eq!(summary.streams.inter_token_ms.max, 20.0);
    Ok(())
}

#[test]
fn ttft_and_inter_token_histograms() -> TestResult {
    let (dir, _) = run("hgrm")?;
    // Three TTFTs: 50, 100 and 250 ms.
    assert_eq!(
        read(&dir, "ttft.hgrm")?,
        "       Value     Percentile TotalCount 1/(1-Percentile)

      50.015 0.000000000000          1           1.00
      50.015 0.100000000000          1           1.11
      50.015 0.200000000000          1           1.25
      50.015 0.300000000000          1           1.43
     100.031 0.400000000000          2           1.67
     100.031 0.500000000000          2           2.00
     100.031 0.550000000000          2           2.22
     100.031 0.600000000000          2           2.50
     100.031 0.650000000000          2           2.86
     250.111 0.700000000000          3           3.33
     250.111 1.000000000000          3
#[Mean    =      133.349, StdDeviation   =       85.006]
#[Max     =      250.111, Total count    =            3]
#[Buckets =            8, SubBuckets     =         2048]
"
    );
    // Gaps: 40 ms once (request 3), 10 ms twice then 400 ms once and 10 ms four times
    // (request 2), 30 ms once and 20 ms four times (request 1): 13 samples; the first chunk of
    // each stream and the 0-token chunk add none.
    let text = read(&dir, "inter_token.hgrm")?;
    assert!(
        text.contains("#[Max     =      400.127, Total count    =           13]"),
        "{text}"
    );
    Ok(())
}

#[test]
fn summary_stream_section() -> TestResult {
    let (dir, summary) = run("summary")?;
    let json = read(&dir, "summary.json")?;
    let expected = r#"  "streams": {
    "requests": 4,
    "outcomes": {
      "broken_after_content": 1,
      "broken_before_content": 0,
      "completed": 1,
      "continued": 1,
      "empty": 0,
      "stalled": 0
    },
    "continuation_rate": 0.5,
    "tokens_delivered": 16,
    "tokens_billed": 14,
    "ttft_ms": {
      "p50": 100.031,
      "p90": 250.0,
      "p99": 250.0,
      "max": 250.0
    },
    "inter_token_ms": {
      "p50": 20.015,
      "p99": 400.0,
      "max": 400.0
    }
  },
  "stream_breaks": {
    "connection": 1,
    "content_filter": 0,
    "empty_response": 0,
    "error_frame": 1,
    "first_token_timeout": 0,
    "stall": 0,
    "truncated": 0
  },
"#;
    assert!(json.contains(expected), "{json}");
    assert!(
        json.contains("\"stream_chunk\": 6"),
        "chunks are counted as events"
    );
    let parsed: Summary = serde_json::from_str(&json)?;
    assert_eq!(parsed, summary);
    Ok(())
}

#[test]
fn stream_metrics() -> TestResult {
    let (_, summary) = run("metrics")?;
    let m = |name: &str| summary.metric(name);
    assert_eq!(m("streamed"), Some(4.0));
    assert_eq!(m("stream_completed"), Some(1.0));
    assert_eq!(m("stream_broken_before_content"), Some(0.0));
    assert_eq!(m("stream_broken_after_content"), Some(1.0));
    assert_eq!(m("stream_continued"), Some(1.0));
    assert_eq!(m("stream_stalled"), Some(0.0));
    assert_eq!(m("stream_empty"), Some(0.0));
    assert_eq!(m("continuation_rate"), Some(0.5));
    assert_eq!(m("p50_ttft_ms"), Some(100.031));
    assert_eq!(m("p99_ttft_ms"), Some(250.0));
    assert_eq!(m("tokens_delivered"), Some(16.0));
    assert_eq!(m("tokens_billed"), Some(14.0));
    assert_eq!(m("stream_breaks"), Some(2.0));
    assert_eq!(m("stream_breaks.connection"), Some(1.0));
    assert_eq!(m("stream_breaks.stall"), Some(0.0));
    assert_eq!(m("stream_breaks.nonsense"), None);
    assert_eq!(m("stream_nonsense"), None);
    assert!(routersim_report::is_known_metric(
        "stream_breaks.first_token_timeout"
    ));
    assert!(!routersim_report::is_known_metric("stream_breaks.nonsense"));
    assert!(routersim_report::is_known_metric(
        "stream_broken_after_content"
    ));
    assert!(!routersim_report::is_known_metric("stream_nonsense"));
    assert!(routersim_report::describe_metrics().contains("first_token_timeout"));
    Ok(())
}

/// `continued ÷ (continued + broken_after_content)`, 0 without a break after content; other
/// outcomes do not count.
#[test]
fn continuation_rate_arithmetic() -> TestResult {
    let rate = |outcomes: &[StreamOutcome]| -> Result<f64, Box<dyn Error>> {
        let dir = out_dir("report-streams", &format!("rate-{}", outcomes.len()))?;
        let t0 = Instant::now();
        let recorder = Recorder::new(&dir, t0, RecorderOptions { trace: false })?;
        for (i, o) in outcomes.iter().enumerate() {
            recorder.emit(&RoutingEvent {
                at: t0 + ms(10),
                request_id: Some(i as u64),
                kind: end(t0, "a", None, Some(stats(Some(*o), None, 0, 0))),
            });
        }
        let summary = recorder.finish(RunMeta {
            scenario: "rate".into(),
            seed: 0,
            version: "test".into(),
            end: t0 + ms(10),
        })?;
        Ok(summary.streams.continuation_rate)
    };
    use StreamOutcome::*;
    assert_eq!(rate(&[])?, 0.0);
    assert_eq!(rate(&[Completed, Stalled, BrokenBeforeContent])?, 0.0);
    assert_eq!(rate(&[Continued, Completed, Empty, Stalled])?, 1.0);
    assert_eq!(
        rate(&[
            Continued,
            BrokenAfterContent,
            BrokenAfterContent,
            Completed,
            Completed
        ])?,
        0.333333
    );
    assert_eq!(rate(&[BrokenAfterContent])?, 0.0);
    Ok(())
}

#[test]
fn print_summary_has_a_stream_line() -> TestResult {
    let (_, summary) = run("print")?;
    let mut out = Vec::new();
    routersim_report::print_summary(&summary, &mut out)?;
    let text = String::from_utf8(out)?;
    assert!(
        text.ends_with(
            "  streams 4 (broken_after_content 1, completed 1, continued 1), continuation rate 50.00%, ttft p50 100.031 ms, p99 250.000 ms\n"
        ),
        "{text}"
    );
    Ok(())
}

#[test]
fn replaying_streams_gives_identical_bytes() -> TestResult {
    let (first, _) = run("replay-1")?;
    let (second, _) = run("replay-2")?;
    for file in [
        "requests.csv",
        "events.csv",
        "timeseries.csv",
        "latency.hgrm",
        "ttft.hgrm",
        "inter_token.hgrm",
        "summary.json",
    ] {
        assert_eq!(
            fs::read(first.join(file))?,
            fs::read(second.join(file))?,
            "{file}"
        );
    }
    Ok(())
}
