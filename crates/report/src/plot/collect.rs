//! What the recorder keeps for the plots while events arrive, and the rendering of all six.
//!
//! Unlike the per-second counts of `timeseries.csv`, the cooling and half-open intervals are
//! kept per deployment (see [`super::intervals`]) so the lanes can be drawn.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use super::attempts::{self, AttemptCounts, MAX_ATTEMPTS_COUNTED};
use super::context::PlotContext;
use super::deployments::{self, Lane};
use super::failing::FailingSeconds;
use super::files::{
    ATTEMPTS_SVG, DEPLOYMENTS_SVG, LATENCY_OVER_TIME_SVG, LATENCY_SVG, TIMELINE_SVG,
    TRAFFIC_SHARE_SVG,
};
use super::intervals::Intervals;
use super::latency::{self, Distribution};
use super::latency_time::{self, LatencySeries};
use super::share::{self, ServedSeries};
use super::timeline;
use crate::error::ReportError;

/// One deployment's history.
#[derive(Debug, Default)]
struct History {
    group: Arc<str>,
    cooling: Intervals,
    half_open: Intervals,
}

/// The plots' share of the recorder's state.
#[derive(Debug)]
pub(crate) struct PlotRecorder {
    /// Whether `finish` renders the plots.
    pub(crate) enabled: bool,
    context: PlotContext,
    deployments: BTreeMap<Arc<str>, History>,
    /// Requests by attempts: index `n` for `n` attempts, the last for more.
    attempts: [u64; MAX_ATTEMPTS_COUNTED + 2],
    /// Fallback hops by (source, target) group.
    hops: BTreeMap<(Arc<str>, Arc<str>), u64>,
    /// End-to-end latencies per bucket of time.
    latency: LatencySeries,
}

impl Default for PlotRecorder {
    fn default() -> Self {
        Self {
            enabled: true,
            context: PlotContext::default(),
            deployments: BTreeMap::new(),
            attempts: [0; MAX_ATTEMPTS_COUNTED + 2],
            hops: BTreeMap::new(),
            latency: LatencySeries::default(),
        }
    }
}

/// The rest of what rendering needs, from the recorder's other state.
pub(crate) struct RenderInput<'a> {
    /// Run end, µs since the start.
    pub(crate) run_end_us: u64,
    /// The bytes of `timeseries.csv`.
    pub(crate) timeseries_csv: &'a [u8],
    /// End-to-end latency.
    pub(crate) latency: Distribution,
    /// Time to first token (empty without streams).
    pub(crate) ttft: Distribution,
    /// Attempts and ok attempts per deployment over time.
    pub(crate) served: &'a ServedSeries,
    /// The seconds each deployment failed most of its attempts (closed at the run end).
    pub(crate) failing: &'a FailingSeconds,
}

impl PlotRecorder {
    pub(crate) fn set_context(&mut self, context: PlotContext) {
        self.context = context;
    }

    fn history(&mut self, group: &Arc<str>, deployment: &Arc<str>) -> &mut History {
        self.deployments
            .entry(deployment.clone())
            .or_insert_with(|| History {
                group: group.clone(),
                ..History::default()
            })
    }

    /// `CooldownSet` at `at` with deadline `until`: ends a half-open period, opens or extends a
    /// cooldown.
    pub(crate) fn cooldown_set(&mut self, group: &Arc<str>, id: &Arc<str>, at: u64, until: u64) {
        let h = self.history(group, id);
        h.half_open.end(at);
        h.cooling.set(at, until);
    }

    /// `CooldownEnd`.
    pub(crate) fn cooldown_end(&mut self, id: &str, at: u64) {
        if let Some(h) = self.deployments.get_mut(id) {
            h.cooling.end(at);
        }
    }

    /// `HalfOpen`.
    pub(crate) fn half_open(&mut self, group: &Arc<str>, id: &Arc<str>, at: u64) {
        self.history(group, id).half_open.open_until_closed(at);
    }

    /// `Recovered`: ends both.
    pub(crate) fn recovered(&mut self, id: &str, at: u64) {
        if let Some(h) = self.deployments.get_mut(id) {
            h.half_open.end(at);
            h.cooling.end(at);
        }
    }

