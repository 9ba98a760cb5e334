//! Runs a page's `console` blocks, each block one terminal session, in a scratch copy of the
//! repository's inputs (`scenarios/`, `examples/`, `docs/`), so nothing is written into the
//! repository and nothing is left behind.
//!
//! - `$ cargo run --release -- ARGS` and `$ routersim ARGS` run the binary under test (a
//!   `routersim` on the sessions' `PATH`); other commands run under `bash -c`.
//! - `$ cargo test --workspace --release` is not run again: `.ci/run` must call exactly it.
//! - `$ COMMAND &` starts a job (numbered from 1 in the block) and waits until its output
//!   begins with the lines shown under it; `$ wait %N` waits for job N to end, `$ kill %N`
//!   stops it with SIGTERM, and either checks the rest of its output against the lines shown.
//!   Jobs still running when the block ends are stopped.
//! - `$ curl …` is done by the test itself ([`crate::docs::curl`]).
//! - `litellm` is `target/litellm-venv/bin/litellm` (`.ci/run` installs it); a block that
//!   needs it is skipped with a printed line when it is absent, and fails when
//!   `ROUTERSIM_REQUIRE_LITELLM=1` (`.ci/run` sets it).
//! - `<!-- doctest: port 4000 -->` above a block: each such number in the block stands for a
//!   free loopback port chosen when the block runs.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::docs::markdown::{Block, Page};
use crate::docs::matching::{lines, matches, matching_prefix};
use crate::docs::shell::{Step, replace_number, steps, words};

/// The test command the README gives, which `.ci/run` must call as is.
pub const CI_TEST_COMMAND: &str = "cargo test --workspace --release";
/// How long a foreground command, or a `wait`, may take.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(300);
/// How long a job may take to print the lines shown under it (LiteLLM's start included).
const JOB_START_TIMEOUT: Duration = Duration::from_secs(180);
/// How long a stopped job may take to exit.
const STOP_TIMEOUT: Duration = Duration::from_secs(30);

/// What running a page did.
pub struct PageRun {
    /// Commands run.
    pub commands: usize,
    /// Blocks skipped, and why.
    pub skipped: Vec<String>,
}

/// The repository's inputs, copied for a page's sessions; removed when dropped.
struct Scratch {
    dir: PathBuf,
    path_var: String,
    litellm: Option<PathBuf>,
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Runs every `console` block of `page`.
pub fn run_page(root: &Path, page: &Page) -> Result<PageRun, String> {
    let mut run = PageRun {
        commands: 0,
        skipped: Vec::new(),
    };
    let blocks: Vec<&Block> = page.blocks.iter().filter(|b| b.lang == "console").collect();
    if blocks.is_empty() {
        return Ok(run);
    }
    let scratch = Scratch::new(root, &page.path)?;
    for block in blocks {
        let at = format!("{}:{}", page.path.display(), block.line);
        match run_block(root, &scratch, block).map_err(|e| format!("{at}: {e}"))? {
            Ok(commands) => run.commands += commands,
            Err(skip) => run.skipped.push(format!("{at}: {skip}")),
        }
    }
    Ok(run)
}

impl Scratch {
    fn new(root: &Path, page: &Path) -> Result<Self, String> {
        let name = page.to_string_lossy().replace(['/', '.'], "-");
        let dir =
            std::env::temp_dir().join(format!("routersim-docs-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let bin = dir.join("bin");
        std::fs::create_dir_all(&bin).map_err(|e| format!("{}: {e}", bin.display()))?;
        let venv = root.join("target/litellm-venv/bin/litellm");
        let litellm = venv.exists().then(|| bin.join("litellm"));
        let scratch = Scratch {
            path_var: search_path(&bin),
            dir,
            litellm,
        };
        for input in ["scenarios", "examples", "docs"] {
            copy_dir(&root.join(input), &scratch.dir.join(input))?;
        }
        symlink(
            Path::new(env!("CARGO_BIN_EXE_routersim")),
            &bin.join("routersim"),
        )?;
        if scratch.litellm.is_some() {
            symlink(&venv, &bin.join("litellm"))?;
        }
        Ok(scratch)
    }
}

#[allow(
    clippy::disallowed_methods,
    reason = "the sessions' PATH is the test's, with bin/ first"
)]
fn search_path(bin: &Path) -> String {
    let inherited = std::env::var("PATH").unwrap_or_default();
    format!("{}:{inherited}", bin.display())
}

/// Whether `.ci/run` required the LiteLLM proxy (`ROUTERSIM_REQUIRE_LITELLM=1`, as every test
/// that needs it reads it): a block that cannot run then fails instead of skipping.
#[allow(
    clippy::disallowed_methods,
    reason = "the environment says whether CI installed LiteLLM"
)]
fn litellm_required() -> bool {
    std::env::var("ROUTERSIM_REQUIRE_LITELLM").is_ok_and(|v| v == "1")
}

