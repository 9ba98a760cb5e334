//! Property tests: the scenario loader and the router config loader return a value or an
//! error, never panic, and answer within a time bound, on structured-but-wrong input.
//!
//! Random bytes mostly test the YAML parser's first line; these inputs are built from the real
//! key sets (scenario, providers, faults, traffic, expect, LiteLLM's config), with wrong types,
//! extreme numbers, odd durations and rates, deep nesting, anchors, aliases and merge keys, and
//! shipped scenarios mutated at random paths, so they reach the validation code behind the
//! parser. Case counts keep the file at a few seconds in release.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::test_runner::Config;
use routersim_config::load::load_router_config_str;
use routersim_sim::scenario::parse_scenario;
use serde_json::{Map, Value};

/// Generous: a load takes milliseconds; a loaded 2-core machine must not flake.
const BOUND: Duration = Duration::from_secs(5);
/// For the alias bomb: the config loader needs about 0.65 s in release (6.5 s in a debug
/// build) to reach serde-saphyr's 250,000-node budget and fail.
const BOMB_BOUND: Duration = Duration::from_secs(60);

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Scenario files are named as if in `scenarios/` (so `router_file` resolves there).
fn scenario_path() -> PathBuf {
    repo().join("scenarios/generated.yaml")
}

const KEYS: &[&str] = &[
    // scenario
    "name",
    "description",
    "seed",
    "duration",
    "epoch",
    "router",
    "router_file",
    "set",
    "providers",
    "faults",
    "traffic",
    "expect",
    // providers
    "latency",
    "p50",
    "p99",
    "uniform",
    "context_window",
    "script",
    "then",
    "ttft",
    "inter_token",
    "output_tokens",
    "emits",
    "rpm_limit",
    "tpm_limit",
    "quota_retry_after_format",
    // outcomes and faults
    "ok",
    "error",
    "status",
    "retry_after",
    "retry_after_format",
    "malformed",
    "finish_reason",
    "deployment",
    "model_group",
    "from",
    "to",
    "probability",
    "stream_break",
    "stream_error_frame",
    "stream_truncated",
    "stream_stall",
    "stream_empty",
    "after_tokens",
    "after",
    "for",
    // traffic and expect
    "at",
    "count",
    "model",
    "rate",
    "arrival",
    "input_tokens",
    "max_tokens",
    "num_retries",
    "fallbacks",
    "disable_fallbacks",
    "metadata",
    "tags",
    "stream",
    "response_format",
    "tools",
    "metric",
    "min",
    "max",
    // LiteLLM's config
    "model_list",
    "router_settings",
    "litellm_settings",
    "model_name",
    "litellm_params",
    "model_info",
    "id",
    "rpm",
    "tpm",
    "order",
    "weight",
    "timeout",
    "stream_timeout",
    "cooldown_time",
    "allowed_fails",
    "allowed_fails_policy",
    "retry_policy",
    "model_group_retry_policy",
    "routing_strategy",
    "context_window_fallbacks",
    "content_policy_fallbacks",
    "default_fallbacks",
    "max_fallbacks",
    "enable_pre_call_checks",
    "enable_weighted_failover",
    "disable_cooldowns",
    "model_group_alias",
    "enable_mid_stream_fallback_continuation",
    "stream_recovery",
    "stream_stall_timeout",
    "recovery",
    "classification",
    "health_check_interval",
    "profile",
    "priority",
    "max_input_tokens",
    "supports_assistant_prefill",
    "input_cost_per_token",
    "RateLimitErrorRetries",
    "DefaultRetries",
    "TimeoutErrorAllowedFails",
    // typos and oddities
    "allowed_fail",
    "tpm_limt",
    "<<",
    "~",
    "",
    "0",
    "gpt-4o",
    "east",
    "*",
];

