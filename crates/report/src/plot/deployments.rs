//! `deployments.svg`: a Gantt chart of deployment health. One lane per deployment, grouped
//! under its model group: green while healthy, red while cooling, amber while half-open, with
//! each fault window shaded behind the lanes of the deployments it hits. The router's view
//! (cooling, half-open) and the provider's truth side by side: a deployment that fails most of
//! its attempts while the router neither cools it nor has it half-open (the lone deployment of
//! a group, a deployment below `allowed_fails`) is dark red, "failing, not cooling", never
//! green (see [`super::failing`]).
//!
//! Visible at any zoom: a cooling or half-open period shorter than [`MIN_PERIOD_PX`] pixels
//! (a 100 ms half-open probe in a 24-hour run is 1/1000 of a pixel) is drawn that wide. The
//! legend and each lane's note name cooldown periods (intervals cooled, `cooldown_periods`)
//! and cooldown sets (every `CooldownSet`, re-sets included, `cooldown_sets`) apart.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::axis::{Chart, Frame, GridStyle, TimeAxis, fmt_tick};
use super::context::FaultWindow;
use super::intervals::{Intervals, MAX_INTERVALS_PER_DEPLOYMENT};
use super::palette::{COOLING, FAILING, FAULT, GRID, HALF_OPEN, HEALTHY, INK, MUTED};
use super::style::{
    Area, Drawn, Swatch, WIDTH, bold, estimate_width, legend_rows, nothing, svg, text, title,
    wrap_legend,
};

