//! Cooldown and allowed-fails state, behind a trait so a shared store can come later.
//!
//! Seed: *"A cooldown is a key `deployment:{id}:cooldown` in the routing cache, with a TTL
//! equal to the cooldown time."* and *"Each counted failure increments
//! `deployment:{id}:allowed_fails`, which expires with the cooldown time."* Both live here as
//! TTL entries on the router's clock; [`InMemoryState`] is the per-process implementation.
//! (The error-rate counts are per-process by design and live in [`crate::cooldown`].)
//!
//! One concern per file: [`store`] (the trait), [`cooldown`] (the merge rule every store
//! applies), [`memory`] (the in-process store).

pub mod cooldown;
pub mod memory;
pub mod store;

pub use cooldown::{CooldownEntry, Rewrite, merge};
pub use memory::InMemoryState;
pub use store::StateStore;
