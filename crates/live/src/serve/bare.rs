//! The floor `bench --serve` measures `serve` against: a bare hyper HTTP/1.1 server that
//! answers the same bytes `serve` answered for the bench's request (status, headers, the
//! JSON body, or the SSE body one event per frame, as `serve` writes them), with no fault
//! model, routing, call log or connection guard. The answers are recorded from `serve`
//! itself at the start of the run ([`Recorded::fetch`]), so the two differ only in the work
//! `serve` does per request.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::rc::Rc;

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::{Frame, Incoming};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

use super::ServeError;
use super::bench_server::BenchServer;
use super::load::{connect, request};

/// One recorded answer.
#[derive(Clone, Debug)]
pub struct Answer {
    /// Its status.
    pub status: http::StatusCode,
    /// Its headers (without `date`, `content-length`, `transfer-encoding`: hyper's own).
    pub headers: http::HeaderMap,
    /// Its body, one entry per frame sent.
    pub frames: Vec<Bytes>,
}

/// `serve`'s answers to the bench's JSON and SSE requests.
#[derive(Clone, Debug)]
pub struct Recorded {
    /// The non-streamed answer.
    pub json: Answer,
    /// The streamed answer (one frame per SSE event).
    pub sse: Answer,
}

impl Recorded {
    /// Calls `path` on `addr` once as JSON and once as SSE and keeps what came back.
    pub async fn fetch(addr: SocketAddr, path: &str) -> Result<Self, ServeError> {
        Ok(Self {
            json: answer(addr, path, false).await?,
            sse: answer(addr, path, true).await?,
        })
    }
}

async fn answer(addr: SocketAddr, path: &str, stream: bool) -> Result<Answer, ServeError> {
    let mut sender = connect(addr).await?;
    let failed = |e: hyper::Error| ServeError::Bench(format!("recording serve's answer: {e}"));
    sender.ready().await.map_err(failed)?;
    let response = sender
        .send_request(request(path, stream))
        .await
        .map_err(failed)?;
    let (parts, body) = response.into_parts();
    let body = body.collect().await.map_err(failed)?.to_bytes();
    let mut headers = parts.headers;
    for name in [
        http::header::DATE,
        http::header::CONTENT_LENGTH,
        http::header::TRANSFER_ENCODING,
    ] {
        headers.remove(name);
    }
    let frames = if stream {
        split_events(&body)
    } else {
        vec![body]
    };
    Ok(Answer {
        status: parts.status,
        headers,
        frames,
    })
}

/// An SSE body cut after each blank line (one event or comment per frame).
fn split_events(body: &Bytes) -> Vec<Bytes> {
    let mut frames = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i + 1 < body.len() {
        if &body[i..i + 2] == b"\n\n" {
            frames.push(body.slice(start..i + 2));
            start = i + 2;
            i += 2;
        } else {
            i += 1;
        }
    }
    if start < body.len() {
        frames.push(body.slice(start..));
    }
    frames
}

/// A recorded body, one frame per poll (as `serve` writes an SSE event per frame).
pub struct BareBody {
    frames: std::collections::VecDeque<Bytes>,
}

impl hyper::body::Body for BareBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        std::task::Poll::Ready(self.frames.pop_front().map(|f| Ok(Frame::data(f))))
    }

    fn is_end_stream(&self) -> bool {
        self.frames.is_empty()
    }

    /// A one-frame body has its length (sent with `content-length`, as `serve` sends JSON);
    /// an SSE body is chunked.
    fn size_hint(&self) -> hyper::body::SizeHint {
        match self.frames.len() {
            0 => hyper::body::SizeHint::with_exact(0),
            1 => hyper::body::SizeHint::with_exact(self.frames[0].len() as u64),
            _ => hyper::body::SizeHint::default(),
        }
    }
}

/// Answers a request: its body read whole, then the recorded SSE answer when it asked for a
/// stream, else the JSON one.
async fn handle(
    recorded: Rc<Recorded>,
    req: http::Request<Incoming>,
) -> Result<http::Response<BareBody>, Infallible> {
    let stream = match req.into_body().collect().await {
        Ok(body) => {
            let body = body.to_bytes();
            body.windows(13).any(|w| w == b"\"stream\":true")
        }
        Err(_) => false,
    };
    let answer = if stream {
        &recorded.sse
    } else {
        &recorded.json
    };
    let mut response = http::Response::new(BareBody {
        frames: answer.frames.iter().cloned().collect(),
    });
    *response.status_mut() = answer.status;
    *response.headers_mut() = answer.headers.clone();
    Ok(response)
}

async fn accept(listener: TcpListener, recorded: Rc<Recorded>) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let _ = stream.set_nodelay(true);
        let recorded = recorded.clone();
        tokio::task::spawn_local(async move {
            let service = hyper::service::service_fn(move |req| handle(recorded.clone(), req));
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

/// The bare server answering `recorded`, on a thread of its own.
pub fn spawn_bare_server(recorded: Recorded) -> Result<BenchServer, ServeError> {
    BenchServer::spawn(move |listener| Ok(accept(listener, Rc::new(recorded))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_sse_body_splits_after_each_blank_line() {
        let body = Bytes::from_static(b"data: a\n\n: c\n\ndata: [DONE]\n\n");
        let frames = split_events(&body);
        assert_eq!(
            frames,
            vec![
                Bytes::from_static(b"data: a\n\n"),
                Bytes::from_static(b": c\n\n"),
                Bytes::from_static(b"data: [DONE]\n\n"),
            ]
        );
    }
}
