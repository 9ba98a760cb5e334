//! The response body: whole bytes, or SSE frames rendered from a [`FakeStream`] as its items
//! arrive.
//!
//! Each stream item becomes its frames at the instant the fake stream yields it (a stall is
//! simply no bytes). A break (`Some(Err(failure))`) is an abrupt close: for a kind other than
//! `api_connection` first the comment `: x-routersim-break kind=<kind> status=<status>`, then
//! the body yields an error, which makes hyper drop the connection without the terminating
//! chunk. hyper stops at a body error without flushing what it buffered, so before the error
//! the body yields to the connection a few times (`FLUSH_YIELDS`): the frames sent before
//! the break reach the client, as they would from a real provider. A clean end without the
//! terminal marker (`None`) is a truncated stream.

use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};
use routersim_engine::failure::FailureKind;
use routersim_engine::stream::ProviderStream;
use routersim_engine::stream::StreamItem;
use tokio::time::Instant;

use super::call_log::CallRow;
use crate::stream::FakeStream;
use routersim_wire::anthropic::server as anthropic;
use routersim_wire::openai::server as openai;

/// How many times a breaking body yields to the connection before its error, so hyper
/// flushes the frames before the break (each of its write loops polls the body twice).
const FLUSH_YIELDS: u8 = 4;

/// The error a body yields to abort its connection (a stream break).
#[derive(Debug, thiserror::Error)]
#[error("stream break: the fake provider drops the connection ({0})")]
pub struct StreamBreak(pub FailureKind);

/// A response body.
pub enum WireBody {
    /// All at once.
    Full(Option<Bytes>),
    /// An SSE stream.
    Sse(Box<SseBody>),
}

impl std::fmt::Debug for WireBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WireBody::Full(b) => f.debug_tuple("Full").field(b).finish(),
            WireBody::Sse(_) => f.write_str("Sse"),
        }
    }
}

impl WireBody {
    /// A whole body.
    pub fn full(bytes: impl Into<Bytes>) -> Self {
        WireBody::Full(Some(bytes.into()))
    }
}

/// The frames of one stream, in its format.
#[derive(Debug)]
pub enum Frames {
    /// OpenAI or Azure.
    OpenAi(openai::SseFrames),
    /// Anthropic.
    Anthropic(anthropic::SseFrames),
}

impl Frames {
    fn tokens_sent(&self) -> u32 {
        match self {
            Frames::OpenAi(f) => f.tokens_sent,
            Frames::Anthropic(f) => f.tokens_sent,
        }
    }

    fn render(&mut self, item: &StreamItem, out: &mut Vec<u8>) {
        match (self, item) {
            (Frames::OpenAi(f), StreamItem::Chunk(c)) => f.chunk(c, out),
            (Frames::OpenAi(f), StreamItem::Done(r)) => f.done(*r, out),
            (Frames::OpenAi(f), StreamItem::ErrorFrame(e)) => f.error_frame(e, out),
            (Frames::Anthropic(f), StreamItem::Chunk(c)) => f.chunk(c, out),
            (Frames::Anthropic(f), StreamItem::Done(r)) => f.done(*r, out),
            (Frames::Anthropic(f), StreamItem::ErrorFrame(e)) => f.error_frame(e, out),
        }
    }
}

/// Where a stream's row goes when it ends: the row so far (outcome, latency and tokens are
/// filled in at the end) and the sink.
pub struct StreamLog {
    /// The row; `outcome`, `latency` and `tokens` are set when the stream ends.
    pub row: CallRow,
    /// When the request arrived.
    pub arrived: Instant,
    /// Called with the finished row.
    pub sink: Rc<dyn Fn(&CallRow)>,
}

/// What one step of a stream produced.
enum Step {
    Bytes(Bytes),
    /// Yield to the connection (flush) before the break.
    Yield,
    Break(FailureKind),
    End,
}

/// An open stream and its renderer.
struct SseState {
    stream: FakeStream,
    frames: Frames,
    /// A break whose comment went out: yields left, then the error.
    breaking: Option<(FailureKind, u8)>,
    /// The terminal item went out: the body ends next.
    ended: bool,
    log: Option<StreamLog>,
}

