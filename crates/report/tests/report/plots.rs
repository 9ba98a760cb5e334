//! The SVG plots and `report.html` on hand-built event streams.
//!
//! Scenario of [`incident`] (times in ms since the run start; groups `gpt-4o` = {a, b},
//! `claude` = {c, d}; `d` is never used but has a lane):
//! - a fault window `a: rate_limit 90%` from 100 to 4000;
//! - request 1: a 429 on `a` at 200 cools `a` until 5200; the retry on `b` succeeds at 1500
//!   (2 attempts);
//! - request 2: `b` fails at 1200, a fallback hop `gpt-4o → claude`, `c` times out at 2600
//!   (2 attempts);
//! - `b` cools at 2000 until 3000, goes half-open at 3000 and recovers at 3400;
//! - request 3 (streamed, TTFT 300 ms) needs 13 attempts (the overflow bar) and succeeds at
//!   4000;
//! - the sweeper ends `a`'s cooldown at 5200; the run ends at 6000.

use std::error::Error;
use std::fs;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use routersim_engine::event::{
    CooldownReason, CooldownSource, EventKind, EventSink, FallbackLevel, RecoveredVia, RoutingEvent,
};
use routersim_engine::failure::FailureKind;
use routersim_engine::stream::{StreamOutcome, StreamStats};
use routersim_report::html::render_report_html;
use routersim_report::plot::{
    ATTEMPTS_SVG, DEPLOYMENTS_SVG, LATENCY_OVER_TIME_SVG, LATENCY_SVG,
    MAX_INTERVALS_PER_DEPLOYMENT, PLOT_FILES, TIMELINE_SVG, TRAFFIC_SHARE_SVG,
};
use routersim_report::{
    DeploymentLane, ExpectRow, FaultWindow, PageTitle, PlotContext, REPORT_HTML, Recorder,
    RecorderOptions, RunMeta, Summary, write_report_html,
};
use tokio::time::Instant;

use super::out_dir;

type TestResult = Result<(), Box<dyn Error>>;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn s(text: &str) -> Arc<str> {
    Arc::from(text)
}

fn meta(t0: Instant, end_ms: u64) -> RunMeta {
    RunMeta {
        scenario: "plots".into(),
        seed: 3,
        version: "test".into(),
        end: t0 + ms(end_ms),
    }
}

fn context() -> PlotContext {
    let lane = |id: &str, group: &str| DeploymentLane {
        id: id.into(),
        model_group: group.into(),
    };
    PlotContext {
        deployments: vec![
            lane("a", "gpt-4o"),
            lane("b", "gpt-4o"),
            lane("c", "claude"),
            lane("d", "claude"),
        ],
        faults: vec![FaultWindow {
            label: "a: rate_limit 90%".into(),
            detail: String::new(),
            deployments: vec!["a".into()],
            from: ms(100),
            to: Some(ms(4000)),
        }],
    }
}

fn cool(t0: Instant, at: u64, group: &str, id: &str, until: u64) -> RoutingEvent {
    RoutingEvent {
        at: t0 + ms(at),
        request_id: None,
        kind: EventKind::CooldownSet {
            model_group: s(group),
            deployment_id: s(id),
            reason: CooldownReason::RateLimitInGroup,
            failure: FailureKind::RateLimit,
            duration: ms(until - at),
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
            model_group: s("g"),
            deployment_id: s(id),
        },
    }
}

#[allow(clippy::too_many_arguments)]
fn request_end(
    t0: Instant,
    id: u64,
    start: u64,
    at: u64,
    group: &str,
    failure: Option<FailureKind>,
    attempts: u32,
    fallbacks: u32,
    stream: Option<StreamStats>,
) -> RoutingEvent {
    RoutingEvent {
        at: t0 + ms(at),
        request_id: Some(id),
        kind: EventKind::RequestEnd {
            model: s("gpt-4o"),
            final_model_group: s(group),
            final_deployment_id: None,
            failure,
            status: failure.map_or(Some(200), |_| Some(500)),
            attempts,
            retries: attempts.saturating_sub(1 + fallbacks),
            fallbacks,
            attempted_fallbacks: fallbacks,
            start: t0 + ms(start),
            stream,
        },
    }
}

