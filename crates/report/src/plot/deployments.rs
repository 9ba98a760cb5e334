//! `deployments.svg`: a Gantt chart of deployment health. One lane per deployment, grouped
//! under its model group: green while healthy, red while cooling, amber while half-open, with
//! each fault window shaded behind the lanes of the deployments it hits.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::collect::Intervals;
use super::style::{
    Area, COOLING, Drawn, FAULT, GRID, HALF_OPEN, HEALTHY, INK, MUTED, Swatch, TimeAxis,
    axis_labels, bold, estimate_width, fmt_tick, legend, nothing, svg, text, title,
};
use super::{FaultWindow, MAX_INTERVALS_PER_DEPLOYMENT};
use crate::units::micros;

/// Height of one row (a lane or a group heading), px.
const ROW_PX: u32 = 30;
/// Above the rows: title and legend.
const TOP_PX: u32 = 66;
/// Below the rows: the time axis.
const BOTTOM_PX: u32 = 52;
/// The state bar's span inside its row (fractions from the row's bottom); the top part is
/// left for fault labels.
const BAR: (f64, f64) = (0.14, 0.58);
const FAULT_ROW_ALPHA: f64 = 0.16;

/// One deployment's lane.
#[derive(Debug)]
pub(crate) struct Lane<'a> {
    pub(crate) id: &'a str,
    pub(crate) group: &'a str,
    pub(crate) cooling: Option<&'a Intervals>,
    pub(crate) half_open: Option<&'a Intervals>,
}

/// A row of the chart.
enum Row<'a> {
    Group(&'a str),
    Lane(&'a Lane<'a>),
}

