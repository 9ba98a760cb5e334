//! `stages:`: a stream whose rate ramps linearly (k6's ramping arrival rate). Arrival counts
//! per stage follow the ramp's integral; bad stages are refused by their YAML path.

use std::path::Path;
use std::time::Duration;

use routersim_sim::scenario::parse_scenario;
use routersim_sim::traffic::{Arrivals, TrafficSpec};

fn scenario(traffic: &str) -> String {
    format!(
        "name: ramp\nduration: 2m\nrouter:\n  model_list:\n    - model_name: gpt\n      \
         litellm_params: {{model: openai/gpt}}\n      model_info: {{id: gpt-a}}\ntraffic:\n{traffic}"
    )
}

/// Arrivals per stage, the stages' bounds given from the start of the run.
fn counts(text: &str, seed: u64, bounds: &[u64]) -> Vec<u64> {
    let s = parse_scenario(text, Path::new("ramp.yaml")).expect("valid");
    let mut counts = vec![0; bounds.len() - 1];
    for a in Arrivals::new(&s.traffic, seed) {
        let i = bounds
            .windows(2)
            .position(|w| Duration::from_secs(w[0]) <= a.at && a.at < Duration::from_secs(w[1]))
            .unwrap_or_else(|| panic!("an arrival at {:?} outside the stages", a.at));
        counts[i] += 1;
    }
    counts
}

/// Up 0 → 50/s over 10 s (area 250), hold 50/s for 20 s (1000), down to 0 over 10 s (250).
const RAMP: &str = "  - model: gpt\n    from: 5s\n    stages:\n      - {duration: 10s, target: 50}\n      \
                    - {duration: 20s, target: 50/s}\n      - {duration: 10s, target: 0}\n";
const BOUNDS: [u64; 4] = [5, 15, 35, 45];
const AREAS: [f64; 3] = [250.0, 1000.0, 250.0];

#[test]
fn poisson_arrivals_per_stage_follow_the_ramps_integral() {
    let text = scenario(RAMP);
    // Time rescaling makes each stage's count Poisson with the stage's area as its mean: a
    // count within 4 standard deviations (√area) holds with probability 1 − 6e-5 per stage.
    for seed in [1, 2, 3] {
        let got = counts(&text, seed, &BOUNDS);
        for (n, area) in got.iter().zip(AREAS) {
            assert!(
                (*n as f64 - area).abs() <= 4.0 * area.sqrt(),
                "seed {seed}: {got:?} vs {AREAS:?}"
            );
        }
        assert_eq!(got, counts(&text, seed, &BOUNDS), "deterministic per seed");
    }
    // The ramp shows within the stage: the first half of the up-ramp holds a quarter of it.
    let s = parse_scenario(&text, Path::new("ramp.yaml")).unwrap();
    let early = Arrivals::new(&s.traffic, 1)
        .filter(|a| a.at < Duration::from_secs(10))
        .count() as f64;
    assert!((early - 62.5).abs() <= 4.0 * 62.5_f64.sqrt(), "{early}");
    let TrafficSpec::Stream(stream) = &s.traffic[0] else {
        panic!("a stream")
    };
    assert_eq!(
        (stream.from, stream.to),
        (Duration::from_secs(5), Duration::from_secs(45))
    );
    assert_eq!(s.traffic[0].expected_count(), 1500.0);
}

#[test]
fn uniform_arrivals_per_stage_are_the_integral_to_one_request() {
    let text = scenario(&format!("{RAMP}    arrival: uniform\n"));
    // The k-th arrival is where the integral reaches k: per stage, the integral's difference,
    // give or take the one arrival that lands on a stage's bound.
    let got = counts(&text, 1, &BOUNDS);
    for (n, area) in got.iter().zip(AREAS) {
        assert!((*n as f64 - area).abs() <= 1.0, "{got:?} vs {AREAS:?}");
    }
    assert_eq!(
        got.iter().sum::<u64>(),
        1499,
        "k = 1..1499: the 1500th is at the end"
    );
}

#[test]
fn a_ramp_starts_from_the_entrys_rate() {
    // 10/s → 30/s over 20 s: area (10 + 30) / 2 × 20 = 400.
    let text = scenario(
        "  - model: gpt\n    rate: 10/s\n    arrival: uniform\n    stages: [{duration: 20s, target: 30}]\n",
    );
    let got = counts(&text, 1, &[0, 10, 20]);
    // First half: 10 → 20/s, area 150; second: 20 → 30/s, area 250.
    assert!(
        (got[0] as f64 - 150.0).abs() <= 1.0 && (got[1] as f64 - 250.0).abs() <= 1.0,
        "{got:?}"
    );
}

#[test]
fn bad_stages_are_refused_by_their_yaml_path() {
    for (traffic, path, says) in [
        (
            "  - {model: gpt, stages: [{duration: 10s, target: 5}, {duration: 10s, target: -1}]}\n",
            "traffic[0].stages[1].target",
            "0 or above",
        ),
        (
            "  - {model: gpt, stages: [{duration: 0s, target: 5}]}\n",
            "traffic[0].stages[0].duration",
            "longer than 0",
        ),
        (
            "  - {model: gpt, to: 30s, stages: [{duration: 10s, target: 5}]}\n",
            "traffic[0].to",
            "conflicts with `stages`",
        ),
        (
            "  - {model: gpt, at: 1s, stages: [{duration: 10s, target: 5}]}\n",
            "traffic[0].stages",
            "explicit request",
        ),
        (
            "  - {model: gpt, from: 1m, stages: [{duration: 90s, target: 5}]}\n",
            "traffic[0].stages",
            "after the scenario's duration",
        ),
        (
            "  - {model: gpt, stages: []}\n",
            "traffic[0].stages",
            "at least one stage",
        ),
        (
            "  - {model: gpt, stages: [{duration: 10s, target: 0}]}\n",
            "traffic[0].stages",
            "send nothing",
        ),
    ] {
        let e = parse_scenario(&scenario(traffic), Path::new("ramp.yaml")).expect_err(path);
        assert_eq!(e.path, path, "{e}");
        assert_eq!(e.line, Some(9), "{e}");
        assert!(e.to_string().contains(says), "{e}");
    }
}
