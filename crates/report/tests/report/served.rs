//! "Which deployment served the traffic?" on a hand-built 429 storm: the served plot, the
//! "failing, not cooling" lane and the window table of `report.html`.
//!
//! The storm (40 s; groups `gpt-4o` = {lone}, `claude` = {c}; a fault window `lone:
//! rate_limit 100%` from 0 to 20 s): every second 5 requests arrive and end 400 ms later.
//! - 0..20 s: each tries `lone` twice (two 429s), falls back to `claude` and `c` serves it:
//!   `lone` 10 attempts a second, none ok; `c` 5 ok. `lone` is the only deployment of its
//!   group, so the router never cools it.
//! - 20..40 s: `lone` serves all 5.
//!
//! So `lone` took 300 attempts and served 100, all after the fault; by attempts it was 75 %
//! of the traffic during the fault (200 of 300) and 3/4 of the whole run.

use std::error::Error;
use std::fs;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use routersim_engine::event::{EventKind, EventSink, FallbackLevel, RoutingEvent};
use routersim_engine::failure::FailureKind;
use routersim_report::plot::palette::{BANDS, FAILING};
use routersim_report::plot::{DEPLOYMENTS_SVG, TRAFFIC_SHARE_SVG};
use routersim_report::record::SummaryContext;
use routersim_report::summary::TimeWindow;
use routersim_report::{
    DeploymentLane, FaultWindow, PageTitle, PlotContext, Recorder, RecorderOptions, RunMeta,
    write_report_html,
};
use tokio::time::Instant;

type TestResult = Result<(), Box<dyn Error>>;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn s(text: &str) -> Arc<str> {
    Arc::from(text)
}

fn attempt(t0: Instant, end: u64, group: &str, id: &str, ok: bool) -> RoutingEvent {
    RoutingEvent {
        at: t0 + ms(end),
        request_id: None,
        kind: EventKind::AttemptEnd {
            attempt: 1,
            start: t0 + ms(end - 50),
            model_group: s(group),
            deployment_id: s(id),
            failure: (!ok).then_some(FailureKind::RateLimit),
            status: Some(if ok { 200 } else { 429 }),
            retry_after: None,
            wait: Duration::ZERO,
            fallback_depth: 0,
        },
    }
}

fn request_end(t0: Instant, start: u64, group: &str, id: &str, fallbacks: u32) -> RoutingEvent {
    RoutingEvent {
        at: t0 + ms(start + 400),
        request_id: Some(start),
        kind: EventKind::RequestEnd {
            model: s("gpt-4o"),
            final_model_group: s(group),
            final_deployment_id: Some(s(id)),
            failure: None,
            status: Some(200),
            attempts: 1 + 2 * fallbacks,
            retries: fallbacks,
            fallbacks,
            attempted_fallbacks: fallbacks,
            start: t0 + ms(start),
            stream: None,
        },
    }
}

fn fallback(t0: Instant, at: u64) -> RoutingEvent {
    RoutingEvent {
        at: t0 + ms(at),
        request_id: None,
        kind: EventKind::Fallback {
            source: s("gpt-4o"),
            target: s("claude"),
            order: 0,
            depth: 1,
            level: FallbackLevel::General,
            failure: FailureKind::RateLimit,
        },
    }
}

fn storm(t0: Instant) -> Vec<RoutingEvent> {
    let mut events = Vec::new();
    for second in 0..40_u64 {
        for k in 0..5_u64 {
            let start = second * 1000 + k * 100;
            if second < 20 {
                events.push(attempt(t0, start + 100, "gpt-4o", "lone", false));
                events.push(attempt(t0, start + 200, "gpt-4o", "lone", false));
                events.push(fallback(t0, start + 250));
                events.push(attempt(t0, start + 350, "claude", "c", true));
                events.push(request_end(t0, start, "claude", "c", 1));
            } else {
                events.push(attempt(t0, start + 350, "gpt-4o", "lone", true));
                events.push(request_end(t0, start, "gpt-4o", "lone", 0));
            }
        }
    }
    events.sort_by_key(|e| e.at);
    events
}

