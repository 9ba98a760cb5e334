//! How to drive (`DriveOptions`): a small module below its users (the run and the report
//! both read it).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use routersim_sim::scenario::Scenario;

/// How to drive.
#[derive(Clone, Debug)]
pub struct DriveOptions {
    /// The router: `http://host:port` (requests go to `/v1/chat/completions`) or a base URL
    /// ending in `/v1`.
    pub target: String,
    /// Further replicas of the router (a fleet): chat requests go round-robin over `target`
    /// and these, in this order, one request each, as a round-robin load balancer would.
    pub replicas: Vec<String>,
    /// Sent as `Authorization: Bearer …`.
    pub api_key: Option<String>,
    /// Sent on every request (`--header`).
    pub headers: Vec<super::header::ExtraHeader>,
    /// The report folder (default `reports/<name>/live/`).
    pub out: Option<PathBuf>,
    /// A running `routersim serve` to use instead of in-process providers.
    pub providers: Option<String>,
    /// Stop the run when more than this many requests would be sent in one second.
    pub max_rps: Option<u64>,
    /// Stop the run after this many requests.
    pub max_requests: Option<u64>,
    /// Allow a non-loopback target or providers URL.
    pub allow_remote: bool,
    /// How long in-flight requests may take to finish after the last arrival.
    pub drain: Duration,
    /// Wait up to this long for the target to answer HTTP before starting (the providers are
    /// already listening: a router started after them can read their addresses).
    pub wait_for_target: Option<Duration>,
    /// Print a progress line on stderr.
    pub progress: bool,
    /// Serve `GET /metrics` on this address while the run goes on (loopback unless
    /// `allow_remote`).
    pub metrics_addr: Option<SocketAddr>,
    /// Connections open at once at most (`--max-connections`), before the file-descriptor
    /// share ([`super::pool::fd_budget`]).
    pub max_connections: usize,
}

impl DriveOptions {
    /// The connections drive may hold open: `min(max_connections, RLIMIT_NOFILE / 4)`.
    pub fn connection_budget(&self) -> usize {
        super::pool::fd_budget(self.max_connections, super::pool::nofile_limit())
    }
}

/// The default report folder: `reports/<name>/live/`.
pub fn default_out_dir(scenario: &Scenario) -> PathBuf {
    Path::new("reports").join(&scenario.name).join("live")
}
