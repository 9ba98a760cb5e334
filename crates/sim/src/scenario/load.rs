//! Reading a scenario: the load options set once by the CLI, the entry points (`load_scenario`,
//! `parse_scenario`, their `_with_set` forms), the raw serde shape of the file, and the
//! located-error context.
//!
//! Separate from the public types in the parent so the parsing pipeline reads top to bottom.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::OnceLock;

use routersim_config::input::read_text_file;
use routersim_config::load::{LoadOptions, load_router_config_value_with};
use routersim_engine::config::RouterConfig;
use routersim_engine::retry_after::parse_rfc3339_utc;
use routersim_mock_providers::duration::HumanDuration;
use routersim_mock_providers::{FaultSpec, ProviderSpec, validate_targets};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::contracts::{RawContract, validate_contracts};
use super::golden::{RawGolden, validate_golden};
use super::router::{load_router_file, load_router_file_with_set, router_path};
use super::set::{apply_sets, set_covering};
use super::validate::{model_groups, model_known, validate_traffic};
use super::values::{Count, Fallback, Format, Rate, StreamShare};
use super::{DEFAULT_EPOCH, Expectation, RouterSource, Scenario, ScenarioError};
use crate::fleet::FleetConfig;
use crate::fleet::config::take_fleet_config;
use crate::traffic::{ArrivalProcess, TokenRange};
use crate::transport::Transport;
use crate::yaml::{self, LocationIndex, YamlError};

/// What every scenario's router config is loaded with, from outside its files: set once by
/// the CLI (which reads its environment once), before any scenario is read. Unset (a library
/// caller, a test), nothing from outside is used.
static ROUTER_LOAD_OPTIONS: OnceLock<LoadOptions> = OnceLock::new();

/// The options used when none were set: nothing from outside.
static NO_LOAD_OPTIONS: LoadOptions = LoadOptions {
    max_fallbacks_env: None,
};

/// Sets the [`LoadOptions`] every scenario's router config is loaded with (once; a second call
/// returns its options back, unused). The loader records every value it uses from them in the
/// config's warnings, which every command prints.
pub fn set_router_load_options(options: LoadOptions) -> Result<(), LoadOptions> {
    ROUTER_LOAD_OPTIONS.set(options)
}

/// The options [`set_router_load_options`] set (none: the defaults), for every router config read.
pub fn router_load_options() -> &'static LoadOptions {
    ROUTER_LOAD_OPTIONS.get().unwrap_or(&NO_LOAD_OPTIONS)
}

/// Reads and validates a scenario file.
pub fn load_scenario(path: &Path) -> Result<Scenario, ScenarioError> {
    let text = read_scenario_text(path)?;
    parse_scenario(&text, path)
}

