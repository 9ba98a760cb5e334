//! What a real listener bounds for every client: how long a request may take to arrive, how
//! long a connection may sit idle or unread, and how many connections are open at once.
//!
//! Without these a client that sends one header line every few seconds keeps its connection
//! forever, and a thousand such clients hold every file descriptor: the server is starved
//! while doing no work (the slowloris attack). The rules (nginx's `client_header_timeout`,
//! `client_body_timeout`, `keepalive_timeout` and `worker_connections` are the model):
//!
//! - **Header timeout** ([`ConnLimits::header_timeout`], 10 s): a request's head must be
//!   complete within it of the request's first byte (of the connection's opening, for its
//!   first request), and its body within it too ([`read_body`] answers 408 past it).
//! - **Idle timeout** ([`ConnLimits::idle_timeout`], 60 s): a keep-alive connection with no
//!   request in progress is closed after it; so is one whose client stopped reading an answer
//!   (a write that cannot proceed for that long). A stream that is silent on purpose (a
//!   `stream_stall` fault, a provider thinking) is not idle: the server is the one silent.
//! - **Connection cap** ([`ConnLimits::max_connections`], 10,000 a server): past it, new
//!   connections wait in the kernel's accept queue (4,096 deep) until one closes, and a
//!   warning says so once per episode.
//!
//! Only real listeners use this ([`listen`](super::listen), and `routersim proxy`'s); the
//! simulator's `transport: http` serves in-memory pipes without it.

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::{BodyExt, LengthLimitError, Limited};
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use routersim_runtime::time::{now, sleep_until};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio::time::Instant;

/// The default [`ConnLimits::header_timeout`].
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// The default [`ConnLimits::idle_timeout`].
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(60);
/// The default [`ConnLimits::max_connections`].
pub const DEFAULT_MAX_CONNECTIONS: usize = 10_000;

/// The bounds on each client of a real listener (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnLimits {
    /// A request's head, then its body, must arrive within this of its first byte.
    pub header_timeout: Duration,
    /// A connection with no request in progress, or whose client stopped reading, is closed
    /// after this.
    pub idle_timeout: Duration,
    /// Connections open at once, over all of a server's listeners.
    pub max_connections: usize,
}

impl Default for ConnLimits {
    fn default() -> Self {
        Self {
            header_timeout: DEFAULT_HEADER_TIMEOUT,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            max_connections: DEFAULT_MAX_CONNECTIONS,
        }
    }
}

/// The instant a request's body must be read by, in its extensions (absent off a real
/// listener: the simulator sets no deadline).
#[derive(Clone, Copy, Debug)]
pub struct BodyDeadline {
    /// The deadline.
    pub at: Instant,
    /// The header timeout it came from (for the message).
    pub timeout: Duration,
}

/// Why a request's body could not be read.
#[derive(Debug, PartialEq, Eq)]
pub enum BodyError {
    /// Over the size limit (413).
    TooLarge(usize),
    /// Not a well-formed HTTP body (a bad chunk size, a connection cut mid-body): 400.
    Malformed(String),
    /// It did not arrive in time (408).
    TimedOut(Duration),
}

impl BodyError {
    /// The status to answer with.
    pub fn status(&self) -> u16 {
        match self {
            BodyError::TooLarge(_) => 413,
            BodyError::Malformed(_) => 400,
            BodyError::TimedOut(_) => 408,
        }
    }
}

impl std::fmt::Display for BodyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BodyError::TooLarge(limit) => write!(
                f,
                "the request body is larger than {} MiB",
                limit / (1024 * 1024)
            ),
            BodyError::Malformed(why) => write!(f, "the request body could not be read: {why}"),
            BodyError::TimedOut(timeout) => write!(
                f,
                "the request did not arrive within {} of its first byte (--header-timeout)",
                crate::duration::format_duration(*timeout)
            ),
        }
    }
}

/// Reads `body` whole: at most `limit` bytes, by `deadline` when given.
pub async fn read_body(
    body: Incoming,
    limit: usize,
    deadline: Option<BodyDeadline>,
) -> Result<Bytes, BodyError> {
    let collect = async {
        match Limited::new(body, limit).collect().await {
            Ok(collected) => Ok(collected.to_bytes()),
            Err(e) if e.downcast_ref::<LengthLimitError>().is_some() => {
                Err(BodyError::TooLarge(limit))
            }
            Err(e) => Err(BodyError::Malformed(e.to_string())),
        }
    };
    match deadline {
        None => collect.await,
        Some(deadline) => tokio::select! {
            read = collect => read,
            () = sleep_until(deadline.at) => Err(BodyError::TimedOut(deadline.timeout)),
        },
    }
}

/// A connection's state, as its socket, its service and its answers see it.
#[derive(Debug, Default)]
struct ConnState {
    /// Requests whose answer is not fully handed to the socket.
    active: Cell<u32>,
    /// When the head being awaited started (the connection's opening, or a request's first
    /// byte); `None` while a request is in progress or the connection is idle.
    head_started: Cell<Option<Instant>>,
    /// When the connection went idle (its last answer done, no byte of a next request yet).
    idle_since: Cell<Option<Instant>>,
    /// When a write started waiting for the client to read.
    write_blocked: Cell<Option<Instant>>,
}

