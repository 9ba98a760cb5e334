//! What a fake answer says, for requests whose contract validates (`profile: contract`): a
//! JSON object of the contract's schema and a call of a registered tool, built from the
//! engine's schema registry — or, when an `invalid_response` fault fires, the same with one
//! defect, named by the engine's [`ValidationReason`] (what its validation rejects). The router
//! parses and checks this text itself; nothing tells it the answer is bad.

use std::sync::Arc;

use routersim_engine::contract::Contract;
use routersim_engine::contract::schema::{self, FieldType};
use routersim_engine::event::ValidationReason;
use routersim_engine::request::{ResponseBody, ToolCall};
use serde_json::{Map, Value, json};

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
pub fn body(contract: &Contract, defect: Option<ValidationReason>) -> Option<Arc<ResponseBody>> {
    if !contract.has_body_checks() {
        return None;
    }
    let mut out = ResponseBody::default();
    if let Some(structured) = contract.structured_output.as_ref().filter(|s| s.required) {
        let required = schema::lookup(&structured.schema_id).map_or(&[][..], |s| s.required);
        let mut fields = object(required);
        let first = required.first().map(|(name, _)| (*name).to_string());
        match (defect, &first) {
            (Some(ValidationReason::MissingField), Some(name)) => {
                fields.remove(name);
            }
            (Some(ValidationReason::SchemaMismatch), Some(name)) => {
                let wrong = match fields.get(name) {
                    Some(Value::Number(_)) => json!("twelve"),
                    _ => json!(7),
                };
                fields.insert(name.clone(), wrong);
            }
            (Some(ValidationReason::InvariantViolated), _) => {
                fields.insert("total".into(), json!(-12.5));
            }
            _ => {}
        }
        let mut text = Value::Object(fields).to_string();
        if matches!(
            defect,
            Some(ValidationReason::MalformedJson | ValidationReason::Truncated)
        ) {
            text.truncate(text.len() / 2);
        }
        out.content = Some(text);
    }
    if contract.requires_tools
        && let Some(tool) = schema::TOOLS.first()
    {
        let (name, arguments) = match defect {
            Some(ValidationReason::UnknownTool) => ("delete_everything".to_string(), Map::new()),
            Some(ValidationReason::InvalidToolArguments) => (tool.name.to_string(), Map::new()),
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
    use routersim_engine::contract::validate::validate;
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
        let check = |defect: Option<ValidationReason>| {
            let finish_reason = if defect == Some(ValidationReason::Truncated) {
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
        use ValidationReason as D;
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
