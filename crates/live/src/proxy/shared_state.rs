//! `router_settings.redis_host` / `redis_port` / `redis_password` / `redis_db` (or
//! `redis_url`): where `routersim proxy` keeps its cooldowns and allowed-fails counters when the
//! config names a Redis, as LiteLLM's proxy does — so several proxy replicas share them (see
//! `routersim_state_redis`).
//!
//! The engine's loader lists these keys as not modelled and never resolves values; the proxy
//! reads them from the config's tree here. `os.environ/NAME` values are resolved by the caller
//! (only the CLI reads the environment). [`connect_store`] connects the store and says on
//! stderr when it falls back to this replica's own state and when Redis answers again.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use routersim_config::load::parse_yaml;
use serde_json::Value;

use crate::redis::{HealthEvent, RedisOptions, RedisState};

/// The keys this module gives meaning to (dropped from the proxy's "not modelled" note).
pub const REDIS_KEYS: &[&str] = &[
    "router_settings.redis_url",
    "router_settings.redis_host",
    "router_settings.redis_port",
    "router_settings.redis_password",
    "router_settings.redis_db",
];

/// The Redis settings as the config states them (`os.environ/…` unresolved).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RedisSettings {
    /// `redis_url`.
    pub url: Option<String>,
    /// `redis_host`.
    pub host: Option<String>,
    /// `redis_port` (LiteLLM's default 6379).
    pub port: Option<String>,
    /// `redis_password`.
    pub password: Option<String>,
    /// `redis_db`.
    pub db: Option<String>,
}

/// A resolved Redis target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RedisTarget {
    /// The connection URL (may hold the password).
    pub url: String,
    /// The URL as it may be printed (password hidden).
    pub shown: String,
    /// The key it came from (`router_settings.redis_url` or `router_settings.redis_host`), for
    /// messages.
    pub key: &'static str,
}

fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// The settings of the config file at `path`, or `None` when it names no Redis.
pub fn redis_settings(path: &Path) -> Result<Option<RedisSettings>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let tree = parse_yaml(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(redis_settings_of(&tree))
}

/// The settings in a parsed config tree.
pub fn redis_settings_of(tree: &Value) -> Option<RedisSettings> {
    let rs = tree.get("router_settings")?;
    let get = |k: &str| rs.get(k).and_then(scalar);
    let settings = RedisSettings {
        url: get("redis_url"),
        host: get("redis_host"),
        port: get("redis_port"),
        password: get("redis_password"),
        db: get("redis_db"),
    };
    (settings.url.is_some() || settings.host.is_some()).then_some(settings)
}

/// `os.environ/NAME` through `env`; any other value as it is.
fn resolve(key: &str, value: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    match value.strip_prefix("os.environ/") {
        Some(name) => env(name).ok_or_else(|| {
            format!("router_settings.{key}: {value}: the environment variable {name} is not set")
        }),
        None => Ok(value.to_string()),
    }
}

impl RedisSettings {
    /// The URL to connect to, `os.environ/…` values read through `env`.
    pub fn target(&self, env: &dyn Fn(&str) -> Option<String>) -> Result<RedisTarget, String> {
        let opt =
            |key: &str, v: &Option<String>| v.as_deref().map(|v| resolve(key, v, env)).transpose();
        if let Some(url) = opt("redis_url", &self.url)? {
            let shown = hide_password(&url);
            return Ok(RedisTarget {
                url,
                shown,
                key: "router_settings.redis_url",
            });
        }
        let host = opt("redis_host", &self.host)?.unwrap_or_default();
        let port = opt("redis_port", &self.port)?.unwrap_or_else(|| "6379".into());
        if port.parse::<u16>().is_err() {
            return Err(format!(
                "router_settings.redis_port: {port:?} is not a port"
            ));
        }
        let db = opt("redis_db", &self.db)?
            .map(|db| format!("/{db}"))
            .unwrap_or_default();
        let auth = opt("redis_password", &self.password)?
            .map(|p| format!(":{}@", percent_encode(&p)))
            .unwrap_or_default();
        Ok(RedisTarget {
            url: format!("redis://{auth}{host}:{port}{db}"),
            shown: format!(
                "redis://{}{host}:{port}{db}",
                if auth.is_empty() { "" } else { "***@" }
            ),
            key: "router_settings.redis_host",
        })
    }
}

/// Connects the store for `deployment_ids` at `target` (a PING within 5 s, or an error naming
/// the settings key), its reads waiting at most `read_timeout`; its health changes are
/// printed on stderr.
pub async fn connect_store(
    target: &RedisTarget,
    deployment_ids: Vec<String>,
    read_timeout: Duration,
) -> Result<RedisState, String> {
    let mut options = RedisOptions::new(target.url.clone(), deployment_ids);
    options.read_timeout = read_timeout;
    let (shown, key) = (target.shown.clone(), target.key);
    options.on_health = Some(Arc::new(move |event: &HealthEvent| {
        eprintln!("{}", health_line(&shown, key, event));
    }));
    RedisState::connect(options).await.map_err(|e| {
        let why = e.to_string().replace(&target.url, &target.shown);
        format!("{}: {why}", target.key)
    })
}

/// The stderr line of a health change.
pub fn health_line(shown: &str, key: &str, event: &HealthEvent) -> String {
    match event {
        HealthEvent::Degraded { why } => format!(
            "warning: redis at {shown} ({key}) failed ({why}): falling back to this replica's \
             own state (cooldowns and allowed-fails counts not shared) until it answers again"
        ),
        HealthEvent::Recovered { after, resent } => format!(
            "redis at {shown} answers again after {:.3} s degraded: state shared again ({resent} \
             live cooldown{} written back)",
            after.as_secs_f64(),
            if *resent == 1 { "" } else { "s" }
        ),
    }
}

fn hide_password(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            format!("{}://***@{}", &url[..scheme], &url[at + 1..])
        }
        _ => url.to_string(),
    }
}

/// A password in the URL's userinfo: everything but unreserved characters escaped.
fn percent_encode(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn host_port_password_and_environment_values() {
        let tree = json!({"router_settings": {
            "redis_host": "os.environ/RH", "redis_port": 6390, "redis_password": "p@ss"}});
        let s = redis_settings_of(&tree).unwrap();
        let env = |name: &str| (name == "RH").then(|| "127.0.0.1".to_string());
        let t = s.target(&env).unwrap();
        assert_eq!(t.url, "redis://:p%40ss@127.0.0.1:6390");
        assert_eq!(t.shown, "redis://***@127.0.0.1:6390");
        let none = |_: &str| None;
        let err = s.target(&none).unwrap_err();
        assert!(err.contains("RH is not set"), "{err}");
    }

    #[test]
    fn no_redis_key_no_settings_and_a_bad_port_is_an_error() {
        assert_eq!(
            redis_settings_of(&json!({"router_settings": {"num_retries": 2}})),
            None
        );
        let s =
            redis_settings_of(&json!({"router_settings": {"redis_host": "h", "redis_port": "x"}}))
                .unwrap();
        assert!(s.target(&|_| None).unwrap_err().contains("redis_port"));
        let s = redis_settings_of(&json!({"router_settings": {"redis_host": "h"}})).unwrap();
        assert_eq!(s.target(&|_| None).unwrap().url, "redis://h:6379");
        assert_eq!(
            s.target(&|_| None).unwrap().key,
            "router_settings.redis_host"
        );
        let s =
            redis_settings_of(&json!({"router_settings": {"redis_url": "redis://h:1"}})).unwrap();
        assert_eq!(
            s.target(&|_| None).unwrap().key,
            "router_settings.redis_url"
        );
    }
}
