//! Where and how a deployment is called, and the dispatch over the three formats: the request
//! a client sends ([`Endpoint::request`]) and how an answer or a stream event reads
//! ([`decode_completion`], [`decode_event`]), each format's own code being in `openai/` and
//! `anthropic/`.

use std::collections::VecDeque;
use std::sync::Arc;

use bytes::Bytes;
use http::header::{ACCEPT, CONTENT_TYPE, HOST};
use http::{HeaderValue, Method, Uri};
use http_body_util::Full;
use serde_json::Value;

use routersim_config::ConfigError;
use routersim_engine::config::Deployment;
use routersim_engine::provider::ProviderCall;
use routersim_engine::request::Completion;
use routersim_engine::stream::StreamItem;

use crate::format::{MalformedEvent, WireFormat};
use crate::limits::MAX_OUTPUT_TOKENS;

/// OpenAI's API base when a deployment names none (LiteLLM's default).
pub const DEFAULT_OPENAI_API_BASE: &str = "https://api.openai.com/v1";
/// Anthropic's API base when a deployment names none (LiteLLM's
/// `AnthropicModelInfo.resolve_anthropic_api_base`).
pub const DEFAULT_ANTHROPIC_API_BASE: &str = "https://api.anthropic.com";
/// Azure's `api-version` when a deployment names none (LiteLLM 1.110.2's
/// `AZURE_DEFAULT_API_VERSION`, `litellm/__init__.py` l. 337). Azure has no default base: each
/// resource has its own endpoint, so an Azure deployment without `api_base` is refused.
pub const DEFAULT_AZURE_API_VERSION: &str = "2025-02-01-preview";
/// The `anthropic-version` header LiteLLM sends.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// Where and how one deployment is called: everything taken from its `litellm_params` once,
/// up front.
#[derive(Clone, Debug)]
pub struct Endpoint {
    /// The deployment's id.
    pub deployment_id: Arc<str>,
    /// Its format.
    pub format: WireFormat,
    /// The full request URI (`…/chat/completions`, `…/v1/messages`, Azure's with `api-version`).
    pub uri: Uri,
    /// The model name sent in the body.
    pub model: String,
    /// `litellm_params.api_key`, sent as the format's credential header.
    pub api_key: Option<String>,
}

impl Endpoint {
    /// Reads a deployment's `litellm_params`: `model` (format and name), `api_base` (else the
    /// format's default), `api_key`, `api_version` (Azure).
    ///
    /// `api_key` is sent as written: an `os.environ/NAME` reference is not resolved here (the
    /// engine reads no environment; a caller that wants it resolves the key before building
    /// the config).
    ///
    /// `index` is the deployment's place in `model_list`, for the error's YAML path.
    pub fn from_deployment(deployment: &Deployment, index: usize) -> Result<Self, ConfigError> {
        let param = |key: &str| deployment.params.get(key).and_then(Value::as_str);
        Self::new(
            Arc::clone(&deployment.id),
            &deployment.model,
            param("api_base"),
            param("api_key"),
            param("api_version"),
        )
        .map_err(|mut e| {
            e.path = format!("model_list[{index}].{}", e.path);
            e
        })
    }

    /// An endpoint from its parts (see [`Endpoint::from_deployment`]); an error's path is
    /// relative to the deployment (`litellm_params.api_base`).
    pub fn new(
        deployment_id: Arc<str>,
        model: &str,
        api_base: Option<&str>,
        api_key: Option<&str>,
        api_version: Option<&str>,
    ) -> Result<Self, ConfigError> {
        let (format, name) = WireFormat::from_model(model);
        let base = match (format, api_base) {
            (_, Some(base)) => base,
            (WireFormat::OpenAi, None) => DEFAULT_OPENAI_API_BASE,
            (WireFormat::Anthropic, None) => DEFAULT_ANTHROPIC_API_BASE,
            (WireFormat::Azure, None) => {
                return Err(ConfigError::new(
                    "litellm_params.api_base",
                    format!(
                        "missing: the Azure deployment {deployment_id:?} needs its resource's \
                         endpoint (e.g. https://NAME.openai.azure.com)"
                    ),
                ));
            }
        };
        let base = base.trim_end_matches('/');
        let url = match format {
            WireFormat::OpenAi => format!("{base}/chat/completions"),
            WireFormat::Anthropic if base.ends_with("/v1/messages") => base.to_string(),
            WireFormat::Anthropic => format!("{base}/v1/messages"),
            WireFormat::Azure => format!(
                "{base}/openai/deployments/{}/chat/completions?api-version={}",
                crate::route::percent_encode(name),
                api_version.unwrap_or(DEFAULT_AZURE_API_VERSION)
            ),
        };
        let bad_base = || {
            ConfigError::new(
                "litellm_params.api_base",
                format!(
                    "expected an absolute http(s) URL for deployment {deployment_id:?}, \
                     found {base:?}"
                ),
            )
        };
        let uri: Uri = url.parse().map_err(|_| bad_base())?;
        if uri.scheme().is_none() || uri.authority().is_none() {
            return Err(bad_base());
        }
        if api_key.is_some_and(|key| HeaderValue::from_str(key).is_err()) {
            // The key's value is never quoted: it is a secret.
            return Err(ConfigError::new(
                "litellm_params.api_key",
                "expected a key of visible ASCII characters (it is sent as an HTTP header)",
            ));
        }
        Ok(Self {
            deployment_id,
            format,
            uri,
            model: name.to_string(),
            api_key: api_key.map(str::to_string),
        })
    }

