//! A stream oracle scenario (`tools/litellm-oracle/stream/scenarios/*.json`): the
//! `litellm.Router` kwargs, per-deployment stream scripts and the requests, read as
//! `stream_oracle.py` reads them.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::error::OracleError;

/// An error a scripted stream raises, and when.
#[derive(Clone, Debug, PartialEq)]
pub struct ScriptedError {
    /// The LiteLLM exception class.
    pub class: String,
    /// Its status, when the script gives one.
    pub status: Option<u16>,
    /// Raised after this many content chunks (0: before the first).
    pub after: u32,
}

/// One scripted outcome: a stream (`chunks` set) or a non-streamed answer.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StreamScript {
    /// Content chunks (`<dep>:<i> `); `None`: not a stream entry (an up-front answer).
    pub chunks: Option<u32>,
    /// The error it raises (for a non-stream entry: at once).
    pub error: Option<ScriptedError>,
    /// `stall: {after, seconds}`: silence before chunk `after`.
    pub stall: Option<(u32, f64)>,
    /// `first_delay`: silence before the first item.
    pub first_delay: Option<f64>,
    /// `inter_chunk`: silence before each content chunk.
    pub inter_chunk: Option<f64>,
    /// `role_only_first`: a role-only delta comes first.
    pub role_only_first: bool,
    /// `no_finish`: the last chunk carries no finish reason.
    pub no_finish: bool,
    /// What only an `openai_wire` deployment's script says (see [`WireScript`]).
    pub wire: WireScript,
}

/// The script keys of a deployment served through LiteLLM's real OpenAI provider
/// (`openai_wire`): an SSE body, or an HTTP error.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WireScript {
    /// `role_first` (default true): OpenAI's role-only first chunk.
    pub role_first: Option<bool>,
    /// `error_frame_after: K` with its `code`: an SSE error object inside the 200.
    pub error_frame_after: Option<(u32, u16)>,
    /// `read_error_after: K`: the connection resets mid-body.
    pub read_error_after: Option<u32>,
    /// `read_timeout_after: K`: a socket read timeout mid-body.
    pub read_timeout_after: Option<u32>,
    /// `truncate_after: K`: the body ends with neither a finish reason nor `[DONE]`.
    pub truncate_after: Option<u32>,
    /// `status` (no `error`): an HTTP error instead of a stream, with `retry_after`.
    pub status: Option<u16>,
    /// `retry_after`: the HTTP error's Retry-After header.
    pub retry_after: Option<String>,
}

/// A request of the scenario.
#[derive(Clone, Debug, Default)]
pub struct StreamRequest {
    /// `model`.
    pub model: String,
    /// `stream`.
    pub stream: bool,
    /// `max_tokens`, else `max_completion_tokens` (both are the output ceiling a
    /// continuation lowers; the engine calls it `max_tokens`).
    pub max_tokens: Option<u32>,
    /// `response_format` asks for JSON.
    pub json: bool,
    /// `num_retries`.
    pub num_retries: Option<u32>,
}

/// A parsed stream scenario.
#[derive(Clone, Debug)]
pub struct StreamScenario {
    /// `name`, else the file stem.
    pub name: String,
    /// The `litellm.Router(**router)` kwargs.
    pub router: Map<String, Value>,
    /// Scripts per deployment id (the last entry repeats).
    pub scripts: BTreeMap<String, Vec<StreamScript>>,
    /// The requests, `repeat` expanded.
    pub requests: Vec<StreamRequest>,
    /// `openai_wire`: deployments served through LiteLLM's real OpenAI provider.
    pub openai_wire: Vec<String>,
}

/// Request keys the harness models; any other is refused (it would do nothing).
const REQUEST_KEYS: [&str; 11] = [
    "model",
    "stream",
    "max_tokens",
    "max_completion_tokens",
    "response_format",
    "num_retries",
    "messages",
    "note",
    "expect",
    "repeat",
    "call",
];

/// Script keys the harness models.
const SCRIPT_KEYS: [&str; 17] = [
    "role_first",
    "error_frame_after",
    "code",
    "read_error_after",
    "read_timeout_after",
    "truncate_after",
    "retry_after",
    "chunks",
    "error",
    "status",
    "after",
    "stall",
    "first_delay",
    "inter_chunk",
    "role_only_first",
    "no_finish",
    "honor_timeout",
];