/// Why the watchdog closed a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cut {
    Header,
    Idle,
    Unread,
}

impl ConnState {
    fn opened(at: Instant) -> Self {
        let state = Self::default();
        state.head_started.set(Some(at));
        state
    }

    fn read_some(&self) {
        if self.active.get() == 0 && self.head_started.get().is_none() {
            self.head_started.set(Some(now()));
            self.idle_since.set(None);
        }
    }

    /// A head is complete: the request's body deadline.
    fn head_done(&self, limits: &ConnLimits) -> BodyDeadline {
        let started = self.head_started.take().unwrap_or_else(now);
        self.idle_since.set(None);
        self.active.set(self.active.get() + 1);
        BodyDeadline {
            at: started + limits.header_timeout,
            timeout: limits.header_timeout,
        }
    }

    fn answer_done(&self) {
        let left = self.active.get().saturating_sub(1);
        self.active.set(left);
        if left == 0 && self.head_started.get().is_none() {
            self.idle_since.set(Some(now()));
        }
    }

    fn write_pending(&self, pending: bool) {
        match (pending, self.write_blocked.get()) {
            (true, None) => self.write_blocked.set(Some(now())),
            (false, Some(_)) => self.write_blocked.set(None),
            _ => {}
        }
    }

    /// The soonest instant a rule cuts the connection, and which.
    fn deadline(&self, limits: &ConnLimits) -> Option<(Instant, Cut)> {
        let mut soonest: Option<(Instant, Cut)> = None;
        let mut consider = |at: Instant, cut: Cut| {
            if soonest.is_none_or(|(s, _)| at < s) {
                soonest = Some((at, cut));
            }
        };
        if let Some(t) = self.head_started.get() {
            consider(t + limits.header_timeout, Cut::Header);
        } else if self.active.get() == 0
            && let Some(t) = self.idle_since.get()
        {
            consider(t + limits.idle_timeout, Cut::Idle);
        }
        if let Some(t) = self.write_blocked.get() {
            consider(t + limits.idle_timeout, Cut::Unread);
        }
        soonest
    }
}

/// Resolves when a rule cuts the connection.
///
/// It is not woken by the connection's state changes (that would cost a wake-up of the
/// connection's task and a new timer per request): every deadline a change sets lies at least
/// the shorter of the two timeouts after the change, so a watchdog that looks again no later
/// than that after each look is never late, and cuts at the deadline itself.
async fn watchdog(state: Rc<ConnState>, limits: ConnLimits) -> Cut {
    let look_again = limits
        .header_timeout
        .min(limits.idle_timeout)
        .max(MIN_LOOK_AGAIN);
    loop {
        let looked = now();
        match state.deadline(&limits) {
            Some((at, cut)) if at <= looked => return cut,
            Some((at, _)) => sleep_until(at.min(looked + look_again)).await,
            None => sleep_until(looked + look_again).await,
        }
    }
}

/// The watchdog's shortest interval between looks (a zero timeout would spin otherwise).
const MIN_LOOK_AGAIN: Duration = Duration::from_millis(1);

/// The socket, reporting reads and blocked writes to the connection's state.
struct Watched<I> {
    io: I,
    state: Rc<ConnState>,
}

impl<I: AsyncRead + Unpin> AsyncRead for Watched<I> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.io).poll_read(cx, buf);
        if buf.filled().len() > before {
            self.state.read_some();
        }
        polled
    }
}

impl<I: AsyncWrite + Unpin> AsyncWrite for Watched<I> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let polled = Pin::new(&mut self.io).poll_write(cx, data);
        self.state.write_pending(polled.is_pending());
        polled
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let polled = Pin::new(&mut self.io).poll_write_vectored(cx, bufs);
        self.state.write_pending(polled.is_pending());
        polled
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let polled = Pin::new(&mut self.io).poll_flush(cx);
        self.state.write_pending(polled.is_pending());
        polled
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

/// An answer's body: when hyper drops it (handed over whole, or the connection gone), the
/// request is over.
#[derive(Debug)]
pub struct Tracked<B> {
    body: B,
    state: Option<Rc<ConnState>>,
}

impl<B> Drop for Tracked<B> {
    fn drop(&mut self) {
        if let Some(state) = self.state.take() {
            state.answer_done();
        }
    }
}

