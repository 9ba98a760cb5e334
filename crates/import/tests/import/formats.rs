//! All three formats read, from the recorded incidents: LiteLLM's standard logging payload,
//! its spend logs (JSON lines as captured, a JSON array and a CSV export made from them), and
//! the plain CSV (made from what the fake providers saw: one row per provider call, written in
//! the order the calls ended, so not by start). And the options: --since, --until,
//! --model-group, --bucket.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

use routersim_import::format::Format;
use routersim_import::series::SeriesKind;
use routersim_import::{ImportOptions, TimeBound, import};

use crate::common::{ProviderCall, import_log, provider_calls, recorded, scratch};

fn gunzip(path: &Path) -> String {
    let mut text = String::new();
    flate2::read::MultiGzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    text
}

fn incident(name: &str) -> PathBuf {
    recorded().into_iter().find(|(n, _)| n == name).unwrap().1
}

fn requests_live(dir: &Path) -> u64 {
    let live: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("live/summary.json")).unwrap())
            .unwrap();
    live["requests"].as_u64().unwrap()
}

/// The deployments' groups, from the proxy config.
fn groups(dir: &Path) -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(dir.join("litellm.yaml")).unwrap();
    let config = routersim_config::load::load_router_config_str(&text).unwrap();
    config
        .deployments
        .iter()
        .map(|d| (d.id.to_string(), d.model_name.to_string()))
        .collect()
}

/// The plain CSV of every provider call, in the order the calls ended.
fn plain_csv(dir: &Path, out: &Path) -> PathBuf {
    let groups = groups(dir);
    let mut calls: Vec<ProviderCall> = provider_calls(dir);
    calls.sort_by(|a, b| (a.at_ms + a.latency_ms).total_cmp(&(b.at_ms + b.latency_ms)));
    let mut text = String::from(
        "timestamp,model_group,deployment,status,latency_ms,retry_after_s,request_id,stream,output_tokens,error,host\n",
    );
    for c in &calls {
        let cut = c.outcome.starts_with("break:");
        let status = if cut { 200 } else { c.status.unwrap_or(0) };
        text.push_str(&format!(
            "{:.3},{},{},{status},{:.1},{},{},{},{},{},gw-1\n",
            1_800_000_000.0 + c.at_ms / 1000.0,
            groups[&c.deployment],
            c.deployment,
            c.latency_ms,
            c.retry_after_ms
                .map(|ms| format!("{}", ms / 1000.0))
                .unwrap_or_default(),
            c.request_id,
            c.stream,
            c.tokens,
            if cut { "api_connection" } else { "" },
        ));
    }
    let path = out.join("calls.csv");
    std::fs::write(&path, text).unwrap();
    path
}

/// The spend logs as one JSON array, and as a CSV export (`metadata` a JSON text cell).
fn spend_exports(dir: &Path, out: &Path) -> (PathBuf, PathBuf) {
    let rows: Vec<serde_json::Value> = gunzip(&dir.join("spend_logs.jsonl.gz"))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let array = out.join("spend.json");
    std::fs::write(&array, serde_json::to_string_pretty(&rows).unwrap()).unwrap();
    let columns = [
        "request_id",
        "call_type",
        "api_key",
        "spend",
        "startTime",
        "endTime",
        "completionStartTime",
        "model",
        "model_id",
        "model_group",
        "api_base",
        "user",
        "metadata",
        "status",
        "prompt_tokens",
        "completion_tokens",
        "request_tags",
        "litellm_call_id",
    ];
    let csv_path = out.join("spend.csv");
    let mut w = csv::Writer::from_path(&csv_path).unwrap();
    w.write_record(columns).unwrap();
    for row in &rows {
        let cells: Vec<String> = columns
            .iter()
            .map(|c| match &row[*c] {
                serde_json::Value::String(s) => s.clone(),
                serde_json::Value::Null => String::new(),
                other => other.to_string(),
            })
            .collect();
        w.write_record(&cells).unwrap();
    }
    w.flush().unwrap();
    (array, csv_path)
}

#[test]
fn every_format_is_detected_and_imports_every_request() {
    for (name, dir) in recorded().into_iter().take(3) {
        let work = scratch(&format!("formats-{name}"));
        let requests = requests_live(&dir);
        let config = dir.join("litellm.yaml");
        let (array, spend_csv) = spend_exports(&dir, &work);
        let cases = [
            (
                dir.join("standard_logging.jsonl.gz"),
                Format::LitellmPayload,
            ),
            (dir.join("spend_logs.jsonl.gz"), Format::SpendLogs),
            (array, Format::SpendLogs),
            (spend_csv, Format::SpendLogs),
            (plain_csv(&dir, &work), Format::Csv),
        ];
        for (i, (log, format)) in cases.iter().enumerate() {
            let imported = import_log(log, Some(&config), &work.join(format!("out-{i}")));
            assert_eq!(imported.format, *format, "{}", log.display());
            assert_eq!(imported.requests, requests, "{name}: {}", log.display());
            let scenario = routersim_sim::scenario::load_scenario(
                &work.join(format!("out-{i}/scenario.yaml")),
            );
            assert!(scenario.is_ok(), "{}: {scenario:?}", log.display());
        }
    }
}

