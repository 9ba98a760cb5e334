//! What a fake answer says, for requests whose contract validates (`profile: contract`): a
//! JSON object of the contract's schema and a call of a registered tool, built from the
//! engine's schema registry — or, when an `invalid_response` fault fires, the same with one
//! defect. The router parses and checks this text itself; nothing tells it the answer is bad.

use std::sync::Arc;

use routersim_engine::contract::Contract;
use routersim_engine::contract::schema::{self, FieldType};
use routersim_engine::request::{ResponseBody, ToolCall};
use serde::Deserialize;
use serde_json::{Map, Value, json};

/// A defect an `invalid_response` fault puts in an answer (the router's validation reasons).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResponseDefect {
    /// `finish_reason: length`, the content cut in the middle.
    Truncated,
    /// The JSON text ends early.
    MalformedJson,
    /// The schema's first required field is left out.
    MissingField,
    /// The schema's first required field has the wrong type.
    SchemaMismatch,
    /// `invoice-v3`'s total is negative.
    InvariantViolated,
    /// The tool call names a tool that is not registered.
    UnknownTool,
    /// The tool call's arguments lack their required fields.
    InvalidToolArguments,
}

impl ResponseDefect {
    /// Its name in scenarios.
    pub const fn as_str(self) -> &'static str {
        match self {
            ResponseDefect::Truncated => "truncated",
            ResponseDefect::MalformedJson => "malformed_json",
            ResponseDefect::MissingField => "missing_field",
            ResponseDefect::SchemaMismatch => "schema_mismatch",
            ResponseDefect::InvariantViolated => "invariant_violated",
            ResponseDefect::UnknownTool => "unknown_tool",
            ResponseDefect::InvalidToolArguments => "invalid_tool_arguments",
        }
    }
}

/// A valid value of `ty`.
fn sample(ty: FieldType) -> Value {
    match ty {
        FieldType::String(allowed) => json!(allowed.first().copied().unwrap_or("A-1")),
        FieldType::Number => json!(12.5),
        FieldType::Array => json!([]),
    }
}

fn object(fields: &[(&str, FieldType)]) -> Map<String, Value> {
    fields
        .iter()
        .map(|(name, ty)| ((*name).to_string(), sample(*ty)))
        .collect()
}

/// The answer's body under `contract`, with `defect` when one fires; `None` when the contract
/// does not validate (nothing needs a body).
pub fn body(contract: &Contract, defect: Option<ResponseDefect>) -> Option<Arc<ResponseBody>> {
    if !contract.has_body_checks() {
        return None;
    }
    let mut out = ResponseBody::default();
    if let Some(structured) = contract.structured_output.as_ref().filter(|s| s.required) {
        let required = schema::lookup(&structured.schema_id).map_or(&[][..], |s| s.required);
        let mut fields = object(required);
        let first = required.first().map(|(name, _)| (*name).to_string());
        match (defect, &first) {
            (Some(ResponseDefect::MissingField), Some(name)) => {
                fields.remove(name);
            }
            (Some(ResponseDefect::SchemaMismatch), Some(name)) => {
                let wrong = match fields.get(name) {
                    Some(Value::Number(_)) => json!("twelve"),
                    _ => json!(7),
                };
                fields.insert(name.clone(), wrong);
            }
            (Some(ResponseDefect::InvariantViolated), _) => {
                fields.insert("total".into(), json!(-12.5));
            }
            _ => {}
        }
        let mut text = Value::Object(fields).to_string();
        if matches!(
            defect,
            Some(ResponseDefect::MalformedJson | ResponseDefect::Truncated)
        ) {
            text.truncate(text.len() / 2);
        }
        out.content = Some(text);
    }
    if contract.requires_tools
        && let Some(tool) = schema::TOOLS.first()
    {
        let (name, arguments) = match defect {
            Some(ResponseDefect::UnknownTool) => ("delete_everything".to_string(), Map::new()),
            Some(ResponseDefect::InvalidToolArguments) => (tool.name.to_string(), Map::new()),
            _ => (tool.name.to_string(), object(tool.arguments)),
        };
        out.tool_calls.push(ToolCall {
            name,
            arguments: Value::Object(arguments).to_string(),
        });
    }
    Some(Arc::new(out))
}

#[cfg(test)]
mod tests {
    use routersim_engine::contract::validate::{ValidationReason, validate};
    use routersim_engine::contract::{Contract, StructuredOutput};
    use routersim_engine::request::Completion;
    use routersim_engine::stream::FinishReason;

    use super::*;

    /// Every defect is caught by the router's validation with its own reason; a clean body
    /// passes.
    #[test]
    fn each_defect_fails_validation_for_its_reason() {
        let contract = Contract {
            requires_tools: true,
            structured_output: Some(StructuredOutput {
                required: true,
                schema_id: "invoice-v3".into(),
                strict: true,
            }),
            ..Contract::default()
        };
        let check = |defect: Option<ResponseDefect>| {
            let finish_reason = if defect == Some(ResponseDefect::Truncated) {
                FinishReason::Length
            } else {
                FinishReason::Stop
            };
            let done = Completion {
                output_tokens: 10,
                finish_reason,
                body: body(&contract, defect),
                ..Completion::default()
            };
            validate(&contract, &done).err()
        };
        use ResponseDefect as D;
        use ValidationReason as V;
        assert_eq!(check(None), None);
        for (defect, reason) in [
            (D::Truncated, V::Truncated),
            (D::MalformedJson, V::MalformedJson),
            (D::MissingField, V::MissingField),
            (D::SchemaMismatch, V::SchemaMismatch),
            (D::InvariantViolated, V::InvariantViolated),
            (D::UnknownTool, V::UnknownTool),
            (D::InvalidToolArguments, V::InvalidToolArguments),
        ] {
            assert_eq!(check(Some(defect)), Some(reason), "{defect:?}");
        }
    }
}
