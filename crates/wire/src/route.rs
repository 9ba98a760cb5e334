//! Paths to a deployment and a wire format.
//!
//! One listener serves every deployment under `/d/<deployment_id>/…` (the id percent-encoded
//! when it has characters outside `[A-Za-z0-9._~-]`); a per-deployment listener
//! ([`Mount::Deployment`]) serves the same paths without the prefix, for clients that cannot
//! take one. Under the prefix (or on such a listener):
//!
//! | path | format |
//! |---|---|
//! | `POST /v1/chat/completions` (also `/chat/completions`) | OpenAI |
//! | `POST /v1/messages` | Anthropic |
//! | `POST /openai/deployments/<name>/chat/completions?api-version=…` | Azure OpenAI |
//! | `GET /v1/models` (also `/models`) | the deployment's model |
//!
//! and `GET /v1/models` at the root of the shared listener lists every deployment. `GET
//! /metrics` at the root of the shared listener is the server's own Prometheus exposition: no
//! provider API has that path (they all live under `/v1/…`, `/chat/…` or `/openai/…`, and
//! under `/d/<id>/` here), so it cannot shadow a call.

use std::sync::Arc;

pub use crate::format::WireFormat as Format;

/// The path of the server's own metrics, on the shared listener.
pub const METRICS_PATH: &str = "/metrics";

/// What a listener serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mount {
    /// Every deployment, under `/d/<id>/`.
    Shared,
    /// One deployment (by index), at the root.
    Deployment(usize),
}

/// What a request asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Endpoint {
    /// A completion from the deployment at this index, in this format.
    Chat(usize, Format),
    /// The models of one deployment (`Some`) or of all (`None`).
    Models(Option<usize>),
    /// The server's Prometheus metrics (not a provider call).
    Metrics,
}

/// Why a path has no endpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RouteError {
    /// No endpoint has this method and path.
    UnknownPath,
    /// `/d/<id>/` names no deployment.
    UnknownDeployment(String),
}

/// The endpoint of `method` + `path` (no query) on a listener mounted at `mount`; `ids` are the
/// deployment ids in config order.
pub fn route(
    method: &http::Method,
    path: &str,
    mount: Mount,
    ids: &[Arc<str>],
) -> Result<Endpoint, RouteError> {
    let (index, rest) = match mount {
        Mount::Deployment(index) => (index, path),
        Mount::Shared => {
            if path == "/v1/models" || path == "/models" {
                return expect_method(method, &http::Method::GET, Endpoint::Models(None));
            }
            if path == METRICS_PATH {
                return expect_method(method, &http::Method::GET, Endpoint::Metrics);
            }
            let Some(after) = path.strip_prefix("/d/") else {
                return Err(RouteError::UnknownPath);
            };
            let (segment, rest) = after.split_at(after.find('/').unwrap_or(after.len()));
            let id = percent_decode(segment).ok_or(RouteError::UnknownPath)?;
            let index = ids
                .iter()
                .position(|d| **d == *id)
                .ok_or(RouteError::UnknownDeployment(id))?;
            (index, rest)
        }
    };
    let rest = rest.trim_end_matches('/');
    let endpoint = match rest {
        "/v1/chat/completions" | "/chat/completions" => Endpoint::Chat(index, Format::OpenAi),
        "/v1/messages" => Endpoint::Chat(index, Format::Anthropic),
        "/v1/models" | "/models" => {
            return expect_method(method, &http::Method::GET, Endpoint::Models(Some(index)));
        }
        _ => match rest
            .strip_prefix("/openai/deployments/")
            .and_then(|r| r.strip_suffix("/chat/completions"))
        {
            Some(name) if !name.is_empty() && !name.contains('/') => {
                Endpoint::Chat(index, Format::Azure)
            }
            _ => return Err(RouteError::UnknownPath),
        },
    };
    expect_method(method, &http::Method::POST, endpoint)
}

fn expect_method(
    method: &http::Method,
    wanted: &http::Method,
    endpoint: Endpoint,
) -> Result<Endpoint, RouteError> {
    if method == wanted {
        Ok(endpoint)
    } else {
        Err(RouteError::UnknownPath)
    }
}

/// Whether a byte may stand in a path segment unencoded.
fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

/// A deployment id as a path segment: percent-encoded outside `[A-Za-z0-9._~-]`.
pub fn percent_encode(id: &str) -> String {
    let mut out = String::with_capacity(id.len());
    for &b in id.as_bytes() {
        if is_unreserved(b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Decodes `%XX` escapes; `None` when an escape is broken or the result is not UTF-8.
pub fn percent_decode(segment: &str) -> Option<String> {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = segment.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids() -> Vec<Arc<str>> {
        vec![Arc::from("gpt-a"), Arc::from("eu/claude 1")]
    }

    #[test]
    fn paths_pick_deployment_and_format() {
        let post = http::Method::POST;
        let get = http::Method::GET;
        let ids = ids();
        let r = |m: &http::Method, p: &str| route(m, p, Mount::Shared, &ids);
        assert_eq!(
            r(&post, "/d/gpt-a/v1/chat/completions"),
            Ok(Endpoint::Chat(0, Format::OpenAi))
        );
        assert_eq!(
            r(&post, "/d/eu%2Fclaude%201/v1/messages"),
            Ok(Endpoint::Chat(1, Format::Anthropic))
        );
        assert_eq!(
            r(&post, "/d/gpt-a/openai/deployments/gpt-4o/chat/completions"),
            Ok(Endpoint::Chat(0, Format::Azure))
        );
        assert_eq!(r(&get, "/v1/models"), Ok(Endpoint::Models(None)));
        assert_eq!(r(&get, "/d/gpt-a/v1/models"), Ok(Endpoint::Models(Some(0))));
        assert_eq!(r(&get, "/metrics"), Ok(Endpoint::Metrics));
        assert_eq!(r(&post, "/metrics"), Err(RouteError::UnknownPath));
        // A deployment's own listener has no metrics: `/metrics` is a path of the shared one.
        assert_eq!(
            route(&get, "/metrics", Mount::Deployment(0), &ids),
            Err(RouteError::UnknownPath)
        );
        assert_eq!(
            r(&post, "/d/nope/v1/chat/completions"),
            Err(RouteError::UnknownDeployment("nope".into()))
        );
        assert_eq!(
            r(&post, "/v1/chat/completions"),
            Err(RouteError::UnknownPath)
        );
        assert_eq!(
            r(&get, "/d/gpt-a/v1/chat/completions"),
            Err(RouteError::UnknownPath)
        );
        assert_eq!(
            route(&post, "/v1/messages", Mount::Deployment(1), &ids),
            Ok(Endpoint::Chat(1, Format::Anthropic))
        );
    }

    #[test]
    fn ids_round_trip_through_percent_encoding() {
        for id in ["gpt-a", "eu/claude 1", "ü%x"] {
            assert_eq!(percent_decode(&percent_encode(id)).as_deref(), Some(id));
        }
        assert_eq!(percent_encode("a.b_c~d-e"), "a.b_c~d-e");
        assert_eq!(percent_decode("%4"), None);
    }
}
