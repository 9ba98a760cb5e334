//! `latency_over_time.svg`: p50 and p99 end-to-end latency of the requests that ended in each
//! bucket of time, with the fault windows shaded — "what was p99 during the incident, and
//! after".
//!
//! Why buckets and not seconds: a second holds a handful of requests, so its p50 flips between
//! the fast ones and the timed-out ones and a ten-minute run drew as dense bars. Each bucket
//! here is a round span ([`super::buckets`]: per second for a short run, per 10 s for ten
//! minutes, per minute for an hour) with at most [`DRAWN_POINTS`] of them, and its percentiles
//! are those of *all* the requests that ended in it, drawn as a level across the bucket.
//!
//! The recorder records every request end into a small histogram per kept bucket
//! ([`LatencySeries`]; 1 significant digit, read at the middle of its bin, so within about
//! 3 %); the buckets grow along the chain (neighbouring histograms added, which is exact) when
//! the run outgrows [`MAX_KEPT_POINTS`], so memory is bounded whatever the run's length.

use hdrhistogram::Histogram;
use plotters::prelude::*;

use super::axis::{Frame, GridStyle, TimeAxis, fmt_ms_tick, fmt_tick, shade};
use super::buckets;
use super::context::FaultWindow;
use super::palette::{FAULT, FAULT_ALPHA, LATENCY, P99};
use super::style::{Area, Drawn, Swatch, legend, nothing, svg, title};
use crate::units::MICROS_PER_SECOND;

const HEIGHT: u32 = 400;
/// Buckets drawn at most: a level a few pixels wide or more, never per-second noise.
pub(crate) const DRAWN_POINTS: u64 = 72;
/// Histograms kept while the run goes on (a few kB each).
pub(crate) const MAX_KEPT_POINTS: usize = 300;
/// The histograms' precision: the plot needs a level, not the fourth digit.
const SIGFIG: u8 = 1;

/// End-to-end latencies of the requests that ended in each bucket, µs.
#[derive(Debug, Default)]
pub(crate) struct LatencySeries {
    /// Seconds per kept bucket (1 until the run outgrows the buckets).
    bucket: u64,
    /// Per bucket, its latencies (`None`: no request ended in it).
    points: Vec<Option<Histogram<u64>>>,
}

/// `b` added into `a`.
fn merge(a: &mut Option<Histogram<u64>>, b: Option<Histogram<u64>>) {
    match (a.as_mut(), b) {
        (Some(a), Some(b)) => {
            if a.add(&b).is_err() {
                // Unreachable with auto-resizing histograms; the bucket keeps what it had.
            }
        }
        (None, b) => *a = b,
        (Some(_), None) => {}
    }
}

impl LatencySeries {
    /// A request that ended in `second` after `latency_us`.
    pub(crate) fn record(&mut self, second: u64, latency_us: u64) {
        self.bucket = self.bucket.max(1);
        let mut point = usize::try_from(second / self.bucket).unwrap_or(usize::MAX);
        while point >= MAX_KEPT_POINTS {
            let next = buckets::next(self.bucket);
            let group = usize::try_from(next / self.bucket).unwrap_or(usize::MAX);
            self.points = merged(std::mem::take(&mut self.points), group);
            self.bucket = next;
            point = usize::try_from(second / self.bucket).unwrap_or(usize::MAX);
        }
        if self.points.len() <= point {
            self.points.resize_with(point + 1, || None);
        }
        let slot = &mut self.points[point];
        if slot.is_none() {
            *slot = Histogram::new(SIGFIG).ok();
        }
        if let Some(h) = slot
            && h.record(latency_us).is_err()
        {
            h.saturating_record(latency_us);
        }
    }
}

/// `points` summed in groups of `group` neighbours.
fn merged(points: Vec<Option<Histogram<u64>>>, group: usize) -> Vec<Option<Histogram<u64>>> {
    let mut out = Vec::with_capacity(points.len() / group.max(1) + 1);
    let mut iter = points.into_iter().peekable();
    while iter.peek().is_some() {
        let mut sum = None;
        for h in iter.by_ref().take(group.max(1)) {
            merge(&mut sum, h);
        }
        out.push(sum);
    }
    out
}

/// One drawn bucket: its index and the p50 and p99 of the requests that ended in it, ms.
type Level = (u64, f64, f64);

