//! drive's connections: a bounded pool of keep-alive HTTP/1.1 connections, so a router sees
//! as many connections as requests are in flight (at most the budget), and drive's own file
//! descriptors never run out before the target does.
//!
//! - **The budget** ([`fd_budget`]): at most `min(--max-connections, RLIMIT_NOFILE / 4)`
//!   connections are open at once, idle or busy, over every target (the soft limit read once
//!   at start; a quarter, because the in-process providers' sockets to the router, the
//!   router's own when it runs in this process, and the report's files share the same table).
//! - **Reuse**: a request takes an idle connection to its target, else whichever comes first
//!   of a connection another request gives back and a new one (the loser is kept for the
//!   next request), as hyper-util's pool does: answers that come back quickly keep the
//!   connections few. Beyond the budget a request waits for a connection: that wait is the
//!   load generator's, not the target's, so its latency counts from when it was sent, and the
//!   report counts the requests that waited and the longest wait.
//! - **A connection the target closed** (its keep-alive expired): a request that fails on a
//!   reused connection before its answer's headers arrived is sent again, once, on a fresh
//!   connection (as browsers and hyper-util's pool do for the same race, RFC 9112 §9.3.1).
//! - **The OS refusing a socket** (`EMFILE`, `ENFILE`, `EADDRNOTAVAIL`) is the load generator's
//!   limit: the request is [`SendError::Refused`], not sent, and never one of the target's
//!   `api_connection` failures.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, VecDeque};
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, oneshot};
use tokio::time::Instant;

/// `--max-connections`' default.
pub const DEFAULT_MAX_CONNECTIONS: usize = 4096;

/// The share of `RLIMIT_NOFILE` drive's connections may hold (one in this many descriptors).
pub const NOFILE_SHARE: u64 = 4;

/// A request as drive sends it.
pub type Outgoing = http::Request<Full<Bytes>>;
/// An answer's head and its streaming body.
pub type Response = http::Response<hyper::body::Incoming>;

/// The connections drive may hold open: `min(max_connections, nofile / 4)`, at least 1.
/// `nofile` is the soft `RLIMIT_NOFILE` ([`nofile_limit`]); `None` (not readable) leaves
/// `max_connections` alone.
pub fn fd_budget(max_connections: usize, nofile: Option<u64>) -> usize {
    let share = nofile.map_or(usize::MAX, |n| {
        usize::try_from(n / NOFILE_SHARE).unwrap_or(usize::MAX)
    });
    max_connections.min(share).max(1)
}

/// The soft `RLIMIT_NOFILE`, read once from `/proc/self/limits` (Linux); `None` elsewhere or
/// when unlimited.
pub fn nofile_limit() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = text.lines().find(|l| l.starts_with("Max open files"))?;
    line.trim_start_matches("Max open files")
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Why a request was not answered.
#[derive(Debug)]
pub enum SendError {
    /// The OS refused a socket: the request was not sent (the load generator's limit).
    Refused(String),
    /// The connection or the exchange failed (the target's side, as far as drive can tell).
    Failed(String),
}

/// What the pool saw, for the report.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PoolStats {
    /// The budget: connections open at once at most.
    pub budget: usize,
    /// Connections opened.
    pub opened: u64,
    /// Requests that waited for a connection (every one of the budget was busy).
    pub waited: u64,
    /// The longest such wait.
    pub max_wait: Duration,
    /// Requests sent again on a fresh connection after their reused one failed first.
    pub resent: u64,
}

/// An open connection; the count of open ones drops with it.
struct Conn {
    sender: SendRequest<Full<Bytes>>,
    open: Rc<Cell<usize>>,
}

impl Drop for Conn {
    fn drop(&mut self) {
        self.open.set(self.open.get().saturating_sub(1));
    }
}

/// The bounded pool (one per run; call inside a `LocalSet`: connection tasks are local).
pub struct Pool {
    permits: Arc<Semaphore>,
    open: Rc<Cell<usize>>,
    idle: RefCell<BTreeMap<SocketAddr, Vec<Conn>>>,
    /// Requests waiting for a connection to a target, first come first served.
    waiters: RefCell<BTreeMap<SocketAddr, VecDeque<oneshot::Sender<Conn>>>>,
    stats: RefCell<PoolStats>,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("open", &self.open.get())
            .field("stats", &self.stats.borrow())
            .finish_non_exhaustive()
    }
}

/// A connection lent to one request: [`Lease::release`] it once the answer was read whole
/// (it goes back to the idle ones); dropped otherwise (it closes).
pub struct Lease {
    conn: Conn,
    addr: SocketAddr,
    _permit: OwnedSemaphorePermit,
    pool: Rc<Pool>,
}

impl Lease {
    /// Gives the connection back for the next request to its target.
    pub fn release(self) {
        let Self {
            conn, addr, pool, ..
        } = self;
        pool.put(addr, conn);
    }
}

