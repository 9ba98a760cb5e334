//! `latency_over_time.svg`: p50 and p99 end-to-end latency per virtual second, with the fault
//! windows shaded — "what was p99 during the incident, and after".
//!
//! The numbers are `timeseries.csv`'s `p50_ms` and `p99_ms` columns, read back from the bytes
//! the recorder wrote (as the timeline does), so the plot and the CSV agree. Up to
//! [`MAX_POINTS_UNBUCKETED`] seconds every second with a request end is a point; a longer run
//! is bucketed and each point is the *highest* per-second p50 (p99) in its bucket, which the
//! axis says (per-second percentiles cannot be merged exactly; `latency.hlog` holds the
//! histograms for that).

use plotters::prelude::*;

use super::axis::{Frame, GridStyle, TimeAxis, fmt_ms_tick, fmt_tick, shade};
use super::context::FaultWindow;
use super::palette::{FAULT, FAULT_ALPHA, LATENCY, P99};
use super::style::{Area, Drawn, Swatch, legend, nothing, svg, title};
use crate::units::MICROS_PER_SECOND;

const HEIGHT: u32 = 400;
/// Up to this many seconds, every second is a point.
const MAX_POINTS_UNBUCKETED: u64 = 2000;
/// Points per series of a bucketed plot (about).
const BUCKETED_POINTS: u64 = 1000;

/// Per point (bucket start second): the p50 and p99 in ms.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct LatencySeries {
    /// Seconds per point.
    bucket: u64,
    /// Seconds covered (the last row's second + 1).
    seconds: u64,
    /// (bucket index, p50 ms, p99 ms), buckets without a request end left out.
    points: Vec<(u64, f64, f64)>,
}

/// Reads `p50_ms` and `p99_ms` of `timeseries.csv` (columns found by name; empty or bad cells
/// are seconds without a request end).
pub(crate) fn parse_latency(csv: &[u8]) -> LatencySeries {
    let text = String::from_utf8_lossy(csv);
    let mut lines = text.lines();
    let Some(header) = lines.next() else {
        return LatencySeries::default();
    };
    let names: Vec<&str> = header.split(',').collect();
    let at = |name: &str| names.iter().position(|n| *n == name);
    let (Some(second_i), Some(p50_i), Some(p99_i)) = (at("second"), at("p50_ms"), at("p99_ms"))
    else {
        return LatencySeries::default();
    };
    let rows = || {
        lines.clone().filter_map(move |line| {
            let cells: Vec<&str> = line.split(',').collect();
            let second: u64 = cells.get(second_i)?.parse().ok()?;
            let p = |i: usize| cells.get(i).and_then(|c| c.parse::<f64>().ok());
            Some((second, p(p50_i).zip(p(p99_i))))
        })
    };
    let Some(seconds) = rows().map(|(s, _)| s.saturating_add(1)).max() else {
        return LatencySeries::default();
    };
    let bucket = bucket_seconds(seconds);
    let mut points: Vec<(u64, f64, f64)> = Vec::new();
    for (second, p) in rows() {
        let Some((p50, p99)) = p else { continue };
        let index = second / bucket;
        match points.last_mut() {
            Some(last) if last.0 == index => {
                last.1 = last.1.max(p50);
                last.2 = last.2.max(p99);
            }
            _ => points.push((index, p50, p99)),
        }
    }
    LatencySeries {
        bucket,
        seconds,
        points,
    }
}

/// Seconds per point for a series of `n` seconds.
fn bucket_seconds(n: u64) -> u64 {
    if n > MAX_POINTS_UNBUCKETED {
        n.div_ceil(BUCKETED_POINTS)
    } else {
        1
    }
}

pub(crate) fn render(
    series: &LatencySeries,
    faults: &[FaultWindow],
    run_end_us: u64,
) -> Result<String, String> {
    svg(HEIGHT, |root| draw(root, series, faults, run_end_us))
}