/// The drawn buckets with a request end, and the drawn bucket size (seconds).
fn levels(series: &LatencySeries, seconds: u64) -> (Vec<Level>, u64) {
    let kept = series.bucket.max(1);
    let bucket = buckets::drawn(seconds, kept, DRAWN_POINTS);
    let group = usize::try_from(bucket / kept).unwrap_or(1).max(1);
    let mut out = Vec::new();
    for (i, chunk) in (0_u64..).zip(series.points.chunks(group)) {
        let mut sum = None;
        for h in chunk {
            merge(&mut sum, h.clone());
        }
        if let Some(h) = sum.filter(|h| !h.is_empty()) {
            let at = |q: f64| h.median_equivalent(h.value_at_quantile(q)) as f64 / 1000.0;
            out.push((i, at(0.5), at(0.99)));
        }
    }
    (out, bucket)
}

pub(crate) fn render(
    series: &LatencySeries,
    faults: &[FaultWindow],
    run_end_us: u64,
) -> Result<String, String> {
    svg(HEIGHT, |root| draw(root, series, faults, run_end_us))
}

fn draw(root: &Area<'_>, series: &LatencySeries, faults: &[FaultWindow], run_end_us: u64) -> Drawn {
    let covered = (series.points.len() as u64).saturating_mul(series.bucket.max(1));
    let seconds = run_end_us.div_ceil(MICROS_PER_SECOND).max(covered).max(1);
    let (points, bucket) = levels(series, seconds);
    let per = buckets::per(bucket);
    title(
        root,
        &format!("Latency over time (end-to-end, of the requests that ended {per})"),
    )?;
    if points.is_empty() {
        return nothing(root, "no request ended");
    }
    let end_us = run_end_us.max(seconds.saturating_mul(MICROS_PER_SECOND));
    let axis = TimeAxis::for_run(end_us);
    let bucket_us = bucket.saturating_mul(MICROS_PER_SECOND);
    let span = |index: u64| {
        let from = index.saturating_mul(bucket_us);
        (
            axis.at(from),
            axis.at(from.saturating_add(bucket_us).min(end_us)),
        )
    };
    let ymax = points
        .iter()
        .fold(1.0_f64, |m, (_, p50, p99)| m.max(*p50).max(*p99))
        * 1.12;

    let mut entries = vec![
        (Swatch::Line(LATENCY), format!("p50 {per}")),
        (Swatch::Line(P99), format!("p99 {per}")),
    ];
    if !faults.is_empty() {
        entries.push((Swatch::Box(FAULT, 0.3), "fault window".into()));
    }
    legend(root, (16, 44), &entries)?;

    let frame = Frame {
        y_labels: 72,
        ..Frame::UNDER_LEGEND
    };
    let mut chart = frame.chart(root, 0.0..axis.end, 0.0..ymax)?;
    chart
        .configure_mesh()
        .house_grid()
        .x_desc(axis.desc)
        .y_desc("latency")
        .x_label_formatter(&|v| fmt_tick(*v))
        .y_label_formatter(&|v| fmt_ms_tick(*v))
        .draw()?;

    for span in faults.iter().filter_map(|f| axis.span(f, end_us)) {
        shade(&mut chart, span, ymax, FAULT, FAULT_ALPHA)?;
    }
    // Each bucket a level across its span; a gap (buckets without a request end) breaks the
    // line rather than bridging it, and a lone bucket also gets a dot.
    for (pick, color) in [(0_usize, LATENCY), (1, P99)] {
        for run in runs(&points) {
            let level = |(_, p50, p99): &Level| if pick == 0 { *p50 } else { *p99 };
            let line: Vec<(f64, f64)> = run
                .iter()
                .flat_map(|p| {
                    let (x0, x1) = span(p.0);
                    [(x0, level(p)), (x1, level(p))]
                })
                .collect();
            if let [p] = run {
                let (x0, x1) = span(p.0);
                chart.draw_series(std::iter::once(Circle::new(
                    ((x0 + x1) / 2.0, level(p)),
                    2,
                    color.filled(),
                )))?;
            }
            chart.draw_series(LineSeries::new(line, color.stroke_width(2)))?;
        }
    }
    Ok(())
}

