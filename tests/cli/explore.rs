//! `routersim explore`: a shipped scenario passes every invariant over many seeds, and a
//! violation is shrunk to a scenario file that `routersim run` replays and that still breaks
//! the same invariant.

use crate::common::{repo, routersim, scratch_dir};
use routersim_suite::explore::faults::FaultMode;
use routersim_suite::explore::invariants::{Bounds, Invariant};
use routersim_suite::explore::shrink::shrink;
use routersim_suite::explore::{ExploreOptions, Explorer, Scratch};

#[test]
fn a_shipped_scenario_passes_every_invariant_over_fifty_seeds() {
    let output = routersim(&[
        "explore",
        "scenarios/ci/stream-cuts.yaml",
        "--seeds",
        "1..50",
        "--determinism-every",
        "25",
    ]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("50 seed(s)") && stdout.contains("determinism checked on 2: 0 violating"),
        "{stdout}"
    );
}

#[test]
fn explore_rejects_bad_input_with_exit_2() {
    let output = routersim(&[
        "explore",
        "scenarios/ci/stream-cuts.yaml",
        "--seeds",
        "9..1",
    ]);
    assert_eq!(output.status.code(), Some(2));
    let output = routersim(&["explore", "scenarios/no-such-file.yaml"]);
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn explore_draws_a_profile_per_seed_and_names_a_wrong_one() {
    let output = routersim(&[
        "explore",
        "scenarios/ci/stream-cuts.yaml",
        "--seeds",
        "1..10",
        "--profiles",
        "all",
        "--determinism-every",
        "0",
    ]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stderr.contains("profiles all"), "{stderr}");
    assert!(
        stdout.contains("10 seed(s)") && stdout.contains("0 violating"),
        "{stdout}"
    );
    let output = routersim(&[
        "explore",
        "scenarios/ci/stream-cuts.yaml",
        "--profiles",
        "litellm,nope",
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("unknown profile \"nope\""), "{stderr}");
}

/// A deliberately wrong bound: one attempt per request. Any retry breaks it.
fn one_attempt(bounds: &mut Bounds) {
    bounds.max_attempts = 1;
}

#[test]
fn a_violation_is_shrunk_to_a_file_that_run_replays_and_that_still_violates()
-> Result<(), Box<dyn std::error::Error>> {
    let scenario = repo().join("scenarios/ci/rate-limit-storm.yaml");
    let explorer = Explorer::prepare(
        &scenario,
        ExploreOptions {
            seeds: (1..=3).collect(),
            workers: 2,
            determinism_every: 0,
            bounds_hook: Some(one_attempt),
            ..ExploreOptions::default()
        },
    )?;
    let results = explorer.run_seeds(&|_| {});
    let first = results
        .iter()
        .find(|r| r.violation.is_some())
        .expect("a wrong bound is broken");
    let (violation, _) = first.violation.clone().expect("a violation");
    assert_eq!(violation.invariant, Invariant::AttemptBound);

    let scratch = Scratch::new(99);
    let shrunk = shrink(
        &explorer,
        explorer.variant(first.seed),
        first.seed,
        violation.clone(),
        200,
        &scratch,
    );
    assert_eq!(shrunk.violation.invariant, Invariant::AttemptBound);
    assert!(shrunk.after.arrivals < shrunk.before.arrivals, "{shrunk:?}");
    assert!(shrunk.after.duration <= shrunk.before.duration);
    assert!(shrunk.after.fault_windows <= shrunk.before.fault_windows);

    let out = scratch_dir("explore-shrunk");
    let file = explorer.write_scenario(&out, &shrunk.tree, first.seed, &shrunk.violation)?;
    let text = std::fs::read_to_string(&file)?;
    assert!(text.contains(&format!("seed: {}", first.seed)), "{text}");

    // `routersim run` loads and replays it (its expect lines are gone: exit 0).
    let report = out.join("report");
    let output = routersim(&[
        "run",
        &file.to_string_lossy(),
        "--out",
        &report.to_string_lossy(),
    ]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(report.join("summary.json").is_file());

    // Re-explored with no extra faults, the same seed breaks the same invariant.
    let again = Explorer::prepare(
        &file,
        ExploreOptions {
            seeds: vec![first.seed],
            faults: FaultMode::None,
            determinism_every: 0,
            bounds_hook: Some(one_attempt),
            ..ExploreOptions::default()
        },
    )?;
    let rerun = again.run_seeds(&|_| {});
    assert_eq!(
        rerun[0].violation.as_ref().map(|(v, _)| v.invariant),
        Some(Invariant::AttemptBound)
    );
    Ok(())
}

#[test]
fn a_written_scenario_finds_its_router_file_from_anywhere() -> Result<(), Box<dyn std::error::Error>>
{
    let scenario = repo().join("scenarios/proxy-config-429-storm.yaml");
    let explorer = Explorer::prepare(&scenario, ExploreOptions::default())?;
    let violation = routersim_suite::explore::invariants::Violation {
        invariant: Invariant::AttemptBound,
        request_id: Some(1),
        at_ms: Some(1.0),
        detail: "written by a test".into(),
    };
    let out = scratch_dir("explore-router-file");
    let file = explorer.write_scenario(&out, &explorer.variant(4), 4, &violation)?;
    let text = std::fs::read_to_string(&file)?;
    let router_file = repo().join("scenarios/configs/proxy_config.yaml");
    assert!(
        text.contains(
            &std::path::absolute(&router_file)?
                .to_string_lossy()
                .into_owned()
        ),
        "{text}"
    );
    // Run from the scratch directory, far from the scenario's folder.
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_routersim"))
        .args([
            "run",
            &file.to_string_lossy(),
            "--out",
            "report",
            "--trace",
            "none",
        ])
        .current_dir(&out)
        .output()?;
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    Ok(())
}
