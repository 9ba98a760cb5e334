//! `deployments.svg`: a Gantt chart of deployment health. One lane per deployment, grouped
//! under its model group: green while healthy, red while cooling, amber while half-open, with
//! each fault window shaded behind the lanes of the deployments it hits.
//!
//! Visible at any zoom: a cooling or half-open period shorter than [`MIN_PERIOD_PX`] pixels
//! (a 100 ms half-open probe in a 24-hour run is 1/1000 of a pixel) is drawn that wide. The
//! legend and each lane's note name cooldown periods (intervals cooled, `cooldown_periods`)
//! and cooldown sets (every `CooldownSet`, re-sets included, `cooldown_sets`) apart.

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
/// The narrowest a cooling or half-open period is drawn, px.
const MIN_PERIOD_PX: i32 = 2;

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

/// `cooling 100.0 s, 5 periods, 12 sets` and `half-open 3 s, 2 periods`, one line each; none
/// for a lane that stayed healthy. Says how many periods were not drawn when a deployment passed the cap.
fn annotation(lane: &Lane<'_>) -> Vec<String> {
    let mut parts = Vec::new();
    let mut dropped = 0;
    for (name, intervals) in [("cooling", lane.cooling), ("half-open", lane.half_open)] {
        let Some(iv) = intervals else { continue };
        let n = iv.periods();
        dropped += iv.dropped;
        if n > 0 {
            let secs = iv.total_us() as f64 / 1e6;
            let capped = if iv.dropped > 0 { "+" } else { "" };
            let sets = if iv.sets > 0 {
                format!(", {}", plural(iv.sets, "set"))
            } else {
                String::new()
            };
            parts.push(format!(
                "{name} {}{capped} s, {}{sets}",
                fmt_tick(round1(secs)),
                plural(n, "period")
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

/// `1 period`, `5 periods`.
fn plural(n: u64, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

/// The cooling legend entry: both counts of every lane, named apart.
fn cooling_legend(rows: &[Row<'_>]) -> String {
    let (periods, sets) = rows
        .iter()
        .filter_map(|r| match r {
            Row::Lane(l) => l.cooling,
            Row::Group(_) => None,
        })
        .fold((0_u64, 0_u64), |(p, s), iv| {
            (p.saturating_add(iv.periods()), s.saturating_add(iv.sets))
        });
    format!(
        "cooling: {} ({})",
        plural(periods, "cooldown period"),
        plural(sets, "cooldown set")
    )
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

/// A period's pixel span `x0..x1`, at least [`MIN_PERIOD_PX`] wide, inside `left..right`.
fn period_px(x0: i32, x1: i32, (left, right): (i32, i32)) -> (i32, i32) {
    let x1 = x1.max(x0 + MIN_PERIOD_PX).min(right);
    let x0 = x0.min(x1 - MIN_PERIOD_PX).max(left);
    (x0, x1)
}

fn draw(root: &Area<'_>, rows: &[Row<'_>], faults: &[FaultWindow], run_end_us: u64) -> Drawn {
    title(root, "Deployment health")?;
    if rows.is_empty() {
        return nothing(root, "no deployments");
    }
    let mut entries = vec![
        (Swatch::Box(HEALTHY, 1.0), "healthy".to_string()),
        (Swatch::Box(COOLING, 1.0), cooling_legend(rows)),
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
                // In pixels, so that a period shorter than one still gets MIN_PERIOD_PX.
                let (left, top) = chart.backend_coord(&(0.0, b1));
                let (right, bottom) = chart.backend_coord(&(end, b0));
                for (intervals, color) in [(lane.cooling, COOLING), (lane.half_open, HALF_OPEN)] {
                    let Some(iv) = intervals else { continue };
                    for (a, b) in merged(&iv.closed, us_per_px) {
                        let (x0, x1) = period_px(
                            chart.backend_coord(&(axis.at(a), b0)).0,
                            chart.backend_coord(&(axis.at(b), b0)).0,
                            (left, right),
                        );
                        root.draw(&Rectangle::new([(x0, top), (x1, bottom)], color.filled()))?;
                    }
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

#[cfg(test)]
mod tests {
    use super::*;

    const HOUR_US: u64 = 3_600_000_000;

    /// The widths (px) of the rectangles filled with `color`.
    fn widths(svg: &str, color: RGBColor) -> Vec<i32> {
        let fill = format!("fill=\"#{:02X}{:02X}{:02X}\"", color.0, color.1, color.2);
        svg.split("<rect")
            .skip(1)
            .filter(|r| r.split("/>").next().is_some_and(|r| r.contains(&fill)))
            .filter_map(|r| {
                let w = r.split("width=\"").nth(1)?.split('"').next()?;
                w.parse().ok()
            })
            .collect()
    }

    fn intervals(closed: Vec<(u64, u64)>, sets: u64) -> Intervals {
        Intervals::with(closed, sets)
    }

    #[test]
    fn a_100_ms_half_open_period_is_two_pixels_wide_in_a_day_and_in_a_minute() {
        for run_end in [24 * HOUR_US, 60_000_000] {
            let at = run_end / 2;
            let cooling = intervals(vec![(at - 5_000_000, at)], 1);
            let half_open = intervals(vec![(at, at + 100_000)], 0);
            let lane = Lane {
                id: "east",
                group: "gpt-4o",
                cooling: Some(&cooling),
                half_open: Some(&half_open),
            };
            let svg = render(&[lane], &[], run_end).unwrap_or_default();
            // The legend's swatch (14 px), then the period.
            let half_open = widths(&svg, HALF_OPEN);
            assert_eq!(half_open.len(), 2, "{run_end}: {half_open:?}");
            assert!(half_open[1] >= MIN_PERIOD_PX, "{run_end}: {half_open:?}");
            let cooling = widths(&svg, COOLING);
            assert!(cooling.iter().all(|w| *w >= MIN_PERIOD_PX), "{cooling:?}");
        }
    }

    #[test]
    fn a_period_at_the_run_end_stays_inside_the_plot() {
        assert_eq!(period_px(500, 500, (100, 500)), (498, 500));
        assert_eq!(period_px(100, 100, (100, 500)), (100, 102));
        assert_eq!(period_px(200, 300, (100, 500)), (200, 300));
    }

    #[test]
    fn the_legend_and_the_notes_name_cooldown_periods_and_sets_apart() {
        // Two periods from five sets (three re-sets extended a live cooldown) on one lane, one
        // period from one set on the other.
        let east = intervals(vec![(0, 10), (20, 30)], 5);
        let west = intervals(vec![(40, 50)], 1);
        let lanes = [
            Lane {
                id: "east",
                group: "gpt-4o",
                cooling: Some(&east),
                half_open: None,
            },
            Lane {
                id: "west",
                group: "gpt-4o",
                cooling: Some(&west),
                half_open: None,
            },
        ];
        let svg = render(&lanes, &[], 60_000_000).unwrap_or_default();
        assert!(
            svg.contains("cooling: 3 cooldown periods (6 cooldown sets)"),
            "{svg}"
        );
        assert!(svg.contains("cooling 0 s, 2 periods, 5 sets"), "{svg}");
        assert!(svg.contains("cooling 0 s, 1 period, 1 set"), "{svg}");
    }
}