fn incident(t0: Instant) -> Vec<RoutingEvent> {
    let ev = |at: u64, request_id: Option<u64>, kind: EventKind| RoutingEvent {
        at: t0 + ms(at),
        request_id,
        kind,
    };
    vec![
        cool(t0, 200, "gpt-4o", "a", 5200),
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
        request_end(t0, 1, 0, 1500, "gpt-4o", None, 2, 0, None),
        cool(t0, 2000, "gpt-4o", "b", 3000),
        ev(
            3000,
            None,
            EventKind::HalfOpen {
                model_group: s("gpt-4o"),
                deployment_id: s("b"),
            },
        ),
        request_end(
            t0,
            2,
            900,
            2600,
            "claude",
            Some(FailureKind::Timeout),
            2,
            1,
            None,
        ),
        ev(
            3400,
            Some(3),
            EventKind::Recovered {
                model_group: s("gpt-4o"),
                deployment_id: s("b"),
                via: RecoveredVia::Trial,
            },
        ),
        request_end(
            t0,
            3,
            2500,
            4000,
            "gpt-4o",
            None,
            13,
            0,
            Some(StreamStats {
                outcome: Some(StreamOutcome::Completed),
                ttft: Some(ms(300)),
                tokens_delivered: 10,
                tokens_billed: 10,
            }),
        ),
        uncool(t0, 5200, "a"),
    ]
}

/// Records `events` into `dir` and finishes at `end_ms`.
fn record(
    dir: &Path,
    t0: Instant,
    events: &[RoutingEvent],
    end_ms: u64,
    plots: Option<PlotContext>,
) -> Result<Summary, Box<dyn Error>> {
    let mut recorder = Recorder::new(dir, t0, RecorderOptions { trace: false })?;
    recorder = match plots {
        Some(context) => recorder.with_plot_context(context),
        None => recorder.without_plots(),
    };
    for event in events {
        recorder.emit(event);
    }
    Ok(recorder.finish(meta(t0, end_ms))?)
}

/// The text of every `<text>` element of an SVG, trimmed.
fn texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            let body = &t[t.find('>')? + 1..];
            Some(body[..body.find("</text>")?].trim().to_string())
        })
        .collect()
}

fn read_svg(dir: &Path, file: &str) -> Result<String, Box<dyn Error>> {
    let svg = fs::read_to_string(dir.join(file))?;
    assert!(svg.starts_with("<svg"), "{file} is an SVG: {svg:.80}");
    assert!(svg.trim_end().ends_with("</svg>"), "{file} is complete");
    Ok(svg)
}

#[test]
fn every_plot_shows_its_lanes_labels_and_markers() -> TestResult {
    let dir = out_dir("plots", "incident")?;
    let t0 = Instant::now();
    let summary = record(&dir, t0, &incident(t0), 6000, Some(context()))?;
    assert_eq!(summary.requests, 3);

    let deployments = read_svg(&dir, DEPLOYMENTS_SVG)?;
    let text = texts(&deployments);
    for label in ["gpt-4o", "claude", "a", "b", "c", "d", "a: rate_limit 90%"] {
        assert!(text.iter().any(|t| t == label), "{label} in {text:?}");
    }
    // Lanes in model_list order, grouped: gpt-4o, a, b, claude, c, d.
    let order: Vec<&str> = text
        .iter()
        .map(String::as_str)
        .filter(|t| ["gpt-4o", "claude", "a", "b", "c", "d"].contains(t))
        .collect();
    assert_eq!(order, ["gpt-4o", "a", "b", "claude", "c", "d"]);
    // a cooled 200..5200; b cooled 2000..3000, then half-open 3000..3400.
    assert!(
        text.iter().any(|t| t == "cooling 5 s, 1 period, 1 set"),
        "{text:?}"
    );
    assert!(
        text.iter().any(|t| t == "cooling 1 s, 1 period, 1 set"),
        "{text:?}"
    );
    assert!(
        text.iter().any(|t| t == "half-open 0.4 s, 1 period"),
        "{text:?}"
    );

    let timeline = read_svg(&dir, TIMELINE_SVG)?;
    let text = texts(&timeline);
    for label in [
        "arrivals",
        "ok",
        "failed",
        "retries",
        "fallbacks",
        "a: rate_limit 90%",
        "per second",
    ] {
        assert!(text.iter().any(|t| t == label), "{label} in {text:?}");
    }

    let latency = read_svg(&dir, LATENCY_SVG)?;
    let text = texts(&latency);
    for marker in ["p50 ", "p90 ", "p99 ", "p99.9 "] {
        assert!(
            text.iter().any(|t| t.starts_with(marker)),
            "{marker} in {text:?}"
        );
    }
    assert!(
        text.iter().any(|t| t == "time to first token (1 stream)"),
        "TTFT curve: {text:?}"
    );
    assert!(latency.contains("<polyline"), "a CDF line");

    let attempts = read_svg(&dir, ATTEMPTS_SVG)?;
    let text = texts(&attempts);
    for label in ["1", "2", "3", "11+", "gpt-4o → claude"] {
        assert!(text.iter().any(|t| t == label), "{label} in {text:?}");
    }
    assert!(text.iter().any(|t| t == "2 (66.7%)"), "{text:?}");
    Ok(())
}