impl Pool {
    /// A pool of at most `budget` connections.
    pub fn new(budget: usize) -> Rc<Self> {
        let budget = budget.max(1);
        Rc::new(Self {
            permits: Arc::new(Semaphore::new(budget)),
            open: Rc::new(Cell::new(0)),
            idle: RefCell::new(BTreeMap::new()),
            waiters: RefCell::new(BTreeMap::new()),
            stats: RefCell::new(PoolStats {
                budget,
                ..PoolStats::default()
            }),
        })
    }

    /// What it saw so far.
    pub fn stats(&self) -> PoolStats {
        self.stats.borrow().clone()
    }

    /// Sends `request` to `addr`: the answer's head, the connection to release once its body
    /// is read, and how long the request waited for a connection (zero when one was free).
    pub async fn send(
        self: &Rc<Self>,
        addr: SocketAddr,
        request: Outgoing,
    ) -> Result<(Response, Lease, Duration), SendError> {
        let asked = Instant::now();
        let permit = match self.permits.clone().try_acquire_owned() {
            Ok(permit) => permit,
            Err(_) => {
                let permit = self
                    .permits
                    .clone()
                    .acquire_owned()
                    .await
                    .map_err(|e| SendError::Failed(e.to_string()))?;
                let waited = asked.elapsed();
                let mut stats = self.stats.borrow_mut();
                stats.waited += 1;
                stats.max_wait = stats.max_wait.max(waited);
                permit
            }
        };
        let waited = asked.elapsed();
        let (mut conn, reused) = self.checkout(addr).await?;
        if reused {
            let again = duplicate(&request);
            match conn.sender.send_request(request).await {
                Ok(response) => return Ok((response, self.lease(conn, addr, permit), waited)),
                // Closed under the request before its answer: once more on a fresh one.
                Err(_) => {
                    drop(conn);
                    self.stats.borrow_mut().resent += 1;
                    let fresh = self.fresh(addr).await?;
                    return self.send_on(fresh, addr, again, permit, waited).await;
                }
            }
        }
        self.send_on(conn, addr, request, permit, waited).await
    }

    fn lease(self: &Rc<Self>, conn: Conn, addr: SocketAddr, permit: OwnedSemaphorePermit) -> Lease {
        Lease {
            conn,
            addr,
            _permit: permit,
            pool: self.clone(),
        }
    }

    async fn send_on(
        self: &Rc<Self>,
        mut conn: Conn,
        addr: SocketAddr,
        request: Outgoing,
        permit: OwnedSemaphorePermit,
        waited: Duration,
    ) -> Result<(Response, Lease, Duration), SendError> {
        let response = conn
            .sender
            .send_request(request)
            .await
            .map_err(|e| SendError::Failed(e.to_string()))?;
        Ok((response, self.lease(conn, addr, permit), waited))
    }

    /// A connection for one request (`true`: a reused one): an idle one, else whichever comes
    /// first of one another request gives back and a new one (which, when it loses, is kept
    /// for the next request): as hyper-util's pool does, so answers that come back quickly
    /// keep the connections few.
    async fn checkout(self: &Rc<Self>, addr: SocketAddr) -> Result<(Conn, bool), SendError> {
        loop {
            if let Some(conn) = self.reusable(addr).await {
                return Ok((conn, true));
            }
            let (tx, mut rx) = oneshot::channel();
            self.waiters
                .borrow_mut()
                .entry(addr)
                .or_default()
                .push_back(tx);
            if !self.reserve() {
                // Every descriptor of the budget is open: one given back, or (after a while)
                // an idle one to another target closed for this one.
                if let Ok(Ok(conn)) = tokio::time::timeout(RETRY, &mut rx).await
                    && let Some(conn) = ready(conn).await
                {
                    return Ok((conn, true));
                }
                self.give_back(addr, rx);
                continue;
            }
            let pool = self.clone();
            let mut opening = Box::pin(async move { pool.open_reserved(addr).await });
            tokio::select! {
                biased;
                Ok(conn) = &mut rx => {
                    let pool = self.clone();
                    tokio::task::spawn_local(async move {
                        if let Ok(conn) = opening.await {
                            pool.put(addr, conn);
                        }
                    });
                    if let Some(conn) = ready(conn).await {
                        return Ok((conn, true));
                    }
                }
                opened = &mut opening => {
                    self.give_back(addr, rx);
                    return opened.map(|conn| (conn, false));
                }
            }
        }
    }

    /// A connection handed to a request that no longer waits for it goes to the next one.
    fn give_back(&self, addr: SocketAddr, mut rx: oneshot::Receiver<Conn>) {
        rx.close();
        if let Ok(conn) = rx.try_recv() {
            self.put(addr, conn);
        }
    }

