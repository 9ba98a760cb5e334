//! Requests that cannot all be held in flight are refused before anything runs, with the
//! arithmetic: explicit requests arriving at one instant are all in flight at once.

use std::path::Path;

use routersim_sim::scenario::parse_scenario;
use routersim_sim::traffic::{BYTES_PER_IN_FLIGHT, MAX_IN_FLIGHT};

/// One deployment and `traffic` (entries start on line 7).
fn scenario(traffic: &str) -> String {
    format!(
        "name: t\nduration: 1m\nrouter:\n  model_list:\n    - {{model_name: gpt, litellm_params: {{model: openai/gpt}}, model_info: {{id: d1}}}}\ntraffic:\n{traffic}"
    )
}

fn load_error(traffic: &str) -> String {
    parse_scenario(&scenario(traffic), Path::new("t.yaml"))
        .expect_err("should be refused")
        .to_string()
}

#[test]
fn the_limit_is_two_million_at_two_kib_each() {
    assert_eq!(MAX_IN_FLIGHT, 2_000_000);
    assert_eq!(BYTES_PER_IN_FLIGHT, 2048);
}

#[test]
fn a_count_past_the_limit_is_refused_with_the_arithmetic() {
    assert_eq!(
        load_error("  - {at: 0s, model: gpt, count: 4294967295}\n"),
        "t.yaml:7:33: traffic[0].count: 4,294,967,295 requests at 0s would be in flight at \
         once, ~8.0 TiB at 2 KiB each; at most 2,000,000 can be (~3.8 GiB)"
    );
}

#[test]
fn entries_at_the_same_instant_add_up() {
    let e = load_error(
        "  - {at: 1s, model: gpt, count: 1500000}\n  - {at: 2s, model: gpt, count: 1500000}\n  - {at: 1s, model: gpt, count: 600000}\n",
    );
    assert_eq!(
        e,
        "t.yaml:9:33: traffic[2].count: 2,100,000 requests at 1s (600,000 here, 1,500,000 from \
         other entries) would be in flight at once, ~4.0 GiB at 2 KiB each; at most 2,000,000 \
         can be (~3.8 GiB)"
    );
}

#[test]
fn the_limit_itself_loads() {
    let text = scenario(
        "  - {at: 1s, model: gpt, count: 1000000}\n  - {at: 1s, model: gpt, count: 1000000}\n  - {at: 2s, model: gpt, count: 2000000}\n",
    );
    assert!(parse_scenario(&text, Path::new("t.yaml")).is_ok());
}
