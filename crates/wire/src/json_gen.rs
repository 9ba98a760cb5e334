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
