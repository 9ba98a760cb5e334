//! # routersim-engine
//!
//! A production-shaped LLM router engine that implements LiteLLM's reliability rules —
//! retries, fallbacks, order fallbacks, weighted failover, cooldowns and stream recovery —
//! and DeltaLLM's strategies, half-open recovery and failure classification, generic over a
//! [`Provider`](provider::Provider) (one call per attempt) and a [`Clock`](clock::Clock)
//! (tokio's, so paused time drives it). It knows nothing of simulation: the simulator drives
//! this same code with fake providers.
//!
//! Layers, bottom first; each module names only what sits below it, so a policy can change
//! without its settings or events moving: the vocabulary (`failure`, `stream`, `clock`,
//! `retry_after`, `pattern`), the settings (`config`: every setting and value type), the events
//! and their reasons (`event`), requests and a workload's contract (`request`,
//! `contract::terms`), the policies (`retry`, `backoff`, `cooldown`, `fallback`, `recovery`,
//! `classify`, `strategy`, `stream_rules`, `state`, `alternatives`, and the profiles' own in
//! `litellm110`, `multigrid`, `contract`), the profile table that bundles them (`profile`),
//! and the router that orders them (`router`).
//!
//! ```no_run
//! # async fn demo<P: routersim_engine::provider::Provider>(config: routersim_engine::config::RouterConfig, provider: P) {
//! use routersim_engine::{Router, request::Request};
//! let router = Router::from_config(config, provider);
//! let result = router.completion(Request::new(1, "gpt-4o")).await;
//! println!("{:?} after {} attempts", result.outcome, result.attempts.len());
//! # }
//! ```

#![cfg_attr(
    test,
    allow(
        clippy::disallowed_methods,
        reason = "unit tests drive tokio's paused clock directly"
    )
)]

pub mod alternatives;
pub mod backoff;
pub mod classify;
pub mod clock;
pub mod config;
pub mod contract;
pub mod cooldown;
pub mod event;
pub mod failure;
pub mod fallback;
pub mod litellm110;
pub mod multigrid;
pub use routersim_primitives::pattern;
pub mod portkey;
pub mod profile;
pub mod provider;
pub mod recovery;
pub mod replay;
pub mod request;
pub mod retry;
pub mod retry_after;
pub mod router;
use routersim_primitives::small;
pub mod state;
pub mod stats;
pub mod strategy;
pub mod stream;
pub mod stream_rules;
pub use routersim_primitives::sync;

pub use router::{Router, RouterBuilder};
