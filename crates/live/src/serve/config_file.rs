//! Where `--emit-litellm-config FILE` (serve and drive) may write, and the writing.
//!
//! A mistyped path must never cost the user a file: the scenario and its router file are
//! refused always (even with `--force`: a config over the scenario it was made from is never
//! meant), and any other existing file unless routersim wrote it (its first line is
//! [`HEADER_START`]) or `--force` is given. The file is written beside its target and renamed
//! into place, so a router never reads half of it.

use std::io::Read;
use std::path::Path;

use routersim_sim::scenario::{RouterSource, Scenario};

/// How every config routersim writes begins (then the command's name).
pub const HEADER_START: &str = "# LiteLLM proxy config written by `routersim ";

/// Whether two paths name one file (the same inode on Unix: a hard link or a second path to
/// it counts), when both exist.
fn same_file(a: &Path, b: &Path) -> bool {
    let (Ok(ma), Ok(mb)) = (std::fs::metadata(a), std::fs::metadata(b)) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if ma.dev() == mb.dev() && ma.ino() == mb.ino() {
            return true;
        }
    }
    let _ = (ma, mb);
    matches!(
        (std::fs::canonicalize(a), std::fs::canonicalize(b)),
        (Ok(x), Ok(y)) if x == y
    )
}

/// Whether the file at `path` begins as a config routersim wrote.
fn written_by_routersim(path: &Path) -> bool {
    let mut start = vec![0u8; HEADER_START.len()];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut start))
        .is_ok_and(|()| start == HEADER_START.as_bytes())
}

/// `Ok` when `file` may receive the config of `scenario` (see the module doc).
pub fn check_target(file: &Path, scenario: &Scenario, force: bool) -> Result<(), String> {
    let not_ours = "the file exists and routersim did not write it (its first line is not a \
                    routersim header); add --force to replace it";
    check_target_of(
        "--emit-litellm-config",
        file,
        scenario,
        force,
        (written_by_routersim, not_ours),
    )
}

/// [`check_target`] for `flag`, where `ours.0` tells a file routersim wrote (a JSON config has
/// no header line: [`never_known`], so an existing file needs `--force`) and `ours.1` says why
/// another is refused.
pub fn check_target_of(
    flag: &str,
    file: &Path,
    scenario: &Scenario,
    force: bool,
    ours: (fn(&Path) -> bool, &str),
) -> Result<(), String> {
    let refuse = |why: &str| Err(format!("{flag} {}: {why}", file.display()));
    if same_file(file, &scenario.file) {
        return refuse("that is the scenario itself; write the config to a file of its own");
    }
    if let RouterSource::File(router) = &scenario.router_source
        && same_file(file, router)
    {
        return refuse(
            "that is the scenario's router file (router_file); write the config to a file of \
             its own",
        );
    }
    match std::fs::metadata(file) {
        Err(_) => Ok(()),
        Ok(meta) if meta.is_dir() => refuse("that is a folder"),
        Ok(_) if force || (ours.0)(file) => Ok(()),
        Ok(_) => refuse(ours.1),
    }
}

/// A file whose writer cannot be told from its content.
pub fn never_known(_: &Path) -> bool {
    false
}

/// Writes `text` to `file` after [`check_target`]: to a temporary name beside it, then
/// renamed into place.
pub fn write_config(
    file: &Path,
    text: &str,
    scenario: &Scenario,
    force: bool,
) -> Result<(), String> {
    check_target(file, scenario, force)?;
    let name = file
        .file_name()
        .ok_or_else(|| format!("{}: not a file name", file.display()))?;
    let tmp = file.with_file_name(format!(
        ".{}.tmp-{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    std::fs::write(&tmp, text)
        .and_then(|()| std::fs::rename(&tmp, file))
        .map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            format!("{}: {e}", file.display())
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use routersim_sim::scenario::load_scenario;

    #[test]
    fn only_a_file_routersim_wrote_or_a_new_one_is_a_target_without_force() {
        let dir = std::env::temp_dir().join(format!("routersim-cfgfile-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("router.yaml"),
            "model_list:\n  - {model_name: g, litellm_params: {model: openai/g}}\n",
        )
        .unwrap();
        let file = dir.join("s.yaml");
        std::fs::write(&file, "duration: 1m\nrouter_file: router.yaml\n").unwrap();
        let scenario = load_scenario(&file).unwrap();
        // The scenario by another path, and its router file: never, even with force.
        let other_path = dir.join(".").join("s.yaml");
        for (target, force) in [(&other_path, true), (&dir.join("router.yaml"), true)] {
            assert!(
                check_target(target, &scenario, force).is_err(),
                "{target:?}"
            );
        }
        #[cfg(unix)]
        {
            let link = dir.join("hard.yaml");
            std::fs::hard_link(&file, &link).unwrap();
            assert!(check_target(&link, &scenario, true).is_err(), "a hard link");
        }
        let new = dir.join("new.yaml");
        assert_eq!(check_target(&new, &scenario, false), Ok(()));
        write_config(&new, &format!("{HEADER_START}serve` …\n"), &scenario, false).unwrap();
        assert_eq!(check_target(&new, &scenario, false), Ok(()), "ours");
        let theirs = dir.join("theirs.yaml");
        std::fs::write(&theirs, "x: 1\n").unwrap();
        let why = check_target(&theirs, &scenario, false).unwrap_err();
        assert!(why.contains("--force"), "{why}");
        assert_eq!(check_target(&theirs, &scenario, true), Ok(()));
        assert!(check_target(&dir, &scenario, true).is_err(), "a folder");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
