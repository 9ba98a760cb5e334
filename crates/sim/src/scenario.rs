//! The scenario file: what to simulate, read and validated before anything runs.
//!
//! A scenario names a router config (inline under `router:` or in `router_file:`), how each
//! fake deployment behaves (`providers`, `faults`), the traffic, and what the results must
//! satisfy (`expect`). Every mistake is reported before the run as
//! `<file>:<line>:<col>: <yaml.path>: <what was expected>`, because a simulation that runs
//! on a typo wastes more time than it saves. Our own sections deny unknown keys.
//!
//! ```yaml
//! name: eu-rate-limit            # default: the file's stem
//! description: one deployment rate-limits for three minutes
//! seed: 7                        # default 0; every random draw derives from it
//! duration: 10m                  # no generated traffic arrives at or after it
//! epoch: 2026-01-01T00:00:00Z    # the wall clock at virtual time 0 (HTTP-date Retry-After)
//! router:                        # LiteLLM's proxy config shape; or `router_file: router.yaml`
//!   model_list:
//!     - model_name: gpt-4o
//!       litellm_params: {model: openai/gpt-4o}
//!       model_info: {id: gpt-a}
//! set:                           # overrides applied to the router's tree before it is validated
//!   router_settings.routing_strategy: least-busy
//!   model_list[0].litellm_params.rpm: 300
//! providers:
//!   gpt-a: {latency: {p50: 800ms, p99: 4s}}
//! faults:
//!   - {deployment: gpt-a, from: 2m, to: 5m, error: rate_limit, retry_after: 20s}
//! traffic:
//!   - {model: gpt-4o, rate: 20/s, arrival: poisson, input_tokens: 500..8000}
//!   - {model: gpt-4o, rate: 5/s, stream: 0.3, output_tokens: 100..800, tools: true}
//!   - {at: 1.5s, model: gpt-4o, input_tokens: 12000, count: 3, stream: true, response_format: json}
//! traffic_file: logs/requests.csv  # one request per CSV row, read as the run goes
//! expect:
//!   - {metric: success_rate, min: 0.99}
//! transport: http                # default memory; http: through the wire (see `transport`)
//! ```
//!
//! `set` works on the router config's YAML tree (inline or from `router_file`) before it is
//! validated, so a shared incident can be replayed under another strategy or profile without
//! copying the config; [`apply_set`] is the operation (also for `routersim sweep --set`).
//!
//! Traffic entries are one struct with every key optional, told apart by `at` (an explicit
//! request) or `rate` (a stream), and validated after parsing: serde's untagged enums would
//! lose the path and line of the real mistake.

use std::collections::BTreeMap;
use std::fmt;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use routersim_engine::config::input::read_text_file;
use routersim_engine::config::{
    ConfigError, FallbackTarget, RouterConfig, load::LoadOptions, load::describe,
    load::load_router_config_file_with, load::load_router_config_value_with,
    load::parse_yaml_located,
};
use routersim_engine::pattern::ModelPattern;
use routersim_engine::request::ResponseFormat;
use routersim_engine::retry_after::parse_rfc3339_utc;
use routersim_mock_providers::duration::{HumanDuration, format_duration};
use routersim_mock_providers::{FaultSpec, ProviderSpec, validate_targets};
use serde::Deserialize;
use serde::de::value::MapAccessDeserializer;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde_json::{Map, Value};

use crate::traffic::{
    ArrivalProcess, DEFAULT_INPUT_TOKENS, ExplicitRequest, RequestTemplate, TokenRange,
    TrafficSpec, TrafficStream,
};
use crate::traffic_file::TrafficFile;
use crate::transport::Transport;
use crate::yaml::{self, LocationIndex, YamlError};

/// The wall clock at virtual time 0 when a scenario sets no `epoch`.
pub const DEFAULT_EPOCH: &str = "2026-01-01T00:00:00Z";

/// A scenario that cannot be used: where, and what was expected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct ScenarioError {
    /// The file at fault (the scenario, or its `router_file`).
    pub file: PathBuf,
    /// 1-based line, when known.
    pub line: Option<u64>,
    /// 1-based column, when known.
    pub column: Option<u64>,
    /// YAML path in that file (`traffic[2].rate`); empty for the file as a whole.
    pub path: String,
    /// What was expected.
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(column) = self.column {
                write!(f, ":{column}")?;
            }
        }
        if !self.path.is_empty() {
            write!(f, ": {}", self.path)?;
        }
        write!(f, ": {}", self.message)
    }
}

