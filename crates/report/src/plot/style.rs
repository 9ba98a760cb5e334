//! What every plot shares: the SVG canvas, fonts, colours, the time axis and the legend row.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Width of every plot, px (one column of `report.html`).
pub(crate) const WIDTH: u32 = 960;
/// The only font name written: the viewer picks its own sans-serif face.
pub(crate) const FONT: &str = "sans-serif";

/// The drawing area of a plot being rendered.
pub(crate) type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;
/// A drawing step's result.
pub(crate) type Drawn = Result<(), DrawingAreaErrorKind<std::io::Error>>;

pub(crate) const INK: RGBColor = RGBColor(0x22, 0x22, 0x22);
pub(crate) const MUTED: RGBColor = RGBColor(0x77, 0x77, 0x77);
pub(crate) const GRID: RGBColor = RGBColor(0xe4, 0xe4, 0xe4);
pub(crate) const HEALTHY: RGBColor = RGBColor(0x9c, 0xd3, 0x9a);
pub(crate) const COOLING: RGBColor = RGBColor(0xd9, 0x48, 0x1f);
pub(crate) const HALF_OPEN: RGBColor = RGBColor(0xf2, 0xb1, 0x1c);
/// Fault windows: drawn translucent behind everything.
pub(crate) const FAULT: RGBColor = RGBColor(0xc2, 0x1f, 0x5b);
pub(crate) const FAULT_ALPHA: f64 = 0.12;
pub(crate) const ARRIVALS: RGBColor = RGBColor(0x55, 0x6b, 0x8c);
pub(crate) const OK: RGBColor = RGBColor(0x2e, 0x8b, 0x3e);
pub(crate) const FAILED: RGBColor = RGBColor(0xd0, 0x21, 0x21);
pub(crate) const RETRIES: RGBColor = RGBColor(0xe0, 0x8a, 0x00);
pub(crate) const FALLBACKS: RGBColor = RGBColor(0x7b, 0x3f, 0xb0);
pub(crate) const CONTINUATIONS: RGBColor = RGBColor(0x0f, 0x8f, 0x8f);
pub(crate) const LATENCY: RGBColor = RGBColor(0x1f, 0x5f, 0xbf);
pub(crate) const TTFT: RGBColor = RGBColor(0xd0, 0x6a, 0x00);

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

/// A rough width of `s` at `size` px (plotters' own estimate for SVG).
pub(crate) fn estimate_width(s: &str, size: u32) -> i32 {
    let chars = i32::try_from(s.chars().count()).unwrap_or(i32::MAX / 16);
    chars.saturating_mul(i32::try_from(size).unwrap_or(12)) * 6 / 10
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
