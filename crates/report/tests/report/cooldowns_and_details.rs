//! Cooldown intervals (re-cool extensions, late and early `CooldownEnd`, clipping at the run
//! end), the `detail` column of the remaining event kinds, error reporting and sink ergonomics.

use std::error::Error;
use std::fs;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use routersim_engine::event::{CooldownReason, CooldownSource, EventKind, EventSink, RoutingEvent};
use routersim_engine::failure::FailureKind;
use routersim_report::{Recorder, RecorderOptions, ReportError, RunMeta};
use tokio::time::Instant;

use super::out_dir;

type TestResult = Result<(), Box<dyn Error>>;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn cool(t0: Instant, at: u64, id: &str, until: u64) -> RoutingEvent {
    RoutingEvent {
        at: t0 + ms(at),
        request_id: Some(at),
        kind: EventKind::CooldownSet {
            model_group: Arc::from("g"),
            deployment_id: Arc::from(id),
            reason: CooldownReason::AllowedFailsExceeded,
            failure: FailureKind::InternalServer,
            duration: ms(until.saturating_sub(at)),
            source: CooldownSource::Router,
            until: t0 + ms(until),
        },
    }
}

fn uncool(t0: Instant, at: u64, id: &str) -> RoutingEvent {
    RoutingEvent {
        at: t0 + ms(at),
        request_id: None,
        kind: EventKind::CooldownEnd {
            model_group: Arc::from("g"),
            deployment_id: Arc::from(id),
        },
    }
}

fn meta(t0: Instant, end_ms: u64) -> RunMeta {
    RunMeta {
        scenario: "cooldowns".into(),
        seed: 1,
        version: "test".into(),
        end: t0 + ms(end_ms),
    }
}

#[tokio::test(start_paused = true)]
async fn cooldown_intervals_extend_end_and_clip() -> TestResult {
    let dir = out_dir("report", "cooldown-intervals")?;
    let t0 = Instant::now();
    let recorder = Recorder::new(&dir, t0, RecorderOptions { trace: false })?;
    let events = [
        cool(t0, 100, "w", 9000),    // ended early by the CooldownEnd at 1000
        cool(t0, 500, "y", 100_000), // still cooling at the run end (6000)
        uncool(t0, 1000, "w"),
        cool(t0, 1500, "x", 2500),
        cool(t0, 2000, "x", 3200), // re-cool while cooling: extends to 3200
        cool(t0, 3000, "z", 3000), // zero length: counted, never cooling
        cool(t0, 4000, "x", 4500), // the 3200 deadline passed without a CooldownEnd
        uncool(t0, 4700, "x"),     // late (lazy sweeper): the cooldown ended at 4500
        cool(t0, 4800, "x", 4900), // second 4 again: x counts once in it
        uncool(t0, 4900, "x"),
        uncool(t0, 4900, "unknown"), // no cooldown: ignored
    ];
    for event in &events {
        recorder.emit(event);
    }
    let summary = recorder.finish(meta(t0, 6000))?;

    assert_eq!(
        fs::read_to_string(dir.join("timeseries.csv"))?,
        "second,arrivals,ok,failed,retries,fallbacks,deployments_cooling,deployments_half_open,p50_ms,p90_ms,p99_ms,continuations
0,0,0,0,0,0,2,0,,,,0
1,0,0,0,0,0,2,0,,,,0
2,0,0,0,0,0,2,0,,,,0
3,0,0,0,0,0,2,0,,,,0
4,0,0,0,0,0,2,0,,,,0
5,0,0,0,0,0,1,0,,,,0
"
    );
    let by = &summary.cooldowns.by_deployment;
    let got: Vec<(&str, u64, f64)> = by
        .iter()
        .map(|(id, d)| (id.as_str(), d.count, d.total_cooled_ms))
        .collect();
    assert_eq!(
        got,
        vec![
            ("w", 1, 900.0),
            ("x", 4, 1700.0 + 500.0 + 100.0),
            ("y", 1, 5500.0),
            ("z", 1, 0.0),
        ]
    );
    assert_eq!(summary.cooldowns.total, 7);
    assert_eq!(summary.cooldowns.cooled_ms_total, 8700.0);
    assert_eq!(summary.metric("cooled_ms.x"), Some(2300.0));
    assert_eq!(summary.duration_ms, 4900.0);
    assert_eq!(summary.run_end_ms, 6000.0);
    // No requests: rates and latencies are zero, not NaN.
    assert_eq!(summary.metric("failed_rate"), Some(0.0));
    assert_eq!(summary.metric("p99_latency_ms"), Some(0.0));
    Ok(())
}