    /// A new connection (for the one re-send).
    async fn fresh(&self, addr: SocketAddr) -> Result<Conn, SendError> {
        while !self.reserve() {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        self.open_reserved(addr).await
    }

    /// Gives a connection to the first request waiting for its target, else keeps it idle.
    fn put(&self, addr: SocketAddr, mut conn: Conn) {
        loop {
            let waiter = self
                .waiters
                .borrow_mut()
                .get_mut(&addr)
                .and_then(VecDeque::pop_front);
            let Some(waiter) = waiter else { break };
            match waiter.send(conn) {
                Ok(()) => return,
                // That request took another connection meanwhile.
                Err(back) => conn = back,
            }
        }
        self.idle.borrow_mut().entry(addr).or_default().push(conn);
    }

    /// An idle connection to `addr` still open and ready, if any (closed ones are dropped).
    async fn reusable(&self, addr: SocketAddr) -> Option<Conn> {
        loop {
            let conn = self.idle.borrow_mut().get_mut(&addr)?.pop()?;
            if let Some(conn) = ready(conn).await {
                return Some(conn);
            }
        }
    }

    /// Counts one more open descriptor, closing an idle connection (to any target) when the
    /// budget is all open; `false` when every open one is busy.
    fn reserve(&self) -> bool {
        let budget = self.stats.borrow().budget;
        if self.open.get() >= budget {
            let evicted = self
                .idle
                .borrow_mut()
                .values_mut()
                .find_map(std::vec::Vec::pop);
            if evicted.is_none() {
                return false;
            }
            drop(evicted);
        }
        self.open.set(self.open.get() + 1);
        true
    }

    /// Opens a connection whose descriptor [`Pool::reserve`] counted.
    async fn open_reserved(&self, addr: SocketAddr) -> Result<Conn, SendError> {
        let opened = async {
            let stream = tokio::net::TcpStream::connect(addr)
                .await
                .map_err(|e| refused_or_failed(addr, &e))?;
            let _ = stream.set_nodelay(true);
            hyper::client::conn::http1::handshake(TokioIo::new(stream))
                .await
                .map_err(|e| SendError::Failed(e.to_string()))
        };
        let (sender, conn) = match opened.await {
            Ok(opened) => opened,
            Err(e) => {
                self.open.set(self.open.get().saturating_sub(1));
                return Err(e);
            }
        };
        tokio::task::spawn_local(async move {
            let _ = conn.await;
        });
        self.stats.borrow_mut().opened += 1;
        Ok(Conn {
            sender,
            open: self.open.clone(),
        })
    }
}

/// How long a request that found the budget all open waits for a connection before it looks
/// again (for an idle one to another target to close).
const RETRY: Duration = Duration::from_millis(5);

/// `conn` if it is still open and ready for a request.
async fn ready(mut conn: Conn) -> Option<Conn> {
    if conn.sender.is_closed() {
        return None;
    }
    conn.sender.ready().await.ok().map(|()| conn)
}

/// Whether a failed `connect` is the OS refusing a socket (`EMFILE` 24, `ENFILE` 23 on Linux
/// and macOS; `EADDRNOTAVAIL`: the ephemeral ports ran out) or a failure to reach the target.
fn refused_or_failed(addr: SocketAddr, e: &std::io::Error) -> SendError {
    let refused = matches!(e.raw_os_error(), Some(23 | 24))
        || e.kind() == std::io::ErrorKind::AddrNotAvailable;
    if refused {
        SendError::Refused(format!("connect {addr}: {e}"))
    } else {
        SendError::Failed(format!("connect {addr}: {e}"))
    }
}

/// The same request again (for the one re-send): method, URI, headers and body.
fn duplicate(request: &Outgoing) -> Outgoing {
    let mut again = http::Request::new(request.body().clone());
    *again.method_mut() = request.method().clone();
    *again.uri_mut() = request.uri().clone();
    *again.version_mut() = request.version();
    *again.headers_mut() = request.headers().clone();
    again
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_is_the_smaller_of_the_flag_and_a_quarter_of_nofile() {
        assert_eq!(fd_budget(4096, Some(20_000)), 4096);
        assert_eq!(fd_budget(4096, Some(1024)), 256);
        assert_eq!(fd_budget(100, None), 100);
        assert_eq!(fd_budget(4096, Some(2)), 1);
    }

    #[test]
    fn the_os_refusing_a_socket_is_told_apart_from_a_target_refusing_a_connection() {
        let addr: SocketAddr = "127.0.0.1:9".parse().unwrap();
        let emfile = std::io::Error::from_raw_os_error(24);
        assert!(matches!(
            refused_or_failed(addr, &emfile),
            SendError::Refused(_)
        ));
        let busy = std::io::Error::from(std::io::ErrorKind::AddrNotAvailable);
        assert!(matches!(
            refused_or_failed(addr, &busy),
            SendError::Refused(_)
        ));
        let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        match refused_or_failed(addr, &refused) {
            SendError::Failed(why) => assert!(why.starts_with("connect 127.0.0.1:9")),
            SendError::Refused(_) => panic!("a closed port is the target's"),
        }
    }
}
