//! The decisions of one request, in a form both sides are read into: the trace of real
//! LiteLLM ([`from_trace`]) and routersim's events ([`crate::replay`]).

use serde_json::Value;

use crate::error::OracleError;
use crate::provider::kind_of_class;

/// The most jitter LiteLLM adds to a wait (`0.75 · random.random()`).
pub const JITTER: f64 = 0.75;

/// One provider attempt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attempt {
    /// The deployment called.
    pub deployment: String,
    /// The model group served.
    pub group: String,
    /// `ok` or the failure kind (`rate_limit`, ...).
    pub outcome: String,
}

impl std::fmt::Display for Attempt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}={}", self.group, self.deployment, self.outcome)
    }
}

/// How a request ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum End {
    /// Served by this deployment.
    Ok(String),
    /// Failed with this kind.
    Failed(String),
}

/// One request's decisions. Waits of zero are left out on both sides (routersim reports a
/// wait only when there is one).
#[derive(Clone, Debug, Default)]
pub struct Decisions {
    /// Attempts, in order.
    pub attempts: Vec<Attempt>,
    /// Waits in seconds: LiteLLM's base (before jitter), or routersim's whole wait.
    pub waits: Vec<f64>,
    /// Fallback hops `(from, to)`, order fallbacks and failover hops included.
    pub hops: Vec<(String, String)>,
    /// Cooldowns set `(deployment, seconds)`, one per failure that set one.
    pub cooldowns: Vec<(String, f64)>,
    /// The end.
    pub end: Option<End>,
    /// `x-litellm-attempted-retries` (successes only).
    pub attempted_retries: Option<u64>,
    /// `x-litellm-attempted-fallbacks` (successes only).
    pub attempted_fallbacks: Option<u64>,
}

/// Reads each request of a trace (the oracle's `results/<scenario>.json`).
pub fn from_trace(scenario: &str, trace: &Value) -> Result<Vec<Decisions>, OracleError> {
    let err = |m: &str| OracleError::new(scenario, format!("trace: {m}"));
    let requests = trace
        .get("requests")
        .and_then(Value::as_array)
        .ok_or_else(|| err("`requests` must be a list"))?;
    // A `{"wait": s}` step is recorded among the requests, with no timeline.
    requests
        .iter()
        .filter(|r| r.get("wait").is_none())
        .map(|r| request(r).map_err(|m| err(&m)))
        .collect()
}

fn text(v: &Value, key: &str) -> Result<String, String> {
    v.get(key)
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| format!("an entry lacks `{key}`"))
}

fn status(v: &Value) -> Option<u16> {
    v.get("status")
        .and_then(Value::as_u64)
        .and_then(|s| u16::try_from(s).ok())
}

fn request(r: &Value) -> Result<Decisions, String> {
    let mut d = Decisions::default();
    for e in r
        .get("timeline")
        .and_then(Value::as_array)
        .ok_or("a request lacks `timeline`")?
    {
        match e.get("type").and_then(Value::as_str) {
            Some("attempt") => {
                let o = e.get("outcome").ok_or("an attempt lacks `outcome`")?;
                let outcome = match o.get("error").and_then(Value::as_str) {
                    None => "ok".to_string(),
                    Some(class) => kind_of_class(class, status(o)).as_str().to_string(),
                };
                d.attempts.push(Attempt {
                    deployment: text(e, "deployment_id")?,
                    group: text(e, "model_group")?,
                    outcome,
                });
            }
            Some("sleep") => {
                let seconds = e.get("seconds").and_then(Value::as_f64).unwrap_or(0.0);
                let base = e.get("base_seconds").and_then(Value::as_f64);
                if seconds > 0.0 {
                    d.waits.push(base.unwrap_or(seconds));
                }
            }
            Some("fallback") => d.hops.push((text(e, "from")?, text(e, "to")?)),
            Some("cooldown_set") => d.cooldowns.push((
                text(e, "deployment_id")?,
                e.get("cooldown_time")
                    .and_then(Value::as_f64)
                    .unwrap_or(0.0),
            )),
            _ => {}
        }
    }
    let result = r.get("result").ok_or("a request lacks `result`")?;
    if result.get("ok").and_then(Value::as_bool) == Some(true) {
        d.end = Some(End::Ok(text(result, "deployment_id")?));
        d.attempted_retries = result
            .get("x-litellm-attempted-retries")
            .and_then(Value::as_u64);
        d.attempted_fallbacks = result
            .get("x-litellm-attempted-fallbacks")
            .and_then(Value::as_u64);
    } else {
        let class = text(result, "exception")?;
        d.end = Some(End::Failed(
            kind_of_class(&class, status(result)).as_str().to_string(),
        ));
    }
    Ok(d)
}
