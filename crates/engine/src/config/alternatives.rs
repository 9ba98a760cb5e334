//! The settings of the alternatives other gateways use (`retry_budget`, `retry_throttling`,
//! `outlier_detection`, `hedge_after`), with their sources' defaults; the mechanisms are in
//! [`crate::alternatives`].

use std::time::Duration;

/// `router_settings.retry_budget`: `{ratio, min_per_sec, ttl}` (tower's defaults: 0.2, 10,
/// 10 s).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RetryBudgetSettings {
    /// The share of requests that may be retried (`retry_percent`, 0 to 1000).
    pub ratio: f64,
    /// Retries a second allowed whatever the traffic (the reserve).
    pub min_per_sec: u32,
    /// How long a deposit counts (1 s to 60 s).
    pub ttl: Duration,
}

impl Default for RetryBudgetSettings {
    fn default() -> Self {
        Self {
            ratio: 0.2,
            min_per_sec: 10,
            ttl: Duration::from_secs(10),
        }
    }
}

/// `router_settings.retry_throttling`: `{max_tokens, token_ratio}` (defaults 10 and 0.1, the
/// values of A6's example).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RetryThrottlingSettings {
    /// The bucket's size (and first content), in (0, 1000].
    pub max_tokens: f64,
    /// What a success puts back, > 0 (three decimal places are kept).
    pub token_ratio: f64,
}

impl Default for RetryThrottlingSettings {
    fn default() -> Self {
        Self {
            max_tokens: 10.0,
            token_ratio: 0.1,
        }
    }
}

/// `router_settings.outlier_detection` (Envoy's defaults).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutlierSettings {
    /// Consecutive server errors that eject (default 5; at least 1).
    pub consecutive_5xx: u32,
    /// The first ejection's length, multiplied by the ejection multiplier (default 30 s).
    pub base_ejection_time: Duration,
    /// The longest ejection (default 300 s, or `base_ejection_time` when that is longer).
    pub max_ejection_time: Duration,
    /// The largest share of a group ejected at once, in percent (default 10; 0 to 100).
    pub max_ejection_percent: u32,
    /// Eject the first deployment of a group whatever `max_ejection_percent` says (default
    /// false).
    pub always_eject_one_host: bool,
    /// The time between sweeps, which return ejected deployments whose time is up and lower
    /// the multiplier of healthy ones (default 10 s; above 0).
    pub interval: Duration,
}

impl Default for OutlierSettings {
    fn default() -> Self {
        Self {
            consecutive_5xx: 5,
            base_ejection_time: Duration::from_secs(30),
            max_ejection_time: Duration::from_secs(300),
            max_ejection_percent: 10,
            always_eject_one_host: false,
            interval: Duration::from_secs(10),
        }
    }
}

/// `router_settings.hedge_after`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HedgeAfter {
    /// A fixed delay.
    Fixed(Duration),
    /// A percentile (1 to 99) of the group's recent successful latency.
    Percentile(u8),
}

impl HedgeAfter {
    /// Reads `p95` or a percentile name; `None` when it is not one.
    pub fn percentile(text: &str) -> Option<Self> {
        let n: u8 = text.strip_prefix('p')?.parse().ok()?;
        (1..=99).contains(&n).then_some(HedgeAfter::Percentile(n))
    }
}
