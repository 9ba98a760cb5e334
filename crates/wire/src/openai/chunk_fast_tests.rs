//! The typed first reading agrees with the `Value` reading on every frame: generated frames
//! whose every field may be missing, null, of the wrong type, duplicated, or an array shaped
//! like the object it replaces (a derived struct would read it as its fields in order: a test
//! without those arrays passed with the `Obj` guard removed).

use std::collections::VecDeque;

use proptest::prelude::*;

use super::super::client::{decode_event, decode_value_event};
use crate::format::WireFormat;
use crate::json_gen::{any_value, fields, object};

fn text_value() -> BoxedStrategy<String> {
    prop_oneof![
        3 => Just(r#""tok tok""#.to_string()),
        1 => Just(r#""""#.to_string()),
        1 => Just(r#"" tok\ntok \u0074ok""#.to_string()),
        1 => any_value(),
    ]
    .boxed()
}

fn delta() -> BoxedStrategy<String> {
    let delta = fields(vec![
        ("content", text_value()),
        ("reasoning_content", text_value()),
        (
            "role",
            prop_oneof![Just(r#""assistant""#.to_string()), any_value()].boxed(),
        ),
        (
            "tool_calls",
            prop_oneof![
                Just(r#"[{"function":{"arguments":"{}"}}]"#.to_string()),
                any_value()
            ]
            .boxed(),
        ),
        ("audio", any_value().boxed()),
        ("images", any_value().boxed()),
    ])
    .prop_map(object);
    let as_array = Just(r#"["tok tok",null,null,null,null,null]"#.to_string());
    prop_oneof![6 => delta, 1 => as_array, 1 => any_value()].boxed()
}

fn choice() -> BoxedStrategy<String> {
    let finish = prop_oneof![
        Just(r#""stop""#.to_string()),
        Just(r#""length""#.to_string()),
        Just(r#""tool_calls""#.to_string()),
        Just(r#""content_filter""#.to_string()),
        any_value(),
    ];
    let choice = fields(vec![
        ("index", any_value().boxed()),
        ("delta", delta()),
        ("finish_reason", finish.boxed()),
    ])
    .prop_map(object);
    let as_array = Just(r#"["stop",{"content":"tok"}]"#.to_string());
    prop_oneof![6 => choice, 1 => as_array, 1 => any_value()].boxed()
}

fn extension() -> BoxedStrategy<String> {
    let number = || prop_oneof![(0u64..5_000).prop_map(|n| n.to_string()), any_value()].boxed();
    let kind = prop_oneof![
        Just(r#""text""#.to_string()),
        Just(r#""audio""#.to_string()),
        Just(r#""role_only""#.to_string()),
        Just(r#""nonsense""#.to_string()),
        any_value(),
    ];
    let ext = fields(vec![
        ("tokens", number()),
        ("span_us", number()),
        ("kind", kind.boxed()),
    ])
    .prop_map(object);
    let as_array = Just(r#"[5,7,"audio"]"#.to_string());
    prop_oneof![6 => ext, 1 => as_array, 1 => any_value()].boxed()
}

fn frame() -> impl Strategy<Value = String> {
    let choices = prop_oneof![
        4 => proptest::collection::vec(choice(), 0..3).prop_map(|c| format!("[{}]", c.join(","))),
        1 => any_value(),
    ];
    let error = prop_oneof![
        Just(r#"{"message":"overloaded","code":"overloaded"}"#.to_string()),
        any_value()
    ];
    let frame = fields(vec![
        ("error", error.boxed()),
        ("choices", choices.boxed()),
        ("x_routersim", extension()),
        ("usage", any_value().boxed()),
    ])
    .prop_map(object);
    let as_array = Just(r#"[null,[{"delta":{"content":"x"}}],null]"#.to_string());
    prop_oneof![
        8 => frame,
        1 => as_array,
        1 => any_value(),
        1 => Just("{not json".to_string()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(10_000))]

    #[test]
    fn the_typed_reading_agrees_with_the_value_reading(data in frame()) {
        for format in [WireFormat::OpenAi, WireFormat::Azure] {
            let (mut fast, mut slow) = (VecDeque::new(), VecDeque::new());
            let fast_result = decode_event(format, &data, &mut fast);
            let slow_result = decode_value_event(format, &data, &mut slow);
            prop_assert_eq!(fast_result, slow_result, "{}", data);
            prop_assert_eq!(fast, slow, "{}", data);
        }
    }
}

/// The frames routersim's own server writes are read the typed way (the point of it).
#[test]
fn the_servers_frames_are_read_without_a_value() {
    for data in [
        r#"{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"tok tok"},"finish_reason":null}],"x_routersim":{"tokens":2,"span_us":20000,"kind":"text"}}"#,
        r#"{"id":"c","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}],"x_routersim":{"tokens":0,"span_us":0,"kind":"role_only"}}"#,
        r#"{"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
        r#"{"id":"c","choices":[],"usage":{"prompt_tokens":1}}"#,
    ] {
        let mut out = VecDeque::new();
        assert!(super::read(data, &mut out).is_some(), "{data}");
    }
}
