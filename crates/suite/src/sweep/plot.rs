//! `sweep.svg`: one row per metric, each metric's mean over seeds (a marker) with its 95 %
//! interval (a whisker) against the first swept key, one series per combination of the other
//! keys; beside it, the same numbers zoomed when the axis from 0 would flatten them.
//!
//! Drawn so the picture cannot hide the result:
//! - The x axis is categorical: one tick per swept value, labelled with the value as written
//!   (`allowed_fails` 0, 1, 3, 5 evenly spaced, never a 1.5 tick), the config's own value
//!   labelled `(config)`.
//! - Series are dodged sideways within a category and each has its own marker shape, so
//!   series with the same numbers stay visible; a panel also says "B identical to A".
//! - The left panel's y axis starts at 0 (every metric is non-negative). A rate's axis runs
//!   to 1, or, when every value is below 0.5, is zoomed to 0-x and says so in the axis label.
//! - The right panel is the honest zoom: when the means span less than half of the left
//!   axis (3.75 s against 4.15 s on an axis from 0 to 4.5 s), the same series on an axis
//!   fitted to them, marked `ZOOMED` in its caption and axis label (which also says when a
//!   whisker runs past it); otherwise it says why no zoom is drawn.
//! - Every metric gets its row, a metric at 0 in every run too (the question may have been
//!   about it): its caption says so.
//! - The legend is a band above the panels, outside every data area; each panel's caption
//!   names the best combination and whether it is significantly better ([`verdict`]), or says
//!   the metric is descriptive and not ranked.
//!
//! Drawn with plotters' SVG backend and no font files (text is left to the SVG viewer), so
//! the file is byte-identical for the same statistics; its colours, font and grid styles are
//! the report's ([`routersim_report::plot::palette`], [`routersim_report::plot::axis`]).
//!
//! [`verdict`]: crate::sweep::verdicts

use std::path::Path;

use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use routersim_report::plot::axis::GridStyle;
use routersim_report::plot::palette::{MUTED, SERIES, cycled};
use routersim_report::plot::style::{Area, Drawn, FONT};

use crate::sweep::{ComboStats, Manifest, MetricVerdict, verdicts};

/// A panel's chart: categories (as `f64`) against the metric.
type Chart<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

const PANEL_COLUMNS: usize = 2;
const PANEL_WIDTH: u32 = 720;
const PANEL_HEIGHT: u32 = 360;
const TITLE_HEIGHT: u32 = 64;
const LEGEND_ROW: u32 = 24;
const LEGEND_PER_ROW: usize = 3;

/// One series: its label and its points (category index, mean, low, high).
struct Series {
    label: String,
    points: Vec<(usize, f64, f64, f64)>,
}

/// The last segment of a config path, for short labels (`router_settings.cooldown_time` →
/// `cooldown_time`).
fn short(path: &str) -> &str {
    path.rsplit('.').next().unwrap_or(path)
}

