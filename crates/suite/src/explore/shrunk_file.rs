//! Writing a shrunk scenario as a file: named after the scenario, the seed and the invariant,
//! with a header saying where it came from, what it breaks and how to replay it, and paths made
//! absolute so it works from anywhere.
//!
//! Separate from the explorer because it only writes what a shrink found.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::error::{ExploreError, file_error};
use super::explorer::Explorer;
use super::invariants::Violation;
use super::tree::to_yaml;
use routersim_sim::scenario::RouterSource;

impl Explorer {
    /// Writes a shrunk scenario file into `out` (created) and returns its path.
    pub fn write_scenario(
        &self,
        out: &Path,
        tree: &Value,
        seed: u64,
        violation: &Violation,
    ) -> Result<PathBuf, ExploreError> {
        std::fs::create_dir_all(out).map_err(|e| file_error(out, e))?;
        let file = out.join(format!(
            "{}-seed-{seed}-{}.yaml",
            safe_name(&self.scenario().name),
            violation.invariant
        ));
        let mut tree = tree.clone();
        self.absolutize(&mut tree);
        if let Some(root) = tree.as_object_mut() {
            root.insert(
                "name".into(),
                Value::from(format!(
                    "{}-explore-seed-{seed}",
                    safe_name(&self.scenario().name)
                )),
            );
        }
        let mut text = String::new();
        text.push_str(&format!(
            "# Shrunk by `routersim explore` from {}, seed {seed}.\n",
            self.path().display()
        ));
        for line in violation.to_string().lines() {
            text.push_str(&format!("# {line}\n"));
        }
        text.push_str(&format!(
            "# Replay it:        routersim run {}\n# Check it again:   routersim explore {} \
             --seeds {seed} --faults none\n",
            file.display(),
            file.display()
        ));
        text.push_str(&to_yaml(&tree));
        std::fs::write(&file, text).map_err(|e| file_error(&file, e))?;
        Ok(file)
    }

    /// Paths in the tree relative to the scenario's folder, made absolute so the file works
    /// from anywhere.
    fn absolutize(&self, tree: &mut Value) {
        let Some(root) = tree.as_object_mut() else {
            return;
        };
        if let RouterSource::File(path) = &self.scenario().router_source
            && root.contains_key("router_file")
        {
            let absolute = std::path::absolute(path).unwrap_or_else(|_| path.clone());
            root.insert(
                "router_file".into(),
                Value::from(absolute.to_string_lossy().into_owned()),
            );
        }
    }
}

/// A name safe as one path component.
fn safe_name(name: &str) -> String {
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if safe.is_empty() {
        "scenario".into()
    } else {
        safe
    }
}