/// Where the router config came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RouterSource {
    /// The scenario's `router:` mapping.
    Inline,
    /// `router_file:`, resolved against the scenario's directory.
    File(PathBuf),
}

/// A bound a run's metric must meet.
#[derive(Clone, Debug, PartialEq)]
pub struct Expectation {
    /// The metric's name (checked by the runner).
    pub metric: String,
    /// Lower bound, inclusive.
    pub min: Option<f64>,
    /// Upper bound, inclusive.
    pub max: Option<f64>,
}

/// A validated scenario.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// The file it was read from.
    pub file: PathBuf,
    /// `name` (default: the file's stem).
    pub name: String,
    /// `description` (default empty).
    pub description: String,
    /// `seed` (default 0).
    pub seed: u64,
    /// `duration`: generated traffic ends here; the run ends when all traffic is served.
    pub duration: Duration,
    /// `epoch` as Unix milliseconds: the wall clock at virtual time 0.
    pub epoch_unix_ms: i64,
    /// The router config.
    pub router: RouterConfig,
    /// Where it came from.
    pub router_source: RouterSource,
    /// `set`: the overrides applied to the router config, in file order (path, value).
    pub set: Vec<(String, Value)>,
    /// `providers`, keyed by deployment id (each one exists in the router config).
    pub providers: BTreeMap<String, ProviderSpec>,
    /// `faults`, in file order (each target exists).
    pub faults: Vec<FaultSpec>,
    /// `traffic`, in file order.
    pub traffic: Vec<TrafficSpec>,
    /// `traffic_file`, validated (its rows are read again as the run goes).
    pub traffic_file: Option<TrafficFile>,
    /// `expect`, in file order.
    pub expect: Vec<Expectation>,
    /// `transport` (default `memory`): how the router reaches the fake providers.
    pub transport: Transport,
}

impl Scenario {
    /// The traffic, as a lazy time-ordered iterator of requests.
    pub fn arrivals(&self) -> crate::traffic::Arrivals {
        self.arrivals_with_seed(self.seed)
    }

    /// The traffic (`traffic`, then `traffic_file`'s rows) under another seed.
    pub fn arrivals_with_seed(&self, seed: u64) -> crate::traffic::Arrivals {
        crate::traffic::Arrivals::with_file(&self.traffic, self.traffic_file.as_ref(), seed)
    }

    /// Requests the traffic is expected to produce: `traffic`
    /// ([`Arrivals::expected_count`](crate::traffic::Arrivals::expected_count)) plus the
    /// rows of `traffic_file`.
    pub fn expected_requests(&self) -> f64 {
        crate::traffic::Arrivals::expected_count(&self.traffic)
            + self.traffic_file.as_ref().map_or(0.0, |f| f.rows as f64)
    }
}

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

pub(crate) fn router_load_options() -> &'static LoadOptions {
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
/// [`MAX_INPUT_FILE_BYTES`](routersim_engine::config::input::MAX_INPUT_FILE_BYTES)).
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
    let (mut router, router_source) = match (raw.router, raw.router_file) {
        (Some(mut value), None) => {
            apply_sets(&ctx, &mut value, &set)?;
            let config =
                load_router_config_value_with(&value, router_load_options()).map_err(|e| {
                    match set_covering(&set, &e.path) {
                        Some(key) => ctx.error(&format!("set.{key}"), e.message),
                        None => ctx.error(&router_path(&e), e.message),
                    }
                })?;
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

    validate_targets(&router.deployments, &raw.providers, &raw.faults)
        .map_err(|e| ctx.error(&e.path, e.message))?;

    let traffic = raw
        .traffic
        .into_iter()
        .enumerate()
        .map(|(i, t)| validate_traffic(&ctx, i, t, duration, &router))
        .collect::<Result<Vec<_>, _>>()?;
    router
        .warnings
        .extend(crate::traffic::unread_models(&router, &traffic));
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
                }),
            }
        })
        .collect::<Result<Vec<_>, _>>()?;

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
        set,
        providers: raw.providers,
        faults: raw.faults,
        traffic,
        traffic_file,
        expect,
        transport: raw.transport.unwrap_or_default(),
    })
}

