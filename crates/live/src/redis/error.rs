//! What can go wrong reaching Redis.

/// What can go wrong connecting.
#[derive(Debug, thiserror::Error)]
pub enum RedisStateError {
    /// The Redis URL or the connection.
    #[error("redis {url}: {source}")]
    Connect {
        /// The URL (without its password).
        url: String,
        /// The client's error.
        source: redis::RedisError,
    },
}