/// The `set` path `routersim run --profile` overrides.
pub const PROFILE_SET_PATH: &str = "router_settings.profile";

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

    if raw.duration.0.is_zero() {
        return Err(ctx.error("duration", "the duration must be above 0s"));
    }
    let duration = raw.duration.0;
    let epoch_text = raw.epoch.as_deref().unwrap_or(DEFAULT_EPOCH);
    let epoch_unix_ms = parse_rfc3339_utc(epoch_text).ok_or_else(|| {
        ctx.error(
            "epoch",
            format!("expected an RFC 3339 UTC time such as {DEFAULT_EPOCH}, found {epoch_text:?}"),
        )
    })?;

    let mut set: Vec<(String, Value)> =
        raw.set.map(|m| m.into_iter().collect()).unwrap_or_default();
    set.extend(extra.iter().cloned());
    let mut fleet = FleetConfig::default();
    let (mut router, router_source) = match (raw.router, raw.router_file) {
        (Some(value), None) => {
            let (config, inline_fleet) = load_inline_router(&ctx, value, &set)?;
            fleet = inline_fleet;
            (config, RouterSource::Inline)
        }
        (None, Some(relative)) => {
            let path = file.parent().unwrap_or(Path::new("")).join(&relative);
            let config = if set.is_empty() {
                load_router_file(&ctx, &path)?
            } else {
                load_router_file_with_set(&ctx, &path, &set)?
            };
            (config, RouterSource::File(path))
        }
        (Some(_), Some(_)) => {
            return Err(ctx.error(
                "router_file",
                "set either `router` (the config inline) or `router_file`, not both",
            ));
        }
        (None, None) => {
            return Err(ctx.error(
                "",
                "missing the router config: set `router` (LiteLLM's config inline) or \
                 `router_file` (a path relative to this file)",
            ));
        }
    };

    router.warnings.extend(fleet_note(&fleet));
    validate_targets(&router.deployments, &raw.providers, &raw.faults)
        .map_err(|e| ctx.error(&e.path, e.message))?;

    let contracts = validate_contracts(&ctx, raw.contracts)?;
    let traffic = raw
        .traffic
        .into_iter()
        .enumerate()
        .map(|(i, t)| validate_traffic(&ctx, i, t, duration, &router, &contracts))
        .collect::<Result<Vec<_>, _>>()?;
    router
        .warnings
        .extend(crate::traffic::unread_workloads(&router, &traffic));
    router
        .warnings
        .extend(crate::traffic::unread_models(&router, &traffic));
    if raw.transport == Some(Transport::Http) {
        // The wire has no way to say "sent, then lost": the router sees a plain connection
        // error there.
        for (i, fault) in raw.faults.iter().enumerate() {
            if let routersim_mock_providers::spec::FaultEffect::Error(spec) = &fault.effect
                && spec.lost_after_send.is_some()
            {
                router.warnings.push(format!(
                    "faults[{i}].error: connection_lost_after_send is modelled in memory only; \
                     over transport: http the router sees a plain api_connection error (not \
                     ambiguous, so `replay` does nothing)"
                ));
            }
        }
    }
    let traffic_file = match raw.traffic_file {
        None => None,
        Some(relative) => {
            let path = file.parent().unwrap_or(Path::new("")).join(&relative);
            // A file that is not there is the scenario's mistake; one that is, answers for its
            // own lines.
            std::fs::File::open(&path).map_err(|e| {
                ctx.error(
                    "traffic_file",
                    format!("cannot read {}: {e}", path.display()),
                )
            })?;
            Some(crate::traffic_file::validate(
                &path,
                duration,
                |model| model_known(&router, model),
                || model_groups(&router),
            )?)
        }
    };
    crate::traffic::check_in_flight(&traffic)
        .map_err(|(i, message)| ctx.error(&format!("traffic[{i}].count"), message))?;

    let expect = raw
        .expect
        .into_iter()
        .enumerate()
        .map(|(i, e)| {
            let path = format!("expect[{i}]");
            for (key, bound) in [("min", e.min), ("max", e.max)] {
                if let Some(v) = bound.filter(|v| !v.is_finite()) {
                    return Err(ctx.error(
                        &format!("{path}.{key}"),
                        format!("expected a finite number, found {v}"),
                    ));
                }
            }
            if let Some(message) = crate::expect::unknown_deployment(&e.metric, &router) {
                return Err(ctx.error(&format!("{path}.metric"), message));
            }
            let window = match &e.window {
                None => None,
                Some(text) => Some(
                    crate::expect::parse_window(text)
                        .map_err(|why| ctx.error(&format!("{path}.window"), why))?,
                ),
            };
            if window.is_some()
                && let Some(why) = crate::expect::unwindowable(&e.metric)
            {
                return Err(ctx.error(&format!("{path}.metric"), why));
            }
            match (e.min, e.max) {
                (None, None) => Err(ctx.error(&path, "set `min`, `max`, or both")),
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
        })
        .collect::<Result<Vec<_>, _>>()?;

    let golden = validate_golden(raw.golden, &ctx)?;
    let named = raw.name.is_some();
    let name = raw.name.unwrap_or_else(|| {
        file.file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    });
    // The name is a folder under reports/: it must not lead anywhere else.
    if let Err(why) = crate::report_dir::check_folder_name(&name) {
        let why = if named {
            why
        } else {
            format!("the name defaults to the file's stem, and {why}; set `name:`")
        };
        return Err(ctx.error("name", why));
    }
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

/// The scenario file being read, for building located errors.
pub(super) struct Ctx<'a> {
    file: &'a Path,
    text: &'a str,
    index: OnceLock<LocationIndex>,
}

impl<'a> Ctx<'a> {
    pub(super) fn new(file: &'a Path, text: &'a str) -> Self {
        Self {
            file,
            text,
            index: OnceLock::new(),
        }
    }

    pub(super) fn located(&self, e: YamlError) -> ScenarioError {
        ScenarioError {
            file: self.file.to_path_buf(),
            line: e.line,
            column: e.column,
            path: e.path,
            message: e.message,
        }
    }

