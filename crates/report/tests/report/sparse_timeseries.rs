//! `timeseries.csv` and `timeline.svg` over long virtual times: memory and file size follow
//! the activity, never the virtual duration. Up to a day every second is a row; past that only
//! the seconds with a count or a change of the cooling/half-open levels (and the last one).

use std::error::Error;
use std::fs;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use routersim_engine::event::{CooldownReason, CooldownSource, EventKind, EventSink, RoutingEvent};
use routersim_engine::failure::FailureKind;
use routersim_report::plot::TIMELINE_SVG;
use routersim_report::{DeploymentLane, PlotContext, Recorder, RecorderOptions, RunMeta, Summary};
use tokio::time::Instant;

use super::out_dir;

type TestResult = Result<(), Box<dyn Error>>;

const HEADER: &str = "second,arrivals,ok,failed,retries,fallbacks,deployments_cooling,deployments_half_open,p50_ms,p90_ms,p99_ms,continuations\n";
const DAY_S: u64 = 86_400;
const YEAR_S: u64 = 365 * DAY_S;

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

fn s(text: &str) -> Arc<str> {
    Arc::from(text)
}

/// A successful request that arrived at `start` and ended at `end` (seconds).
fn request(t0: Instant, id: u64, start: u64, end: u64) -> RoutingEvent {
    RoutingEvent {
        at: t0 + secs(end),
        request_id: Some(id),
        kind: EventKind::RequestEnd {
            model: s("gpt-4o"),
            final_model_group: s("gpt-4o"),
            final_deployment_id: Some(s("a")),
            failure: None,
            status: Some(200),
            attempts: 1,
            retries: 0,
            fallbacks: 0,
            attempted_fallbacks: 0,
            start: t0 + secs(start),
            stream: None,
        },
    }
}

fn cool(t0: Instant, at: u64, id: &str, until: u64) -> RoutingEvent {
    RoutingEvent {
        at: t0 + secs(at),
        request_id: None,
        kind: EventKind::CooldownSet {
            model_group: s("gpt-4o"),
            deployment_id: s(id),
            reason: CooldownReason::RateLimitInGroup,
            failure: FailureKind::RateLimit,
            duration: secs(until - at),
            source: CooldownSource::Router,
            until: t0 + secs(until),
        },
    }
}

fn half_open(t0: Instant, at: u64, id: &str) -> RoutingEvent {
    RoutingEvent {
        at: t0 + secs(at),
        request_id: None,
        kind: EventKind::HalfOpen {
            model_group: s("gpt-4o"),
            deployment_id: s(id),
        },
    }
}

fn context() -> PlotContext {
    PlotContext {
        deployments: vec![DeploymentLane {
            id: "a".into(),
            model_group: "gpt-4o".into(),
        }],
        faults: Vec::new(),
    }
}

/// Records `events` (sorted by time) into `dir`, finishing at `end_s`, plots included.
fn record(
    dir: &Path,
    t0: Instant,
    mut events: Vec<RoutingEvent>,
    end_s: u64,
) -> Result<Summary, Box<dyn Error>> {
    events.sort_by_key(|e| e.at);
    let recorder =
        Recorder::new(dir, t0, RecorderOptions { trace: false })?.with_plot_context(context());
    for event in &events {
        recorder.emit(event);
    }
    Ok(recorder.finish(RunMeta {
        scenario: "sparse".into(),
        seed: 1,
        version: "test".into(),
        end: t0 + secs(end_s),
    })?)
}

/// `csv == expected`, showing at most the first 2,000 characters of a mismatch (a dense year
/// would be 700 MB of failure message).
fn assert_csv(csv: &str, expected: &str) {
    let head = |t: &str| t.chars().take(2000).collect::<String>();
    assert!(
        csv == expected,
        "{} bytes, {} rows; expected\n{expected}\nfound (start)\n{}",
        csv.len(),
        csv.lines().count(),
        head(csv)
    );
}

/// The `second` column of every data row.
fn seconds(csv: &str) -> Vec<u64> {
    csv.lines()
        .skip(1)
        .map(|l| {
            l.split(',')
                .next()
                .and_then(|c| c.parse().ok())
                .unwrap_or(u64::MAX)
        })
        .collect()
}

#[test]
fn a_year_between_two_requests_writes_only_the_busy_seconds() -> TestResult {
    let dir = out_dir("sparse", "year")?;
    let t0 = Instant::now();
    let last = YEAR_S;
    let summary = record(
        &dir,
        t0,
        vec![request(t0, 0, 0, 1), request(t0, 1, last, last)],
        last,
    )?;
    assert_eq!(summary.requests, 2);
    let csv = fs::read_to_string(dir.join("timeseries.csv"))?;
    assert_csv(
        &csv,
        &format!(
            "{HEADER}0,1,0,0,0,0,0,0,,,,0\n1,0,1,0,0,0,0,0,1000.000,1000.000,1000.000,0\n\
             {last},1,1,0,0,0,0,0,0.000,0.000,0.000,0\n"
        ),
    );
    // The timeline is bucketed over the whole year (three days a point: at most 150), not per
    // second.
    let svg = fs::read_to_string(dir.join(TIMELINE_SVG))?;
    assert!(
        svg.contains("per second, averaged per 3 d"),
        "{}",
        &svg[..svg.len().min(2000)]
    );
    assert!(svg.len() < 400_000, "timeline {} bytes", svg.len());
    Ok(())
}

#[test]
fn a_long_series_keeps_every_level_change_and_the_last_second() -> TestResult {
    let dir = out_dir("sparse", "levels")?;
    let t0 = Instant::now();
    let end = 2 * DAY_S;
    let events = vec![
        request(t0, 0, 0, 0),
        // `a` cools for ten seconds, then `b` stays cooling to the end of the run, and `c` goes
        // half-open for good.
        cool(t0, 100_000, "a", 100_010),
        cool(t0, 100_005, "b", 10 * DAY_S),
        half_open(t0, 150_000, "c"),
        request(t0, 1, 160_000, 160_001),
    ];
    record(&dir, t0, events, end)?;
    let csv = fs::read_to_string(dir.join("timeseries.csv"))?;
    assert_csv(
        &csv,
        &format!(
            "{HEADER}0,1,1,0,0,0,0,0,0.000,0.000,0.000,0\n\
             100000,0,0,0,0,0,1,0,,,,0\n\
             100005,0,0,0,0,0,2,0,,,,0\n\
             100010,0,0,0,0,0,1,0,,,,0\n\
             150000,0,0,0,0,0,1,1,,,,0\n\
             160000,1,0,0,0,0,1,1,,,,0\n\
             160001,0,1,0,0,0,1,1,1000.000,1000.000,1000.000,0\n\
             {last},0,0,0,0,0,1,1,,,,0\n",
            last = end - 1
        ),
    );
    Ok(())
}

#[test]
fn a_series_of_up_to_a_day_has_every_second() -> TestResult {
    for (name, last, dense) in [("day", DAY_S - 1, true), ("day-and-a-second", DAY_S, false)] {
        let dir = out_dir("sparse", name)?;
        let t0 = Instant::now();
        record(
            &dir,
            t0,
            vec![request(t0, 0, 0, 0), request(t0, 1, last, last)],
            last,
        )?;
        let csv = fs::read_to_string(dir.join("timeseries.csv"))?;
        let rows = seconds(&csv);
        if dense {
            assert_eq!(rows, (0..=last).collect::<Vec<_>>(), "{name}");
        } else {
            assert!(rows == vec![0, last], "{name}: {} rows", rows.len());
        }
    }
    Ok(())
}
