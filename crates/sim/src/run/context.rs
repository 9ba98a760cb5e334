//! What the recorder is told before the run: the rules the router follows, every deployment,
//! and the windows to aggregate and draw (fault windows, `expect` windows).
//!
//! Separate because it is a pure function of the scenario, also used by `routersim drive`
//! (routersim-live) to describe its real-time run the same way.

use routersim_engine::config::Profile;
use routersim_mock_providers::FaultSpec;
use routersim_mock_providers::duration::format_duration;
use routersim_mock_providers::spec::{FaultEffect, FaultTarget, LatencySpec, StreamFault};
use routersim_report::record::SummaryContext;
use routersim_report::summary::RouterProfile;
use routersim_report::windows::TimeWindow;
use routersim_report::{DeploymentLane, FaultWindow, PlotContext};

use crate::expect;
use crate::scenario::Scenario;

/// What `summary.json` says about the rules the router followed: the profile (`litellm` when
/// none is set: the defaults are its rules) and the LiteLLM release it reproduces, if any.
pub fn router_profile(profile: Option<Profile>) -> RouterProfile {
    let profile = profile.unwrap_or(Profile::LiteLlm);
    let litellm_version = profile.litellm_version();
    let rules = profile.rules().to_string();
    RouterProfile {
        name: profile.as_str().to_string(),
        litellm_version: litellm_version.map(str::to_string),
        rules,
    }
}

/// Every deployment and the windows `summary.json` aggregates: each fault window (labelled as
/// the plots label it) and each `expect` line's `window`.
pub fn summary_context(scenario: &Scenario) -> SummaryContext {
    let plots = plot_context(scenario);
    SummaryContext {
        deployments: plots.deployments.into_iter().map(|d| d.id).collect(),
        fault_windows: plots
            .faults
            .into_iter()
            .map(|f| {
                (
                    f.label,
                    TimeWindow {
                        from: f.from,
                        to: f.to,
                    },
                )
            })
            .collect(),
        scoped_windows: expect::scoped_windows(&scenario.expect),
    }
}

/// Every deployment (lanes, in `model_list` order) and every fault window, for the plots.
pub fn plot_context(scenario: &Scenario) -> PlotContext {
    let deployments: Vec<DeploymentLane> = scenario
        .router
        .deployments
        .iter()
        .map(|d| DeploymentLane {
            id: d.id.to_string(),
            model_group: d.model_name.to_string(),
        })
        .collect();
    let faults = scenario
        .faults
        .iter()
        .map(|fault| {
            let (target, ids) = match &fault.target {
                FaultTarget::Deployment(id) => (id.clone(), vec![id.clone()]),
                FaultTarget::ModelGroup(group) => (
                    format!("{group} (all)"),
                    deployments
                        .iter()
                        .filter(|d| d.model_group == *group)
                        .map(|d| d.id.clone())
                        .collect(),
                ),
            };
            FaultWindow {
                label: format!("{target}: {}", fault_label(fault)),
                detail: fault_detail(fault),
                deployments: ids,
                from: fault.from,
                to: fault.to,
            }
        })
        .collect();
    PlotContext {
        deployments,
        faults,
    }
}

/// What a fault does, briefly: `rate_limit 90%`, `slow p50 5s`, `stream_break`.
fn fault_label(fault: &FaultSpec) -> String {
    let what = match &fault.effect {
        FaultEffect::Error(e) => match e.status {
            Some(status) => format!("{} {status}", e.kind),
            None => e.kind.to_string(),
        },
        FaultEffect::Slowdown(latency) => match latency {
            LatencySpec::Fixed(d) => format!("slow {}", format_duration(*d)),
            LatencySpec::LogNormal { p50, .. } => format!("slow p50 {}", format_duration(*p50)),
            LatencySpec::Uniform { min, max } => {
                format!("slow {}-{}", format_duration(*min), format_duration(*max))
            }
        },
        FaultEffect::Stream(stream) => match stream {
            StreamFault::Break { .. } => "stream_break",
            StreamFault::ErrorFrame { .. } => "stream_error_frame",
            StreamFault::Truncated { .. } => "stream_truncated",
            StreamFault::Stall { .. } => "stream_stall",
            StreamFault::Empty(_) => "stream_empty",
            StreamFault::NoFinish(_) => "stream_no_finish",
        }
        .to_string(),
        FaultEffect::InvalidResponse(defect) => format!("invalid {}", defect.as_str()),
    };
    if fault.probability < 1.0 {
        let pct = format!("{:.2}", fault.probability * 100.0);
        let pct = pct.trim_end_matches('0').trim_end_matches('.');
        format!("{what} {pct}%")
    } else {
        what
    }
}

/// What the plots add after a fault's label: the `Retry-After` an error sends and the time
/// range, e.g. `Retry-After 5s, 2m–12m` (the label already says the probability).
fn fault_detail(fault: &FaultSpec) -> String {
    let to = fault.to.map_or_else(|| "end".to_string(), format_duration);
    let range = format!("{}–{to}", format_duration(fault.from));
    match &fault.effect {
        FaultEffect::Error(e) => match e.retry_after {
            Some(after) => format!("Retry-After {}, {range}", format_duration(after)),
            None => range,
        },
        _ => range,
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::scenario::ScenarioError;

    #[test]
    fn plot_fault_labels_say_retry_after_probability_and_range() -> Result<(), ScenarioError> {
        let yaml = r"name: labels
duration: 15m
router:
  model_list:
    - {model_name: gpt-4o, litellm_params: {model: azure/east}, model_info: {id: azure-east}}
providers:
  azure-east: {latency: {p50: 700ms, p99: 3s}}
faults:
  - {deployment: azure-east, from: 2m, to: 12m, error: rate_limit, status: 429, probability: 0.8, retry_after: 5s}
  - {deployment: azure-east, from: 13m, error: timeout}
traffic:
  - {model: gpt-4o, rate: 1/s}
";
        let scenario = crate::scenario::parse_scenario(yaml, Path::new("<test>"))?;
        let faults = plot_context(&scenario).faults;
        // The label (also `summary.json`'s window name) is unchanged; the detail is the plots'.
        assert_eq!(faults[0].label, "azure-east: rate_limit 429 80%");
        assert_eq!(faults[0].detail, "Retry-After 5s, 2m–12m");
        assert_eq!(faults[1].label, "azure-east: timeout");
        assert_eq!(faults[1].detail, "13m–end");
        let summary = summary_context(&scenario);
        assert_eq!(summary.fault_windows[0].0, "azure-east: rate_limit 429 80%");
        Ok(())
    }
}
