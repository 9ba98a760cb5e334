//! `attempts.svg`: how many provider attempts requests needed (from `RequestEnd.attempts`),
//! and which fallback hops they took (one bar per `source → target`, from `Fallback` events).

use std::collections::BTreeMap;
use std::sync::Arc;

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::axis::{Frame, GridStyle, fmt_tick};
use super::palette::{FALLBACKS, INK, LATENCY, MUTED};
use super::style::{Area, Drawn, estimate_width, nothing, svg, text, title};

/// Attempt counts `0..=MAX_ATTEMPTS_COUNTED` get a bar each; more fall in one `N+` bar.
pub const MAX_ATTEMPTS_COUNTED: usize = 10;

const HEIGHT: u32 = 400;
/// Width of the attempts panel, px; the hops get the rest.
const LEFT_PX: u32 = 430;
/// Most hop pairs drawn (the busiest); the rest are summed in a note.
const MAX_HOPS: usize = 12;

/// The counters.
pub(crate) struct AttemptCounts<'a> {
    /// Requests by attempts; the last slot counts every request above [`MAX_ATTEMPTS_COUNTED`].
    pub(crate) by_attempts: &'a [u64; MAX_ATTEMPTS_COUNTED + 2],
    /// Hops by (source, target).
    pub(crate) hops: &'a BTreeMap<(Arc<str>, Arc<str>), u64>,
}

pub(crate) fn render(counts: &AttemptCounts<'_>) -> Result<String, String> {
    svg(HEIGHT, |root| {
        let (left, right) = root.split_horizontally(LEFT_PX);
        draw_attempts(&left, counts.by_attempts)?;
        draw_hops(&right, counts.hops)
    })
}

fn draw_attempts(area: &Area<'_>, by_attempts: &[u64; MAX_ATTEMPTS_COUNTED + 2]) -> Drawn {
    title(area, "Attempts per request")?;
    let overflow = MAX_ATTEMPTS_COUNTED + 1;
    if by_attempts.iter().all(|&n| n == 0) {
        return nothing(area, "no requests finished");
    }
    // 1, 2, 3 always (so one bar is not alone), 0 and the overflow only when seen.
    let last = by_attempts[..=MAX_ATTEMPTS_COUNTED]
        .iter()
        .rposition(|&n| n > 0)
        .unwrap_or(0)
        .max(3);
    let mut bars: Vec<(String, u64)> = Vec::new();
    if by_attempts[0] > 0 {
        bars.push(("0".into(), by_attempts[0]));
    }
    for (n, &count) in by_attempts.iter().enumerate().take(last + 1).skip(1) {
        bars.push((n.to_string(), count));
    }
    if by_attempts[overflow] > 0 {
        bars.push((format!("{overflow}+"), by_attempts[overflow]));
    }
    let total: u64 = by_attempts.iter().sum();
    let ymax = bars.iter().map(|b| b.1).max().unwrap_or(1).max(1) as f64 * 1.15;
    let k = bars.len() as f64;

    let frame = Frame {
        top: 48,
        right: 16,
        ..Frame::UNDER_LEGEND
    };
    let mut chart = frame.chart(area, -0.5..k - 0.5, 0.0..ymax)?;
    chart
        .configure_mesh()
        .house_grid()
        .categorical_x()
        .x_desc("provider attempts")
        .y_desc("requests")
        .y_label_formatter(&|v| fmt_tick(*v))
        .draw()?;
    for (i, (label, count)) in bars.iter().enumerate() {
        let x = i as f64;
        let y = *count as f64;
        chart.draw_series(std::iter::once(Rectangle::new(
            [(x - 0.36, 0.0), (x + 0.36, y)],
            LATENCY.filled(),
        )))?;
        let (px, py) = chart.backend_coord(&(x, y));
        area.draw(&Text::new(
            format!("{count} ({})", share(*count, total)),
            (px, py - 3),
            text(11, INK, HPos::Center, VPos::Bottom),
        ))?;
        let (bx, by) = chart.backend_coord(&(x, 0.0));
        area.draw(&Text::new(
            label.clone(),
            (bx, by + 6),
            text(12, INK, HPos::Center, VPos::Top),
        ))?;
    }
    Ok(())
}

