//! Routing events: the only thing the engine tells the outside world besides each result.
//!
//! Seed: *"Each hop is reported as a `Fallback` routing event with its source, target, order,
//! depth and level."* and *"Cooldown alerts and metrics fire from the `CooldownSet` routing
//! event."* Every report routersim writes is derived from these.
//!
//! Why a layer of its own: the policies report what they decided with these types, so the
//! events and their reasons sit below every policy and name none. [`kind`] (the events),
//! [`reasons`] and [`contract`] (what they carry), [`alternative`] (the alternatives' events),
//! [`sink`] (where they go), [`visit`] (reading them by family).

pub mod alternative;
pub mod contract;
mod dispatch;
pub mod kind;
pub mod reasons;
pub mod sink;
pub mod visit;

pub use alternative::AlternativeEvent;
pub use contract::{FilterReason, ValidationReason};
pub use kind::{EventKind, RoutingEvent};
pub use reasons::{
    CooldownReason, CooldownSource, FallbackLevel, GiveUpReason, RecoveredVia, WaitReason,
};
pub use sink::{EventSink, NullSink, VecSink};
pub use visit::EventVisitor;