/// The series of metric column `m`, in grid order of the keys after the first.
fn series_of(manifest: &Manifest, stats: &[ComboStats], m: usize) -> Vec<Series> {
    let mut series: Vec<Series> = Vec::new();
    for c in stats {
        let rest = c.values.get(1..).unwrap_or(&[]);
        let label = if rest.is_empty() {
            "mean over seeds, 95% interval".to_string()
        } else {
            manifest.keys[1..]
                .iter()
                .zip(rest)
                .map(|(k, &v)| format!("{}={}", short(&k.path), k.label(v)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let x = c.values.first().copied().unwrap_or(0);
        let i = c.metrics[m];
        let point = (x, i.mean, i.low, i.high);
        match series.iter_mut().find(|s| s.label == label) {
            Some(s) => s.points.push(point),
            None => series.push(Series {
                label,
                points: vec![point],
            }),
        }
    }
    for s in &mut series {
        s.points.sort_by_key(|p| p.0);
    }
    series
}

/// "B identical to A" for series whose numbers equal an earlier series' in this panel.
fn identical_note(series: &[Series]) -> Option<String> {
    let notes: Vec<String> = series
        .iter()
        .enumerate()
        .filter_map(|(j, s)| {
            series[..j]
                .iter()
                .find(|t| t.points == s.points)
                .map(|t| format!("{} identical to {}", s.label, t.label))
        })
        .collect();
    (!notes.is_empty()).then(|| notes.join("; "))
}

/// The caption's verdict: the best and whether it is significantly better, or why there is
/// no best.
fn verdict_caption(v: &MetricVerdict, manifest: &Manifest) -> String {
    if !v.ranked {
        return format!("{}: not ranked (descriptive)", v.metric);
    }
    let Some(best) = v.best.as_ref().filter(|_| v.significant) else {
        return format!(
            "{} ({} is better): no combination significantly different, none is best",
            v.metric, v.better
        );
    };
    let settings = if manifest.keys.is_empty() {
        best.settings.clone()
    } else {
        best.values
            .iter()
            .map(|(k, v)| format!("{}={}", short(k), v.as_str().unwrap_or_default()))
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!(
        "{} ({} is better): best {settings}, significantly better than {} other(s)",
        v.metric, v.better, v.worse
    )
}

/// Every finite value a panel shows: the means and the ends of the whiskers.
fn shown_values(series: &[Series]) -> impl Iterator<Item = f64> + '_ {
    series
        .iter()
        .flat_map(|s| s.points.iter())
        .flat_map(|p| [p.1, p.2, p.3])
        .filter(|v| v.is_finite())
}

/// The y range and axis label of a metric on the panel from 0 (see the module docs).
fn y_axis(metric: &str, series: &[Series]) -> (f64, f64, String) {
    let top = shown_values(series).fold(0.0_f64, f64::max);
    if metric.ends_with("_rate") {
        if top >= 0.5 || top <= 0.0 {
            return (0.0, 1.0, "share of requests (0 to 1)".into());
        }
        let zoom = nice_above(top * 1.1);
        return (
            0.0,
            zoom,
            format!("share of requests, ZOOMED to 0-{zoom} (full scale 0-1)"),
        );
    }
    let label = format!("{} (from 0)", unit(metric));
    (0.0, if top > 0.0 { top * 1.1 } else { 1.0 }, label)
}

fn unit(metric: &str) -> &'static str {
    if metric.ends_with("_rate") {
        "share of requests"
    } else if metric.contains("_ms") {
        "ms"
    } else {
        "per request"
    }
}

/// The lowest and highest of `values` (infinite when there are none).
fn span(values: impl Iterator<Item = f64>) -> (f64, f64) {
    values.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
        (a.min(v), b.max(v))
    })
}

/// The zoomed panel's y range and axis label: fitted to the means, when they span less than
/// half of the axis from 0 (`top` its end), the whiskers too when they fit (else they are
/// clipped, and the label says so); `Err` says why no zoom is drawn.
fn zoom_axis(metric: &str, series: &[Series], top: f64) -> Result<(f64, f64, String), String> {
    let means = series
        .iter()
        .flat_map(|s| s.points.iter())
        .map(|p| p.1)
        .filter(|v| v.is_finite());
    let (lo, hi) = span(means);
    if !lo.is_finite() || hi <= 0.0 {
        return Err("0 in every run: nothing to zoom into".into());
    }
    if hi - lo <= f64::EPSILON * hi.abs() {
        return Err("the same mean in every combination: nothing to zoom into".into());
    }
    if hi - lo >= 0.5 * top {
        return Err("the axis from 0 shows the differences: no zoom needed".into());
    }
    let pad = (hi - lo) * 0.25;
    let (mut y_lo, mut y_hi) = (lo - pad, hi + pad);
    let (w_lo, w_hi) = span(shown_values(series));
    let clipped = if w_hi - w_lo < 0.5 * top {
        y_lo = y_lo.min(w_lo - pad);
        y_hi = y_hi.max(w_hi + pad);
        false
    } else {
        w_lo < y_lo || w_hi > y_hi
    };
    let y_lo = y_lo.max(0.0);
    let notes: Vec<&str> = [(y_lo > 0.0, "not from 0"), (clipped, "whiskers clipped")]
        .iter()
        .filter(|(on, _)| *on)
        .map(|(_, note)| *note)
        .collect();
    let notes = if notes.is_empty() {
        String::new()
    } else {
        format!(" ({})", notes.join("; "))
    };
    Ok((
        y_lo,
        y_hi,
        format!(
            "{}, ZOOMED to {}-{}{notes}",
            unit(metric),
            short_number(y_lo),
            short_number(y_hi)
        ),
    ))
}

