//! End to end: `routersim run` writes the six plots and a self-contained `report.html`, and a
//! real browser renders every plot and the window table: its DOM holds them, and its
//! screenshots (`--screenshot`, PNG decoded here) are painted with the plots' colours.
//!
//! The browser part needs Chromium (`chromium` or `chromium-browser` on PATH, or
//! `/usr/bin/chromium`; Debian: `apt-get install chromium`). Without it the test does the
//! static checks only and says it skipped the rest, unless `ROUTERSIM_REQUIRE_CHROMIUM=1`
//! (CI sets it), which makes a missing browser a failure.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::too_many_lines,
    clippy::disallowed_methods,
    reason = "tests fail loudly and read as one story; the browser test reads its switches from the environment"
)]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::png::{Image, decode_png};
use crate::common::{Component, runs_with};
use crate::common::{repo, scratch_dir};
use routersim_report::REPORT_HTML;
use routersim_report::plot::palette::{BANDS, COOLING, HEALTHY, OK};
use routersim_report::plot::{PLOT_FILES, TRAFFIC_SHARE_SVG};
use routersim_sim::expect::format_value;
use routersim_sim::run::{Rendering, RunOptions, run_file, run_with_rendering};
use routersim_sim::scenario::load_scenario;

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// How long the browser may take to load and dump the page.
const BROWSER_TIMEOUT: Duration = Duration::from_secs(90);

#[test]
fn a_run_writes_a_self_contained_page_that_a_browser_renders() -> TestResult {
    let out = scratch_dir("report-html");
    let report = run_file(
        &repo().join("scenarios/rate-limit-storm.yaml"),
        &RunOptions {
            out_dir: Some(out.clone()),
            ..RunOptions::default()
        },
    )?;
    for file in PLOT_FILES {
        let svg = std::fs::read_to_string(out.join(file))?;
        assert!(svg.starts_with("<svg") && svg.len() > 500, "{file}");
    }
    let page = std::fs::read_to_string(out.join(REPORT_HTML))?;
    static_checks(&page, &report.expectations)?;

    match chromium() {
        Some(browser) => {
            let profile = scratch_dir("report-html-chromium");
            let dom = dump_dom(&browser, &out.join(REPORT_HTML), &profile)?;
            rendered_checks(&dom);
            window_table_checks(&dom);
            screenshot_checks(&browser, &out, &profile)?;
        }
        None => {
            runs_with(Component::Chromium, false, "report_html's browser part");
            let note = "report_html: skipped the browser part (no chromium, chromium-browser \
                        or /usr/bin/chromium; `apt-get install chromium` enables it)";
            println!("{note}");
            eprintln!("{note}");
        }
    }
    Ok(())
}

#[test]
fn data_only_runs_draw_nothing_and_leave_the_summary_alone() -> TestResult {
    let scenario = load_scenario(&repo().join("scenarios/rate-limit-storm.yaml"))?;
    let out = scratch_dir("report-html-data-only");
    let options = RunOptions {
        out_dir: Some(out.clone()),
        ..RunOptions::default()
    };
    run_with_rendering(&scenario, &options, Rendering::Full)?;
    let summary = std::fs::read(out.join("summary.json"))?;
    assert!(out.join(REPORT_HTML).exists());
    // The same directory again without pictures: the old ones go, the data stays the same.
    run_with_rendering(&scenario, &options, Rendering::DataOnly)?;
    for file in PLOT_FILES.iter().chain([&REPORT_HTML]) {
        assert!(!out.join(file).exists(), "{file} left behind");
    }
    assert!(std::fs::read(out.join("summary.json"))? == summary);
    Ok(())
}

fn static_checks(
    page: &str,
    expectations: &[routersim_sim::expect::ExpectationResult],
) -> TestResult {
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert_eq!(
        page.matches("<svg").count(),
        PLOT_FILES.len(),
        "every plot inline"
    );
    for file in PLOT_FILES {
        let id = figure_id(file);
        assert!(page.contains(&format!("<figure id=\"{id}\">")), "{id}");
    }
    // The expect results, each with its measured value.
    assert!(!expectations.is_empty());
    let verdict = if expectations.iter().all(|e| e.passed) {
        format!("All {} expectations hold.", expectations.len())
    } else {
        "expectations failed.".to_string()
    };
    assert!(page.contains(&verdict), "{verdict}");
    for e in expectations {
        let row = page
            .lines()
            .find(|l| l.contains(&format!("<td>{}</td>", e.expectation.metric)))
            .ok_or_else(|| format!("no row for {}", e.expectation.metric))?;
        let measured = e.measured.map(format_value).ok_or("a measured value")?;
        assert!(row.contains(&measured), "{row} shows {measured}");
        assert!(row.contains(if e.passed { "passed" } else { "FAILED" }));
    }
    // Nothing is fetched: no URLs, no external resources, no scripts.
    for needle in [
        "http://", "https://", "src=", "href=", "url(", "@import", "<script", "<link", "<img",
        "<iframe",
    ] {
        assert!(!page.contains(needle), "the page contains {needle}");
    }
    Ok(())
}

