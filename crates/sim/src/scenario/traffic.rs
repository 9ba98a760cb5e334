//! The `traffic` and `traffic_file` sections, checked against the router: every model is
//! routable, every entry is either an explicit request or a stream with its keys in range,
//! and each entry's shared request fields become its [`RequestTemplate`].
//!
//! Separate because it is the one cross-check between sections (traffic, router, contracts),
//! with many messages.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use routersim_engine::config::{Profile, RouterConfig, UnreadKey};
use routersim_engine::contract::Contract;
use routersim_engine::pattern::ModelPattern;
use routersim_engine::request::ResponseFormat;
use routersim_mock_providers::duration::{HumanDuration, format_duration};

use super::contracts::{check_input_tokens, workload_contract};
use super::ctx::Ctx;
use super::error::ScenarioError;
use super::raw::RawTraffic;
use super::router::beside;
use super::stages::validate_stages;
use super::values::StreamShare;
use crate::traffic::{
    DEFAULT_INPUT_TOKENS, ExplicitRequest, Ramp, RequestTemplate, TokenRange, TrafficSpec,
    TrafficStream,
};
use crate::traffic_file::TrafficFile;

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

/// Every name traffic may ask for, sorted, for the messages of a model it may not.
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

/// Every `traffic` entry, in file order; then the warnings about keys the router's profile
/// does not read, added to the router's.
pub(super) fn validate_traffic_section(
    ctx: &Ctx<'_>,
    raw: Vec<RawTraffic>,
    duration: Duration,
    router: &mut RouterConfig,
    contracts: &BTreeMap<String, Arc<Contract>>,
) -> Result<Vec<TrafficSpec>, ScenarioError> {
    let traffic = raw
        .into_iter()
        .enumerate()
        .map(|(i, t)| validate_traffic(ctx, i, t, duration, router, contracts))
        .collect::<Result<Vec<_>, _>>()?;
    let unread = [
        unread_workloads(router, &traffic),
        unread_models(router, &traffic),
    ];
    for key in unread.into_iter().flatten() {
        router.warnings.push(key.to_string());
        router.unread_keys.push(key);
    }
    Ok(traffic)
}

/// `traffic_file:` (a path relative to the scenario): it must exist, and every row is read
/// once and checked now.
pub(super) fn validate_traffic_file(
    ctx: &Ctx<'_>,
    relative: &str,
    duration: Duration,
    router: &RouterConfig,
) -> Result<TrafficFile, ScenarioError> {
    let path = beside(ctx.file(), relative);
    // A file that is not there is the scenario's mistake; one that is, answers for its own
    // lines.
    std::fs::File::open(&path).map_err(|e| {
        ctx.error(
            "traffic_file",
            format!("cannot read {}: {e}", path.display()),
        )
    })?;
    crate::traffic_file::validate(
        &path,
        duration,
        |model| model_known(router, model),
        || model_groups(router),
    )
}

/// One `traffic` entry: its model and request keys, then its kind (`at` or `rate`).
fn validate_traffic(
    ctx: &Ctx<'_>,
    i: usize,
    mut raw: RawTraffic,
    duration: Duration,
    router: &RouterConfig,
    contracts: &BTreeMap<String, Arc<Contract>>,
) -> Result<TrafficSpec, ScenarioError> {
    let path = format!("traffic[{i}]");
    let contract = workload_contract(ctx, &path, raw.workload.as_deref(), contracts)?;
    check_routable(ctx, &path, &raw, router)?;
    let template = request_template(&mut raw, contract);
    let input_tokens = raw
        .input_tokens
        .unwrap_or(TokenRange::fixed(DEFAULT_INPUT_TOKENS));
    check_input_tokens(ctx, &path, template.contract.as_deref(), input_tokens.max)?;
    let entry = Entry {
        ctx,
        path: &path,
        raw: &raw,
        duration,
        input_tokens,
    };
    if let Some(stages) = &raw.stages {
        if raw.at.is_some() {
            return Err(ctx.error(
                &format!("{path}.stages"),
                "`stages` belongs to a stream (a ramping rate); an explicit request has `at`",
            ));
        }
        let start = raw.rate.as_ref().map_or(0.0, |r| r.0);
        let ramp = validate_stages(ctx, &path, stages, start)?;
        return entry
            .stream(ramp.peak(), Some(ramp), template)
            .map(TrafficSpec::Stream);
    }
    match (raw.at, &raw.rate) {
        (Some(when), None) => entry.explicit(when, template).map(TrafficSpec::Request),
        (None, Some(rate)) => entry
            .stream(rate.0, None, template)
            .map(TrafficSpec::Stream),
        (Some(_), Some(_)) => Err(ctx.error(
            &path,
            "an entry is an explicit request (`at`) or a stream (`rate`), not both",
        )),
        (None, None) => Err(ctx.error(
            &path,
            "expected `at: <time>` (an explicit request), `rate: <n>/s` (a generated stream) or \
             `stages: [{duration, target}]` (a ramping stream)",
        )),
    }
}

