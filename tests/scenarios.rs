//! Every shipped scenario runs and its `expect` lines hold.

mod common;

use common::{repo, scenarios_in, scratch_dir};
use routersim_sim::run::{RunOptions, run_file};

#[test]
fn every_shipped_scenario_meets_its_expectations() -> Result<(), Box<dyn std::error::Error>> {
    let scenarios = scenarios_in(&repo().join("scenarios"));
    assert!(
        scenarios.len() >= 5,
        "the issue asks for at least five scenarios"
    );
    let out = scratch_dir("shipped");
    let mut failures = Vec::new();
    for path in &scenarios {
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let report = run_file(
            path,
            &RunOptions {
                out_dir: Some(out.join(&name)),
                ..RunOptions::default()
            },
        )?;
        assert!(
            !report.expectations.is_empty(),
            "{name} has no expect lines"
        );
        assert!(report.summary.requests > 0, "{name} served no requests");
        for failed in report.failures() {
            failures.push(format!("{name}: {failed}"));
        }
    }
    assert!(
        failures.is_empty(),
        "failed expectations:\n{}",
        failures.join("\n")
    );
    Ok(())
}