#[test]
fn the_plain_csv_in_completion_order_recovers_the_injected_windows() {
    for (name, dir) in recorded().into_iter().take(3) {
        let work = scratch(&format!("plain-{name}"));
        let imported = import_log(
            &plain_csv(&dir, &work),
            Some(&dir.join("litellm.yaml")),
            &work.join("out"),
        );
        let truth = routersim_sim::scenario::load_scenario(
            &crate::common::fixtures().join(format!("incidents/{name}.yaml")),
        )
        .unwrap();
        // The CSV's clock is the providers' (t0 = the first call), so the truth shifts by it.
        let offset = imported.t0 - 1_800_000_000.0;
        for fault in &truth.faults {
            let routersim_mock_providers::spec::FaultTarget::Deployment(id) = &fault.target else {
                panic!()
            };
            let found = imported
                .faults
                .iter()
                .find(|f| *f.deployment == **id)
                .unwrap_or_else(|| panic!("{name}: {id} not found in {:?}", imported.faults));
            let from = found.from - imported.t0 + offset;
            let to = found.to.map_or(f64::INFINITY, |t| t - imported.t0 + offset);
            let (tf, tt) = (fault.from.as_secs_f64(), fault.to.unwrap().as_secs_f64());
            assert!(
                (from - tf).abs() <= 10.0 && (to - tt).abs() <= 10.0,
                "{name} {id}: [{from}, {to}) vs [{tf}, {tt})"
            );
        }
        // Every attempt is a row: the storm's 429s carry Retry-After, cuts their tokens.
        for f in &imported.faults {
            match f.kind {
                SeriesKind::Error(routersim_engine::failure::FailureKind::RateLimit) => {
                    assert_eq!(f.retry_after, Some(4.0), "{f:?}")
                }
                SeriesKind::Cut(_) => assert_eq!(f.after_tokens, Some(8), "{f:?}"),
                _ => {}
            }
        }
    }
}

#[test]
fn spend_logs_show_a_deployments_failures_only_where_a_request_ended_in_one() {
    // The storm's 429s were all retried on gpt-b: no spend row shows them.
    let storm = incident("429-storm");
    let work = scratch("spend-storm");
    let imported = import_log(
        &storm.join("spend_logs.jsonl.gz"),
        Some(&storm.join("litellm.yaml")),
        &work.join("out"),
    );
    assert!(imported.faults.is_empty(), "{:?}", imported.faults);
    assert!(
        imported
            .notes
            .iter()
            .any(|n| n.contains("one row per request")),
        "{:?}",
        imported.notes
    );
    assert!(
        imported
            .notes
            .iter()
            .any(|n| n.starts_with("no fault windows")),
        "{:?}",
        imported.notes
    );
    // The cut streams failed their requests: the spend rows show the window.
    let cuts = incident("stream-cuts");
    let imported = import_log(
        &cuts.join("spend_logs.jsonl.gz"),
        Some(&cuts.join("litellm.yaml")),
        &work.join("cuts"),
    );
    assert_eq!(imported.faults.len(), 1, "{:?}", imported.faults);
    assert!(matches!(imported.faults[0].kind, SeriesKind::Cut(_)));
}

#[test]
fn since_until_model_group_and_bucket_narrow_the_import() {
    let dir = incident("regional-503");
    let work = scratch("options");
    let log = dir.join("standard_logging.jsonl.gz");
    let whole = import_log(&log, Some(&dir.join("litellm.yaml")), &work.join("whole"));
    let mut options = ImportOptions::new(&log, work.join("narrow"));
    options.config = Some(dir.join("litellm.yaml"));
    options.since = Some(TimeBound::After(Duration::from_secs(5)));
    options.until = Some(TimeBound::At(whole.t0 + 30.0));
    options.model_groups = vec!["gpt-4o".into(), "gpt-4o-west".into()];
    options.bucket = Duration::from_secs(2);
    let narrow = import(&options).unwrap();
    assert!(
        narrow.t0 >= whole.t0 + 5.0 && narrow.t0 + narrow.span <= whole.t0 + 31.0,
        "{} {}",
        narrow.t0,
        narrow.span
    );
    assert!(
        narrow.requests < whole.requests / 2,
        "{} of {}",
        narrow.requests,
        whole.requests
    );
    assert!(
        narrow.faults.iter().all(|f| &*f.deployment == "east-1"),
        "{:?}",
        narrow.faults
    );
    assert!(
        narrow
            .notes
            .iter()
            .any(|n| n.contains("left out by --since")),
        "{:?}",
        narrow.notes
    );
    let series = std::fs::read_to_string(work.join("narrow/imported/error_series.csv")).unwrap();
    let row = series.lines().nth(1).unwrap();
    let cells: Vec<&str> = row.split(',').collect();
    let width: f64 = cells[2].parse::<f64>().unwrap() - cells[1].parse::<f64>().unwrap();
    assert_eq!(width, 2.0, "{series}");
}

