//! The end of a run: flushing the traces, writing `timeseries.csv`, the `.hgrm` files,
//! `summary.json` and the plots, and computing the [`Summary`] from the folded state.
//!
//! Separate from `events` because it runs once, at `finish`, and owns the histogram
//! helpers the summary's percentiles are read with.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use hdrhistogram::Histogram;
use routersim_engine::contract::{FilterReason, ValidationReason};
use routersim_engine::stream::StreamOutcome;

use super::{
    INTER_TOKEN_HGRM, LATENCY_HGRM, RunMeta, SUMMARY_JSON, State, TIMESERIES_CSV, TTFT_HGRM,
    replicas,
};
use crate::error::ReportError;
use crate::hgrm::write_hgrm;
use crate::plot::Distribution;
use crate::plot::collect::RenderInput;
use crate::streams::{BREAKS, OUTCOMES, break_index, outcome_index};
use crate::summary::{
    AttemptStats, ContractSummary, CooldownStats, DeploymentCooldownStats, DeploymentHalfOpenStats,
    HalfOpenStats, InterTokenStats, LatencyStats, NO_ROUTE, RouteLatencyStats, RouterProfile,
    RoutingMetrics, StreamSummary, Summary, TtftStats,
};
use crate::units::{ms_f64, round6};

/// Every histogram is recorded in microseconds; the report prints milliseconds.
const MICROS_PER_MS: f64 = 1000.0;
/// Significant digits of every histogram.
const HISTOGRAM_SIGFIG: u8 = 3;

/// An empty histogram of microseconds that grows as needed.
pub(super) fn new_histogram() -> Result<Histogram<u64>, ReportError> {
    Histogram::new(HISTOGRAM_SIGFIG).map_err(|e| ReportError::Histogram(e.to_string()))
}

/// Records `count` samples of `us`. `record_n` grows the (auto-resizing) histogram;
/// `saturating_record_n` would clamp instead, so it is only the fallback.
pub(super) fn record_us(hist: &mut Histogram<u64>, us: u64, count: u64) {
    if hist.record_n(us, count).is_err() {
        hist.saturating_record_n(us, count);
    }
}

/// A percentile in ms. Percentiles are bucket-highest values; cap them at the exact maximum.
pub(super) fn percentile_ms(hist: &Histogram<u64>, q: f64, max_us: u64) -> f64 {
    if hist.is_empty() {
        0.0
    } else {
        ms_f64(hist.value_at_quantile(q).min(max_us))
    }
}

impl State {
    /// `summary.json`'s `contract` section: under `profile: contract`, or when a contract
    /// event was seen.
    fn contract_summary(&self) -> Option<ContractSummary> {
        let agg = &self.agg;
        let seen = agg
            .routes_filtered
            .iter()
            .chain(&agg.validation_rejections)
            .any(|&n| n > 0);
        let contract_profile = self
            .router_profile
            .as_ref()
            .is_some_and(|p| p.name == "contract");
        if !seen && !contract_profile {
            return None;
        }
        let share = |part: u64, whole: u64| {
            if whole == 0 {
                0.0
            } else {
                round6(part as f64 / whole as f64)
            }
        };
        let rejected: u64 = agg.validation_rejections.iter().sum();
        Some(ContractSummary {
            http_success_rate: share(agg.http_ok, agg.requests),
            accepted_rate: share(agg.ok, agg.requests),
            validation_rejection_rate: share(rejected, agg.http_ok_attempts),
            validation_rejections: ValidationReason::ALL
                .iter()
                .zip(agg.validation_rejections)
                .map(|(r, n)| (r.as_str().to_string(), n))
                .collect(),
            routes_filtered: FilterReason::ALL
                .iter()
                .zip(agg.routes_filtered)
                .map(|(r, n)| (r.as_str().to_string(), n))
                .collect(),
        })
    }