    /// The HTTP request for one call: origin-form path, `Host`, the format's credential header,
    /// the `x-routersim-*` hints and the JSON body.
    pub fn request(
        &self,
        call: &ProviderCall<'_>,
    ) -> Result<http::Request<Full<Bytes>>, http::Error> {
        // Serialising these bodies cannot fail: every key is a string.
        let body = match self.format {
            WireFormat::OpenAi | WireFormat::Azure => {
                serde_json::to_vec(&crate::openai::client::request_body(&self.model, call))
            }
            WireFormat::Anthropic => {
                serde_json::to_vec(&crate::anthropic::client::request_body(&self.model, call))
            }
        }
        .unwrap_or_default();
        let path = self
            .uri
            .path_and_query()
            .map_or("/", http::uri::PathAndQuery::as_str);
        let host = self
            .uri
            .authority()
            .map_or("", http::uri::Authority::as_str);
        let accept = if call.request.stream {
            "text/event-stream"
        } else {
            "application/json"
        };
        let mut builder = http::Request::builder()
            .method(Method::POST)
            .uri(path)
            .header(HOST, host)
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, accept);
        if let Some(key) = &self.api_key {
            builder = match self.format {
                WireFormat::OpenAi => builder.header("authorization", format!("Bearer {key}")),
                WireFormat::Anthropic => builder.header("x-api-key", key.as_str()),
                WireFormat::Azure => builder.header("api-key", key.as_str()),
            };
        }
        if self.format == WireFormat::Anthropic {
            builder = builder.header("anthropic-version", ANTHROPIC_VERSION);
        }
        let request = call.request;
        builder = builder
            .header("x-routersim-request-id", request.id)
            .header("x-routersim-attempt", call.attempt)
            .header("x-routersim-input-tokens", request.input_tokens)
            .header("x-routersim-prefill-tokens", request.prefill_tokens);
        if let Some(tokens) = request.output_tokens {
            builder = builder.header("x-routersim-output-tokens", tokens);
        }
        builder.body(Full::new(Bytes::from(body)))
    }
}

/// The `api_base` of a deployment served by routersim's fake-provider server at `origin`
/// (`http://127.0.0.1:PORT`, or any host when a connector routes by deployment index):
/// `{origin}/d/<id>/v1` for OpenAI, `{origin}/d/<id>` for Anthropic and Azure (whose paths
/// add `/v1/messages` and `/openai/deployments/…`), the id percent-encoded — the addressing
/// of the wire contract, as `routersim serve --emit-litellm-config` writes it for LiteLLM.
pub fn wire_server_api_base(origin: &str, deployment_id: &str, format: WireFormat) -> String {
    let origin = origin.trim_end_matches('/');
    let id = crate::route::percent_encode(deployment_id);
    match format {
        WireFormat::OpenAi => format!("{origin}/d/{id}/v1"),
        WireFormat::Anthropic | WireFormat::Azure => format!("{origin}/d/{id}"),
    }
}

/// Decodes a non-streamed 2xx body; `None` when it is not the format's shape, or when it
/// claims more output tokens than an answer may have
/// ([`MAX_OUTPUT_TOKENS`](crate::limits::MAX_OUTPUT_TOKENS)).
pub fn decode_completion(format: WireFormat, body: &[u8]) -> Option<Completion> {
    let value = || serde_json::from_slice::<Value>(body).ok();
    match format {
        WireFormat::OpenAi | WireFormat::Azure => {
            match crate::openai::completion_fast::read(body) {
                Some(typed) => typed,
                None => crate::openai::client::decode_completion(&value()?),
            }
        }
        WireFormat::Anthropic => crate::anthropic::client::decode_completion(&value()?),
    }
    .filter(|c| c.output_tokens <= MAX_OUTPUT_TOKENS)
}

