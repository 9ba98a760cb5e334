//! `sweep.svg`: small multiples, one panel per metric, each metric's mean over seeds against
//! the first swept key, one line per value of the second key (per combination of the keys
//! after the first, when there are more), with the 95 % interval as a vertical whisker.
//!
//! The x axis is numeric when every value of the first key is a number, otherwise the values
//! are evenly spaced categories. Drawn with plotters' SVG backend and no font files (text is
//! left to the SVG viewer), so the file is byte-identical for the same statistics.

use std::path::Path;

use plotters::prelude::*;

use crate::scenario::parse_set_value;
use crate::sweep::{ComboStats, Manifest};

/// Line colours, in series order (cycled).
const COLORS: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
];

const PANEL_COLUMNS: usize = 2;
const PANEL_WIDTH: u32 = 600;
const PANEL_HEIGHT: u32 = 320;
const TITLE_HEIGHT: u32 = 40;

/// One line of a panel: its label and its points (x, mean, low, high).
struct Series {
    label: String,
    points: Vec<(f64, f64, f64, f64)>,
}

/// The last segment of a config path, for short labels (`router_settings.cooldown_time` →
/// `cooldown_time`).
fn short(path: &str) -> &str {
    path.rsplit('.').next().unwrap_or(path)
}

/// Writes the plot of `stats` (in grid order) to `path`.
pub fn write_svg(path: &Path, manifest: &Manifest, stats: &[ComboStats]) -> Result<(), String> {
    let metrics = manifest.metrics.len().max(1);
    let rows = metrics.div_ceil(PANEL_COLUMNS);
    let size = (
        PANEL_WIDTH * PANEL_COLUMNS as u32,
        TITLE_HEIGHT + PANEL_HEIGHT * rows as u32,
    );
    let root = SVGBackend::new(path, size).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let title = format!(
        "routersim sweep: {} ({} seeds each; mean and 95% interval)",
        manifest.scenario,
        manifest.seeds.len()
    );
    let body = root
        .titled(&title, ("sans-serif", 20))
        .map_err(|e| e.to_string())?;
    let panels = body.split_evenly((rows, PANEL_COLUMNS));

    // The x positions of the first key's values.
    let first = manifest.keys.first();
    let numbers: Option<Vec<f64>> = first.and_then(|k| {
        k.values
            .iter()
            .map(|v| parse_set_value(v).ok().and_then(|v| v.as_f64()))
            .collect()
    });
    let categories: Vec<String> = match first {
        Some(k) => k.values.clone(),
        None => vec!["(scenario as is)".to_string()],
    };
    let x_of = |value: usize| -> f64 {
        match &numbers {
            Some(n) => n[value],
            None => value as f64,
        }
    };
    let (x_min, x_max) = match &numbers {
        Some(n) => {
            let lo = n.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = n.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let pad = if hi > lo { (hi - lo) * 0.05 } else { 1.0 };
            (lo - pad, hi + pad)
        }
        None => (-0.5, categories.len() as f64 - 0.5),
    };
    let x_desc = first.map_or("", |k| k.path.as_str());

    for (m, name) in manifest.metrics.iter().enumerate() {
        let Some(panel) = panels.get(m) else { break };
        // One series per combination of the keys after the first, in grid order.
        let mut series: Vec<Series> = Vec::new();
        for c in stats {
            let rest = c.values.get(1..).unwrap_or(&[]);
            let label = if rest.is_empty() {
                "mean".to_string()
            } else {
                manifest.keys[1..]
                    .iter()
                    .zip(rest)
                    .map(|(k, &v)| format!("{}={}", short(&k.path), k.values[v]))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let x = c.values.first().map_or(0.0, |&v| x_of(v));
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
            s.points.sort_by(|a, b| a.0.total_cmp(&b.0));
        }
        let finite = |v: f64| v.is_finite().then_some(v);
        let lows = series
            .iter()
            .flat_map(|s| s.points.iter().filter_map(|p| finite(p.2)));
        let highs = series
            .iter()
            .flat_map(|s| s.points.iter().filter_map(|p| finite(p.3)));
        let y_lo = lows.fold(f64::INFINITY, f64::min);
        let y_hi = highs.fold(f64::NEG_INFINITY, f64::max);
        let (y_lo, y_hi) = if y_lo.is_finite() && y_hi.is_finite() {
            let span = y_hi - y_lo;
            let pad = if span > 0.0 {
                span * 0.08
            } else if y_lo != 0.0 {
                y_lo.abs() * 0.1
            } else {
                1.0
            };
            (y_lo - pad, y_hi + pad)
        } else {
            (0.0, 1.0)
        };

        let mut chart = ChartBuilder::on(panel)
            .caption(name, ("sans-serif", 16))
            .margin(8)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(x_min..x_max, y_lo..y_hi)
            .map_err(|e| e.to_string())?;
        let category_label = |x: &f64| -> String {
            let i = x.round();
            if (x - i).abs() < 1e-9 && i >= 0.0 && (i as usize) < categories.len() {
                categories[i as usize].clone()
            } else {
                String::new()
            }
        };
        let mut mesh = chart.configure_mesh();
        mesh.x_desc(x_desc)
            .max_light_lines(0)
            .bold_line_style(RGBColor(225, 225, 225));
        if numbers.is_none() {
            mesh.x_labels(categories.len() * 2 + 1)
                .x_label_formatter(&category_label);
        }
        mesh.draw().map_err(|e| e.to_string())?;

        for (i, s) in series.iter().enumerate() {
            let color = COLORS[i % COLORS.len()];
            let drawn = chart
                .draw_series(LineSeries::new(
                    s.points.iter().map(|p| (p.0, p.1)),
                    color.stroke_width(2),
                ))
                .map_err(|e| e.to_string())?;
            if m == 0 && series.len() > 1 {
                drawn.label(s.label.clone()).legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                });
            }
            chart
                .draw_series(
                    s.points
                        .iter()
                        .map(|p| PathElement::new(vec![(p.0, p.2), (p.0, p.3)], color)),
                )
                .map_err(|e| e.to_string())?;
            chart
                .draw_series(
                    s.points
                        .iter()
                        .map(|p| Circle::new((p.0, p.1), 3, color.filled())),
                )
                .map_err(|e| e.to_string())?;
        }
        if m == 0 && series.len() > 1 {
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperRight)
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .draw()
                .map_err(|e| e.to_string())?;
        }
    }
    root.present().map_err(|e| e.to_string())?;
    Ok(())
}
