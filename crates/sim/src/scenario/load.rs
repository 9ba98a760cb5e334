//! Reading a scenario: the entry points (`load_scenario`, `parse_scenario`, their `_with_set`
//! forms) and the second parsing phase, which turns the file as written ([`RawScenario`])
//! into a [`Scenario`] one section at a time: duration and epoch, router, providers and
//! faults, contracts, traffic, traffic file, expect, golden, name.
//!
//! The larger sections are checked in their own files (`router`, `contracts`, `traffic`,
//! `expectations`, `golden`), the one-key ones here. The order is this file's job, and it
//! matters: the first mistake found is the one reported.

use std::path::Path;
use std::time::Duration;

use routersim_config::input::read_text_file;
use routersim_engine::retry_after::parse_rfc3339_utc;
use routersim_mock_providers::duration::HumanDuration;
use routersim_mock_providers::spec::FaultEffect;
use routersim_mock_providers::{FaultSpec, validate_targets};
use serde_json::{Map, Value};

use super::contracts::validate_contracts;
use super::ctx::Ctx;
use super::error::ScenarioError;
use super::expectations::validate_expect;
use super::golden::validate_golden;
use super::raw::RawScenario;
use super::router::{RouterSection, router_section};
use super::traffic::{validate_traffic_file, validate_traffic_section};
use super::validated::{DEFAULT_EPOCH, Scenario};
use crate::traffic::check_in_flight;
use crate::transport::Transport;
use crate::yaml;

/// Reads and validates a scenario file.
pub fn load_scenario(path: &Path) -> Result<Scenario, ScenarioError> {
    let text = read_scenario_text(path)?;
    parse_scenario(&text, path)
}

/// Reads a scenario file's text (at most
/// [`MAX_INPUT_FILE_BYTES`](routersim_config::input::MAX_INPUT_FILE_BYTES)).
pub fn read_scenario_text(path: &Path) -> Result<String, ScenarioError> {
    read_text_file(path).map_err(|e| ScenarioError {
        file: path.to_path_buf(),
        line: None,
        column: None,
        path: String::new(),
        message: format!("cannot read the file: {e}"),
    })
}

/// Parses and validates scenario text; `file` names it in errors and anchors `router_file`.
pub fn parse_scenario(text: &str, file: &Path) -> Result<Scenario, ScenarioError> {
    parse_with_extra_set(text, file, &[])
}

/// Reads a scenario file and applies `extra` `set` entries after the file's own (see
/// [`parse_scenario_with_set`]).
pub fn load_scenario_with_set(
    path: &Path,
    extra: &[(String, Value)],
) -> Result<Scenario, ScenarioError> {
    let text = read_scenario_text(path)?;
    parse_scenario_with_set(&text, path, extra)
}

/// [`parse_scenario`] with `extra` `set` entries (path, value) applied after the file's own
/// `set`, in order, as if appended to it (a later entry wins): `routersim sweep --set`.
///
/// The file is first validated on its own, so its own mistakes keep their line and column. A
/// mistake of an extra entry (a path that does not fit the router config, a value the engine
/// rejects) is reported at `set.<path>` without a line or column (it is not in the file);
/// [`Scenario::set`] lists the file's entries, then the extra ones.
pub fn parse_scenario_with_set(
    text: &str,
    file: &Path,
    extra: &[(String, Value)],
) -> Result<Scenario, ScenarioError> {
    if extra.is_empty() {
        return parse_scenario(text, file);
    }
    parse_scenario(text, file)?;
    parse_with_extra_set(text, file, extra).map_err(|mut e| {
        let from_extra = e
            .path
            .strip_prefix("set.")
            .is_some_and(|key| extra.iter().any(|(k, _)| k == key));
        if from_extra {
            e.line = None;
            e.column = None;
        }
        e
    })
}

