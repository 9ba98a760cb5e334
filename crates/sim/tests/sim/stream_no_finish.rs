//! The `stream_no_finish` fault: a stream that ends with its end marker but no finish reason
//! (`role_only`: after one role-only delta; `true`: with nothing before it). In memory it
//! yields `Done(FinishReason::Missing)`; on the wire (OpenAI, Anthropic, Azure) it is sent
//! without a finish chunk / `message_delta`, and the engine's HTTP provider reads it back as
//! the same items at the same instants.
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::Duration;

use routersim_engine::config::{Deployment, RouterConfig};
use routersim_engine::failure::ProviderFailure;
use routersim_engine::provider::{Provider, ProviderCall, ProviderResponse};
use routersim_engine::request::Request;
use routersim_engine::stream::{ChunkKind, FinishReason, ProviderStream, StreamItem};
use routersim_mock_providers::wire::{CallLog, WireServer};
use routersim_mock_providers::{FakeProviders, FaultSpec, ProviderSpec};
use routersim_sim::transport::{DuplexConnector, SIMULATED_ORIGIN};
use routersim_wire::client::HttpProvider;
use tokio::time::Instant;

const EPOCH: i64 = 1_767_225_600_000;

fn config() -> RouterConfig {
    let dep = |id: &str, model: &str| Deployment {
        id: id.into(),
        model_name: "group".into(),
        model: model.into(),
        ..Deployment::default()
    };
    RouterConfig {
        deployments: vec![
            dep("gpt-a", "openai/gpt-4o"),
            dep("claude-a", "anthropic/claude-sonnet"),
            dep("az-a", "azure/gpt-4o"),
        ],
        ..RouterConfig::default()
    }
}

const SCRIPT: &str = "{ttft: 100ms, inter_token: 10ms, output_tokens: 4, script: [
    {stream_no_finish: role_only}, {stream_no_finish: true}, {stream_empty: role_only}, ok]}";

fn fakes(config: &RouterConfig, start: Instant) -> FakeProviders {
    let specs: BTreeMap<String, ProviderSpec> = ["gpt-a", "claude-a", "az-a"]
        .into_iter()
        .map(|id| (id.to_string(), serde_saphyr::from_str(SCRIPT).unwrap()))
        .collect();
    let faults: Vec<FaultSpec> = Vec::new();
    FakeProviders::new(config, &specs, &faults, 7, EPOCH, start).unwrap()
}

type Items = Vec<(u128, Option<Result<StreamItem, ProviderFailure>>)>;

/// Each deployment's four streamed calls: every item with its instant.
async fn run<P: Provider>(p: &P, config: &RouterConfig) -> Vec<Items> {
    let mut outs = Vec::new();
    for (index, d) in config.deployments.iter().enumerate() {
        for i in 0..4u64 {
            let mut req = Request::new(i, "group");
            req.stream = true;
            let t0 = Instant::now();
            let ms = || Instant::now().duration_since(t0).as_millis();
            let call = ProviderCall {
                deployment: d,
                deployment_index: index,
                request: &req,
                attempt: 1,
            };
            let Ok(ProviderResponse::Stream(mut s)) = p.call(call).await else {
                panic!("{} call {i}: not a stream", d.id);
            };
            let mut items = Vec::new();
            loop {
                let item = s.next_item().await;
                let end = !matches!(item, Some(Ok(StreamItem::Chunk(_))));
                items.push((ms(), item));
                if end {
                    break;
                }
            }
            outs.push(items);
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }
    outs
}

fn local<F: std::future::Future>(f: F) -> F::Output {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .unwrap();
    tokio::task::LocalSet::new().block_on(&runtime, f)
}

fn kinds(items: &Items) -> Vec<String> {
    items
        .iter()
        .map(|(at, item)| match item {
            Some(Ok(StreamItem::Chunk(c))) if c.kind == ChunkKind::RoleOnly => {
                format!("{at}:role_only")
            }
            Some(Ok(StreamItem::Chunk(c))) => format!("{at}:text{}", c.tokens),
            Some(Ok(StreamItem::Done(FinishReason::Missing))) => format!("{at}:end_no_finish"),
            Some(Ok(StreamItem::Done(r))) => format!("{at}:done_{r:?}"),
            other => format!("{at}:{other:?}"),
        })
        .collect()
}

#[test]
fn no_finish_streams_read_the_same_in_memory_and_on_every_wire() {
    let config = config();
    let memory = local(async {
        let p = fakes(&config, Instant::now());
        run(&p, &config).await
    });
    let http = local(async {
        let start = Instant::now();
        let server = WireServer::new(
            Rc::new(fakes(&config, start)),
            config.deployments.clone(),
            CallLog::new(std::io::sink()),
            start,
            EPOCH,
        );
        let p = HttpProvider::for_wire_server(
            DuplexConnector::new(Rc::new(server)),
            &config.deployments,
            SIMULATED_ORIGIN,
        )
        .unwrap();
        run(&p, &config).await
    });
    assert_eq!(memory.len(), 12);
    for (call, (m, h)) in memory.iter().zip(&http).enumerate() {
        assert_eq!(m, h, "call {call}: memory vs wire");
        let expected: &[&str] = match call % 4 {
            0 => &["100:role_only", "100:end_no_finish"],
            1 => &["100:end_no_finish"],
            2 => &["100:role_only", "100:done_Stop"],
            _ => &["100:text1", "130:text3", "130:done_Stop"],
        };
        assert_eq!(kinds(m), expected, "call {call}");
    }
}

#[test]
fn stream_no_finish_takes_role_only_or_true() {
    let ok: ProviderSpec = serde_saphyr::from_str("{script: [{stream_no_finish: true}]}").unwrap();
    assert_eq!(ok.script.len(), 1);
    for bad in [
        "{script: [{stream_no_finish: false}]}",
        "{script: [{stream_no_finish: everything}]}",
        "{script: [{stream_no_finish: role_only, stream_empty: true}]}",
    ] {
        let err = serde_saphyr::from_str::<ProviderSpec>(bad)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("role_only") || err.contains("stream_no_finish"),
            "{bad}: {err}"
        );
    }
}

