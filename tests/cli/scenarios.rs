//! Every shipped scenario (recursively under `scenarios/`) runs and its `expect` lines hold.

use crate::common::{repo, scratch_dir};
use routersim_sim::run::{RunOptions, run_file};
use routersim_suite::discover::discover_scenarios;

#[test]
fn every_shipped_scenario_meets_its_expectations() -> Result<(), Box<dyn std::error::Error>> {
    let root = repo().join("scenarios");
    let scenarios = discover_scenarios(&root)?;
    assert!(
        scenarios.len() >= 5,
        "the issue asks for at least five scenarios"
    );
    assert!(
        !scenarios
            .iter()
            .any(|p| p.ends_with("configs/proxy_config.yaml")),
        "router configs are not scenarios"
    );
    let out = scratch_dir("shipped");
    let mut failures = Vec::new();
    for path in &scenarios {
        let name = path
            .strip_prefix(&root)
            .unwrap_or(path)
            .with_extension("")
            .to_string_lossy()
            .replace('/', "_");
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
