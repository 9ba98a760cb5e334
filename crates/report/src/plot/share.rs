//! `traffic_share.svg`: which deployment served the traffic. Above, the requests each
//! deployment served (its ok attempts, `deployments.csv`'s `ok`) per bucket, stacked, under a
//! line of all attempts; below, each deployment's failed attempts (429s included), stacked. A
//! deployment that answers 429 to nearly every attempt is a sliver above and a wall below —
//! never "half the traffic", as a share of attempts made it look.
//!
//! The recorder adds each second's attempts and ok attempts per deployment as `deployments.csv`
//! is written ([`ServedSeries`]); the points are buckets of the [`super::buckets`] chain that
//! grow when the run outgrows [`MAX_KEPT_POINTS`], so memory is bounded whatever the run's
//! length and the counts stay exact sums. The plot sums them into a round bucket (per second,
//! per 10 s, per minute, …) so that there are at most [`DRAWN_POINTS`], and says it.

use std::sync::Arc;

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::axis::{Chart, Frame, GridStyle, TimeAxis, fmt_tick, shade};
use super::buckets;
use super::context::{DeploymentLane, FaultWindow};
use super::palette::{BANDS, FAULT, FAULT_ALPHA, INK, MUTED, cycled};
use super::stack::stacked_steps;
use super::style::{Area, Drawn, Swatch, legend_rows, nothing, svg, text, title};
use crate::units::MICROS_PER_SECOND;

const HEIGHT: u32 = 520;
/// Buckets drawn at most: the served counts are read over a round span, not second by second.
pub(crate) const DRAWN_POINTS: u64 = 72;
/// Points of the series kept while the run goes on.
pub(crate) const MAX_KEPT_POINTS: usize = 2000;
/// The failed-attempts panel's height, px.
const FAILED_PX: i32 = 150;

/// One deployment's attempts in a bucket: all of them, and the ok ones (served).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Served {
    pub(crate) attempts: u64,
    pub(crate) ok: u64,
}

impl Served {
    fn failed(self) -> u64 {
        self.attempts.saturating_sub(self.ok)
    }

    fn add(&mut self, other: Served) {
        self.attempts = self.attempts.saturating_add(other.attempts);
        self.ok = self.ok.saturating_add(other.ok);
    }
}

/// Attempts and ok attempts per deployment, summed per bucket of seconds. The bucket grows
/// along [`buckets::CHAIN`] (neighbouring points summed) whenever the points would exceed
/// [`MAX_KEPT_POINTS`], so memory is bounded by the points times the deployments.
#[derive(Debug, Default)]
pub(crate) struct ServedSeries {
    /// Seconds per point (1 until the run outgrows the points).
    pub(crate) bucket: u64,
    /// The deployments, in first-seen order; `points[i][j]` is deployment `j`'s bucket `i`.
    pub(crate) ids: Vec<Arc<str>>,
    pub(crate) points: Vec<Vec<Served>>,
}

impl ServedSeries {
    /// `attempts` more attempts on `id` in `second`, `ok` of them ok.
    pub(crate) fn add(&mut self, second: u64, id: &Arc<str>, attempts: u64, ok: u64) {
        self.bucket = self.bucket.max(1);
        let mut point = usize::try_from(second / self.bucket).unwrap_or(usize::MAX);
        while point >= MAX_KEPT_POINTS {
            let next = buckets::next(self.bucket);
            let group = usize::try_from(next / self.bucket).unwrap_or(usize::MAX);
            self.points = self.points.chunks(group).map(sum_rows).collect();
            self.bucket = next;
            point = usize::try_from(second / self.bucket).unwrap_or(usize::MAX);
        }
        let j = match self.ids.iter().position(|d| d == id) {
            Some(j) => j,
            None => {
                self.ids.push(id.clone());
                self.ids.len() - 1
            }
        };
        if self.points.len() <= point {
            self.points.resize(point + 1, Vec::new());
        }
        let row = &mut self.points[point];
        if row.len() <= j {
            row.resize(j + 1, Served::default());
        }
        row[j].add(Served { attempts, ok });
    }

    /// Every deployment's totals, in `ids` order.
    fn totals(&self) -> Vec<Served> {
        sum_rows(&self.points)
    }
}

/// Rows summed per deployment.
fn sum_rows(rows: &[Vec<Served>]) -> Vec<Served> {
    let mut sum: Vec<Served> = Vec::new();
    for row in rows {
        sum.resize(sum.len().max(row.len()), Served::default());
        for (s, n) in sum.iter_mut().zip(row) {
            s.add(*n);
        }
    }
    sum
}

/// The bands' order: the context's deployments (`model_list` order) first, then the others
/// by id.
fn order<'a>(series: &'a ServedSeries, known: &[DeploymentLane]) -> Vec<(usize, &'a str)> {
    let mut out: Vec<(usize, &str)> = Vec::new();
    for lane in known {
        if let Some(j) = series.ids.iter().position(|id| **id == *lane.id) {
            out.push((j, &series.ids[j]));
        }
    }
    let mut rest: Vec<(usize, &str)> = series
        .ids
        .iter()
        .enumerate()
        .filter(|(_, id)| !known.iter().any(|l| *l.id == ***id))
        .map(|(j, id)| (j, &**id))
        .collect();
    rest.sort_by(|a, b| a.1.cmp(b.1));
    out.extend(rest);
    out
}

