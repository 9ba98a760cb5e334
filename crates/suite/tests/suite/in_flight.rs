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
fn the_limit_loads_and_one_more_is_refused_with_the_arithmetic() {
    let at_limit = format!("  - {{at: 0s, model: gpt, count: {MAX_IN_FLIGHT}}}\n");
    assert!(parse_scenario(&scenario(&at_limit), Path::new("t.yaml")).is_ok());
    let past = MAX_IN_FLIGHT + 1;
    let error = load_error(&format!("  - {{at: 0s, model: gpt, count: {past}}}\n"));
    // The message's arithmetic is the constants': the count, its memory at
    // BYTES_PER_IN_FLIGHT each, and the limit's.
    let gib = |n: u64| n as f64 * BYTES_PER_IN_FLIGHT as f64 / f64::from(1u32 << 30);
    let thousands = |n: u64| {
        let digits = n.to_string();
        let mut out = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i).is_multiple_of(3) {
                out.push(',');
            }
            out.push(c);
        }
        out
    };
    assert!(
        error.contains(&format!(
            "{} requests at 0s would be in flight at once, ~{:.1} GiB at {} KiB each; at most {} can be (~{:.1} GiB)",
            thousands(past),
            gib(past),
            BYTES_PER_IN_FLIGHT / 1024,
            thousands(MAX_IN_FLIGHT),
            gib(MAX_IN_FLIGHT)
        )),
        "{error}"
    );
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
