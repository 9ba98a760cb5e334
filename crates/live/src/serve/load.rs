//! The benches' load generator: keep-alive HTTP/1.1 connections over loopback, each sending
//! the same request back to back for a bounded time and reading every answer to its end (a
//! JSON body, or an SSE stream to its last byte), so two servers measured with it are asked
//! for the same bytes in the same way. Bounded in count (the connections given) and in time
//! (the phase, after which no new request starts).

use std::cell::{Cell, RefCell};
use std::net::SocketAddr;
use std::rc::Rc;
use std::time::Duration;

use bytes::Bytes;
use hdrhistogram::Histogram;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tokio::time::Instant;

use super::ServeError;

/// A connection's request sender.
pub type Sender = hyper::client::conn::http1::SendRequest<Full<Bytes>>;

/// The chat request every bench sends (`stream`: with `"stream": true`).
pub fn chat_body(stream: bool) -> &'static [u8] {
    if stream {
        br#"{"model":"bench","messages":[{"role":"user","content":"hello"}],"stream":true}"#
    } else {
        br#"{"model":"bench","messages":[{"role":"user","content":"hello"}]}"#
    }
}

/// A keep-alive connection to `addr` (no Nagle), its task spawned locally.
pub async fn connect(addr: SocketAddr) -> std::io::Result<Sender> {
    let stream = TcpStream::connect(addr).await?;
    stream.set_nodelay(true)?;
    let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(std::io::Error::other)?;
    tokio::task::spawn_local(async move {
        let _ = conn.await;
    });
    Ok(sender)
}

/// `POST path` with [`chat_body`].
pub fn request(path: &str, stream: bool) -> http::Request<Full<Bytes>> {
    let mut request = http::Request::new(Full::new(Bytes::from_static(chat_body(stream))));
    *request.method_mut() = http::Method::POST;
    *request.uri_mut() = http::Uri::from_static("/");
    if let Ok(uri) = path.parse() {
        *request.uri_mut() = uri;
    }
    request.headers_mut().insert(
        http::header::HOST,
        http::HeaderValue::from_static("127.0.0.1"),
    );
    request.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    request
}

/// One call on `sender`, its answer read to the end: whether it was a 200 read whole.
pub async fn call_once(sender: &mut Sender, path: &str, stream: bool) -> bool {
    if sender.ready().await.is_err() {
        return false;
    }
    match sender.send_request(request(path, stream)).await {
        Ok(response) => {
            let ok = response.status() == http::StatusCode::OK;
            ok && response.into_body().collect().await.is_ok()
        }
        Err(_) => false,
    }
}

/// 1 µs to 100 s, 3 significant digits.
pub fn histogram() -> Result<Histogram<u64>, ServeError> {
    Histogram::new_with_bounds(1, 100_000_000, 3)
        .map_err(|e| ServeError::Bench(format!("histogram: {e}")))
}

/// What one closed-loop phase measured.
#[derive(Clone, Copy, Debug, Default)]
pub struct LoadFigures {
    /// Calls answered 200 and read whole.
    pub requests: u64,
    /// Calls that failed (a connection stops at its first).
    pub errors: u64,
    /// The phase's wall time.
    pub secs: f64,
    /// Median latency of a call, µs.
    pub p50_us: u64,
}

impl LoadFigures {
    /// Calls per second.
    pub fn per_sec(&self) -> f64 {
        self.requests as f64 / self.secs.max(1e-9)
    }
}

/// `connections` keep-alive connections to `addr` calling `path` back to back for `phase`.
pub async fn closed_loop(
    addr: SocketAddr,
    path: &'static str,
    stream: bool,
    connections: usize,
    phase: Duration,
) -> Result<LoadFigures, ServeError> {
    let count = Rc::new(Cell::new(0u64));
    let errors = Rc::new(Cell::new(0u64));
    let latency = Rc::new(RefCell::new(histogram()?));
    let mut senders = Vec::with_capacity(connections);
    for _ in 0..connections {
        senders.push(connect(addr).await?);
    }
    let started = Instant::now();
    let deadline = started + phase;
    let mut tasks = Vec::with_capacity(connections);
    for mut sender in senders {
        let (count, errors, latency) = (count.clone(), errors.clone(), latency.clone());
        tasks.push(tokio::task::spawn_local(async move {
            while Instant::now() < deadline {
                let sent = Instant::now();
                if call_once(&mut sender, path, stream).await {
                    count.set(count.get() + 1);
                    let us = sent.elapsed().as_micros().max(1) as u64;
                    let _ = latency.borrow_mut().record(us);
                } else {
                    errors.set(errors.get() + 1);
                    break;
                }
            }
        }));
    }
    for task in tasks {
        let _ = task.await;
    }
    let secs = started.elapsed().as_secs_f64();
    let p50_us = latency.borrow().value_at_quantile(0.5);
    Ok(LoadFigures {
        requests: count.get(),
        errors: errors.get(),
        secs,
        p50_us,
    })
}

/// One kind of call measured on two servers (a baseline and the one measured), round by
/// round, each round's pair back to back.
#[derive(Clone, Debug, Default)]
pub struct Pair {
    /// Each round's baseline figures.
    pub base: Vec<LoadFigures>,
    /// Each round's figures of the server measured.
    pub measured: Vec<LoadFigures>,
}

impl Pair {
    /// Median baseline req/s.
    pub fn base_per_sec(&self) -> f64 {
        median(
            &self
                .base
                .iter()
                .map(LoadFigures::per_sec)
                .collect::<Vec<_>>(),
        )
    }

    /// Median req/s of the server measured.
    pub fn measured_per_sec(&self) -> f64 {
        median(
            &self
                .measured
                .iter()
                .map(LoadFigures::per_sec)
                .collect::<Vec<_>>(),
        )
    }

    /// Median of each round's measured ÷ baseline req/s.
    pub fn ratio(&self) -> f64 {
        let ratios: Vec<f64> = self
            .base
            .iter()
            .zip(&self.measured)
            .map(|(b, m)| m.per_sec() / b.per_sec().max(1e-9))
            .collect();
        median(&ratios)
    }

    /// Median of each round's measured p50 minus baseline p50, ms.
    pub fn added_p50_ms(&self) -> f64 {
        let added: Vec<f64> = self
            .base
            .iter()
            .zip(&self.measured)
            .map(|(b, m)| (m.p50_us as f64 - b.p50_us as f64) / 1000.0)
            .collect();
        median(&added)
    }

    /// Median baseline p50, ms.
    pub fn base_p50_ms(&self) -> f64 {
        median(
            &self
                .base
                .iter()
                .map(|f| f.p50_us as f64 / 1000.0)
                .collect::<Vec<_>>(),
        )
    }

    /// Failed calls, both servers, every round.
    pub fn errors(&self) -> u64 {
        self.base
            .iter()
            .chain(&self.measured)
            .map(|f| f.errors)
            .sum()
    }
}

/// The median of `values` (the mean of the middle two for an even count); 0 for none.
pub fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    match sorted.len() {
        0 => 0.0,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

#[cfg(test)]
mod tests {
    use super::median;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0, 5.0, 4.0]), 3.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median(&[]), 0.0);
    }
}
