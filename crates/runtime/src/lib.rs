//! The runtimes a simulated run can use, behind one seam.
//!
//! - [`RuntimeKind::Virtual`] (the default): [`Executor`], a single-threaded executor whose
//!   clock jumps to the next deadline when every task waits. Deadlines are exact to the
//!   nanosecond.
//! - [`RuntimeKind::Tokio`]: tokio's current-thread runtime with paused time and a `LocalSet`,
//!   as every run used before; kept to compare the two (`--runtime tokio`). tokio rounds each
//!   timer up to the next whole millisecond, so the same seed gives slightly different
//!   latencies on the two runtimes; each is deterministic on its own.
//!
//! Simulated code reaches time and tasks only through [`time`], [`spawn_local`] and
//! [`RuntimeClock`] (the engine's `Clock`), which pick the runtime of the current thread.

mod clock;
mod deadlines;
mod executor;
mod task;
pub mod time;
mod timers;

#[cfg(test)]
mod tests;

use std::future::Future;

pub use clock::RuntimeClock;
pub use executor::{Executor, Stalled, VirtualTask, is_virtual};
pub use task::{JoinHandle, spawn_local, spawn_local_with};

/// Which runtime drives a simulated run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RuntimeKind {
    /// The virtual-time executor (exact deadlines; the default).
    #[default]
    Virtual,
    /// tokio's paused current-thread runtime (millisecond timers).
    Tokio,
}

impl RuntimeKind {
    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::Virtual => "virtual",
            Self::Tokio => "tokio",
        }
    }

    /// Parses `virtual` or `tokio`.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "virtual" => Some(Self::Virtual),
            "tokio" => Some(Self::Tokio),
            _ => None,
        }
    }

    /// Runs `future` (and what it spawns) to its end on this runtime, from virtual time zero.
    pub fn block_on<F: Future>(self, future: F) -> Result<F::Output, RuntimeError> {
        self.block_on_from(None, future)
    }

    /// [`block_on`](Self::block_on), with the virtual executor's `Instant`s counted from
    /// `origin` (tokio ignores it): no output may depend on it, and a test moves it to prove
    /// that nothing in a simulated run reads the wall clock.
    pub fn block_on_from<F: Future>(
        self,
        origin: Option<std::time::Instant>,
        future: F,
    ) -> Result<F::Output, RuntimeError> {
        match self {
            Self::Virtual => {
                let executor = origin.map_or_else(Executor::new, Executor::with_origin);
                Ok(executor.block_on(future)?)
            }
            Self::Tokio => {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_time()
                    .start_paused(true)
                    .build()?;
                let local = tokio::task::LocalSet::new();
                Ok(local.block_on(&runtime, future))
            }
        }
    }
}

/// Why a runtime could not run a future to its end.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// tokio's runtime could not be built.
    #[error("could not start tokio's runtime: {0}")]
    Build(#[from] std::io::Error),
    /// The virtual executor had nothing left to run or wake.
    #[error(transparent)]
    Stalled(#[from] Stalled),
}
