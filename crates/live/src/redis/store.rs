//! [`RedisState`]: the memory tier, the write queue, the throttled reads.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use routersim_engine::state::{InMemoryState, Rewrite, StateStore};
use tokio::sync::{Notify, mpsc, oneshot};
use tokio::time::Instant;

use crate::redis::error::RedisStateError;
use crate::redis::health::{Health, HealthSink};
use crate::redis::io::{Write, read_keys, write_loop};
use crate::redis::keys::{allowed_fails_key, cooldown_key};
use crate::redis::reconnect::{Probe, connect, reconnect_loop};
use crate::redis::shared::{RemoteCount, Shared, lock, note_remote};

/// How long a key read from Redis and found absent is trusted before it is read again: LiteLLM
/// 1.110.2 re-reads a cooldown key it does not hold in memory at most once a second per process
/// (observed: one `MGET` per key every 1.0–1.2 s at 5 requests/s on one proxy).
pub const READ_THROTTLE: Duration = Duration::from_secs(1);

/// A read before routing waits at most this long for Redis (then the request routes on the
/// memory tier, and the store degrades): the most a frozen Redis adds to a request.
pub const READ_TIMEOUT: Duration = Duration::from_millis(50);
/// A write, a reconnect and its `PING` each wait at most this long.
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(1);
/// The reconnect task's first wait after a failure, doubling to [`MAX_BACKOFF`].
pub const MIN_BACKOFF: Duration = Duration::from_millis(50);
/// The longest wait between two reconnect probes.
pub const MAX_BACKOFF: Duration = Duration::from_secs(2);

/// How to reach Redis and what to name.
#[derive(Clone)]
pub struct RedisOptions {
    /// `redis://[:password@]host:port[/db]`.
    pub url: String,
    /// The deployment ids, in the router's deployment order (the trait names deployments by
    /// index; the keys by id).
    pub deployment_ids: Vec<String>,
    /// See [`READ_THROTTLE`].
    pub read_throttle: Duration,
    /// The longest the first connect may take (a store that cannot connect is not built).
    pub connect_timeout: Duration,
    /// See [`READ_TIMEOUT`].
    pub read_timeout: Duration,
    /// See [`COMMAND_TIMEOUT`].
    pub command_timeout: Duration,
    /// The reconnect backoff: first wait, longest wait.
    pub backoff: (Duration, Duration),
    /// Hears the store degrade and recover.
    pub on_health: Option<HealthSink>,
}

impl std::fmt::Debug for RedisOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisOptions")
            .field("url", &redact(&self.url))
            .field("deployment_ids", &self.deployment_ids)
            .field("read_timeout", &self.read_timeout)
            .finish_non_exhaustive()
    }
}

impl RedisOptions {
    /// Options with LiteLLM's read throttle, a 5 s first connect, and the timeouts and backoff
    /// above.
    pub fn new(url: impl Into<String>, deployment_ids: Vec<String>) -> Self {
        Self {
            url: url.into(),
            deployment_ids,
            read_throttle: READ_THROTTLE,
            connect_timeout: Duration::from_secs(5),
            read_timeout: READ_TIMEOUT,
            command_timeout: COMMAND_TIMEOUT,
            backoff: (MIN_BACKOFF, MAX_BACKOFF),
            on_health: None,
        }
    }
}

/// The engine's state store over Redis (see the crate docs). Cloning shares the store: the
/// router owns one clone, the proxy keeps another to [`refresh`](Self::refresh) it.
#[derive(Clone)]
pub struct RedisState {
    shared: Arc<Shared>,
    queue: mpsc::UnboundedSender<Write>,
    read_timeout: Duration,
}

impl std::fmt::Debug for RedisState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisState")
            .field("keys", &self.shared.cooldown_keys)
            .finish_non_exhaustive()
    }
}

