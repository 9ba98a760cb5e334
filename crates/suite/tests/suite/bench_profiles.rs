//! `routersim bench --profile all`: every profile's harness against the tokio floor, traces on
//! and off, in one run.

use std::time::Duration;

use routersim_suite::bench::{BenchOptions, every_profile, run_bench_profiles};

/// The profiles timed are none (the documented rules) and every profile of the engine's
/// table, in its order: the seven.
#[test]
fn bench_all_times_no_profile_and_every_profile() {
    let names: Vec<&str> = every_profile()
        .iter()
        .map(|p| p.unwrap_or("none"))
        .collect();
    assert_eq!(
        names,
        [
            "none",
            "litellm",
            "deltallm",
            "litellm-1.110",
            "multigrid",
            "contract",
            "portkey"
        ]
    );
}

/// One row per profile, each from runs that simulated the traffic (the same arrivals under
/// every profile: the profile changes the router, not the traffic), with its three medians.
#[test]
fn bench_all_reports_a_row_per_profile_with_both_ratios() {
    let dir = std::env::temp_dir().join(format!("routersim-bench-all-{}", std::process::id()));
    let options = BenchOptions {
        duration: Duration::from_secs(20),
        rate: 10.0,
        repeat: 3,
        out_dir: dir.clone(),
        ..BenchOptions::default()
    };
    let rows = run_bench_profiles(&options).unwrap();
    let names: Vec<&str> = rows.iter().map(|r| r.profile.as_str()).collect();
    let expected: Vec<&str> = every_profile()
        .iter()
        .map(|p| p.unwrap_or("none"))
        .collect();
    assert_eq!(names, expected);
    // 20 s of Poisson arrivals at 10/s: about 200, the same count under every profile.
    let requests = rows[0].requests;
    assert!((100..=300).contains(&requests), "{requests}");
    for r in &rows {
        assert_eq!(r.requests, requests, "{r:?}");
        for secs in [r.traced_secs, r.untraced_secs, r.tokio_floor_secs] {
            assert!(secs > 0.0 && secs.is_finite(), "{r:?}");
        }
        assert!((r.traced_ratio() - r.tokio_floor_secs / r.traced_secs).abs() < 1e-12);
        assert!((r.untraced_ratio() - r.tokio_floor_secs / r.untraced_secs).abs() < 1e-12);
    }
    // The runs wrote their report where they were told.
    assert!(dir.join("summary.json").is_file());
    let _ = std::fs::remove_dir_all(&dir);
}