#[test]
fn the_same_log_imports_to_the_same_bytes() {
    let dir = scratch("same-bytes");
    let log = dir.join("log.jsonl");
    crate::common::write_log(&log, &crate::common::small_incident(1_800_000_000.0));
    let config = crate::common::small_config(&dir);
    import_log(&log, Some(&config), &dir.join("a"));
    import_log(&log, Some(&config), &dir.join("b"));
    let a = crate::common::all_text(&dir.join("a"));
    let b = crate::common::all_text(&dir.join("b"));
    assert_eq!(a.len(), b.len());
    for ((pa, ta), (_, tb)) in a.iter().zip(&b) {
        assert!(ta == tb, "{} differs", pa.display());
    }
}

/// A log of more than 1,000 requests: the traffic goes into `traffic.csv` beside the scenario
/// (the simulator's traffic-file format, read as the run goes), and `run` replays every
/// imported request from it unchanged.
#[test]
fn a_long_log_writes_its_traffic_to_a_file_the_scenario_names_and_run_replays_it() {
    let dir = scratch("long-log");
    let log = dir.join("long.csv");
    // 4,000 rows of bench's synthetic incident: 1,000 requests a second, about 3,600 requests.
    routersim_import::bench::write_synthetic_log(&log, 4000, Format::Csv).unwrap();
    let imported = import_log(&log, None, &dir.join("out"));
    assert!(imported.requests > 1000, "{}", imported.requests);
    assert!(!imported.explicit_traffic);
    let scenario = std::fs::read_to_string(dir.join("out/scenario.yaml")).unwrap();
    assert!(
        scenario.contains("\ntraffic_file: traffic.csv\n") && !scenario.contains("\ntraffic:"),
        "{scenario}"
    );
    let traffic = std::fs::read_to_string(dir.join("out/traffic.csv")).unwrap();
    assert_eq!(
        traffic.lines().count() as u64,
        imported.requests + 1,
        "a header and one line per request"
    );
    let loaded = routersim_sim::scenario::load_scenario(&dir.join("out/scenario.yaml")).unwrap();
    let replay = routersim_sim::run::run(
        &loaded,
        &routersim_sim::run::RunOptions {
            seed: None,
            out_dir: Some(dir.join("replay")),
            no_trace: true,
            recorder_thread: false,
        },
    )
    .unwrap();
    assert_eq!(replay.summary.requests, imported.requests);
    assert_eq!(imported.summary.requests, imported.requests);
}

/// The regional outage: every request of it failed on east three times (num_retries 2) and fell
/// back to west. LiteLLM's payload shows the first failure and the answer, and its headers count
/// the last group's retries only, so the imported report's attempts are short of the live run's
/// by the east retries: the import says so, with the count of requests it concerns.
#[test]
fn retries_in_a_group_a_request_fell_back_from_are_said_to_be_uncounted() {
    let dir = incident("regional-503");
    let work = scratch("fell-back-note");
    let imported = import_log(
        &dir.join("standard_logging.jsonl.gz"),
        Some(&dir.join("litellm.yaml")),
        &work.join("out"),
    );
    let live: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("live/summary.json")).unwrap())
            .unwrap();
    let fell_back =
        (live["fallback_rate"].as_f64().unwrap() * live["requests"].as_f64().unwrap()).round();
    assert!(
        imported.summary.attempts < live["attempts"].as_u64().unwrap(),
        "{} {}",
        imported.summary.attempts,
        live["attempts"]
    );
    let note = imported
        .notes
        .iter()
        .find(|n| n.contains("fell back"))
        .unwrap_or_else(|| panic!("{:#?}", imported.notes));
    assert!(
        note.starts_with(&format!("{fell_back} requests fell back to another group")),
        "{note}"
    );
    let scenario = std::fs::read_to_string(work.join("out/scenario.yaml")).unwrap();
    assert!(scenario.contains(note.as_str()), "{scenario}");
}
