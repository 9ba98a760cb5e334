//! `latency.svg`: the end-to-end latency CDF (and TTFT's, when the run streamed), read from the
//! HdrHistograms' recorded values.
//!
//! The x axis is latency on a log scale; the y axis is the cumulative share on a "nines" scale
//! (`−log10(1 − q)`: 90 % is 1, 99 % is 2, 99.9 % is 3), so the tail, where incidents show,
//! gets as much room as the median. The scale stops at the resolution of the sample
//! (`log10(requests)` nines, at least 3 and at most 5); the maximum sits on the top line. The markers are the
//! summary's own percentiles (p50/p90/p99/p99.9, and p50/p90/p99 for TTFT).

use hdrhistogram::Histogram;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::style::{
    Area, Drawn, GRID, INK, LATENCY, MUTED, Swatch, TTFT, axis_labels, estimate_width, fmt_ms,
    fmt_ms_tick, legend, nothing, svg, text, title,
};

const HEIGHT: u32 = 460;
/// The nines scale never goes past 99.999 %.
const MAX_NINES: f64 = 5.0;
/// …and always reaches 99.9 %, so the four markers never sit on one another.
const MIN_NINES: f64 = 3.0;

/// A latency distribution, ready to draw.
#[derive(Debug, Default)]
pub(crate) struct Distribution {
    /// Each recorded bucket's value (ms, capped at the exact maximum) and the count of samples
    /// at or below it, ascending.
    points: Vec<(f64, u64)>,
    /// Samples.
    total: u64,
    /// The percentiles to mark: name, value in ms, quantile.
    markers: Vec<(&'static str, f64, f64)>,
}

impl Distribution {
    /// The distribution of a histogram of µs whose exact maximum is `max_us`.
    pub(crate) fn from_histogram(
        hist: &Histogram<u64>,
        max_us: u64,
        markers: Vec<(&'static str, f64, f64)>,
    ) -> Self {
        let mut points = Vec::new();
        let mut cumulative = 0_u64;
        for v in hist.iter_recorded() {
            cumulative = cumulative.saturating_add(v.count_at_value());
            let us = v.value_iterated_to().min(max_us);
            points.push((us as f64 / 1000.0, cumulative));
        }
        Self {
            points,
            total: cumulative,
            markers,
        }
    }

    fn is_empty(&self) -> bool {
        self.total == 0 || self.points.is_empty()
    }
}

/// `q` on the nines scale, capped at `top`.
fn nines(q: f64, top: f64) -> f64 {
    if q >= 1.0 - 10_f64.powf(-top) {
        top
    } else {
        (-(1.0 - q.max(0.0)).log10()).min(top)
    }
}

/// The share a nines value stands for, as a label: `0%`, `50%`, `90%`, `99.9%`.
fn share_label(q: f64) -> String {
    let pct = format!("{:.3}", q * 100.0);
    let pct = pct.trim_end_matches('0').trim_end_matches('.');
    format!("{pct}%")
}

pub(crate) fn render(latency: &Distribution, ttft: &Distribution) -> Result<String, String> {
    svg(HEIGHT, |root| draw(root, latency, ttft))
}

fn draw(root: &Area<'_>, latency: &Distribution, ttft: &Distribution) -> Drawn {
    title(root, "Latency distribution (CDF)")?;
    if latency.is_empty() {
        return nothing(root, "no requests finished");
    }
    let curves: Vec<(&Distribution, RGBColor)> = [(latency, LATENCY), (ttft, TTFT)]
        .into_iter()
        .filter(|(d, _)| !d.is_empty())
        .collect();

    let mut entries = vec![(
        Swatch::Line(LATENCY),
        format!("end-to-end latency ({})", plural(latency.total, "request")),
    )];
    if !ttft.is_empty() {
        entries.push((
            Swatch::Line(TTFT),
            format!("time to first token ({})", plural(ttft.total, "stream")),
        ));
    }
    legend(root, (16, 44), &entries)?;

    let floor = 0.001; // 1 µs: the histograms' resolution
    let lo = curves
        .iter()
        .filter_map(|(d, _)| d.points.first().map(|p| p.0))
        .fold(f64::INFINITY, f64::min)
        .max(floor);
    let hi = curves
        .iter()
        .filter_map(|(d, _)| d.points.last().map(|p| p.0))
        .fold(0.0, f64::max)
        .max(lo);
    let (lo, hi) = (lo / 1.5, (hi * 1.5).max(lo * 10.0));
    let samples = curves.iter().map(|(d, _)| d.total).max().unwrap_or(1);
    let top = (samples as f64).log10().ceil().clamp(MIN_NINES, MAX_NINES);
    let ytop = top + 0.3;

    let mut chart = ChartBuilder::on(root)
        .margin_top(62)
        .margin_right(28)
        .margin_left(8)
        .margin_bottom(6)
        .x_label_area_size(42)
        .y_label_area_size(64)
        .build_cartesian_2d((lo..hi).log_scale(), 0.0..ytop)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(0)
        .light_line_style(GRID.mix(0.0))
        .bold_line_style(GRID)
        .axis_style(INK)
        .x_desc("latency (log scale)")
        .y_desc("share of requests at or below")
        .x_labels(12)
        .x_label_formatter(&|v| fmt_ms_tick(*v))
        .label_style(axis_labels())
        .draw()?;

    // The nines grid: 0 %, 50 %, 90 %, 99 %, … up to the sample's resolution.
    let mut lines = vec![0.0, 2_f64.log10()];
    lines.extend((1..=top as u32).map(f64::from));
    for y in lines {
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(lo, y), (hi, y)],
            GRID.stroke_width(1),
        )))?;
        let (px, py) = chart.backend_coord(&(lo, y));
        root.draw(&Text::new(
            share_label(1.0 - 10_f64.powf(-y)),
            (px - 6, py),
            text(12, INK, HPos::Right, VPos::Center),
        ))?;
    }

    let plot_px = f64::from(chart.plotting_area().dim_in_pixel().0.max(1));
    let (plot_left, _) = chart.backend_coord(&(lo, 0.0));
    let column = |ms: f64| ((ms.max(lo).ln() - lo.ln()) / (hi.ln() - lo.ln()) * plot_px).floor();
    for (d, color) in &curves {
        let total = d.total as f64;
        // A step function (the CDF jumps at each recorded value), then thinned to the first
        // and last point of each pixel column: the shape is kept, the SVG stays small.
        let mut steps: Vec<(f64, f64)> = Vec::with_capacity(d.points.len() * 2 + 1);
        let mut level = 0.0;
        for &(ms, count) in &d.points {
            let x = ms.max(lo);
            steps.push((x, level));
            level = nines(count as f64 / total, top);
            steps.push((x, level));
        }
        let mut line: Vec<(f64, f64)> = Vec::with_capacity(steps.len().min(4 * plot_px as usize));
        for (i, &point) in steps.iter().enumerate() {
            let col = column(point.0);
            let same_before = i > 0 && column(steps[i - 1].0) == col;
            let same_after = steps.get(i + 1).is_some_and(|next| column(next.0) == col);
            if !(same_before && same_after) {
                line.push(point);
            }
        }
        chart.draw_series(LineSeries::new(line, color.stroke_width(2)))?;

        for &(name, ms, q) in &d.markers {
            if !(ms.is_finite() && q.is_finite()) {
                continue;
            }
            let at = (ms.max(lo), nines(q, top));
            chart.draw_series(std::iter::once(PathElement::new(
                vec![(at.0, 0.0), at],
                color.mix(0.35).stroke_width(1),
            )))?;
            chart.draw_series(std::iter::once(Circle::new(at, 4, color.filled())))?;
            let label = format!("{name} {}", fmt_ms(ms));
            let (px, py) = chart.backend_coord(&at);
            let width = estimate_width(&label, 12);
            let (x, h) = if px - 8 - width > plot_left {
                (px - 8, HPos::Right)
            } else {
                (px + 8, HPos::Left)
            };
            root.draw(&Text::new(
                label,
                (x, py - 8),
                text(12, INK, h, VPos::Center),
            ))?;
        }
    }
    let note = format!("top line: max ({} nines resolution)", top as u32);
    let (rx, ry) = chart.backend_coord(&(hi, ytop));
    root.draw(&Text::new(
        note,
        (rx - 4, ry + 4),
        text(11, MUTED, HPos::Right, VPos::Top),
    ))?;
    Ok(())
}

/// `1 request`, `3 requests`.
fn plural(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("{n} {noun}")
    } else {
        format!("{n} {noun}s")
    }
}
