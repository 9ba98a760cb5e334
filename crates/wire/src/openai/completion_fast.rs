//! A typed first reading of a non-streamed `chat.completion` body, for the answers providers
//! give (a choice with a string content, a finish reason, usage). Reading the body as a
//! `serde_json::Value` built an ordered map with owned keys and strings per answer, one of the
//! proxy's larger costs per non-streamed call after the socket work.
//!
//! It answers only where its answer is the `Value` reading's
//! ([`decode_completion`](super::client::decode_completion)): a field of an unexpected type, a
//! duplicate key or an array in an object's place makes it decline ([`read`] returns `None`)
//! and the body is read as a `Value`. The property test holds the two readings equal.

use std::borrow::Cow;

use routersim_engine::request::Completion;
use serde::Deserialize;

use super::client::completion_of;
use crate::typed::Obj;

#[derive(Deserialize)]
struct Body<'a> {
    #[serde(borrow)]
    choices: Option<Vec<Obj<Choice<'a>>>>,
    usage: Option<Obj<Usage>>,
}

#[derive(Deserialize)]
struct Choice<'a> {
    #[serde(borrow)]
    finish_reason: Option<Cow<'a, str>>,
    #[serde(borrow)]
    message: Option<Obj<Message<'a>>>,
}

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow)]
    content: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Usage {
    completion_tokens: Option<u64>,
}

/// What the body says: `Some(None)` where the `Value` reading finds no completion (no
/// `choices` list), `None` where the body must be read as a `Value`.
pub(crate) fn read(body: &[u8]) -> Option<Option<Completion>> {
    let Obj(body): Obj<Body> = serde_json::from_slice(body).ok()?;
    let Some(choices) = body.choices else {
        return Some(None);
    };
    let first = choices.first().map(|Obj(c)| c);
    Some(Some(completion_of(
        first.and_then(|c| c.finish_reason.as_deref()),
        body.usage.and_then(|Obj(u)| u.completion_tokens),
        || {
            first
                .and_then(|c| c.message.as_ref())
                .and_then(|Obj(m)| m.content.as_deref())
        },
        choices.is_empty(),
    )))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::Value;

    use super::read;
    use crate::json_gen::{any_value, either, fields, object};
    use crate::openai::client::decode_completion;

    fn text() -> BoxedStrategy<String> {
        prop_oneof![
            Just(r#""routersim answer with five words""#.to_string()),
            Just(r#""  \n ""#.to_string()),
            Just(r#""a\u00e9\ud83d\ude00 \"q\"""#.to_string()),
        ]
        .boxed()
    }

    fn choice() -> BoxedStrategy<String> {
        let reason = prop_oneof![
            Just(r#""stop""#.to_string()),
            Just(r#""length""#.to_string()),
            Just(r#""content_filter""#.to_string()),
            Just(r#""tool_calls""#.to_string()),
        ];
        let message = fields(vec![
            (
                "role",
                either(Just(r#""assistant""#.to_string()).boxed(), "[1]"),
            ),
            ("content", either(text(), r#"["hi"]"#)),
        ])
        .prop_map(object);
        let choice = fields(vec![
            ("index", any_value()),
            ("finish_reason", either(reason.boxed(), r#"["stop"]"#)),
            ("message", either(message.boxed(), r#"["assistant","hi"]"#)),
        ])
        .prop_map(object);
        either(choice.boxed(), r#"["stop",{"content":"x"}]"#)
    }

    fn body() -> impl Strategy<Value = String> {
        let choices =
            proptest::collection::vec(choice(), 0..3).prop_map(|c| format!("[{}]", c.join(",")));
        let tokens = (0u64..5_000_000).prop_map(|n| n.to_string()).boxed();
        let usage = fields(vec![
            ("completion_tokens", either(tokens, "[3]")),
            ("prompt_tokens", any_value()),
        ])
        .prop_map(object);
        let body = fields(vec![
            ("id", either(text(), "[1]")),
            ("choices", either(choices.boxed(), "{}")),
            ("usage", either(usage.boxed(), "[3]")),
            ("model", any_value()),
        ])
        .prop_map(object);
        prop_oneof![8 => body, 1 => any_value()]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(10_000))]

        #[test]
        fn the_typed_reading_agrees_with_the_value_reading(body in body()) {
            if let Some(typed) = read(body.as_bytes()) {
                let value: Value = serde_json::from_str(&body).unwrap();
                prop_assert_eq!(typed, decode_completion(&value), "{}", body);
            }
        }
    }

    /// What providers answer is read the typed way (the point of it).
    #[test]
    fn the_answers_providers_give_are_read_without_a_value() {
        let body = br#"{"id":"chatcmpl-1","object":"chat.completion","created":0,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"routersim answer"},"finish_reason":"length"}],"usage":{"prompt_tokens":3,"completion_tokens":20,"total_tokens":23}}"#;
        let got = read(body).expect("typed").expect("a completion");
        assert_eq!(got.output_tokens, 20);
        assert_eq!(
            got.finish_reason,
            routersim_engine::stream::FinishReason::Length
        );
        assert!(!got.empty_choices);
    }
}
