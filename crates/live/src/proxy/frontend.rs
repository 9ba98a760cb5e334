//! The caller's side: an OpenAI `POST /v1/chat/completions` body (and its headers) to the
//! engine [`Request`] the router serves.
//!
//! The counts a real client does not send are estimated the way routersim's fake-provider
//! server estimates them (one reader, [`parse_request`]): `input_tokens = ceil(chars / 4)`,
//! prefill from a trailing assistant message, `max_tokens` or `max_completion_tokens`,
//! `stream`, `response_format`, `tools`. The `x-routersim-*` hints of the wire contract win
//! when present, so `routersim drive` can send a scenario's exact requests; in particular
//! `x-routersim-request-id` becomes the engine's request id, which the HTTP adapter passes on
//! to the providers, so a drive can join provider calls to its requests. On top of those,
//! LiteLLM's router params: `metadata.tags`, `fallbacks`, `num_retries`, `disable_fallbacks`.

use std::collections::BTreeMap;

use http::HeaderMap;
use routersim_config::load::MAX_NUM_RETRIES;
use routersim_engine::config::FallbackTarget;
use routersim_engine::request::Request;
use routersim_wire::headers::REQUEST_ID;
use routersim_wire::request::parse_request;
use routersim_wire::typed::Obj;
use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// A chat request as the proxy serves it.
#[derive(Clone, Debug)]
pub struct ChatRequest {
    /// The engine request (its id is the hint's, or the id offered).
    pub request: Request,
    /// Whether the id came from `x-routersim-request-id`.
    pub hinted_id: bool,
    /// The body's `model`, echoed in the answer.
    pub model: String,
    /// `stream_options.include_usage`: a stream ends with a usage chunk.
    pub include_usage: bool,
}

/// The router's fields of a chat body, each as the body has it (`Some(Value::Null)` for a
/// `null`, `None` when absent). Read the typed way first: the messages are skipped rather
/// than built as a `serde_json::Value` (which cost an ordered map with owned keys and strings
/// per request); a body that reading declines (not an object, a duplicate key) is read as a
/// `Value`, so both readings give the same fields.
#[derive(Debug, Default, Deserialize, PartialEq)]
struct RouterFields {
    #[serde(default, deserialize_with = "present")]
    model: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    metadata: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    num_retries: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    fallbacks: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    disable_fallbacks: Option<Value>,
}

/// A field that is there, `null` included (serde reads a `null` `Option` as absent).
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

impl RouterFields {
    fn read(body: &[u8]) -> Result<Self, String> {
        match Self::typed(body) {
            Some(fields) => Ok(fields),
            None => Self::from_value(body),
        }
    }

    /// `None` where the typed reading declines.
    fn typed(body: &[u8]) -> Option<Self> {
        serde_json::from_slice::<Obj<RouterFields>>(body)
            .ok()
            .map(|Obj(fields)| fields)
    }

    fn from_value(body: &[u8]) -> Result<Self, String> {
        let json: Value = serde_json::from_slice(body)
            .map_err(|e| format!("the request body is not valid JSON: {e}"))?;
        let Value::Object(mut obj) = json else {
            return Err("the request body must be a JSON object".into());
        };
        Ok(Self {
            model: obj.remove("model"),
            metadata: obj.remove("metadata"),
            num_retries: obj.remove("num_retries"),
            fallbacks: obj.remove("fallbacks"),
            disable_fallbacks: obj.remove("disable_fallbacks"),
        })
    }
}

/// Reads a chat completions request. `Err` says why it is not one (a 400 for the caller).
pub fn parse_chat(body: &[u8], headers: &HeaderMap, next_id: u64) -> Result<ChatRequest, String> {
    let fields = RouterFields::read(body)?;
    let model = match fields.model {
        Some(Value::String(m)) if !m.is_empty() => m,
        Some(_) => return Err("`model` must be a non-empty string".into()),
        None => return Err("`model` is required".into()),
    };
    let wire = parse_request(body, headers, &model, next_id)?;
    let hinted_id = headers
        .get(REQUEST_ID)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|s| s.trim().parse::<u64>().is_ok());
    let mut request = wire.request;
    request.tags = tags(fields.metadata.as_ref())?;
    if let Some(value) = &fields.num_retries {
        request.num_retries = Some(count(value, "num_retries")?);
    }
    if let Some(value) = &fields.fallbacks {
        request.fallbacks = Some(fallbacks(value)?);
    }
    request.disable_fallbacks = match fields.disable_fallbacks {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => b,
        Some(_) => return Err("`disable_fallbacks` must be true or false".into()),
    };
    Ok(ChatRequest {
        request,
        hinted_id,
        model,
        include_usage: wire.include_usage,
    })
}

/// `metadata.tags`: a list of strings.
fn tags(metadata: Option<&Value>) -> Result<Vec<String>, String> {
    let Some(tags) = metadata.and_then(|m| m.get("tags")) else {
        return Ok(Vec::new());
    };
    match tags {
        Value::Null => Ok(Vec::new()),
        Value::Array(items) => items
            .iter()
            .map(|t| {
                t.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| "`metadata.tags` must be a list of strings".to_string())
            })
            .collect(),
        _ => Err("`metadata.tags` must be a list of strings".into()),
    }
}

/// A retry count: a whole number up to [`MAX_NUM_RETRIES`].
fn count(value: &Value, key: &str) -> Result<u32, String> {
    value
        .as_u64()
        .and_then(|n| u32::try_from(n).ok())
        .filter(|&n| n <= MAX_NUM_RETRIES)
        .ok_or_else(|| format!("`{key}` must be a whole number from 0 to {MAX_NUM_RETRIES}"))
}

