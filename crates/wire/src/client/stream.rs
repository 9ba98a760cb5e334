//! [`HttpStream`]: an open SSE response as the engine's [`ProviderStream`].
//!
//! It reads the body one network frame at a time, parses SSE incrementally and hands out each
//! item as soon as its frame arrives (so under the paused clock an item arrives at exactly the
//! virtual instant its bytes did). What ends it:
//! - a finish (`finish_reason` / `[DONE]`, Anthropic's `message_delta` stop reason or
//!   `message_stop`) → `Done`;
//! - an error object (`data: {"error": …}`, Anthropic's `event: error`) → `ErrorFrame`;
//! - a body or connection error → `Some(Err(failure))`: `api_connection` with no status,
//!   unless a `: x-routersim-break kind=… status=…` comment came before it (the wire contract's
//!   hint that the fake provider broke the stream with another kind); an undecodable event, an
//!   overlong line, or chunks claiming more than
//!   [`MAX_OUTPUT_TOKENS`](crate::limits::MAX_OUTPUT_TOKENS) in all count as a broken
//!   connection too (LiteLLM maps a stream it cannot read to `APIConnectionError`);
//! - a clean end of body without any of these → `None` (truncated).
//!
//! A failure's `tokens_delivered` counts the tokens this stream handed out. After the end,
//! `next_item` keeps returning `None`. Dropping the stream drops the body, which closes the
//! connection, unless it came from a [pool](super::pool) and ended well: a body read to its
//! end goes back at once; after a finish, the rest of the body (the `[DONE]` line) is read
//! at once when it already arrived (the usual case: no task or timer per stream), else in the
//! background, bounded by [`DRAIN_BYTES`] and [`DRAIN_TIME`], and the connection goes back
//! only if it ended within them.

use std::collections::VecDeque;

use http_body_util::BodyExt;
use hyper::body::Incoming;

use routersim_engine::failure::{FailureKind, ProviderFailure};
use routersim_engine::stream::{ProviderStream, StreamItem};

use crate::endpoint::decode_event;
use crate::format::WireFormat;
use crate::limits::MAX_OUTPUT_TOKENS;
use crate::sse::{SseItem, SseParser, parse_break_comment};

use super::pool::Lease;

/// The most of a finished stream's remaining body read to reuse its connection.
pub const DRAIN_BYTES: usize = 64 * 1024;
/// The longest a finished stream's remaining body is waited for to reuse its connection.
pub const DRAIN_TIME: std::time::Duration = std::time::Duration::from_secs(1);

/// An open streamed response.
#[derive(Debug)]
pub struct HttpStream {
    format: WireFormat,
    /// `None` once handed to the pool's drain.
    body: Option<Incoming>,
    parser: SseParser,
    /// Items decoded but not handed out yet (a content chunk and its finish share a frame).
    pending: VecDeque<StreamItem>,
    /// The failure a break comment announced.
    announced: Option<ProviderFailure>,
    tokens: u32,
    finished: bool,
    /// The pooled connection the stream came on.
    lease: Option<Lease>,
    /// A finish item was handed out (the connection may be reused after the body ends).
    finished_well: bool,
}

impl HttpStream {
    /// Wraps a 2xx response's body.
    pub fn new(format: WireFormat, body: Incoming) -> Self {
        Self {
            format,
            body: Some(body),
            parser: SseParser::new(),
            pending: VecDeque::new(),
            announced: None,
            tokens: 0,
            finished: false,
            lease: None,
            finished_well: false,
        }
    }

    /// The stream came on a pooled connection: hand it back when the stream ends well.
    pub fn with_lease(mut self, lease: Option<Lease>) -> Self {
        self.lease = lease;
        self
    }

    /// Output tokens handed out so far.
    pub fn tokens_delivered(&self) -> u32 {
        self.tokens
    }

    /// Hands out a decoded item, ending the stream on a terminal one.
    fn hand_out(&mut self, item: StreamItem) -> StreamItem {
        match item {
            StreamItem::Chunk(chunk) => {
                self.tokens = self.tokens.saturating_add(chunk.tokens);
                StreamItem::Chunk(chunk)
            }
            StreamItem::Done(reason) => {
                self.finished_well = true;
                self.end();
                StreamItem::Done(reason)
            }
            StreamItem::ErrorFrame(mut failure) => {
                failure.tokens_delivered = self.tokens;
                self.end();
                StreamItem::ErrorFrame(failure)
            }
        }
    }

    fn end(&mut self) {
        self.finished = true;
        self.pending.clear();
    }

