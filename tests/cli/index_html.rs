//! The `index.html` of `sweep` and `check` folders: the table, the verdicts, the plots inline
//! and a link to each run, checked as files (every link resolves inside the folder) and in
//! headless Chromium (its DOM holds the drawing elements; its screenshot is painted with the
//! plots' colours).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests"
)]

use std::path::Path;

use crate::common::png::decode_png;
use crate::common::{Component, routersim, runs_with, scratch_dir};
use crate::sweep_verdict::{browser, chromium};
use routersim_report::plot::palette::{OK, SERIES};

const SCENARIO: &str = "\
name: pages
duration: 20s
router:
  model_list:
    - {model_name: A, litellm_params: {model: openai/a1}, model_info: {id: a1}}
    - {model_name: A, litellm_params: {model: openai/a2}, model_info: {id: a2}}
  router_settings: {num_retries: 1}
providers:
  a1: {latency: {p50: 200ms, p99: 1s}}
  a2: {latency: {p50: 300ms, p99: 1s}}
faults:
  - {deployment: a1, from: 5s, to: 15s, error: service_unavailable, probability: 0.6}
traffic:
  - {model: A, rate: 10/s, arrival: poisson}
expect:
  - {metric: requests, min: 10}
";

fn s(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// Every `href="…"` of a page.
fn links(html: &str) -> Vec<String> {
    html.split("href=\"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .map(|h| h.replace("%20", " "))
        .collect()
}

/// A sweep with `--reports` and a check of one scenario (with its golden changed so one case
/// fails), each with its page: the two folders.
fn folders(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let scenarios = dir.join("scenarios");
    std::fs::create_dir_all(&scenarios).unwrap();
    let file = scenarios.join("pages.yaml");
    std::fs::write(&file, SCENARIO).unwrap();
    let swept = dir.join("sweep");
    let output = routersim(&[
        "sweep",
        &s(&file),
        "--set",
        "router_settings.allowed_fails=0,2",
        "--seeds",
        "1..2",
        "--reports",
        "--out",
        &s(&swept),
    ]);
    assert_eq!(output.status.code(), Some(0));
    let checked = dir.join("check");
    let bless = routersim(&["check", &s(&scenarios), "--bless", "--out", &s(&checked)]);
    assert_eq!(bless.status.code(), Some(0));
    let golden = scenarios.join("pages.golden.json");
    let text = std::fs::read_to_string(&golden).unwrap();
    std::fs::write(
        &golden,
        text.replacen("\"requests\": ", "\"requests\": 1", 1),
    )
    .unwrap();
    let check = routersim(&["check", &s(&scenarios), "--out", &s(&checked)]);
    assert_eq!(check.status.code(), Some(1));
    (swept, checked)
}

#[test]
fn sweep_and_check_folders_have_an_index_page_whose_links_resolve() {
    let dir = scratch_dir("index-html");
    let (swept, checked) = folders(&dir);

    let page = std::fs::read_to_string(swept.join("index.html")).unwrap();
    // The table (one row per combination, the baseline labelled), the verdicts, the plot.
    assert_eq!(page.matches("<tr>").count(), 1 + 3, "{page}");
    assert!(page.contains("router_settings.allowed_fails=null (config)"));
    assert!(page.contains("failed_rate (lower is better)"));
    assert!(page.contains("cooled_ms_total: not ranked"));
    assert!(
        page.contains("<svg") && page.contains("<circle"),
        "sweep.svg inline"
    );
    // A link to each run's report.html (kept by --reports), and to the files.
    let hrefs = links(&page);
    let reports: Vec<&String> = hrefs
        .iter()
        .filter(|h| h.ends_with("report.html"))
        .collect();
    assert_eq!(reports.len(), 3 * 2, "{hrefs:?}");
    for href in &hrefs {
        assert!(swept.join(href).is_file(), "{href} resolves");
    }
    assert!(hrefs.contains(&"sweep.csv".to_string()));

    let page = std::fs::read_to_string(checked.join("index.html")).unwrap();
    assert!(
        page.contains("1 run(s): 0 passed, 1 failed, 0 error(s)"),
        "{page}"
    );
    assert!(page.contains("<td class=\"verdict\">FAIL</td>"), "{page}");
    assert!(
        page.contains("golden: 1 metric(s) differ (requests 1"),
        "{page}"
    );
    assert!(page.contains("<svg"), "the run's timeline inline");
    let hrefs = links(&page);
    assert!(
        hrefs.contains(&"pages/seed-0/report.html".to_string()),
        "{hrefs:?}"
    );
    for href in &hrefs {
        assert!(checked.join(href).is_file(), "{href} resolves");
    }
}

/// What a screenshot must be painted with: its name, which pixels are of it, more than how
/// many.
type Paint<'a> = (&'a str, &'a dyn Fn([u8; 3]) -> bool, usize);

#[test]
fn index_pages_render_in_headless_chromium() {
    let Some(chromium) = chromium() else {
        runs_with(
            Component::Chromium,
            false,
            "index_pages_render_in_headless_chromium",
        );
        return;
    };
    let dir = scratch_dir("index-html-chromium");
    let (swept, checked) = folders(&dir);
    // What each page's screenshot is painted with: the sweep's first series (markers and
    // error bars, in its exact colour); the run's ok requests in the timeline thumbnail (a
    // thin, scaled-down line: pixels of a green hue, well clear of the grey axes and text).
    let first_series = |p: [u8; 3]| p == [SERIES[0].0, SERIES[0].1, SERIES[0].2];
    let ok_green = |p: [u8; 3]| {
        let [r, g, b] = p.map(i32::from);
        g > r + 40 && g > b + 40
    };
    assert!(ok_green([OK.0, OK.1, OK.2]), "the hue holds the ok colour");
    let pages: [(&str, &Path, usize, Paint<'_>); 2] = [
        ("sweep", &swept, 9, ("the first series", &first_series, 150)),
        ("check", &checked, 2, ("ok requests", &ok_green, 100)),
    ];
    for (name, folder, min_polylines, (what, paint, min_pixels)) in pages {
        let url = format!(
            "file://{}",
            folder.join("index.html").canonicalize().unwrap().display()
        );
        let dom = browser(
            &chromium,
            &dir.join(format!("profile-dom-{name}")),
            &["--dump-dom".into()],
            &url,
        );
        assert!(dom.contains("<table>"), "{name}: a table");
        assert!(dom.contains("<svg"), "{name}: a plot in the page");
        assert!(
            dom.matches("<polyline").count() >= min_polylines,
            "{name}: the plot's lines in the browser"
        );
        assert!(dom.contains("report.html"), "{name}: links to the runs");
        let png = dir.join(format!("{name}.png"));
        browser(
            &chromium,
            &dir.join(format!("profile-shot-{name}")),
            &[
                format!("--screenshot={}", png.display()),
                "--window-size=1400,1600".into(),
                "--hide-scrollbars".into(),
                "--force-device-scale-factor=1".into(),
            ],
            &url,
        );
        let shot = decode_png(&std::fs::read(&png).unwrap()).unwrap();
        let n = shot.count_where(paint);
        assert!(
            n > min_pixels,
            "{name}: {what}: {n} pixels in the screenshot"
        );
    }
}
