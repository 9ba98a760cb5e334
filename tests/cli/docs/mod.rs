//! The docs test: every shell example of `README.md` and `docs/*.md` runs, and prints what
//! the page shows; every repository path a page names exists.
//!
//! Shell examples are `console` blocks (`$ command`, then the output it prints, with trycmd's
//! wildcards `...` and `[..]`); `session.rs` says how they run. A block marked `sh`, `bash` or
//! `shell` fails the test: it would be an example nothing runs.

mod curl;
mod markdown;
mod matching;
mod paths;
mod session;
mod shell;

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

use markdown::{Page, read};

/// The repository root.
fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `README.md` and every page under `docs/`, sorted.
fn pages() -> Vec<Page> {
    let mut paths = vec![PathBuf::from("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .map(|p| p.strip_prefix(root()).unwrap().to_path_buf())
        .collect();
    docs.sort();
    paths.extend(docs);
    paths.iter().map(|p| read(root(), p)).collect()
}

#[test]
fn every_path_a_page_names_exists() {
    let missing: Vec<String> = pages()
        .iter()
        .flat_map(|p| paths::missing(root(), p))
        .collect();
    assert!(
        missing.is_empty(),
        "paths the docs name that do not exist:\n{}",
        missing.join("\n")
    );
}

#[test]
fn shell_examples_are_console_blocks() {
    let mut wrong = Vec::new();
    for page in pages() {
        for block in &page.blocks {
            if ["sh", "bash", "shell", "zsh"].contains(&block.lang.as_str()) {
                wrong.push(format!(
                    "{}:{}: a `{}` block",
                    page.path.display(),
                    block.line,
                    block.lang
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "write shell examples as `console` blocks, which this test runs:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_readme_fits_on_a_screen_and_starts_with_the_two_commands() {
    let readme = read(root(), Path::new("README.md"));
    let lines = std::fs::read_to_string(root().join("README.md"))
        .unwrap()
        .lines()
        .count();
    assert!(lines <= 250, "README.md has {lines} lines (at most 250)");
    let first = readme.blocks.first().expect("README.md has a code block");
    let commands: Vec<&String> = first.body.iter().filter(|l| l.starts_with("$ ")).collect();
    assert_eq!(
        commands,
        [
            "$ cargo run --release -- run scenarios/rate-limit-storm.yaml",
            &format!("$ {}", session::CI_TEST_COMMAND)
        ],
        "README.md's first block is the two commands a new user needs"
    );
}

/// `DOCS_PAGE=docs/ci.md` runs the examples of that page only (while writing it).
#[allow(
    clippy::disallowed_methods,
    reason = "a test's filter, not a run's input"
)]
fn only_page() -> Option<PathBuf> {
    std::env::var("DOCS_PAGE").ok().map(PathBuf::from)
}

#[test]
fn every_shell_example_runs() {
    let only = only_page();
    let mut pages = pages();
    pages.retain(|p| only.as_ref().is_none_or(|o| *o == p.path));
    assert!(!pages.is_empty(), "DOCS_PAGE names no page");
    let queue = Mutex::new(pages);
    let failures = Mutex::new(Vec::new());
    let workers = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(4);
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                loop {
                    let Some(page) = queue.lock().unwrap().pop() else {
                        break;
                    };
                    let begun = Instant::now();
                    match session::run_page(root(), &page) {
                        Ok(run) => {
                            if run.commands > 0 {
                                eprintln!(
                                    "docs: {}: {} command(s) in {:.1} s",
                                    page.path.display(),
                                    run.commands,
                                    begun.elapsed().as_secs_f64()
                                );
                            }
                            for skip in run.skipped {
                                eprintln!("docs: skipped {skip}");
                            }
                        }
                        Err(e) => failures.lock().unwrap().push(e),
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