    /// A `Fallback` hop.
    pub(crate) fn fallback(&mut self, source: &Arc<str>, target: &Arc<str>) {
        *self
            .hops
            .entry((source.clone(), target.clone()))
            .or_default() += 1;
    }

    /// A `RequestEnd` with `attempts` provider attempts, in `second` after `latency_us`.
    pub(crate) fn request_end(&mut self, attempts: u32, second: u64, latency_us: u64) {
        let index = usize::try_from(attempts)
            .unwrap_or(usize::MAX)
            .min(MAX_ATTEMPTS_COUNTED + 1);
        self.attempts[index] = self.attempts[index].saturating_add(1);
        if self.enabled {
            self.latency.record(second, latency_us);
        }
    }

    /// Closes every open interval at the run end.
    fn finish(&mut self, run_end: u64) {
        for h in self.deployments.values_mut() {
            h.cooling.end(run_end);
            h.half_open.end(run_end);
        }
    }

    /// Every lane, in drawing order: the context's deployments grouped by model group (groups
    /// in order of first appearance), then deployments only the events named.
    fn lanes<'a>(&'a self, failing: &'a FailingSeconds) -> Vec<Lane<'a>> {
        let mut groups: Vec<&str> = Vec::new();
        for d in &self.context.deployments {
            if !groups.contains(&d.model_group.as_str()) {
                groups.push(&d.model_group);
            }
        }
        let mut lanes = Vec::new();
        let known = |id: &str| self.context.deployments.iter().any(|d| d.id == id);
        for group in &groups {
            for d in self
                .context
                .deployments
                .iter()
                .filter(|d| d.model_group == *group)
            {
                let history = self.deployments.get(d.id.as_str());
                lanes.push(Lane {
                    id: &d.id,
                    group,
                    cooling: history.map(|h| &h.cooling),
                    half_open: history.map(|h| &h.half_open),
                    failing: failing.of(&d.id),
                });
            }
        }
        // Deployments seen only in events, grouped by their group's name.
        let mut extra: Vec<(&str, &str, &History)> = self
            .deployments
            .iter()
            .filter(|(id, _)| !known(id))
            .map(|(id, h)| (&*h.group, &**id, h))
            .collect();
        extra.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
        for (group, id, h) in extra {
            lanes.push(Lane {
                id,
                group,
                cooling: Some(&h.cooling),
                half_open: Some(&h.half_open),
                failing: failing.of(id),
            });
        }
        lanes
    }

    /// Renders every plot into `dir`. Returns the first error (naming the file).
    pub(crate) fn render(mut self, dir: &Path, input: &RenderInput<'_>) -> Result<(), ReportError> {
        self.finish(input.run_end_us);
        let series = timeline::parse_series(input.timeseries_csv);
        let counts = AttemptCounts {
            by_attempts: &self.attempts,
            hops: &self.hops,
        };
        let lanes = self.lanes(input.failing);
        let plots: [(&str, Result<String, String>); 6] = [
            (
                DEPLOYMENTS_SVG,
                deployments::render(&lanes, &self.context.faults, input.run_end_us),
            ),
            (
                TIMELINE_SVG,
                timeline::render(&series, &self.context.faults, input.run_end_us),
            ),
            (
                TRAFFIC_SHARE_SVG,
                share::render(
                    input.served,
                    &self.context.deployments,
                    &self.context.faults,
                    input.run_end_us,
                ),
            ),
            (
                LATENCY_OVER_TIME_SVG,
                latency_time::render(&self.latency, &self.context.faults, input.run_end_us),
            ),
            (LATENCY_SVG, latency::render(&input.latency, &input.ttft)),
            (ATTEMPTS_SVG, attempts::render(&counts)),
        ];
        for (file, svg) in plots {
            let path = dir.join(file);
            let svg = svg.map_err(|e| ReportError::io(&path, std::io::Error::other(e)))?;
            std::fs::write(&path, svg).map_err(|e| ReportError::io(&path, e))?;
        }
        Ok(())
    }
}