pub(crate) fn render(
    lanes: &[Lane<'_>],
    faults: &[FaultWindow],
    run_end_us: u64,
) -> Result<String, String> {
    let mut rows: Vec<Row<'_>> = Vec::new();
    for lane in lanes {
        let new_group = match rows.iter().rev().find_map(|r| match r {
            Row::Lane(l) => Some(l.group),
            Row::Group(_) => None,
        }) {
            Some(group) => group != lane.group,
            None => true,
        };
        if new_group {
            rows.push(Row::Group(lane.group));
        }
        rows.push(Row::Lane(lane));
    }
    let count = u32::try_from(rows.len()).unwrap_or(u32::MAX / ROW_PX);
    let height = TOP_PX + BOTTOM_PX + ROW_PX * count.max(2);
    svg(height, |root| draw(root, &rows, faults, run_end_us))
}

/// `cooling 100.0 s, 5 periods` and `half-open 3 s, 2 periods`, one line each; none for a lane
/// that stayed healthy. Says how many periods were not drawn when a deployment passed the cap.
fn annotation(lane: &Lane<'_>) -> Vec<String> {
    let mut parts = Vec::new();
    let mut dropped = 0;
    for (name, intervals) in [("cooling", lane.cooling), ("half-open", lane.half_open)] {
        let Some(iv) = intervals else { continue };
        let n = iv.closed.len() as u64 + iv.dropped;
        dropped += iv.dropped;
        if n > 0 {
            let secs = iv.total_us() as f64 / 1e6;
            let capped = if iv.dropped > 0 { "+" } else { "" };
            let periods = if n == 1 { "period" } else { "periods" };
            parts.push(format!(
                "{name} {}{capped} s, {n} {periods}",
                fmt_tick(round1(secs))
            ));
        }
    }
    if dropped > 0 {
        parts.push(format!(
            "{dropped} not drawn (cap {MAX_INTERVALS_PER_DEPLOYMENT})"
        ));
    }
    parts
}

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// Intervals in time order, merged where the gap is under `gap` µs.
fn merged(intervals: &[(u64, u64)], gap: u64) -> Vec<(u64, u64)> {
    let mut out: Vec<(u64, u64)> = Vec::new();
    for &(a, b) in intervals {
        match out.last_mut() {
            Some(last) if a <= last.1.saturating_add(gap) => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

fn draw(root: &Area<'_>, rows: &[Row<'_>], faults: &[FaultWindow], run_end_us: u64) -> Drawn {
    title(root, "Deployment health")?;
    if rows.is_empty() {
        return nothing(root, "no deployments");
    }
    let mut entries = vec![
        (Swatch::Box(HEALTHY, 1.0), "healthy".to_string()),
        (Swatch::Box(COOLING, 1.0), "cooling".to_string()),
        (Swatch::Box(HALF_OPEN, 1.0), "half-open".to_string()),
    ];
    if !faults.is_empty() {
        entries.push((Swatch::Box(FAULT, 0.3), "fault window".to_string()));
    }
    legend(root, (16, 44), &entries)?;

    let labels_px = rows
        .iter()
        .map(|r| match r {
            Row::Group(g) => estimate_width(g, 13) + 16,
            Row::Lane(l) => estimate_width(l.id, 13) + 30,
        })
        .max()
        .unwrap_or(80)
        .clamp(80, 300);
    let notes: Vec<Vec<String>> = rows
        .iter()
        .map(|r| match r {
            Row::Lane(l) => annotation(l),
            Row::Group(_) => Vec::new(),
        })
        .collect();
    let notes_px = notes
        .iter()
        .flatten()
        .map(|n| estimate_width(n, 11) + 16)
        .max()
        .unwrap_or(0)
        .clamp(24, 300);

    let axis = TimeAxis::for_run(run_end_us);
    let n = rows.len() as f64;
    let mut chart = ChartBuilder::on(root)
        .margin_top(TOP_PX - 6)
        .margin_right(notes_px)
        .margin_left(8)
        .margin_bottom(6)
        .x_label_area_size(BOTTOM_PX - 10)
        .y_label_area_size(labels_px)
        .build_cartesian_2d(0.0..axis.end, 0.0..n)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(0)
        .light_line_style(GRID.mix(0.0))
        .bold_line_style(GRID)
        .axis_style(INK)
        .x_desc(axis.desc)
        .x_label_formatter(&|v| fmt_tick(*v))
        .label_style(axis_labels())
        .draw()?;

    let plot_px = u64::from(chart.plotting_area().dim_in_pixel().0.max(1));
    let us_per_px = (run_end_us / plot_px).max(1);
    let one_px = axis.at(us_per_px).max(axis.end / plot_px as f64);
    let end = axis.end;
    // Row `r` (0 at the top) spans y from `n - r - 1` to `n - r`.
    let bottom = |r: usize| n - r as f64 - 1.0;
    let mut labelled = vec![false; faults.len()];

    for (r, row) in rows.iter().enumerate() {
        let y0 = bottom(r);
        let (lx, ly) = chart.backend_coord(&(0.0, y0 + (BAR.0 + BAR.1) / 2.0));
        match row {
            Row::Group(group) => {
                root.draw(&Text::new(
                    (*group).to_string(),
                    (lx - labels_px + 4, ly),
                    bold(13, INK, HPos::Left, VPos::Center),
                ))?;
                if r > 0 {
                    chart.draw_series(std::iter::once(PathElement::new(
                        vec![(0.0, y0 + 1.0), (end, y0 + 1.0)],
                        GRID.stroke_width(1),
                    )))?;
                }
            }
            Row::Lane(lane) => {
                root.draw(&Text::new(
                    lane.id.to_string(),
                    (lx - labels_px + 18, ly),
                    text(13, INK, HPos::Left, VPos::Center),
                ))?;
                // Fault windows behind the lane, labelled in the first lane they hit where
                // the label does not run into the previous one (a flapping fault repeats
                // one label: the shading says the rest).
                let mut label_end = i32::MIN;
                for (i, fault) in faults.iter().enumerate() {
                    if !fault.deployments.iter().any(|d| d == lane.id) {
                        continue;
                    }
                    let from = axis.at(micros(fault.from));
                    let to = axis.at(fault.to.map_or(run_end_us, micros));
                    if to <= from {
                        continue;
                    }
                    chart.draw_series(std::iter::once(Rectangle::new(
                        [(from, y0), (to, y0 + 1.0)],
                        FAULT.mix(FAULT_ROW_ALPHA).filled(),
                    )))?;
                    let (px, py) = chart.backend_coord(&(from, y0 + 1.0));
                    if !labelled[i] && px + 3 > label_end {
                        labelled[i] = true;
                        label_end = px + 3 + estimate_width(&fault.label, 11) + 8;
                        root.draw(&Text::new(
                            fault.label.clone(),
                            (px + 3, py + 1),
                            text(11, FAULT, HPos::Left, VPos::Top),
                        ))?;
                    }
                }
                let (b0, b1) = (y0 + BAR.0, y0 + BAR.1);
                chart.draw_series(std::iter::once(Rectangle::new(
                    [(0.0, b0), (end, b1)],
                    HEALTHY.filled(),
                )))?;
                for (intervals, color) in [(lane.cooling, COOLING), (lane.half_open, HALF_OPEN)] {
                    let Some(iv) = intervals else { continue };
                    chart.draw_series(merged(&iv.closed, us_per_px).into_iter().map(
                        |(a, b)| {
                            let x0 = axis.at(a);
                            let x1 = axis.at(b).max(x0 + one_px).min(end.max(x0 + one_px));
                            Rectangle::new([(x0, b0), (x1, b1)], color.filled())
                        },
                    ))?;
                }
                // One line beside the bar, or up to three stacked around its centre.
                let (rx, ry) = chart.backend_coord(&(end, y0 + (BAR.0 + BAR.1) / 2.0));
                let lines = i32::try_from(notes[r].len()).unwrap_or(0);
                for (k, note) in (0..).zip(&notes[r]) {
                    let dy = 11 * k - 11 * (lines - 1) / 2;
                    root.draw(&Text::new(
                        note.clone(),
                        (rx + 8, ry + dy),
                        text(11, MUTED, HPos::Left, VPos::Center),
                    ))?;
                }
            }
        }
    }
    Ok(())
}