const SCALARS: &[&str] = &[
    "2m",
    "0s",
    "0",
    "-1s",
    "1.5s",
    "300ms",
    "999999999h",
    "1e3s",
    "2 m",
    "10m",
    "1h",
    "20/s",
    "0/s",
    "1e9/s",
    "-5/m",
    "1200/m",
    "5000/h",
    "/s",
    "nan",
    ".nan",
    ".inf",
    "-.inf",
    "1..5",
    "5..1",
    "0..0",
    "1..",
    "..5",
    "rate_limit",
    "router_rate_limit",
    "ok",
    "service_unavailable",
    "internal_server",
    "timeout",
    "context_window_exceeded",
    "content_policy_violation",
    "http-date",
    "ms",
    "seconds",
    "poisson",
    "uniform",
    "simple-shuffle",
    "least-busy",
    "latency-based-routing",
    "nope",
    "true",
    "false",
    "yes",
    "~",
    "null",
    "''",
    "gpt-4o",
    "east",
    "west",
    "chat",
    "a",
    "18446744073709551616",
    "-9223372036854775809",
    "4294967296",
    "4294967295",
    "1e308",
    "-0",
    "0x10",
    "0.5",
    "1.0",
    "2026-01-01T00:00:00Z",
    "Thu, 01 Jan 2026 00:00:00 GMT",
    "role_only",
    "tool_calls",
    "json",
    "text",
    "litellm",
    "deltallm",
    "multigrid",
    "half_open",
    "ttl",
    "configs/proxy_config.yaml",
    "nope.yaml",
    "profiles/router.yaml",
    ".",
    "os.environ/AZURE_KEY",
    "failed.rate_limit",
    "cooldowns.east",
    "p99_latency_ms",
];

/// A YAML document shape.
#[derive(Clone, Debug)]
enum Node {
    Scalar(String),
    Seq(Vec<Node>),
    Map(Vec<(String, Node)>),
}

fn scalar() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => proptest::sample::select(SCALARS).prop_map(str::to_string),
        2 => any::<i64>().prop_map(|n| n.to_string()),
        1 => any::<u64>().prop_map(|n| n.to_string()),
        1 => any::<f64>().prop_map(|x| format!("{x:e}")),
        1 => proptest::collection::vec(any::<char>(), 0..6).prop_map(|c| c.into_iter().collect()),
    ]
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        9 => proptest::sample::select(KEYS).prop_map(str::to_string),
        1 => scalar(),
    ]
}

fn node() -> impl Strategy<Value = Node> {
    scalar()
        .prop_map(Node::Scalar)
        .prop_recursive(6, 96, 8, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..6).prop_map(Node::Seq),
                proptest::collection::vec((key(), inner), 0..8).prop_map(Node::Map),
            ]
        })
}

fn quoted(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

/// Writes a node as YAML: block or flow style, scalars plain or quoted, sometimes with an
/// anchor that a later sibling aliases or merges.
struct Emitter {
    out: String,
    anchors: u32,
    style: u64,
}

impl Emitter {
    fn coin(&mut self) -> bool {
        self.style = self
            .style
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1);
        (self.style >> 33) & 1 == 1
    }

    fn scalar(&mut self, s: &str) -> String {
        if self.coin() {
            s.to_string()
        } else {
            quoted(s)
        }
    }

    fn flow(&mut self, node: &Node) -> String {
        match node {
            Node::Scalar(s) => self.scalar(s),
            Node::Seq(items) => {
                let parts: Vec<String> = items.iter().map(|n| self.flow(n)).collect();
                format!("[{}]", parts.join(", "))
            }
            Node::Map(entries) => {
                let parts: Vec<String> = entries
                    .iter()
                    .map(|(k, v)| format!("{}: {}", quoted(k), self.flow(v)))
                    .collect();
                format!("{{{}}}", parts.join(", "))
            }
        }
    }

    fn block(&mut self, node: &Node, indent: usize) {
        let pad = " ".repeat(indent);
        match node {
            Node::Scalar(s) => {
                let s = self.scalar(s);
                self.out.push_str(&format!(" {s}\n"));
            }
            Node::Seq(items) if items.is_empty() || self.coin() => {
                let f = self.flow(node);
                self.out.push_str(&format!(" {f}\n"));
            }
            Node::Map(entries) if entries.is_empty() || self.coin() && self.coin() => {
                let f = self.flow(node);
                self.out.push_str(&format!(" {f}\n"));
            }
            Node::Seq(items) => {
                self.out.push('\n');
                for item in items {
                    self.out.push_str(&format!("{pad}-"));
                    self.block(item, indent + 2);
                }
            }
            Node::Map(entries) => {
                self.out.push('\n');
                let mut anchor: Option<u32> = None;
                for (k, v) in entries {
                    let k = quoted(k);
                    match (anchor, v) {
                        // Merge an earlier anchored mapping, or alias it.
                        (Some(a), _) if self.coin() && self.coin() => {
                            if self.coin() {
                                self.out.push_str(&format!("{pad}<<: *a{a}\n"));
                            } else {
                                self.out.push_str(&format!("{pad}{k}: *a{a}\n"));
                            }
                        }
                        (None, Node::Map(_)) if self.coin() => {
                            self.anchors += 1;
                            let a = self.anchors;
                            anchor = Some(a);
                            self.out.push_str(&format!("{pad}{k}: &a{a}"));
                            self.block(v, indent + 2);
                        }
                        _ => {
                            self.out.push_str(&format!("{pad}{k}:"));
                            self.block(v, indent + 2);
                        }
                    }
                }
            }
        }
    }
}