pub(crate) fn render(
    series: &ServedSeries,
    known: &[DeploymentLane],
    faults: &[FaultWindow],
    run_end_us: u64,
) -> Result<String, String> {
    svg(HEIGHT, |root| draw(root, series, known, faults, run_end_us))
}

/// What is drawn: the buckets summed to the drawn size, and where each lies.
struct Drawing {
    /// Per drawn bucket, per deployment (`ids` order).
    points: Vec<Vec<Served>>,
    /// Seconds per drawn bucket.
    bucket: u64,
    axis: TimeAxis,
    end_us: u64,
}

impl Drawing {
    fn new(series: &ServedSeries, run_end_us: u64) -> Self {
        let kept = series.bucket.max(1);
        let end_us = run_end_us.max(1);
        let seconds = end_us
            .div_ceil(MICROS_PER_SECOND)
            .max(series.points.len() as u64 * kept);
        let bucket = buckets::drawn(seconds, kept, DRAWN_POINTS);
        let group = usize::try_from(bucket / kept).unwrap_or(1).max(1);
        let points = series.points.chunks(group).map(sum_rows).collect();
        let covered_us = (series.points.len() as u64)
            .saturating_mul(kept)
            .saturating_mul(MICROS_PER_SECOND);
        let end_us = end_us.max(covered_us);
        Self {
            points,
            bucket,
            axis: TimeAxis::for_run(end_us),
            end_us,
        }
    }

    /// Bucket `i`'s span on the axis (the last one stops at the run end).
    fn span(&self, i: usize) -> (f64, f64) {
        let bucket_us = self.bucket.saturating_mul(MICROS_PER_SECOND);
        let i = i as u64;
        let x0 = self.axis.at(i.saturating_mul(bucket_us));
        let x1 = self
            .axis
            .at((i + 1).saturating_mul(bucket_us).min(self.end_us));
        (x0, x1)
    }

    /// The highest per-bucket total of `value`, at least 1.
    fn max_total(&self, value: impl Fn(Served) -> u64) -> f64 {
        self.points
            .iter()
            .map(|row| row.iter().map(|s| value(*s)).sum::<u64>())
            .max()
            .unwrap_or(0)
            .max(1) as f64
    }
}

fn draw(
    root: &Area<'_>,
    series: &ServedSeries,
    known: &[DeploymentLane],
    faults: &[FaultWindow],
    run_end_us: u64,
) -> Drawn {
    if series.points.is_empty() {
        title(root, "Served requests per deployment (ok attempts)")?;
        return nothing(root, "no attempts");
    }
    let drawing = Drawing::new(series, run_end_us);
    let per = buckets::per(drawing.bucket);
    title(
        root,
        &format!("Served requests per deployment (ok attempts {per}, stacked)"),
    )?;
    let bands = order(series, known);
    let rows = draw_legend(root, series, &bands, faults)?;
    let height = root.dim_in_pixel().1;
    let split = i32::try_from(height).unwrap_or(0) - FAILED_PX;
    let (upper, lower) = root.split_vertically(split);

    // Served, stacked, under the line of all attempts.
    let top = 34 + 20 * rows + 8;
    let ymax = drawing.max_total(|s| s.attempts) * 1.1;
    let frame = Frame {
        top,
        x_labels: 8,
        ..Frame::UNDER_LEGEND
    };
    let mut chart = frame.chart(&upper, 0.0..drawing.axis.end, 0.0..ymax)?;
    chart
        .configure_mesh()
        .house_grid()
        .y_desc("served")
        .x_label_formatter(&|_| String::new())
        .y_label_formatter(&|v| fmt_tick(*v))
        .draw()?;
    shade_faults(&mut chart, faults, &drawing, ymax)?;
    draw_bands(&mut chart, &drawing, &bands, |s| s.ok)?;
    let attempts: Vec<(f64, f64)> = (0..drawing.points.len())
        .flat_map(|i| {
            let total: u64 = drawing.points[i].iter().map(|s| s.attempts).sum();
            let (x0, x1) = drawing.span(i);
            [(x0, total as f64), (x1, total as f64)]
        })
        .collect();
    chart.draw_series(LineSeries::new(attempts, INK.stroke_width(1)))?;

    // Failed attempts, stacked, with their own scale.
    let ymax = drawing.max_total(Served::failed) * 1.1;
    let frame = Frame {
        top: 18,
        ..Frame::UNDER_LEGEND
    };
    let mut chart = frame.chart(&lower, 0.0..drawing.axis.end, 0.0..ymax)?;
    chart
        .configure_mesh()
        .house_grid()
        .x_desc(drawing.axis.desc)
        .y_desc("failed")
        .y_labels(4)
        .x_label_formatter(&|v| fmt_tick(*v))
        .y_label_formatter(&|v| fmt_tick(*v))
        .draw()?;
    shade_faults(&mut chart, faults, &drawing, ymax)?;
    draw_bands(&mut chart, &drawing, &bands, Served::failed)?;
    // Above the panel's plot (the area draws in its own coordinates, the chart gives the
    // backend's).
    let ((x, y), (bx, by)) = (chart.backend_coord(&(0.0, ymax)), lower.get_base_pixel());
    lower.draw(&Text::new(
        format!("failed attempts (429s included) {per}, stacked"),
        (x - bx + 6, y - by - 16),
        text(12, MUTED, HPos::Left, VPos::Top),
    ))
}