impl StreamScenario {
    /// Reads a scenario from its JSON text; `stem` names it when it has no `name`.
    pub fn parse(text: &str, stem: &str) -> Result<Self, OracleError> {
        let root: Value = serde_json::from_str(text)
            .map_err(|e| OracleError::new(stem, format!("not JSON: {e}")))?;
        let bad = |what: String| OracleError::new(stem, what);
        let name = root
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or(stem)
            .to_string();
        let router = root
            .get("router")
            .and_then(Value::as_object)
            .cloned()
            .ok_or_else(|| bad("`router` must be an object".into()))?;
        let mut scripts = BTreeMap::new();
        if let Some(map) = root.get("scripts").and_then(Value::as_object) {
            for (id, list) in map {
                let list = list
                    .as_array()
                    .ok_or_else(|| bad(format!("scripts.{id} must be a list")))?;
                let entries = list
                    .iter()
                    .map(|o| script(o).map_err(|m| bad(format!("scripts.{id}: {m}"))))
                    .collect::<Result<Vec<_>, _>>()?;
                scripts.insert(id.clone(), entries);
            }
        }
        let mut requests = Vec::new();
        for (i, r) in root
            .get("requests")
            .and_then(Value::as_array)
            .ok_or_else(|| bad("`requests` must be a list".into()))?
            .iter()
            .enumerate()
        {
            request(r, &mut requests).map_err(|m| bad(format!("requests[{i}]: {m}")))?;
        }
        let openai_wire = root
            .get("openai_wire")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        Ok(Self {
            name,
            router,
            scripts,
            requests,
            openai_wire,
        })
    }
}

fn count(v: &Value, key: &str) -> Result<Option<u32>, String> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(n) => n
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .map(Some)
            .ok_or(format!("`{key}` must be a count")),
    }
}

fn seconds(v: Option<&Value>, key: &str) -> Result<Option<f64>, String> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(s) => s
            .as_f64()
            .filter(|s| s.is_finite() && *s >= 0.0)
            .map(Some)
            .ok_or(format!("`{key}` must be seconds")),
    }
}

fn script(v: &Value) -> Result<StreamScript, String> {
    let map = v.as_object().ok_or("a script entry must be an object")?;
    if let Some(key) = map
        .keys()
        .find(|k| !SCRIPT_KEYS.contains(&k.as_str()) && k.as_str() != "ok")
    {
        return Err(format!("script key `{key}` is not modelled by the harness"));
    }
    let error = match v.get("error").and_then(Value::as_str) {
        None => None,
        Some(class) => Some(ScriptedError {
            class: class.to_string(),
            status: count(v, "status")?.and_then(|s| u16::try_from(s).ok()),
            after: count(v, "after")?.unwrap_or(0),
        }),
    };
    let stall = match v.get("stall") {
        None | Some(Value::Null) => None,
        Some(s) => Some((
            count(s, "after")?.unwrap_or(0),
            seconds(s.get("seconds"), "stall.seconds")?.unwrap_or(0.0),
        )),
    };
    let flag = |key: &str| v.get(key).and_then(Value::as_bool).unwrap_or(false);
    let status = count(v, "status")?.and_then(|s| u16::try_from(s).ok());
    let wire = WireScript {
        role_first: v.get("role_first").and_then(Value::as_bool),
        error_frame_after: match count(v, "error_frame_after")? {
            None => None,
            Some(k) => Some((
                k,
                count(v, "code")?
                    .and_then(|c| u16::try_from(c).ok())
                    .unwrap_or(529),
            )),
        },
        read_error_after: count(v, "read_error_after")?,
        read_timeout_after: count(v, "read_timeout_after")?,
        truncate_after: count(v, "truncate_after")?,
        status: status.filter(|_| error.is_none()),
        retry_after: match v.get("retry_after") {
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Number(n)) => Some(n.to_string()),
            _ => None,
        },
    };
    Ok(StreamScript {
        wire,
        chunks: count(v, "chunks")?,
        error,
        stall,
        first_delay: seconds(v.get("first_delay"), "first_delay")?,
        inter_chunk: seconds(v.get("inter_chunk"), "inter_chunk")?,
        role_only_first: flag("role_only_first"),
        no_finish: flag("no_finish"),
    })
}

fn request(v: &Value, out: &mut Vec<StreamRequest>) -> Result<(), String> {
    let map = v.as_object().ok_or("a request must be an object")?;
    if let Some(key) = map.keys().find(|k| !REQUEST_KEYS.contains(&k.as_str())) {
        return Err(format!(
            "request key `{key}` is not modelled by the harness"
        ));
    }
    let json = match map.get("response_format") {
        None | Some(Value::Null) => false,
        Some(f) => {
            let kind = f.get("type").and_then(Value::as_str).unwrap_or_default();
            kind.starts_with("json")
        }
    };
    let spec = StreamRequest {
        model: map
            .get("model")
            .and_then(Value::as_str)
            .ok_or("a request needs `model`")?
            .to_string(),
        stream: map.get("stream").and_then(Value::as_bool).unwrap_or(false),
        max_tokens: count(v, "max_tokens")?.or(count(v, "max_completion_tokens")?),
        json,
        num_retries: count(v, "num_retries")?,
    };
    let repeat = map.get("repeat").and_then(Value::as_u64).unwrap_or(1);
    for _ in 0..repeat {
        out.push(spec.clone());
    }
    Ok(())
}
