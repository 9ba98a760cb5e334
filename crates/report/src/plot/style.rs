//! What every plot shares: the SVG canvas, fonts and text, the title, the "nothing to show"
//! message and the legend row (colours are in [`super::palette`], axes in [`super::axis`]).
//!
//! Why apart from the plots: each plot is its data and its layout; how text and a legend look
//! is the same for all of them.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::palette::{INK, MUTED};

/// Width of every plot, px (one column of `report.html`).
pub(crate) const WIDTH: u32 = 960;
/// The only font name written (the report's plots and the sweep's): the viewer picks its own
/// sans-serif face.
pub const FONT: &str = "sans-serif";

/// The drawing area of a plot being rendered.
pub type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;
/// A drawing step's result.
pub type Drawn = Result<(), DrawingAreaErrorKind<std::io::Error>>;

/// plotters' SVG backend writes `font-size` as the font's size ÷ 1.24; sizes here are the
/// pixels wanted.
fn font_size(px: u32) -> f64 {
    f64::from(px) * 1.24
}

/// A text style of `size` px in `color`, anchored at `h`/`v`.
pub(crate) fn text(size: u32, color: RGBColor, h: HPos, v: VPos) -> TextStyle<'static> {
    TextStyle {
        font: (FONT, font_size(size)).into_font(),
        color: color.to_backend_color(),
        pos: Pos::new(h, v),
    }
}

/// Like [`text`], bold.
pub(crate) fn bold(size: u32, color: RGBColor, h: HPos, v: VPos) -> TextStyle<'static> {
    TextStyle {
        font: (FONT, font_size(size), FontStyle::Bold).into_font(),
        color: color.to_backend_color(),
        pos: Pos::new(h, v),
    }
}

/// Tick labels of the axes.
pub(crate) fn axis_labels() -> TextStyle<'static> {
    text(12, INK, HPos::Center, VPos::Center)
}

/// Draws a plot of `height` px into a string.
pub(crate) fn svg(height: u32, draw: impl FnOnce(&Area<'_>) -> Drawn) -> Result<String, String> {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        draw(&root).map_err(|e| e.to_string())?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(out)
}

/// The title at the top left of a plot.
pub(crate) fn title(root: &Area<'_>, title: &str) -> Drawn {
    root.draw(&Text::new(
        title.to_string(),
        (14, 10),
        bold(16, INK, HPos::Left, VPos::Top),
    ))
}

/// A centred grey message for a plot with nothing to show.
pub(crate) fn nothing(root: &Area<'_>, message: &str) -> Drawn {
    let (w, h) = root.dim_in_pixel();
    root.draw(&Text::new(
        message.to_string(),
        (
            i32::try_from(w / 2).unwrap_or(0),
            i32::try_from(h / 2).unwrap_or(0),
        ),
        text(15, MUTED, HPos::Center, VPos::Center),
    ))
}

/// What a legend entry looks like.
#[derive(Clone, Copy)]
pub(crate) enum Swatch {
    /// A filled box (lanes, bars, fault windows).
    Box(RGBColor, f64),
    /// A line (series).
    Line(RGBColor),
}

/// A row of legend entries starting at `(x, y)` (the entries' vertical centre).
pub(crate) fn legend(root: &Area<'_>, (x, y): (i32, i32), entries: &[(Swatch, String)]) -> Drawn {
    let mut at = x;
    for (swatch, label) in entries {
        match *swatch {
            Swatch::Box(color, alpha) => root.draw(&Rectangle::new(
                [(at, y - 6), (at + 14, y + 6)],
                color.mix(alpha).filled(),
            ))?,
            Swatch::Line(color) => root.draw(&PathElement::new(
                vec![(at, y), (at + 16, y)],
                color.stroke_width(3),
            ))?,
        }
        root.draw(&Text::new(
            label.clone(),
            (at + 20, y),
            text(13, INK, HPos::Left, VPos::Center),
        ))?;
        at += 20 + estimate_width(label, 13) + 18;
    }
    Ok(())
}

/// Like [`legend`], wrapped: an entry that would end past `right` starts a new row 20 px
/// lower. Returns the rows used (at least 1).
pub(crate) fn legend_rows(
    root: &Area<'_>,
    (x, y): (i32, i32),
    right: i32,
    entries: &[(Swatch, String)],
) -> Result<i32, DrawingAreaErrorKind<std::io::Error>> {
    let rows = wrap_legend(x, right, entries);
    for (r, row) in (0..).zip(&rows) {
        legend(root, (x, y + 20 * r), row)?;
    }
    Ok(i32::try_from(rows.len()).unwrap_or(1))
}

/// The rows [`legend_rows`] draws `entries` in (at least one).
pub(crate) fn wrap_legend(
    x: i32,
    right: i32,
    entries: &[(Swatch, String)],
) -> Vec<Vec<(Swatch, String)>> {
    let mut rows: Vec<Vec<(Swatch, String)>> = vec![Vec::new()];
    let mut at = x;
    for entry in entries {
        let width = 20 + estimate_width(&entry.1, 13) + 18;
        if at + width > right && at > x {
            rows.push(Vec::new());
            at = x;
        }
        at += width;
        if let Some(row) = rows.last_mut() {
            row.push(entry.clone());
        }
    }
    rows
}

/// A rough width of `s` at `size` px (plotters' own estimate for SVG).
pub(crate) fn estimate_width(s: &str, size: u32) -> i32 {
    let chars = i32::try_from(s.chars().count()).unwrap_or(i32::MAX / 16);
    chars.saturating_mul(i32::try_from(size).unwrap_or(12)) * 6 / 10
}