/// One entry per band with its totals (`east: served 1520 of 1610`), the attempts line and the
/// fault windows', wrapped in rows; returns the rows used.
fn draw_legend(
    root: &Area<'_>,
    series: &ServedSeries,
    bands: &[(usize, &str)],
    faults: &[FaultWindow],
) -> Result<i32, DrawingAreaErrorKind<std::io::Error>> {
    let totals = series.totals();
    let mut entries: Vec<(Swatch, String)> = bands
        .iter()
        .enumerate()
        .map(|(k, (j, id))| {
            let t = totals.get(*j).copied().unwrap_or_default();
            (
                Swatch::Box(cycled(&BANDS, k), 1.0),
                format!("{id}: served {} of {}", t.ok, t.attempts),
            )
        })
        .collect();
    entries.push((Swatch::Line(INK), "all attempts".into()));
    if !faults.is_empty() {
        entries.push((Swatch::Box(FAULT, FAULT_ALPHA * 2.5), "fault window".into()));
    }
    let right = i32::try_from(root.dim_in_pixel().0).unwrap_or(960) - 16;
    legend_rows(root, (16, 44), right, &entries)
}

/// The fault windows shaded behind the bands.
fn shade_faults(
    chart: &mut Chart<'_, '_>,
    faults: &[FaultWindow],
    drawing: &Drawing,
    ymax: f64,
) -> Drawn {
    for span in faults
        .iter()
        .filter_map(|f| drawing.axis.span(f, drawing.end_us))
    {
        shade(chart, span, ymax, FAULT, FAULT_ALPHA)?;
    }
    Ok(())
}

/// One step-shaped polygon per band with a non-zero `value`, stacked in band order.
fn draw_bands(
    chart: &mut Chart<'_, '_>,
    drawing: &Drawing,
    bands: &[(usize, &str)],
    value: impl Fn(Served) -> u64,
) -> Drawn {
    let spans: Vec<(f64, f64)> = (0..drawing.points.len()).map(|i| drawing.span(i)).collect();
    let values: Vec<Vec<f64>> = bands
        .iter()
        .map(|(j, _)| {
            drawing
                .points
                .iter()
                .map(|row| row.get(*j).map_or(0, |s| value(*s)) as f64)
                .collect()
        })
        .collect();
    let (polygons, _) = stacked_steps(&spans, &values);
    for (k, polygon) in polygons.into_iter().enumerate() {
        if let Some(points) = polygon {
            chart.draw_series(std::iter::once(Polygon::new(
                points,
                cycled(&BANDS, k).filled(),
            )))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_merge_along_the_chain_when_the_run_outgrows_them() {
        let (a, b): (Arc<str>, Arc<str>) = (Arc::from("a"), Arc::from("b"));
        let mut series = ServedSeries::default();
        series.add(0, &a, 3, 2);
        series.add(1, &b, 1, 1);
        // Past 2000 × 2 s: the bucket goes 1 → 2 → 10 s (never 4 s).
        let last = MAX_KEPT_POINTS as u64 * 3 + 1;
        series.add(last, &b, 5, 0);
        assert_eq!(series.bucket, 10);
        assert!(series.points.len() <= MAX_KEPT_POINTS);
        let s = |attempts, ok| Served { attempts, ok };
        assert_eq!(series.points[0], vec![s(3, 2), s(1, 1)]);
        assert_eq!(series.points[(last / 10) as usize], vec![s(0, 0), s(5, 0)]);
        assert_eq!(
            series.totals(),
            vec![s(3, 2), s(6, 1)],
            "merging keeps every attempt"
        );
        let fault = FaultWindow {
            label: "b: rate_limit".into(),
            detail: String::new(),
            deployments: vec!["b".into()],
            from: std::time::Duration::from_secs(10),
            to: Some(std::time::Duration::from_secs(20)),
        };
        let end = (last + 1) * MICROS_PER_SECOND;
        let svg = render(&series, &[], &[fault], end).unwrap_or_default();
        // 6002 s in at most 72 buckets of the chain: 2 min (1 min would be 101).
        assert!(svg.contains("ok attempts per 2 min, stacked"), "{svg}");
        assert!(svg.contains("a: served 2 of 3"), "{svg}");
        assert!(svg.contains("b: served 1 of 6"), "{svg}");
        // Served: a and b; failed: a and b.
        assert_eq!(svg.matches("<polygon").count(), 4, "{svg}");
    }
}
