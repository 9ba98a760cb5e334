//! The engine's [`StateStore`](routersim_engine::state::StateStore) over a real Redis, shaped
//! like LiteLLM 1.110.2's cooldown store (observed with `redis-cli MONITOR`; see the README's
//! "Shared state over Redis"):
//!
//! - **An in-memory tier** the engine's synchronous trait reads and writes: routing never waits
//!   on Redis except for the explicit [`RedisState::refresh`] the proxy awaits before routing.
//! - **Writes go out asynchronously**, in order, from one spawned task fed by a channel: a
//!   cooldown is `SET deployment:<id>:cooldown <json> PX <ms>` (TTL = the cooldown's length, so
//!   another process derives the deadline from `PTTL` and no shared wall clock is needed); an
//!   allowed-fails count is `INCR` + `PEXPIRE` in one Lua script (atomic across processes).
//! - **Reads refresh the memory tier** the way LiteLLM reads: before a request is routed, the
//!   cooldown keys that are *not* live in memory and were not read within
//!   [`READ_THROTTLE`] (1 s, LiteLLM's observed throttle) are read in one round trip; a key
//!   found live becomes a local cooldown until `now + PTTL`.
//!
//! Redis failing is fail-open ([`health`]): a command that fails, or a read that takes longer
//! than [`READ_TIMEOUT`] (50 ms), degrades the store — the memory tier routes on what this
//! process knows, reads and writes are skipped (no request waits on a Redis that is gone or
//! frozen), a task reconnects with backoff, and recovery writes the live cooldowns back. The
//! failures, skipped writes, outages and the time degraded are counted
//! ([`RedisState::errors`], [`RedisState::degraded_time`]).
//!
//! It lives in live mode rather than the engine because it reads the real clock (a Redis
//! TTL is wall time) and does network I/O, both of which the engine forbids itself
//! (crates/engine/clippy.toml), and so the simulator never links it.

mod error;
pub mod health;
mod io;
mod keys;
mod reconnect;
mod shared;
mod store;

pub use error::RedisStateError;
pub use health::{HealthEvent, HealthSink};
pub use keys::{allowed_fails_key, cooldown_key};
pub use store::{
    COMMAND_TIMEOUT, MAX_BACKOFF, MIN_BACKOFF, READ_THROTTLE, READ_TIMEOUT, RedisOptions,
    RedisState,
};
