//! Helpers for the end-to-end tests.
#![allow(dead_code)]

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};
use std::time::{Duration, Instant};

pub mod png;
pub mod server;

/// A fresh, empty directory under the system temp dir, unique to this test and process.
pub fn scratch_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("routersim-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir is writable");
    dir
}

/// The repository root (where `scenarios/` is).
pub fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Runs the `routersim` binary with `args` from the repository root.
pub fn routersim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_routersim"))
        .args(args)
        .current_dir(repo())
        .output()
        .expect("the routersim binary runs")
}

/// A child process killed when dropped: a failing test leaves nothing running.
pub struct Killed(pub Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `routersim proxy --config CONFIG --listen 127.0.0.1:PORT`, its output in `DIR/NAME.out`
/// and `DIR/NAME.err`.
pub fn spawn_proxy(dir: &Path, name: &str, config: &Path, port: u16) -> Killed {
    Killed(
        Command::new(env!("CARGO_BIN_EXE_routersim"))
            .arg("proxy")
            .arg("--config")
            .arg(config)
            .args(["--listen", &format!("127.0.0.1:{port}")])
            .stdout(File::create(dir.join(format!("{name}.out"))).expect("proxy stdout file"))
            .stderr(File::create(dir.join(format!("{name}.err"))).expect("proxy stderr file"))
            .spawn()
            .expect("routersim proxy starts"),
    )
}

/// `routersim drive SCENARIO TARGET_ARGS… --emit-litellm-config CONFIG --out LIVE` (waiting up
/// to 30 s for its targets, draining 5 s), its output in `DIR/drive.out` and `DIR/drive.err`;
/// returns once drive has written CONFIG, the router config to start the targets with.
/// `target_args` are drive's `--target` arguments as given (repeated or comma-separated).
pub fn spawn_drive_emitting_config(
    dir: &Path,
    scenario: &Path,
    target_args: &[&str],
    config: &Path,
    live: &Path,
) -> Killed {
    let drive = Killed(
        Command::new(env!("CARGO_BIN_EXE_routersim"))
            .arg("drive")
            .arg(scenario)
            .args(target_args)
            .arg("--emit-litellm-config")
            .arg(config)
            .args(["--wait-for-target", "30s", "--drain", "5s"])
            .arg("--out")
            .arg(live)
            .stdout(File::create(dir.join("drive.out")).expect("drive stdout file"))
            .stderr(File::create(dir.join("drive.err")).expect("drive stderr file"))
            .spawn()
            .expect("routersim drive starts"),
    );
    let begun = Instant::now();
    while !config.exists() {
        assert!(
            begun.elapsed() < Duration::from_secs(30),
            "drive wrote no config"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    drive
}

/// A loopback port free at the moment of asking.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

/// Tests that hold a real router (the LiteLLM proxy, or routersim's own proxies sharing Redis)
/// to wall-clock margins take turns: in one test binary they would otherwise run beside each
/// other, and a loaded machine delays the wake-ups (LiteLLM's background cooldown writes among
/// them) that their margins allow for. Held for the test's whole real-time part.
pub fn real_time_turn() -> std::sync::MutexGuard<'static, ()> {
    static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());
    TURN.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A real component some tests talk to, installed by `.ci/run`.
#[derive(Clone, Copy, Debug)]
pub enum Component {
    /// `curl` on the PATH.
    Curl,
    /// The official `openai` Python client, in `target/ci-venv`.
    OpenAiClient,
    /// The LiteLLM 1.110.2 proxy, in `target/litellm-venv`.
    LiteLlm,
    /// Headless Chromium.
    Chromium,
    /// A redis-server at `ROUTERSIM_REDIS_URL`.
    Redis,
    /// The Portkey gateway 1.15.2, in `target/portkey` (`tools/portkey/install`).
    Portkey,
}

impl Component {
    /// The variable `.ci/run` sets to `1` when the component was installed (or could have
    /// been: only an unreachable registry leaves it unset).
    fn require_var(self) -> &'static str {
        match self {
            Component::Curl => "ROUTERSIM_REQUIRE_CURL",
            Component::OpenAiClient => "ROUTERSIM_REQUIRE_OPENAI",
            Component::LiteLlm => "ROUTERSIM_REQUIRE_LITELLM",
            Component::Chromium => "ROUTERSIM_REQUIRE_CHROMIUM",
            Component::Redis => "ROUTERSIM_REQUIRE_REDIS",
            Component::Portkey => "ROUTERSIM_REQUIRE_PORTKEY",
        }
    }
}

/// Whether a test that needs `component` can run: `present`; else the test skips with a warning
/// naming `test`, unless `.ci/run` required the component (`ROUTERSIM_REQUIRE_<NAME>=1`), when
/// its absence fails the test. In CI no test passes by skipping.
#[allow(
    clippy::disallowed_methods,
    reason = "the test's environment says what CI installed"
)]
pub fn runs_with(component: Component, present: bool, test: &str) -> bool {
    if present {
        return true;
    }
    let var = component.require_var();
    assert!(
        std::env::var(var).as_deref() != Ok("1"),
        "{var}=1 but {component:?} is missing: {test} cannot run"
    );
    eprintln!("warning: {component:?} is missing: {test} is skipped (.ci/run installs it)");
    false
}