    pub(super) fn finish(mut self, meta: RunMeta) -> Result<Summary, ReportError> {
        let traces = [&mut self.requests, &mut self.attempts, &mut self.events];
        for csv in traces.into_iter().flatten() {
            if let Err(e) = csv.out.flush() {
                self.error.get_or_insert(ReportError::io(&csv.path, e));
            }
        }
        if let Some(jsonl) = self.routing.as_mut()
            && let Err(e) = jsonl.out.flush()
        {
            self.error.get_or_insert(ReportError::io(&jsonl.path, e));
        }
        // A run end before the last event would be a caller's slip; never end before it.
        let run_end = self.us(meta.end).max(self.agg.last_event_us);
        self.per_deployment.finish(run_end, &mut self.error);
        self.latency_intervals
            .finish(&mut self.series, &mut self.error);
        if let Some(error) = self.error.take() {
            return Err(error);
        }
        for d in self
            .cooldowns
            .values_mut()
            .chain(self.half_open.values_mut())
        {
            d.finish(run_end, &mut self.series);
        }

        let path = self.dir.join(TIMESERIES_CSV);
        // Kept in memory too: the timeline plot draws exactly these rows (its size follows the
        // activity: long runs leave quiet seconds out).
        let mut timeseries_csv = Vec::new();
        self.series
            .write_csv(&mut timeseries_csv)
            .map_err(|e| ReportError::io(&path, e))?;
        write_file(&path, |w| w.write_all(&timeseries_csv))?;
        for (file, hist) in [
            (LATENCY_HGRM, &self.latency),
            (TTFT_HGRM, &self.ttft),
            (INTER_TOKEN_HGRM, &self.inter_token),
        ] {
            let path = self.dir.join(file);
            write_file(&path, |w| write_hgrm(hist, MICROS_PER_MS, w))?;
        }

        let summary = self.summary(meta, run_end);
        let path = self.dir.join(SUMMARY_JSON);
        let file = File::create(&path).map_err(|e| ReportError::io(&path, e))?;
        let mut w = BufWriter::new(file);
        serde_json::to_writer_pretty(&mut w, &summary).map_err(|source| ReportError::Json {
            path: path.clone(),
            source,
        })?;
        w.write_all(b"\n")
            .and_then(|()| w.flush())
            .map_err(|e| ReportError::io(&path, e))?;
        write_file(&self.dir.join(crate::prom::METRICS_PROM), |w| {
            crate::prom::write_prom(&summary, &self.latency, self.agg.latency_sum_us, w)
        })?;

        let plots = std::mem::take(&mut self.plots);
        if plots.enabled {
            let input = RenderInput {
                run_end_us: run_end,
                timeseries_csv: &timeseries_csv,
                latency: Distribution::from_histogram(
                    &self.latency,
                    self.agg.latency_max_us,
                    vec![
                        ("p50", summary.latency_ms.p50, 0.5),
                        ("p90", summary.latency_ms.p90, 0.9),
                        ("p99", summary.latency_ms.p99, 0.99),
                        ("p99.9", summary.latency_ms.p99_9, 0.999),
                    ],
                ),
                ttft: Distribution::from_histogram(
                    &self.ttft,
                    self.agg.ttft_max_us,
                    vec![
                        ("p50", summary.streams.ttft_ms.p50, 0.5),
                        ("p90", summary.streams.ttft_ms.p90, 0.9),
                        ("p99", summary.streams.ttft_ms.p99, 0.99),
                    ],
                ),
                share: &self.per_deployment.share,
            };
            plots.render(&self.dir, &input)?;
        }
        Ok(summary)
    }

