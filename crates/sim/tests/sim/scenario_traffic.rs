//! Arrivals: lazy, time-ordered, deterministic per seed.

use std::path::Path;
use std::time::Duration;

use routersim_engine::request::ResponseFormat;
use routersim_sim::scenario::parse_scenario;
use routersim_sim::traffic::{
    Arrival, ArrivalProcess, Arrivals, ExplicitRequest, RequestTemplate, TokenRange, TrafficSpec,
    TrafficStream,
};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn template(model: &str) -> RequestTemplate {
    RequestTemplate::new(model)
}

fn stream(rate: f64, from: Duration, to: Duration, arrival: ArrivalProcess) -> TrafficSpec {
    TrafficSpec::Stream(TrafficStream {
        rate_per_sec: rate,
        from,
        to,
        arrival,
        input_tokens: TokenRange::fixed(500),
        stream: 0.0,
        output_tokens: None,
        template: template("m"),
        ramp: None,
    })
}

fn times(arrivals: impl Iterator<Item = Arrival>) -> Vec<Duration> {
    arrivals.map(|a| a.at).collect()
}

#[test]
fn a_seed_fixes_the_arrivals_and_another_seed_changes_them() {
    let traffic = [stream(
        20.0,
        Duration::ZERO,
        ms(60_000),
        ArrivalProcess::Poisson,
    )];
    let a = times(Arrivals::new(&traffic, 1));
    assert_eq!(a, times(Arrivals::new(&traffic, 1)));
    assert_ne!(a, times(Arrivals::new(&traffic, 2)));
    assert!(a.windows(2).all(|w| w[0] <= w[1]));
    assert!(a.iter().all(|&t| t < ms(60_000)));
}

#[test]
fn poisson_count_over_ten_minutes_is_within_five_percent() {
    let traffic = [stream(
        20.0,
        Duration::ZERO,
        ms(600_000),
        ArrivalProcess::Poisson,
    )];
    assert_eq!(Arrivals::expected_count(&traffic), 12_000.0);
    for seed in [1, 2, 3] {
        let n = Arrivals::new(&traffic, seed).count() as f64;
        assert!((n / 12_000.0 - 1.0).abs() < 0.05, "seed {seed}: {n}");
    }
}

#[test]
fn uniform_spacing_is_exact() {
    let traffic = [stream(20.0, ms(1000), ms(2000), ArrivalProcess::Uniform)];
    let expected: Vec<Duration> = (0..20).map(|k| ms(1000 + 50 * k)).collect();
    assert_eq!(times(Arrivals::new(&traffic, 9)), expected);
    assert_eq!(Arrivals::expected_count(&traffic), 20.0);

    // A rate that does not divide a second: 3/s over 1 s is 0, 333.333333ms, 666.666667ms.
    let thirds = [stream(
        3.0,
        Duration::ZERO,
        ms(1000),
        ArrivalProcess::Uniform,
    )];
    assert_eq!(
        times(Arrivals::new(&thirds, 9)),
        vec![
            Duration::ZERO,
            Duration::from_nanos(333_333_333),
            Duration::from_nanos(666_666_667)
        ]
    );
}

#[test]
fn explicit_and_generated_traffic_merge_in_time_order_with_ids_in_arrival_order() {
    let text = "\
duration: 10s
router:
  model_list:
    - {model_name: a, litellm_params: {model: openai/a}}
    - {model_name: b, litellm_params: {model: openai/b}}
traffic:
  - {at: 2s, model: b, count: 2, input_tokens: 9000}
  - {model: a, rate: 1/s, arrival: uniform, from: 1s, to: 4s}
  - {at: 1s, model: b}
  - {at: 0.5s, model: a, max_tokens: 7}
";
    let scenario = parse_scenario(text, Path::new("merge.yaml")).expect("valid");
    let seen: Vec<(u64, Duration, String, u32)> = scenario
        .arrivals()
        .map(|a| {
            (
                a.request.id,
                a.at,
                a.request.model.to_string(),
                a.request.input_tokens,
            )
        })
        .collect();
    let row = |id, at, model: &str, tokens| (id, ms(at), model.to_string(), tokens);
    assert_eq!(
        seen,
        vec![
            row(0, 500, "a", 500),
            // At 1 s the stream (traffic[1]) comes before the explicit request (traffic[2]).
            row(1, 1000, "a", 500),
            row(2, 1000, "b", 500),
            // At 2 s the explicit request (traffic[0], twice) comes before the stream.
            row(3, 2000, "b", 9000),
            row(4, 2000, "b", 9000),
            row(5, 2000, "a", 500),
            row(6, 3000, "a", 500),
        ]
    );
    let first = scenario.arrivals().next().expect("one");
    assert_eq!(first.request.max_tokens, Some(7));
}