    /// The failure for a broken body: the announced kind, else `api_connection`.
    fn broken(&mut self) -> ProviderFailure {
        let mut failure = self
            .announced
            .take()
            .unwrap_or_else(|| ProviderFailure::new(FailureKind::ApiConnection).with_status(None));
        failure.tokens_delivered = self.tokens;
        self.end();
        failure
    }

    /// Decodes the parser's ready items into `pending`; `Err` when one is unreadable.
    fn decode_ready(&mut self) -> Result<(), ()> {
        while self.pending.is_empty() {
            match self.parser.next_item() {
                None => break,
                Some(SseItem::Comment(comment)) => {
                    if let Some(failure) = parse_break_comment(&comment) {
                        self.announced = Some(failure);
                    }
                }
                Some(SseItem::Event { event, data }) => {
                    decode_event(self.format, event.as_deref(), &data, &mut self.pending)
                        .map_err(|_| ())?;
                }
            }
        }
        Ok(())
    }
}

impl ProviderStream for HttpStream {
    async fn next_item(&mut self) -> Option<Result<StreamItem, ProviderFailure>> {
        loop {
            if self.finished {
                return None;
            }
            if let Some(item) = self.pending.pop_front() {
                // More tokens than one answer may have: not an answer routersim can pass on.
                if let StreamItem::Chunk(chunk) = &item
                    && self.tokens.saturating_add(chunk.tokens) > MAX_OUTPUT_TOKENS
                {
                    return Some(Err(self.broken()));
                }
                return Some(Ok(self.hand_out(item)));
            }
            if self.decode_ready().is_err() {
                return Some(Err(self.broken()));
            }
            if !self.pending.is_empty() {
                continue;
            }
            let Some(body) = self.body.as_mut() else {
                self.end();
                return None;
            };
            match body.frame().await {
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data()
                        && self.parser.feed(&data).is_err()
                    {
                        return Some(Err(self.broken()));
                    }
                }
                Some(Err(_)) => return Some(Err(self.broken())),
                None => {
                    // A clean end without a terminal marker: truncated. The answer is whole.
                    if let Some(lease) = self.lease.take() {
                        lease.give_back();
                    }
                    self.end();
                    return None;
                }
            }
        }
    }
}

impl Drop for HttpStream {
    /// A finished pooled stream: the rest of its body read in the background (bounded), then
    /// its connection handed back. Anything else: the body and connection drop and close.
    fn drop(&mut self) {
        if !self.finished_well {
            return;
        }
        let Some(lease) = self.lease.take() else {
            return;
        };
        let Some(mut body) = self.body.take() else {
            return;
        };
        // Usually the rest already arrived: the connection goes back now, with no task or
        // timer per stream (the same bounds as the background drain).
        let mut read = 0usize;
        match drain_ready(&mut body, &mut read) {
            Drained::Whole => return lease.give_back(),
            Drained::Unusable => return,
            Drained::Pending => {}
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        drop(runtime.spawn(async move {
            if let Ok(true) = tokio::time::timeout(DRAIN_TIME, drain(body, read)).await {
                lease.give_back();
            }
        }));
    }
}

/// What reading the already-arrived rest of a body found.
enum Drained {
    /// It ended cleanly within [`DRAIN_BYTES`].
    Whole,
    /// It broke or went past [`DRAIN_BYTES`].
    Unusable,
    /// More is still to come.
    Pending,
}

/// Reads the frames of `body` that are ready now, without waiting, adding their length to
/// `read`.
fn drain_ready(body: &mut Incoming, read: &mut usize) -> Drained {
    use hyper::body::Body;
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    loop {
        match std::pin::Pin::new(&mut *body).poll_frame(&mut cx) {
            std::task::Poll::Pending => return Drained::Pending,
            std::task::Poll::Ready(None) => return Drained::Whole,
            std::task::Poll::Ready(Some(Err(_))) => return Drained::Unusable,
            std::task::Poll::Ready(Some(Ok(frame))) => {
                if let Ok(data) = frame.into_data() {
                    *read += data.len();
                    if *read > DRAIN_BYTES {
                        return Drained::Unusable;
                    }
                }
            }
        }
    }
}

/// Reads `body` to its end, `read` bytes of it already read: whether it ended cleanly within
/// [`DRAIN_BYTES`].
async fn drain(mut body: Incoming, mut read: usize) -> bool {
    while let Some(frame) = body.frame().await {
        let Ok(frame) = frame else {
            return false;
        };
        if let Ok(data) = frame.into_data() {
            read += data.len();
            if read > DRAIN_BYTES {
                return false;
            }
        }
    }
    true
}