fn emit(root: &Node, style: u64) -> String {
    let mut e = Emitter {
        out: String::new(),
        anchors: 0,
        style,
    };
    match root {
        Node::Map(entries) if !entries.is_empty() => {
            e.block(root, 0);
            e.out.trim_start_matches('\n').to_string()
        }
        other => {
            let f = e.flow(other);
            f + "\n"
        }
    }
}

/// A document whose top level is a mapping of scenario (or config) keys.
fn document() -> impl Strategy<Value = (String, Node)> {
    (
        proptest::collection::vec((key(), node()), 0..10),
        any::<u64>(),
    )
        .prop_map(|(entries, style)| {
            let root = Node::Map(entries);
            (emit(&root, style), root)
        })
}

fn to_value(node: &Node) -> Value {
    match node {
        Node::Scalar(s) => serde_json::from_str::<Value>(s)
            .ok()
            .filter(|v| !v.is_object() && !v.is_array())
            .unwrap_or_else(|| Value::String(s.clone())),
        Node::Seq(items) => Value::Array(items.iter().map(to_value).collect()),
        Node::Map(entries) => Value::Object(
            entries
                .iter()
                .map(|(k, v)| (k.clone(), to_value(v)))
                .collect::<Map<_, _>>(),
        ),
    }
}

/// The shipped scenarios' texts, parsed as trees (read once).
fn shipped() -> &'static [Value] {
    static SHIPPED: std::sync::OnceLock<Vec<Value>> = std::sync::OnceLock::new();
    SHIPPED.get_or_init(read_shipped)
}

fn read_shipped() -> Vec<Value> {
    let mut out = Vec::new();
    for dir in [
        "scenarios",
        "scenarios/ci",
        "scenarios/profiles",
        "scenarios/quota-ramp",
    ] {
        let Ok(entries) = std::fs::read_dir(repo().join(dir)) else {
            continue;
        };
        let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        paths.sort();
        for path in paths {
            if path.extension().is_some_and(|e| e == "yaml")
                && let Ok(text) = std::fs::read_to_string(&path)
                && let Ok(tree) = serde_saphyr::from_str::<Value>(&text)
                && tree.get("traffic").is_some()
            {
                out.push(tree);
            }
        }
    }
    out
}

/// Replaces the value at a random path (`steps` picks the child at each level; a scalar on
/// the way is replaced itself).
fn mutate(at: &mut Value, steps: &[usize], replacement: Value) {
    let Some((&step, rest)) = steps.split_first() else {
        *at = replacement;
        return;
    };
    let has_child = match at {
        Value::Object(map) => !map.is_empty(),
        Value::Array(items) => !items.is_empty(),
        _ => false,
    };
    if !has_child {
        *at = replacement;
        return;
    }
    let child = match at {
        Value::Object(map) => {
            let n = map.len();
            map.values_mut().nth(step % n)
        }
        Value::Array(items) => {
            let n = items.len();
            items.get_mut(step % n)
        }
        _ => None,
    };
    if let Some(child) = child {
        mutate(child, rest, replacement);
    }
}

