//! `traffic_share.svg`: each deployment's share of the attempts over time, stacked to 100 %
//! — the picture of a fallback (the primary's band shrinks, the fallback's grows).
//!
//! The recorder adds each second's attempts per deployment as `deployments.csv` is written
//! ([`ShareSeries`]); the points are buckets of seconds that double in length when the run
//! outgrows [`MAX_SHARE_POINTS`], so memory is bounded whatever the run's length and the
//! counts stay exact sums. A bucket without attempts is left blank.

use std::sync::Arc;

use plotters::prelude::*;

use super::axis::{Chart, Frame, GridStyle, TimeAxis, fmt_tick};
use super::context::{DeploymentLane, FaultWindow};
use super::palette::{BANDS, FAULT, FAULT_ALPHA, cycled};
use super::style::{Area, Drawn, Swatch, legend, nothing, svg, title};
use crate::units::MICROS_PER_SECOND;

const HEIGHT: u32 = 400;
/// Bands drawn at most: more points are summed in groups, so the shares are read over a few
/// seconds and not lost in per-second noise.
const DRAWN_POINTS: usize = 120;
/// Where the fault strip sits above the stacked bands (the y axis is the share, 0..1).
const STRIP: (f64, f64) = (1.015, 1.06);
/// Points of the traffic-share plot kept while the run goes on.
pub(crate) const MAX_SHARE_POINTS: usize = 2000;

/// Attempts per deployment, summed per bucket of seconds. The bucket doubles (neighbouring
/// points merged) whenever the points would exceed [`MAX_SHARE_POINTS`], so memory is bounded
/// by the points times the deployments, whatever the run's length.
#[derive(Debug, Default)]
pub(crate) struct ShareSeries {
    /// Seconds per point (1 until the run outgrows the points).
    pub(crate) bucket: u64,
    /// The deployments, in first-seen order; `points[i][j]` is deployment `j`'s attempts.
    pub(crate) ids: Vec<Arc<str>>,
    pub(crate) points: Vec<Vec<u64>>,
}

impl ShareSeries {
    /// `attempts` more attempts on `id` in `second`.
    pub(crate) fn add(&mut self, second: u64, id: &Arc<str>, attempts: u64) {
        self.bucket = self.bucket.max(1);
        let mut point = usize::try_from(second / self.bucket).unwrap_or(usize::MAX);
        while point >= MAX_SHARE_POINTS {
            self.points = self
                .points
                .chunks(2)
                .map(|pair| {
                    let mut merged: Vec<u64> = Vec::new();
                    for row in pair {
                        merged.resize(merged.len().max(row.len()), 0);
                        for (m, s) in merged.iter_mut().zip(row) {
                            *m += s;
                        }
                    }
                    merged
                })
                .collect();
            self.bucket *= 2;
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
            row.resize(j + 1, 0);
        }
        row[j] += attempts;
    }
}

/// The bands' order: the context's deployments (`model_list` order) first, then the others
/// by id.
fn order<'a>(share: &'a ShareSeries, known: &[DeploymentLane]) -> Vec<(usize, &'a str)> {
    let mut out: Vec<(usize, &str)> = Vec::new();
    for lane in known {
        if let Some(j) = share.ids.iter().position(|id| **id == *lane.id) {
            out.push((j, &share.ids[j]));
        }
    }
    let mut rest: Vec<(usize, &str)> = share
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
    share: &ShareSeries,
    known: &[DeploymentLane],
    faults: &[FaultWindow],
    run_end_us: u64,
) -> Result<String, String> {
    svg(HEIGHT, |root| draw(root, share, known, faults, run_end_us))
}

/// Where each drawn point's bucket lies, µs: `points` buckets of `bucket_us`, and the run end.
struct Buckets {
    bucket_us: u64,
    covered_us: u64,
    end_us: u64,
}

impl Buckets {
    /// Point `i`'s span on the axis (the last one stops at the run end or the data's end).
    fn span(&self, axis: &TimeAxis, i: usize) -> (f64, f64) {
        let i = i as u64;
        let x0 = axis.at(i.saturating_mul(self.bucket_us));
        let x1 = axis.at((i + 1)
            .saturating_mul(self.bucket_us)
            .min(self.covered_us.max(self.end_us)));
        (x0, x1)
    }
}

fn draw(
    root: &Area<'_>,
    share: &ShareSeries,
    known: &[DeploymentLane],
    faults: &[FaultWindow],
    run_end_us: u64,
) -> Drawn {
    title(root, "Traffic share per deployment (attempts, stacked)")?;
    if share.points.is_empty() {
        return nothing(root, "no attempts");
    }
    let (points, bucket) = drawn_points(share);
    let bucket_us = bucket.saturating_mul(MICROS_PER_SECOND);
    let buckets = Buckets {
        bucket_us,
        covered_us: (points.len() as u64).saturating_mul(bucket_us),
        end_us: run_end_us.max(1),
    };
    let axis = TimeAxis::for_run(buckets.end_us);
    let bands = order(share, known);
    draw_legend(root, &bands, faults)?;

    let mut chart = Frame::UNDER_LEGEND.chart(root, 0.0..axis.end, 0.0..STRIP.1)?;
    let y_desc = if bucket > 1 {
        format!("share of attempts (per {bucket} s)")
    } else {
        "share of attempts (per second)".to_string()
    };
    chart
        .configure_mesh()
        .house_grid()
        .x_desc(axis.desc)
        .y_desc(y_desc)
        .x_label_formatter(&|v| fmt_tick(*v))
        .y_labels(6)
        .y_label_formatter(&|v| {
            if *v > 1.0 {
                String::new()
            } else {
                format!("{:.0} %", v * 100.0)
            }
        })
        .draw()?;
    draw_bands(&mut chart, &points, &bands, &axis, &buckets)?;
    draw_fault_strips(&mut chart, faults, &axis, buckets.end_us)
}