#[test]
fn lanes_agree_with_the_summary_cooldowns() -> TestResult {
    // The cooldown rules of `cooldowns_and_details.rs`: extension, late end, clip at run end.
    let dir = out_dir("plots", "agree")?;
    let t0 = Instant::now();
    let events = [
        cool(t0, 100, "g", "w", 9000),
        cool(t0, 500, "g", "y", 100_000),
        uncool(t0, 1000, "w"),
        cool(t0, 1500, "g", "x", 2500),
        cool(t0, 2000, "g", "x", 3200),
        cool(t0, 3000, "g", "z", 3000),
        cool(t0, 4000, "g", "x", 4500),
        uncool(t0, 4700, "x"),
        cool(t0, 4800, "g", "x", 4900),
        uncool(t0, 4900, "x"),
    ];
    // No context: the lanes are the deployments seen in events.
    let summary = record(&dir, t0, &events, 6000, Some(PlotContext::default()))?;
    let text = texts(&read_svg(&dir, DEPLOYMENTS_SVG)?);
    let by = &summary.cooldowns.by_deployment;
    assert_eq!(by["x"].total_cooled_ms, 2300.0);
    // Periods and sets, named apart, as `summary.json` counts them.
    assert_eq!((by["x"].periods, by["x"].count), (3, 4));
    assert!(
        text.iter().any(|t| t == "cooling 2.3 s, 3 periods, 4 sets"),
        "{text:?}"
    );
    assert_eq!(by["w"].total_cooled_ms, 900.0);
    assert!(
        text.iter().any(|t| t == "cooling 0.9 s, 1 period, 1 set"),
        "{text:?}"
    );
    assert_eq!(by["y"].total_cooled_ms, 5500.0);
    assert!(
        text.iter().any(|t| t == "cooling 5.5 s, 1 period, 1 set"),
        "{text:?}"
    );
    for lane in ["g", "w", "x", "y", "z"] {
        assert!(text.iter().any(|t| t == lane), "{lane} in {text:?}");
    }
    Ok(())
}

#[test]
fn plots_are_byte_identical_on_replay() -> TestResult {
    let t0 = Instant::now();
    let (a, b) = (out_dir("plots", "replay-a")?, out_dir("plots", "replay-b")?);
    record(&a, t0, &incident(t0), 6000, Some(context()))?;
    // A different start instant: only times relative to it matter.
    let t1 = Instant::now() + ms(12_345);
    record(&b, t1, &incident(t1), 6000, Some(context()))?;
    for file in PLOT_FILES {
        let (left, right) = (fs::read(a.join(file))?, fs::read(b.join(file))?);
        assert!(!left.is_empty(), "{file} is empty");
        assert!(left == right, "{file} differs between two replays");
    }
    Ok(())
}