impl RedisState {
    /// Connects (PING within the connect timeout) and spawns the writer and reconnect tasks
    /// on the current tokio runtime.
    pub async fn connect(options: RedisOptions) -> Result<Self, RedisStateError> {
        let shown = redact(&options.url);
        let err = |source| RedisStateError::Connect {
            url: shown.clone(),
            source,
        };
        let client = redis::Client::open(options.url.as_str()).map_err(err)?;
        let conn = connect(&client, options.connect_timeout)
            .await
            .map_err(err)?;
        let n = options.deployment_ids.len();
        let keys =
            |key: fn(&str) -> String| options.deployment_ids.iter().map(|id| key(id)).collect();
        let shared = Arc::new(Shared {
            cooldown_keys: keys(cooldown_key),
            fail_keys: keys(allowed_fails_key),
            memory_tier: Mutex::new(InMemoryState::new(n)),
            remote_fails: Mutex::new(vec![None; n]),
            last_read: Mutex::new(vec![None; n]),
            read_throttle: options.read_throttle,
            conn: Mutex::new(conn),
            health: Mutex::new(Health::default()),
            degraded: Notify::new(),
            sink: options.on_health.clone(),
            errors: AtomicU64::new(0),
            reads: AtomicU64::new(0),
            writes: AtomicU64::new(0),
            skipped: AtomicU64::new(0),
            last_error: Mutex::new(None),
        });
        let (queue, rx) = mpsc::unbounded_channel();
        tokio::spawn(write_loop(shared.clone(), rx, options.command_timeout));
        let probe = Probe {
            timeout: options.command_timeout,
            backoff: options.backoff,
        };
        tokio::spawn(reconnect_loop(
            shared.clone(),
            client,
            queue.downgrade(),
            probe,
        ));
        Ok(Self {
            shared,
            queue,
            read_timeout: options.read_timeout,
        })
    }

    /// Reads, in one round trip, every cooldown key that is not live in memory and was not read
    /// within the read throttle (LiteLLM's pre-routing read); a key Redis holds becomes a
    /// local cooldown until `now + PTTL`, and each read deployment's allowed-fails count is
    /// refreshed. Fail-open: a read that fails or takes longer than the read timeout leaves
    /// memory as it was and degrades the store; while it is degraded nothing is read.
    pub async fn refresh(&self) {
        if self.shared.is_degraded() {
            return;
        }
        let now = Instant::now();
        let due: Vec<usize> = {
            let mut last = lock(&self.shared.last_read);
            (0..self.shared.cooldown_keys.len())
                .filter(|&i| {
                    let cooling = self
                        .shared
                        .memory()
                        .cooldown_until(i)
                        .is_some_and(|d| d > now);
                    let fresh =
                        last[i].is_some_and(|t| now.duration_since(t) < self.shared.read_throttle);
                    let due = !cooling && !fresh;
                    if due {
                        last[i] = Some(now);
                    }
                    due
                })
                .collect()
        };
        if due.is_empty() {
            return;
        }
        let mut conn = self.shared.connection();
        let read =
            tokio::time::timeout(self.read_timeout, read_keys(&self.shared, &mut conn, &due)).await;
        let failed = match read {
            Ok(Ok(found)) => {
                let now = Instant::now();
                for (i, cooldown_ms, fails) in found {
                    if cooldown_ms > 0 {
                        self.shared
                            .memory()
                            .set_cooldown(i, now + Duration::from_millis(cooldown_ms));
                    }
                    if let Some((count, ttl_ms)) = fails {
                        note_remote(&self.shared, i, count, now + Duration::from_millis(ttl_ms));
                    }
                }
                return;
            }
            Ok(Err(e)) => e.to_string(),
            Err(_) => format!("no answer within {:?}", self.read_timeout),
        };
        // Unread: due again as soon as Redis answers.
        {
            let mut last = lock(&self.shared.last_read);
            for &i in &due {
                last[i] = None;
            }
        }
        self.shared.failed("read", &failed);
    }

    /// Waits until every write queued so far has been answered by Redis (tests, shutdown).
    pub async fn flush(&self) {
        let (tx, rx) = oneshot::channel();
        if self.queue.send(Write::Flush(tx)).is_ok() {
            let _ = rx.await;
        }
    }

    /// Redis commands that failed (reads and writes); the store stayed fail-open.
    pub fn errors(&self) -> u64 {
        self.shared.errors.load(Ordering::Relaxed)
    }

    /// Writes not sent because the store was degraded.
    pub fn skipped_writes(&self) -> u64 {
        self.shared.skipped.load(Ordering::Relaxed)
    }

    /// Whether the store is degraded now (routing on its memory tier alone).
    pub fn is_degraded(&self) -> bool {
        self.shared.is_degraded()
    }

