//! The assumptions an import states: what the log's format leaves out, where a fault was carried
//! through a stretch without calls, what was skipped. One line each, in the scenario's header
//! comment, in `imported/import.json` and on the terminal.

use crate::call::Scope;
use crate::faults::FoundFault;
use crate::format::{Format, ReadSummary};
use crate::survey::Survey;
use crate::traffic::seconds;

/// What the format leaves out.
pub fn format_notes(format: Format, survey: &Survey) -> Vec<String> {
    let mut notes = Vec::new();
    match format {
        Format::LitellmPayload => notes.push(
            "LiteLLM's standard logging payload has one row for a request's first failed attempt \
             and one for the attempt that answered: later failed attempts are not in the log, so \
             a failure rate is a lower bound where requests retried on the same deployment, and \
             attempts the log does not date are counted from the router's own headers \
             (x-litellm-attempted-retries, -fallbacks)"
                .to_string(),
        ),
        Format::SpendLogs => notes.push(
            "spend logs have one row per request, dated and attributed by its final attempt: \
             the attempts before it are counted (attempted_retries, attempted_fallbacks), never \
             dated, so a deployment's failures show only where a request ended in one"
                .to_string(),
        ),
        Format::Csv if survey.rows.unkeyed > 0 => notes.push(format!(
            "{} rows have no request_id: each is a request of its own (retries and fallbacks \
             of those requests are not joined)",
            survey.rows.unkeyed
        )),
        Format::Csv => {}
    }
    if matches!(format, Format::LitellmPayload | Format::SpendLogs) || survey.rows.attempts > 0 {
        notes.push(
            "a request's arrival is its first row's start: the router's own time before its first \
             provider call is not in the log"
                .to_string(),
        );
    }
    if survey.rows.no_deployment > 0 {
        notes.push(format!(
            "{} rows say the router found every deployment of a group cooling (no provider was \
             called): all_cooled events in the report, not provider failures",
            survey.rows.no_deployment
        ));
    }
    notes
}

/// The attempts a request made in the groups it fell back from, which LiteLLM's logs leave
/// out: its payload dates a request's first failure and its answer, and both its header
/// (`x-litellm-attempted-retries`) and the spend logs' `attempted_retries` count the last
/// group's retries only. A gateway CSV has a row per attempt and needs no note.
pub fn fallback_note(format: Format, fell_back: u64) -> Option<String> {
    (fell_back > 0 && format != Format::Csv).then(|| {
        format!(
            "{fell_back} requests fell back to another group: the retries they made in the \
             groups they left are neither rows of the log nor in LiteLLM's counts (which count \
             the last group's retries), so the imported report's attempts and retries are short \
             by them; the replay's follow the router config"
        )
    })
}

/// What reading skipped.
pub fn read_notes(read: &ReadSummary, late: u64) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(line) = read.cut_last_line {
        notes.push(format!(
            "line {line}, the last, is cut short (a log still being written?): skipped"
        ));
    }
    if !read.ignored_columns.is_empty() {
        notes.push(format!(
            "columns not read: {}",
            read.ignored_columns.join(", ")
        ));
    }
    if read.rows > read.kept {
        notes.push(format!(
            "{} of {} rows left out by --since, --until or --model-group",
            read.rows - read.kept,
            read.rows
        ));
    }
    if late > 0 {
        notes.push(format!(
            "{late} rows came later than the requests around them by more than the log's \
             disorder: each is a request of its own, placed with the requests already written"
        ));
    }
    notes
}

/// What each window rests on.
pub fn fault_notes(faults: &[FoundFault], t0: f64) -> Vec<String> {
    let mut notes = Vec::new();
    for f in faults {
        let what = format!("{} {}", f.deployment, f.kind.name());
        if f.unobserved > 0.0 {
            notes.push(format!(
                "{what}: {} of the window from {} had no call to it (cooling, or no traffic): its \
                 health then is unknown, assumed failing; the window ends halfway between its last \
                 failure and the next observed success{}",
                seconds(f.unobserved),
                seconds(f.from - t0),
                f.healthy_at
                    .map(|ok| format!(" (at {})", seconds(ok - t0)))
                    .unwrap_or_default()
            ));
        }
        if f.to.is_none() && !f.background {
            notes.push(format!(
                "{what}: no success after its last failure: the window lasts to the end of the log"
            ));
        }
    }
    if faults.is_empty() {
        notes.push("no fault windows: no deployment's failure rate changed in the log".to_string());
    }
    notes
}

/// A scope's name, for the summary.
pub fn scope_name(scope: Scope) -> &'static str {
    match scope {
        Scope::Attempt => "provider call",
        Scope::FirstFailure => "first failed attempt",
        Scope::Final => "answering attempt",
        Scope::Request => "request",
    }
}
