//! [`ErrorSpec`]: an error a fake provider answers with (its kind, status and `Retry-After`,
//! and how that is sent), and the failure the router then receives.
//!
//! Separate because script entries, fault windows and stream faults all carry one: below
//! `outcome` and `stream_fault`, it lets each name it without naming the other.

use std::time::Duration;

use routersim_engine::failure::{FailureKind, ProviderFailure, RetryAfter};
use routersim_engine::retry_after::format_http_date;
use serde::Deserialize;

use super::latency::LatencySpec;

/// How a `Retry-After` is sent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RetryAfterFormat {
    /// `Retry-After: <seconds>`: whole seconds, rounded up ([`RetryAfter::Delay`]).
    #[default]
    Seconds,
    /// `retry-after-ms`: the exact delay ([`RetryAfter::Delay`]).
    Ms,
    /// `Retry-After: <HTTP-date>` ([`RetryAfter::HttpDate`]): the virtual wall clock plus the
    /// delay, rounded up to the next whole second (the date's resolution), so it resolves to
    /// at least the delay and less than a second more.
    HttpDate,
}

/// An error a fake provider answers with.
#[derive(Clone, Debug, PartialEq)]
pub struct ErrorSpec {
    /// The failure kind (`rate_limit`, …; `router_rate_limit` is the router's own, not allowed).
    pub kind: FailureKind,
    /// The status sent; `None` means the kind's usual one.
    pub status: Option<u16>,
    /// The `Retry-After` sent, if any.
    pub retry_after: Option<Duration>,
    /// How it is sent.
    pub retry_after_format: RetryAfterFormat,
    /// How long the error takes to arrive; `None` means the usual latency rules.
    pub latency: Option<LatencySpec>,
    /// `error: connection_lost_after_send` (a fault's): the connection is lost after the
    /// request was sent — an `api_connection` failure marked ambiguous — and the provider
    /// executed it with this probability (`executed`, default 1).
    pub lost_after_send: Option<f64>,
}

impl ErrorSpec {
    /// An error of `kind` with its usual status, no Retry-After, no latency of its own.
    pub fn new(kind: FailureKind) -> Self {
        Self {
            kind,
            status: None,
            retry_after: None,
            retry_after_format: RetryAfterFormat::Seconds,
            latency: None,
            lost_after_send: None,
        }
    }

    /// The failure as the router receives it when the virtual wall clock reads `now_unix_ms`.
    pub fn failure(&self, now_unix_ms: i64) -> ProviderFailure {
        let mut failure = ProviderFailure::new(self.kind);
        if let Some(status) = self.status {
            failure.status = Some(status);
        }
        if let Some(delay) = self.retry_after {
            failure.retry_after = Some(match self.retry_after_format {
                RetryAfterFormat::Ms => RetryAfter::Delay(delay),
                RetryAfterFormat::Seconds => RetryAfter::Delay(Duration::from_secs(
                    delay.as_nanos().div_ceil(1_000_000_000) as u64,
                )),
                RetryAfterFormat::HttpDate => {
                    let delay_ms =
                        i64::try_from(delay.as_nanos().div_ceil(1_000_000)).unwrap_or(i64::MAX);
                    let target = now_unix_ms.saturating_add(delay_ms);
                    let ceiled = target.div_euclid(1000) * 1000
                        + if target.rem_euclid(1000) > 0 { 1000 } else { 0 };
                    RetryAfter::HttpDate(format_http_date(ceiled))
                }
            });
        }
        failure
    }

    pub(super) fn check(&self) -> Result<(), String> {
        if self.kind == FailureKind::RouterRateLimit {
            return Err(
                "router_rate_limit is the router's own error; a provider sends rate_limit".into(),
            );
        }
        if let Some(status) = self.status
            && !(100..=599).contains(&status)
        {
            return Err(format!("status {status} is not an HTTP status (100..=599)"));
        }
        if let Some(status) = self.status
            && status < 400
        {
            return Err(format!(
                "status {status} is not an error status: an injected error is sent with a \
                 status from 400 to 599"
            ));
        }
        Ok(())
    }
}
