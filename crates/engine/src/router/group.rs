//! Model groups: a config's deployments grouped by `model_name`, each group sorted by
//! `order` (unordered last) and split into its order levels, once, when the router is built.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::config::RouterConfig;

/// A model group: its deployments sorted by `order` (unordered last), split into levels.
#[derive(Debug)]
pub(super) struct Group {
    pub(super) name: Arc<str>,
    /// Deployment indices sorted by (order, index).
    pub(super) members: Vec<usize>,
    /// `(order, start, end)` ranges of `members`, lowest order first.
    pub(super) levels: Vec<(Option<u32>, usize, usize)>,
}

impl Group {
    pub(super) fn level_members(&self, level: usize) -> &[usize] {
        let (_, start, end) = self.levels[level];
        &self.members[start..end]
    }
}

/// The groups of a config, in the order their names first appear.
pub(super) fn groups_of(config: &RouterConfig) -> Vec<Group> {
    let mut by_name: BTreeMap<Arc<str>, Vec<usize>> = BTreeMap::new();
    let mut names_in_order: Vec<Arc<str>> = Vec::new();
    for (i, d) in config.deployments.iter().enumerate() {
        let entry = by_name.entry(d.model_name.clone()).or_default();
        if entry.is_empty() {
            names_in_order.push(d.model_name.clone());
        }
        entry.push(i);
    }
    names_in_order
        .into_iter()
        .map(|name| {
            let mut members = by_name.remove(&name).unwrap_or_default();
            members.sort_by_key(|&i| (config.deployments[i].order.unwrap_or(u32::MAX), i));
            let mut levels = Vec::new();
            let mut start = 0;
            for pos in 1..=members.len() {
                let order_at = |p: usize| config.deployments[members[p]].order;
                if pos == members.len() || order_at(pos) != order_at(start) {
                    levels.push((order_at(start), start, pos));
                    start = pos;
                }
            }
            Group {
                name,
                members,
                levels,
            }
        })
        .collect()
}