fn symlink(target: &Path, link: &Path) -> Result<(), String> {
    std::os::unix::fs::symlink(target, link).map_err(|e| format!("{}: {e}", link.display()))
}

fn copy_dir(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::create_dir_all(to).map_err(|e| format!("{}: {e}", to.display()))?;
    for entry in std::fs::read_dir(from).map_err(|e| format!("{}: {e}", from.display()))? {
        let path = entry.map_err(|e| e.to_string())?.path();
        let target = to.join(path.file_name().unwrap_or_default());
        if path.is_dir() {
            copy_dir(&path, &target)?;
        } else {
            std::fs::copy(&path, &target).map_err(|e| format!("{}: {e}", path.display()))?;
        }
    }
    Ok(())
}

/// A block's session: `Ok(Ok(commands run))`, `Ok(Err(why it was skipped))`, or what failed.
fn run_block(
    root: &Path,
    scratch: &Scratch,
    block: &Block,
) -> Result<Result<usize, String>, String> {
    let mut steps = steps(&block.body, block.line + 1)?;
    for directive in &block.directives {
        let ports = directive
            .strip_prefix("port ")
            .ok_or(format!("unknown directive {directive:?}"))?;
        for port in ports.split_whitespace() {
            let free = free_port()?.to_string();
            for step in &mut steps {
                step.command = replace_number(&step.command, port, &free);
                for line in &mut step.expected {
                    *line = replace_number(line, port, &free);
                }
            }
        }
    }
    let uses_litellm = steps.iter().any(|s| program(&s.command) == "litellm");
    if uses_litellm && scratch.litellm.is_none() {
        let why = "needs the LiteLLM proxy, target/litellm-venv/bin/litellm (.ci/run installs it)";
        if litellm_required() {
            return Err(format!("{why}, and ROUTERSIM_REQUIRE_LITELLM=1"));
        }
        return Ok(Err(why.to_string()));
    }
    let mut session = Session {
        root,
        scratch,
        jobs: Vec::new(),
    };
    for step in &steps {
        session
            .step(step)
            .map_err(|e| format!("line {}: `{}`: {e}", step.line, step.command))?;
    }
    session.stop_jobs();
    Ok(Ok(steps.len()))
}

/// A command's program: its first word after any `NAME=value` assignments.
fn program(command: &str) -> String {
    let words = words(command).unwrap_or_default();
    words
        .into_iter()
        .find(|w| !is_assignment(w))
        .unwrap_or_default()
}

fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

fn free_port() -> Result<u16, String> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("no free loopback port: {e}"))
}

/// A job started with `&`.
struct Job {
    child: Child,
    output: PathBuf,
    /// Output lines already checked.
    consumed: usize,
}

struct Session<'a> {
    root: &'a Path,
    scratch: &'a Scratch,
    jobs: Vec<Job>,
}

impl Drop for Session<'_> {
    fn drop(&mut self) {
        for job in &mut self.jobs {
            let _ = job.child.kill();
            let _ = job.child.wait();
        }
    }
}