/// Every model the entry names (`model`, `models`, `fallbacks`) is one the router has, and
/// its `num_retries` is in range.
fn check_routable(
    ctx: &Ctx<'_>,
    path: &str,
    raw: &RawTraffic,
    router: &RouterConfig,
) -> Result<(), ScenarioError> {
    let unknown = |name: &str| {
        format!(
            "no model group or alias {name:?}; the router has: {}",
            model_groups(router)
        )
    };
    if !model_known(router, &raw.model) {
        return Err(ctx.error(&format!("{path}.model"), unknown(&raw.model)));
    }
    if let Some(n) = raw.num_retries
        && n > routersim_config::load::MAX_NUM_RETRIES
    {
        return Err(ctx.error(
            &format!("{path}.num_retries"),
            format!(
                "a retry count of at most {} is expected, found {n}",
                routersim_config::load::MAX_NUM_RETRIES
            ),
        ));
    }
    for (j, name) in raw.models.iter().flatten().enumerate() {
        if !model_known(router, name) {
            return Err(ctx.error(&format!("{path}.models[{j}]"), unknown(name)));
        }
    }
    for (j, target) in raw.fallbacks.iter().flatten().enumerate() {
        if !model_known(router, &target.0.model) {
            return Err(ctx.error(&format!("{path}.fallbacks[{j}]"), unknown(&target.0.model)));
        }
    }
    Ok(())
}

/// The request keys every request of the entry shares, as its template (the fallbacks and
/// tags are moved out of `raw`).
fn request_template(raw: &mut RawTraffic, contract: Option<Arc<Contract>>) -> RequestTemplate {
    RequestTemplate {
        model: Arc::from(raw.model.as_str()),
        max_tokens: raw.max_tokens,
        num_retries: raw.num_retries,
        fallbacks: raw
            .fallbacks
            .take()
            .map(|f| f.into_iter().map(|t| t.0).collect()),
        disable_fallbacks: raw.disable_fallbacks.unwrap_or(false)
            || raw.allow_fallbacks == Some(false),
        models: raw
            .models
            .iter()
            .flatten()
            .map(|m| Arc::from(m.as_str()))
            .collect(),
        tags: raw.metadata.take().map(|m| m.tags).unwrap_or_default(),
        response_format: raw
            .response_format
            .as_ref()
            .map_or(ResponseFormat::Text, |f| f.0),
        tools: raw.tools.unwrap_or(false),
        contract,
    }
}

/// One entry whose request keys are checked, for the checks of its kind.
struct Entry<'a> {
    ctx: &'a Ctx<'a>,
    /// `traffic[i]`.
    path: &'a str,
    raw: &'a RawTraffic,
    /// The scenario's.
    duration: Duration,
    input_tokens: TokenRange,
}