/// A config error's path under the scenario's `router:` key.
fn router_path(e: &ConfigError) -> String {
    use routersim_engine::config::load::{ROOT_PATH, YAML_PATH};
    if e.path.is_empty() || e.path == ROOT_PATH || e.path == YAML_PATH {
        "router".to_string()
    } else {
        format!("router.{}", e.path)
    }
}

fn load_router_file(ctx: &Ctx<'_>, path: &Path) -> Result<RouterConfig, ScenarioError> {
    // Read it here too: a missing file is the scenario's mistake (at `router_file`), and the
    // text locates the loader's errors.
    let text = read_router_text(ctx, path)?;
    load_router_config_file_with(path, router_load_options())
        .map_err(|e| router_file_error(path, &text, e))
}

fn read_router_text(ctx: &Ctx<'_>, path: &Path) -> Result<String, ScenarioError> {
    read_text_file(path).map_err(|e| {
        ctx.error(
            "router_file",
            format!("cannot read {}: {e}", path.display()),
        )
    })
}

/// A router config error as a located error: in the router file (`text`), or in the
/// included file the loader names (read again to locate the path in it).
fn router_file_error(path: &Path, text: &str, e: ConfigError) -> ScenarioError {
    use routersim_engine::config::load::{ROOT_PATH, YAML_PATH};
    let origin = path.display().to_string();
    let whole = e.path.is_empty() || e.path == origin || e.path == YAML_PATH || e.path == ROOT_PATH;
    let (line, column) = match (e.location, &e.file) {
        (Some((line, column)), _) => (Some(line), Some(column)),
        _ if whole => (None, None),
        (None, None) => LocationIndex::new(text).locate(&e.path).unzip(),
        (None, Some(included)) => read_text_file(included)
            .ok()
            .and_then(|text| LocationIndex::new(&text).locate(&e.path))
            .unzip(),
    };
    ScenarioError {
        file: e.file.unwrap_or_else(|| path.to_path_buf()),
        line,
        column,
        path: if whole { String::new() } else { e.path },
        message: e.message,
    }
}

/// A `router_file` with `set` overrides: the file's tree is parsed (as the engine's loader
/// parses it), overridden, then validated. A config error under an overridden path is the
/// scenario's (at `set.<path>`); any other is the router file's.
fn load_router_file_with_set(
    ctx: &Ctx<'_>,
    path: &Path,
    set: &[(String, Value)],
) -> Result<RouterConfig, ScenarioError> {
    let text = read_router_text(ctx, path)?;
    let in_router_file = |e: ConfigError| router_file_error(path, &text, e);
    let mut tree = parse_yaml_located(&text).map_err(in_router_file)?;
    let includes = match tree.get("include") {
        None | Some(Value::Null) => false,
        Some(Value::Array(items)) => !items.is_empty(),
        Some(_) => true,
    };
    if includes {
        return Err(ctx.error(
            "set",
            format!(
                "`set` cannot yet override a router_file that uses `include` ({}); inline \
                 the included model_list, or drop `set`",
                path.display()
            ),
        ));
    }
    apply_sets(ctx, &mut tree, set)?;
    load_router_config_value_with(&tree, router_load_options()).map_err(|e| {
        match set_covering(set, &e.path) {
            Some(key) => ctx.error(&format!("set.{key}"), e.message),
            None => in_router_file(e),
        }
    })
}

/// Applies every `set` entry in file order; an error is located at `set.<path>`.
fn apply_sets(
    ctx: &Ctx<'_>,
    tree: &mut Value,
    set: &[(String, Value)],
) -> Result<(), ScenarioError> {
    for (key, value) in set {
        apply_set(tree, key, value.clone())
            .map_err(|message| ctx.error(&format!("set.{key}"), message))?;
    }
    Ok(())
}

/// The last `set` path that covers a config error's path (equal, or an ancestor of it).
fn set_covering<'s>(set: &'s [(String, Value)], error_path: &str) -> Option<&'s str> {
    set.iter().rev().map(|(key, _)| key.as_str()).find(|key| {
        error_path
            .strip_prefix(key)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '[']))
    })
}

/// One step of a `set` path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SetStep<'a> {
    /// A mapping key.
    Key(&'a str),
    /// A list index.
    Index(usize),
}

const SET_PATH_EXPECTED: &str = "a path of dot-separated keys with [i] list indices, such as \
     router_settings.cooldown_time or model_list[0].litellm_params.rpm";

