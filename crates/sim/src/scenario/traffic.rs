//! Checking the `traffic` section against the router: every model is routable, every
//! entry is either an explicit request or a stream, with its keys in range.
//!
//! Separate because it is the one cross-check between two sections, with many messages.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use routersim_engine::config::RouterConfig;
use routersim_engine::contract::Contract;
use routersim_engine::pattern::ModelPattern;
use routersim_engine::request::ResponseFormat;
use routersim_mock_providers::duration::format_duration;

use super::ScenarioError;
use super::contracts::{check_input_tokens, workload_contract};
use super::load::{Ctx, RawTraffic};
use super::values::StreamShare;
use crate::traffic::{
    DEFAULT_INPUT_TOKENS, ExplicitRequest, RequestTemplate, TokenRange, TrafficSpec, TrafficStream,
};

/// Whether traffic may ask for `model`: a model group, an alias, or a name a wildcard group
/// (`openai/*`, `*`) matches. An alias LiteLLM cannot route (a list, …) may be asked for too:
/// those requests fail, as they would in LiteLLM.
pub(super) fn model_known(router: &RouterConfig, model: &str) -> bool {
    router.settings.model_group_alias.contains_key(model)
        || router.settings.unroutable_aliases.contains_key(model)
        || router
            .deployments
            .iter()
            .any(|d| *d.model_name == *model || ModelPattern::new(&d.model_name).matches(model))
}

pub(super) fn model_groups(router: &RouterConfig) -> String {
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

pub(super) fn validate_traffic(
    ctx: &Ctx<'_>,
    i: usize,
    raw: RawTraffic,
    duration: Duration,
    router: &RouterConfig,
    contracts: &BTreeMap<String, Arc<Contract>>,
) -> Result<TrafficSpec, ScenarioError> {
    let path = format!("traffic[{i}]");
    let at = |key: &str| format!("{path}.{key}");
    let contract = workload_contract(ctx, &path, raw.workload.as_deref(), contracts)?;
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
        && n > routersim_config::load::MAX_NUM_RETRIES
    {
        return Err(ctx.error(
            &at("num_retries"),
            format!(
                "a retry count of at most {} is expected, found {n}",
                routersim_config::load::MAX_NUM_RETRIES
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
        contract,
    };
    let input_tokens = raw
        .input_tokens
        .unwrap_or(TokenRange::fixed(DEFAULT_INPUT_TOKENS));
    check_input_tokens(ctx, &path, template.contract.as_deref(), input_tokens.max)?;

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
