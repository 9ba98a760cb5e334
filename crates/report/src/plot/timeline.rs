//! `timeline.svg`: arrivals, ok, failed, retries, fallbacks and stream continuations per
//! virtual second, with the fault windows shaded and labelled.
//!
//! The numbers are `timeseries.csv`'s, read back from the bytes the recorder just wrote, so
//! the plot and the CSV can never disagree and the recorder's hot path does no extra work.
//!
//! Readable at any length: a run longer than [`TARGET_POINTS`] seconds is averaged into
//! buckets of a round size (10 s, 1 min, 5 min, …) chosen so that points lie a few pixels
//! apart, and the plot says the bucket. Fallbacks and continuations are usually small next to
//! the arrivals: they are drawn last, with a marker on every point where they are non-zero,
//! so a handful of them still shows. Fault labels say the `Retry-After` sent and the time
//! range; labels that would collide are stacked in rows, then shortened, then left out (the
//! plot says how many).

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::axis::{Chart, Frame, GridStyle, TimeAxis, fmt_tick, shade};
use super::context::FaultWindow;
use super::palette::{
    ARRIVALS, CONTINUATIONS, FAILED, FALLBACKS, FAULT, FAULT_ALPHA, MUTED, OK, RETRIES,
};
use super::style::{Area, Drawn, Swatch, estimate_width, legend, nothing, svg, text, title};
use crate::units::MICROS_PER_SECOND;

/// The timeline's most points per series: about 3 px apart on its ~860 px plot.
pub(crate) const TARGET_POINTS: u64 = 300;
/// The timeline's bucket sizes, seconds (beyond the last: whole days).
const ROUND_BUCKETS: [u64; 16] = [
    1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21_600, 43_200,
];
/// The counters drawn, in `timeseries.csv`'s column names.
const COLUMNS: [&str; 6] = [
    "arrivals",
    "ok",
    "failed",
    "retries",
    "fallbacks",
    "continuations",
];
const COLORS: [RGBColor; 6] = [ARRIVALS, OK, FAILED, RETRIES, FALLBACKS, CONTINUATIONS];
/// The series that get a marker on every non-zero point (indexes into [`COLUMNS`]).
const MARKED: [usize; 2] = [4, 5];
const HEIGHT: u32 = 440;
/// Rows of fault labels at the top of the plot.
const LABEL_ROWS: usize = 3;
const LABEL_PX: u32 = 12;

/// One row of counters, in [`COLUMNS`] order.
pub(crate) type SecondCounts = [u64; 6];

/// The counters of `timeseries.csv`, summed per point: what the timeline draws. Its size is
/// bounded by the number of points ([`TARGET_POINTS`] at most), whatever the virtual duration.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Series {
    /// Seconds covered: the last row's second + 1 (0 without rows).
    seconds: u64,
    /// Seconds per point.
    bucket: u64,
    /// Per point, each counter summed over its bucket.
    sums: Vec<SecondCounts>,
}

impl Series {
    /// Seconds in point `i`'s bucket (the last one may be shorter).
    fn bucket_len(&self, i: usize) -> u64 {
        let first = i as u64 * self.bucket;
        self.bucket.min(self.seconds.saturating_sub(first))
    }
}

/// Reads the counters of `timeseries.csv` (columns found by name; bad cells read as 0). A
/// second with no row counts zero (the CSV leaves quiet seconds of long runs out); without a
/// `second` column, rows are seconds 0, 1, 2, ….
pub(crate) fn parse_series(csv: &[u8]) -> Series {
    let text = String::from_utf8_lossy(csv);
    let mut lines = text.lines();
    let Some(header) = lines.next() else {
        return Series::default();
    };
    let names: Vec<&str> = header.split(',').collect();
    let second_index = names.iter().position(|n| *n == "second");
    let index: Vec<Option<usize>> = COLUMNS
        .iter()
        .map(|c| names.iter().position(|n| n == c))
        .collect();
    let rows = || {
        lines.clone().enumerate().map(|(i, line)| {
            let cells: Vec<&str> = line.split(',').collect();
            let cell = |i: Option<usize>| -> u64 {
                i.and_then(|i| cells.get(i))
                    .and_then(|c| c.parse().ok())
                    .unwrap_or(0)
            };
            let second = match second_index {
                Some(_) => cell(second_index),
                None => i as u64,
            };
            let mut row = [0_u64; 6];
            for (slot, i) in row.iter_mut().zip(&index) {
                *slot = cell(*i);
            }
            (second, row)
        })
    };
    // Two passes: the length first (it sets the bucket), then the sums.
    let Some(seconds) = rows().map(|(second, _)| second.saturating_add(1)).max() else {
        return Series::default();
    };
    let bucket = timeline_bucket(seconds);
    let points = usize::try_from(seconds.div_ceil(bucket)).unwrap_or(usize::MAX);
    let mut sums = vec![[0_u64; 6]; points];
    for (second, row) in rows() {
        if let Some(point) = usize::try_from(second / bucket)
            .ok()
            .and_then(|p| sums.get_mut(p))
        {
            for (sum, value) in point.iter_mut().zip(row) {
                *sum = sum.saturating_add(value);
            }
        }
    }
    Series {
        seconds,
        bucket,
        sums,
    }
}