impl Entry<'_> {
    fn error(&self, key: &str, message: impl Into<String>) -> ScenarioError {
        self.ctx.error(&format!("{}.{key}", self.path), message)
    }

    /// An explicit request (`at`): one instant, one size, streamed or not.
    fn explicit(
        &self,
        when: HumanDuration,
        template: RequestTemplate,
    ) -> Result<ExplicitRequest, ScenarioError> {
        let raw = self.raw;
        for (key, set) in [
            ("from", raw.from.is_some()),
            ("to", raw.to.is_some()),
            ("arrival", raw.arrival.is_some()),
        ] {
            if set {
                return Err(self.error(
                    key,
                    format!(
                        "`{key}` belongs to a stream (with `rate`); an explicit request has `at`"
                    ),
                ));
            }
        }
        if when.0 > self.duration {
            return Err(self.error(
                "at",
                format!(
                    "at {when} is after the scenario's duration ({})",
                    format_duration(self.duration)
                ),
            ));
        }
        if self.input_tokens.min != self.input_tokens.max {
            return Err(self.error(
                "input_tokens",
                "an explicit request has one size: a number, not a range",
            ));
        }
        if raw.output_tokens.is_some_and(|r| !r.is_fixed()) {
            return Err(self.error(
                "output_tokens",
                "an explicit request has one answer length: a number, not a range",
            ));
        }
        let stream = match &raw.stream {
            None => false,
            Some(StreamShare {
                share,
                written_as_bool: true,
            }) => *share >= 1.0,
            Some(StreamShare { share, .. }) => {
                return Err(self.error(
                    "stream",
                    format!(
                        "an explicit request is streamed or not: true or false; a share \
                         ({share}) belongs to a generated stream (with `rate`)"
                    ),
                ));
            }
        };
        Ok(ExplicitRequest {
            at: when.0,
            count: raw.count.as_ref().map_or(1, |c| c.0),
            input_tokens: self.input_tokens.min,
            stream,
            output_tokens: raw.output_tokens.map(|r| r.min),
            template,
        })
    }

    /// A generated stream (`rate`, or `stages` as `ramp`): a span within the duration.
    fn stream(
        &self,
        rate_per_sec: f64,
        ramp: Option<Ramp>,
        template: RequestTemplate,
    ) -> Result<TrafficStream, ScenarioError> {
        let raw = self.raw;
        if raw.count.is_some() {
            return Err(self.error(
                "count",
                "`count` belongs to an explicit request (with `at`); a stream has `rate`",
            ));
        }
        let from = raw.from.map_or(Duration::ZERO, |d| d.0);
        let to = match &ramp {
            Some(_) if raw.to.is_some() => {
                return Err(self.error(
                    "to",
                    "a ramping stream ends with its last stage; `to` conflicts with `stages` \
                     (lengthen or add a stage instead)",
                ));
            }
            Some(ramp) => {
                let end = from.saturating_add(ramp.total());
                if end > self.duration {
                    return Err(self.error(
                        "stages",
                        format!(
                            "the stages end at {} (from {} plus their durations), after the \
                             scenario's duration ({})",
                            format_duration(end),
                            format_duration(from),
                            format_duration(self.duration)
                        ),
                    ));
                }
                end
            }
            None => raw.to.map_or(self.duration, |d| d.0),
        };
        if to > self.duration {
            return Err(self.error(
                "to",
                format!(
                    "to {} is after the scenario's duration ({})",
                    format_duration(to),
                    format_duration(self.duration)
                ),
            ));
        }
        if from >= to {
            return Err(self.error(
                "from",
                format!(
                    "from {} must be before to {}",
                    format_duration(from),
                    format_duration(to)
                ),
            ));
        }
        Ok(TrafficStream {
            rate_per_sec,
            from,
            to,
            arrival: raw.arrival.unwrap_or_default(),
            input_tokens: self.input_tokens,
            stream: raw.stream.as_ref().map_or(0.0, |s| s.share),
            output_tokens: raw.output_tokens,
            template,
            ramp,
        })
    }
}

/// A warning when traffic sets `models: [...]` under a profile that does not walk them (any
/// but `profile: multigrid`): the key then does nothing.
fn unread_models(router: &RouterConfig, traffic: &[TrafficSpec]) -> Option<UnreadKey> {
    let profile = router.settings.profile;
    if profile.is_some_and(Profile::walks_candidates) {
        return None;
    }
    let i = traffic
        .iter()
        .position(|t| !t.template().models.is_empty())?;
    Some(UnreadKey::new(
        format!("traffic[{i}].models"),
        "read by profile: multigrid and contract only; it does nothing here",
    ))
}

/// A warning when traffic names a `workload` under a profile that does not read contracts
/// (any but `profile: contract`): nothing is filtered or validated then.
fn unread_workloads(router: &RouterConfig, traffic: &[TrafficSpec]) -> Option<UnreadKey> {
    let profile = router.settings.profile;
    if profile.is_some_and(Profile::reads_contracts) {
        return None;
    }
    let i = traffic
        .iter()
        .position(|t| t.template().contract.is_some())?;
    Some(UnreadKey::new(
        format!("traffic[{i}].workload"),
        "read by profile: contract only; requests carry the contract, but nothing filters or \
         validates by it here",
    ))
}
