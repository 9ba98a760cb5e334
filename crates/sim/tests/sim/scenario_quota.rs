//! Provider quotas end to end: a scenario's `rpm_limit` makes 429s with a Retry-After emerge
//! from traffic through the real router; the shipped quota-ramp and profiles files pick their
//! strategy or profile with `set`.

use std::path::{Path, PathBuf};

use routersim_engine::config::{Profile, RoutingStrategyName};
use routersim_sim::run::{RunOptions, run};
use routersim_sim::scenario::{RouterSource, load_scenario, parse_scenario};

fn out_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("scenario-quota-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn a_burst_over_the_provider_quota_gets_429s_with_retry_after() {
    let text = "duration: 1m
router:
  model_list:
    - {model_name: g, litellm_params: {model: openai/a}, model_info: {id: a}}
  router_settings: {num_retries: 0, disable_cooldowns: true}
providers:
  a: {latency: 0s, rpm_limit: 60}
traffic:
  - {at: 0s, model: g, count: 70}
  - {at: 1s, model: g, count: 3}
  - {at: 30s, model: g, count: 31}
";
    let scenario = parse_scenario(text, Path::new("burst.yaml")).expect("valid");
    let dir = out_dir("burst");
    let report = run(
        &scenario,
        &RunOptions {
            out_dir: Some(dir.clone()),
            ..RunOptions::default()
        },
    )
    .expect("runs");
    // t=0: 60 of 70; t=1s: 1 of 3; t=30s: 29 back (30 s of refill minus the one taken at 1 s).
    let s = &report.summary;
    assert_eq!((s.requests, s.ok), (104, 90));
    assert_eq!(s.metric("failed.rate_limit"), Some(14.0));

    // Every 429 carries the time until the bucket has room, in whole seconds.
    let attempts = std::fs::read_to_string(dir.join("attempts.csv")).expect("attempts.csv");
    let header: Vec<&str> = attempts
        .lines()
        .next()
        .expect("header")
        .split(',')
        .collect();
    let col = |name: &str| header.iter().position(|h| *h == name).expect(name);
    let (outcome, retry_after) = (col("outcome"), col("retry_after_ms"));
    let waits: Vec<&str> = attempts
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|f| f[outcome] == "rate_limit")
        .map(|f| f[retry_after])
        .collect();
    assert_eq!(waits.len(), 14);
    assert!(waits.iter().all(|w| w.starts_with("1000")), "{waits:?}");
}

fn repo_scenarios() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios")
}

#[test]
fn each_quota_ramp_file_sets_its_strategy_on_the_shared_router() {
    let dir = repo_scenarios().join("quota-ramp");
    let mut seen = Vec::new();
    for name in RoutingStrategyName::NAMES {
        let file = dir.join(format!("{name}.yaml"));
        if !file.exists() {
            continue; // aliases (tag-based-routing, usage-based-routing-v2) have no file
        }
        let s = load_scenario(&file).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            s.router.settings.routing_strategy,
            RoutingStrategyName::from_name(name).expect("a name")
        );
        assert_eq!(s.router_source, RouterSource::File(dir.join("router.yaml")));
        assert_eq!(s.providers["mini"].rpm_limit, Some(120));
        assert!(!s.expect.is_empty(), "{name} has expect lines");
        seen.push(s.router.settings.routing_strategy);
    }
    assert_eq!(seen.len(), 8, "one file per strategy");
}

#[test]
fn each_profiles_file_sets_its_profile_on_the_shared_router() {
    let dir = repo_scenarios().join("profiles");
    for (name, profile) in [
        ("litellm", Profile::LiteLlm),
        ("deltallm", Profile::DeltaLlm),
    ] {
        let s = load_scenario(&dir.join(format!("{name}.yaml"))).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.router.settings.profile, Some(profile));
        assert_eq!(s.router_source, RouterSource::File(dir.join("router.yaml")));
    }
}