    pub(super) fn summary(&self, meta: RunMeta, run_end: u64) -> Summary {
        let agg = &self.agg;
        let requests = agg.requests;
        let rate = |n: u64| {
            if requests == 0 {
                0.0
            } else {
                round6(n as f64 / requests as f64)
            }
        };
        let pct = |q: f64| percentile_ms(&self.latency, q, agg.latency_max_us);
        let mean_ms = if requests == 0 {
            0.0
        } else {
            round6(agg.latency_sum_us as f64 / requests as f64 / 1000.0)
        };
        // Every deployment named before the run, with zeros where nothing happened to it.
        let zero_cooldowns = || DeploymentCooldownStats {
            count: 0,
            sets: 0,
            periods: 0,
            total_cooled_ms: 0.0,
        };
        let mut by_deployment: BTreeMap<String, DeploymentCooldownStats> = self
            .windows
            .deployments
            .iter()
            .map(|id| (id.to_string(), zero_cooldowns()))
            .collect();
        for (id, d) in &self.cooldowns {
            by_deployment.insert(
                id.to_string(),
                DeploymentCooldownStats {
                    count: d.count,
                    sets: d.count,
                    periods: d.periods,
                    total_cooled_ms: ms_f64(d.cooled_us),
                },
            );
        }
        let mut half_open_by_deployment: BTreeMap<String, DeploymentHalfOpenStats> = self
            .windows
            .deployments
            .iter()
            .map(|id| (id.to_string(), DeploymentHalfOpenStats::default()))
            .collect();
        for (id, h) in &self.half_open {
            half_open_by_deployment.insert(
                id.to_string(),
                DeploymentHalfOpenStats {
                    count: h.count,
                    total_half_open_ms: ms_f64(h.cooled_us),
                },
            );
        }
        let alternatives = agg.alternatives.clone().map(|mut a| {
            for id in &self.windows.deployments {
                a.ejections_by_deployment.entry(id.to_string()).or_insert(0);
            }
            a
        });
        let cooled_us_total = self
            .cooldowns
            .values()
            .fold(0_u64, |sum, d| sum.saturating_add(d.cooled_us));
        let failed: u64 = agg.failed_by_kind.values().sum();
        Summary {
            scenario: meta.scenario,
            seed: meta.seed,
            routersim_version: meta.version,
            router_profile: self.router_profile.clone(),
            transport: self.transport.clone(),
            requests,
            ok: agg.ok,
            failed,
            failed_by_kind: agg
                .failed_by_kind
                .iter()
                .map(|(k, n)| ((*k).to_string(), *n))
                .collect(),
            fallback_rate: rate(agg.with_fallback),
            retry_rate: rate(agg.with_retry),
            retries: agg.retries,
            fallbacks: agg.fallbacks,
            attempted_fallbacks: agg.attempted_differs.then_some(agg.attempted_fallbacks),
            attempts: agg.attempts,
            attempts_per_request: AttemptStats {
                mean: rate(agg.attempts),
                max: agg.attempts_max,
            },
            latency_ms: LatencyStats {
                p50: pct(0.5),
                p90: pct(0.9),
                p99: pct(0.99),
                p99_9: pct(0.999),
                max: ms_f64(agg.latency_max_us),
                mean: mean_ms,
            },
            cooldowns: CooldownStats {
                total: agg.cooldowns,
                sets: agg.cooldowns,
                periods: self.cooldowns.values().map(|d| d.periods).sum(),
                cooled_ms_total: ms_f64(cooled_us_total),
                by_deployment,
            },
            all_cooled: agg.all_cooled,
            half_open: HalfOpenStats {
                total: self.half_open.values().map(|h| h.count).sum(),
                half_open_ms_total: ms_f64(
                    self.half_open
                        .values()
                        .fold(0_u64, |sum, h| sum.saturating_add(h.cooled_us)),
                ),
                recovered: agg.recovered,
                probe_failed: agg.probe_failed,
                by_deployment: half_open_by_deployment,
            },
            contract: self.contract_summary(),
            streams: self.stream_summary(),
            stream_breaks: BREAKS
                .iter()
                .map(|how| {
                    (
                        how.as_str().to_string(),
                        agg.stream_breaks[break_index(*how)],
                    )
                })
                .collect(),
            duration_ms: ms_f64(agg.last_event_us),
            run_end_ms: ms_f64(run_end),
            windows: self.windows.fault_summaries(),
            expect_windows: self.windows.scoped_summaries(),
            events: agg.events.iter().fold(BTreeMap::new(), |mut map, (k, n)| {
                *map.entry((*k).to_string()).or_insert(0) += *n;
                map
            }),
            alternatives,
            routing: self.routing_metrics(),
            source: None,
            live: None,
            by_replica: self.fleet.as_ref().map(replicas::ReplicaFold::summary),
        }
    }