impl Session<'_> {
    fn step(&mut self, step: &Step) -> Result<(), String> {
        let command = match step.command.strip_prefix("cargo run --release -- ") {
            Some(args) => format!("routersim {args}"),
            None => step.command.clone(),
        };
        if let Some(job) = command.strip_suffix('&') {
            return self.start(job.trim(), step);
        }
        let words = words(&command)?;
        match words.first().map(String::as_str) {
            Some("wait") => self.wait(&words, step),
            Some("kill") => self.kill(&words, step),
            Some("curl") => {
                let printed = crate::docs::curl::curl(&words[1..])?;
                check_output(&step.expected, &printed)
            }
            Some("cargo") if command == CI_TEST_COMMAND => self.ci_runs(&command),
            Some("cargo") => {
                Err("only `cargo run --release -- ARGS` and the README's test command".into())
            }
            _ => self.foreground(&command, step),
        }
    }

    /// `.ci/run` calls the README's test command, exactly.
    fn ci_runs(&self, command: &str) -> Result<(), String> {
        let ci = std::fs::read_to_string(self.root.join(".ci/run")).map_err(|e| e.to_string())?;
        if ci.lines().any(|l| l.trim() == command) {
            Ok(())
        } else {
            Err(format!(".ci/run does not call `{command}`"))
        }
    }

    fn command(&self, program: &str) -> Command {
        let mut command = Command::new(program);
        command
            .current_dir(&self.scratch.dir)
            .env("PATH", &self.scratch.path_var)
            .env_remove("ROUTER_MAX_FALLBACKS")
            .stdin(Stdio::null());
        command
    }

    /// Runs `command` under `bash -c` to its end; checks its exit code and output.
    fn foreground(&self, command: &str, step: &Step) -> Result<(), String> {
        let output = self.scratch.dir.join(".output");
        let mut bash = self.command("bash");
        bash.arg("-c").arg(command);
        let mut child = spawn_into(bash, &output)?;
        let status = wait_for(&mut child, COMMAND_TIMEOUT)?;
        let printed = std::fs::read_to_string(&output).map_err(|e| e.to_string())?;
        let _ = std::fs::remove_file(&output);
        if status != step.status {
            return Err(format!(
                "exit code {status}, the page shows {}; it printed:\n{printed}",
                step.status
            ));
        }
        check_output(&step.expected, &printed)
    }

    /// `COMMAND &`: starts it, then waits for the lines shown under it.
    fn start(&mut self, command: &str, step: &Step) -> Result<(), String> {
        let words = words(command)?;
        let split = words
            .iter()
            .position(|w| !is_assignment(w))
            .ok_or("no program")?;
        let program = &words[split];
        let in_bin = self.scratch.dir.join("bin").join(program);
        let mut child = self.command(if in_bin.exists() {
            in_bin.to_str().unwrap_or(program)
        } else {
            program
        });
        child.args(&words[split + 1..]);
        for assignment in &words[..split] {
            if let Some((name, value)) = assignment.split_once('=') {
                child.env(name, value);
            }
        }
        let output = self
            .scratch
            .dir
            .join(format!(".job-{}", self.jobs.len() + 1));
        let child = spawn_into(child, &output)?;
        self.jobs.push(Job {
            child,
            output,
            consumed: 0,
        });
        let job = self.jobs.last_mut().ok_or("no job")?;
        let begun = Instant::now();
        loop {
            let text = std::fs::read_to_string(&job.output).map_err(|e| e.to_string())?;
            let exited = job.child.try_wait().map_err(|e| e.to_string())?;
            // Only whole lines, unless the job has ended.
            let whole = if exited.is_some() {
                text.as_str()
            } else {
                &text[..text.rfind('\n').map_or(0, |i| i + 1)]
            };
            if let Some(consumed) = matching_prefix(&step.expected, &lines(whole)) {
                job.consumed = consumed;
                return Ok(());
            }
            if exited.is_some() || begun.elapsed() > JOB_START_TIMEOUT {
                let state = if exited.is_some() {
                    "ended"
                } else {
                    "is still running"
                };
                return Err(format!(
                    "the job {state} without printing the lines shown; it printed:\n{text}"
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn job(&mut self, words: &[String]) -> Result<&mut Job, String> {
        let spec = words
            .iter()
            .find_map(|w| w.strip_prefix('%'))
            .ok_or("which job? (`%N`)")?;
        let index: usize = spec.parse().map_err(|_| format!("%{spec}"))?;
        let count = self.jobs.len();
        self.jobs
            .get_mut(index.wrapping_sub(1))
            .ok_or(format!("no job %{index} (there are {count})"))
    }

    /// `wait %N`: the job's end, its exit code and the rest of its output.
    fn wait(&mut self, words: &[String], step: &Step) -> Result<(), String> {
        let job = self.job(words)?;
        let status = wait_for(&mut job.child, COMMAND_TIMEOUT)?;
        let rest = rest_of_output(job)?;
        if status != step.status {
            return Err(format!(
                "the job exited {status}, the page shows {}; it printed:\n{rest}",
                step.status
            ));
        }
        check_output(&step.expected, &rest)
    }

    /// `kill [-SIGNAL] %N`: stops the job; checks the rest of its output.
    fn kill(&mut self, words: &[String], step: &Step) -> Result<(), String> {
        let signal = words
            .iter()
            .find_map(|w| w.strip_prefix('-'))
            .unwrap_or("TERM")
            .to_string();
        let job = self.job(words)?;
        signal_job(job, &signal)?;
        wait_for(&mut job.child, STOP_TIMEOUT)?;
        let rest = rest_of_output(job)?;
        check_output(&step.expected, &rest)
    }

    /// Stops every job still running (SIGTERM, then SIGKILL).
    fn stop_jobs(&mut self) {
        for job in &mut self.jobs {
            if matches!(job.child.try_wait(), Ok(None)) {
                let _ = signal_job(job, "TERM");
                if wait_for(&mut job.child, STOP_TIMEOUT).is_err() {
                    let _ = job.child.kill();
                    let _ = job.child.wait();
                }
            }
        }
    }
}

/// `kill -s SIGNAL PID` on the job's own process id.
fn signal_job(job: &Job, signal: &str) -> Result<(), String> {
    let status = Command::new("kill")
        .args(["-s", signal, &job.child.id().to_string()])
        .status()
        .map_err(|e| format!("kill: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("kill -s {signal} failed"))
    }
}

/// What the job printed after the lines already checked.
fn rest_of_output(job: &Job) -> Result<String, String> {
    let text = std::fs::read_to_string(&job.output).map_err(|e| e.to_string())?;
    Ok(lines(&text)[job.consumed.min(lines(&text).len())..].join("\n"))
}

/// Spawns `command` with stdout and stderr both into `output` (one file, in write order).
fn spawn_into(mut command: Command, output: &Path) -> Result<Child, String> {
    let file = File::create(output).map_err(|e| format!("{}: {e}", output.display()))?;
    let err = file.try_clone().map_err(|e| e.to_string())?;
    command
        .stdout(file)
        .stderr(err)
        .spawn()
        .map_err(|e| format!("{command:?}: {e}"))
}

/// Waits for `child` to exit; its exit code (128 + signal when killed by one).
fn wait_for(child: &mut Child, timeout: Duration) -> Result<i32, String> {
    let begun = Instant::now();
    loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            use std::os::unix::process::ExitStatusExt;
            return Ok(status
                .code()
                .unwrap_or_else(|| 128 + status.signal().unwrap_or(0)));
        }
        if begun.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("still running after {timeout:?}: killed"));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The output shown (when some is) against what was printed.
fn check_output(expected: &[String], printed: &str) -> Result<(), String> {
    if expected.is_empty() || matches(expected, &lines(printed)) {
        return Ok(());
    }
    Err(format!(
        "the output differs from the page's.\n--- the page shows:\n{}\n--- it printed:\n{printed}",
        expected.join("\n")
    ))
}
