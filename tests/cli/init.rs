//! `routersim init`: every template it writes runs unchanged with the commands its `# Run:`
//! and `# Then:` lines name, and nothing is overwritten without `--force`.

use std::path::Path;
use std::process::{Command, Output};

use crate::common::{routersim, scratch_dir};

/// `routersim ARGS` in `dir`.
fn routersim_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_routersim"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the routersim binary runs")
}

/// The commands a template names, as `init` prints them after `next…:`.
fn next_commands(stdout: &str) -> Vec<Vec<String>> {
    stdout
        .lines()
        .skip_while(|l| !l.starts_with("next"))
        .skip(1)
        .map(|l| l.split_whitespace().map(str::to_string).collect())
        .collect()
}

#[test]
fn every_template_runs_unchanged_with_the_commands_it_names() {
    let dir = scratch_dir("init-templates");
    for (kind, files, first) in [
        ("incident", &["incident.yaml"][..], "run"),
        ("ci", &["ci/smoke.yaml", "ci/failover.yaml"][..], "check"),
        ("sweep", &["sweep.yaml"][..], "sweep"),
    ] {
        let out = dir.join(kind);
        let written = routersim(&["init", kind, "--out", out.to_str().unwrap()]);
        let stdout = String::from_utf8_lossy(&written.stdout);
        assert!(written.status.success(), "{kind}: {written:?}");
        for file in files {
            assert!(out.join(file).is_file(), "{kind}: {file}\n{stdout}");
            let text = std::fs::read_to_string(out.join(file)).unwrap();
            assert!(text.starts_with("# "), "{file} is commented");
        }
        let commands = next_commands(&stdout);
        assert!(!commands.is_empty(), "{stdout}");
        assert_eq!(commands[0][1], first, "{stdout}");
        for command in commands {
            assert_eq!(command[0], "routersim");
            let ran = routersim_in(
                &out,
                &command[1..].iter().map(String::as_str).collect::<Vec<_>>(),
            );
            assert_eq!(
                ran.status.code(),
                Some(0),
                "{kind}: {command:?}\n{}\n{}",
                String::from_utf8_lossy(&ran.stdout),
                String::from_utf8_lossy(&ran.stderr)
            );
        }
    }
    // The CI suite's second run held every scenario to the goldens the first wrote.
    let goldens = std::fs::read_dir(dir.join("ci/ci"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(".golden.json")
        })
        .count();
    assert!(goldens >= 2, "{goldens} goldens");
}

#[test]
fn init_refuses_to_overwrite_without_force() {
    let dir = scratch_dir("init-force");
    let out = dir.to_str().unwrap();
    assert!(
        routersim(&["init", "incident", "--out", out])
            .status
            .success()
    );
    let file = dir.join("incident.yaml");
    std::fs::write(&file, "mine").unwrap();

    let refused = routersim(&["init", "incident", "--out", out]);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("incident.yaml") && stderr.contains("--force"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine");

    assert!(
        routersim(&["init", "incident", "--out", out, "--force"])
            .status
            .success()
    );
    assert!(std::fs::read_to_string(&file).unwrap().contains("stages:"));
}

#[test]
fn bad_stages_exit_2_naming_the_yaml_path() {
    let dir = scratch_dir("init-stages");
    let scenario = dir.join("ramp.yaml");
    std::fs::write(
        &scenario,
        "name: ramp\nduration: 1m\nrouter:\n  model_list:\n    - {model_name: gpt, litellm_params: {model: openai/gpt}}\n\
         traffic:\n  - model: gpt\n    stages:\n      - {duration: 10s, target: -5}\n",
    )
    .unwrap();
    let ran = routersim(&[
        "run",
        scenario.to_str().unwrap(),
        "--out",
        dir.join("r").to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&ran.stderr);
    assert_eq!(ran.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("ramp.yaml:9:"), "{stderr}");
    assert!(stderr.contains("traffic[0].stages[0].target"), "{stderr}");
}