/// The `openai` client's Python (`target/ci-venv`), when it is installed.
pub fn openai_python() -> Option<PathBuf> {
    let python = repo().join("target/ci-venv/bin/python");
    let has_openai = Command::new(&python)
        .args(["-c", "import openai"])
        .output()
        .is_ok_and(|o| o.status.success());
    has_openai.then_some(python)
}

/// Whether `curl` is on the PATH.
pub fn curl_present() -> bool {
    Command::new("curl")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// `curl -s -i` with `args`: the response's headers and body, line endings normalised.
pub fn curl(args: &[&str]) -> String {
    let output = Command::new("curl")
        .args(["-s", "-i", "--max-time", "20"])
        .args(args)
        .output()
        .expect("curl runs");
    String::from_utf8_lossy(&output.stdout).replace("\r\n", "\n")
}

/// Every shipped scenario file (`scenarios/`, `ci/`, `profiles/`, `quota-ramp/`), sorted.
pub fn shipped_scenarios() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in [
        "scenarios",
        "scenarios/ci",
        "scenarios/profiles",
        "scenarios/quota-ramp",
    ] {
        for entry in std::fs::read_dir(repo().join(dir)).unwrap() {
            let path = entry.unwrap().path();
            // A folder's shared router config (`router.yaml`, `incident-router.yaml`) is not
            // a scenario.
            if path.extension().is_some_and(|e| e == "yaml")
                && !routersim_suite::discover::is_router_config(
                    &std::fs::read_to_string(&path).unwrap(),
                )
            {
                files.push(path);
            }
        }
    }
    files.sort();
    assert!(files.len() >= 30, "the shipped scenarios: {files:?}");
    files
}

/// The Redis the shared-state tests use (`ROUTERSIM_REDIS_URL`, which `.ci/run` sets after
/// starting a loopback redis-server), or `None` with a warning: the caller skips. Under
/// `ROUTERSIM_REQUIRE_REDIS=1` (also set by `.ci/run`) a missing server fails instead.
#[allow(
    clippy::disallowed_methods,
    reason = "the test's environment names the server"
)]
pub fn redis_url(test: &str) -> Option<String> {
    let url = std::env::var("ROUTERSIM_REDIS_URL")
        .ok()
        .filter(|u| !u.is_empty());
    runs_with(Component::Redis, url.is_some(), test).then_some(url)?
}

/// `redis://[user:pass@]host:port[/db]` → (host, port).
pub fn redis_host_port(url: &str) -> (String, u16) {
    let rest = url.trim_start_matches("redis://");
    let rest = rest.rsplit('@').next().unwrap_or(rest);
    let rest = rest.split('/').next().unwrap_or(rest);
    let (host, port) = rest.rsplit_once(':').expect("redis URL with a port");
    (host.to_string(), port.parse().expect("a numeric port"))
}
