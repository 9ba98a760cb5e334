//! The `expect` section: each line's bounds, metric and window, checked against the router
//! before the run (a per-deployment metric must name one of its deployments).
//!
//! Separate from [`crate::expect`], which holds the line's type and what the runner does
//! with it; this is the scenario file's side, with YAML paths in its errors.

use routersim_engine::config::RouterConfig;

use super::ctx::Ctx;
use super::error::ScenarioError;
use super::raw::RawExpect;
use crate::expect::{Expectation, parse_window, unknown_deployment, unwindowable};

/// Every `expect` line, in file order.
pub(super) fn validate_expect(
    ctx: &Ctx<'_>,
    raw: Vec<RawExpect>,
    router: &RouterConfig,
) -> Result<Vec<Expectation>, ScenarioError> {
    raw.into_iter()
        .enumerate()
        .map(|(i, e)| validate_line(ctx, &format!("expect[{i}]"), e, router))
        .collect()
}

/// One line at `path` (`expect[i]`).
fn validate_line(
    ctx: &Ctx<'_>,
    path: &str,
    e: RawExpect,
    router: &RouterConfig,
) -> Result<Expectation, ScenarioError> {
    for (key, bound) in [("min", e.min), ("max", e.max)] {
        if let Some(v) = bound.filter(|v| !v.is_finite()) {
            return Err(ctx.error(
                &format!("{path}.{key}"),
                format!("expected a finite number, found {v}"),
            ));
        }
    }
    if let Some(message) = unknown_deployment(&e.metric, router) {
        return Err(ctx.error(&format!("{path}.metric"), message));
    }
    let window = match &e.window {
        None => None,
        Some(text) => {
            Some(parse_window(text).map_err(|why| ctx.error(&format!("{path}.window"), why))?)
        }
    };
    if window.is_some()
        && let Some(why) = unwindowable(&e.metric)
    {
        return Err(ctx.error(&format!("{path}.metric"), why));
    }
    match (e.min, e.max) {
        (None, None) => Err(ctx.error(path, "set `min`, `max`, or both")),
        (Some(min), Some(max)) if min > max => Err(ctx.error(
            &format!("{path}.min"),
            format!("min ({min}) is above max ({max})"),
        )),
        (min, max) => Ok(Expectation {
            metric: e.metric,
            min,
            max,
            window,
        }),
    }
}
