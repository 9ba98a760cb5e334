//! A typed first reading of a chat request body, for the bodies routers send (string contents,
//! the usual fields of the usual types). Reading the body as a `serde_json::Value` built an
//! ordered map with owned keys per request, `serve`'s largest cost after the socket work.
//!
//! It answers only where its answer is the `Value` reading's: a list content, a field of an
//! unexpected type, a duplicate key or an array in an object's place makes it decline
//! ([`read`] returns `None`) and the body is read as a `Value`
//! ([`body_fields`](crate::request::body_fields)). The property test holds the two equal.

use std::borrow::Cow;

use serde::Deserialize;
use serde::de::IgnoredAny;

use crate::request::{BodyFields, is_json_mode};
use crate::typed::Obj;

#[derive(Deserialize)]
struct Body<'a> {
    #[serde(borrow)]
    model: Option<Cow<'a, str>>,
    #[serde(borrow)]
    messages: Option<Vec<Obj<Message<'a>>>>,
    #[serde(borrow)]
    system: Option<Cow<'a, str>>,
    stream: Option<bool>,
    stream_options: Option<Obj<StreamOptions>>,
    max_tokens: Option<u64>,
    max_completion_tokens: Option<u64>,
    #[serde(borrow)]
    response_format: Option<Obj<ResponseFormat<'a>>>,
    tools: Option<Vec<IgnoredAny>>,
    functions: Option<Vec<IgnoredAny>>,
}

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow)]
    role: Option<Cow<'a, str>>,
    #[serde(borrow)]
    content: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct StreamOptions {
    include_usage: Option<bool>,
}

#[derive(Deserialize)]
struct ResponseFormat<'a> {
    #[serde(borrow, rename = "type")]
    kind: Option<Cow<'a, str>>,
}

/// The body's fields, or `None` when it must be read as a `Value`.
pub(crate) fn read(body: &[u8]) -> Option<BodyFields> {
    let Obj(body): Obj<Body> = serde_json::from_slice(body).ok()?;
    let chars_of = |content: &Option<Cow<'_, str>>| content.as_deref().map_or(0, count_chars);
    let messages = body.messages.unwrap_or_default();
    let mut chars = chars_of(&body.system);
    for Obj(m) in &messages {
        chars += chars_of(&m.content);
    }
    let prefill_chars = match messages.last() {
        Some(Obj(last)) if last.role.as_deref() == Some("assistant") => chars_of(&last.content),
        _ => 0,
    };
    let non_empty = |list: &Option<Vec<IgnoredAny>>| list.as_ref().is_some_and(|l| !l.is_empty());
    Some(BodyFields {
        chars,
        prefill_chars,
        json_mode: body
            .response_format
            .and_then(|Obj(f)| f.kind)
            .is_some_and(|kind| is_json_mode(&kind)),
        tools: non_empty(&body.tools) || non_empty(&body.functions),
        max_tokens: body.max_tokens,
        max_completion_tokens: body.max_completion_tokens,
        stream: body.stream.unwrap_or(false),
        model: body.model.map(Cow::into_owned),
        include_usage: body
            .stream_options
            .and_then(|Obj(o)| o.include_usage)
            .unwrap_or(false),
    })
}

fn count_chars(text: &str) -> usize {
    text.chars().count()
}

#[cfg(test)]
#[path = "request_fast_tests.rs"]
mod tests;