fn draw_hops(area: &Area<'_>, hops: &BTreeMap<(Arc<str>, Arc<str>), u64>) -> Drawn {
    title(area, "Fallback hops (source → target)")?;
    if hops.is_empty() {
        return nothing(area, "no fallback hops");
    }
    let mut pairs: Vec<(String, u64)> = hops
        .iter()
        .map(|((s, t), n)| (format!("{s} → {t}"), *n))
        .collect();
    // Busiest first; the map's order breaks ties.
    pairs.sort_by_key(|p| std::cmp::Reverse(p.1));
    let hidden: u64 = pairs.iter().skip(MAX_HOPS).map(|p| p.1).sum();
    let hidden_pairs = pairs.len().saturating_sub(MAX_HOPS);
    pairs.truncate(MAX_HOPS);

    let (width, _) = area.dim_in_pixel();
    let labels_px = pairs
        .iter()
        .map(|p| estimate_width(&p.0, 12) + 14)
        .max()
        .unwrap_or(60)
        .min(i32::try_from(width / 2).unwrap_or(240))
        .max(60);
    let xmax = pairs.iter().map(|p| p.1).max().unwrap_or(1).max(1) as f64 * 1.18;
    let n = pairs.len().max(4) as f64;
    let frame = Frame {
        top: 48,
        y_labels: labels_px,
        ..Frame::UNDER_LEGEND
    };
    let mut chart = frame.chart(area, 0.0..xmax, 0.0..n)?;
    chart
        .configure_mesh()
        .house_grid()
        .disable_y_mesh()
        .y_labels(0)
        .x_desc("hops")
        .x_label_formatter(&|v| fmt_tick(*v))
        .draw()?;
    // `backend_coord` is in the whole canvas; this panel draws relative to its corner.
    let (ox, oy) = area.get_base_pixel();
    let at = |(x, y): (i32, i32)| (x - ox, y - oy);
    for (i, (label, count)) in pairs.iter().enumerate() {
        // The busiest at the top.
        let y = n - i as f64 - 0.5;
        let x = *count as f64;
        chart.draw_series(std::iter::once(Rectangle::new(
            [(0.0, y - 0.32), (x, y + 0.32)],
            FALLBACKS.filled(),
        )))?;
        let (px, py) = at(chart.backend_coord(&(x, y)));
        area.draw(&Text::new(
            count.to_string(),
            (px + 4, py),
            text(11, INK, HPos::Left, VPos::Center),
        ))?;
        let (lx, ly) = at(chart.backend_coord(&(0.0, y)));
        area.draw(&Text::new(
            label.clone(),
            (lx - 6, ly),
            text(12, INK, HPos::Right, VPos::Center),
        ))?;
    }
    if hidden_pairs > 0 {
        let (px, py) = at(chart.backend_coord(&(xmax, 0.0)));
        area.draw(&Text::new(
            format!("+{hidden_pairs} more pairs, {hidden} hops"),
            (px - 4, py - 6),
            text(11, MUTED, HPos::Right, VPos::Bottom),
        ))?;
    }
    Ok(())
}

/// `count` of `total` as a percentage for a label: `99.7%`, `0.3%`, `<0.1%`, `0%`.
fn share(count: u64, total: u64) -> String {
    if count == 0 || total == 0 {
        return "0%".into();
    }
    let pct = count as f64 * 100.0 / total as f64;
    if pct < 0.1 {
        "<0.1%".into()
    } else {
        format!("{}%", fmt_tick((pct * 10.0).round() / 10.0))
    }
}