    /// Time spent degraded so far (the current outage included): what the proxy's stop line
    /// prints, and what a metrics endpoint would export.
    pub fn degraded_time(&self) -> Duration {
        lock(&self.shared.health).degraded_time(Instant::now())
    }

    /// Outages so far (times the store degraded).
    pub fn outages(&self) -> u64 {
        lock(&self.shared.health).outages()
    }

    /// The last Redis failure, if any.
    pub fn last_error(&self) -> Option<String> {
        lock(&self.shared.last_error).clone()
    }

    /// Read round trips sent.
    pub fn reads(&self) -> u64 {
        self.shared.reads.load(Ordering::Relaxed)
    }

    /// Write commands answered.
    pub fn writes(&self) -> u64 {
        self.shared.writes.load(Ordering::Relaxed)
    }

    fn send(&self, write: Write) {
        // The writer only stops when every clone is gone; a send cannot fail before.
        let _ = self.queue.send(write);
    }

    fn send_cooldown(&self, deployment: usize, until: Instant) {
        let ttl = until.saturating_duration_since(Instant::now());
        if ttl.is_zero() {
            return;
        }
        self.send(Write::Cooldown { deployment, ttl });
    }
}

/// The URL without its password, for messages.
fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            format!("{}://***@{}", &url[..scheme], &url[at + 1..])
        }
        _ => url.to_string(),
    }
}

impl StateStore for RedisState {
    fn cooldown_until(&self, deployment: usize) -> Option<Instant> {
        self.shared.memory().cooldown_until(deployment)
    }

    fn set_cooldown(&self, deployment: usize, until: Instant) -> Instant {
        let effective = self.shared.memory().set_cooldown(deployment, until);
        self.send_cooldown(deployment, effective);
        effective
    }

    fn rewrite_cooldown(
        &self,
        deployment: usize,
        now: Instant,
        until: Instant,
        rule: Rewrite,
    ) -> Instant {
        let effective = self
            .shared
            .memory()
            .rewrite_cooldown(deployment, now, until, rule);
        self.send_cooldown(deployment, effective);
        effective
    }

    fn take_if_expired(&self, deployment: usize, now: Instant) -> Option<Instant> {
        self.shared.memory().take_if_expired(deployment, now)
    }

    fn take_all_expired(&self, now: Instant) -> Vec<(usize, Instant)> {
        self.shared.memory().take_all_expired(now)
    }

    fn next_cooldown_deadline(&self) -> Option<Instant> {
        self.shared.memory().next_cooldown_deadline()
    }

    /// This process's count, raised to what Redis last reported plus this failure; the
    /// atomic `INCR` goes out behind it and its answer raises the next count.
    fn increment_allowed_fails(&self, deployment: usize, now: Instant, ttl: Duration) -> u32 {
        let local = self
            .shared
            .memory()
            .increment_allowed_fails(deployment, now, ttl);
        let count = {
            let mut remote = lock(&self.shared.remote_fails);
            let known = remote
                .get(deployment)
                .copied()
                .flatten()
                .filter(|r| r.expires > now);
            let count = known.map_or(local, |r| local.max(r.count + 1));
            if let Some(slot) = remote.get_mut(deployment) {
                *slot = Some(RemoteCount {
                    count,
                    expires: known.map_or(now + ttl, |r| r.expires),
                });
            }
            count
        };
        self.send(Write::Fail { deployment, ttl });
        count
    }

    fn clear_cooldown(&self, deployment: usize) -> bool {
        let existed = self.shared.memory().clear_cooldown(deployment);
        self.send(Write::Clear { deployment });
        existed
    }

    fn reset_allowed_fails(&self, deployment: usize) {
        self.shared.memory().reset_allowed_fails(deployment);
        if let Some(slot) = lock(&self.shared.remote_fails).get_mut(deployment) {
            *slot = None;
        }
        self.send(Write::ResetFails { deployment });
    }
}

#[cfg(test)]
mod tests {
    use super::redact;

    #[test]
    fn the_password_is_not_shown() {
        assert_eq!(
            redact("redis://:pw@127.0.0.1:6379"),
            "redis://***@127.0.0.1:6379"
        );
        assert_eq!(redact("redis://127.0.0.1:6379"), "redis://127.0.0.1:6379");
    }
}