#[test]
fn an_empty_run_still_draws_every_plot() -> TestResult {
    let t0 = Instant::now();
    // No events, no context at all.
    let dir = out_dir("plots", "empty")?;
    record(&dir, t0, &[], 0, Some(PlotContext::default()))?;
    for (file, message) in [
        (DEPLOYMENTS_SVG, "no deployments"),
        (TIMELINE_SVG, "no traffic"),
        (LATENCY_SVG, "no requests finished"),
        (ATTEMPTS_SVG, "no requests finished"),
    ] {
        let text = texts(&read_svg(&dir, file)?);
        assert!(text.iter().any(|t| t == message), "{file}: {text:?}");
    }
    // Lanes and faults but no events (a fault that never ends, too).
    let dir = out_dir("plots", "quiet")?;
    let mut ctx = context();
    ctx.faults.push(FaultWindow {
        label: "c: timeout".into(),
        detail: String::new(),
        deployments: vec!["c".into(), "unknown".into()],
        from: ms(500),
        to: None,
    });
    record(&dir, t0, &[], 2000, Some(ctx))?;
    let text = texts(&read_svg(&dir, DEPLOYMENTS_SVG)?);
    for label in ["a", "b", "c", "d", "c: timeout"] {
        assert!(text.iter().any(|t| t == label), "{label} in {text:?}");
    }
    let text = texts(&read_svg(&dir, ATTEMPTS_SVG)?);
    assert!(text.iter().any(|t| t == "no fallback hops"), "{text:?}");
    Ok(())
}

#[test]
fn plots_can_be_skipped() -> TestResult {
    let dir = out_dir("plots", "skipped")?;
    let t0 = Instant::now();
    record(&dir, t0, &incident(t0), 6000, None)?;
    assert!(dir.join("summary.json").exists());
    for file in PLOT_FILES {
        assert!(!dir.join(file).exists(), "{file} written");
    }
    Ok(())
}

#[test]
fn a_long_run_is_bucketed_and_a_busy_lane_capped() -> TestResult {
    let dir = out_dir("plots", "long")?;
    let t0 = Instant::now();
    let mut events = Vec::new();
    // A request every 5 s for 10,000 s, and more cooldowns on `a` than a lane keeps.
    for i in 0..2000_u64 {
        events.push(request_end(
            t0,
            i,
            i * 5000,
            i * 5000 + 100,
            "gpt-4o",
            None,
            1,
            0,
            None,
        ));
    }
    let cooldowns = MAX_INTERVALS_PER_DEPLOYMENT as u64 + 5;
    for i in 0..cooldowns {
        // 1 ms cooling every 90 ms, all within the run.
        events.push(cool(t0, i * 90, "gpt-4o", "a", i * 90 + 1));
    }
    events.sort_by_key(|e| e.at);
    let summary = record(&dir, t0, &events, 10_000_000, Some(context()))?;
    assert_eq!(summary.cooldowns.by_deployment["a"].count, cooldowns);

    let timeline = read_svg(&dir, TIMELINE_SVG)?;
    let text = texts(&timeline);
    assert!(
        text.iter().any(|t| t == "per second, averaged per 2 min"),
        "{text:?}"
    );
    assert!(
        timeline.len() < 400_000,
        "timeline {} bytes",
        timeline.len()
    );

    let deployments = read_svg(&dir, DEPLOYMENTS_SVG)?;
    let text = texts(&deployments);
    assert!(
        text.iter().any(|t| t == "5 not drawn (cap 100000)"),
        "{text:?}"
    );
    // Intervals closer than a pixel are merged: the lane stays small.
    assert!(
        deployments.len() < 200_000,
        "deployments {} bytes",
        deployments.len()
    );
    Ok(())
}

#[test]
fn the_page_inlines_every_plot_and_the_expectations() -> TestResult {
    let dir = out_dir("plots", "page")?;
    let t0 = Instant::now();
    let summary = record(&dir, t0, &incident(t0), 6000, Some(context()))?;
    let rows = [
        ExpectRow {
            metric: "failed".into(),
            min: None,
            max: Some(0.0),
            measured: Some(1.0),
            passed: false,
        },
        ExpectRow {
            metric: "cooldowns.a".into(),
            min: Some(1.0),
            max: None,
            measured: Some(1.0),
            passed: true,
        },
    ];
    let title = PageTitle {
        title: "plots <demo>",
        description: "a & b",
    };
    let path = write_report_html(&dir, &summary, &rows, title)?;
    assert_eq!(path, dir.join(REPORT_HTML));
    let page = fs::read_to_string(&path)?;
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert_eq!(
        page.matches("<svg").count(),
        PLOT_FILES.len(),
        "every plot inline"
    );
    for file in PLOT_FILES {
        let id = format!("<figure id=\"plot-{}\">", file.trim_end_matches(".svg"));
        assert!(page.contains(&id), "{id}");
    }
    assert!(
        page.contains("<h1>plots &lt;demo&gt;</h1>"),
        "escaped title"
    );
    assert!(page.contains("a &amp; b"), "escaped description");
    assert!(page.contains("1 of 2 expectations failed."));
    assert!(page.contains("<td class=\"bad\">FAILED</td><td>failed</td><td>≤ 0</td>"));
    assert!(page.contains("<td class=\"ok\">passed</td><td>cooldowns.a</td><td>≥ 1</td>"));
    assert!(!page.contains("http://") && !page.contains("https://"));
    assert!(!page.contains("<script") && !page.contains("<link"));
    // The same page from the same data.
    let again = render_report_html(
        &summary,
        &rows,
        title,
        &PLOT_FILES
            .iter()
            .map(|f| (*f, fs::read_to_string(dir.join(f)).ok()))
            .collect::<Vec<_>>(),
        fs::read(dir.join("deployments.csv")).ok().as_deref(),
    );
    assert!(again == page);

    // Without plots the page says so instead.
    let bare = out_dir("plots", "page-bare")?;
    let summary = record(&bare, t0, &incident(t0), 6000, None)?;
    let page = fs::read_to_string(write_report_html(&bare, &summary, &[], title)?)?;
    assert_eq!(page.matches("not rendered").count(), PLOT_FILES.len());
    assert!(page.contains("The scenario has no expect lines."));
    Ok(())
}

