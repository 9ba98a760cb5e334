//! `--emit-litellm-config FILE` (serve and drive) never overwrites what routersim did not
//! write: the scenario and its router file are refused always, any other existing file
//! unless `--force`; a file routersim wrote is replaced. The header names the command that
//! wrote it.

use std::path::Path;

use crate::common::server::Server;
use crate::common::{routersim, scratch_dir};

/// A scenario of one second, its router in a file.
fn scenario(dir: &Path) -> (String, String) {
    let router = dir.join("router.yaml");
    std::fs::write(
        &router,
        "model_list:\n  - {model_name: gpt, litellm_params: {model: openai/gpt-4o}, model_info: {id: a}}\n",
    )
    .unwrap();
    let file = dir.join("scenario.yaml");
    std::fs::write(
        &file,
        "name: emit\nduration: 1s\nrouter_file: router.yaml\nproviders:\n  a: {latency: 0ms}\ntraffic:\n  - {at: 0ms, model: gpt}\n",
    )
    .unwrap();
    (
        file.to_str().unwrap().to_string(),
        router.to_str().unwrap().to_string(),
    )
}

fn serve_emitting(scenario: &str, target: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["serve", scenario, "--emit-litellm-config", target];
    args.extend_from_slice(extra);
    routersim(&args)
}

/// `serve` that emits `target` and starts serving: stopped (SIGTERM) once it says where the
/// config went (its timeline waits for a first client, so it would not stop by itself), and
/// required to stop cleanly.
fn serve_emitted(scenario: &str, target: &str, extra: &[&str]) {
    let mut args = vec!["serve", scenario, "--emit-litellm-config", target];
    args.extend_from_slice(extra);
    let mut server = Server::start(&args);
    let said = server.read_until("litellm config: ");
    assert!(said.contains("litellm config: "), "{said}");
    server.stop_with("-TERM");
}

#[test]
fn serve_refuses_to_overwrite_the_scenario_its_router_file_and_foreign_files() {
    let dir = scratch_dir("emit-refuse");
    let (file, router) = scenario(&dir);
    let before = (
        std::fs::read(&file).unwrap(),
        std::fs::read(&router).unwrap(),
    );
    for (target, why) in [(&file, "the scenario"), (&router, "router file")] {
        for force in [&[][..], &["--force"][..]] {
            let out = serve_emitting(&file, target, force);
            assert_eq!(out.status.code(), Some(2), "{target} {force:?}");
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains(why), "{err}");
            assert!(
                out.stdout.is_empty(),
                "refused before serving: {}",
                String::from_utf8_lossy(&out.stdout)
            );
        }
    }
    assert_eq!(
        (
            std::fs::read(&file).unwrap(),
            std::fs::read(&router).unwrap()
        ),
        before,
        "neither file was touched"
    );

    // A file of the user's: refused without --force, replaced with it.
    let theirs = dir.join("theirs.yaml");
    std::fs::write(&theirs, "keep: me\n").unwrap();
    let out = serve_emitting(&file, theirs.to_str().unwrap(), &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--force"), "{err}");
    assert_eq!(std::fs::read_to_string(&theirs).unwrap(), "keep: me\n");
    serve_emitted(&file, theirs.to_str().unwrap(), &["--force"]);
    let text = std::fs::read_to_string(&theirs).unwrap();
    assert!(
        text.starts_with("# LiteLLM proxy config written by `routersim serve`"),
        "{text}"
    );

    // A file routersim wrote is replaced without --force.
    let ours = dir.join("ours.yaml");
    for _ in 0..2 {
        serve_emitted(&file, ours.to_str().unwrap(), &[]);
    }
}

#[test]
fn drive_refuses_the_scenario_and_names_itself_in_the_header() {
    let dir = scratch_dir("emit-drive");
    let (file, _) = scenario(&dir);
    let before = std::fs::read(&file).unwrap();
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let target = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let out = routersim(&[
        "drive",
        &file,
        "--target",
        &target,
        "--emit-litellm-config",
        &file,
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("the scenario"), "{err}");
    assert_eq!(std::fs::read(&file).unwrap(), before);

    let emitted = dir.join("litellm.yaml");
    let report = dir.join("live");
    let out = routersim(&[
        "drive",
        &file,
        "--target",
        &target,
        "--emit-litellm-config",
        emitted.to_str().unwrap(),
        "--max-requests",
        "1",
        "--drain",
        "1s",
        "--out",
        report.to_str().unwrap(),
    ]);
    // Nobody listens at the target: the run fails loudly (exit 2), but the file was written.
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no request reached"),
        "{out:?}"
    );
    let text = std::fs::read_to_string(&emitted).unwrap();
    assert!(
        text.starts_with("# LiteLLM proxy config written by `routersim drive`"),
        "{text}"
    );
}
