//! `routersim diff` checks each report's rates against its own `requests.csv`: one definition
//! of every rate for live and simulated reports (the share of requests with at least one
//! retry / fallback hop; the sums), so a report that states one two ways is named.

use crate::common::{routersim, scratch_dir};

#[test]
fn diff_names_a_rate_a_report_computes_two_ways() {
    let dir = scratch_dir("diff-rates");
    let (a, b) = (dir.join("a"), dir.join("b"));
    for out in [&a, &b] {
        let o = routersim(&[
            "run",
            "scenarios/live/429-storm.yaml",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let diff = |json: bool| {
        let mut args = vec!["diff", a.to_str().unwrap(), b.to_str().unwrap()];
        if json {
            args.push("--json");
        }
        let o = routersim(&args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).to_string()
    };
    // Simulated reports agree with themselves.
    assert!(!diff(false).contains("computed two ways"));
    assert!(!diff(true).contains("rates_computed_two_ways"));
    // B's summary as a live report once wrote it: the rate from the router's header (5 requests
    // with a retry), the count from the retry events (55).
    let path = b.join("summary.json");
    let mut s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let retries = s["retries"].as_u64().unwrap();
    let requests = s["requests"].as_u64().unwrap();
    assert!(retries > 5, "{s:#}");
    s["retry_rate"] = serde_json::json!(5.0 / requests as f64);
    std::fs::write(&path, serde_json::to_string_pretty(&s).unwrap()).unwrap();
    let text = diff(false);
    assert!(
        text.contains(&format!(
            "note: B's summary.json says retry_rate {}, its requests.csv",
            5.0 / requests as f64
        )),
        "{text}"
    );
    let json: serde_json::Value = serde_json::from_str(&diff(true)).unwrap();
    let two_ways = json["rates_computed_two_ways"].as_array().unwrap();
    assert_eq!(two_ways.len(), 1, "{json:#}");
    assert_eq!(two_ways[0]["metric"], "retry_rate");
}
