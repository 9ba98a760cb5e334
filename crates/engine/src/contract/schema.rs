//! The built-in registry of response schemas and tools a contract may name: small on purpose
//! (routersim has no JSON Schema engine); each schema lists its required fields with their
//! types and enums, and one domain invariant (the seed's *"a nonnegative total, a supported
//! currency code"*).

use serde_json::{Map, Value};

/// A field's JSON type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldType {
    /// A string, optionally one of a set.
    String(&'static [&'static str]),
    /// A number.
    Number,
    /// An array.
    Array,
}

impl FieldType {
    /// Whether `v` has this type (and, for an enum, an allowed value).
    pub fn admits(self, v: &Value) -> bool {
        match self {
            FieldType::String(allowed) => v
                .as_str()
                .is_some_and(|s| allowed.is_empty() || allowed.contains(&s)),
            FieldType::Number => v.is_number(),
            FieldType::Array => v.is_array(),
        }
    }
}

/// A registered response schema.
#[derive(Debug)]
pub struct Schema {
    /// `schema_id`.
    pub id: &'static str,
    /// Required fields.
    pub required: &'static [(&'static str, FieldType)],
    /// The domain invariant (true: it holds).
    pub invariant: fn(&Map<String, Value>) -> bool,
}

/// A registered tool and its arguments' required fields.
#[derive(Debug)]
pub struct Tool {
    /// The tool's name.
    pub name: &'static str,
    /// Required arguments.
    pub arguments: &'static [(&'static str, FieldType)],
}

fn nonnegative_total(object: &Map<String, Value>) -> bool {
    object
        .get("total")
        .and_then(Value::as_f64)
        .is_some_and(|t| t >= 0.0)
}

fn always(_: &Map<String, Value>) -> bool {
    true
}

/// Currencies `invoice-v3` accepts.
pub const CURRENCIES: &[&str] = &["EUR", "GBP", "JPY", "USD"];

/// Every registered schema.
pub const SCHEMAS: &[Schema] = &[
    Schema {
        id: "invoice-v3",
        required: &[
            ("invoice_id", FieldType::String(&[])),
            ("currency", FieldType::String(CURRENCIES)),
            ("total", FieldType::Number),
            ("line_items", FieldType::Array),
        ],
        invariant: nonnegative_total,
    },
    Schema {
        id: "classification-v1",
        required: &[(
            "label",
            FieldType::String(&["negative", "neutral", "positive"]),
        )],
        invariant: always,
    },
];

/// Every registered tool.
pub const TOOLS: &[Tool] = &[
    Tool {
        name: "lookup_order",
        arguments: &[("order_id", FieldType::String(&[]))],
    },
    Tool {
        name: "create_ticket",
        arguments: &[
            ("subject", FieldType::String(&[])),
            ("priority", FieldType::String(&["high", "low", "normal"])),
        ],
    },
];

/// The schema registered as `id`.
pub fn lookup(id: &str) -> Option<&'static Schema> {
    SCHEMAS.iter().find(|s| s.id == id)
}

/// The tool registered as `name`.
pub fn tool(name: &str) -> Option<&'static Tool> {
    TOOLS.iter().find(|t| t.name == name)
}

/// The registered schema ids, for error messages.
pub fn schema_ids() -> String {
    SCHEMAS.iter().map(|s| s.id).collect::<Vec<_>>().join(", ")
}