fn parse_set_path(path: &str) -> Result<Vec<SetStep<'_>>, String> {
    let bad = |why: &str| format!("{why} in {path:?}: expected {SET_PATH_EXPECTED}");
    let mut steps = Vec::new();
    for part in path.split('.') {
        let (key, mut rest) = part.split_at(part.find('[').unwrap_or(part.len()));
        if key.trim().is_empty() {
            return Err(bad("an empty key"));
        }
        steps.push(SetStep::Key(key));
        while !rest.is_empty() {
            let Some((index, after)) = rest.strip_prefix('[').and_then(|r| r.split_once(']'))
            else {
                return Err(bad("an unclosed ["));
            };
            let index = index
                .trim()
                .parse()
                .map_err(|_| bad(&format!("[{index}] is not a list index")))?;
            steps.push(SetStep::Index(index));
            rest = after;
            if !rest.is_empty() && !rest.starts_with('[') {
                return Err(bad(&format!("{rest:?} after an index")));
            }
        }
    }
    Ok(steps)
}

/// Sets `value` at `path` in a router config tree (the parsed YAML of a LiteLLM proxy config),
/// before it is validated.
///
/// `path` is dot-separated mapping keys with `[i]` list indices:
/// `router_settings.routing_strategy`, `model_list[0].litellm_params.rpm`. The last step is
/// replaced (or added). Missing mappings on the way are created (an empty value counts as
/// missing); a list is never created or extended: an index past the end, a key into a list or
/// a scalar, or an index into anything but a list is an error, returned as a message that
/// names the part of the path at fault. Keys cannot contain dots.
pub fn apply_set(root: &mut Value, path: &str, value: Value) -> Result<(), String> {
    let steps = parse_set_path(path)?;
    let mut node = root;
    let mut walked = String::new();
    for (i, step) in steps.iter().enumerate() {
        let last = i + 1 == steps.len();
        let here = if walked.is_empty() {
            "the router config".to_string()
        } else {
            walked.clone()
        };
        match *step {
            SetStep::Key(key) => {
                if node.is_null() {
                    *node = Value::Object(Map::new());
                }
                let Value::Object(map) = node else {
                    return Err(format!(
                        "{here} is {}, not a mapping: it has no key {key:?}",
                        describe(node)
                    ));
                };
                if !walked.is_empty() {
                    walked.push('.');
                }
                walked.push_str(key);
                if last {
                    map.insert(key.to_string(), value);
                    return Ok(());
                }
                if matches!(steps[i + 1], SetStep::Index(_))
                    && map.get(key).is_none_or(Value::is_null)
                {
                    return Err(format!(
                        "{walked} does not exist: an index needs an existing list"
                    ));
                }
                node = map.entry(key.to_string()).or_insert(Value::Null);
            }
            SetStep::Index(index) => {
                let Value::Array(items) = node else {
                    return Err(format!(
                        "{here} is {}, not a list: it has no [{index}]",
                        describe(node)
                    ));
                };
                let len = items.len();
                let _ = write!(walked, "[{index}]");
                let Some(item) = items.get_mut(index) else {
                    return Err(format!(
                        "{walked} is past the end of the list ({here} has {len} entries)"
                    ));
                };
                if last {
                    *item = value;
                    return Ok(());
                }
                node = item;
            }
        }
    }
    Ok(())
}

/// A `set` value written as text (`routersim sweep --set KEY=V`): read as a YAML scalar or
/// flow collection, the way the same text in a scenario file reads (`3` is a number, `true` a
/// boolean, `least-busy` a string, `[a, b]` a list).
pub fn parse_set_value(text: &str) -> Result<Value, String> {
    crate::yaml::from_str::<Value>(text).map_err(|e| format!("{text:?}: {}", e.message))
}

/// The scenario file being read, for building located errors.
struct Ctx<'a> {
    file: &'a Path,
    text: &'a str,
    index: OnceLock<LocationIndex>,
}

impl<'a> Ctx<'a> {
    fn new(file: &'a Path, text: &'a str) -> Self {
        Self {
            file,
            text,
            index: OnceLock::new(),
        }
    }

    fn located(&self, e: YamlError) -> ScenarioError {
        ScenarioError {
            file: self.file.to_path_buf(),
            line: e.line,
            column: e.column,
            path: e.path,
            message: e.message,
        }
    }

