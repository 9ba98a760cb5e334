//! Finding the scenarios in a directory tree (`routersim check DIR`, the shipped-scenario
//! test): every `*.yaml` / `*.yml` file, recursively, in path order — except the router configs
//! kept beside them (recognised by a top-level `model_list`) that a scenario of the tree names
//! in its `router_file:`.
//!
//! `check` never skips a file silently: [`discover_cases`] returns every YAML file it must
//! report on, scenarios and also what cannot be one (a file that cannot be read or is not
//! UTF-8, a folder that cannot be listed, a router config no scenario references), and
//! [`problem`] says, for such a path, why it is an error.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// Whether a YAML text is a LiteLLM router config rather than a scenario: it has a top-level
/// `model_list` key (a scenario keeps its router under `router:`).
pub fn is_router_config(text: &str) -> bool {
    text.lines().any(|line| {
        let line = line.trim_end();
        line.strip_prefix("model_list")
            .is_some_and(|rest| rest.trim_start().starts_with(':'))
    })
}

/// What a walk found.
#[derive(Debug, Default)]
struct Walk {
    scenarios: Vec<PathBuf>,
    router_configs: Vec<PathBuf>,
    /// Files and folders that cannot be read, with why.
    unreadable: Vec<(PathBuf, String)>,
    /// `router_file:` targets of the scenarios, canonical where possible.
    referenced: BTreeSet<PathBuf>,
}

fn is_yaml(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "yaml" || e == "yml")
}

/// Reads a file as UTF-8 text, saying why it cannot be in plain words.
fn read_text(path: &Path) -> Result<String, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read it: {e}"))?;
    if !meta.is_file() {
        return Err("cannot read it: not a regular file".into());
    }
    routersim_config::input::read_text_file(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::InvalidData => format!("{e}; save it as UTF-8"),
        _ => format!("cannot read it: {e}"),
    })
}

/// The `router_file:` a scenario text names, if it parses that far.
fn router_file_of(text: &str) -> Option<String> {
    #[derive(Deserialize)]
    struct RouterFileOnly {
        router_file: Option<String>,
    }
    routersim_sim::yaml::from_str::<RouterFileOnly>(text)
        .ok()
        .and_then(|r| r.router_file)
}

fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

fn walk(dir: &Path) -> std::io::Result<Walk> {
    let mut found = Walk::default();
    let mut visited = BTreeSet::new();
    let mut pending = vec![dir.to_path_buf()];
    let mut top = true;
    while let Some(next) = pending.pop() {
        if !visited.insert(canonical(&next)) {
            continue; // a symbolic link back into the tree
        }
        let entries = match std::fs::read_dir(&next) {
            Ok(entries) => entries,
            Err(e) if top => return Err(e),
            Err(e) => {
                found
                    .unreadable
                    .push((next, format!("cannot list this folder: {e}")));
                continue;
            }
        };
        top = false;
        for entry in entries {
            let path = match entry {
                Ok(entry) => entry.path(),
                Err(e) => {
                    found
                        .unreadable
                        .push((next.clone(), format!("cannot list this folder: {e}")));
                    continue;
                }
            };
            if path.is_dir() {
                pending.push(path);
                continue;
            }
            if !is_yaml(&path) {
                continue;
            }
            match read_text(&path) {
                Err(why) => found.unreadable.push((path, why)),
                Ok(text) if is_router_config(&text) => found.router_configs.push(path),
                Ok(text) => {
                    if let Some(relative) = router_file_of(&text) {
                        let target = path.parent().unwrap_or(Path::new("")).join(relative);
                        found.referenced.insert(canonical(&target));
                    }
                    found.scenarios.push(path);
                }
            }
        }
    }
    Ok(found)
}

/// Every file `check` reports on under `dir` (or `dir` itself when it is a file), sorted by
/// path: the scenarios, the YAML files that cannot be read or are not UTF-8, folders that
/// cannot be listed, and router configs no scenario of the tree references. Only the router
/// configs a scenario references are left out. [`problem`] tells the second kind apart.
pub fn discover_cases(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    if dir.is_file() {
        return Ok(vec![dir.to_path_buf()]);
    }
    let found = walk(dir)?;
    let mut cases = found.scenarios;
    cases.extend(found.unreadable.into_iter().map(|(path, _)| path));
    cases.extend(
        found
            .router_configs
            .into_iter()
            .filter(|p| !found.referenced.contains(&canonical(p))),
    );
    cases.sort();
    cases.dedup();
    Ok(cases)
}

/// Every scenario file under `dir` (or `dir` itself when it is a file), sorted by path; an
/// error when a file or folder cannot be read.
pub fn discover_scenarios(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    if dir.is_file() {
        return Ok(vec![dir.to_path_buf()]);
    }
    let mut found = walk(dir)?;
    if let Some((path, why)) = found.unreadable.first() {
        return Err(std::io::Error::other(format!("{}: {why}", path.display())));
    }
    found.scenarios.sort();
    Ok(found.scenarios)
}

/// Why a path [`discover_cases`] returned cannot be run as a scenario, or `None` when it may
/// be one (loading it then says whether it is): a folder that cannot be listed, a file that
/// cannot be read or is not UTF-8, a router config.
pub fn problem(path: &Path) -> Option<String> {
    if path.is_dir() {
        return std::fs::read_dir(path)
            .err()
            .map(|e| format!("cannot list this folder: {e}"));
    }
    match read_text(path) {
        Err(why) => Some(why),
        Ok(text) if is_router_config(&text) => Some(
            "a router config that no scenario under the directory references (it has a \
             top-level `model_list`; no scenario names it in `router_file:`), so not a case \
             check can run; reference it from a scenario or move it out of the directory"
                .into(),
        ),
        Ok(_) => None,
    }
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

    #[test]
    fn the_router_file_of_a_scenario_is_read_whatever_else_it_holds() {
        assert_eq!(
            router_file_of("name: s\nrouter_file: \"configs/r.yaml\"\nduration: 1s\n"),
            Some("configs/r.yaml".into())
        );
        assert_eq!(router_file_of("name: s\nrouter: {}\n"), None);
        assert_eq!(router_file_of(": : :"), None);
    }
}
