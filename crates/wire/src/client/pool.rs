//! Keep-alive connections to each deployment, reused across calls (opt-in:
//! [`HttpProvider::with_pool`](super::HttpProvider::with_pool); the simulator's transport
//! opens one connection per call, so its runs keep their bytes).
//!
//! Why: a fresh TCP connection and HTTP/1.1 handshake per call is most of what a proxy in
//! front of a fast provider spends. The rules, after hyper-util's legacy `Client` (its
//! `pool_max_idle_per_host`, `pool_idle_timeout` and `retry_canceled_requests`):
//! - **Per deployment** (the index the router passes; each deployment has one endpoint, so
//!   one upstream authority).
//! - **Bounded**: at most `max_idle` idle connections kept per deployment (a connection
//!   handed back to a full pool is closed); connections in use are as many as calls in
//!   flight, as without a pool.
//! - **Only whole answers return a connection**: a body read to its end (a JSON answer, an
//!   error body, an SSE stream's last byte). A call dropped by a deadline, a stream cut or
//!   stalled, a body too large: the connection is dropped and closes, exactly as without a
//!   pool, so the provider sees the same cut.
//! - **Idle expiry** ([`DEFAULT_IDLE_TIMEOUT`], below `routersim serve`'s 60 s idle cut and
//!   most servers' keep-alive timeouts): an older idle connection is closed, not reused, so
//!   a server's idle close rarely races a reuse.
//! - **One retry, only for a request never written**: when a reused connection turns out
//!   closed before the request's first byte went out (hyper's `try_send_request` hands the
//!   request back), the call is sent once more on a fresh connection. A request that was
//!   written is never resent (the provider may have counted it): its failure is the call's.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::client::conn::http1::SendRequest;
use tokio::time::Instant;

/// The default bound on idle connections kept per deployment.
pub const DEFAULT_MAX_IDLE_PER_DEPLOYMENT: usize = 256;
/// How long an idle connection is kept by default.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(30);

/// A connection's request sender.
pub type Sender = SendRequest<Full<Bytes>>;

#[derive(Debug)]
struct Idle {
    sender: Sender,
    since: Instant,
}

/// Idle keep-alive connections by deployment index (cheap to clone: shared).
#[derive(Clone, Debug)]
pub struct Pool {
    idle: Arc<Mutex<Vec<Vec<Idle>>>>,
    max_idle: usize,
    idle_timeout: Duration,
    /// The clock idle times are read on (injected: this crate reads no clock itself).
    now: fn() -> Instant,
}

impl Pool {
    /// A pool for `deployments` deployments (indexes `0..deployments`; others are not
    /// pooled), keeping at most `max_idle` idle connections each, each for `idle_timeout` as
    /// read on `now` (e.g. `tokio::time::Instant::now`).
    pub fn new(
        deployments: usize,
        max_idle: usize,
        idle_timeout: Duration,
        now: fn() -> Instant,
    ) -> Self {
        Self {
            idle: Arc::new(Mutex::new((0..deployments).map(|_| Vec::new()).collect())),
            max_idle,
            idle_timeout,
            now,
        }
    }

    /// [`new`](Self::new) with the default bounds.
    pub fn with_defaults(deployments: usize, now: fn() -> Instant) -> Self {
        Self::new(
            deployments,
            DEFAULT_MAX_IDLE_PER_DEPLOYMENT,
            DEFAULT_IDLE_TIMEOUT,
            now,
        )
    }

    /// The most recently returned live connection to deployment `index`, if any (closed and
    /// expired ones are dropped on the way).
    pub fn take(&self, index: usize) -> Option<Sender> {
        let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
        let list = idle.get_mut(index)?;
        let now = (self.now)();
        while let Some(entry) = list.pop() {
            let idle_for = now.saturating_duration_since(entry.since);
            if !entry.sender.is_closed() && idle_for < self.idle_timeout {
                return Some(entry.sender);
            }
        }
        None
    }

    /// Hands back a connection whose last answer was read whole; closed when the pool is
    /// full, the connection is closed, or `index` is not pooled.
    pub fn give_back(&self, index: usize, sender: Sender) {
        if sender.is_closed() {
            return;
        }
        let since = (self.now)();
        let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(list) = idle.get_mut(index)
            && list.len() < self.max_idle
        {
            list.push(Idle { sender, since });
        }
    }

    /// Idle connections kept for deployment `index` now.
    pub fn idle(&self, index: usize) -> usize {
        let idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
        idle.get(index).map_or(0, Vec::len)
    }
}

/// A pooled connection lent to one call: handed back once its answer was read whole.
#[derive(Debug)]
pub struct Lease {
    pool: Pool,
    index: usize,
    sender: Sender,
}

impl Lease {
    /// `sender`, to return to `pool` under deployment `index`.
    pub fn new(pool: Pool, index: usize, sender: Sender) -> Self {
        Self {
            pool,
            index,
            sender,
        }
    }

    /// The answer was read whole: the connection goes back to the pool.
    pub fn give_back(self) {
        self.pool.give_back(self.index, self.sender);
    }
}