/// Seconds per timeline point for a series of `n` seconds: the smallest round size that keeps
/// it to [`TARGET_POINTS`] points.
pub(crate) fn timeline_bucket(n: u64) -> u64 {
    let least = n.div_ceil(TARGET_POINTS).max(1);
    ROUND_BUCKETS
        .iter()
        .copied()
        .find(|&b| b >= least)
        .unwrap_or_else(|| least.div_ceil(86_400).saturating_mul(86_400))
}

/// A bucket size for a label: `30 s`, `5 min`, `2 h`, `3 d`.
fn bucket_name(secs: u64) -> String {
    if secs.is_multiple_of(86_400) {
        format!("{} d", secs / 86_400)
    } else if secs.is_multiple_of(3600) {
        format!("{} h", secs / 3600)
    } else if secs.is_multiple_of(60) {
        format!("{} min", secs / 60)
    } else {
        format!("{secs} s")
    }
}

pub(crate) fn render(
    series: &Series,
    faults: &[FaultWindow],
    run_end_us: u64,
) -> Result<String, String> {
    svg(HEIGHT, |root| draw(root, series, faults, run_end_us))
}

fn draw(root: &Area<'_>, series: &Series, faults: &[FaultWindow], run_end_us: u64) -> Drawn {
    let bucket = series.bucket;
    let averaged = (bucket > 1).then(|| format!("averaged per {}", bucket_name(bucket)));
    match &averaged {
        Some(how) => title(root, &format!("Requests per virtual second ({how})"))?,
        None => title(root, "Requests per virtual second")?,
    }
    if series.seconds == 0 {
        return nothing(root, "no traffic");
    }
    let series_us = series.seconds.saturating_mul(MICROS_PER_SECOND);
    let end_us = run_end_us.max(series_us);
    let axis = TimeAxis::for_run(end_us);
    let (lines, ymax) = mean_lines(series, &axis);
    draw_legend(root, faults)?;

    let mut chart = Frame::UNDER_LEGEND.chart(root, 0.0..axis.end, 0.0..ymax)?;
    let y_desc = match &averaged {
        Some(how) => format!("per second, {how}"),
        None => "per second".to_string(),
    };
    chart
        .configure_mesh()
        .house_grid()
        .x_desc(axis.desc)
        .y_desc(y_desc)
        .x_label_formatter(&|v| fmt_tick(*v))
        .y_label_formatter(&|v| fmt_tick(*v))
        .draw()?;
    draw_faults(root, &mut chart, faults, &axis, end_us, ymax)?;
    for (i, (line, color)) in lines.into_iter().zip(COLORS).enumerate() {
        if MARKED.contains(&i) {
            chart.draw_series(
                line.iter()
                    .filter(|(_, y)| *y > 0.0)
                    .map(|&p| Circle::new(p, 3, color.filled())),
            )?;
        }
        chart.draw_series(LineSeries::new(line, color.stroke_width(2)))?;
    }
    Ok(())
}

/// Per-second means over each bucket, at the bucket's first second, one line per counter;
/// and the y axis' top (a little above the highest mean, at least 1).
fn mean_lines(series: &Series, axis: &TimeAxis) -> ([Vec<(f64, f64)>; 6], f64) {
    let mut lines: [Vec<(f64, f64)>; 6] = Default::default();
    let mut ymax: f64 = 1.0;
    for (i, sums) in series.sums.iter().enumerate() {
        let x = axis.at((i as u64 * series.bucket).saturating_mul(MICROS_PER_SECOND));
        let len = series.bucket_len(i);
        for (line, sum) in lines.iter_mut().zip(sums) {
            let y = *sum as f64 / len as f64;
            ymax = ymax.max(y);
            line.push((x, y));
        }
    }
    (lines, ymax * 1.12)
}