fn parse_with_extra_set(
    text: &str,
    file: &Path,
    extra: &[(String, Value)],
) -> Result<Scenario, ScenarioError> {
    let ctx = Ctx::new(file, text);
    let raw: RawScenario = yaml::from_str(text).map_err(|e| ctx.located(e))?;
    let duration = validate_duration(&ctx, raw.duration)?;
    let epoch_unix_ms = validate_epoch(&ctx, raw.epoch.as_deref())?;
    let set = set_entries(raw.set, extra);
    let RouterSection {
        config: mut router,
        source: router_source,
        fleet,
    } = router_section(&ctx, raw.router, raw.router_file, &set)?;
    validate_targets(&router.deployments, &raw.providers, &raw.faults)
        .map_err(|e| ctx.error(&e.path, e.message))?;
    let contracts = validate_contracts(&ctx, raw.contracts)?;
    let traffic = validate_traffic_section(&ctx, raw.traffic, duration, &mut router, &contracts)?;
    if raw.transport == Some(Transport::Http) {
        router
            .warnings
            .extend(lost_after_send_over_http(&raw.faults));
    }
    let traffic_file = match raw.traffic_file {
        None => None,
        Some(relative) => Some(validate_traffic_file(&ctx, &relative, duration, &router)?),
    };
    check_in_flight(&traffic)
        .map_err(|(i, message)| ctx.error(&format!("traffic[{i}].count"), message))?;
    let expect = validate_expect(&ctx, raw.expect, &router)?;
    let golden = validate_golden(raw.golden, &ctx)?;
    let name = validate_name(&ctx, raw.name)?;
    Ok(Scenario {
        file: file.to_path_buf(),
        name,
        description: raw.description.unwrap_or_default(),
        seed: raw.seed.unwrap_or(0),
        duration,
        epoch_unix_ms,
        router,
        router_source,
        fleet,
        set,
        providers: raw.providers,
        faults: raw.faults,
        contracts,
        traffic,
        traffic_file,
        expect,
        golden,
        transport: raw.transport.unwrap_or_default(),
        client_retries: raw.client_retries.unwrap_or(0),
        runtime: routersim_runtime::RuntimeKind::default(),
        virtual_origin: None,
    })
}

/// `duration`: above zero.
fn validate_duration(ctx: &Ctx<'_>, duration: HumanDuration) -> Result<Duration, ScenarioError> {
    if duration.0.is_zero() {
        return Err(ctx.error("duration", "the duration must be above 0s"));
    }
    Ok(duration.0)
}

/// `epoch` (default [`DEFAULT_EPOCH`]) as Unix milliseconds.
fn validate_epoch(ctx: &Ctx<'_>, epoch: Option<&str>) -> Result<i64, ScenarioError> {
    let epoch_text = epoch.unwrap_or(DEFAULT_EPOCH);
    parse_rfc3339_utc(epoch_text).ok_or_else(|| {
        ctx.error(
            "epoch",
            format!("expected an RFC 3339 UTC time such as {DEFAULT_EPOCH}, found {epoch_text:?}"),
        )
    })
}

/// The file's `set` entries in file order, then the `extra` ones.
fn set_entries(set: Option<Map<String, Value>>, extra: &[(String, Value)]) -> Vec<(String, Value)> {
    let mut entries: Vec<(String, Value)> =
        set.map(|m| m.into_iter().collect()).unwrap_or_default();
    entries.extend(extra.iter().cloned());
    entries
}

/// The warnings of faults that lose a sent request, under `transport: http`: the wire has no
/// way to say "sent, then lost", so the router sees a plain connection error there.
fn lost_after_send_over_http(faults: &[FaultSpec]) -> impl Iterator<Item = String> + '_ {
    faults
        .iter()
        .enumerate()
        .filter_map(|(i, fault)| match &fault.effect {
            FaultEffect::Error(spec) if spec.lost_after_send.is_some() => Some(format!(
                "faults[{i}].error: connection_lost_after_send is modelled in memory only; \
             over transport: http the router sees a plain api_connection error (not \
             ambiguous, so `replay` does nothing)"
            )),
            _ => None,
        })
}

/// `name` (default: the file's stem): a folder under `reports/`, so it must not lead
/// anywhere else.
fn validate_name(ctx: &Ctx<'_>, name: Option<String>) -> Result<String, ScenarioError> {
    let named = name.is_some();
    let name = name.unwrap_or_else(|| {
        ctx.file()
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    });
    if let Err(why) = crate::report_dir::check_folder_name(&name) {
        let why = if named {
            why
        } else {
            format!("the name defaults to the file's stem, and {why}; set `name:`")
        };
        return Err(ctx.error("name", why));
    }
    Ok(name)
}
