//! `profile: contract`: contract-aware routing with validation before acceptance
//! (`reliable-llm-routing-contracts.md`), as a bundle of policy implementations (see
//! [`crate::profile`]). The walk is the router's candidate walk (`router/candidates.rs`, shared
//! with `profile: multigrid`); this module supplies what the seed adds to it through the
//! [`RouteAdmission`] seam:
//!
//! - **A contract per workload** ([`Contract`]): *"Start by describing what a successful
//!   response must provide"* — modalities, context, tools, structured output, model classes,
//!   cost and deadline. A request carries its workload's contract (`Request::contract`).
//! - **Filter before ranking** ([`capability::filter`]): *"Filter candidate routes against the
//!   contract before considering health, latency, or price"*, in the seed's order: modalities,
//!   context ≥ estimated input, tools, schema mode, model class, estimated cost ≤ remaining
//!   budget, not temporarily suppressed. A filtered route is never tried; the router reports
//!   it (`route_filtered`). The survivors are ranked by health (failures among their last
//!   8 attempts, [`health`]), measured latency, then cost.
//! - **Failure classes** ([`class::FailureClass`]) and a bounded attempt policy
//!   ([`ContractRetryPolicy`]): *"one primary attempt plus one fallback, with an optional
//!   same-route retry only for an early connection failure"* — `max_attempts` (default 2) and
//!   `same_route_retries` (default 1, for connection failures and hinted capacity failures).
//! - **Validation before acceptance** ([`validate::validate`]): every non-streamed response,
//!   the primary's included, against the contract's schema and registered tools ([`schema`]);
//!   a rejected 200 is a `malformed_response` failure with status 200 and a
//!   `validation_rejected` event.
//! - **One latency budget** ([`budget`]): an absolute deadline at arrival (the contract's
//!   `deadline_ms`, else `request_deadline` / `stream_deadline`); no attempt starts when the
//!   time left is under `connect_allowance + generation + validation_allowance`.

pub mod admission;
pub mod budget;
pub mod capability;
pub mod class;
pub mod health;
pub mod retry;
pub mod schema;
pub mod terms;
pub mod validate;

pub use admission::{ContractAdmission, NoAdmission, RouteAdmission};
pub use capability::FilterReason;
pub use class::FailureClass;
pub use retry::ContractRetryPolicy;
pub use terms::{Contract, StructuredOutput};
pub use validate::ValidationReason;