#[test]
fn explicit_requests_carry_every_field() {
    let text = "\
duration: 10s
router:
  model_list:
    - {model_name: a, litellm_params: {model: openai/a}}
traffic:
  - at: 1s
    model: a
    num_retries: 0
    fallbacks: [a, {model: a, temperature: 0}]
    disable_fallbacks: true
    metadata: {tags: [eu, batch]}
";
    let scenario = parse_scenario(text, Path::new("fields.yaml")).expect("valid");
    let request = scenario.arrivals().next().expect("one").request;
    assert_eq!(request.num_retries, Some(0));
    assert!(request.disable_fallbacks);
    assert_eq!(request.tags, ["eu", "batch"]);
    let fallbacks = request.fallbacks.expect("set");
    assert_eq!(fallbacks.len(), 2);
    assert_eq!(
        fallbacks[1].overrides.get("temperature"),
        Some(&serde_json::json!(0))
    );
}

#[test]
fn token_ranges_are_drawn_inclusively_without_moving_arrivals() {
    let ranged = [TrafficSpec::Stream(TrafficStream {
        input_tokens: TokenRange { min: 500, max: 510 },
        ..match stream(50.0, Duration::ZERO, ms(60_000), ArrivalProcess::Poisson) {
            TrafficSpec::Stream(s) => s,
            TrafficSpec::Request(_) => unreachable!(),
        }
    })];
    let fixed = [stream(
        50.0,
        Duration::ZERO,
        ms(60_000),
        ArrivalProcess::Poisson,
    )];
    let tokens: Vec<u32> = Arrivals::new(&ranged, 4)
        .map(|a| a.request.input_tokens)
        .collect();
    assert!(tokens.iter().all(|t| (500..=510).contains(t)));
    assert!(tokens.contains(&500) && tokens.contains(&510));
    assert_eq!(
        times(Arrivals::new(&ranged, 4)),
        times(Arrivals::new(&fixed, 4))
    );
}

#[test]
fn an_hour_at_fifty_per_second_streams_lazily() {
    let traffic = [
        stream(50.0, Duration::ZERO, ms(3_600_000), ArrivalProcess::Poisson),
        TrafficSpec::Request(ExplicitRequest {
            at: ms(1_800_000),
            count: 1,
            input_tokens: 1,
            stream: false,
            output_tokens: None,
            template: template("m"),
        }),
    ];
    let mut n = 0u64;
    let mut last = Duration::ZERO;
    for arrival in Arrivals::new(&traffic, 11) {
        assert_eq!(arrival.request.id, n);
        assert!(arrival.at >= last);
        last = arrival.at;
        n += 1;
    }
    assert!((n as f64 / 180_001.0 - 1.0).abs() < 0.02, "{n}");
}

fn scenario_traffic(traffic: &str) -> routersim_sim::scenario::Scenario {
    let text = format!(
        "duration: 10m\nrouter:\n  model_list:\n    - {{model_name: a, litellm_params: {{model: openai/a}}}}\ntraffic:\n{traffic}"
    );
    parse_scenario(&text, Path::new("streams.yaml")).expect("valid")
}

