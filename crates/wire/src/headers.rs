//! The `x-routersim-*` headers: harmless hints a real provider or router ignores, which let
//! the fake-provider server replay the exact call (the engine's HTTP adapter sends them) and
//! join a provider call to the request that caused it (`routersim drive` sends the id, and a
//! router that forwards client headers passes it on). One list, read by both sides.

/// Header: the router's request id.
pub const REQUEST_ID: &str = "x-routersim-request-id";
/// Header: the attempt number (from 1).
pub const ATTEMPT: &str = "x-routersim-attempt";
/// Header: the prompt's exact size in tokens.
pub const INPUT_TOKENS: &str = "x-routersim-input-tokens";
/// Header: the assistant prefill's exact size in tokens.
pub const PREFILL_TOKENS: &str = "x-routersim-prefill-tokens";
/// Header: the answer's length the simulation asks for.
pub const OUTPUT_TOKENS: &str = "x-routersim-output-tokens";
/// Header: sent by `routersim drive` on each request (a router under test may log it).
pub const DRIVE: &str = "x-routersim-drive";
/// Response header of `routersim proxy`: the attempts the request took.
pub const ATTEMPTS: &str = "x-routersim-attempts";
/// Response header of `routersim proxy`: routersim's version.
pub const VERSION: &str = "x-routersim-version";