impl SseState {
    fn finish(&mut self, outcome: String) {
        if let Some(mut log) = self.log.take() {
            log.row.outcome = outcome;
            log.row.latency = routersim_runtime::time::now().saturating_duration_since(log.arrived);
            log.row.tokens = self.frames.tokens_sent();
            (log.sink)(&log.row);
        }
    }

    /// Boxed: the pending future moves a pointer, not the state, in and out per item.
    async fn advance(mut self: Box<Self>) -> (Box<Self>, Step) {
        if let Some((kind, left)) = self.breaking {
            if left == 0 {
                return (self, Step::Break(kind));
            }
            self.breaking = Some((kind, left - 1));
            return (self, Step::Yield);
        }
        if self.ended {
            return (self, Step::End);
        }
        let mut out = Vec::new();
        match self.stream.next_item().await {
            Some(Ok(item)) => {
                self.frames.render(&item, &mut out);
                match &item {
                    StreamItem::Chunk(_) => {}
                    StreamItem::Done(_) => {
                        self.ended = true;
                        self.finish("ok".into());
                    }
                    StreamItem::ErrorFrame(f) => {
                        self.ended = true;
                        self.finish(format!("error_frame:{}", f.kind.as_str()));
                    }
                }
            }
            Some(Err(failure)) => {
                self.finish(format!("break:{}", failure.kind.as_str()));
                self.breaking = Some((failure.kind, FLUSH_YIELDS));
                if failure.kind != FailureKind::ApiConnection {
                    out = routersim_wire::sse::break_comment(&failure).into_bytes();
                } else {
                    return (self, Step::Yield);
                }
            }
            None => {
                self.finish("truncated".into());
                return (self, Step::End);
            }
        }
        (self, Step::Bytes(Bytes::from(out)))
    }
}

impl Drop for SseState {
    fn drop(&mut self) {
        // The client hung up (the body was dropped) before the stream ended.
        self.finish("client_closed".into());
    }
}

type Advance = Pin<Box<dyn Future<Output = (Box<SseState>, Step)>>>;

/// An SSE body fed by a [`FakeStream`].
pub struct SseBody {
    state: Option<Box<SseState>>,
    pending: Option<Advance>,
}

impl SseBody {
    /// The body of `stream`, rendered by `frames`; `log` gets the row when it ends.
    pub fn new(stream: FakeStream, frames: Frames, log: Option<StreamLog>) -> Self {
        Self {
            state: Some(Box::new(SseState {
                stream,
                frames,
                breaking: None,
                ended: false,
                log,
            })),
            pending: None,
        }
    }
}

impl Body for WireBody {
    type Data = Bytes;
    type Error = StreamBreak;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, StreamBreak>>> {
        let sse = match self.get_mut() {
            WireBody::Full(bytes) => return Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
            WireBody::Sse(sse) => sse,
        };
        let pending = match &mut sse.pending {
            Some(p) => p,
            None => match sse.state.take() {
                Some(state) => sse.pending.insert(Box::pin(state.advance())),
                None => return Poll::Ready(None),
            },
        };
        let (state, step) = match pending.as_mut().poll(cx) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(done) => done,
        };
        sse.pending = None;
        match step {
            Step::Bytes(bytes) => {
                sse.state = Some(state);
                Poll::Ready(Some(Ok(Frame::data(bytes))))
            }
            Step::Yield => {
                sse.state = Some(state);
                cx.waker().wake_by_ref();
                Poll::Pending
            }
            Step::Break(kind) => Poll::Ready(Some(Err(StreamBreak(kind)))),
            Step::End => Poll::Ready(None),
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            WireBody::Full(bytes) => bytes.is_none(),
            WireBody::Sse(sse) => sse.state.is_none() && sse.pending.is_none(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            WireBody::Full(Some(bytes)) => SizeHint::with_exact(bytes.len() as u64),
            WireBody::Full(None) => SizeHint::with_exact(0),
            WireBody::Sse(_) => SizeHint::default(),
        }
    }
}
