//! How the adapter reaches a deployment: one fresh byte stream per call.
//!
//! The [`Connector`] is the one seam between the adapter and the network. [`TcpConnector`] dials
//! plain-HTTP endpoints over TCP (a local fake-provider server, a plaintext gateway); the
//! simulator plugs in a connector that hands back one half of a `tokio::io::duplex` pipe whose
//! other half it serves itself, so a whole run stays in memory under the paused clock. TLS is
//! a connector's business too: none ships here (an `https` URI is refused by
//! [`TcpConnector`] rather than sent in clear).

use std::future::Future;
use std::io;

use http::Uri;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;

/// Opens the byte stream for one call.
pub trait Connector {
    /// The stream: any tokio IO (it need not be `Send`: the connection task is spawned with
    /// `spawn_local`).
    type Io: AsyncRead + AsyncWrite + Unpin + 'static;

    /// Connects for a call to deployment `deployment_index` (its index in the router's
    /// deployment list) at `uri` (the full request URI; a connector may ignore its host).
    fn connect(
        &self,
        deployment_index: usize,
        uri: &Uri,
    ) -> impl Future<Output = io::Result<Self::Io>>;

    /// Runs a connection's task beside the call that opened it. Default: tokio's
    /// `spawn_local` (a `LocalSet` must be running); a simulated connector hands it to the
    /// simulation's executor instead.
    fn spawn_connection(&self, task: impl Future<Output = ()> + 'static) {
        drop(tokio::task::spawn_local(task));
    }
}

/// Plain TCP to the URI's host and port (80 when none): for `http://` endpoints.
#[derive(Clone, Copy, Debug, Default)]
pub struct TcpConnector;

impl Connector for TcpConnector {
    type Io = TcpStream;

    async fn connect(&self, _deployment_index: usize, uri: &Uri) -> io::Result<TcpStream> {
        if uri.scheme_str() != Some("http") {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!("TcpConnector speaks plain http only, not {uri}"),
            ));
        }
        let host = uri
            .host()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no host in the URI"))?;
        // `[::1]` is written with brackets in a URI, without them in a socket address.
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let stream = TcpStream::connect((host, uri.port_u16().unwrap_or(80))).await?;
        // Small SSE frames must leave at once, not wait on Nagle.
        stream.set_nodelay(true)?;
        Ok(stream)
    }
}
