//! An oracle scenario file (`tools/litellm-oracle/scenarios/*.json`): the `litellm.Router`
//! kwargs, the per-deployment scripts and the requests, read as the oracle reads them.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::error::OracleError;

/// One scripted outcome of a deployment call, after its `delay`.
#[derive(Clone, Debug, PartialEq)]
pub struct Scripted {
    /// The answer.
    pub outcome: Outcome,
    /// `delay`: seconds the call takes (virtual time).
    pub delay: f64,
}

/// A scripted answer.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// `{"ok": true}`.
    Ok,
    /// `{"error": class, "status"?, "retry_after"?, "headers"?}`.
    Error {
        /// The LiteLLM exception class (`RateLimitError`, `APIError`, ...).
        class: String,
        /// The status, when the script gives one.
        status: Option<u16>,
        /// The Retry-After header as the oracle sends it (a number is written as a string).
        retry_after: Option<String>,
        /// `retry_after_http_date_in`: the header is an HTTP-date that many seconds ahead.
        retry_after_date_in: Option<f64>,
    },
}

/// One step of the scenario's request list.
#[derive(Clone, Debug)]
pub enum Step {
    /// A request, run to its end before the next step.
    Request(RequestSpec),
    /// `{"wait": s}`: virtual time moves on.
    Wait(f64),
    /// `{"concurrent": [...]}`: requests started together.
    Concurrent(Vec<RequestSpec>),
}

/// A request: its model and the per-request kwargs routersim models.
#[derive(Clone, Debug)]
pub struct RequestSpec {
    /// `model`.
    pub model: String,
    /// `num_retries`, when the request sets it.
    pub num_retries: Option<u32>,
    /// `fallbacks`, when the request sets it: `[{group: [targets]}]` or `["target"]`.
    pub fallbacks: Option<Value>,
}

/// A parsed scenario.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// `name`, else the file stem.
    pub name: String,
    /// The `litellm.Router(**router)` kwargs.
    pub router: Map<String, Value>,
    /// Scripts per deployment id (the last outcome repeats; default `[ok]`).
    pub scripts: BTreeMap<String, Vec<Scripted>>,
    /// The steps, with `repeat` expanded.
    pub steps: Vec<Step>,
}

/// Request keys the harness understands; any other key is refused (it would do nothing).
const REQUEST_KEYS: [&str; 5] = ["model", "num_retries", "fallbacks", "call", "repeat"];

impl Scenario {
    /// Reads a scenario from its JSON text; `stem` names it when it has no `name`.
    pub fn parse(text: &str, stem: &str) -> Result<Self, OracleError> {
        let root: Value = serde_json::from_str(text)
            .map_err(|e| OracleError::new(stem, format!("not JSON: {e}")))?;
        let bad = |what: &str| OracleError::new(stem, what.to_string());
        let name = root
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or(stem)
            .to_string();
        let router = root
            .get("router")
            .and_then(Value::as_object)
            .cloned()
            .ok_or_else(|| bad("`router` must be an object"))?;
        let mut scripts = BTreeMap::new();
        if let Some(map) = root.get("scripts").and_then(Value::as_object) {
            for (id, list) in map {
                let list = list
                    .as_array()
                    .ok_or_else(|| bad(&format!("scripts.{id} must be a list")))?;
                let outcomes = list
                    .iter()
                    .map(|o| outcome(o).map_err(|m| bad(&format!("scripts.{id}: {m}"))))
                    .collect::<Result<Vec<_>, _>>()?;
                scripts.insert(id.clone(), outcomes);
            }
        }
        let mut steps = Vec::new();
        for (i, r) in root
            .get("requests")
            .and_then(Value::as_array)
            .ok_or_else(|| bad("`requests` must be a list"))?
            .iter()
            .enumerate()
        {
            step(r, &mut steps).map_err(|m| bad(&format!("requests[{i}]: {m}")))?;
        }
        Ok(Self {
            name,
            router,
            scripts,
            steps,
        })
    }
}

fn outcome(v: &Value) -> Result<Scripted, String> {
    let delay = match v.get("delay") {
        None | Some(Value::Null) => 0.0,
        Some(d) => d
            .as_f64()
            .filter(|d| d.is_finite() && *d >= 0.0 && *d < 1e6)
            .ok_or("`delay` must be seconds")?,
    };
    let outcome = answer(v)?;
    Ok(Scripted { outcome, delay })
}

fn answer(v: &Value) -> Result<Outcome, String> {
    if v.get("ok").and_then(Value::as_bool) == Some(true) {
        return Ok(Outcome::Ok);
    }
    let class = v
        .get("error")
        .and_then(Value::as_str)
        .ok_or("an outcome needs `ok: true` or `error`")?
        .to_string();
    let status = match v.get("status") {
        None | Some(Value::Null) => None,
        Some(s) => Some(
            s.as_u64()
                .and_then(|s| u16::try_from(s).ok())
                .ok_or("`status` must be an HTTP status")?,
        ),
    };
    let header = |v: &Value| match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    };
    let retry_after = v.get("retry_after").and_then(header).or_else(|| {
        v.get("headers")
            .and_then(Value::as_object)
            .and_then(|h| {
                h.iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case("retry-after"))
            })
            .and_then(|(_, v)| header(v))
    });
    let retry_after_date_in = v
        .get("retry_after_http_date_in")
        .and_then(Value::as_f64)
        .filter(|s| s.is_finite() && s.abs() < 1e9);
    Ok(Outcome::Error {
        class,
        status,
        retry_after,
        retry_after_date_in,
    })
}

fn step(v: &Value, out: &mut Vec<Step>) -> Result<(), String> {
    let map = v.as_object().ok_or("a step must be an object")?;
    if let Some(wait) = map.get("wait") {
        let secs = wait
            .as_f64()
            .filter(|s| s.is_finite() && *s >= 0.0 && *s < 1e6)
            .ok_or("`wait` must be seconds")?;
        out.push(Step::Wait(secs));
        return Ok(());
    }
    if let Some(list) = map.get("concurrent") {
        let mut specs = Vec::new();
        for r in list.as_array().ok_or("`concurrent` must be a list")? {
            let mut one = Vec::new();
            step(r, &mut one)?;
            for s in one {
                match s {
                    Step::Request(spec) => specs.push(spec),
                    _ => return Err("`concurrent` holds requests only".into()),
                }
            }
        }
        out.push(Step::Concurrent(specs));
        return Ok(());
    }
    if let Some(key) = map.keys().find(|k| !REQUEST_KEYS.contains(&k.as_str())) {
        return Err(format!(
            "request key `{key}` is not modelled by the harness"
        ));
    }
    let model = map
        .get("model")
        .and_then(Value::as_str)
        .ok_or("a request needs `model`")?
        .to_string();
    let num_retries = match map.get("num_retries") {
        None => None,
        Some(n) => Some(
            n.as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .ok_or("`num_retries` must be a count")?,
        ),
    };
    let repeat = map.get("repeat").and_then(Value::as_u64).unwrap_or(1);
    let spec = RequestSpec {
        model,
        num_retries,
        fallbacks: map.get("fallbacks").cloned(),
    };
    for _ in 0..repeat {
        out.push(Step::Request(spec.clone()));
    }
    Ok(())
}
