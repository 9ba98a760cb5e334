//! `timeline.svg`: arrivals, ok, failed, retries, fallbacks and stream continuations per
//! virtual second, with the fault windows shaded and labelled.
//!
//! The numbers are `timeseries.csv`'s, read back from the bytes the recorder just wrote, so
//! the plot and the CSV can never disagree and the recorder's hot path does no extra work.
//!
//! Two panels on one time axis, so that no series hides another: above, the requests — ok and
//! failed stacked (what ended), arrivals as a line over them; below, on a scale of its own,
//! what the router did about them — retries, fallbacks and continuations stacked. (Drawn as
//! lines on one chart, `fallbacks` lay on `ok` whenever every request fell back.) Fallbacks and
//! continuations are usually few: each bucket with one gets a marker, so a handful still shows.
//!
//! Readable at any length: a run longer than [`TARGET_POINTS`] seconds is averaged into
//! buckets of a round size (2 s, 5 s, 10 s, 1 min, 5 min, …) chosen so that there are at most
//! that many, and the plot says the bucket. Fault labels say the `Retry-After` sent and the
//! time range; labels that would collide are stacked in rows, then shortened, then left out
//! (the plot says how many).

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::axis::{Chart, Frame, GridStyle, TimeAxis, fmt_tick, shade};
use super::context::FaultWindow;
use super::palette::{
    ARRIVALS, CONTINUATIONS, FAILED, FALLBACKS, FAULT, FAULT_ALPHA, MUTED, OK, RETRIES,
};
use super::stack::stacked_steps;
use super::style::{Area, Drawn, Swatch, estimate_width, legend, nothing, svg, text, title};
use crate::units::MICROS_PER_SECOND;

/// The timeline's most buckets: about 6 px wide or more on its ~860 px plot, so a level
/// reads as one.
pub(crate) const TARGET_POINTS: u64 = 150;
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
const HEIGHT: u32 = 500;
/// The lower panel's height (retries, fallbacks, continuations), px.
const ACTIONS_PX: i32 = 170;
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
    let (spans, means) = mean_values(series, &axis);
    draw_legend(root, faults)?;
    let y_desc = match &averaged {
        Some(how) => format!("per second, {how}"),
        None => "per second".to_string(),
    };
    let height = i32::try_from(root.dim_in_pixel().1).unwrap_or(0);
    let (upper, lower) = root.split_vertically(height - ACTIONS_PX);
    let [arrivals, ok, failed, retries, fallbacks, continuations] = means;
    let panels = Panels {
        axis,
        end_us,
        spans,
        faults,
    };
    panels.requests(&upper, y_desc, &arrivals, ok, failed)?;
    panels.actions(&lower, [retries, fallbacks, continuations])
}

/// What both panels share: the time axis, the buckets' spans and the fault windows.
struct Panels<'f> {
    axis: TimeAxis,
    end_us: u64,
    spans: Vec<(f64, f64)>,
    faults: &'f [FaultWindow],
}

