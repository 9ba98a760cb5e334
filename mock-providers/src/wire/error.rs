//! [`WireError`]: why the wire server failed.
//!
//! Its own module, below the server and the call log that both return it, so neither has to
//! reach up into `wire/mod.rs` (which re-exports them) for it.

/// Why the wire server failed.
#[derive(Debug, thiserror::Error)]
pub enum WireError {
    /// An HTTP connection failed (a client that hung up, a body the server aborted on
    /// purpose for a stream break).
    #[error("http connection: {0}")]
    Http(#[from] hyper::Error),
    /// Accepting or configuring a socket failed.
    #[error("socket: {0}")]
    Io(#[from] std::io::Error),
    /// Writing `provider_calls.csv` failed.
    #[error("provider_calls.csv: {0}")]
    CallLog(String),
}