/// Decodes one SSE event into the stream items it carries (none for pings, usage-only chunks
/// and the like; a content chunk followed by its finish reason gives two).
pub fn decode_event(
    format: WireFormat,
    event: Option<&str>,
    data: &str,
    out: &mut VecDeque<StreamItem>,
) -> Result<(), MalformedEvent> {
    let before = out.len();
    match format {
        WireFormat::OpenAi | WireFormat::Azure => {
            crate::openai::client::decode_event(format, data, out)?;
        }
        WireFormat::Anthropic => crate::anthropic::client::decode_event(event, data, out)?,
    }
    // A chunk claiming more tokens than an answer may have is not a chunk of one.
    let oversized = out
        .iter()
        .skip(before)
        .any(|item| matches!(item, StreamItem::Chunk(c) if c.tokens > MAX_OUTPUT_TOKENS));
    if oversized {
        out.truncate(before);
        return Err(MalformedEvent);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_pick_formats_and_bases_get_paths() {
        assert_eq!(
            WireFormat::from_model("anthropic/claude-3-5-sonnet"),
            (WireFormat::Anthropic, "claude-3-5-sonnet")
        );
        assert_eq!(
            WireFormat::from_model("gpt-4o"),
            (WireFormat::OpenAi, "gpt-4o")
        );
        assert_eq!(
            WireFormat::from_model("openai/gpt-4o"),
            (WireFormat::OpenAi, "gpt-4o")
        );
        let e = Endpoint::new("a".into(), "gpt-4o", None, None, None).unwrap();
        assert_eq!(e.uri, "https://api.openai.com/v1/chat/completions");
        let e = Endpoint::new(
            "a".into(),
            "anthropic/c",
            Some("http://h:1/d/a/"),
            None,
            None,
        )
        .unwrap();
        assert_eq!(e.uri, "http://h:1/d/a/v1/messages");
        let e = Endpoint::new(
            "a".into(),
            "azure/my dep",
            Some("http://h:1/d/a"),
            None,
            Some("v"),
        )
        .unwrap();
        assert_eq!(
            e.uri,
            "http://h:1/d/a/openai/deployments/my%20dep/chat/completions?api-version=v"
        );
        assert!(matches!(
            Endpoint::new("z".into(), "azure/x", None, None, None),
            Err(ConfigError { path, .. }) if path == "litellm_params.api_base"
        ));
        assert!(Endpoint::new("z".into(), "gpt", Some("not a url"), None, None).is_err());
        assert_eq!(
            wire_server_api_base("http://h:1/", "a/b c", WireFormat::OpenAi),
            "http://h:1/d/a%2Fb%20c/v1"
        );
        assert_eq!(
            wire_server_api_base("http://h:1", "x", WireFormat::Azure),
            "http://h:1/d/x"
        );
    }

    #[test]
    fn counts_over_the_cap_are_not_an_answer() {
        let body = |n: u64| {
            format!(
                r#"{{"choices":[{{"message":{{"content":"tok"}}}}],"usage":{{"completion_tokens":{n}}}}}"#
            )
        };
        let at_cap = decode_completion(WireFormat::OpenAi, body(1_000_000).as_bytes()).unwrap();
        assert_eq!(at_cap.output_tokens, 1_000_000);
        assert!(decode_completion(WireFormat::OpenAi, body(4_294_967_295).as_bytes()).is_none());
        let anthropic =
            r#"{"content":[{"type":"text","text":"tok"}],"usage":{"output_tokens":2000000}}"#;
        assert!(decode_completion(WireFormat::Anthropic, anthropic.as_bytes()).is_none());
        let mut out = VecDeque::new();
        let chunk = |n: u64| {
            format!(
                r#"{{"choices":[{{"index":0,"delta":{{"content":"tok"}}}}],"x_routersim":{{"tokens":{n},"span_us":0}}}}"#
            )
        };
        assert_eq!(
            decode_event(WireFormat::OpenAi, None, &chunk(4_294_967_295), &mut out),
            Err(MalformedEvent)
        );
        assert!(out.is_empty());
        let delta = r#"{"type":"content_block_delta","delta":{"type":"text_delta","text":"tok"},"x_routersim":{"tokens":1000001,"span_us":0}}"#;
        assert_eq!(
            decode_event(WireFormat::Anthropic, None, delta, &mut out),
            Err(MalformedEvent)
        );
        decode_event(WireFormat::OpenAi, None, &chunk(1_000_000), &mut out).unwrap();
        assert_eq!(out.len(), 1);
    }
}