fn figure_id(file: &str) -> String {
    format!("plot-{}", file.trim_end_matches(".svg"))
}

/// The browser's DOM: every figure holds an SVG with drawing elements and text.
fn rendered_checks(dom: &str) {
    assert!(dom.contains("All 5 expectations hold."), "the page loaded");
    for file in PLOT_FILES {
        let id = figure_id(file);
        let start = dom
            .find(&format!("id=\"{id}\""))
            .unwrap_or_else(|| panic!("{id} missing from the rendered DOM"));
        let end = dom[start..]
            .find("</figure>")
            .map_or(dom.len(), |e| start + e);
        let figure = &dom[start..end];
        let svg = figure
            .find("<svg")
            .map(|i| &figure[i..])
            .unwrap_or_else(|| panic!("{id} has no <svg> in the rendered DOM"));
        let drawn: usize = [
            "<rect",
            "<polyline",
            "<path",
            "<circle",
            "<line",
            "<polygon",
        ]
        .iter()
        .map(|tag| svg.matches(tag).count())
        .sum();
        let texts = svg.matches("<text").count();
        assert!(
            drawn >= 5 && texts >= 3,
            "{id} is empty in the browser: {drawn} shapes, {texts} texts"
        );
    }
}

/// The window table reached the rendered DOM at the top of the page: the whole run and the
/// storm on `east` during and after, with what each deployment served.
fn window_table_checks(dom: &str) {
    let start = dom
        .find("<table class=\"windows\">")
        .expect("the window table in the rendered DOM");
    assert!(
        dom.find("<figure").is_some_and(|f| start < f),
        "the window table comes before the plots"
    );
    let table = &dom[start..start + dom[start..].find("</table>").unwrap_or(0)];
    for needle in [
        "whole run",
        "east: rate_limit 90%",
        ">during<",
        ">after<",
        ">east</th>",
        ">west</th>",
        ">openai</th>",
        "120–300 s",
        "300 s – end",
    ] {
        assert!(
            table.contains(needle),
            "{needle} in the window table: {table}"
        );
    }
    // Whole run, during, after: three rows of numbers, each with three served cells.
    assert_eq!(table.matches("<tr").count(), 2 + 3, "{table}");
    assert_eq!(
        table.matches("<span class=\"of\"> / ").count(),
        3 * 3,
        "{table}"
    );
}

/// Screenshots of the page and of `traffic_share.svg` alone: the pixels of the plots' fills
/// (lanes, bands) are on them, so the browser painted the drawings, not only parsed them.
fn screenshot_checks(browser: &Path, out: &Path, profile: &Path) -> TestResult {
    let share = screenshot(browser, &out.join(TRAFFIC_SHARE_SVG), profile, (960, 520))?;
    // east, west and openai served in turn: each band covers thousands of pixels.
    for (k, id) in ["east", "west", "openai"].iter().enumerate() {
        let n = share.count(BANDS[k].0, BANDS[k].1, BANDS[k].2);
        assert!(n > 2000, "{id}'s band: {n} pixels in the screenshot");
    }
    let page = screenshot(browser, &out.join(REPORT_HTML), profile, (1000, 5200))?;
    for (name, c) in [
        ("healthy lanes", HEALTHY),
        ("east's cooldowns", COOLING),
        ("ok requests and served bands", OK),
        ("east's served band", BANDS[0]),
        ("west's served band", BANDS[1]),
    ] {
        let n = page.count(c.0, c.1, c.2);
        assert!(n > 500, "{name}: {n} pixels in the page's screenshot");
    }
    Ok(())
}