/// An attempt on `id` from `start` to `end` ms.
fn attempt_end(t0: Instant, start: u64, end: u64, id: &str, ok: bool) -> RoutingEvent {
    RoutingEvent {
        at: t0 + ms(end),
        request_id: None,
        kind: EventKind::AttemptEnd {
            attempt: 1,
            start: t0 + ms(start),
            model_group: s("g"),
            deployment_id: s(id),
            failure: (!ok).then_some(FailureKind::RateLimit),
            status: Some(if ok { 200 } else { 429 }),
            retry_after: None,
            wait: Duration::ZERO,
            fallback_depth: 0,
        },
    }
}

#[test]
fn the_over_time_plots_draw_lines_bands_and_fault_windows() -> TestResult {
    let dir = out_dir("plots", "over-time")?;
    let t0 = Instant::now();
    // The incident, plus attempts: `a` serves second 0, then `c` takes over (a fallback).
    let mut events = vec![
        attempt_end(t0, 0, 100, "a", true),
        attempt_end(t0, 0, 150, "a", false),
    ];
    events.extend(incident(t0));
    events.extend([
        attempt_end(t0, 4000, 4100, "c", true),
        attempt_end(t0, 4100, 5100, "c", true),
    ]);
    events.sort_by_key(|e| e.at);
    record(&dir, t0, &events, 6000, Some(context()))?;

    let latency = read_svg(&dir, LATENCY_OVER_TIME_SVG)?;
    let words = texts(&latency);
    for label in ["p50 per second", "p99 per second", "fault window"] {
        assert!(words.iter().any(|t| t == label), "{label} in {words:?}");
    }
    // Seconds 1 and 2 are a line; second 4 (after a gap) a dot; the fault window a box.
    assert!(latency.contains("<polyline"), "p50/p99 lines");
    assert!(latency.contains("<circle"), "a lone second");
    assert!(
        latency.matches("<rect").count() >= 2,
        "background and fault"
    );

    let share = read_svg(&dir, TRAFFIC_SHARE_SVG)?;
    let words = texts(&share);
    // `a`: one of its two attempts ok; `c`: both.
    for label in ["a: served 1 of 2", "c: served 2 of 2", "fault window"] {
        assert!(words.iter().any(|t| t == label), "{label} in {words:?}");
    }
    assert!(
        !words.iter().any(|t| t.starts_with("b")),
        "b had no attempts: no band"
    );
    assert_eq!(
        share.matches("<polygon").count(),
        3,
        "one served band per deployment with an ok attempt, one failed band per deployment \
         with a failure (a)"
    );

    // Both are on the page.
    let summary = record(&dir, t0, &events, 6000, Some(context()))?;
    let title = PageTitle {
        title: "t",
        description: "",
    };
    let page = fs::read_to_string(write_report_html(&dir, &summary, &[], title)?)?;
    for file in [LATENCY_OVER_TIME_SVG, TRAFFIC_SHARE_SVG] {
        let id = format!("<figure id=\"plot-{}\">", file.trim_end_matches(".svg"));
        assert!(page.contains(&id), "{id}");
    }
    Ok(())
}
