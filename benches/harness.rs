//! Criterion benchmarks of the harness: the full simulation (router, fake providers, recorder)
//! and the floor (arrivals that only sleep and record), on the `routersim bench` scenario
//! shortened to ten virtual minutes (30,000 requests). `routersim bench` prints the issue's
//! figures (requests per wall-second, ratio to the floor) for the full hour.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::too_many_lines,
    reason = "tests fail loudly and read as one story"
)]

use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use routersim_runtime::RuntimeKind;
use routersim_sim::run::{RunOptions, run};
use routersim_sim::scenario::parse_scenario;
use routersim_suite::bench::{BenchOptions, bench_scenario_yaml, run_floor};

fn harness(c: &mut Criterion) {
    let options = BenchOptions {
        duration: Duration::from_secs(600),
        ..BenchOptions::default()
    };
    let Ok(scenario) = parse_scenario(&bench_scenario_yaml(&options), Path::new("<bench>")) else {
        panic!("the bench scenario parses");
    };
    let out = std::env::temp_dir().join("routersim-criterion");
    let mut group = c.benchmark_group("ten_minutes_50rps");
    group.sample_size(10);
    group.throughput(Throughput::Elements(30_000));
    // The harness and the floor on each runtime: the virtual-time executor (the default) and
    // tokio's paused runtime.
    for runtime in [RuntimeKind::Virtual, RuntimeKind::Tokio] {
        let mut scenario = scenario.clone();
        scenario.runtime = runtime;
        let name = runtime.name();
        group.bench_function(format!("harness_traces_on/{name}"), |b| {
            b.iter(|| {
                let report = run(
                    &scenario,
                    &RunOptions {
                        out_dir: Some(out.clone()),
                        ..RunOptions::default()
                    },
                );
                black_box(report.map(|r| r.summary.requests).ok())
            })
        });
        group.bench_function(format!("floor/{name}"), |b| {
            b.iter(|| black_box(run_floor(&scenario, scenario.seed, runtime).ok()))
        });
    }
    group.finish();
}

criterion_group!(benches, harness);
criterion_main!(benches);
