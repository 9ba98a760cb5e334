//! Every `CooldownSet` says where its length came from: the deployment's own `cooldown_time`,
//! the provider's Retry-After, or the router's `cooldown_time` (LiteLLM's order of precedence),
//! so a report can tell why changing the router's `cooldown_time` changed nothing.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::too_many_lines,
    clippy::disallowed_methods,
    reason = "tests fail loudly, read as one story, and drive tokio's paused clock directly"
)]

use std::time::Duration;

use crate::common::*;
use routersim_engine::config::RouterSettings;
use routersim_engine::event::{CooldownSource, EventKind};
use routersim_engine::failure::FailureKind as K;
use routersim_engine::request::Request;

fn weighted(id: &str, weight: f64) -> routersim_engine::config::Deployment {
    let mut d = dep("A", id);
    d.weight = Some(weight);
    d
}

async fn cooldown(
    deployment_cooldown: Option<u64>,
    retry_after: Option<u64>,
) -> Vec<(u64, CooldownSource)> {
    let mut a0 = weighted("a0", 1000.0);
    a0.cooldown_time = deployment_cooldown.map(Duration::from_secs);
    let settings = RouterSettings {
        cooldown_time: Duration::from_secs(9),
        ..RouterSettings::default()
    };
    let step = match retry_after {
        Some(s) => fail_after(K::RateLimit, Duration::from_secs(s)),
        None => fail(K::RateLimit),
    };
    let (router, sink) = make_router(
        config(vec![a0, weighted("a1", 1.0)], settings),
        Scripted::new().script("a0", vec![step]),
    );
    router.completion(Request::new(1, "A")).await;
    events_named(&sink.events(), "cooldown_set")
        .into_iter()
        .filter_map(|e| match e {
            EventKind::CooldownSet {
                duration, source, ..
            } => Some((duration.as_secs(), source)),
            _ => None,
        })
        .collect()
}

#[tokio::test(start_paused = true)]
async fn a_cooldown_names_the_setting_its_length_came_from() {
    assert_eq!(
        cooldown(Some(2), Some(30)).await,
        [(2, CooldownSource::Deployment)]
    );
    assert_eq!(
        cooldown(None, Some(30)).await,
        [(30, CooldownSource::RetryAfter)]
    );
    assert_eq!(cooldown(None, None).await, [(9, CooldownSource::Router)]);
    assert_eq!(CooldownSource::RetryAfter.as_str(), "retry_after");
}