/// Loads `file` in headless Chromium at `size` and decodes its `--screenshot`.
fn screenshot(
    browser: &Path,
    file: &Path,
    profile: &Path,
    (width, height): (u32, u32),
) -> Result<Image, Box<dyn std::error::Error>> {
    let png = profile.join(format!(
        "{}.png",
        file.file_name().and_then(|n| n.to_str()).unwrap_or("shot")
    ));
    let _ = std::fs::remove_file(&png);
    let url = format!("file://{}", file.canonicalize()?.display());
    let mut command = browser_command(browser, profile);
    command
        .arg("--hide-scrollbars")
        .arg("--force-device-scale-factor=1")
        .arg(format!("--window-size={width},{height}"))
        .arg(format!("--screenshot={}", png.display()))
        .arg(&url);
    let (status, _, log) = run_browser(command)?;
    if !status.success() || !png.is_file() {
        return Err(format!("chromium --screenshot failed ({status}): {log}").into());
    }
    decode_png(&std::fs::read(&png)?)
}

#[test]
fn the_docs_count_the_plots_a_run_writes() -> TestResult {
    // "six plots", "six SVG plots"; "N more plots" beside a picture of one of them.
    let words = [
        "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    ];
    let mut files = vec![repo().join("README.md")];
    for dir in [
        "docs",
        "crates/report/src",
        "crates/report/src/plot",
        "crates/report/src/record",
    ] {
        for entry in std::fs::read_dir(repo().join(dir))? {
            let path = entry?.path();
            if path.extension().is_some_and(|e| e == "md" || e == "rs") {
                files.push(path);
            }
        }
    }
    let mut seen = 0;
    for file in files {
        let text = std::fs::read_to_string(&file)?
            .to_lowercase()
            .replace(['\n', '/'], " ");
        let tokens: Vec<&str> = text.split_whitespace().collect();
        for (i, token) in tokens.iter().enumerate() {
            let Some(n) = words.iter().position(|w| w == token).map(|n| n + 1) else {
                continue;
            };
            let rest = &tokens[i + 1..tokens.len().min(i + 4)];
            let more = rest.first() == Some(&"more");
            let after: Vec<&str> = rest
                .iter()
                .copied()
                .skip(usize::from(more))
                .skip_while(|t| *t == "svg")
                .take(1)
                .collect();
            if after
                .first()
                .is_some_and(|t| t.trim_end_matches([',', '.', ':', ';']) == "plots")
            {
                seen += 1;
                let expected = PLOT_FILES.len() - usize::from(more);
                assert_eq!(
                    n,
                    expected,
                    "{}: \"{}\" but a run writes {} plots",
                    file.display(),
                    tokens[i..i + 1 + rest.len()].join(" "),
                    PLOT_FILES.len()
                );
            }
        }
    }
    assert!(seen >= 3, "the docs count the plots ({seen} counts found)");
    Ok(())
}

/// A Chromium binary, if one is installed.
fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    for name in ["chromium", "chromium-browser"] {
        for dir in std::env::split_paths(&path) {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return Some(candidate);
            }
        }
    }
    let fallback = Path::new("/usr/bin/chromium");
    fallback.is_file().then(|| fallback.to_path_buf())
}

/// Headless Chromium with its own profile and nothing that reaches the network.
fn browser_command(browser: &Path, profile: &Path) -> Command {
    let mut command = Command::new(browser);
    command
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--disable-default-apps",
            "--disable-extensions",
        ])
        .arg(format!("--user-data-dir={}", profile.display()));
    command
}

/// Loads `page` in headless Chromium and returns the DOM it built. Fails after
/// [`BROWSER_TIMEOUT`].
fn dump_dom(
    browser: &Path,
    page: &Path,
    profile: &Path,
) -> Result<String, Box<dyn std::error::Error>> {
    let url = format!("file://{}", page.canonicalize()?.display());
    let mut command = browser_command(browser, profile);
    command.arg("--dump-dom").arg(&url);
    let (status, dom, log) = run_browser(command)?;
    if !status.success() || dom.is_empty() {
        return Err(format!("chromium failed ({status}): {log}").into());
    }
    Ok(dom)
}

/// Runs `command` (a browser) to its end; returns its status, stdout and stderr. Fails after
/// [`BROWSER_TIMEOUT`].
fn run_browser(
    mut command: Command,
) -> Result<(std::process::ExitStatus, String, String), Box<dyn std::error::Error>> {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    // Drain both pipes on threads: a full pipe would stall the browser until the timeout.
    let mut stdout = child.stdout.take().ok_or("no stdout")?;
    let mut stderr = child.stderr.take().ok_or("no stderr")?;
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let began = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if began.elapsed() > BROWSER_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("chromium did not finish within {BROWSER_TIMEOUT:?}").into());
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let stdout = out.join().map_err(|_| "stdout reader panicked")?;
    let stderr = err.join().map_err(|_| "stderr reader panicked")?;
    Ok((status, stdout, stderr))
}