    /// An error at `path`, located by re-reading the text (only errors pay for that).
    fn error(&self, path: &str, message: impl Into<String>) -> ScenarioError {
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
struct RawScenario {
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
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawExpect {
    metric: String,
    min: Option<f64>,
    max: Option<f64>,
}

/// One `traffic` entry before we know which kind it is.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTraffic {
    model: String,
    // An explicit request.
    at: Option<HumanDuration>,
    count: Option<Count>,
    // A stream.
    rate: Option<Rate>,
    from: Option<HumanDuration>,
    to: Option<HumanDuration>,
    arrival: Option<ArrivalProcess>,
    // Both.
    input_tokens: Option<TokenRange>,
    max_tokens: Option<u32>,
    num_retries: Option<u32>,
    fallbacks: Option<Vec<Fallback>>,
    disable_fallbacks: Option<bool>,
    allow_fallbacks: Option<bool>,
    models: Option<Vec<String>>,
    metadata: Option<Metadata>,
    stream: Option<StreamShare>,
    output_tokens: Option<TokenRange>,
    response_format: Option<Format>,
    tools: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Metadata {
    #[serde(default)]
    tags: Vec<String>,
}

/// Whether traffic may ask for `model`: a model group, an alias, or a name a wildcard group
/// (`openai/*`, `*`) matches. An alias LiteLLM cannot route (a list, …) may be asked for too:
/// those requests fail, as they would in LiteLLM.
fn model_known(router: &RouterConfig, model: &str) -> bool {
    router.settings.model_group_alias.contains_key(model)
        || router.settings.unroutable_aliases.contains_key(model)
        || router
            .deployments
            .iter()
            .any(|d| *d.model_name == *model || ModelPattern::new(&d.model_name).matches(model))
}

fn model_groups(router: &RouterConfig) -> String {
    let mut names: Vec<&str> = router
        .deployments
        .iter()
        .map(|d| &*d.model_name)
        .chain(router.settings.model_group_alias.keys().map(String::as_str))
        .chain(
            router
                .settings
                .unroutable_aliases
                .keys()
                .map(String::as_str),
        )
        .collect();
    names.sort_unstable();
    names.dedup();
    names.join(", ")
}

fn validate_traffic(
    ctx: &Ctx<'_>,
    i: usize,
    raw: RawTraffic,
    duration: Duration,
    router: &RouterConfig,
) -> Result<TrafficSpec, ScenarioError> {
    let path = format!("traffic[{i}]");
    let at = |key: &str| format!("{path}.{key}");
    if !model_known(router, &raw.model) {
        return Err(ctx.error(
            &at("model"),
            format!(
                "no model group or alias {:?}; the router has: {}",
                raw.model,
                model_groups(router)
            ),
        ));
    }
    if let Some(n) = raw.num_retries
        && n > routersim_engine::config::load::MAX_NUM_RETRIES
    {
        return Err(ctx.error(
            &at("num_retries"),
            format!(
                "a retry count of at most {} is expected, found {n}",
                routersim_engine::config::load::MAX_NUM_RETRIES
            ),
        ));
    }
    for (j, name) in raw.models.iter().flatten().enumerate() {
        if !model_known(router, name) {
            let known = model_groups(router);
            let message = format!("no model group or alias {name:?}; the router has: {known}");
            return Err(ctx.error(&format!("{path}.models[{j}]"), message));
        }
    }
    for (j, target) in raw.fallbacks.iter().flatten().enumerate() {
        if !model_known(router, &target.0.model) {
            return Err(ctx.error(
                &format!("{path}.fallbacks[{j}]"),
                format!(
                    "no model group or alias {:?}; the router has: {}",
                    target.0.model,
                    model_groups(router)
                ),
            ));
        }
    }
    let template = RequestTemplate {
        model: Arc::from(raw.model.as_str()),
        max_tokens: raw.max_tokens,
        num_retries: raw.num_retries,
        fallbacks: raw.fallbacks.map(|f| f.into_iter().map(|t| t.0).collect()),
        disable_fallbacks: raw.disable_fallbacks.unwrap_or(false)
            || raw.allow_fallbacks == Some(false),
        models: raw
            .models
            .iter()
            .flatten()
            .map(|m| Arc::from(m.as_str()))
            .collect(),
        tags: raw.metadata.map(|m| m.tags).unwrap_or_default(),
        response_format: raw.response_format.map_or(ResponseFormat::Text, |f| f.0),
        tools: raw.tools.unwrap_or(false),
    };
    let input_tokens = raw
        .input_tokens
        .unwrap_or(TokenRange::fixed(DEFAULT_INPUT_TOKENS));

    match (raw.at, raw.rate) {
        (Some(when), None) => {
            for (key, set) in [
                ("from", raw.from.is_some()),
                ("to", raw.to.is_some()),
                ("arrival", raw.arrival.is_some()),
            ] {
                if set {
                    return Err(ctx.error(
                        &at(key),
                        format!("`{key}` belongs to a stream (with `rate`); an explicit request has `at`"),
                    ));
                }
            }
            if when.0 > duration {
                return Err(ctx.error(
                    &at("at"),
                    format!(
                        "at {when} is after the scenario's duration ({})",
                        format_duration(duration)
                    ),
                ));
            }
            if input_tokens.min != input_tokens.max {
                return Err(ctx.error(
                    &at("input_tokens"),
                    "an explicit request has one size: a number, not a range",
                ));
            }
            if raw.output_tokens.is_some_and(|r| !r.is_fixed()) {
                return Err(ctx.error(
                    &at("output_tokens"),
                    "an explicit request has one answer length: a number, not a range",
                ));
            }
            let stream = match raw.stream {
                None => false,
                Some(StreamShare {
                    share,
                    written_as_bool: true,
                }) => share >= 1.0,
                Some(StreamShare { share, .. }) => {
                    return Err(ctx.error(
                        &at("stream"),
                        format!(
                            "an explicit request is streamed or not: true or false; a share \
                             ({share}) belongs to a generated stream (with `rate`)"
                        ),
                    ));
                }
            };
            let count = raw.count.map_or(1, |c| c.0);
            Ok(TrafficSpec::Request(ExplicitRequest {
                at: when.0,
                count,
                input_tokens: input_tokens.min,
                stream,
                output_tokens: raw.output_tokens.map(|r| r.min),
                template,
            }))
        }
        (None, Some(rate)) => {
            if raw.count.is_some() {
                return Err(ctx.error(
                    &at("count"),
                    "`count` belongs to an explicit request (with `at`); a stream has `rate`",
                ));
            }
            let from = raw.from.map_or(Duration::ZERO, |d| d.0);
            let to = raw.to.map_or(duration, |d| d.0);
            if to > duration {
                return Err(ctx.error(
                    &at("to"),
                    format!(
                        "to {} is after the scenario's duration ({})",
                        format_duration(to),
                        format_duration(duration)
                    ),
                ));
            }
            if from >= to {
                return Err(ctx.error(
                    &at("from"),
                    format!(
                        "from {} must be before to {}",
                        format_duration(from),
                        format_duration(to)
                    ),
                ));
            }
            Ok(TrafficSpec::Stream(TrafficStream {
                rate_per_sec: rate.0,
                from,
                to,
                arrival: raw.arrival.unwrap_or_default(),
                input_tokens,
                stream: raw.stream.map_or(0.0, |s| s.share),
                output_tokens: raw.output_tokens,
                template,
            }))
        }
        (Some(_), Some(_)) => Err(ctx.error(
            &path,
            "an entry is an explicit request (`at`) or a stream (`rate`), not both",
        )),
        (None, None) => Err(ctx.error(
            &path,
            "expected `at: <time>` (an explicit request) or `rate: <n>/s` (a generated stream)",
        )),
    }
}

/// `count`: how many copies of an explicit request, from 1 (0 would be a request that never
/// arrives: a typo, not a way to switch it off).
struct Count(u32);

fn count_error<E: de::Error>(found: impl fmt::Display) -> E {
    E::custom(format!(
        "expected a whole number from 1 to {}, found {found}",
        u32::MAX
    ))
}

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Count;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "a whole number from 1 to {}", u32::MAX)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Count, E> {
                match u32::try_from(v) {
                    Ok(n) if n > 0 => Ok(Count(n)),
                    _ => Err(count_error(v)),
                }
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Count, E> {
                match u64::try_from(v) {
                    Ok(v) => self.visit_u64(v),
                    Err(_) => Err(count_error(v)),
                }
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Count, E> {
                Err(count_error(v))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Count, E> {
                Err(count_error(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Count, E> {
                Err(count_error(format_args!("{v:?}")))
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// Requests per second: `20/s`, `1200/m`, `50/h`, or a plain number (per second).
struct Rate(f64);

const RATE_EXPECTED: &str = "a rate such as 20/s, 1200/m, 50/h or 20 (per second)";

fn parse_rate(text: &str) -> Result<f64, String> {
    let bad = || format!("expected {RATE_EXPECTED}, found {text:?}");
    let (number, per) = match text.split_once('/') {
        Some((n, unit)) => {
            let per = match unit.trim() {
                "s" => 1.0,
                "m" => 60.0,
                "h" => 3600.0,
                _ => return Err(bad()),
            };
            (n.trim(), per)
        }
        None => (text.trim(), 1.0),
    };
    if !number.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return Err(bad());
    }
    let n: f64 = number.parse().map_err(|_| bad())?;
    check_rate(n / per)
}

fn check_rate(per_sec: f64) -> Result<f64, String> {
    if per_sec.is_finite() && per_sec > 0.0 {
        Ok(per_sec)
    } else {
        Err(format!("a rate must be above 0, found {per_sec}"))
    }
}

impl<'de> Deserialize<'de> for Rate {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Rate;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(RATE_EXPECTED)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Rate, E> {
                parse_rate(v).map(Rate).map_err(E::custom)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Rate, E> {
                check_rate(v as f64).map(Rate).map_err(E::custom)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Rate, E> {
                check_rate(v as f64).map(Rate).map_err(E::custom)
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Rate, E> {
                check_rate(v).map(Rate).map_err(E::custom)
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// `stream`: `true`/`false`, or a share of requests between 0 and 1 (`0.3`).
struct StreamShare {
    share: f64,
    written_as_bool: bool,
}

const STREAM_EXPECTED: &str = "true, false, or a share of requests between 0 and 1 (0.3)";

fn check_share(share: f64) -> Result<StreamShare, String> {
    if (0.0..=1.0).contains(&share) {
        Ok(StreamShare {
            share,
            written_as_bool: false,
        })
    } else {
        Err(format!("stream must be {STREAM_EXPECTED}, found {share}"))
    }
}

impl<'de> Deserialize<'de> for StreamShare {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = StreamShare;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(STREAM_EXPECTED)
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<StreamShare, E> {
                Ok(StreamShare {
                    share: if v { 1.0 } else { 0.0 },
                    written_as_bool: true,
                })
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<StreamShare, E> {
                check_share(v as f64).map_err(E::custom)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<StreamShare, E> {
                check_share(v as f64).map_err(E::custom)
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<StreamShare, E> {
                check_share(v).map_err(E::custom)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<StreamShare, E> {
                Err(E::custom(format!(
                    "stream must be {STREAM_EXPECTED}, found {v:?}"
                )))
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// `response_format`: `text`, or `json` (also `json_object`, `json_schema`).
struct Format(ResponseFormat);

const FORMAT_EXPECTED: &str = "text or json (json_object and json_schema are json too)";

impl<'de> Deserialize<'de> for Format {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Format;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(FORMAT_EXPECTED)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Format, E> {
                match v {
                    "text" => Ok(Format(ResponseFormat::Text)),
                    "json" | "json_object" | "json_schema" => Ok(Format(ResponseFormat::Json)),
                    _ => Err(E::custom(format!(
                        "response_format must be {FORMAT_EXPECTED}, found {v:?}"
                    ))),
                }
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// A request's fallback: a model group, or `{model: X, <param overrides>…}`.
struct Fallback(FallbackTarget);

impl<'de> Deserialize<'de> for Fallback {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Fallback;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a model group, or {model: <group>, <param>: <value>…}")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Fallback, E> {
                Ok(Fallback(FallbackTarget::group(v)))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Fallback, A::Error> {
                let mut overrides =
                    BTreeMap::<String, Value>::deserialize(MapAccessDeserializer::new(map))?;
                match overrides.remove("model") {
                    Some(Value::String(model)) => {
                        FallbackTarget::with_overrides(model, overrides, "")
                            .map(Fallback)
                            .map_err(de::Error::custom)
                    }
                    Some(other) => Err(de::Error::custom(format!(
                        "`model` must be a model group name, found {other}"
                    ))),
                    None => Err(de::Error::custom(
                        "a fallback mapping needs `model: <group>`",
                    )),
                }
            }
        }
        deserializer.deserialize_any(V)
    }
}
