//! Where a check reads and writes: each scenario's golden files beside it, and each case's
//! report folder under the output folder. Both take the file's extension into the name when
//! `x.yaml` and `x.yml` sit side by side, so the two never share a golden or a folder.
//!
//! Separate because it is naming alone: no file is read but to see whether a sibling exists.

use std::path::{Path, PathBuf};

/// The other spelling of a scenario file that sits beside it (`x.yml` for `x.yaml`), if any.
fn same_stem_sibling(file: &Path) -> Option<PathBuf> {
    let other = match file.extension()?.to_str()? {
        "yaml" => "yml",
        "yml" => "yaml",
        _ => return None,
    };
    let sibling = file.with_extension(other);
    sibling.is_file().then_some(sibling)
}

fn golden_file_name(stem: &str, seed: u64, own_seed: u64) -> String {
    if seed == own_seed {
        format!("{stem}.golden.json")
    } else {
        format!("{stem}.seed-{seed}.golden.json")
    }
}

/// The golden summary of a scenario run with `seed`: `<stem>.golden.json` beside the scenario
/// for its own seed, `<stem>.seed-<N>.golden.json` for another. `<stem>` is the file's stem,
/// or its whole name when `x.yaml` and `x.yml` sit side by side (so they never share one).
pub fn golden_path(scenario_file: &Path, seed: u64, own_seed: u64) -> PathBuf {
    let stem = if same_stem_sibling(scenario_file).is_some() {
        scenario_file.file_name()
    } else {
        scenario_file.file_stem()
    }
    .map(|s| s.to_string_lossy().into_owned())
    .unwrap_or_default();
    scenario_file.with_file_name(golden_file_name(&stem, seed, own_seed))
}

/// A golden named after the bare stem where `x.yaml` and `x.yml` sit side by side: it could
/// be either's, so it is an error rather than silently ignored.
pub(super) fn ambiguous_golden(scenario_file: &Path, seed: u64, own_seed: u64) -> Option<String> {
    let sibling = same_stem_sibling(scenario_file)?;
    let stem = scenario_file.file_stem()?.to_string_lossy().into_owned();
    let bare = scenario_file.with_file_name(golden_file_name(&stem, seed, own_seed));
    bare.exists().then(|| {
        format!(
            "{} is ambiguous: both {} and {} exist; rename it to {} or {}",
            bare.display(),
            scenario_file.display(),
            sibling.display(),
            golden_path(scenario_file, seed, own_seed).display(),
            golden_path(&sibling, seed, own_seed).display()
        )
    })
}

/// Where a scenario's reports go: `<out>/<path relative to root, without extension>/` (with
/// its extension when `x.yaml` and `x.yml` sit side by side).
pub fn case_root(root: &Path, scenario: &Path, out_dir: &Path) -> PathBuf {
    let relative = scenario
        .strip_prefix(root)
        .ok()
        .filter(|r| !r.as_os_str().is_empty())
        .or_else(|| scenario.file_name().map(Path::new))
        .unwrap_or(scenario);
    if same_stem_sibling(scenario).is_some() {
        out_dir.join(relative)
    } else {
        out_dir.join(relative.with_extension(""))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn goldens_are_named_after_the_seed() {
        let file = Path::new("scenarios/ci/storm.yaml");
        assert_eq!(
            golden_path(file, 7, 7),
            Path::new("scenarios/ci/storm.golden.json")
        );
        assert_eq!(
            golden_path(file, 2, 7),
            Path::new("scenarios/ci/storm.seed-2.golden.json")
        );
    }
}
