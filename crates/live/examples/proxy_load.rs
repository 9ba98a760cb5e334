//! A small closed-loop load loop for `routersim proxy` (or any OpenAI-compatible router on
//! plain HTTP): `C` keep-alive connections each send non-streamed chat requests one after the
//! other until `SECS` seconds or `MAX` requests in all, then print requests/s and latency.
//!
//! `cargo run --release -p routersim-live --example proxy_load -- ADDR MODEL [C] [SECS] [MAX]`

use std::cell::Cell;
use std::net::SocketAddr;
use std::rc::Rc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use hdrhistogram::Histogram;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

type Sender = hyper::client::conn::http1::SendRequest<Full<Bytes>>;

async fn connect(addr: SocketAddr) -> std::io::Result<Sender> {
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

/// One call: whether it answered 200 with a whole body.
async fn call(sender: &mut Sender, body: &Bytes) -> bool {
    if sender.ready().await.is_err() {
        return false;
    }
    let mut request = http::Request::new(Full::new(body.clone()));
    *request.method_mut() = http::Method::POST;
    *request.uri_mut() = http::Uri::from_static("/v1/chat/completions");
    request.headers_mut().insert(
        http::header::HOST,
        http::HeaderValue::from_static("127.0.0.1"),
    );
    match sender.send_request(request).await {
        Ok(response) => {
            response.status() == http::StatusCode::OK
                && response.into_body().collect().await.is_ok()
        }
        Err(_) => false,
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: proxy_load ADDR MODEL [CONNECTIONS] [SECS] [MAX_REQUESTS]";
    let addr: SocketAddr = args.first().ok_or(usage)?.parse()?;
    let model = args.get(1).ok_or(usage)?.clone();
    let connections: usize = args.get(2).map_or(Ok(32), |s| s.parse())?;
    let secs: f64 = args.get(3).map_or(Ok(10.0), |s| s.parse())?;
    let max: u64 = args.get(4).map_or(Ok(1_000_000), |s| s.parse())?;
    let body = Bytes::from(format!(
        r#"{{"model":"{model}","messages":[{{"role":"user","content":"hello"}}]}}"#
    ));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let local = tokio::task::LocalSet::new();
    local.block_on(&runtime, async move {
        let sent = Rc::new(Cell::new(0u64));
        let (ok, errors) = (Rc::new(Cell::new(0u64)), Rc::new(Cell::new(0u64)));
        let latency = Rc::new(std::cell::RefCell::new(Histogram::<u64>::new_with_bounds(
            1,
            100_000_000,
            3,
        )?));
        let started = Instant::now();
        let deadline = started + Duration::from_secs_f64(secs);
        let mut tasks = Vec::new();
        for _ in 0..connections {
            let mut sender = connect(addr).await?;
            let (sent, ok, errors, latency, body) = (
                sent.clone(),
                ok.clone(),
                errors.clone(),
                latency.clone(),
                body.clone(),
            );
            tasks.push(tokio::task::spawn_local(async move {
                while Instant::now() < deadline && sent.get() < max {
                    sent.set(sent.get() + 1);
                    let at = Instant::now();
                    if call(&mut sender, &body).await {
                        ok.set(ok.get() + 1);
                        let us = u64::try_from(at.elapsed().as_micros()).unwrap_or(u64::MAX);
                        let _ = latency.borrow_mut().record(us.max(1));
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
        let elapsed = started.elapsed().as_secs_f64();
        let h = latency.borrow();
        println!(
            "{} ok, {} errors in {elapsed:.2} s over {connections} connections: {:.0} requests/s; \
             latency p50 {} us, p99 {} us, max {} us",
            ok.get(),
            errors.get(),
            ok.get() as f64 / elapsed,
            h.value_at_quantile(0.5),
            h.value_at_quantile(0.99),
            h.max()
        );
        Ok::<(), Box<dyn std::error::Error>>(())
    })
}
