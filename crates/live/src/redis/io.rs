//! The Redis commands: the writer task (one command at a time, in queue order, answers nobody
//! waits on) and the batched read.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use redis::aio::MultiplexedConnection;
use redis::{RedisResult, Script};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

use crate::redis::shared::{Shared, note_remote};

/// One queued write.
pub(crate) enum Write {
    /// `SET deployment:<id>:cooldown <json> PX <ttl>`.
    Cooldown { deployment: usize, ttl: Duration },
    /// `DEL deployment:<id>:cooldown`.
    Clear { deployment: usize },
    /// The allowed-fails script.
    Fail { deployment: usize, ttl: Duration },
    /// `DEL deployment:<id>:allowed_fails`.
    ResetFails { deployment: usize },
    /// Answered once everything before it was.
    Flush(oneshot::Sender<()>),
}

/// `INCR` and, on a counter without a TTL (a fresh one), `PEXPIRE`, atomically: LiteLLM sends
/// `INCRBYFLOAT`, `TTL`, then `EXPIRE` when the TTL is -1; as one script no other process can
/// slip between them. Returns the count and its remaining TTL in ms.
const INCREMENT_FAILS: &str = r"
local n = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {n, ttl}
";

/// The cooldown entry's value, in LiteLLM's shape (`CooldownCacheValue`); routersim reads only
/// the key's TTL.
fn cooldown_value(ttl: Duration) -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    serde_json::json!({
        "exception_received": "routersim proxy",
        "status_code": "",
        "timestamp": now,
        "cooldown_time": ttl.as_secs_f64(),
    })
    .to_string()
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1)
}

/// Sends the queued writes in order until every sender is gone, each answered within
/// `timeout` or counted failed (the store then degrades). While the store is degraded writes
/// are skipped (counted): the memory tier has them, and recovery re-sends the live cooldowns.
pub(crate) async fn write_loop(
    shared: Arc<Shared>,
    mut rx: mpsc::UnboundedReceiver<Write>,
    timeout: Duration,
) {
    let script = Script::new(INCREMENT_FAILS);
    while let Some(write) = rx.recv().await {
        if let Write::Flush(done) = write {
            let _ = done.send(());
            continue;
        }
        if shared.is_degraded() {
            shared.skipped.fetch_add(1, Ordering::Relaxed);
            continue;
        }
        let mut conn = shared.connection();
        let sent = tokio::time::timeout(timeout, send(&shared, &script, &mut conn, write)).await;
        match sent {
            Ok(Ok(())) => {
                shared.writes.fetch_add(1, Ordering::Relaxed);
            }
            Ok(Err(e)) => shared.failed("write", &e.to_string()),
            Err(_) => shared.failed("write", &format!("no answer within {timeout:?}")),
        }
    }
}

/// One write's command.
async fn send(
    shared: &Shared,
    script: &Script,
    conn: &mut MultiplexedConnection,
    write: Write,
) -> RedisResult<()> {
    match write {
        Write::Cooldown { deployment, ttl } => {
            redis::cmd("SET")
                .arg(&shared.cooldown_keys[deployment])
                .arg(cooldown_value(ttl))
                .arg("PX")
                .arg(millis(ttl))
                .query_async(conn)
                .await
        }
        Write::Clear { deployment } => {
            redis::cmd("DEL")
                .arg(&shared.cooldown_keys[deployment])
                .query_async(conn)
                .await
        }
        Write::ResetFails { deployment } => {
            redis::cmd("DEL")
                .arg(&shared.fail_keys[deployment])
                .query_async(conn)
                .await
        }
        Write::Fail { deployment, ttl } => script
            .key(&shared.fail_keys[deployment])
            .arg(millis(ttl))
            .invoke_async::<(u64, i64)>(conn)
            .await
            .map(|(count, ttl_ms)| {
                let left = Duration::from_millis(u64::try_from(ttl_ms).unwrap_or(0));
                let count = u32::try_from(count).unwrap_or(u32::MAX);
                note_remote(shared, deployment, count, Instant::now() + left);
            }),
        Write::Flush(done) => {
            let _ = done.send(());
            Ok(())
        }
    }
}

/// One deployment's state as read: index, cooldown PTTL in ms (0: none), and its allowed-fails
/// count with its PTTL when one exists.
pub(crate) type Read = (usize, u64, Option<(u32, u64)>);

/// `PTTL` of each due cooldown key, and `GET` + `PTTL` of its allowed-fails counter, in one
/// pipelined round trip.
pub(crate) async fn read_keys(
    shared: &Shared,
    conn: &mut MultiplexedConnection,
    due: &[usize],
) -> RedisResult<Vec<Read>> {
    let mut pipe = redis::pipe();
    for &i in due {
        pipe.cmd("PTTL").arg(&shared.cooldown_keys[i]);
        pipe.cmd("GET").arg(&shared.fail_keys[i]);
        pipe.cmd("PTTL").arg(&shared.fail_keys[i]);
    }
    shared.reads.fetch_add(1, Ordering::Relaxed);
    let replies: Vec<(i64, Option<String>, i64)> = pipe.query_async(conn).await?;
    Ok(due
        .iter()
        .zip(replies)
        .map(|(&i, (cooldown, fails, fails_ttl))| {
            let cooldown = u64::try_from(cooldown).unwrap_or(0);
            // LiteLLM writes the counter with INCRBYFLOAT ("3" or "3.0"): read either.
            let fails = fails
                .and_then(|s| s.parse::<f64>().ok())
                .filter(|n| *n >= 1.0)
                .zip(u64::try_from(fails_ttl).ok())
                .map(|(n, ttl)| (n as u32, ttl));
            (i, cooldown, fails)
        })
        .collect())
}