/// One entry per counter, and the fault windows'.
fn draw_legend(root: &Area<'_>, faults: &[FaultWindow]) -> Drawn {
    let mut entries: Vec<(Swatch, String)> = COLUMNS
        .iter()
        .zip(COLORS)
        .map(|(name, color)| (Swatch::Line(color), (*name).to_string()))
        .collect();
    if !faults.is_empty() {
        entries.push((Swatch::Box(FAULT, 0.3), "fault window".into()));
    }
    legend(root, (16, 44), &entries)
}

/// The fault windows shaded behind the lines, and their labels along the top (see
/// [`place_labels`]), with a note of how many did not fit.
fn draw_faults(
    root: &Area<'_>,
    chart: &mut Chart<'_, '_>,
    faults: &[FaultWindow],
    axis: &TimeAxis,
    end_us: u64,
    ymax: f64,
) -> Drawn {
    let mut candidates = Vec::new();
    for fault in faults {
        let Some(span) = axis.span(fault, end_us) else {
            continue;
        };
        shade(chart, span, ymax, FAULT, FAULT_ALPHA)?;
        let (px, _) = chart.backend_coord(&(span.0, ymax));
        candidates.push(LabelCandidate {
            x: px + 4,
            full: fault.full_label(),
            short: fault.label.clone(),
        });
    }
    let (_, top) = chart.backend_coord(&(0.0, ymax));
    let (right, _) = chart.backend_coord(&(axis.end, ymax));
    let (placed, hidden) = place_labels(&candidates, right);
    for label in placed {
        root.draw(&Text::new(
            label.text,
            (
                label.x,
                top + 4 + 15 * i32::try_from(label.row).unwrap_or(0),
            ),
            text(LABEL_PX, FAULT, HPos::Left, VPos::Top),
        ))?;
    }
    if hidden > 0 {
        let s = if hidden == 1 { "" } else { "s" };
        root.draw(&Text::new(
            format!("{hidden} more fault label{s} not shown (overlapping)"),
            (right, top + 4 + 15 * i32::try_from(LABEL_ROWS).unwrap_or(3)),
            text(11, MUTED, HPos::Right, VPos::Top),
        ))?;
    }
    Ok(())
}

/// A fault label to place: where its window starts (px), its full text and its short one.
#[derive(Debug)]
struct LabelCandidate {
    x: i32,
    full: String,
    short: String,
}

/// A fault label placed: its text, where it starts and its row (0 at the top).
#[derive(Debug, PartialEq, Eq)]
struct PlacedLabel {
    text: String,
    x: i32,
    row: usize,
}