/// Height of one row (a lane or a group heading), px.
const ROW_PX: u32 = 30;
/// Above the rows: title and a one-row legend (each more legend row adds [`LEGEND_ROW_PX`]).
const TOP_PX: u32 = 66;
const LEGEND_ROW_PX: u32 = 20;
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
    /// The seconds most of its attempts failed (drawn where it was neither cooling nor
    /// half-open).
    pub(crate) failing: Option<&'a Intervals>,
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
    let legend_rows = legend_layout(&rows, faults).len().max(1);
    let top = TOP_PX + LEGEND_ROW_PX * u32::try_from(legend_rows - 1).unwrap_or(0);
    let height = top + BOTTOM_PX + ROW_PX * count.max(2);
    svg(height, |root| draw(root, &rows, faults, run_end_us, top))
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
    if let Some(failing) = lane.failing {
        let us = uncovered_us(&failing.closed, &[lane.cooling, lane.half_open]);
        if us > 0 {
            parts.push(format!(
                "failing, not cooling {} s",
                fmt_tick(round1(us as f64 / 1e6))
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

/// How much of `intervals` (sorted, disjoint) no interval of `covers` overlaps, µs.
fn uncovered_us(intervals: &[(u64, u64)], covers: &[Option<&Intervals>]) -> u64 {
    let mut cover: Vec<(u64, u64)> = covers
        .iter()
        .flatten()
        .flat_map(|iv| iv.closed.iter().copied())
        .collect();
    cover.sort_unstable();
    let cover = merged(&cover, 0);
    let mut total = 0_u64;
    let mut k = 0;
    for &(a, b) in intervals {
        let mut at = a;
        while k < cover.len() && cover[k].1 <= at {
            k += 1;
        }
        let mut c = k;
        while at < b {
            match cover.get(c) {
                Some(&(ca, cb)) if ca < b => {
                    total += ca.saturating_sub(at).min(b - at);
                    at = at.max(cb);
                    c += 1;
                }
                _ => {
                    total += b - at;
                    at = b;
                }
            }
        }
    }
    total
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

fn draw(
    root: &Area<'_>,
    rows: &[Row<'_>],
    faults: &[FaultWindow],
    run_end_us: u64,
    top_px: u32,
) -> Drawn {
    title(root, "Deployment health")?;
    if rows.is_empty() {
        return nothing(root, "no deployments");
    }
    legend_rows(
        root,
        (16, 44),
        legend_right(),
        &legend_entries(rows, faults),
    )?;
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
    let frame = Frame {
        top: i32::try_from(top_px).unwrap_or(0) - 6,
        right: notes_px,
        x_labels: BOTTOM_PX as i32 - 10,
        y_labels: labels_px,
    };
    let mut chart = frame.chart(root, 0.0..axis.end, 0.0..n)?;
    chart
        .configure_mesh()
        .house_grid()
        .disable_y_mesh()
        .y_labels(0)
        .x_desc(axis.desc)
        .x_label_formatter(&|v| fmt_tick(*v))
        .draw()?;

    let plot_px = u64::from(chart.plotting_area().dim_in_pixel().0.max(1));
    let mut canvas = Canvas {
        root,
        chart,
        axis,
        rows: n,
        labels_px,
        run_end_us,
        us_per_px: (run_end_us / plot_px).max(1),
        labelled: vec![false; faults.len()],
    };
    for (r, row) in rows.iter().enumerate() {
        match row {
            Row::Group(group) => canvas.group(r, group)?,
            Row::Lane(lane) => canvas.lane(r, lane, faults, &notes[r])?,
        }
    }
    Ok(())
}

/// The four states, and the fault windows when there are any.
fn legend_entries(rows: &[Row<'_>], faults: &[FaultWindow]) -> Vec<(Swatch, String)> {
    let mut entries = vec![
        (Swatch::Box(HEALTHY, 1.0), "healthy".to_string()),
        (
            Swatch::Box(FAILING, 1.0),
            "failing, not cooling".to_string(),
        ),
        (Swatch::Box(COOLING, 1.0), cooling_legend(rows)),
        (Swatch::Box(HALF_OPEN, 1.0), "half-open".to_string()),
    ];
    if !faults.is_empty() {
        entries.push((Swatch::Box(FAULT, 0.3), "fault window".to_string()));
    }
    entries
}

/// Where a legend row must end, px.
fn legend_right() -> i32 {
    i32::try_from(WIDTH).unwrap_or(960) - 16
}

/// The legend's rows.
fn legend_layout(rows: &[Row<'_>], faults: &[FaultWindow]) -> Vec<Vec<(Swatch, String)>> {
    wrap_legend(16, legend_right(), &legend_entries(rows, faults))
}

/// The chart the rows are drawn on, and what each row needs to know about it.
struct Canvas<'c, 'a, 'b> {
    root: &'c Area<'b>,
    chart: Chart<'a, 'b>,
    axis: TimeAxis,
    /// Rows in all: row `r` (0 at the top) spans y from `rows - r - 1` to `rows - r`.
    rows: f64,
    /// Width of the labels left of the chart, px.
    labels_px: i32,
    run_end_us: u64,
    /// Periods closer than this are drawn as one.
    us_per_px: u64,
    /// Which fault windows have their label drawn already.
    labelled: Vec<bool>,
}

impl Canvas<'_, '_, '_> {
    /// The bottom of row `r`.
    fn bottom(&self, r: usize) -> f64 {
        self.rows - r as f64 - 1.0
    }

    /// Where a row's label starts (left of the chart) and its vertical centre.
    fn label_at(&self, y0: f64) -> (i32, i32) {
        let (lx, ly) = self.chart.backend_coord(&(0.0, y0 + (BAR.0 + BAR.1) / 2.0));
        (lx - self.labels_px, ly)
    }

    /// A group heading, with a line above it (but the first).
    fn group(&mut self, r: usize, group: &str) -> Drawn {
        let y0 = self.bottom(r);
        let (lx, ly) = self.label_at(y0);
        self.root.draw(&Text::new(
            group.to_string(),
            (lx + 4, ly),
            bold(13, INK, HPos::Left, VPos::Center),
        ))?;
        if r > 0 {
            self.chart.draw_series(std::iter::once(PathElement::new(
                vec![(0.0, y0 + 1.0), (self.axis.end, y0 + 1.0)],
                GRID.stroke_width(1),
            )))?;
        }
        Ok(())
    }

    /// A deployment's lane: its id, the fault windows that hit it, the bar with its periods,
    /// and its notes.
    fn lane(
        &mut self,
        r: usize,
        lane: &Lane<'_>,
        faults: &[FaultWindow],
        notes: &[String],
    ) -> Drawn {
        let y0 = self.bottom(r);
        let (lx, ly) = self.label_at(y0);
        self.root.draw(&Text::new(
            lane.id.to_string(),
            (lx + 18, ly),
            text(13, INK, HPos::Left, VPos::Center),
        ))?;
        self.lane_faults(y0, lane, faults)?;
        self.lane_bar(y0, lane)?;
        // One line beside the bar, or up to three stacked around its centre.
        let (rx, ry) = self
            .chart
            .backend_coord(&(self.axis.end, y0 + (BAR.0 + BAR.1) / 2.0));
        let lines = i32::try_from(notes.len()).unwrap_or(0);
        for (k, note) in (0..).zip(notes) {
            let dy = 11 * k - 11 * (lines - 1) / 2;
            self.root.draw(&Text::new(
                note.clone(),
                (rx + 8, ry + dy),
                text(11, MUTED, HPos::Left, VPos::Center),
            ))?;
        }
        Ok(())
    }

    /// Fault windows behind the lane, labelled in the first lane they hit where the label does
    /// not run into the previous one (a flapping fault repeats one label: the shading says the
    /// rest).
    fn lane_faults(&mut self, y0: f64, lane: &Lane<'_>, faults: &[FaultWindow]) -> Drawn {
        let mut label_end = i32::MIN;
        for (i, fault) in faults.iter().enumerate() {
            if !fault.deployments.iter().any(|d| d == lane.id) {
                continue;
            }
            let Some((from, to)) = self.axis.span(fault, self.run_end_us) else {
                continue;
            };
            self.chart.draw_series(std::iter::once(Rectangle::new(
                [(from, y0), (to, y0 + 1.0)],
                FAULT.mix(FAULT_ROW_ALPHA).filled(),
            )))?;
            let (px, py) = self.chart.backend_coord(&(from, y0 + 1.0));
            if !self.labelled[i] && px + 3 > label_end {
                self.labelled[i] = true;
                label_end = px + 3 + estimate_width(&fault.label, 11) + 8;
                self.root.draw(&Text::new(
                    fault.label.clone(),
                    (px + 3, py + 1),
                    text(11, FAULT, HPos::Left, VPos::Top),
                ))?;
            }
        }
        Ok(())
    }

    /// The healthy bar, with the failing, cooling and half-open periods drawn over it (in
    /// that order: failing shows only where the router neither cooled the deployment nor had
    /// it half-open).
    fn lane_bar(&mut self, y0: f64, lane: &Lane<'_>) -> Drawn {
        let end = self.axis.end;
        let (b0, b1) = (y0 + BAR.0, y0 + BAR.1);
        self.chart.draw_series(std::iter::once(Rectangle::new(
            [(0.0, b0), (end, b1)],
            HEALTHY.filled(),
        )))?;
        // In pixels, so that a period shorter than one still gets MIN_PERIOD_PX.
        let (left, top) = self.chart.backend_coord(&(0.0, b1));
        let (right, bottom) = self.chart.backend_coord(&(end, b0));
        for (intervals, color) in [
            (lane.failing, FAILING),
            (lane.cooling, COOLING),
            (lane.half_open, HALF_OPEN),
        ] {
            let Some(iv) = intervals else { continue };
            for (a, b) in merged(&iv.closed, self.us_per_px) {
                let (x0, x1) = period_px(
                    self.chart.backend_coord(&(self.axis.at(a), b0)).0,
                    self.chart.backend_coord(&(self.axis.at(b), b0)).0,
                    (left, right),
                );
                self.root
                    .draw(&Rectangle::new([(x0, top), (x1, bottom)], color.filled()))?;
            }
        }
        Ok(())
    }
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
                failing: None,
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
                failing: None,
            },
            Lane {
                id: "west",
                group: "gpt-4o",
                cooling: Some(&west),
                half_open: None,
                failing: None,
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

    #[test]
    fn a_lane_failing_while_not_cooling_is_not_green() {
        // The lone deployment of its group: every call fails from 10 s to 50 s and the router
        // never cools it; a sibling cools 20..30 s while failing 15..35 s.
        let lone_failing = intervals(vec![(10_000_000, 50_000_000)], 0);
        let failing = intervals(vec![(15_000_000, 35_000_000)], 0);
        let cooling = intervals(vec![(20_000_000, 30_000_000)], 1);
        let lanes = [
            Lane {
                id: "lone",
                group: "solo",
                cooling: None,
                half_open: None,
                failing: Some(&lone_failing),
            },
            Lane {
                id: "east",
                group: "gpt-4o",
                cooling: Some(&cooling),
                half_open: None,
                failing: Some(&failing),
            },
        ];
        let svg = render(&lanes, &[], 60_000_000).unwrap_or_default();
        assert!(svg.contains("failing, not cooling 40 s"), "{svg}");
        // 15..20 and 30..35: the cooled part is the router's view.
        assert!(svg.contains("failing, not cooling 10 s"), "{svg}");
        assert!(svg.contains(">\nfailing, not cooling\n<"), "legend: {svg}");
        // The legend swatch, then one period per lane; the lone lane's is 40/60 of the plot.
        let failing = widths(&svg, FAILING);
        assert_eq!(failing.len(), 3, "{failing:?}");
        let cooling = widths(&svg, COOLING);
        assert!(failing[1] > 3 * cooling[1], "{failing:?} vs {cooling:?}");
    }

    #[test]
    fn uncovered_time_subtracts_every_cover() {
        let cooling = intervals(vec![(0, 10), (20, 30)], 2);
        let half_open = intervals(vec![(30, 35), (50, 60)], 0);
        let covers = [Some(&cooling), Some(&half_open)];
        assert_eq!(uncovered_us(&[(5, 45)], &covers), 10 + 10);
        assert_eq!(uncovered_us(&[(0, 10)], &covers), 0);
        assert_eq!(uncovered_us(&[(40, 70), (80, 90)], &covers), 10 + 10 + 10);
        assert_eq!(uncovered_us(&[(0, 100)], &[None, None]), 100);
    }
}
