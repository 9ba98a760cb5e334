//! The shipped Grafana dashboard (`docs/grafana/routersim.json`) queries only metrics routersim
//! exports: every `routersim_*` name in a panel's `expr` is a series of a finished run's
//! `metrics.prom` or of `routersim serve`'s `GET /metrics` (provider calls), and the live
//! panels (those over `rate`/`increase`) only use what a `GET /metrics` serves too.

use std::collections::BTreeSet;

use routersim_report::live_metrics::LiveMetrics;
use routersim_report::provider_metrics::ProviderCallMetrics;
use serde_json::Value;

use crate::common::{repo, routersim, scratch_dir};

/// Every series name an exposition holds: the sample lines' names (so a histogram's
/// `_bucket`, `_sum` and `_count` are there, and a family with no sample is not).
fn series_names(text: &str) -> BTreeSet<String> {
    let mut names: BTreeSet<String> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| l.split(['{', ' ']).next().unwrap().to_string())
        .collect();
    // A labelled family without samples yet (no failure so far) is still exported: its
    // `# TYPE` line names it.
    for l in text.lines() {
        if let Some(rest) = l.strip_prefix("# TYPE ") {
            names.insert(rest.split(' ').next().unwrap().to_string());
        }
    }
    names
}

/// Every `expr` in the dashboard.
fn exprs(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                match (k.as_str(), v) {
                    ("expr", Value::String(e)) => out.push(e.clone()),
                    _ => exprs(v, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| exprs(v, out)),
        _ => {}
    }
}

/// The `routersim_*` identifiers in a PromQL expression.
fn metric_names(expr: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = expr;
    while let Some(i) = rest.find("routersim_") {
        let tail = &rest[i..];
        let end = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(tail.len());
        names.push(tail[..end].to_string());
        rest = &tail[end..];
    }
    names
}

#[test]
fn every_metric_the_dashboard_queries_is_exported() {
    let dir = scratch_dir("grafana");
    let out = dir.join("run");
    let ran = routersim(&[
        "run",
        "scenarios/ci/rate-limit-storm.yaml",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(ran.status.success(), "{ran:?}");
    let prom = std::fs::read_to_string(out.join("metrics.prom")).unwrap();
    let served = ProviderCallMetrics::default();
    served.record_call("east", "ok", std::time::Duration::from_millis(3));
    let served = served.render();
    let serve_names = series_names(&served);
    let mut exported = series_names(&prom);
    exported.extend(serve_names.iter().cloned());
    let mut live = series_names(&LiveMetrics::new(&[]).render());
    live.extend(serve_names);

    let text = std::fs::read_to_string(repo().join("docs/grafana/routersim.json")).unwrap();
    let dashboard: Value = serde_json::from_str(&text).unwrap();
    let mut all = Vec::new();
    exprs(&dashboard["panels"], &mut all);
    assert!(all.len() >= 8, "{all:?}");
    let mut queried = BTreeSet::new();
    for expr in &all {
        let names = metric_names(expr);
        assert!(!names.is_empty(), "{expr} queries no routersim metric");
        let is_live = expr.contains("rate(") || expr.contains("increase(");
        for name in names {
            assert!(
                exported.contains(&name),
                "{name} (in {expr}) is not in metrics.prom nor served by serve:\n{prom}\n{served}"
            );
            if is_live {
                assert!(
                    live.contains(&name),
                    "{name} (in {expr}) is not served live"
                );
            }
            queried.insert(name);
        }
    }
    // And the dashboard shows every family metrics.prom and serve have (a new one gets a panel).
    let families: BTreeSet<String> = prom
        .lines()
        .chain(served.lines())
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .map(|l| l.split(' ').next().unwrap().to_string())
        .collect();
    for family in families {
        assert!(
            queried.iter().any(|q| q.starts_with(&family)),
            "no panel queries {family}"
        );
    }
}
