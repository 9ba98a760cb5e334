//! What drive asks the router and the providers around the traffic: whether the router is up
//! ([`wait_for`]), whether it routes to the scenario's deployments ([`check_routes`]), its name
//! and version ([`identify`]), and the connection that starts a running `serve`'s clock
//! ([`hold_providers_clock`]).

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::time::Duration;

use serde_json::Value;
use tokio::time::Instant;

use super::error::DriveError;
use super::load::{self, Client, Target};
use routersim_sim::scenario::Scenario;

/// Polls every replica until each answers HTTP at all (any status).
pub async fn wait_for(client: &Client, wait: Duration) -> Result<(), DriveError> {
    let deadline = Instant::now() + wait;
    for target in &client.replicas {
        let path = format!("{}/health/liveliness", target.root);
        loop {
            if load::get_from(client, target, &path).await.is_some() {
                break;
            }
            if Instant::now() >= deadline {
                return Err(DriveError::NotReady {
                    target: target.url.clone(),
                    waited: wait,
                });
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }
    Ok(())
}

/// The target's name and version, when it says: LiteLLM's `/health/readiness` carries
/// `litellm_version` when public details are allowed, its `/health/readiness/details` (with
/// the API key) always; otherwise the `server` header of the answer. (Its `/openapi.json` names
/// it too, but takes seconds of the proxy's CPU the first time: never asked.)
pub async fn identify(client: &Client) -> (Option<String>, Option<String>) {
    let root = &client.target.root;
    let mut server = None;
    for path in ["/health/readiness", "/health/readiness/details"] {
        let Some((status, headers, body)) = load::get(client, &format!("{root}{path}")).await
        else {
            continue;
        };
        if status == 200
            && let Ok(json) = serde_json::from_slice::<Value>(&body)
            && let Some(version) = json.get("litellm_version").and_then(Value::as_str)
        {
            return (Some("litellm".to_string()), Some(version.to_string()));
        }
        server = server.or_else(|| {
            headers
                .get(http::header::SERVER)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        });
    }
    match server.as_deref().and_then(|s| s.split_once('/')) {
        Some((name, version)) => (Some(name.to_string()), Some(version.to_string())),
        None => (server, None),
    }
}

/// Checks, before any request is sent, that the router routes to the scenario's deployments,
/// from what it says of its own (LiteLLM's `GET /v1/model/info`, with the API key: each
/// deployment's `model_info.id` and `litellm_params.api_base`). A router that names none of
/// the scenario's deployment ids, or (in-process providers at `providers`) whose deployments
/// all point at another address — a router started from another scenario's config, or from
/// an earlier run's — is refused. A router that does not say (routersim's proxy, a 404) is
/// checked after the run instead, by the deployments its answers name. Returns a warning when
/// only some of its deployments are the scenario's.
pub async fn check_routes(
    client: &Client,
    scenario: &Scenario,
    providers: Option<SocketAddr>,
) -> Result<Option<String>, DriveError> {
    // A router answers its own admin route at once; one that does not within a second (or a
    // relay to providers not started yet) is checked after the run instead.
    let path = format!("{}/v1/model/info", client.target.root);
    let probe = load::get_within(client, &client.target, &path, Duration::from_secs(1));
    let Some((200, _, body)) = probe.await else {
        return Ok(None);
    };
    let Ok(json) = serde_json::from_slice::<Value>(&body) else {
        return Ok(None);
    };
    let Some(entries) = json.get("data").and_then(Value::as_array) else {
        return Ok(None);
    };
    let ours: BTreeSet<&str> = scenario.router.deployments.iter().map(|d| &*d.id).collect();
    let ids: BTreeSet<&str> = entries
        .iter()
        .filter_map(|e| e.get("model_info")?.get("id")?.as_str())
        .collect();
    let target = &client.target.url;
    let list = |set: &BTreeSet<&str>| set.iter().copied().collect::<Vec<_>>().join(", ");
    if !ids.is_empty() && ids.is_disjoint(&ours) {
        return Err(DriveError::NotTheScenario(format!(
            "{target} routes to deployments {} and none of the scenario's ({}): a router started \
             from another config? Restart it from this scenario's config (--emit-litellm-config)",
            list(&ids),
            list(&ours)
        )));
    }
    if let Some(addr) = providers {
        let bases: Vec<&str> = entries
            .iter()
            .filter_map(|e| e.get("litellm_params")?.get("api_base")?.as_str())
            .collect();
        let here = addr.to_string();
        if !bases.is_empty() && !bases.iter().any(|b| b.contains(&here)) {
            return Err(DriveError::NotTheScenario(format!(
                "{target} routes to {} and not to this run's providers (http://{here}): a \
                 router started from an earlier run's config? Restart it from the config this \
                 run writes (--emit-litellm-config)",
                bases.join(", ")
            )));
        }
    }
    let foreign: BTreeSet<&str> = ids.difference(&ours).copied().collect();
    Ok((!foreign.is_empty()).then(|| {
        format!(
            "{target} also routes to deployments the scenario does not have: {}",
            list(&foreign)
        )
    }))
}

/// Opens a connection to a running `serve` (`--providers`) at the run's t = 0 and returns it:
/// `serve` starts its fault timeline at its first connection and, past the scenario's
/// duration, serves until that connection closes (see
/// [`crate::serve::first_connection`]); drop it once the last request is done.
pub async fn hold_providers_clock(providers: &Target) -> Result<tokio::net::TcpStream, DriveError> {
    let connect = tokio::net::TcpStream::connect(providers.addr);
    match tokio::time::timeout(Duration::from_secs(5), connect).await {
        Ok(Ok(stream)) => Ok(stream),
        Ok(Err(e)) => Err(DriveError::Url(format!(
            "--providers {}: no server there ({e})",
            providers.url
        ))),
        Err(_) => Err(DriveError::Url(format!(
            "--providers {}: no answer to a connection within 5 s",
            providers.url
        ))),
    }
}
