//! Generated JSON objects for the typed readings' property tests: any subset of a shape's
//! fields, some repeated (a duplicate key), in any order.

use proptest::prelude::*;

/// A JSON object's text from `(key, value text)` pairs, duplicates kept.
pub(crate) fn object(pairs: Vec<(&'static str, String)>) -> String {
    let fields: Vec<String> = pairs
        .into_iter()
        .map(|(k, v)| format!("{}:{v}", serde_json::to_string(k).unwrap()))
        .collect();
    format!("{{{}}}", fields.join(","))
}

/// `pairs` drawn from `fields`, each mostly present once, sometimes absent or twice, in a
/// drawn order.
pub(crate) fn fields(
    fields: Vec<(&'static str, BoxedStrategy<String>)>,
) -> impl Strategy<Value = Vec<(&'static str, String)>> {
    let per_field: Vec<_> = fields
        .into_iter()
        .map(|(key, value)| {
            (0..6u8, value.clone(), value).prop_map(move |(n, first, second)| match n {
                0 => vec![],
                5 => vec![(key, first), (key, second)],
                _ => vec![(key, first)],
            })
        })
        .collect();
    per_field
        .prop_map(|groups| groups.into_iter().flatten().collect::<Vec<_>>())
        .prop_shuffle()
}

/// Any small JSON value: what a field of the wrong type holds.
pub(crate) fn any_value() -> BoxedStrategy<String> {
    prop_oneof![
        Just("null".to_string()),
        Just("true".to_string()),
        Just("false".to_string()),
        Just("0".to_string()),
        Just("7".to_string()),
        Just("-1".to_string()),
        Just("1.5".to_string()),
        Just("4294967296".to_string()),
        Just("100000000000000000000".to_string()),
        Just(r#""""#.to_string()),
        Just(r#""tok tok""#.to_string()),
        Just(r#""héllo \"x\"\n""#.to_string()),
        Just(r#""a\"b\n\u00e9""#.to_string()),
        Just("[]".to_string()),
        Just("{}".to_string()),
        Just(r#"[1,2,"text"]"#.to_string()),
        Just(r#"[{"type":"text","text":"abcde"},"xy"]"#.to_string()),
    ]
    .boxed()
}

/// Mostly `typical`, sometimes `as_array` (an array shaped like the object it replaces) or
/// [`any_value`].
pub(crate) fn either(
    typical: BoxedStrategy<String>,
    as_array: &'static str,
) -> BoxedStrategy<String> {
    prop_oneof![6 => typical, 1 => Just(as_array.to_string()), 1 => any_value()].boxed()
}
