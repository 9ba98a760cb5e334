//! `timeline.svg`: arrivals, ok, failed, retries and fallbacks per virtual second, with the
//! fault windows shaded and labelled.
//!
//! The numbers are `timeseries.csv`'s, read back from the bytes the recorder just wrote, so
//! the plot and the CSV can never disagree and the recorder's hot path does no extra work.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::FaultWindow;
use super::style::{
    ARRIVALS, Area, Drawn, FAILED, FALLBACKS, FAULT, FAULT_ALPHA, GRID, INK, OK, RETRIES, Swatch,
    TimeAxis, axis_labels, estimate_width, fmt_tick, legend, nothing, svg, text, title,
};
use crate::units::{MICROS_PER_SECOND, micros};

/// Up to this many seconds, every second is a point; longer runs are averaged into buckets.
pub(crate) const MAX_POINTS_UNBUCKETED: u64 = 2000;
/// Points per series of a bucketed timeline (about).
const BUCKETED_POINTS: u64 = 1000;
/// The counters drawn, in `timeseries.csv`'s column names.
const COLUMNS: [&str; 5] = ["arrivals", "ok", "failed", "retries", "fallbacks"];
const COLORS: [RGBColor; 5] = [ARRIVALS, OK, FAILED, RETRIES, FALLBACKS];
const HEIGHT: u32 = 440;

/// One row of counters, in [`COLUMNS`] order.
pub(crate) type SecondCounts = [u64; 5];

/// The counters of `timeseries.csv`, summed per point: what the timeline draws. Its size is
/// bounded by the number of points (about 2,000 at most), whatever the virtual duration.
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
            let mut row = [0_u64; 5];
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
    let bucket = bucket_seconds(seconds);
    let points = usize::try_from(seconds.div_ceil(bucket)).unwrap_or(usize::MAX);
    let mut sums = vec![[0_u64; 5]; points];
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

/// Seconds per point for a series of `n` seconds.
pub(crate) fn bucket_seconds(n: u64) -> u64 {
    if n > MAX_POINTS_UNBUCKETED {
        n.div_ceil(BUCKETED_POINTS)
    } else {
        1
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
    title(root, "Requests per virtual second")?;
    if series.seconds == 0 {
        return nothing(root, "no traffic");
    }
    let series_us = series.seconds.saturating_mul(MICROS_PER_SECOND);
    let end_us = run_end_us.max(series_us);
    let axis = TimeAxis::for_run(end_us);
    let bucket = series.bucket;

    // Per-second means over each bucket, at the bucket's first second.
    let mut lines: [Vec<(f64, f64)>; 5] = Default::default();
    let mut ymax: f64 = 1.0;
    for (i, sums) in series.sums.iter().enumerate() {
        let x = axis.at((i as u64 * bucket).saturating_mul(MICROS_PER_SECOND));
        let len = series.bucket_len(i);
        for (line, sum) in lines.iter_mut().zip(sums) {
            let y = *sum as f64 / len as f64;
            ymax = ymax.max(y);
            line.push((x, y));
        }
    }
    let ymax = ymax * 1.12;

    let mut entries: Vec<(Swatch, String)> = COLUMNS
        .iter()
        .zip(COLORS)
        .map(|(name, color)| (Swatch::Line(color), (*name).to_string()))
        .collect();
    if !faults.is_empty() {
        entries.push((Swatch::Box(FAULT, 0.3), "fault window".into()));
    }
    legend(root, (16, 44), &entries)?;

    let mut chart = ChartBuilder::on(root)
        .margin_top(62)
        .margin_right(24)
        .margin_left(8)
        .margin_bottom(6)
        .x_label_area_size(42)
        .y_label_area_size(64)
        .build_cartesian_2d(0.0..axis.end, 0.0..ymax)?;
    let y_desc = if bucket > 1 {
        format!("per second (mean over {bucket} s)")
    } else {
        "per second".to_string()
    };
    chart
        .configure_mesh()
        .light_line_style(GRID.mix(0.0))
        .bold_line_style(GRID)
        .axis_style(INK)
        .x_desc(axis.desc)
        .y_desc(y_desc)
        .x_label_formatter(&|v| fmt_tick(*v))
        .y_label_formatter(&|v| fmt_tick(*v))
        .label_style(axis_labels())
        .draw()?;

    let mut label_rows = [i32::MIN; 3];
    let mut shown: Vec<&str> = Vec::new();
    for (i, fault) in faults.iter().enumerate() {
        let from = axis.at(micros(fault.from));
        let to = axis.at(fault.to.map_or(end_us, micros));
        if to <= from {
            continue;
        }
        chart.draw_series(std::iter::once(Rectangle::new(
            [(from, 0.0), (to, ymax)],
            FAULT.mix(FAULT_ALPHA).filled(),
        )))?;
        // The first of three label rows where it does not run into an earlier label; a
        // label already shown (a flapping fault) is not repeated where there is no room.
        let (px, py) = chart.backend_coord(&(from, ymax));
        let x = px + 4;
        let width = estimate_width(&fault.label, 12) + 8;
        let free = label_rows.iter().position(|end| x > *end);
        let row = match free {
            Some(row) => row,
            None if shown.contains(&fault.label.as_str()) => continue,
            None => i % label_rows.len(),
        };
        label_rows[row] = x + width;
        shown.push(&fault.label);
        root.draw(&Text::new(
            fault.label.clone(),
            (x, py + 4 + 15 * i32::try_from(row).unwrap_or(0)),
            text(12, FAULT, HPos::Left, VPos::Top),
        ))?;
    }

    for (line, color) in lines.into_iter().zip(COLORS) {
        chart.draw_series(LineSeries::new(line, color.stroke_width(2)))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str =
        "second,arrivals,ok,failed,retries,fallbacks,deployments_cooling,deployments_half_open";

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
    fn a_year_is_a_thousand_points() {
        let year = 365 * 86_400;
        let csv = format!("{HEADER}\n0,1,0,0,0,0,0,0\n{year},0,1,0,0,0,0,0\n");
        let series = parse_series(csv.as_bytes());
        assert_eq!(series.seconds, year + 1);
        assert_eq!(series.bucket, 31_537);
        assert_eq!(series.sums.len(), 1000);
        assert_eq!(series.sums[0], [1, 0, 0, 0, 0]);
        assert_eq!(series.sums[999], [0, 1, 0, 0, 0]);
    }
}
