//! `sweep.svg`: one panel per metric, each metric's mean over seeds (a marker) with its 95 %
//! interval (a whisker) against the first swept key, one series per combination of the other
//! keys.
//!
//! Drawn so the picture cannot hide the result:
//! - The x axis is categorical: one tick per swept value, labelled with the value as written
//!   (`allowed_fails` 0, 1, 3, 5 evenly spaced, never a 1.5 tick).
//! - Series are dodged sideways within a category and each has its own marker shape, so
//!   series with the same numbers stay visible; a panel also says "B identical to A".
//! - Every y axis starts at 0 (every metric is non-negative). A rate's axis runs to 1, or,
//!   when every value is below 0.5, is zoomed and says so in the axis label.
//! - The legend is a band above the panels, outside every data area; each panel's caption
//!   names the best combination and whether it is significantly better ([`verdict`]).
//! - A metric that is 0 in every run gets no panel; the title line under the heading lists it.
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
use routersim_report::plot::palette::{SERIES, cycled};
use routersim_report::plot::style::{Area, Drawn, FONT};

use crate::sweep::{ComboStats, Manifest, MetricVerdict, verdicts};

/// A panel's chart: categories (as `f64`) against the metric.
type Chart<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

const PANEL_COLUMNS: usize = 2;
const PANEL_WIDTH: u32 = 720;
const PANEL_HEIGHT: u32 = 400;
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
                .map(|(k, &v)| format!("{}={}", short(&k.path), k.values[v]))
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

/// The caption's verdict: the best and whether it is significantly better.
fn verdict_caption(v: &MetricVerdict, manifest: &Manifest) -> String {
    let Some(best) = &v.best else {
        return format!("{} ({} is better)", v.metric, v.better);
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
    if v.significant {
        format!(
            "{} ({} is better): best {settings}, significantly better than {} other(s)",
            v.metric, v.better, v.worse
        )
    } else {
        format!(
            "{} ({} is better): no combination significantly different",
            v.metric, v.better
        )
    }
}

/// The y range and axis label of a metric (see the module docs).
fn y_axis(metric: &str, series: &[Series]) -> (f64, f64, String) {
    let top = series
        .iter()
        .flat_map(|s| s.points.iter())
        .flat_map(|p| [p.1, p.3])
        .filter(|v| v.is_finite())
        .fold(0.0_f64, f64::max);
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
    let unit = if metric.contains("_ms") {
        "ms"
    } else {
        "per request"
    };
    let label = format!("{unit} (from 0)");
    (0.0, if top > 0.0 { top * 1.1 } else { 1.0 }, label)
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

/// What the picture holds: the panels drawn (metric columns), the metrics left out (0 in
/// every run), the legend's series and the canvas' size.
struct Layout<'m> {
    drawn: Vec<usize>,
    zero: Vec<&'m str>,
    legend: Vec<Series>,
    legend_height: u32,
    rows: usize,
    width: u32,
}

impl<'m> Layout<'m> {
    fn of(manifest: &'m Manifest, stats: &[ComboStats]) -> Self {
        let is_zero = |m: usize| {
            stats.iter().all(|c| {
                c.metrics[m].mean == 0.0 && c.metrics[m].low == 0.0 && c.metrics[m].high == 0.0
            })
        };
        let drawn: Vec<usize> = (0..manifest.metrics.len())
            .filter(|&m| !is_zero(m) || stats.is_empty())
            .collect();
        let zero: Vec<&str> = (0..manifest.metrics.len())
            .filter(|m| !drawn.contains(m))
            .map(|m| manifest.metrics[m].as_str())
            .collect();
        let legend = series_of(manifest, stats, 0);
        let legend_rows = legend.len().div_ceil(LEGEND_PER_ROW).max(1) as u32;
        let rows = drawn.len().div_ceil(PANEL_COLUMNS).max(1);
        Self {
            drawn,
            zero,
            legend,
            legend_height: 12 + LEGEND_ROW * legend_rows,
            rows,
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

fn draw(root: &Area<'_>, manifest: &Manifest, stats: &[ComboStats], layout: &Layout<'_>) -> Drawn {
    root.fill(&WHITE)?;
    let (head, rest) = root.split_vertically(TITLE_HEIGHT);
    let (legend_area, body) = rest.split_vertically(layout.legend_height);
    draw_heading(&head, manifest, &layout.zero)?;
    draw_legend(&legend_area, &layout.legend, layout.width)?;
    let verdict = verdicts(manifest, stats);
    let categories: Vec<String> = match manifest.keys.first() {
        Some(k) => k.values.clone(),
        None => vec!["(scenario as is)".to_string()],
    };
    let panels = body.split_evenly((layout.rows, PANEL_COLUMNS));
    for (panel, &m) in panels.iter().zip(&layout.drawn) {
        let caption = verdict.get(m).map_or_else(
            || manifest.metrics[m].clone(),
            |v| verdict_caption(v, manifest),
        );
        draw_panel(root, panel, manifest, stats, m, &caption, &categories)?;
    }
    root.present()?;
    Ok(())
}

/// The title line and, under it, the x key and the metrics left out.
fn draw_heading(head: &Area<'_>, manifest: &Manifest, zero: &[&str]) -> Drawn {
    head.draw(&Text::new(
        format!(
            "routersim sweep: {} ({} seed(s) each; marker = mean, whisker = 95% interval)",
            manifest.scenario,
            manifest.seeds.len()
        ),
        (12, 10),
        (FONT, 20),
    ))?;
    let mut sub = format!(
        "x: {} (categories, as swept)",
        manifest.keys.first().map_or("-", |k| k.path.as_str())
    );
    if !zero.is_empty() {
        sub.push_str(&format!("; 0 in every run, not drawn: {}", zero.join(", ")));
    }
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

/// One metric's panel: its caption and note, the categorical axis, and every series.
fn draw_panel(
    root: &Area<'_>,
    panel: &Area<'_>,
    manifest: &Manifest,
    stats: &[ComboStats],
    m: usize,
    caption: &str,
    categories: &[String],
) -> Drawn {
    let series = series_of(manifest, stats, m);
    let (y_lo, y_hi, y_desc) = y_axis(&manifest.metrics[m], &series);
    let inner = panel.margin(6, 6, 10, 10);
    let inner = inner.titled(caption, (FONT, 15))?;
    let note = identical_note(&series).unwrap_or_default();
    let inner = inner.titled(&note, (FONT, 12))?;
    let n = categories.len();
    let mut chart = ChartBuilder::on(&inner)
        .x_label_area_size(44)
        .y_label_area_size(72)
        .build_cartesian_2d(-0.5..n as f64 - 0.5, y_lo..y_hi)?;
    // Categorical x: no numeric ticks; each value's label is drawn under its category.
    chart
        .configure_mesh()
        .sweep_grid()
        .categorical_x()
        .x_desc(manifest.keys.first().map_or("", |k| short(&k.path)))
        .y_desc(&y_desc)
        .draw()?;
    for (i, value) in categories.iter().enumerate() {
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
    let k = series.len().max(1);
    let step = (0.6 / k as f64).min(0.1);
    for (i, s) in series.iter().enumerate() {
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