/// Records the storm into a fresh folder and writes its page; returns the folder.
fn record_storm(name: &str) -> Result<PathBuf, Box<dyn Error>> {
    let dir = super::out_dir("served", name)?;
    let t0 = Instant::now();
    let fault = "lone: rate_limit 100%";
    let lane = |id: &str, group: &str| DeploymentLane {
        id: id.into(),
        model_group: group.into(),
    };
    let recorder = Recorder::new(&dir, t0, RecorderOptions { trace: false })?
        .with_plot_context(PlotContext {
            deployments: vec![lane("lone", "gpt-4o"), lane("c", "claude")],
            faults: vec![FaultWindow {
                label: fault.into(),
                detail: String::new(),
                deployments: vec!["lone".into()],
                from: Duration::ZERO,
                to: Some(Duration::from_secs(20)),
            }],
        })
        .with_summary_context(SummaryContext {
            deployments: vec!["lone".into(), "c".into()],
            fault_windows: vec![(
                fault.into(),
                TimeWindow {
                    from: Duration::ZERO,
                    to: Some(Duration::from_secs(20)),
                },
            )],
            scoped_windows: Vec::new(),
        })?;
    for event in storm(t0) {
        recorder.emit(&event);
    }
    let summary = recorder.finish(RunMeta {
        scenario: "storm".into(),
        seed: 1,
        version: "test".into(),
        end: t0 + ms(40_000),
    })?;
    assert_eq!(
        (summary.requests, summary.ok, summary.fallbacks),
        (200, 200, 100)
    );
    let title = PageTitle {
        title: "storm",
        description: "",
    };
    write_report_html(&dir, &summary, &[], title)?;
    Ok(dir)
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

/// Each `<polygon>` filled with `color`: its (top, bottom) pixel rows, in document order.
fn polygons(svg: &str, color: plotters::style::RGBColor) -> Vec<(i32, i32)> {
    let fill = format!("fill=\"#{:02X}{:02X}{:02X}\"", color.0, color.1, color.2);
    svg.split("<polygon")
        .skip(1)
        .filter(|p| p.split("/>").next().is_some_and(|p| p.contains(&fill)))
        .filter_map(|p| p.split("points=\"").nth(1)?.split('"').next())
        .map(|points| {
            let ys: Vec<i32> = points
                .split_whitespace()
                .filter_map(|xy| xy.split(',').nth(1)?.parse().ok())
                .collect();
            (
                ys.iter().copied().min().unwrap_or(0),
                ys.iter().copied().max().unwrap_or(0),
            )
        })
        .collect()
}

#[test]
fn the_served_plot_shows_what_each_deployment_served_not_its_share_of_attempts() -> TestResult {
    let dir = record_storm("plot")?;
    let svg = fs::read_to_string(dir.join(TRAFFIC_SHARE_SVG))?;
    let words = texts(&svg);
    for label in [
        "Served requests per deployment (ok attempts per second, stacked)",
        "lone: served 100 of 300",
        "c: served 100 of 100",
        "all attempts",
        "fault window",
        "failed attempts (429s included) per second, stacked",
    ] {
        assert!(words.iter().any(|t| t == label), "{label} in {words:?}");
    }
    // Served: `lone` (after the fault) and `c` (during it); failed: `lone` only. Both served
    // bands are 5 a second high, in the upper panel; `lone`'s failures (10 a second) below it.
    let (lone, c) = (polygons(&svg, BANDS[0]), polygons(&svg, BANDS[1]));
    assert_eq!((lone.len(), c.len()), (2, 1), "{lone:?} {c:?}");
    let height = |p: (i32, i32)| p.1 - p.0;
    assert!(
        (height(lone[0]) - height(c[0])).abs() <= 1,
        "{lone:?} {c:?}"
    );
    assert!(
        lone[1].0 > lone[0].1,
        "failures below the served panel: {lone:?}"
    );
    Ok(())
}

#[test]
fn a_lone_deployment_failing_every_call_is_failing_not_healthy() -> TestResult {
    let dir = record_storm("lanes")?;
    let svg = fs::read_to_string(dir.join(DEPLOYMENTS_SVG))?;
    let words = texts(&svg);
    // Never cooled (no cooldown event), yet every attempt of its first 20 s failed.
    assert!(
        words.iter().any(|t| t == "failing, not cooling 20 s"),
        "{words:?}"
    );
    assert_eq!(
        words
            .iter()
            .filter(|t| t.starts_with("failing, not cooling "))
            .count(),
        1,
        "c never failed: {words:?}"
    );
    let fill = format!(
        "fill=\"#{:02X}{:02X}{:02X}\"",
        FAILING.0, FAILING.1, FAILING.2
    );
    // The legend swatch and the lane's period.
    assert_eq!(svg.matches(&fill).count(), 2, "{svg}");
    Ok(())
}

/// The cells of the `<tr>` of `page`'s window table whose first cell contains `first` and
/// that contains `phase`.
fn row(page: &str, first: &str, phase: &str) -> Vec<String> {
    let table = page
        .split("<table class=\"windows\">")
        .nth(1)
        .and_then(|t| t.split("</table>").next())
        .unwrap_or_default();
    let line = table
        .lines()
        .find(|l| l.starts_with("<tr") && l.contains(first) && l.contains(phase))
        .unwrap_or_default();
    line.split("<td")
        .skip(1)
        .map(|cell| {
            let body = &cell[cell.find('>').map_or(0, |i| i + 1)..];
            let body = body.split("</td>").next().unwrap_or_default();
            // Tags stripped.
            let mut text = String::new();
            let mut inside = false;
            for ch in body.chars() {
                match ch {
                    '<' => inside = true,
                    '>' => inside = false,
                    c if !inside => text.push(c),
                    _ => {}
                }
            }
            text
        })
        .collect()
}

#[test]
fn the_page_opens_with_a_window_table_of_what_each_deployment_served() -> TestResult {
    let dir = record_storm("page")?;
    let page = fs::read_to_string(dir.join("report.html"))?;
    // At the top: right after the whole-run tiles, before the first plot.
    let table = page
        .find("<table class=\"windows\">")
        .ok_or("no window table")?;
    assert!(page.find("class=\"headline\"").is_some_and(|t| t < table));
    assert!(page.find("<figure").is_some_and(|f| table < f));
    // Columns: window, arrived in, requests, failed, p50, p99, fallbacks, then c and lone
    // (served / attempts).
    assert!(page.contains("<th class=\"num\">c</th><th class=\"num\">lone</th>"));
    let whole = row(&page, "whole run", "");
    assert_eq!(
        whole,
        [
            "whole run",
            "0 s – end",
            "200",
            "0",
            "400",
            "400",
            "100",
            "100 / 100",
            "100 / 300"
        ]
    );
    let during = row(&page, "lone: rate_limit 100%", "during");
    assert_eq!(&during[1..3], ["0–20 s", "100"]);
    assert_eq!(&during[6..], ["100", "100 / 100", "0 / 200"]);
    let after = row(&page, "lone: rate_limit 100%", "after");
    assert_eq!(&after[1..3], ["20 s – end", "100"]);
    assert_eq!(&after[6..], ["0", "0 / 0", "100 / 100"]);
    Ok(())
}