/// The levels split where a bucket is missing.
fn runs(points: &[Level]) -> Vec<&[Level]> {
    let mut out = Vec::new();
    let mut start = 0;
    for i in 1..=points.len() {
        let breaks = i == points.len()
            || points
                .get(i)
                .zip(points.get(i - 1))
                .is_some_and(|(a, b)| a.0 != b.0 + 1);
        if breaks {
            if let Some(run) = points.get(start..i) {
                out.push(run);
            }
            start = i;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The y of every vertex of the p50 lines (`<polyline>`s in [`LATENCY`] with more than the
    /// legend swatch's two points).
    fn p50_vertices(svg: &str) -> Vec<f64> {
        let stroke = format!(
            "stroke=\"#{:02X}{:02X}{:02X}\"",
            LATENCY.0, LATENCY.1, LATENCY.2
        );
        svg.split("<polyline")
            .skip(1)
            .filter(|p| p.split("/>").next().is_some_and(|p| p.contains(&stroke)))
            .filter_map(|p| p.split("points=\"").nth(1)?.split('"').next())
            .filter(|points| points.split_whitespace().count() > 2)
            .flat_map(|points| {
                points
                    .split_whitespace()
                    .filter_map(|xy| xy.split(',').nth(1)?.parse().ok())
                    .collect::<Vec<f64>>()
            })
            .collect()
    }

    #[test]
    fn a_ten_minute_run_draws_a_level_per_10_s_not_a_flip_per_second() {
        // Seconds end 2 fast requests and 3 timeouts, then 4 fast and 1 timeout: the
        // per-second p50 flips between 30 s and 40 ms; over 10 s, 30 fast and 20 timeouts.
        let mut series = LatencySeries::default();
        for second in 0..600_u64 {
            let timeouts = if second % 2 == 0 { 3 } else { 1 };
            for k in 0..5 {
                let us = if k < timeouts { 30_000_000 } else { 40_000 };
                series.record(second, us);
            }
        }
        let (points, bucket) = levels(&series, 600);
        assert_eq!(bucket, 10);
        assert_eq!(points.len(), 60);
        // Every bucket: 30 of 50 at 40 ms, so the p50 is 40 ms (within the histogram's 3 %)
        // and the p99 a timeout.
        for (i, p50, p99) in &points {
            assert!((*p50 - 40.0).abs() <= 40.0 * 0.035, "bucket {i}: p50 {p50}");
            assert!(
                (*p99 - 30_000.0).abs() <= 30_000.0 * 0.035,
                "bucket {i}: {p99}"
            );
        }
        let svg = render(&series, &[], 600 * MICROS_PER_SECOND).unwrap_or_default();
        assert!(svg.contains("p50 per 10 s"), "{svg}");
        // One level per bucket: 120 vertices at one height.
        let ys = p50_vertices(&svg);
        assert_eq!(ys.len(), 120, "{ys:?}");
        assert!(ys.iter().all(|y| *y == ys[0]), "{ys:?}");
    }

    #[test]
    fn buckets_without_a_request_end_break_the_line_and_a_lone_one_is_a_dot() {
        let mut series = LatencySeries::default();
        for (second, ms) in [(0, 100), (1, 300), (3, 50)] {
            series.record(second, ms * 1000);
        }
        let (points, bucket) = levels(&series, 4);
        assert_eq!(bucket, 1);
        assert_eq!(points.iter().map(|p| p.0).collect::<Vec<_>>(), [0, 1, 3]);
        assert_eq!(runs(&points).len(), 2);
        let svg = render(&series, &[], 4 * MICROS_PER_SECOND).unwrap_or_default();
        assert!(svg.contains("<polyline"), "{svg}");
        assert!(svg.contains("<circle"), "the lone second is a dot");
    }

    #[test]
    fn a_long_run_merges_its_histograms_exactly_along_the_chain() {
        let mut series = LatencySeries::default();
        // A day: one 100 ms request per second and one 9 s request at 12:00.
        for second in 0..86_400_u64 {
            series.record(second, 100_000);
        }
        series.record(43_200, 9_000_000);
        assert!(series.points.len() <= MAX_KEPT_POINTS);
        assert_eq!(series.bucket, 600);
        let total: u64 = series.points.iter().flatten().map(Histogram::len).sum();
        assert_eq!(total, 86_401, "merging keeps every request");
        let (points, bucket) = levels(&series, 86_400);
        assert_eq!(bucket, 1800);
        assert_eq!(points.len(), 48);
    }
}
