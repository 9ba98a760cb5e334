//! Under `profile: litellm-1.110` `stream_timeout` also limits every gap between chunks, so
//! the fake providers keep their coalesced chunks under half of it: a steady stream whose
//! tokens flow never looks like a stall, while a real stall still cuts it.
use std::collections::BTreeMap;
use std::time::Duration;

use routersim_engine::Router;
use routersim_engine::config::{Deployment, Profile, RouterConfig};
use routersim_engine::request::Request;
use routersim_mock_providers::{FakeProviders, ProviderSpec};
use tokio::time::Instant;

const EPOCH: i64 = 1_767_225_600_000;

fn run(script: &str) -> (String, Option<u32>) {
    let mut config = RouterConfig {
        deployments: vec![Deployment {
            id: "a0".into(),
            model_name: "A".into(),
            model: "openai/gpt-4o".into(),
            ..Deployment::default()
        }],
        ..RouterConfig::default()
    };
    config.settings.profile = Some(Profile::LiteLlm110);
    config.settings.stream_timeout = Some(Duration::from_secs(1));
    config.settings.num_retries = 0;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .unwrap();
    runtime.block_on(async {
        let text =
            format!("{{a0: {{ttft: 200ms, inter_token: 20ms, output_tokens: 500, {script}}}}}");
        let specs: BTreeMap<String, ProviderSpec> = serde_saphyr::from_str(&text).unwrap();
        let fakes = FakeProviders::new(&config, &specs, &[], 7, EPOCH, Instant::now()).unwrap();
        let router = Router::from_config(config.clone(), fakes);
        let mut req = Request::new(1, "A");
        req.stream = true;
        let result = router.completion(req).await;
        let outcome = match &result.outcome {
            Ok(_) => "ok".to_string(),
            Err(f) => f.kind.as_str().to_string(),
        };
        (outcome, result.stream.map(|s| s.tokens_delivered))
    })
}

#[test]
fn a_flowing_stream_is_not_cut_by_stream_timeout_as_a_gap_limit() {
    // 500 tokens 20 ms apart: 10 s of tokens, never a gap of 1 s.
    assert_eq!(run("script: [ok]"), ("ok".to_string(), Some(500)));
}

#[test]
fn a_stall_past_stream_timeout_after_content_is_a_timeout() {
    assert_eq!(
        run("script: [{stream_stall: {after_tokens: 50, for: 5s}}]"),
        ("timeout".to_string(), Some(50))
    );
}