    /// An error at `path`, located by re-reading the text (only errors pay for that).
    pub(super) fn error(&self, path: &str, message: impl Into<String>) -> ScenarioError {
        let (line, column) = self
            .index
            .get_or_init(|| LocationIndex::new(self.text))
            .locate(path)
            .unzip();
        ScenarioError {
            file: self.file.to_path_buf(),
            line,
            column,
            path: path.to_string(),
            message: message.into(),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawScenario {
    name: Option<String>,
    description: Option<String>,
    seed: Option<u64>,
    duration: HumanDuration,
    epoch: Option<String>,
    router: Option<Value>,
    router_file: Option<String>,
    set: Option<Map<String, Value>>,
    #[serde(default)]
    providers: BTreeMap<String, ProviderSpec>,
    #[serde(default)]
    faults: Vec<FaultSpec>,
    #[serde(default)]
    traffic: Vec<RawTraffic>,
    traffic_file: Option<String>,
    #[serde(default)]
    expect: Vec<RawExpect>,
    transport: Option<Transport>,
    #[serde(default)]
    contracts: Vec<RawContract>,
    client_retries: Option<u32>,
    golden: Option<RawGolden>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawExpect {
    metric: String,
    min: Option<f64>,
    max: Option<f64>,
    window: Option<String>,
}

/// One `traffic` entry before we know which kind it is.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTraffic {
    pub(super) model: String,
    // An explicit request.
    pub(super) at: Option<HumanDuration>,
    pub(super) count: Option<Count>,
    // A stream.
    pub(super) rate: Option<Rate>,
    pub(super) from: Option<HumanDuration>,
    pub(super) to: Option<HumanDuration>,
    pub(super) arrival: Option<ArrivalProcess>,
    // Both.
    pub(super) input_tokens: Option<TokenRange>,
    pub(super) max_tokens: Option<u32>,
    pub(super) num_retries: Option<u32>,
    pub(super) fallbacks: Option<Vec<Fallback>>,
    pub(super) disable_fallbacks: Option<bool>,
    pub(super) allow_fallbacks: Option<bool>,
    pub(super) models: Option<Vec<String>>,
    pub(super) metadata: Option<Metadata>,
    pub(super) stream: Option<StreamShare>,
    pub(super) output_tokens: Option<TokenRange>,
    pub(super) response_format: Option<Format>,
    pub(super) tools: Option<bool>,
    pub(super) workload: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Metadata {
    #[serde(default)]
    pub(super) tags: Vec<String>,
}

/// Whether a router tree runs DeltaLLM's rules (`router_settings.profile: deltallm`): its
/// replicas read the shared store on every lookup by default.
fn is_deltallm(tree: &Value) -> bool {
    tree.get("router_settings")
        .and_then(|s| s.get("profile"))
        .and_then(Value::as_str)
        .is_some_and(|p| p.starts_with("deltallm"))
}

/// An inline `router:` with `set` applied: its fleet keys taken out and read, the rest loaded
/// as the router config. Errors are located at `router.<path>`, or at `set.<key>` when a
/// `set` entry wrote the value.
fn load_inline_router(
    ctx: &Ctx<'_>,
    mut value: Value,
    set: &[(String, Value)],
) -> Result<(RouterConfig, FleetConfig), ScenarioError> {
    apply_sets(ctx, &mut value, set)?;
    let deltallm = is_deltallm(&value);
    let fleet =
        take_fleet_config(&mut value, deltallm).map_err(|e| match set_covering(set, &e.path) {
            Some(key) => ctx.error(&format!("set.{key}"), e.message),
            None => ctx.error(&format!("router.{}", e.path), e.message),
        })?;
    let mut config =
        load_router_config_value_with(&value, router_load_options()).map_err(
            |e| match set_covering(set, &e.path) {
                Some(key) => ctx.error(&format!("set.{key}"), e.message),
                None => ctx.error(&router_path(&e), e.message),
            },
        )?;
    if fleet.state_from_redis_host {
        // It chose the shared store: no longer a key that does nothing.
        config
            .ignored_keys
            .retain(|k| k != "router_settings.redis_host");
    }
    Ok((config, fleet))
}

/// What the run should say about its fleet (`state` made `shared` by `redis_host`).
fn fleet_note(fleet: &FleetConfig) -> Option<String> {
    fleet.state_from_redis_host.then(|| {
        "router.state: shared (the default when router_settings.redis_host is set): the \
         replicas share a simulated store, not a real Redis"
            .to_string()
    })
}
