//! What the load-aware strategies read: in-flight requests, recent latency, and this
//! minute's requests and tokens, per deployment.
//!
//! DeltaLLM: *"`least-busy` — picks the deployment with the fewest active requests";
//! "`latency-based-routing` — uses recent observed latency to prefer faster deployments; new or
//! unsampled deployments stay eligible"; "`usage-based-routing` — looks at recent
//! request-per-minute and token-per-minute usage"*. Minutes are counted on the router's clock
//! from the router's start (fixed windows, as LiteLLM's `{id}:{model}:{minute}` usage keys).

use std::cell::RefCell;
use std::time::Duration;

use tokio::time::Instant;

/// How many recent latencies a deployment's mean is taken over.
pub const LATENCY_SAMPLES: usize = 10;

/// One deployment's load.
#[derive(Clone, Debug, Default)]
pub struct DeploymentLoad {
    /// Attempts under way.
    pub in_flight: u32,
    /// Some attempt on it has ended (with or without a latency sample).
    tried: bool,
    latencies: [Duration; LATENCY_SAMPLES],
    /// Sum of the samples in `latencies` (kept as they change: the mean is read every pick).
    latency_sum: Duration,
    /// `latency_sum` ÷ samples held: divided when a sample lands, read on every pick.
    mean: Option<Duration>,
    samples: usize,
    next_sample: usize,
    minute: u64,
    requests: u64,
    tokens: u64,
}

impl DeploymentLoad {
    /// Mean of the recent latency samples; `None` until the first.
    pub fn mean_latency(&self) -> Option<Duration> {
        self.mean
    }

    /// Whether any attempt on it has ended. A deployment that was tried but has no latency
    /// sample has only failed (fast failures say nothing about speed): latency-based routing
    /// ranks it after every measured one rather than as "new".
    pub fn was_tried(&self) -> bool {
        self.tried
    }

    /// Latency samples taken so far (saturating at [`LATENCY_SAMPLES`]).
    pub fn latency_samples(&self) -> usize {
        self.samples.min(LATENCY_SAMPLES)
    }

    /// `(requests, tokens)` in `minute` (zero when the counters belong to another minute).
    pub fn usage(&self, minute: u64) -> (u64, u64) {
        if self.minute == minute {
            (self.requests, self.tokens)
        } else {
            (0, 0)
        }
    }

    fn roll(&mut self, minute: u64) {
        if self.minute != minute {
            self.minute = minute;
            self.requests = 0;
            self.tokens = 0;
        }
    }
}

/// Every deployment's load, updated by the router at each attempt's start and end.
///
/// A `RefCell`, not a `Mutex`: the router that owns it is driven from one thread (it is not
/// `Send`: its state store is a `Box<dyn StateStore>`), and the lock was ~1.5 % of the harness.
#[derive(Debug)]
pub struct LoadTracker {
    start: Instant,
    entries: RefCell<Vec<DeploymentLoad>>,
}

impl LoadTracker {
    /// A tracker for `deployments` deployments whose minutes count from `start`.
    pub fn new(deployments: usize, start: Instant) -> Self {
        Self {
            start,
            entries: RefCell::new(vec![DeploymentLoad::default(); deployments]),
        }
    }

    /// Time from `now` to the start of the next minute.
    pub fn until_next_minute(&self, now: Instant) -> Duration {
        let into = now.saturating_duration_since(self.start).as_nanos() % 60_000_000_000;
        Duration::from_secs(60).saturating_sub(Duration::from_nanos(into as u64))
    }

    /// The minute `now` falls in.
    pub fn minute_of(&self, now: Instant) -> u64 {
        now.saturating_duration_since(self.start).as_secs() / 60
    }

    fn with<R>(&self, f: impl FnOnce(&mut Vec<DeploymentLoad>) -> R) -> R {
        // No borrow is held across calls: `f` never calls back into the tracker.
        f(&mut self.entries.borrow_mut())
    }

    /// Reads every deployment's load.
    pub fn read<R>(&self, f: impl FnOnce(&[DeploymentLoad]) -> R) -> R {
        self.with(|entries| f(entries))
    }

    /// An attempt with `input_tokens` starts on `deployment`.
    pub fn on_start(&self, deployment: usize, now: Instant, input_tokens: u32) {
        let minute = self.minute_of(now);
        self.with(|entries| {
            if let Some(e) = entries.get_mut(deployment) {
                e.roll(minute);
                e.in_flight += 1;
                e.requests += 1;
                e.tokens += u64::from(input_tokens);
            }
        });
    }

    /// An attempt ended; `latency` is a sample for latency-based routing (`None` for none),
    /// `output_tokens` count towards this minute's tokens.
    pub fn on_end(
        &self,
        deployment: usize,
        now: Instant,
        latency: Option<Duration>,
        output_tokens: u32,
    ) {
        let minute = self.minute_of(now);
        self.with(|entries| {
            if let Some(e) = entries.get_mut(deployment) {
                e.in_flight = e.in_flight.saturating_sub(1);
                e.tried = true;
                e.roll(minute);
                e.tokens += u64::from(output_tokens);
                if let Some(latency) = latency {
                    let replaced = std::mem::replace(&mut e.latencies[e.next_sample], latency);
                    e.latency_sum = e.latency_sum.saturating_sub(replaced) + latency;
                    e.next_sample = (e.next_sample + 1) % LATENCY_SAMPLES;
                    e.samples += 1;
                    e.mean = Some(e.latency_sum / e.samples.min(LATENCY_SAMPLES) as u32);
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn tracks_in_flight_latency_and_minute_usage() {
        let start = Instant::now();
        let t = LoadTracker::new(1, start);
        t.on_start(0, start, 100);
        t.on_start(0, start, 50);
        t.read(|l| assert_eq!((l[0].in_flight, l[0].usage(0)), (2, (2, 150))));
        t.on_end(
            0,
            start + Duration::from_secs(1),
            Some(Duration::from_millis(300)),
            20,
        );
        t.read(|l| {
            assert_eq!(l[0].in_flight, 1);
            assert_eq!(l[0].usage(0), (2, 170));
            assert_eq!(l[0].mean_latency(), Some(Duration::from_millis(300)));
        });
        // A new minute starts from zero.
        t.on_start(0, start + Duration::from_secs(61), 10);
        t.read(|l| assert_eq!((l[0].usage(1), l[0].usage(0)), ((1, 10), (0, 0))));
    }
}
