//! Finding the scenarios in a directory tree (`routersim check DIR`, the shipped-scenario
//! test): every `*.yaml` / `*.yml` file, recursively, in path order — except router configs
//! kept beside them (`router_file:` targets), recognised by a top-level `model_list`.

use std::path::{Path, PathBuf};

/// Whether a YAML text is a LiteLLM router config rather than a scenario: it has a top-level
/// `model_list` key (a scenario keeps its router under `router:`).
pub fn is_router_config(text: &str) -> bool {
    text.lines().any(|line| {
        let line = line.trim_end();
        line.strip_prefix("model_list")
            .is_some_and(|rest| rest.trim_start().starts_with(':'))
    })
}

/// Every scenario file under `dir` (or `dir` itself when it is a file), sorted by path.
pub fn discover_scenarios(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    if dir.is_file() {
        return Ok(vec![dir.to_path_buf()]);
    }
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(next) = pending.pop() {
        for entry in std::fs::read_dir(&next)? {
            let path = entry?.path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml")
                && !is_router_config(&std::fs::read_to_string(&path)?)
            {
                found.push(path);
            }
        }
    }
    found.sort();
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn router_configs_are_told_apart_from_scenarios() {
        assert!(is_router_config("# c\nmodel_list:\n  - model_name: a\n"));
        assert!(is_router_config("model_list :\n"));
        assert!(!is_router_config(
            "name: s\nrouter:\n  model_list:\n    - x\n"
        ));
        assert!(!is_router_config("model_list_extra: 1\n"));
    }
}