/// A number for an axis label: four significant digits.
fn short_number(x: f64) -> String {
    if x == 0.0 {
        return "0".into();
    }
    let digits = (3 - x.abs().log10().floor() as i32).max(0) as usize;
    let text = format!("{x:.digits$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// The smallest of 1, 2, 2.5, 5 × 10^k at or above `x` (> 0).
fn nice_above(x: f64) -> f64 {
    let base = 10f64.powf(x.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * base)
        .find(|&v| v >= x)
        .unwrap_or(10.0 * base)
}

/// What the picture holds: one row per metric (column), the legend's series and the canvas'
/// size.
struct Layout {
    rows: usize,
    legend: Vec<Series>,
    legend_height: u32,
    width: u32,
}

impl Layout {
    fn of(manifest: &Manifest, stats: &[ComboStats]) -> Self {
        let legend = series_of(manifest, stats, 0);
        let legend_rows = legend.len().div_ceil(LEGEND_PER_ROW).max(1) as u32;
        Self {
            rows: manifest.metrics.len().max(1),
            legend,
            legend_height: 12 + LEGEND_ROW * legend_rows,
            width: PANEL_WIDTH * PANEL_COLUMNS as u32,
        }
    }

    fn size(&self) -> (u32, u32) {
        (
            self.width,
            TITLE_HEIGHT + self.legend_height + PANEL_HEIGHT * self.rows as u32,
        )
    }
}

/// Writes the plot of `stats` (in grid order) to `path`.
pub fn write_svg(path: &Path, manifest: &Manifest, stats: &[ComboStats]) -> Result<(), String> {
    let layout = Layout::of(manifest, stats);
    let root = SVGBackend::new(path, layout.size()).into_drawing_area();
    draw(&root, manifest, stats, &layout).map_err(|e| e.to_string())
}

fn draw(root: &Area<'_>, manifest: &Manifest, stats: &[ComboStats], layout: &Layout) -> Drawn {
    root.fill(&WHITE)?;
    let (head, rest) = root.split_vertically(TITLE_HEIGHT);
    let (legend_area, body) = rest.split_vertically(layout.legend_height);
    draw_heading(&head, manifest)?;
    draw_legend(&legend_area, &layout.legend, layout.width)?;
    let verdict = verdicts(manifest, stats);
    let categories: Vec<String> = match manifest.keys.first() {
        Some(k) => (0..k.values.len()).map(|v| k.label(v)).collect(),
        None => vec!["(scenario as is)".to_string()],
    };
    let panels = body.split_evenly((layout.rows, PANEL_COLUMNS));
    for (m, row) in panels
        .chunks(PANEL_COLUMNS)
        .enumerate()
        .take(manifest.metrics.len())
    {
        let metric = &manifest.metrics[m];
        let series = series_of(manifest, stats, m);
        let mut caption = verdict
            .get(m)
            .map_or_else(|| metric.clone(), |v| verdict_caption(v, manifest));
        let (y_lo, y_hi, y_desc) = y_axis(metric, &series);
        if shown_values(&series).all(|v| v == 0.0) {
            caption = format!("{caption}; 0 in every run");
        }
        let panel = Panel {
            series: &series,
            categories: &categories,
            x_desc: manifest.keys.first().map_or("", |k| short(&k.path)),
        };
        draw_panel(root, &row[0], &panel, &caption, (y_lo, y_hi, &y_desc))?;
        match zoom_axis(metric, &series, y_hi) {
            Ok((z_lo, z_hi, z_desc)) => {
                let zoomed = format!("{metric}: ZOOMED to the values (left: from 0)");
                draw_panel(root, &row[1], &panel, &zoomed, (z_lo, z_hi, &z_desc))?;
            }
            Err(why) => draw_no_zoom(&row[1], metric, &why)?,
        }
    }
    root.present()?;
    Ok(())
}

/// The title line and, under it, the x key.
fn draw_heading(head: &Area<'_>, manifest: &Manifest) -> Drawn {
    head.draw(&Text::new(
        format!(
            "routersim sweep: {} ({} seed(s) each; marker = mean, whisker = 95% interval)",
            manifest.scenario,
            manifest.seeds.len()
        ),
        (12, 10),
        (FONT, 20),
    ))?;
    let sub = format!(
        "x: {} (categories, as swept; (config): the scenario's own value); left: from 0, \
         right: ZOOMED where the values are close",
        manifest.keys.first().map_or("-", |k| k.path.as_str())
    );
    head.draw(&Text::new(sub, (12, 38), (FONT, 14)))
}

/// The legend band: outside every panel, [`LEGEND_PER_ROW`] series a row.
fn draw_legend(area: &Area<'_>, legend: &[Series], width: u32) -> Drawn {
    let column_width = (width as i32 - 24) / LEGEND_PER_ROW as i32;
    for (i, s) in legend.iter().enumerate() {
        let color = cycled(&SERIES, i);
        let x = 12 + column_width * (i % LEGEND_PER_ROW) as i32;
        let y = 6 + (LEGEND_ROW as i32) * (i / LEGEND_PER_ROW) as i32 + 8;
        area.draw(&PathElement::new(
            vec![(x, y), (x + 28, y)],
            color.stroke_width(2),
        ))?;
        let style = color.filled();
        let at = (x + 14, y);
        match i % 4 {
            0 => area.draw(&Circle::new(at, 4, style)),
            1 => area.draw(&TriangleMarker::new(at, 5, style)),
            2 => area.draw(&(EmptyElement::at(at) + Rectangle::new([(-4, -4), (4, 4)], style))),
            _ => area.draw(&Cross::new(at, 4, color.stroke_width(2))),
        }?;
        area.draw(&Text::new(s.label.clone(), (x + 36, y - 7), (FONT, 14)))?;
    }
    Ok(())
}

/// Where no zoom is drawn: why, in the panel's place.
fn draw_no_zoom(panel: &Area<'_>, metric: &str, why: &str) -> Drawn {
    let (w, h) = panel.dim_in_pixel();
    let style = (FONT, 14)
        .into_font()
        .color(&MUTED)
        .pos(Pos::new(HPos::Center, VPos::Center));
    let (x, y) = (w as i32 / 2, h as i32 / 2);
    panel.draw(&Text::new(
        format!("{metric}: no zoom"),
        (x, y - 10),
        style.clone(),
    ))?;
    panel.draw(&Text::new(why.to_string(), (x, y + 10), style))
}

/// What one metric's panels show: its series against the categories.
struct Panel<'a> {
    series: &'a [Series],
    categories: &'a [String],
    x_desc: &'a str,
}

/// One panel: its caption and note, the categorical axis on `y` (from, to, label), and every
/// series.
fn draw_panel(
    root: &Area<'_>,
    area: &Area<'_>,
    panel: &Panel<'_>,
    caption: &str,
    (y_lo, y_hi, y_desc): (f64, f64, &str),
) -> Drawn {
    let inner = area.margin(6, 6, 10, 10);
    let inner = inner.titled(caption, (FONT, 15))?;
    let note = identical_note(panel.series).unwrap_or_default();
    let inner = inner.titled(&note, (FONT, 12))?;
    let n = panel.categories.len();
    let mut chart = ChartBuilder::on(&inner)
        .x_label_area_size(44)
        .y_label_area_size(72)
        .build_cartesian_2d(-0.5..n as f64 - 0.5, y_lo..y_hi)?;
    // Categorical x: no numeric ticks; each value's label is drawn under its category.
    chart
        .configure_mesh()
        .sweep_grid()
        .categorical_x()
        .x_desc(panel.x_desc)
        .y_desc(y_desc)
        .draw()?;
    for (i, value) in panel.categories.iter().enumerate() {
        let (x, y) = chart.backend_coord(&(i as f64, y_lo));
        root.draw(&PathElement::new(vec![(x, y), (x, y + 5)], BLACK))?;
        root.draw(&Text::new(
            value.clone(),
            (x, y + 8),
            (FONT, 14)
                .into_font()
                .into_text_style(root)
                .pos(Pos::new(HPos::Center, VPos::Top)),
        ))?;
    }
    let k = panel.series.len().max(1);
    let step = (0.6 / k as f64).min(0.1);
    for (i, s) in panel.series.iter().enumerate() {
        // Dodged sideways within a category.
        let dx = (i as f64 - (k as f64 - 1.0) / 2.0) * step;
        draw_series(&mut chart, i, s, dx, (y_lo, y_hi))?;
    }
    Ok(())
}

/// Series `i`: its line, its whiskers (clipped to the axis) and its markers, `dx` aside.
fn draw_series(
    chart: &mut Chart<'_, '_>,
    i: usize,
    s: &Series,
    dx: f64,
    (y_lo, y_hi): (f64, f64),
) -> Drawn {
    let color = cycled(&SERIES, i);
    let at = |p: &(usize, f64, f64, f64)| p.0 as f64 + dx;
    chart.draw_series(LineSeries::new(
        s.points.iter().map(|p| (at(p), p.1)),
        color.stroke_width(1),
    ))?;
    chart.draw_series(s.points.iter().filter(|p| p.2.is_finite()).map(|p| {
        PathElement::new(
            vec![(at(p), p.2.max(y_lo)), (at(p), p.3.min(y_hi))],
            color.stroke_width(2),
        )
    }))?;
    // Each series its own marker shape, so coincident ones stay told apart.
    let points = s.points.iter().map(|p| (at(p), p.1));
    let style = color.filled();
    match i % 4 {
        0 => chart.draw_series(points.map(|p| Circle::new(p, 4, style))),
        1 => chart.draw_series(points.map(|p| TriangleMarker::new(p, 5, style))),
        2 => chart.draw_series(
            points.map(|p| EmptyElement::at(p) + Rectangle::new([(-4, -4), (4, 4)], style)),
        ),
        _ => chart.draw_series(points.map(|p| Cross::new(p, 4, color.stroke_width(2)))),
    }?;
    Ok(())
}
