//! The [`Summary`] of a finished run, computed from the folded state: counters become rates,
//! histograms become percentiles, and every deployment named before the run gets its zeros.
//!
//! Separate from `finish` (the writing) and from the per-event folding: this runs once and
//! only reads the state.

use std::collections::BTreeMap;

use routersim_engine::event::{FilterReason, ValidationReason};
use routersim_engine::stream::StreamOutcome;

use super::histogram::percentile_ms;
use super::recorder::RunMeta;
use super::state::State;
use crate::streams::{BREAKS, OUTCOMES, break_index, outcome_index};
use crate::summary::{
    AlternativesSummary, AttemptStats, ContractSummary, CooldownStats, DeploymentCooldownStats,
    DeploymentHalfOpenStats, HalfOpenStats, InterTokenStats, LatencyStats, NO_ROUTE,
    RouteLatencyStats, RouterProfile, RoutingMetrics, StreamSummary, Summary, TtftStats,
};
use crate::units::{ms_f64, round6};

/// `part ÷ whole`, rounded to 6 decimals (0 when `whole` is 0).
fn share(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        round6(part as f64 / whole as f64)
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

    pub(super) fn summary(&self, meta: RunMeta, run_end: u64) -> Summary {
        let agg = &self.agg;
        let requests = agg.requests;
        Summary {
            scenario: meta.scenario,
            seed: meta.seed,
            routersim_version: meta.version,
            router_profile: self.router_profile.clone(),
            transport: self.transport.clone(),
            requests,
            ok: agg.ok,
            failed: agg.failed_by_kind.values().sum(),
            failed_by_kind: agg
                .failed_by_kind
                .iter()
                .map(|(k, n)| ((*k).to_string(), *n))
                .collect(),
            fallback_rate: share(agg.with_fallback, requests),
            retry_rate: share(agg.with_retry, requests),
            retries: agg.retries,
            fallbacks: agg.fallbacks,
            attempted_fallbacks: agg.attempted_differs.then_some(agg.attempted_fallbacks),
            attempts: agg.attempts,
            attempts_per_request: AttemptStats {
                mean: share(agg.attempts, requests),
                max: agg.attempts_max,
            },
            latency_ms: self.latency_stats(),
            cooldowns: self.cooldown_stats(),
            all_cooled: agg.all_cooled,
            half_open: self.half_open_stats(),
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
            alternatives: self.alternatives_summary(),
            routing: self.routing_metrics(),
            source: None,
            live: None,
            by_replica: self.fleet.as_ref().map(|f| f.summary()),
        }
    }

    /// End-to-end latency: percentiles from the histogram, maximum and mean exact.
    fn latency_stats(&self) -> LatencyStats {
        let agg = &self.agg;
        let pct = |q: f64| percentile_ms(&self.latency, q, agg.latency_max_us);
        let mean = if agg.requests == 0 {
            0.0
        } else {
            round6(agg.latency_sum_us as f64 / agg.requests as f64 / 1000.0)
        };
        LatencyStats {
            p50: pct(0.5),
            p90: pct(0.9),
            p99: pct(0.99),
            p99_9: pct(0.999),
            max: ms_f64(agg.latency_max_us),
            mean,
        }
    }

    /// Cooldowns, with every deployment named before the run (zeros where none cooled).
    fn cooldown_stats(&self) -> CooldownStats {
        let zero = || DeploymentCooldownStats {
            count: 0,
            sets: 0,
            periods: 0,
            total_cooled_ms: 0.0,
        };
        let mut by_deployment: BTreeMap<String, DeploymentCooldownStats> = self
            .windows
            .deployments
            .iter()
            .map(|id| (id.to_string(), zero()))
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
        let cooled_us_total = self
            .cooldowns
            .values()
            .fold(0_u64, |sum, d| sum.saturating_add(d.cooled_us));
        CooldownStats {
            total: self.agg.cooldowns,
            sets: self.agg.cooldowns,
            periods: self.cooldowns.values().map(|d| d.periods).sum(),
            cooled_ms_total: ms_f64(cooled_us_total),
            by_deployment,
        }
    }

    /// Half-open periods, with every deployment named before the run.
    fn half_open_stats(&self) -> HalfOpenStats {
        let mut by_deployment: BTreeMap<String, DeploymentHalfOpenStats> = self
            .windows
            .deployments
            .iter()
            .map(|id| (id.to_string(), DeploymentHalfOpenStats::default()))
            .collect();
        for (id, h) in &self.half_open {
            by_deployment.insert(
                id.to_string(),
                DeploymentHalfOpenStats {
                    count: h.count,
                    total_half_open_ms: ms_f64(h.cooled_us),
                },
            );
        }
        HalfOpenStats {
            total: self.half_open.values().map(|h| h.count).sum(),
            half_open_ms_total: ms_f64(
                self.half_open
                    .values()
                    .fold(0_u64, |sum, h| sum.saturating_add(h.cooled_us)),
            ),
            recovered: self.agg.recovered,
            probe_failed: self.agg.probe_failed,
            by_deployment,
        }
    }

    /// What the alternatives did, once one acted, with every deployment's ejections.
    fn alternatives_summary(&self) -> Option<AlternativesSummary> {
        self.agg.alternatives.clone().map(|mut a| {
            for id in &self.windows.deployments {
                a.ejections_by_deployment.entry(id.to_string()).or_insert(0);
            }
            a
        })
    }

    /// The reliability metrics of `summary.json` (see [`RoutingMetrics`]).
    fn routing_metrics(&self) -> Option<RoutingMetrics> {
        let agg = &self.agg;
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