    /// The reliability metrics of `summary.json` (see [`RoutingMetrics`]).
    fn routing_metrics(&self) -> Option<RoutingMetrics> {
        let agg = &self.agg;
        let share = |n: u64, of: u64| {
            if of == 0 {
                0.0
            } else {
                round6(n as f64 / of as f64)
            }
        };
        let metrics = RoutingMetrics {
            deadline_exhausted: agg.deadline_exhausted,
            deadline_exhaustion_rate: share(agg.deadline_exhausted, agg.requests),
            attempts_per_completed_request: share(agg.ok_attempts, agg.ok),
            ambiguous_outcomes: agg.ambiguous_outcomes,
            ambiguous_replays: agg.ambiguous_replays,
            duplicate_executions: agg.duplicate_executions,
            client_retries: agg.client_retries,
            cost_per_accepted_response: (agg.priced_responses > 0)
                .then(|| round9(agg.accepted_cost_usd / agg.ok.max(1) as f64)),
            user_requests: agg.requests - agg.client_retries.min(agg.requests),
            provider_calls_per_user_request: AttemptStats {
                mean: share(
                    agg.attempts,
                    agg.requests - agg.client_retries.min(agg.requests),
                ),
                max: agg.user_calls_max,
            },
            latency_by_final_route: self
                .windows
                .deployments
                .iter()
                .map(|id| (id.to_string(), RouteLatencyStats::default()))
                .chain(self.routes.iter().map(|(id, r)| {
                    let name = if id.is_empty() { NO_ROUTE } else { id };
                    (
                        name.to_string(),
                        RouteLatencyStats {
                            count: r.count,
                            p50: percentile_ms(&r.hist, 0.5, r.max_us),
                            p99: percentile_ms(&r.hist, 0.99, r.max_us),
                        },
                    )
                }))
                .collect(),
        };
        let shown = self
            .router_profile
            .as_ref()
            .is_none_or(RouterProfile::reports_routing_metrics)
            || metrics.says_something_new();
        shown.then_some(metrics)
    }
}
impl State {
    fn stream_summary(&self) -> StreamSummary {
        let agg = &self.agg;
        let count = |o: StreamOutcome| agg.stream_outcomes[outcome_index(o)];
        let continued = count(StreamOutcome::Continued);
        let rescuable = continued + count(StreamOutcome::BrokenAfterContent);
        let continuation_rate = if rescuable == 0 {
            0.0
        } else {
            round6(continued as f64 / rescuable as f64)
        };
        StreamSummary {
            requests: agg.streamed,
            outcomes: OUTCOMES
                .iter()
                .map(|o| (o.as_str().to_string(), count(*o)))
                .collect(),
            continuation_rate,
            tokens_delivered: agg.tokens_delivered,
            tokens_billed: agg.tokens_billed,
            ttft_ms: TtftStats {
                p50: percentile_ms(&self.ttft, 0.5, agg.ttft_max_us),
                p90: percentile_ms(&self.ttft, 0.9, agg.ttft_max_us),
                p99: percentile_ms(&self.ttft, 0.99, agg.ttft_max_us),
                max: ms_f64(agg.ttft_max_us),
            },
            inter_token_ms: InterTokenStats {
                p50: percentile_ms(&self.inter_token, 0.5, agg.inter_token_max_us),
                p99: percentile_ms(&self.inter_token, 0.99, agg.inter_token_max_us),
                max: ms_f64(agg.inter_token_max_us),
            },
        }
    }
}

/// USD per response are small: 9 decimals (a nano-dollar), not the summary's usual 6.
fn round9(x: f64) -> f64 {
    (x * 1e9).round() / 1e9
}

/// Creates `path`, lets `write` fill it through a buffer, and flushes; errors name the file.
fn write_file(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<File>) -> std::io::Result<()>,
) -> Result<(), ReportError> {
    let file = File::create(path).map_err(|e| ReportError::io(path, e))?;
    let mut w = BufWriter::new(file);
    write(&mut w)
        .and_then(|()| w.flush())
        .map_err(|e| ReportError::io(path, e))
}
