//! The live report: `live_requests.csv`, the engine's events through the same `Recorder` as a
//! simulation, and `summary.json` / `report.html` labelled live (the target, the wall-clock
//! start and duration, and every doubt [`super::checks`] found).

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use routersim_mock_providers::wire::CallRow;
use routersim_report::record::{Recorder, RecorderOptions, RunMeta};
use routersim_report::summary::Summary;
use routersim_report::{LiveInfo, PageTitle, ReportError, write_report_html};
use routersim_sim::run::{VERSION, plot_context};
use routersim_sim::scenario::Scenario;

use super::checks::{Checks, Seen, check};
use super::error::{DriveError, file_error};
use super::observe::Observed;
use super::options::DriveOptions;
use super::record::{LIVE_REQUESTS_CSV, write_live_requests};
use super::report;

/// Writes the report into `dir`; the summary and what the checks found.
pub fn write_report(
    scenario: &Scenario,
    options: &DriveOptions,
    observed: &Observed,
    calls: &[CallRow],
    dir: &Path,
) -> Result<(Summary, Checks), DriveError> {
    let start = observed.start;
    let path = dir.join(LIVE_REQUESTS_CSV);
    let file = std::fs::File::create(&path).map_err(|e| file_error(&path, e))?;
    write_live_requests(std::io::BufWriter::new(file), &observed.records)
        .map_err(|e| file_error(&path, e))?;
    let translated = report::events(
        scenario,
        start,
        &observed.records,
        &observed.unfinished,
        calls,
        observed.run_end,
    );
    let stats = translated.stats;
    let recorder = Recorder::new(dir, start, RecorderOptions::default())?
        .with_plot_context(plot_context(scenario))
        .with_summary_context(routersim_sim::run::summary_context(scenario))?;
    for event in &translated.events {
        routersim_engine::event::EventSink::emit(&recorder, event);
    }
    let end = translated
        .events
        .last()
        .map_or(start + observed.run_end, |e| {
            e.at.max(start + observed.run_end)
        });
    let mut summary = recorder.finish(RunMeta {
        scenario: scenario.name.clone(),
        seed: scenario.seed,
        version: VERSION.to_string(),
        end,
    })?;
    // With replicas, every URL in the order requests were dealt to them.
    let target = std::iter::once(options.target.as_str())
        .chain(options.replicas.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join(",");
    let calls_seen = observed.server.is_some();
    let mut checks = check(
        scenario,
        &Seen {
            target: &target,
            records: &observed.records,
            unfinished: observed.unfinished.len() as u64,
            calls,
            calls_of: &translated.calls_of,
            stats,
            calls_seen,
        },
    );
    if let Some(warning) = &observed.routes_warning {
        checks.warnings.insert(0, warning.clone());
    }
    summary.source = Some("live".to_string());
    summary.live = Some(live_info(options, observed, target, calls, stats, &checks));
    let path = dir.join(routersim_report::record::SUMMARY_JSON);
    let mut text = serde_json::to_string_pretty(&summary).map_err(|source| ReportError::Json {
        path: path.clone(),
        source,
    })?;
    text.push('\n');
    std::fs::write(&path, text).map_err(|e| file_error(&path, e))?;
    write_report_html(
        dir,
        &summary,
        &[],
        PageTitle {
            title: &scenario.name,
            description: &scenario.description,
        },
    )?;
    Ok((summary, checks))
}

/// `summary.json`'s `live`: the target, the wall clock, how the calls were joined, what the
/// checks found (the fatal one first among the warnings).
fn live_info(
    options: &DriveOptions,
    observed: &Observed,
    target: String,
    calls: &[CallRow],
    stats: report::JoinStats,
    checks: &Checks,
) -> LiveInfo {
    let mut warnings = checks.warnings.clone();
    if let Some(fatal) = &checks.fatal {
        warnings.insert(0, fatal.clone());
    }
    warnings.extend(load_generator_notes(observed));
    LiveInfo {
        target,
        target_name: observed.target_name.clone(),
        target_version: observed.target_version.clone(),
        providers: options
            .providers
            .clone()
            .unwrap_or_else(|| "in-process".to_string()),
        stopped_by: observed.stopped_by.to_string(),
        sent: observed.sent,
        unfinished: observed.unfinished.len() as u64,
        provider_calls: calls.len() as u64,
        joined_by_request_id: stats.by_request_id,
        joined_by_time: stats.by_time,
        inferred_cooldowns: stats.cooldowns,
        started_at: rfc3339_utc(observed.started_at),
        wall_clock_ms: (observed.run_end.as_secs_f64() * 1e6).round() / 1e3,
        provider_calls_seen: observed.server.is_some(),
        unjoined_calls: stats.unjoined,
        unjoined_calls_of_unfinished: stats.of_unfinished,
        unreached: checks.unreached,
        not_injected: checks.not_injected.clone(),
        foreign_deployments: checks.foreign.clone(),
        warnings,
        max_connections: observed.pool.budget as u64,
        connections_opened: observed.pool.opened,
        connection_waits: observed.pool.waited,
        max_connection_wait_ms: (observed.pool.max_wait.as_secs_f64() * 1e6).round() / 1e3,
        resent: observed.pool.resent,
        not_sent: observed.not_sent,
    }
}

/// What the load generator itself limited: requests the OS refused a socket, requests that
/// waited for one of drive's connections.
fn load_generator_notes(observed: &Observed) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(why) = &observed.refusal {
        notes.push(format!(
            "{} requests not sent: {}",
            observed.not_sent,
            super::load::refusal_note(why)
        ));
    }
    let pool = &observed.pool;
    if pool.waited > 0 {
        notes.push(format!(
            "{} requests waited for one of drive's {} connections (at most {:.1} ms): the load \
             generator's wait, not the target's; their latency counts from when they were sent \
             (raise --max-connections, within `ulimit -n` / 4)",
            pool.waited,
            pool.budget,
            pool.max_wait.as_secs_f64() * 1e3
        ));
    }
    notes
}

/// `2025-01-31T12:34:56.789Z`: a wall-clock instant in RFC 3339, UTC (days to a civil date
/// by Howard Hinnant's `civil_from_days`).
pub fn rfc3339_utc(at: SystemTime) -> String {
    let since = at.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs();
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rest = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rest / 3_600,
        rest / 60 % 60,
        rest % 60,
        since.subsec_millis()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn wall_clock_instants_read_as_rfc3339_utc() {
        assert_eq!(rfc3339_utc(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        // 2024-02-29T23:59:59.123Z (a leap day): 1709251199 s.
        let leap = UNIX_EPOCH + Duration::from_millis(1_709_251_199_123);
        assert_eq!(rfc3339_utc(leap), "2024-02-29T23:59:59.123Z");
    }
}
