//! [`validate_targets`]: do a scenario's `providers` and `faults` sections fit its router
//! config?
//!
//! Separate because it runs before any fake exists: the scenario loader calls it to report a
//! mistyped deployment id or model group with its YAML path, and
//! [`FakeProviders::new`](super::FakeProviders::new) calls it again, so no fake is built
//! against a config it does not fit.

use std::collections::BTreeMap;

use routersim_engine::config::Deployment;

use crate::spec::{FaultSpec, FaultTarget, ProviderSpec};

/// A provider section that does not fit the router config. `path` is from the scenario root
/// (`providers.gpt-x`, `faults[2].deployment`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct SpecError {
    /// YAML path from the scenario root.
    pub path: String,
    /// What was expected.
    pub message: String,
}

/// Checks that every `providers` key is a deployment id and every fault targets a known
/// deployment or model group.
pub fn validate_targets(
    deployments: &[Deployment],
    specs: &BTreeMap<String, ProviderSpec>,
    faults: &[FaultSpec],
) -> Result<(), SpecError> {
    let list = |names: Vec<&str>| {
        let mut names: Vec<&str> = names;
        names.sort_unstable();
        names.dedup();
        names.join(", ")
    };
    let ids = || deployments.iter().map(|d| &*d.id).collect::<Vec<_>>();
    for id in specs.keys() {
        if !deployments.iter().any(|d| *d.id == **id) {
            return Err(SpecError {
                path: format!("providers.{id}"),
                message: format!(
                    "no deployment has id {id:?}; deployment ids: {}",
                    list(ids())
                ),
            });
        }
    }
    for (i, fault) in faults.iter().enumerate() {
        match &fault.target {
            FaultTarget::Deployment(id) if !deployments.iter().any(|d| *d.id == **id) => {
                return Err(SpecError {
                    path: format!("faults[{i}].deployment"),
                    message: format!(
                        "no deployment has id {id:?}; deployment ids: {}",
                        list(ids())
                    ),
                });
            }
            FaultTarget::ModelGroup(group)
                if !deployments.iter().any(|d| *d.model_name == **group) =>
            {
                return Err(SpecError {
                    path: format!("faults[{i}].model_group"),
                    message: format!(
                        "no model group {group:?}; model groups: {}",
                        list(deployments.iter().map(|d| &*d.model_name).collect())
                    ),
                });
            }
            _ => {}
        }
    }
    Ok(())
}
