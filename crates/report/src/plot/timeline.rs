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
pub(crate) const MAX_POINTS_UNBUCKETED: usize = 2000;
/// Points per series of a bucketed timeline (about).
const BUCKETED_POINTS: usize = 1000;
/// The counters drawn, in `timeseries.csv`'s column names.
const COLUMNS: [&str; 5] = ["arrivals", "ok", "failed", "retries", "fallbacks"];
const COLORS: [RGBColor; 5] = [ARRIVALS, OK, FAILED, RETRIES, FALLBACKS];
const HEIGHT: u32 = 440;

/// One row of counters per second, in [`COLUMNS`] order.
pub(crate) type SecondCounts = [u64; 5];

/// Reads the counters of `timeseries.csv` (columns found by name; bad cells read as 0).
pub(crate) fn parse_series(csv: &[u8]) -> Vec<SecondCounts> {
    let text = String::from_utf8_lossy(csv);
    let mut lines = text.lines();
    let Some(header) = lines.next() else {
        return Vec::new();
    };
    let names: Vec<&str> = header.split(',').collect();
    let index: Vec<Option<usize>> = COLUMNS
        .iter()
        .map(|c| names.iter().position(|n| n == c))
        .collect();
    lines
        .map(|line| {
            let cells: Vec<&str> = line.split(',').collect();
            let mut row = [0_u64; 5];
            for (slot, i) in row.iter_mut().zip(&index) {
                *slot = i
                    .and_then(|i| cells.get(i))
                    .and_then(|c| c.parse().ok())
                    .unwrap_or(0);
            }
            row
        })
        .collect()
}

/// Seconds per point for a series of `n` seconds.
pub(crate) fn bucket_seconds(n: usize) -> usize {
    if n > MAX_POINTS_UNBUCKETED {
        n.div_ceil(BUCKETED_POINTS)
    } else {
        1
    }
}

pub(crate) fn render(
    series: &[SecondCounts],
    faults: &[FaultWindow],
    run_end_us: u64,
) -> Result<String, String> {
    svg(HEIGHT, |root| draw(root, series, faults, run_end_us))
}

fn draw(
    root: &Area<'_>,
    series: &[SecondCounts],
    faults: &[FaultWindow],
    run_end_us: u64,
) -> Drawn {
    title(root, "Requests per virtual second")?;
    if series.is_empty() {
        return nothing(root, "no traffic");
    }
    let series_us = (series.len() as u64).saturating_mul(MICROS_PER_SECOND);
    let end_us = run_end_us.max(series_us);
    let axis = TimeAxis::for_run(end_us);
    let bucket = bucket_seconds(series.len());

    // Per-second means over each bucket, at the bucket's first second.
    let mut lines: [Vec<(f64, f64)>; 5] = Default::default();
    let mut ymax: f64 = 1.0;
    for (i, chunk) in series.chunks(bucket).enumerate() {
        let x = axis.at((i * bucket) as u64 * MICROS_PER_SECOND);
        for (k, line) in lines.iter_mut().enumerate() {
            let sum: u64 = chunk.iter().map(|row| row[k]).sum();
            let y = sum as f64 / chunk.len() as f64;
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
