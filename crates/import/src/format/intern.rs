//! One shared `Arc<str>` per distinct name (model groups, deployments, tags): a log repeats a
//! handful of names millions of times.

use std::collections::HashMap;
use std::sync::Arc;

/// The names seen so far.
#[derive(Debug, Default)]
pub struct Interner {
    names: HashMap<Box<str>, Arc<str>>,
}

impl Interner {
    /// The shared copy of `name`.
    pub fn get(&mut self, name: &str) -> Arc<str> {
        if let Some(shared) = self.names.get(name) {
            return shared.clone();
        }
        let shared: Arc<str> = Arc::from(name);
        self.names.insert(Box::from(name), shared.clone());
        shared
    }
}