impl Panels<'_> {
    /// The requests: ok and failed stacked (what ended), arrivals as a line over them; the
    /// fault windows shaded and labelled.
    fn requests(
        &self,
        area: &Area<'_>,
        y_desc: String,
        arrivals: &[f64],
        ok: Vec<f64>,
        failed: Vec<f64>,
    ) -> Drawn {
        let ended: Vec<f64> = ok.iter().zip(&failed).map(|(a, b)| a + b).collect();
        let ymax = top_of(&[arrivals, &ended]);
        let frame = Frame {
            x_labels: 8,
            ..Frame::UNDER_LEGEND
        };
        let mut chart = frame.chart(area, 0.0..self.axis.end, 0.0..ymax)?;
        chart
            .configure_mesh()
            .house_grid()
            .y_desc(y_desc)
            .x_label_formatter(&|_| String::new())
            .y_label_formatter(&|v| fmt_tick(*v))
            .draw()?;
        draw_faults(area, &mut chart, self.faults, &self.axis, self.end_us, ymax)?;
        let (bands, _) = stacked_steps(&self.spans, &[ok, failed]);
        for (band, color) in bands.into_iter().zip([OK, FAILED]) {
            if let Some(points) = band {
                chart.draw_series(std::iter::once(Polygon::new(points, color.filled())))?;
            }
        }
        let line: Vec<(f64, f64)> = self
            .spans
            .iter()
            .zip(arrivals)
            .flat_map(|(&(x0, x1), &y)| [(x0, y), (x1, y)])
            .collect();
        chart.draw_series(LineSeries::new(line, ARRIVALS.stroke_width(2)))?;
        Ok(())
    }

    /// What the router did about them: retries, fallbacks and continuations stacked, on a
    /// scale of their own so that a handful shows; a marker on each bucket with a fallback or
    /// a continuation (usually few).
    fn actions(&self, area: &Area<'_>, actions: [Vec<f64>; 3]) -> Drawn {
        let ymax = top_of(&[&stacked_total(&actions)]);
        let frame = Frame {
            top: 18,
            ..Frame::UNDER_LEGEND
        };
        let mut chart = frame.chart(area, 0.0..self.axis.end, 0.0..ymax)?;
        chart
            .configure_mesh()
            .house_grid()
            .x_desc(self.axis.desc)
            .y_labels(4)
            .x_label_formatter(&|v| fmt_tick(*v))
            .y_label_formatter(&|v| fmt_tick(*v))
            .draw()?;
        for span in self
            .faults
            .iter()
            .filter_map(|f| self.axis.span(f, self.end_us))
        {
            shade(&mut chart, span, ymax, FAULT, FAULT_ALPHA)?;
        }
        let (bands, tops) = stacked_steps(&self.spans, &actions);
        for (k, (band, color)) in bands
            .into_iter()
            .zip([RETRIES, FALLBACKS, CONTINUATIONS])
            .enumerate()
        {
            if let Some(points) = band {
                chart.draw_series(std::iter::once(Polygon::new(points, color.filled())))?;
            }
            if MARKED.contains(&(k + 3)) {
                chart.draw_series(
                    self.spans
                        .iter()
                        .zip(&actions[k])
                        .zip(&tops[k])
                        .filter(|((_, v), _)| **v > 0.0)
                        .map(|((&(x0, x1), _), &top)| {
                            Circle::new(((x0 + x1) / 2.0, top), 3, color.filled())
                        }),
                )?;
            }
        }
        // Above the panel's plot (the area draws in its own coordinates, the chart gives the
        // backend's).
        let ((x, y), (bx, by)) = (chart.backend_coord(&(0.0, ymax)), area.get_base_pixel());
        area.draw(&Text::new(
            "retries, fallbacks and continuations, stacked (own scale)".to_string(),
            (x - bx + 6, y - by - 16),
            text(12, MUTED, HPos::Left, VPos::Top),
        ))
    }
}

/// Each bucket's x span, and per counter its per-second mean over each bucket.
fn mean_values(series: &Series, axis: &TimeAxis) -> (Vec<(f64, f64)>, [Vec<f64>; 6]) {
    let mut values: [Vec<f64>; 6] = Default::default();
    let mut spans = Vec::with_capacity(series.sums.len());
    for (i, sums) in series.sums.iter().enumerate() {
        let from = i as u64 * series.bucket;
        let len = series.bucket_len(i);
        spans.push((
            axis.at(from.saturating_mul(MICROS_PER_SECOND)),
            axis.at((from + len).saturating_mul(MICROS_PER_SECOND)),
        ));
        for (value, sum) in values.iter_mut().zip(sums) {
            value.push(*sum as f64 / len.max(1) as f64);
        }
    }
    (spans, values)
}

/// The sum of `series`, bucket by bucket.
fn stacked_total(series: &[Vec<f64>]) -> Vec<f64> {
    let mut total: Vec<f64> = Vec::new();
    for s in series {
        total.resize(total.len().max(s.len()), 0.0);
        for (t, v) in total.iter_mut().zip(s) {
            *t += v;
        }
    }
    total
}

/// A y axis' top: a little above the highest value, at least 1.
fn top_of(series: &[&[f64]]) -> f64 {
    series
        .iter()
        .flat_map(|s| s.iter())
        .fold(1.0_f64, |m, v| m.max(*v))
        * 1.12
}

/// One entry per counter (a line for arrivals, a box for the stacked ones), and the fault
/// windows'.
fn draw_legend(root: &Area<'_>, faults: &[FaultWindow]) -> Drawn {
    let mut entries: Vec<(Swatch, String)> = COLUMNS
        .iter()
        .zip(COLORS)
        .enumerate()
        .map(|(i, (name, color))| {
            let swatch = if i == 0 {
                Swatch::Line(color)
            } else {
                Swatch::Box(color, 1.0)
            };
            (swatch, (*name).to_string())
        })
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
mod tests;
