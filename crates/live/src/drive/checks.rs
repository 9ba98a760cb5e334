//! What makes a live report doubtful, said with counts rather than left for a reader to find:
//! requests that never reached the router, failures the scenario did not inject, answers from
//! deployments the scenario does not have, provider calls joined to no request. Two of them
//! mean the run did not test the scenario at all ([`Checks::fatal`]): no request reached the
//! router, or the router answered without routing to the scenario's deployments.

use std::collections::{BTreeMap, BTreeSet};

use routersim_mock_providers::wire::CallRow;
use routersim_sim::scenario::Scenario;

use super::injected::producible;
use super::record::RequestRecord;
use super::report::JoinStats;

/// What the run's own evidence says about it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Checks {
    /// Requests whose connection failed before any answer.
    pub unreached: u64,
    /// Failed requests the scenario did not inject, by kind.
    pub not_injected: BTreeMap<String, u64>,
    /// Answers naming a deployment the scenario does not have, by id.
    pub foreign: BTreeMap<String, u64>,
    /// One sentence per doubt.
    pub warnings: Vec<String>,
    /// Why the run tested nothing of the scenario, when it did not.
    pub fatal: Option<String>,
}

/// What was seen, for [`check`].
#[derive(Clone, Copy, Debug)]
pub struct Seen<'a> {
    /// The router's URL (as given).
    pub target: &'a str,
    /// Every answered request.
    pub records: &'a [RequestRecord],
    /// Requests unanswered at the end.
    pub unfinished: u64,
    /// Every provider call (empty when not seen).
    pub calls: &'a [CallRow],
    /// Each record's joined calls.
    pub calls_of: &'a [Vec<usize>],
    /// How the calls were joined.
    pub stats: JoinStats,
    /// Whether drive saw the provider calls (its in-process providers).
    pub calls_seen: bool,
}

/// Whether the connection to the router failed before it answered anything.
fn unreached(record: &RequestRecord) -> bool {
    record.status.is_none()
        && record
            .transport_error
            .as_deref()
            .is_some_and(|e| e.starts_with("connect "))
}

/// The checks of one run.
pub fn check(scenario: &Scenario, seen: &Seen<'_>) -> Checks {
    let mut checks = Checks::default();
    let records = seen.records;
    let target = seen.target;
    let unreached_records: Vec<&RequestRecord> = records.iter().filter(|r| unreached(r)).collect();
    checks.unreached = unreached_records.len() as u64;
    if let Some(first) = unreached_records.first() {
        let why = first.transport_error.as_deref().unwrap_or("");
        if unreached_records.len() == records.len() {
            checks.fatal = Some(format!(
                "no request reached {target}: all {} connections failed (first: {why})",
                records.len()
            ));
        } else {
            checks.warnings.push(format!(
                "{} of {} requests never reached {target} (first: {why})",
                unreached_records.len(),
                records.len()
            ));
        }
    }
    let injectable = producible(scenario);
    for (r, record) in records.iter().enumerate() {
        let Some(kind) = record.failure() else {
            continue;
        };
        let calls = seen.calls_of.get(r).map_or(&[][..], Vec::as_slice);
        let all_calls_ok =
            !calls.is_empty() && calls.iter().all(|&c| seen.calls[c].outcome == "ok");
        if !unreached(record)
            && (!injectable.contains(kind.as_str()) || (seen.calls_seen && all_calls_ok))
        {
            *checks
                .not_injected
                .entry(kind.as_str().to_string())
                .or_default() += 1;
        }
    }
    if !checks.not_injected.is_empty() {
        let total: u64 = checks.not_injected.values().sum();
        checks.warnings.push(format!(
            "{total} failed requests the scenario did not inject ({}): {target} failed them on \
             its own (a provider it cannot reach, a timeout, a bug), not the scenario's faults",
            by_count(&checks.not_injected)
        ));
    }
    foreign_deployments(scenario, seen, &mut checks);
    if seen.calls_seen && seen.calls.is_empty() && records.iter().any(|r| r.status.is_some()) {
        checks.fatal.get_or_insert_with(|| {
            format!(
                "{target} answered without one call to the scenario's providers: it does not \
                 route to them (a router started from another config?)"
            )
        });
    }
    if !seen.calls_seen {
        checks.warnings.push(
            "the provider calls are not seen with --providers: attempts, retries and fallbacks \
             are not counted (`serve --out` has the calls; the router's own headers are in \
             live_requests.csv)"
                .to_string(),
        );
    }
    if seen.stats.unjoined > 0 {
        checks.warnings.push(format!(
            "{} provider calls joined no answered request ({} of requests unanswered at the \
             end): left out of the attempts",
            seen.stats.unjoined, seen.stats.of_unfinished
        ));
    }
    if seen.unfinished > 0 {
        checks.warnings.push(format!(
            "{} requests were still unanswered when the run ended: left out of the counts",
            seen.unfinished
        ));
    }
    checks
}

/// Answers whose `x-litellm-model-id` is not a deployment of the scenario; fatal when every
/// answer that names one names a foreign one.
fn foreign_deployments(scenario: &Scenario, seen: &Seen<'_>, checks: &mut Checks) {
    let ours: BTreeSet<&str> = scenario.router.deployments.iter().map(|d| &*d.id).collect();
    let named: Vec<&str> = seen
        .records
        .iter()
        .filter_map(|r| r.model_id.as_deref())
        .collect();
    for id in named.iter().filter(|id| !ours.contains(**id)) {
        *checks.foreign.entry((*id).to_string()).or_default() += 1;
    }
    if checks.foreign.is_empty() {
        return;
    }
    let total: u64 = checks.foreign.values().sum();
    let sentence = format!(
        "{total} answers came from deployments the scenario does not have ({}): {} is \
         running another config?",
        by_count(&checks.foreign),
        seen.target
    );
    if total == named.len() as u64 {
        checks.fatal.get_or_insert(format!(
            "{} does not route to the scenario's deployments: every answer came from others \
             ({})",
            seen.target,
            by_count(&checks.foreign)
        ));
    } else {
        checks.warnings.push(sentence);
    }
}

/// `a 3, b 1`.
fn by_count(map: &BTreeMap<String, u64>) -> String {
    map.iter()
        .map(|(k, n)| format!("{k} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}
