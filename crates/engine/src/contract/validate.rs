//! Validation before acceptance: *"Run every response, including the primary response,
//! through the same acceptance pipeline"* — the finish reason (truncation), the JSON
//! envelope, the schema's required fields, types and enums, its domain invariant, and every
//! tool call's name and arguments. Nothing is repaired: *"Guessing missing financial fields or
//! rewriting tool arguments changes the model's meaning and should trigger rejection"*.
//!
//! Limits: a streamed answer is not validated (the router passes its content on as it comes;
//! rejecting it afterwards would not take it back); an answer without a body (the HTTP client
//! does not parse message content) is checked for its finish reason only.

use serde_json::{Map, Value};

use super::schema::{self, FieldType};
use super::terms::Contract;
use crate::request::Completion;
use crate::stream::FinishReason;

pub use crate::event::ValidationReason;

/// Checks `fields` in `object`: missing first, then type.
fn check_fields(
    object: &Map<String, Value>,
    fields: &[(&str, FieldType)],
) -> Result<(), ValidationReason> {
    for (name, ty) in fields {
        match object.get(*name) {
            None | Some(Value::Null) => return Err(ValidationReason::MissingField),
            Some(v) if !ty.admits(v) => return Err(ValidationReason::SchemaMismatch),
            Some(_) => {}
        }
    }
    Ok(())
}

/// Accepts `done` under `contract`, or says why not.
pub fn validate(contract: &Contract, done: &Completion) -> Result<(), ValidationReason> {
    if !contract.validates() {
        return Ok(());
    }
    if done.finish_reason == FinishReason::Length {
        return Err(ValidationReason::Truncated);
    }
    let Some(body) = done.body.as_deref().filter(|_| contract.has_body_checks()) else {
        return Ok(());
    };
    if let Some(structured) = contract.structured_output.as_ref().filter(|s| s.required) {
        let parsed: Option<Value> = body
            .content
            .as_deref()
            .and_then(|text| serde_json::from_str(text.trim()).ok());
        let Some(Value::Object(object)) = parsed else {
            return Err(ValidationReason::MalformedJson);
        };
        if let Some(schema) = schema::lookup(&structured.schema_id) {
            check_fields(&object, schema.required)?;
            if !(schema.invariant)(&object) {
                return Err(ValidationReason::InvariantViolated);
            }
        }
    }
    if contract.requires_tools {
        for call in &body.tool_calls {
            let Some(tool) = schema::tool(&call.name) else {
                return Err(ValidationReason::UnknownTool);
            };
            let Ok(Value::Object(args)) = serde_json::from_str::<Value>(&call.arguments) else {
                return Err(ValidationReason::InvalidToolArguments);
            };
            check_fields(&args, tool.arguments)
                .map_err(|_| ValidationReason::InvalidToolArguments)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::contract::terms::StructuredOutput;
    use crate::request::ResponseBody;

    fn invoice() -> Contract {
        Contract {
            structured_output: Some(StructuredOutput {
                required: true,
                schema_id: "invoice-v3".into(),
                strict: false,
            }),
            ..Contract::default()
        }
    }

    fn answer(content: &str, finish_reason: FinishReason) -> Completion {
        Completion {
            output_tokens: 10,
            finish_reason,
            body: Some(Arc::new(ResponseBody {
                content: Some(content.into()),
                tool_calls: Vec::new(),
            })),
            ..Completion::default()
        }
    }

    #[test]
    fn each_defect_has_its_reason() {
        let check = |content: &str, finish| validate(&invoice(), &answer(content, finish));
        let stop = FinishReason::Stop;
        let valid = r#"{"invoice_id": "I", "currency": "USD", "total": 0, "line_items": []}"#;
        assert_eq!(check(valid, stop), Ok(()));
        assert_eq!(
            check(valid, FinishReason::Length),
            Err(ValidationReason::Truncated)
        );
        assert_eq!(
            check("{\"invoice_id\": ", stop),
            Err(ValidationReason::MalformedJson)
        );
        assert_eq!(check("[1, 2]", stop), Err(ValidationReason::MalformedJson));
        assert_eq!(
            check(
                r#"{"invoice_id": "I", "currency": "USD", "total": 1}"#,
                stop
            ),
            Err(ValidationReason::MissingField)
        );
        assert_eq!(
            check(
                r#"{"invoice_id": "I", "currency": "XXX", "total": 1, "line_items": []}"#,
                stop
            ),
            Err(ValidationReason::SchemaMismatch)
        );
        assert_eq!(
            check(
                r#"{"invoice_id": "I", "currency": "USD", "total": -1, "line_items": []}"#,
                stop
            ),
            Err(ValidationReason::InvariantViolated)
        );
        // Harmless surrounding whitespace is normalised, nothing else.
        assert_eq!(check(&format!("  {valid}\n"), stop), Ok(()));
        // Only a complete finish required: a truncated answer is rejected, content is not read.
        let complete = Contract {
            require_complete: true,
            ..Contract::default()
        };
        assert_eq!(
            validate(&complete, &answer("nonsense", FinishReason::Length)),
            Err(ValidationReason::Truncated)
        );
        assert_eq!(validate(&complete, &answer("nonsense", stop)), Ok(()));
        // No contract that validates: anything goes.
        assert_eq!(
            validate(
                &Contract::default(),
                &answer("nonsense", FinishReason::Length)
            ),
            Ok(())
        );
    }
}