/// The points to draw: at most [`DRAWN_POINTS`], neighbours summed in groups; and the seconds
/// each covers.
fn drawn_points(share: &ShareSeries) -> (Vec<Vec<u64>>, u64) {
    let group = share.points.len().div_ceil(DRAWN_POINTS).max(1);
    let points: Vec<Vec<u64>> = share
        .points
        .chunks(group)
        .map(|rows| {
            let mut sum = vec![0_u64; share.ids.len()];
            for row in rows {
                for (s, n) in sum.iter_mut().zip(row) {
                    *s += n;
                }
            }
            sum
        })
        .collect();
    (points, share.bucket.max(1).saturating_mul(group as u64))
}

/// One entry per band, and the fault windows'.
fn draw_legend(root: &Area<'_>, bands: &[(usize, &str)], faults: &[FaultWindow]) -> Drawn {
    let mut entries: Vec<(Swatch, String)> = bands
        .iter()
        .enumerate()
        .map(|(k, (_, id))| (Swatch::Box(cycled(&BANDS, k), 0.85), (*id).to_string()))
        .collect();
    if !faults.is_empty() {
        entries.push((Swatch::Box(FAULT, FAULT_ALPHA * 4.0), "fault window".into()));
    }
    legend(root, (16, 44), &entries)
}

/// One step-shaped polygon per band, between the cumulative shares below and above it.
fn draw_bands(
    chart: &mut Chart<'_, '_>,
    points: &[Vec<u64>],
    bands: &[(usize, &str)],
    axis: &TimeAxis,
    buckets: &Buckets,
) -> Drawn {
    let totals: Vec<u64> = points.iter().map(|row| row.iter().sum()).collect();
    let mut below = vec![0.0_f64; points.len()];
    for (k, (j, _)) in bands.iter().enumerate() {
        let mut upper = Vec::with_capacity(2 * below.len());
        let mut lower = Vec::with_capacity(2 * below.len());
        for (i, row) in points.iter().enumerate() {
            let (x0, x1) = buckets.span(axis, i);
            let mine = row.get(*j).copied().unwrap_or(0);
            let lo = below[i];
            let hi = if totals[i] == 0 {
                lo
            } else {
                lo + mine as f64 / totals[i] as f64
            };
            upper.push((x0, hi));
            upper.push((x1, hi));
            lower.push((x0, lo));
            lower.push((x1, lo));
            below[i] = hi;
        }
        lower.reverse();
        upper.extend(lower);
        chart.draw_series(std::iter::once(Polygon::new(
            upper,
            cycled(&BANDS, k).mix(0.85).filled(),
        )))?;
    }
    Ok(())
}

/// Fault windows: a strip above the bands and their edges across them (a fill over the
/// bands would change their colours).
fn draw_fault_strips(
    chart: &mut Chart<'_, '_>,
    faults: &[FaultWindow],
    axis: &TimeAxis,
    end_us: u64,
) -> Drawn {
    for (from, to) in faults.iter().filter_map(|f| axis.span(f, end_us)) {
        chart.draw_series(std::iter::once(Rectangle::new(
            [(from, STRIP.0), (to, STRIP.1)],
            FAULT.mix(FAULT_ALPHA * 4.0).filled(),
        )))?;
        for x in [from, to] {
            chart.draw_series(std::iter::once(PathElement::new(
                vec![(x, 0.0), (x, STRIP.1)],
                FAULT.stroke_width(2),
            )))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_merge_in_pairs_when_the_run_outgrows_them() {
        let (a, b): (Arc<str>, Arc<str>) = (Arc::from("a"), Arc::from("b"));
        let mut share = ShareSeries::default();
        share.add(0, &a, 3);
        share.add(1, &b, 1);
        let last = MAX_SHARE_POINTS as u64 * 3 + 1;
        share.add(last, &b, 5);
        // Drawn: the bands, and the fault's strip and edges.
        let fault = FaultWindow {
            label: "b: rate_limit".into(),
            detail: String::new(),
            deployments: vec!["b".into()],
            from: std::time::Duration::from_secs(10),
            to: Some(std::time::Duration::from_secs(20)),
        };
        assert_eq!(share.bucket, 4);
        assert!(share.points.len() <= MAX_SHARE_POINTS);
        assert_eq!(share.points[0], vec![3, 1]);
        assert_eq!(share.points[(last / 4) as usize], vec![0, 5]);
        let total: u64 = share.points.iter().flatten().sum();
        assert_eq!(total, 9, "merging keeps every attempt");
        let end = (last + 1) * MICROS_PER_SECOND;
        let svg = render(&share, &[], &[fault], end).unwrap_or_default();
        assert!(svg.contains("<polygon"), "{svg}");
        assert!(svg.contains("<rect") && svg.contains("<polyline"), "{svg}");
    }
}