/// Places labels left to right in [`LABEL_ROWS`] rows so that none runs into another: each
/// goes in full in the first row with room, else shortened (without its detail), else not at
/// all. A label already shown (a flapping fault's) is not repeated, nor counted as hidden. A
/// label that would run past `right` starts earlier (never before the plot's left edge).
/// Returns the placed labels and how many were left out.
fn place_labels(candidates: &[LabelCandidate], right: i32) -> (Vec<PlacedLabel>, usize) {
    let mut order: Vec<&LabelCandidate> = candidates.iter().collect();
    order.sort_by_key(|c| c.x);
    let left = order.first().map_or(0, |c| c.x);
    let mut row_ends = [i32::MIN; LABEL_ROWS];
    let mut placed: Vec<PlacedLabel> = Vec::new();
    let mut shown: Vec<&str> = Vec::new();
    let mut hidden = 0;
    for candidate in order {
        if shown.contains(&candidate.short.as_str()) {
            continue;
        }
        let fit = [&candidate.full, &candidate.short]
            .into_iter()
            .find_map(|text| {
                let width = estimate_width(text, LABEL_PX);
                let x = candidate.x.min(right - width).max(left);
                let row = row_ends.iter().position(|end| x > *end)?;
                Some((text, x, width, row))
            });
        match fit {
            Some((text, x, width, row)) => {
                row_ends[row] = x + width + 8;
                shown.push(&candidate.short);
                placed.push(PlacedLabel {
                    text: text.clone(),
                    x,
                    row,
                });
            }
            None => hidden += 1,
        }
    }
    (placed, hidden)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str =
        "second,arrivals,ok,failed,retries,fallbacks,deployments_cooling,deployments_half_open";
    const HEADER_NOW: &str = "second,arrivals,ok,failed,retries,fallbacks,deployments_cooling,\
deployments_half_open,p50_ms,p90_ms,p99_ms,continuations";

    /// The number of points of each `<polyline>` (the series' lines).
    fn polyline_points(svg: &str) -> Vec<usize> {
        svg.split("<polyline")
            .skip(1)
            .filter_map(|p| p.split("points=\"").nth(1)?.split('"').next())
            .map(|points| points.split_whitespace().count())
            // Grid and axis lines have two points.
            .filter(|n| *n > 2)
            .collect()
    }

    /// A day of traffic: 10/s with a burst of fallbacks and one continuation per hour.
    fn day_csv() -> String {
        let mut csv = format!("{HEADER_NOW}\n");
        for second in 0..86_400_u64 {
            let (fallbacks, continuations) = if second % 3600 == 7 { (3, 1) } else { (0, 0) };
            csv.push_str(&format!(
                "{second},10,10,0,0,{fallbacks},0,0,1,2,3,{continuations}\n"
            ));
        }
        csv
    }

    #[test]
    fn a_day_is_a_few_pixels_per_point_and_says_its_bucket() {
        let series = parse_series(day_csv().as_bytes());
        assert_eq!(series.bucket, 300);
        let svg = render(&series, &[], 86_400 * MICROS_PER_SECOND).unwrap_or_default();
        let lines = polyline_points(&svg);
        assert_eq!(lines.len(), COLUMNS.len(), "{lines:?}");
        assert!(
            lines.iter().all(|n| *n <= TARGET_POINTS as usize),
            "{lines:?}"
        );
        assert!(svg.contains("per second, averaged per 5 min"), "{svg}");
        assert!(svg.contains("(averaged per 5 min)"), "{svg}");
        // A short run is not averaged and says nothing of buckets.
        let short = parse_series(
            format!("{HEADER_NOW}\n0,1,1,0,0,0,0,0,,,,0\n299,1,1,0,0,0,0,0,,,,0\n").as_bytes(),
        );
        assert_eq!(short.bucket, 1);
        let svg = render(&short, &[], 300 * MICROS_PER_SECOND).unwrap_or_default();
        assert!(!svg.contains("averaged"), "{svg}");
    }

    #[test]
    fn bucket_sizes_are_round_and_keep_to_the_target() {
        for (seconds, bucket) in [
            (1, 1),
            (300, 1),
            (301, 2),
            (3600, 15),
            (10_000, 60),
            (86_400, 300),
            (7 * 86_400, 3600),
            (30 * 86_400, 21_600),
            (200 * 86_400, 86_400),
        ] {
            assert_eq!(timeline_bucket(seconds), bucket, "{seconds} s");
            assert!(seconds.div_ceil(bucket) <= TARGET_POINTS, "{seconds} s");
        }
        assert_eq!(bucket_name(300), "5 min");
        assert_eq!(bucket_name(15), "15 s");
        assert_eq!(bucket_name(7200), "2 h");
        assert_eq!(bucket_name(2 * 86_400), "2 d");
    }

    #[test]
    fn fallbacks_and_continuations_have_a_legend_entry_and_a_marker_where_non_zero() {
        let series = parse_series(day_csv().as_bytes());
        // One continuation per hour: 24 points with one.
        let with_continuations = series.sums.iter().filter(|s| s[5] > 0).count();
        assert_eq!(with_continuations, 24);
        let svg = render(&series, &[], 86_400 * MICROS_PER_SECOND).unwrap_or_default();
        assert!(svg.contains(">\ncontinuations\n<"), "{svg}");
        assert!(svg.contains(">\nfallbacks\n<"), "{svg}");
        // A marker on every non-zero point of both (the same 24 points).
        assert_eq!(svg.matches("<circle").count(), 2 * 24, "{svg}");
    }

    fn candidate(x: i32, full: &str, short: &str) -> LabelCandidate {
        LabelCandidate {
            x,
            full: full.into(),
            short: short.into(),
        }
    }

    #[test]
    fn overlapping_fault_labels_stack_shorten_or_are_counted_never_collide() {
        let full = "azure-east: rate_limit 429 80% Retry-After 5s, 2m–12m";
        let candidates: Vec<LabelCandidate> = (0..8)
            .map(|i| candidate(100 + 10 * i, full, &format!("f{i}: rate_limit 429 80%")))
            .collect();
        let (placed, hidden) = place_labels(&candidates, 900);
        assert_eq!(placed.len() + hidden, 8);
        assert!(hidden > 0, "{placed:?}");
        // The first goes in full; once the rows are taken, shortened.
        assert_eq!(placed[0].text, full);
        for (i, a) in placed.iter().enumerate() {
            for b in &placed[i + 1..] {
                if a.row != b.row {
                    continue;
                }
                let (a_end, b_end) = (
                    a.x + estimate_width(&a.text, LABEL_PX),
                    b.x + estimate_width(&b.text, LABEL_PX),
                );
                assert!(a_end < b.x || b_end < a.x, "{a:?} and {b:?} collide");
            }
        }
        // Far apart: all in full, in the first row; near the right edge: moved left.
        let (placed, hidden) = place_labels(
            &[
                candidate(0, full, "a"),
                candidate(500, full, "b"),
                candidate(1990, full, "c"),
            ],
            2000,
        );
        assert_eq!(hidden, 0);
        assert!(
            placed.iter().all(|p| p.row == 0 && p.text == full),
            "{placed:?}"
        );
        assert!(
            placed[2].x + estimate_width(full, LABEL_PX) <= 2000,
            "{placed:?}"
        );
        // A flapping fault's repeated label is not shown again, nor counted.
        let (placed, hidden) =
            place_labels(&[candidate(0, full, "a"), candidate(5, full, "a")], 1000);
        assert_eq!((placed.len(), hidden), (1, 0));
    }

    #[test]
    fn a_fault_label_says_its_retry_after_and_probability() {
        let series = parse_series(day_csv().as_bytes());
        let fault = FaultWindow {
            label: "azure-east: rate_limit 429 80%".into(),
            detail: "Retry-After 5s, 2m–12m".into(),
            deployments: vec!["azure-east".into()],
            from: std::time::Duration::from_secs(120),
            to: Some(std::time::Duration::from_secs(720)),
        };
        let svg = render(&series, &[fault], 86_400 * MICROS_PER_SECOND).unwrap_or_default();
        assert!(
            svg.contains("azure-east: rate_limit 429 80% Retry-After 5s, 2m–12m"),
            "{svg}"
        );
    }

    /// A dense CSV of `seconds` rows with a few busy seconds, and the same without its quiet
    /// rows (the last row kept).
    fn dense_and_sparse(seconds: u64) -> (String, String) {
        let (mut dense, mut sparse) = (format!("{HEADER}\n"), format!("{HEADER}\n"));
        for second in 0..seconds {
            let busy = second % 7 == 0 || second % 500 == 3;
            let n = if busy { second % 5 + 1 } else { 0 };
            let row = format!("{second},{n},{n},0,{},0,0,0\n", n / 2);
            dense.push_str(&row);
            if busy || second + 1 == seconds {
                sparse.push_str(&row);
            }
        }
        (dense, sparse)
    }

    #[test]
    fn quiet_seconds_left_out_draw_as_zeros() {
        // Unbucketed and bucketed (with a short last bucket).
        for seconds in [90, 2000, 4321] {
            let (dense, sparse) = dense_and_sparse(seconds);
            assert_ne!(dense, sparse);
            let (dense, sparse) = (
                parse_series(dense.as_bytes()),
                parse_series(sparse.as_bytes()),
            );
            assert_eq!(dense, sparse, "{seconds} s");
            assert_eq!(dense.seconds, seconds);
            let end = seconds * MICROS_PER_SECOND;
            assert_eq!(render(&dense, &[], end), render(&sparse, &[], end));
        }
    }

    #[test]
    fn a_year_is_a_few_hundred_points() {
        let year = 365 * 86_400;
        let csv = format!("{HEADER}\n0,1,0,0,0,0,0,0\n{year},0,1,0,0,0,0,0\n");
        let series = parse_series(csv.as_bytes());
        assert_eq!(series.seconds, year + 1);
        // Two days per point: 183 points.
        assert_eq!(series.bucket, 2 * 86_400);
        assert_eq!(series.sums.len(), 183);
        assert_eq!(series.sums[0], [1, 0, 0, 0, 0, 0]);
        assert_eq!(series.sums[182], [0, 1, 0, 0, 0, 0]);
    }
}
