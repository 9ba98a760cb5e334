//! The typed first reading agrees with the `Value` reading on every body it reads: generated
//! bodies whose every field may be missing, null, of the wrong type, duplicated, or an array
//! shaped like the object it replaces.

use proptest::prelude::*;

use super::read;
use crate::json_gen::{any_value, either, fields, object};
use crate::request::body_fields;

fn text() -> BoxedStrategy<String> {
    prop_oneof![
        Just(r#""hello""#.to_string()),
        Just(r#""routersim prefill""#.to_string()),
        Just(r#""a\u00e9\ud83d\ude00 \"q\"""#.to_string()),
    ]
    .boxed()
}

fn message() -> BoxedStrategy<String> {
    let role = prop_oneof![
        Just(r#""user""#.to_string()),
        Just(r#""assistant""#.to_string()),
        Just(r#""system""#.to_string()),
    ];
    let message = fields(vec![
        ("role", either(role.boxed(), r#"["assistant"]"#)),
        ("content", either(text(), r#"["hello"]"#)),
    ])
    .prop_map(object);
    either(message.boxed(), r#"["assistant","hello"]"#)
}

fn body() -> impl Strategy<Value = String> {
    let messages =
        proptest::collection::vec(message(), 0..4).prop_map(|m| format!("[{}]", m.join(",")));
    let number = || (0u64..2_000_000).prop_map(|n| n.to_string()).boxed();
    let boolean = || prop_oneof![Just("true".to_string()), Just("false".to_string())].boxed();
    let format_kind = prop_oneof![
        Just(r#""json_object""#.to_string()),
        Just(r#""json_schema""#.to_string()),
        Just(r#""text""#.to_string()),
    ];
    let response_format = fields(vec![(
        "type",
        either(format_kind.boxed(), r#"["json_object"]"#),
    )])
    .prop_map(object);
    let stream_options =
        fields(vec![("include_usage", either(boolean(), "[true]"))]).prop_map(object);
    let list = prop_oneof![
        Just("[]".to_string()),
        Just(r#"[{"type":"function"}]"#.to_string())
    ];
    let body = fields(vec![
        ("model", either(text(), r#"["gpt"]"#)),
        ("messages", either(messages.boxed(), "{}")),
        ("system", either(text(), r#"["sys"]"#)),
        ("stream", either(boolean(), "[true]")),
        ("stream_options", either(stream_options.boxed(), "[true]")),
        ("max_tokens", either(number(), "[5]")),
        ("max_completion_tokens", either(number(), "[5]")),
        (
            "response_format",
            either(response_format.boxed(), r#"["json_object"]"#),
        ),
        ("tools", either(list.clone().boxed(), "{}")),
        ("functions", either(list.boxed(), "{}")),
        ("temperature", any_value()),
    ])
    .prop_map(object);
    let as_array =
        r#"["gpt",[{"role":"user","content":"hi"}],null,true,null,5,null,null,[1],null]"#;
    prop_oneof![8 => body, 1 => Just(as_array.to_string()), 1 => any_value()]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(10_000))]

    #[test]
    fn the_typed_reading_agrees_with_the_value_reading(body in body()) {
        if let Some(fields) = read(body.as_bytes()) {
            prop_assert_eq!(Ok(fields), body_fields(body.as_bytes()), "{}", body);
        }
    }
}

/// What routers send is read the typed way (the point of it).
#[test]
fn the_bodies_routers_send_are_read_without_a_value() {
    for body in [
        &br#"{"model":"bench","messages":[{"role":"user","content":"hello"}]}"#[..],
        br#"{"model":"gpt-4o","messages":[{"role":"user","content":"routersim request"},{"role":"assistant","content":"routersim prefill"}],"stream":true,"stream_options":{"include_usage":true},"max_tokens":40}"#,
    ] {
        assert!(read(body).is_some());
    }
}
