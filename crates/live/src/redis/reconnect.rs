//! The reconnect task: while the store is degraded, it probes Redis with a fresh connection
//! and a `PING`, backing off from [`RedisOptions::backoff`](super::RedisOptions) doubling to
//! its maximum; the first probe that answers becomes the store's connection, ends the outage
//! (reported, its time summed), and writes this replica's live cooldowns back, so what it
//! learned while Redis was away is shared again (a restarted Redis starts empty).
//!
//! A fresh connection each time, rather than the old one: after a restart the old one is dead
//! for good, and after a freeze (SIGSTOP) a fresh one answers as soon as the old one would.

use std::sync::Arc;
use std::time::Duration;

use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, RedisResult};
use routersim_engine::state::StateStore;
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::redis::health::HealthEvent;
use crate::redis::io::Write;
use crate::redis::shared::{Shared, lock};

/// How the reconnect task probes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Probe {
    /// A probe's connect and its `PING` must each answer within this.
    pub timeout: Duration,
    /// The first wait after a failure, doubling to the second.
    pub backoff: (Duration, Duration),
}

/// A connection to `client` that answered a `PING`.
pub(crate) async fn connect(
    client: &redis::Client,
    timeout: Duration,
) -> RedisResult<MultiplexedConnection> {
    let config = AsyncConnectionConfig::new()
        .set_connection_timeout(Some(timeout))
        .set_response_timeout(Some(timeout));
    let mut conn = client
        .get_multiplexed_async_connection_with_config(&config)
        .await?;
    redis::cmd("PING").query_async::<()>(&mut conn).await?;
    Ok(conn)
}

/// Runs for the store's life (on the runtime it was connected on).
pub(crate) async fn reconnect_loop(
    shared: Arc<Shared>,
    client: redis::Client,
    queue: mpsc::WeakUnboundedSender<Write>,
    probe: Probe,
) {
    loop {
        while !shared.is_degraded() {
            shared.degraded.notified().await;
        }
        let mut wait = probe.backoff.0;
        loop {
            tokio::time::sleep(wait).await;
            // Bounded twice over: the client's own timeouts, and this one around them.
            let answered = tokio::time::timeout(probe.timeout * 2, connect(&client, probe.timeout));
            if let Ok(Ok(conn)) = answered.await {
                *lock(&shared.conn) = conn;
                recovered(&shared, &queue);
                break;
            }
            wait = (wait * 2).min(probe.backoff.1);
        }
    }
}

/// Ends the outage: every key is read again at the next request, and the live cooldowns are
/// written back.
fn recovered(shared: &Shared, queue: &mpsc::WeakUnboundedSender<Write>) {
    let now = Instant::now();
    let Some(after) = lock(&shared.health).recover(now) else {
        return;
    };
    for read in lock(&shared.last_read).iter_mut() {
        *read = None;
    }
    let live: Vec<(usize, Duration)> = {
        let memory = shared.memory();
        (0..shared.cooldown_keys.len())
            .filter_map(|i| {
                let until = memory.cooldown_until(i)?;
                (until > now).then(|| (i, until - now))
            })
            .collect()
    };
    let mut resent = 0;
    if let Some(queue) = queue.upgrade() {
        for (deployment, ttl) in live {
            if queue.send(Write::Cooldown { deployment, ttl }).is_ok() {
                resent += 1;
            }
        }
    }
    shared.report(&HealthEvent::Recovered { after, resent });
}
