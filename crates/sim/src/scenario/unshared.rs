//! A scenario copy whose `Arc`s are its own, for one run on one thread.
//!
//! Why: a run clones the scenario's shared strings (a deployment's id and group, a template's
//! model and contract) into every request and every event, and drops them again, millions of
//! times. When `sweep`, `check` or `explore` runs the same scenario on two worker threads,
//! those reference counts are the same memory on both cores, and the cache line moves
//! between them on every clone: measured on 2 cores, `sweep --jobs 2` took 2.8 s of CPU
//! where `--jobs 1` took 1.75 s for the same runs. A run that starts from its own copy shares
//! no count with any other run.

use std::collections::BTreeMap;
use std::sync::Arc;

use routersim_engine::contract::Contract;

use super::validated::Scenario;
use crate::traffic::{RequestTemplate, TrafficSpec};

impl Scenario {
    /// A clone in which every `Arc` the run clones per request is a fresh allocation (the
    /// same values: nothing a run writes can differ). Templates that named a contract share
    /// the copy's contract of that name, as they shared the original's.
    pub fn unshared(&self) -> Scenario {
        let mut copy = self.clone();
        for deployment in &mut copy.router.deployments {
            deployment.id = fresh_str(&deployment.id);
            deployment.model_name = fresh_str(&deployment.model_name);
        }
        copy.contracts = self
            .contracts
            .iter()
            .map(|(name, contract)| (name.clone(), fresh_contract(contract)))
            .collect();
        for entry in &mut copy.traffic {
            let template = match entry {
                TrafficSpec::Request(r) => &mut r.template,
                TrafficSpec::Stream(s) => &mut s.template,
            };
            unshare_template(template, &copy.contracts);
        }
        copy
    }
}

fn fresh_str(s: &Arc<str>) -> Arc<str> {
    Arc::from(&**s)
}

fn fresh_contract(contract: &Contract) -> Arc<Contract> {
    let mut own = contract.clone();
    own.name = fresh_str(&own.name);
    if let Some(structured) = own.structured_output.as_mut() {
        structured.schema_id = fresh_str(&structured.schema_id);
    }
    Arc::new(own)
}

fn unshare_template(template: &mut RequestTemplate, contracts: &BTreeMap<String, Arc<Contract>>) {
    template.model = fresh_str(&template.model);
    template.models = template.models.iter().map(fresh_str).collect();
    template.contract = template.contract.as_ref().map(|c| {
        contracts
            .get(&*c.name)
            .filter(|own| ***own == **c)
            .cloned()
            .unwrap_or_else(|| fresh_contract(c))
    });
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::Arc;

    use crate::scenario::parse_scenario;
    use crate::traffic::TrafficSpec;

    const YAML: &str = r#"
name: unshared
duration: 1m
router:
  model_list:
    - {model_name: gpt-4o, litellm_params: {model: openai/gpt-4o}, model_info: {id: a}}
  router_settings: {profile: contract}
providers:
  a: {latency: {p50: 10ms, p99: 20ms}}
contracts:
  - {name: chat, deadline_ms: 8000}
traffic:
  - {model: gpt-4o, rate: 1/s, workload: chat}
"#;

    #[test]
    fn the_copy_is_equal_and_shares_no_arc_with_the_original() {
        let scenario = parse_scenario(YAML, Path::new("unshared.yaml")).unwrap();
        let copy = scenario.unshared();
        let (d, c) = (&scenario.router.deployments[0], &copy.router.deployments[0]);
        assert_eq!((&*d.id, &*d.model_name), (&*c.id, &*c.model_name));
        assert!(!Arc::ptr_eq(&d.id, &c.id));
        assert!(!Arc::ptr_eq(&d.model_name, &c.model_name));
        let (TrafficSpec::Stream(t), TrafficSpec::Stream(u)) =
            (&scenario.traffic[0], &copy.traffic[0])
        else {
            panic!("a stream entry");
        };
        assert_eq!(t.template, u.template);
        assert!(!Arc::ptr_eq(&t.template.model, &u.template.model));
        let (tc, uc) = (
            t.template.contract.as_ref().unwrap(),
            u.template.contract.as_ref().unwrap(),
        );
        assert!(!Arc::ptr_eq(tc, uc));
        assert!(!Arc::ptr_eq(&tc.name, &uc.name));
        // The template and the copy's contract table share one contract, as before.
        assert!(Arc::ptr_eq(uc, &copy.contracts["chat"]));
        assert!(Arc::ptr_eq(tc, &scenario.contracts["chat"]));
    }
}
