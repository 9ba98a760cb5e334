//! Where cooldowns and allowed-fails counters live: the trait the router reads and writes them
//! through, so that a shared store (the simulated fleet's, Redis) can stand in for the
//! in-process one.

use std::time::Duration;

use tokio::time::Instant;

use super::cooldown::Rewrite;

/// Where cooldowns and allowed-fails counters live. Deployments are named by their index in
/// the router's deployment list.
pub trait StateStore {
    /// The cooldown deadline of `deployment`, if an entry exists (it may already be expired).
    fn cooldown_until(&self, deployment: usize) -> Option<Instant>;
    /// Cools `deployment` until `until`; re-cooling keeps the later deadline. Returns the
    /// deadline in force.
    fn set_cooldown(&self, deployment: usize, until: Instant) -> Instant;
    /// Cools `deployment` until `until` at `now`, a live entry re-written by `rule`. Returns
    /// the deadline in force. A store that keeps no first-write expiry keeps the later
    /// deadline (the default).
    fn rewrite_cooldown(
        &self,
        deployment: usize,
        now: Instant,
        until: Instant,
        rule: Rewrite,
    ) -> Instant {
        let _ = (now, rule);
        self.set_cooldown(deployment, until)
    }
    /// Removes the entry of `deployment` if it expired by `now`, returning its deadline.
    fn take_if_expired(&self, deployment: usize, now: Instant) -> Option<Instant>;
    /// Removes and returns every entry expired by `now`, in deployment order.
    fn take_all_expired(&self, now: Instant) -> Vec<(usize, Instant)>;
    /// The soonest deadline of any entry.
    fn next_cooldown_deadline(&self) -> Option<Instant>;
    /// Counts one failure of `deployment`; a fresh counter expires `ttl` after this failure.
    /// Returns the count including this failure.
    fn increment_allowed_fails(&self, deployment: usize, now: Instant, ttl: Duration) -> u32;
    /// Removes the cooldown of `deployment` (half-open success, health probe); true if one
    /// existed.
    fn clear_cooldown(&self, deployment: usize) -> bool;
    /// Forgets the allowed-fails count of `deployment`.
    fn reset_allowed_fails(&self, deployment: usize);
    /// Whether a cooldown may be written now. A shared store that is unreachable and set to
    /// fail closed (DeltaLLM: *"With fail_closed, health transitions fail … while Redis is
    /// unavailable"*) says no, and the router then sets no cooldown. In-memory: always.
    fn accepts_health_writes(&self) -> bool {
        true
    }
}
