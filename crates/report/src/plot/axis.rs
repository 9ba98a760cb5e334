//! Axes, grids and ticks: where a chart sits in its picture ([`Frame`]), how its mesh looks
//! ([`GridStyle`], shared with the sweep's panels), the time axis and the tick labels.
//!
//! Why one module: every chart of the report styled its mesh and formatted its ticks the same
//! way in its own words; here the house style is written once and a plot only says what
//! differs (its descriptions, its formatters, a categorical axis).

use std::ops::Range;

use plotters::chart::{ChartBuilder, ChartContext, MeshStyle};
use plotters::coord::Shift;
use plotters::coord::ranged1d::{Ranged, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::{Cartesian2d, Color, DrawingArea, DrawingBackend, SVGBackend};

use super::context::FaultWindow;
use super::palette::{GRID, INK, LIGHT_GRID};
use super::style::{Drawn, axis_labels};
use crate::units::micros;

/// A chart over two `f64` ranges, drawn into an SVG.
pub(crate) type Chart<'a, 'b> =
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// How a chart's mesh looks: the report's house grid, the sweep's lighter one, and a
/// categorical x axis (no numeric ticks: the plot labels its categories itself).
pub trait GridStyle {
    /// The report's grid: light lines invisible, bold lines [`GRID`], axes [`INK`], tick
    /// labels 12 px.
    fn house_grid(&mut self) -> &mut Self;
    /// The sweep's grid: no light lines, bold lines [`LIGHT_GRID`], plotters' own axes and
    /// labels.
    fn sweep_grid(&mut self) -> &mut Self;
    /// No x ticks and no vertical grid lines.
    fn categorical_x(&mut self) -> &mut Self;
}

impl<X, Y, XT, YT, DB> GridStyle for MeshStyle<'_, '_, X, Y, DB>
where
    X: Ranged<ValueType = XT> + ValueFormatter<XT>,
    Y: Ranged<ValueType = YT> + ValueFormatter<YT>,
    DB: DrawingBackend,
{
    fn house_grid(&mut self) -> &mut Self {
        self.light_line_style(GRID.mix(0.0))
            .bold_line_style(GRID)
            .axis_style(INK)
            .label_style(axis_labels())
    }

    fn sweep_grid(&mut self) -> &mut Self {
        self.max_light_lines(0).bold_line_style(LIGHT_GRID)
    }

    fn categorical_x(&mut self) -> &mut Self {
        self.disable_x_mesh().x_labels(0)
    }
}

/// Where a chart sits in its area: the margins and label areas that differ from plot to plot
/// (the left and bottom margins are the same everywhere).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Frame {
    /// Above the chart: the title and the legend.
    pub(crate) top: i32,
    /// Right of the chart.
    pub(crate) right: i32,
    /// The x tick labels and description.
    pub(crate) x_labels: i32,
    /// The y tick labels and description.
    pub(crate) y_labels: i32,
}

impl Frame {
    /// Below a title and a one-row legend, with room for the usual tick labels.
    pub(crate) const UNDER_LEGEND: Frame = Frame {
        top: 62,
        right: 24,
        x_labels: 42,
        y_labels: 64,
    };

    /// The builder of a chart in this frame on `area`.
    pub(crate) fn on<'a, 'b>(
        self,
        area: &'a DrawingArea<SVGBackend<'b>, Shift>,
    ) -> ChartBuilder<'a, 'b, SVGBackend<'b>> {
        let mut builder = ChartBuilder::on(area);
        builder
            .margin_top(self.top)
            .margin_right(self.right)
            .margin_left(8)
            .margin_bottom(6)
            .x_label_area_size(self.x_labels)
            .y_label_area_size(self.y_labels);
        builder
    }

    /// A chart in this frame over `x` and `y`.
    pub(crate) fn chart<'a, 'b>(
        self,
        area: &'a DrawingArea<SVGBackend<'b>, Shift>,
        x: Range<f64>,
        y: Range<f64>,
    ) -> Result<Chart<'a, 'b>, plotters::drawing::DrawingAreaErrorKind<std::io::Error>> {
        self.on(area).build_cartesian_2d(x, y)
    }
}

/// Shades `[from, to]` on the x axis, from `0` to `top` on the y axis, in `color` at `alpha`
/// (a fault window behind the data).
pub(crate) fn shade(
    chart: &mut Chart<'_, '_>,
    (from, to): (f64, f64),
    top: f64,
    color: plotters::style::RGBColor,
    alpha: f64,
) -> Drawn {
    chart.draw_series(std::iter::once(plotters::element::Rectangle::new(
        [(from, 0.0), (to, top)],
        color.mix(alpha).filled(),
    )))?;
    Ok(())
}

/// The unit of a time axis, chosen from the run length so the ticks are round.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TimeAxis {
    /// Seconds per unit.
    pub(crate) secs: f64,
    /// The axis description.
    pub(crate) desc: &'static str,
    /// The axis end, in units.
    pub(crate) end: f64,
}

impl TimeAxis {
    /// Seconds up to 5 minutes, minutes up to 3 hours, hours beyond.
    pub(crate) fn for_run(run_end_us: u64) -> Self {
        let total = run_end_us as f64 / 1e6;
        let (secs, desc) = if total <= 300.0 {
            (1.0, "virtual time (s)")
        } else if total <= 3.0 * 3600.0 {
            (60.0, "virtual time (min)")
        } else {
            (3600.0, "virtual time (h)")
        };
        let end = (total / secs).max(1e-3);
        Self { secs, desc, end }
    }

    /// µs since the start, in units (clamped to the axis).
    pub(crate) fn at(&self, us: u64) -> f64 {
        (us as f64 / 1e6 / self.secs).min(self.end)
    }

    /// Where `fault` starts and ends on the axis (an open-ended one at `end_us`); `None` when
    /// nothing of it is on the axis.
    pub(crate) fn span(&self, fault: &FaultWindow, end_us: u64) -> Option<(f64, f64)> {
        let from = self.at(micros(fault.from));
        let to = self.at(fault.to.map_or(end_us, micros));
        (to > from).then_some((from, to))
    }
}

/// Milliseconds for a label: `0.85 ms`, `12.3 ms`, `812 ms`, `1.25 s`, `12.5 s`.
pub(crate) fn fmt_ms(ms: f64) -> String {
    if !ms.is_finite() {
        return "-".into();
    }
    if ms >= 10_000.0 {
        format!("{:.1} s", ms / 1000.0)
    } else if ms >= 1000.0 {
        format!("{:.2} s", ms / 1000.0)
    } else if ms >= 100.0 {
        format!("{ms:.0} ms")
    } else if ms >= 10.0 {
        format!("{ms:.1} ms")
    } else {
        format!("{ms:.2} ms")
    }
}

/// Milliseconds for an axis tick: `100 ms`, `1 s`, `2.5 s`.
pub(crate) fn fmt_ms_tick(ms: f64) -> String {
    if ms >= 1000.0 {
        format!("{} s", fmt_tick(ms / 1000.0))
    } else {
        format!("{} ms", fmt_tick(ms))
    }
}

/// A round number for an axis tick: no trailing `.0`, at most 3 decimals.
pub(crate) fn fmt_tick(v: f64) -> String {
    if !v.is_finite() {
        return String::new();
    }
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" { "0".into() } else { s.to_string() }
}