/// (time, input tokens, streamed, output tokens) of every arrival.
fn shapes(
    scenario: &routersim_sim::scenario::Scenario,
    seed: u64,
) -> Vec<(Duration, u32, bool, Option<u32>)> {
    Arrivals::new(&scenario.traffic, seed)
        .map(|a| {
            (
                a.at,
                a.request.input_tokens,
                a.request.stream,
                a.request.output_tokens,
            )
        })
        .collect()
}

#[test]
fn a_stream_share_streams_that_share_of_requests_deterministically() {
    let shared =
        scenario_traffic("  - {model: a, rate: 20/s, input_tokens: 10..20, stream: 0.3}\n");
    let plain = scenario_traffic("  - {model: a, rate: 20/s, input_tokens: 10..20}\n");
    let a = shapes(&shared, 5);
    let streamed = a.iter().filter(|s| s.2).count() as f64 / a.len() as f64;
    assert!(a.len() > 11_000, "{}", a.len());
    assert!((streamed - 0.3).abs() < 0.02, "{streamed}");
    // Deterministic per seed, different across seeds.
    assert_eq!(shapes(&shared, 5), a);
    let other: Vec<bool> = shapes(&shared, 6).iter().map(|s| s.2).collect();
    assert_ne!(
        other[..500],
        a.iter().map(|s| s.2).collect::<Vec<_>>()[..500]
    );
    // The share draws from its own stream: arrivals and prompt sizes are unchanged.
    let strip = |v: Vec<(Duration, u32, bool, Option<u32>)>| -> Vec<(Duration, u32)> {
        v.into_iter().map(|(t, n, _, _)| (t, n)).collect()
    };
    assert_eq!(strip(a.clone()), strip(shapes(&plain, 5)));
    assert!(shapes(&plain, 5).iter().all(|s| !s.2));

    let all = scenario_traffic("  - {model: a, rate: 20/s, stream: true}\n");
    assert!(shapes(&all, 5).iter().all(|s| s.2));
    let none = scenario_traffic("  - {model: a, rate: 20/s, stream: 0}\n");
    assert!(shapes(&none, 5).iter().all(|s| !s.2));
}

#[test]
fn output_tokens_ranges_are_drawn_inclusively_without_moving_other_draws() {
    let ranged = scenario_traffic(
        "  - {model: a, rate: 20/s, input_tokens: 10..20, stream: 0.5, output_tokens: 100..110}\n",
    );
    let plain = scenario_traffic("  - {model: a, rate: 20/s, input_tokens: 10..20, stream: 0.5}\n");
    let fixed = scenario_traffic("  - {model: a, rate: 20/s, output_tokens: 64}\n");
    let drawn = shapes(&ranged, 3);
    let outputs: Vec<u32> = drawn.iter().map(|s| s.3.expect("set")).collect();
    assert!(outputs.iter().all(|n| (100..=110).contains(n)));
    assert!(outputs.contains(&100) && outputs.contains(&110));
    let strip = |v: Vec<(Duration, u32, bool, Option<u32>)>| -> Vec<(Duration, u32, bool)> {
        v.into_iter().map(|(t, n, s, _)| (t, n, s)).collect()
    };
    assert_eq!(strip(drawn), strip(shapes(&plain, 3)));
    assert!(shapes(&plain, 3).iter().all(|s| s.3.is_none()));
    assert!(shapes(&fixed, 3).iter().all(|s| s.3 == Some(64)));
}

#[test]
fn explicit_requests_carry_the_stream_keys() {
    let s = scenario_traffic(
        "  - {at: 1s, model: a, count: 2, stream: true, output_tokens: 300, response_format: json, tools: true}\n  - {at: 2s, model: a}\n",
    );
    let requests: Vec<_> = s.arrivals().map(|a| a.request).collect();
    assert_eq!(requests.len(), 3);
    for r in &requests[..2] {
        assert!(r.stream && r.tools);
        assert_eq!(r.output_tokens, Some(300));
        assert_eq!(r.response_format, ResponseFormat::Json);
    }
    let last = &requests[2];
    assert!(!last.stream && !last.tools);
    assert_eq!(last.output_tokens, None);
    assert_eq!(last.response_format, ResponseFormat::Text);
}