/// Under `profile: litellm-1.110` the role-only-then-no-finish stream fails and goes straight
/// to the fallback, in memory and over the wire; the default profile reads it as an empty
/// success.
#[test]
fn the_1_110_router_fails_a_role_only_stream_without_finish_reason() {
    use routersim_engine::Router;
    use routersim_engine::config::{FallbackMap, FallbackTarget, Profile};

    let specs_text = "{
      a0: {ttft: 100ms, script: [{stream_no_finish: role_only}]},
      b0: {ttft: 100ms, output_tokens: 3}
    }";
    let config = |profile: Option<Profile>| {
        let dep = |id: &str, group: &str| Deployment {
            id: id.into(),
            model_name: group.into(),
            model: "openai/gpt-4o".into(),
            ..Deployment::default()
        };
        let mut c = RouterConfig {
            deployments: vec![dep("a0", "A"), dep("b0", "B")],
            ..RouterConfig::default()
        };
        c.settings.fallbacks = FallbackMap {
            entries: vec![("A".into(), vec![FallbackTarget::group("B")])],
        };
        c.settings.profile = profile;
        c
    };
    let fakes = |config: &RouterConfig, start: Instant| {
        let specs: BTreeMap<String, ProviderSpec> = serde_saphyr::from_str(specs_text).unwrap();
        FakeProviders::new(config, &specs, &[], 7, EPOCH, start).unwrap()
    };
    let attempts = |r: &routersim_engine::request::CompletionResult| -> Vec<String> {
        r.attempts
            .iter()
            .map(|a| format!("{}:{}", a.deployment_id, a.outcome_name()))
            .collect()
    };
    for (profile, want) in [
        (
            Some(Profile::LiteLlm110),
            vec!["a0:api_connection", "b0:ok"],
        ),
        (None, vec!["a0:ok"]),
    ] {
        let config = config(profile);
        let memory = local(async {
            let router = Router::from_config(config.clone(), fakes(&config, Instant::now()));
            let mut req = Request::new(1, "A");
            req.stream = true;
            router.completion(req).await
        });
        assert_eq!(attempts(&memory), want, "memory, {profile:?}");
        let http = local(async {
            let start = Instant::now();
            let server = WireServer::new(
                Rc::new(fakes(&config, start)),
                config.deployments.clone(),
                CallLog::new(std::io::sink()),
                start,
                EPOCH,
            );
            let p = HttpProvider::for_wire_server(
                DuplexConnector::new(Rc::new(server)),
                &config.deployments,
                SIMULATED_ORIGIN,
            )
            .unwrap();
            let router = Router::from_config(config.clone(), p);
            let mut req = Request::new(1, "A");
            req.stream = true;
            router.completion(req).await
        });
        assert_eq!(attempts(&http), want, "http, {profile:?}");
    }
}
