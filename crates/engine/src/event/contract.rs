//! The reasons `profile: contract`'s events carry: why a route was left out of the walk, and
//! why an answer was rejected. Here, below the contract module, so that events name no policy.

use serde::Deserialize;

/// Why a route was filtered out before ranking (the `route_filtered` event's `reason`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum FilterReason {
    /// A required modality is not supported.
    Modalities,
    /// The route's context window is under the estimated input.
    Context,
    /// The contract needs tools; the route has no function calling.
    Tools,
    /// The route lacks the schema mode the contract's structured output needs.
    SchemaMode,
    /// The route's model class is not allowed.
    ModelClass,
    /// The route's region is not allowed.
    Region,
    /// The estimated cost is over what is left of the cost budget.
    Cost,
    /// The route is cooling (or held by recovery).
    Suppressed,
}

impl FilterReason {
    /// Every reason, in filter order.
    pub const ALL: [FilterReason; 8] = [
        FilterReason::Modalities,
        FilterReason::Context,
        FilterReason::Tools,
        FilterReason::SchemaMode,
        FilterReason::ModelClass,
        FilterReason::Region,
        FilterReason::Cost,
        FilterReason::Suppressed,
    ];

    /// Its name in reports.
    pub const fn as_str(self) -> &'static str {
        match self {
            FilterReason::Modalities => "modalities",
            FilterReason::Context => "context",
            FilterReason::Tools => "tools",
            FilterReason::SchemaMode => "schema_mode",
            FilterReason::ModelClass => "model_class",
            FilterReason::Region => "region",
            FilterReason::Cost => "cost",
            FilterReason::Suppressed => "suppressed",
        }
    }
}

/// Why a response was rejected (the `validation_rejected` event's `reason`), and the defect a
/// fake provider's `invalid_response` fault puts in an answer (named as in reports).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ValidationReason {
    /// `finish_reason: length`: the output was cut.
    Truncated,
    /// The content is not a JSON object.
    MalformedJson,
    /// A required field is missing.
    MissingField,
    /// A field has the wrong type or a value outside its enum.
    SchemaMismatch,
    /// The schema's domain invariant does not hold.
    InvariantViolated,
    /// A tool call names a tool that is not registered.
    UnknownTool,
    /// A tool call's arguments are not valid for its tool.
    InvalidToolArguments,
}

impl ValidationReason {
    /// Every reason.
    pub const ALL: [ValidationReason; 7] = [
        ValidationReason::Truncated,
        ValidationReason::MalformedJson,
        ValidationReason::MissingField,
        ValidationReason::SchemaMismatch,
        ValidationReason::InvariantViolated,
        ValidationReason::UnknownTool,
        ValidationReason::InvalidToolArguments,
    ];

    /// Its name in reports.
    pub const fn as_str(self) -> &'static str {
        match self {
            ValidationReason::Truncated => "truncated",
            ValidationReason::MalformedJson => "malformed_json",
            ValidationReason::MissingField => "missing_field",
            ValidationReason::SchemaMismatch => "schema_mismatch",
            ValidationReason::InvariantViolated => "invariant_violated",
            ValidationReason::UnknownTool => "unknown_tool",
            ValidationReason::InvalidToolArguments => "invalid_tool_arguments",
        }
    }
}