#[test]
fn details_of_the_other_event_kinds() -> TestResult {
    let dir = out_dir("report", "details")?;
    let t0 = Instant::now();
    let recorder = Recorder::new(&dir, t0, RecorderOptions::default())?;
    let ev = |at: u64, request_id: Option<u64>, kind: EventKind| RoutingEvent {
        at: t0 + Duration::from_micros(at),
        request_id,
        kind,
    };
    let events = [
        ev(
            1_500,
            Some(3),
            EventKind::AllCooled {
                model_group: Arc::from("gpt-4o"),
                retry_after: Duration::from_micros(4_998_500),
            },
        ),
        ev(
            2_000,
            Some(3),
            EventKind::OrderFallback {
                model_group: Arc::from("gpt-4o"),
                from_order: Some(1),
                to_order: None,
            },
        ),
        ev(
            2_001,
            None,
            EventKind::WeightedFailover {
                model_group: Arc::from("gpt-4o"),
                excluded: Arc::from("azure-east"),
            },
        ),
        // A comma in a name is quoted, per CSV.
        ev(
            3_000,
            Some(4),
            EventKind::GiveUp {
                model_group: Arc::from("a,b"),
                failure: FailureKind::RouterRateLimit,
                reason: routersim_engine::event::GiveUpReason::RetriesExhausted,
            },
        ),
    ];
    for event in &events {
        recorder.emit(event);
    }
    let summary = recorder.finish(meta(t0, 10))?;
    assert_eq!(
        fs::read_to_string(dir.join("events.csv"))?,
        "at_ms,event,model_group,deployment_id,detail
1.500,all_cooled,gpt-4o,,retry_after_ms=4998.500 request=3
2.000,order_fallback,gpt-4o,,from_order=1 to_order=none request=3
2.001,weighted_failover,gpt-4o,azure-east,excluded=azure-east
3.000,give_up,\"a,b\",,failure=router_rate_limit reason=retries_exhausted request=4
"
    );
    assert_eq!(summary.all_cooled, 1);
    // Every event lands in second 0; the series has exactly that row.
    assert_eq!(
        fs::read_to_string(dir.join("timeseries.csv"))?,
        "second,arrivals,ok,failed,retries,fallbacks,deployments_cooling,deployments_half_open,p50_ms,p90_ms,p99_ms,continuations\n0,0,0,0,0,0,0,0,,,,0\n"
    );
    assert_eq!(
        fs::read_to_string(dir.join("requests.csv"))?,
        "request_id,arrival_ms,model,final_model_group,final_deployment_id,outcome,status,attempts,retries,fallbacks,latency_ms,stream,stream_outcome,ttft_ms,tokens_delivered,tokens_billed,attempted_fallbacks,routing_failures,client_try\n"
    );
    Ok(())
}

#[test]
fn an_empty_run_writes_headers_only() -> TestResult {
    let dir = out_dir("report", "empty")?;
    let t0 = Instant::now();
    let recorder = Recorder::new(&dir, t0, RecorderOptions::default())?;
    let summary = recorder.finish(meta(t0, 0))?;
    assert_eq!(summary.requests, 0);
    assert_eq!(
        fs::read_to_string(dir.join("timeseries.csv"))?,
        "second,arrivals,ok,failed,retries,fallbacks,deployments_cooling,deployments_half_open,p50_ms,p90_ms,p99_ms,continuations\n"
    );
    assert!(fs::read_to_string(dir.join("latency.hgrm"))?.ends_with(
        "Total count    =            0]\n#[Buckets =            1, SubBuckets     =         2048]\n"
    ));
    Ok(())
}

#[test]
fn io_errors_name_the_path() -> TestResult {
    let base = out_dir("report", "not-a-dir")?;
    fs::create_dir_all(&base)?;
    let file = base.join("plain-file");
    fs::write(&file, b"x")?;
    match Recorder::new(&file, Instant::now(), RecorderOptions::default()) {
        Err(error @ ReportError::Io { .. }) => {
            assert!(error.to_string().contains("plain-file"), "{error}");
        }
        Err(other) => return Err(format!("unexpected error: {other}").into()),
        Ok(_) => return Err("a file is not a directory".into()),
    }
    Ok(())
}

fn drive(sink: impl EventSink, t0: Instant) {
    sink.emit(&cool(t0, 10, "d", 20));
}

#[test]
fn usable_through_references_rc_and_arc() -> TestResult {
    let t0 = Instant::now();

    let recorder = Rc::new(Recorder::new(
        out_dir("report", "rc")?,
        t0,
        RecorderOptions::default(),
    )?);
    drive(&*recorder, t0);
    let recorder = Rc::try_unwrap(recorder).map_err(|_| "still shared")?;
    assert_eq!(recorder.finish(meta(t0, 100))?.cooldowns.total, 1);

    let recorder = Arc::new(Recorder::new(
        out_dir("report", "arc")?,
        t0,
        RecorderOptions::default(),
    )?);
    drive(Arc::clone(&recorder), t0);
    let shared: Arc<dyn EventSink + Send + Sync> = recorder.clone();
    drive(&*shared, t0);
    drop(shared);
    let recorder = Arc::try_unwrap(recorder).map_err(|_| "still shared")?;
    assert_eq!(recorder.finish(meta(t0, 100))?.cooldowns.total, 2);
    Ok(())
}
