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

use plotters::coord::combinators::LogCoord;
use plotters::coord::types::RangedCoordf64;

use super::axis::{Frame, GridStyle, fmt_ms, fmt_ms_tick};
use super::palette::{GRID, INK, LATENCY, MUTED, TTFT};
use super::style::{Area, Drawn, Swatch, estimate_width, legend, nothing, svg, text, title};

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

/// A CDF chart: latency (log scale) against the nines.
type CdfChart<'a, 'b> =
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<LogCoord<f64>, RangedCoordf64>>;

/// The axes' extent: latency from `lo` to `hi` ms, nines up to `top` (`ytop` with headroom).
struct Scale {
    lo: f64,
    hi: f64,
    top: f64,
    ytop: f64,
}

impl Scale {
    /// Room for every curve: a bit beyond its fastest and slowest values (never below 1 µs, the
    /// histograms' resolution), and as many nines as the largest sample resolves.
    fn of(curves: &[(&Distribution, RGBColor)]) -> Self {
        let floor = 0.001;
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
        Self {
            lo,
            hi,
            top,
            ytop: top + 0.3,
        }
    }
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
    draw_legend(root, latency, ttft)?;
    let scale = Scale::of(&curves);
    let frame = Frame {
        right: 28,
        ..Frame::UNDER_LEGEND
    };
    let mut chart = frame
        .on(root)
        .build_cartesian_2d((scale.lo..scale.hi).log_scale(), 0.0..scale.ytop)?;
    chart
        .configure_mesh()
        .house_grid()
        .disable_y_mesh()
        .y_labels(0)
        .x_desc("latency (log scale)")
        .y_desc("share of requests at or below")
        .x_labels(12)
        .x_label_formatter(&|v| fmt_ms_tick(*v))
        .draw()?;
    draw_nines_grid(root, &mut chart, &scale)?;

    let plot_px = f64::from(chart.plotting_area().dim_in_pixel().0.max(1));
    let (plot_left, _) = chart.backend_coord(&(scale.lo, 0.0));
    for (d, color) in &curves {
        let line = cdf_line(d, &scale, plot_px);
        chart.draw_series(LineSeries::new(line, color.stroke_width(2)))?;
        draw_markers(root, &mut chart, d, *color, &scale, plot_left)?;
    }
    let note = format!("top line: max ({} nines resolution)", scale.top as u32);
    let (rx, ry) = chart.backend_coord(&(scale.hi, scale.ytop));
    root.draw(&Text::new(
        note,
        (rx - 4, ry + 4),
        text(11, MUTED, HPos::Right, VPos::Top),
    ))?;
    Ok(())
}

/// One entry per curve, with its sample count.
fn draw_legend(root: &Area<'_>, latency: &Distribution, ttft: &Distribution) -> Drawn {
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
    legend(root, (16, 44), &entries)
}

/// The nines grid: 0 %, 50 %, 90 %, 99 %, … up to the sample's resolution, labelled.
fn draw_nines_grid(root: &Area<'_>, chart: &mut CdfChart<'_, '_>, scale: &Scale) -> Drawn {
    let mut lines = vec![0.0, 2_f64.log10()];
    lines.extend((1..=scale.top as u32).map(f64::from));
    for y in lines {
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(scale.lo, y), (scale.hi, y)],
            GRID.stroke_width(1),
        )))?;
        let (px, py) = chart.backend_coord(&(scale.lo, y));
        root.draw(&Text::new(
            share_label(1.0 - 10_f64.powf(-y)),
            (px - 6, py),
            text(12, INK, HPos::Right, VPos::Center),
        ))?;
    }
    Ok(())
}

/// The CDF of `d` as a step function (it jumps at each recorded value), thinned to the first
/// and last point of each pixel column of a plot `plot_px` wide: the shape is kept, the SVG
/// stays small.
fn cdf_line(d: &Distribution, scale: &Scale, plot_px: f64) -> Vec<(f64, f64)> {
    let (lo, hi) = (scale.lo, scale.hi);
    let column = |ms: f64| ((ms.max(lo).ln() - lo.ln()) / (hi.ln() - lo.ln()) * plot_px).floor();
    let total = d.total as f64;
    let mut steps: Vec<(f64, f64)> = Vec::with_capacity(d.points.len() * 2 + 1);
    let mut level = 0.0;
    for &(ms, count) in &d.points {
        let x = ms.max(lo);
        steps.push((x, level));
        level = nines(count as f64 / total, scale.top);
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
    line
}

/// The summary's percentiles on the curve: a drop line, a dot and a label (left of the dot
/// where it fits right of the plot's left edge).
fn draw_markers(
    root: &Area<'_>,
    chart: &mut CdfChart<'_, '_>,
    d: &Distribution,
    color: RGBColor,
    scale: &Scale,
    plot_left: i32,
) -> Drawn {
    for &(name, ms, q) in &d.markers {
        if !(ms.is_finite() && q.is_finite()) {
            continue;
        }
        let at = (ms.max(scale.lo), nines(q, scale.top));
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