fn draw(root: &Area<'_>, series: &LatencySeries, faults: &[FaultWindow], run_end_us: u64) -> Drawn {
    title(
        root,
        "Latency over time (end-to-end, by the second requests ended)",
    )?;
    if series.points.is_empty() {
        return nothing(root, "no request ended");
    }
    let end_us = run_end_us.max(series.seconds.saturating_mul(MICROS_PER_SECOND));
    let axis = TimeAxis::for_run(end_us);
    let bucket = series.bucket.max(1);
    // A point sits at the middle of its bucket.
    let x_of = |index: u64| {
        let us = index
            .saturating_mul(bucket)
            .saturating_mul(MICROS_PER_SECOND);
        axis.at(us.saturating_add(bucket * MICROS_PER_SECOND / 2))
    };
    let ymax = series
        .points
        .iter()
        .fold(1.0_f64, |m, (_, p50, p99)| m.max(*p50).max(*p99))
        * 1.12;

    let (p50_label, p99_label) = if bucket > 1 {
        (
            format!("p50 (highest per-second p50 in each {bucket} s)"),
            format!("p99 (highest per-second p99 in each {bucket} s)"),
        )
    } else {
        ("p50".to_string(), "p99".to_string())
    };
    let mut entries = vec![
        (Swatch::Line(LATENCY), p50_label),
        (Swatch::Line(P99), p99_label),
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
    // A gap (buckets without a request end) breaks the line rather than bridging it.
    for (pick, color) in [(0_usize, LATENCY), (1, P99)] {
        for run in runs(&series.points) {
            let line: Vec<(f64, f64)> = run
                .iter()
                .map(|(i, p50, p99)| (x_of(*i), if pick == 0 { *p50 } else { *p99 }))
                .collect();
            if line.len() == 1 {
                chart.draw_series(line.iter().map(|p| Circle::new(*p, 2, color.filled())))?;
            } else {
                chart.draw_series(LineSeries::new(line, color.stroke_width(2)))?;
            }
        }
    }
    Ok(())
}

/// The points split where a bucket is missing.
fn runs(points: &[(u64, f64, f64)]) -> Vec<&[(u64, f64, f64)]> {
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

    const HEADER: &str = "second,arrivals,ok,failed,retries,fallbacks,deployments_cooling,\
deployments_half_open,p50_ms,p90_ms,p99_ms";

    #[test]
    fn seconds_without_a_request_end_break_the_line() {
        let csv = format!(
            "{HEADER}\n0,1,1,0,0,0,0,0,100.000,100.000,100.000\n1,0,0,0,0,0,0,0,,,\n\
             2,2,2,0,0,0,0,0,100.000,300.000,300.000\n3,1,1,0,0,0,0,0,50.000,50.000,50.000\n"
        );
        let series = parse_latency(csv.as_bytes());
        assert_eq!(series.bucket, 1);
        assert_eq!(series.seconds, 4);
        assert_eq!(
            series.points,
            vec![(0, 100.0, 100.0), (2, 100.0, 300.0), (3, 50.0, 50.0)]
        );
        assert_eq!(runs(&series.points).len(), 2);
        let svg = render(&series, &[], 4 * MICROS_PER_SECOND).unwrap_or_default();
        assert!(svg.contains("<polyline") || svg.contains("<path"), "{svg}");
        assert!(svg.contains("<circle"), "the lone second is a dot");
    }

    #[test]
    fn a_long_run_keeps_the_highest_per_second_percentiles_per_bucket() {
        let mut csv = format!("{HEADER}\n");
        for second in 0..4000_u64 {
            let p99 = if second == 1001 { 9000 } else { 200 };
            csv.push_str(&format!(
                "{second},1,1,0,0,0,0,0,100.000,150.000,{p99}.000\n"
            ));
        }
        let series = parse_latency(csv.as_bytes());
        assert_eq!(series.bucket, 4);
        assert_eq!(series.points.len(), 1000);
        assert_eq!(series.points[250], (250, 100.0, 9000.0));
        assert_eq!(series.points[251], (251, 100.0, 200.0));
        let svg = render(&series, &[], 4000 * MICROS_PER_SECOND).unwrap_or_default();
        assert!(svg.contains("highest per-second p99 in each 4 s"));
    }
}