/// The request's own `fallbacks`: model names, or `{"model": NAME, …overrides}` objects, as
/// LiteLLM accepts them.
fn fallbacks(value: &Value) -> Result<Vec<FallbackTarget>, String> {
    let Value::Array(items) = value else {
        return Err("`fallbacks` must be a list of model names".into());
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| match item {
            Value::String(model) => Ok(FallbackTarget::group(model.clone())),
            Value::Object(map) => {
                let Some(Value::String(model)) = map.get("model") else {
                    return Err(format!("`fallbacks[{i}]` needs a `model` string"));
                };
                let overrides: BTreeMap<String, Value> = map
                    .iter()
                    .filter(|(k, _)| *k != "model")
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                routersim_config::load::target_with_overrides(
                    model.clone(),
                    overrides,
                    &format!("fallbacks[{i}]"),
                )
                .map_err(|e| e.to_string())
            }
            _ => Err(format!(
                "`fallbacks[{i}]` must be a model name or an object with `model`"
            )),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_router_params_and_hints() {
        let body = br#"{"model":"gpt","messages":[{"role":"user","content":"12345678"}],
            "stream":true,"stream_options":{"include_usage":true},"max_completion_tokens":7,
            "metadata":{"tags":["free","eu"]},"num_retries":0,
            "fallbacks":["claude",{"model":"small","max_tokens":5}],
            "response_format":{"type":"json_object"},"tools":[{"type":"function"}]}"#;
        let mut headers = HeaderMap::new();
        headers.insert(REQUEST_ID, "41".parse().unwrap());
        headers.insert("x-routersim-output-tokens", "12".parse().unwrap());
        let chat = parse_chat(body, &headers, 9).unwrap();
        let r = &chat.request;
        assert_eq!((r.id, chat.hinted_id), (41, true));
        assert_eq!(&*r.model, "gpt");
        assert_eq!(r.input_tokens, 2);
        assert_eq!(r.max_tokens, Some(7));
        assert_eq!(r.output_tokens, Some(12));
        assert!(r.stream && r.tools && chat.include_usage);
        assert_eq!(r.tags, vec!["free", "eu"]);
        assert_eq!(r.num_retries, Some(0));
        let fallbacks = r.fallbacks.as_ref().unwrap();
        assert_eq!(fallbacks[0], FallbackTarget::group("claude"));
        assert_eq!(
            (fallbacks[1].model.as_str(), fallbacks[1].max_tokens),
            ("small", Some(5))
        );
        assert_eq!(
            r.response_format,
            routersim_engine::request::ResponseFormat::Json
        );
    }

    #[test]
    fn the_typed_reading_of_router_fields_is_the_value_reading() {
        let answered = [
            &br#"{"model":"gpt","messages":[{"role":"user","content":"hi"}],"stream":true}"#[..],
            br#"{"model":null,"metadata":null,"num_retries":null,"fallbacks":null,"disable_fallbacks":null}"#,
            br#"{"model":3,"metadata":{"tags":["a"]},"num_retries":2,"fallbacks":["x",{"model":"y"}],"disable_fallbacks":true}"#,
            br#"{"metadata":[1],"num_retries":-1.5,"fallbacks":{},"other":{"model":"no"}}"#,
            b"{}",
        ];
        for body in answered {
            let typed = RouterFields::typed(body);
            assert!(typed.is_some(), "{}", String::from_utf8_lossy(body));
            assert_eq!(
                typed.map(Ok),
                Some(RouterFields::from_value(body)),
                "{}",
                String::from_utf8_lossy(body)
            );
        }
        // Declined, read as a `Value`: a duplicate key (the last one counts), an array.
        let twice = br#"{"model":"a","num_retries":1,"model":"b"}"#;
        assert_eq!(RouterFields::typed(twice), None);
        let fields = RouterFields::read(twice).unwrap();
        assert_eq!(fields.model, Some(Value::String("b".into())));
        assert_eq!(fields.num_retries, Some(Value::from(1)));
        assert_eq!(RouterFields::typed(br#"["m",null,null,null,null]"#), None);
    }

    #[test]
    fn without_a_hint_the_offered_id_is_used() {
        let chat = parse_chat(br#"{"model":"m"}"#, &HeaderMap::new(), 9).unwrap();
        assert_eq!((chat.request.id, chat.hinted_id), (9, false));
        assert!(!chat.request.stream && chat.request.fallbacks.is_none());
    }

    #[test]
    fn refuses_what_is_not_a_chat_request() {
        let h = HeaderMap::new();
        for (body, why) in [
            (&b"{"[..], "not valid JSON"),
            (b"[1]", "JSON object"),
            (b"{}", "`model` is required"),
            (br#"{"model":3}"#, "`model` must be"),
            (br#"{"model":"m","num_retries":-1}"#, "`num_retries`"),
            (br#"{"model":"m","fallbacks":"x"}"#, "`fallbacks`"),
            (br#"{"model":"m","fallbacks":[{"x":1}]}"#, "`fallbacks[0]`"),
            (
                br#"{"model":"m","metadata":{"tags":[1]}}"#,
                "`metadata.tags`",
            ),
            (
                br#"{"model":"m","disable_fallbacks":1}"#,
                "disable_fallbacks",
            ),
        ] {
            let e = parse_chat(body, &h, 1).unwrap_err();
            assert!(e.contains(why), "{e} should mention {why}");
        }
    }
}