fn timed<T>(what: &str, text: &str, f: impl FnOnce() -> T) -> T {
    timed_within(BOUND, what, text, f)
}

fn timed_within<T>(bound: Duration, what: &str, text: &str, f: impl FnOnce() -> T) -> T {
    let started = Instant::now();
    let result = f();
    let took = started.elapsed();
    assert!(took < bound, "{what} took {took:?} on:\n{text:.2000}");
    result
}

proptest! {
    #![proptest_config(Config { cases: 256, ..Config::default() })]

    #[test]
    fn generated_scenarios_load_or_fail_cleanly((text, _root) in document()) {
        let path = scenario_path();
        timed("parse_scenario", &text, || parse_scenario(&text, &path)).ok();
    }

    #[test]
    fn generated_router_configs_load_or_fail_cleanly((text, _root) in document()) {
        timed("load_router_config_str", &text, || load_router_config_str(&text)).ok();
    }

    #[test]
    fn mutated_shipped_scenarios_load_or_fail_cleanly(
        which in any::<usize>(),
        mutations in proptest::collection::vec(
            (proptest::collection::vec(any::<usize>(), 1..6), node()),
            1..4,
        ),
    ) {
        let bases = shipped();
        prop_assume!(!bases.is_empty());
        let mut tree = bases[which % bases.len()].clone();
        for (steps, replacement) in &mutations {
            mutate(&mut tree, steps, to_value(replacement));
        }
        let text = serde_saphyr::to_string(&tree).unwrap_or_default();
        let path = scenario_path();
        timed("parse_scenario", &text, || parse_scenario(&text, &path)).ok();
        // The inline router config, alone, through the config loader.
        if let Some(router) = tree.get("router") {
            let text = serde_saphyr::to_string(router).unwrap_or_default();
            timed("load_router_config_str", &text, || load_router_config_str(&text)).ok();
        }
    }
}

/// Worst cases written out: deep nesting, huge numbers in every slot, empty documents.
#[test]
fn pathological_documents_fail_within_the_bound() {
    let path = scenario_path();
    let deep_flow = format!("{}{}", "[".repeat(20_000), "]".repeat(20_000));
    let deep_block: String = (0..3_000)
        .map(|i| format!("{}k{i}:\n", " ".repeat(i)))
        .collect();
    let huge = "name: x\nseed: 18446744073709551616\nduration: 999999999999999h\n\
                router: {model_list: [{model_name: g, litellm_params: {model: m, rpm: 1e400}}]}\n\
                traffic: [{model: g, rate: 1e308/s}]\n";
    for text in [
        deep_flow.as_str(),
        &deep_block,
        huge,
        "",
        "~",
        "---\n---\n",
        "\t",
    ] {
        let scenario = timed("parse_scenario", text, || parse_scenario(text, &path));
        assert!(scenario.is_err(), "loaded: {text:.200}");
        timed("load_router_config_str", text, || {
            load_router_config_str(text)
        })
        .ok();
    }
}

/// Ten levels of ten aliases each (10^11 nodes if expanded), inside the router config.
#[test]
fn an_alias_bomb_fails_within_the_bound() {
    let mut bomb = String::from("router:\n  a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..12 {
        let refs = vec![format!("*a{}", i - 1); 10].join(", ");
        bomb.push_str(&format!("  a{i}: &a{i} [{refs}]\n"));
    }
    bomb.push_str("  model_list: *a11\n");
    let path = scenario_path();
    let scenario = timed_within(BOMB_BOUND, "parse_scenario", &bomb, || {
        parse_scenario(&bomb, &path)
    });
    assert!(scenario.is_err());
    let config = bomb.replace("\n  ", "\n").replacen("router:\n", "", 1);
    let loaded = timed_within(BOMB_BOUND, "load_router_config_str", &config, || {
        load_router_config_str(&config)
    });
    assert!(loaded.is_err());
}