impl<B: Body + Unpin> Body for Tracked<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<B::Data>, B::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// Serves HTTP/1.1 on `stream` with `handle` until the client closes it or a rule of `limits`
/// cuts it. Each request carries its [`BodyDeadline`] in its extensions.
pub async fn serve_guarded<H, F, B, E>(stream: TcpStream, limits: ConnLimits, handle: H)
where
    H: Fn(Request<Incoming>) -> F + 'static,
    F: Future<Output = Result<Response<B>, E>> + 'static,
    B: Body + Unpin + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    E: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let _ = stream.set_nodelay(true);
    let state = Rc::new(ConnState::opened(now()));
    let io = Watched {
        io: stream,
        state: state.clone(),
    };
    let service_state = state.clone();
    let service = service_fn(move |mut req: Request<Incoming>| {
        let deadline = service_state.head_done(&limits);
        req.extensions_mut().insert(deadline);
        let answer = handle(req);
        let state = service_state.clone();
        async move {
            match answer.await {
                Ok(response) => Ok(response.map(|body| Tracked {
                    body,
                    state: Some(state),
                })),
                Err(e) => {
                    state.answer_done();
                    Err(e)
                }
            }
        }
    });
    let connection =
        hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(io), service);
    tokio::select! {
        _ = connection => {}
        _ = watchdog(state, limits) => {}
    }
}

/// The connection cap of one server: a permit per open connection, shared by its listeners.
#[derive(Clone, Debug)]
pub struct ConnGate {
    permits: Arc<Semaphore>,
    max: usize,
    /// Whether the cap was last seen reached (one warning per episode).
    full: Rc<Cell<bool>>,
}

impl ConnGate {
    /// A gate for `max` connections at once (at least one).
    pub fn new(max: usize) -> Self {
        let max = max.clamp(1, Semaphore::MAX_PERMITS);
        Self {
            permits: Arc::new(Semaphore::new(max)),
            max,
            full: Rc::new(Cell::new(false)),
        }
    }

    /// A permit for a connection accepted outside [`accept`](Self::accept) (a server's first
    /// client, which starts its clock), held while it is open; `None` at the cap.
    pub fn try_admit(&self) -> Option<tokio::sync::OwnedSemaphorePermit> {
        self.permits.clone().try_acquire_owned().ok()
    }

    /// Accepts connections on `listener` forever, each served by `serve` on its own local task
    /// while it holds a permit (call inside a `LocalSet`). At the cap, accepting waits (the
    /// warning goes to stderr once per episode); a failed accept (out of file descriptors) is
    /// retried after 10 ms.
    #[allow(
        clippy::disallowed_methods,
        reason = "a real listener: only ever on tokio's real-time runtime, never simulated"
    )]
    pub async fn accept<S, F>(&self, listener: TcpListener, serve: S)
    where
        S: Fn(TcpStream) -> F,
        F: Future<Output = ()> + 'static,
    {
        loop {
            let permit = match self.permits.clone().try_acquire_owned() {
                Ok(permit) => {
                    self.full.set(false);
                    permit
                }
                Err(_) => {
                    if !self.full.replace(true) {
                        eprintln!(
                            "warning: {} connections open (--max-connections {}): new \
                             connections wait in the accept queue until one closes",
                            self.max, self.max
                        );
                    }
                    match self.permits.clone().acquire_owned().await {
                        Ok(permit) => permit,
                        Err(_) => return,
                    }
                }
            };
            match listener.accept().await {
                Ok((stream, _)) => {
                    let served = serve(stream);
                    tokio::task::spawn_local(async move {
                        served.await;
                        drop(permit);
                    });
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> ConnLimits {
        ConnLimits {
            header_timeout: Duration::from_secs(1),
            idle_timeout: Duration::from_secs(5),
            max_connections: 2,
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_connection_is_cut_by_the_rule_that_applies_now() {
        let l = limits();
        let t0 = now();
        let state = ConnState::opened(t0);
        assert_eq!(
            state.deadline(&l),
            Some((t0 + l.header_timeout, Cut::Header)),
            "a fresh connection owes its head"
        );
        let deadline = state.head_done(&l);
        assert_eq!(deadline.at, t0 + l.header_timeout);
        assert_eq!(
            state.deadline(&l),
            None,
            "a request in progress has no deadline"
        );
        tokio::time::advance(Duration::from_secs(30)).await;
        state.answer_done();
        let t1 = now();
        assert_eq!(state.deadline(&l), Some((t1 + l.idle_timeout, Cut::Idle)));
        tokio::time::advance(Duration::from_secs(2)).await;
        state.read_some();
        assert_eq!(
            state.deadline(&l),
            Some((now() + l.header_timeout, Cut::Header)),
            "a next request's first byte starts its header timeout"
        );
        state.head_done(&l);
        state.write_pending(true);
        assert_eq!(
            state.deadline(&l),
            Some((now() + l.idle_timeout, Cut::Unread))
        );
        state.write_pending(false);
        assert_eq!(state.deadline(&l), None);
    }

    #[tokio::test(start_paused = true)]
    async fn the_watchdog_fires_at_the_deadline_and_follows_changes() {
        let l = limits();
        let state = Rc::new(ConnState::opened(now()));
        let begun = now();
        assert_eq!(watchdog(state.clone(), l).await, Cut::Header);
        assert_eq!(now() - begun, l.header_timeout);
        let state = Rc::new(ConnState::opened(now()));
        state.head_done(&l);
        state.answer_done();
        let begun = now();
        assert_eq!(watchdog(state, l).await, Cut::Idle);
        assert_eq!(now() - begun, l.idle_timeout);
    }
}
