//! A summary as the golden comparison sees it: every leaf (a number, a text, a `null`) with its
//! path, lists included, so a fault window's p99 is one number among others and not a line of
//! JSON.
//!
//! Why list items are named by what they are: a fault window is `windows["east: rate_limit
//! 90%"]`, not `windows[0]`, so adding a fault before it does not turn every later window into
//! a difference, and the path says which fault moved. An item's name is its `label`
//! (`windows`), its `replica` number (`by_replica`), or its span `from_ms..to_ms`
//! (`expect_windows`); where two items of one list would share a label, the label gets the
//! item's start (`east: service_unavailable @30000ms`); where names still repeat, or an item
//! has none, every item of that list is named by its position.

use serde_json::Value;

use routersim_sim::scenario::golden::IGNORED_SUMMARY_KEYS;
use routersim_sim::scenario::summary_path::Step;

/// One leaf of a summary: where it is and what it holds.
#[derive(Clone, Debug, PartialEq)]
pub struct Leaf<'a> {
    /// Its path.
    pub steps: Vec<Step>,
    /// Its value (never an object or a non-empty list).
    pub value: &'a Value,
}

/// Every leaf of a summary in document order, but the top-level keys the comparison ignores
/// ([`IGNORED_SUMMARY_KEYS`]).
pub fn leaves(summary: &Value) -> Vec<Leaf<'_>> {
    let mut out = Vec::new();
    match summary {
        Value::Object(map) => {
            for (key, value) in map {
                if !IGNORED_SUMMARY_KEYS.contains(&key.as_str()) {
                    walk(vec![Step::Key(key.clone())], value, &mut out);
                }
            }
        }
        other => walk(Vec::new(), other, &mut out),
    }
    out
}

fn walk<'a>(steps: Vec<Step>, value: &'a Value, out: &mut Vec<Leaf<'a>>) {
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                let mut next = steps.clone();
                next.push(Step::Key(key.clone()));
                walk(next, child, out);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            for (step, child) in item_names(items).into_iter().zip(items) {
                let mut next = steps.clone();
                next.push(step);
                walk(next, child, out);
            }
        }
        leaf => out.push(Leaf { steps, value: leaf }),
    }
}

/// The step naming each item of a list (see the module docs).
fn item_names(items: &[Value]) -> Vec<Step> {
    let by_position = || (0..items.len()).map(Step::Index).collect();
    let named: Option<Vec<Step>> = items.iter().map(own_name).collect();
    let Some(mut names) = named else {
        return by_position();
    };
    let repeated = |names: &[Step], i: usize| names.iter().filter(|n| **n == names[i]).count() > 1;
    let clashes: Vec<usize> = (0..names.len()).filter(|&i| repeated(&names, i)).collect();
    for &i in &clashes {
        if let (Step::Item(label), Some(from)) = (&names[i], number(&items[i], "from_ms")) {
            names[i] = Step::Item(format!("{label} @{from}ms"));
        }
    }
    if (0..names.len()).any(|i| repeated(&names, i)) {
        return by_position();
    }
    names
}

/// An item's own name: its label, its replica number, or its span.
fn own_name(item: &Value) -> Option<Step> {
    if let Some(label) = item.get("label").and_then(Value::as_str) {
        return Some(Step::Item(label.to_string()));
    }
    if let Some(replica) = item.get("replica").and_then(Value::as_u64) {
        return usize::try_from(replica).ok().map(Step::Index);
    }
    let from = number(item, "from_ms")?;
    let to = number(item, "to_ms").unwrap_or_default();
    Some(Step::Item(format!("{from}..{to}")))
}

/// A number field as text without float noise (`30000`, `1500.5`).
fn number(item: &Value, key: &str) -> Option<String> {
    let n = item.get(key)?.as_f64()?;
    Some(routersim_sim::expect::format_value(n))
}

#[cfg(test)]
mod tests {
    use super::*;
    use routersim_sim::scenario::summary_path::render;

    fn paths(value: &Value) -> Vec<String> {
        leaves(value).iter().map(|l| render(&l.steps)).collect()
    }

    #[test]
    fn windows_are_named_by_label_and_repeated_labels_by_their_start() {
        let summary = serde_json::json!({
            "requests": 3,
            "duration_ms": 1.0,
            "windows": [
                {"label": "east: 5xx", "from_ms": 0.0, "during": {"p99_latency_ms": 1.0}},
                {"label": "east: 5xx", "from_ms": 1500.5, "during": {"p99_latency_ms": 2.0}},
                {"label": "west: 429", "from_ms": 10.0, "to_ms": null}
            ],
            "expect_windows": [{"from_ms": 0.0, "to_ms": 5000.0, "stats": {"ok": 1}}],
            "by_replica": [{"replica": 0, "ok": 1}, {"replica": 1, "ok": 2}]
        });
        assert_eq!(
            paths(&summary),
            [
                "requests",
                "windows[\"east: 5xx @0ms\"].label",
                "windows[\"east: 5xx @0ms\"].from_ms",
                "windows[\"east: 5xx @0ms\"].during.p99_latency_ms",
                "windows[\"east: 5xx @1500.5ms\"].label",
                "windows[\"east: 5xx @1500.5ms\"].from_ms",
                "windows[\"east: 5xx @1500.5ms\"].during.p99_latency_ms",
                "windows[\"west: 429\"].label",
                "windows[\"west: 429\"].from_ms",
                "windows[\"west: 429\"].to_ms",
                "expect_windows[\"0..5000\"].from_ms",
                "expect_windows[\"0..5000\"].to_ms",
                "expect_windows[\"0..5000\"].stats.ok",
                "by_replica[0].replica",
                "by_replica[0].ok",
                "by_replica[1].replica",
                "by_replica[1].ok",
            ]
        );
    }

    #[test]
    fn items_without_names_or_with_clashing_names_go_by_position() {
        let summary = serde_json::json!({
            "a": [{"x": 1}, {"x": 2}],
            "b": [{"label": "l", "from_ms": 1.0}, {"label": "l", "from_ms": 1.0}],
            "c": []
        });
        assert_eq!(
            paths(&summary),
            [
                "a[0].x",
                "a[1].x",
                "b[0].label",
                "b[0].from_ms",
                "b[1].label",
                "b[1].from_ms",
                "c"
            ]
        );
    }
}
