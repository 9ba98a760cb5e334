//! Every colour routersim draws with: the report's plots and the sweep's (`routersim sweep`'s
//! `sweep.svg`).
//!
//! Why one module: a colour means the same thing in every picture (red is cooling or failing,
//! the fault windows are one magenta), and a plot picks from here instead of writing its own
//! RGB values. Changing a value changes the bytes of the plots that use it.

use plotters::style::RGBColor;

/// Text, axes and outlines.
pub const INK: RGBColor = RGBColor(0x22, 0x22, 0x22);
/// Notes and "nothing to show" messages.
pub const MUTED: RGBColor = RGBColor(0x77, 0x77, 0x77);
/// Grid lines of the report's plots.
pub const GRID: RGBColor = RGBColor(0xe4, 0xe4, 0xe4);
/// Grid lines of the sweep's panels (a shade lighter than [`GRID`]).
pub const LIGHT_GRID: RGBColor = RGBColor(230, 230, 230);

/// A deployment lane while healthy.
pub const HEALTHY: RGBColor = RGBColor(0x9c, 0xd3, 0x9a);
/// A deployment lane while cooling.
pub const COOLING: RGBColor = RGBColor(0xd9, 0x48, 0x1f);
/// A deployment lane while half-open.
pub const HALF_OPEN: RGBColor = RGBColor(0xf2, 0xb1, 0x1c);
/// A deployment lane while most of its attempts fail and the router neither cools it nor has
/// it half-open (the provider's truth where the router's view says healthy).
pub const FAILING: RGBColor = RGBColor(0x7a, 0x10, 0x10);
/// Fault windows: drawn translucent ([`FAULT_ALPHA`]) behind everything.
pub const FAULT: RGBColor = RGBColor(0xc2, 0x1f, 0x5b);
/// The opacity of a fault window's shading.
pub const FAULT_ALPHA: f64 = 0.12;

/// The timeline's arrivals.
pub const ARRIVALS: RGBColor = RGBColor(0x55, 0x6b, 0x8c);
/// Requests that succeeded.
pub const OK: RGBColor = RGBColor(0x2e, 0x8b, 0x3e);
/// Requests that failed.
pub const FAILED: RGBColor = RGBColor(0xd0, 0x21, 0x21);
/// Retries.
pub const RETRIES: RGBColor = RGBColor(0xe0, 0x8a, 0x00);
/// Fallback hops.
pub const FALLBACKS: RGBColor = RGBColor(0x7b, 0x3f, 0xb0);
/// Stream continuations.
pub const CONTINUATIONS: RGBColor = RGBColor(0x0f, 0x8f, 0x8f);
/// End-to-end latency (and its p50 over time).
pub const LATENCY: RGBColor = RGBColor(0x1f, 0x5f, 0xbf);
/// The p99 latency over time.
pub const P99: RGBColor = FAILED;
/// Time to first token.
pub const TTFT: RGBColor = RGBColor(0xd0, 0x6a, 0x00);

/// The traffic-share bands, cycled in deployment order.
pub const BANDS: [RGBColor; 8] = [
    RGBColor(0x1f, 0x5f, 0xbf),
    RGBColor(0xe0, 0x8a, 0x00),
    RGBColor(0x2e, 0x8b, 0x3e),
    RGBColor(0x7b, 0x3f, 0xb0),
    RGBColor(0x00, 0x8b, 0x8b),
    RGBColor(0xb0, 0x3a, 0x2e),
    RGBColor(0x55, 0x6b, 0x8c),
    RGBColor(0x9c, 0x7a, 0x00),
];

/// The sweep's series, cycled in series order (the familiar ten-colour categorical set,
/// first eight).
pub const SERIES: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
];

/// The `i`th colour of `palette`, cycling.
pub fn cycled(palette: &[RGBColor], i: usize) -> RGBColor {
    palette
        .get(i % palette.len().max(1))
        .copied()
        .unwrap_or(INK)
}
