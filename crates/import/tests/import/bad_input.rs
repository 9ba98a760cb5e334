//! Bad input gets a clear error naming the file and line, or a stated assumption; never a
//! panic: a cut-short JSON line (last, or in the middle), unknown fields and columns, rows not
//! sorted by start, a log with no failures, mixed formats, empty and foreign files, a wrong
//! `--format`, a broken gzip, bad CSV cells.

use std::io::Write;
use std::path::Path;

use routersim_import::format::Format;
use routersim_import::{ImportError, ImportOptions, import};

use crate::common::{Line, import_log, scratch, small_config, small_incident, write_log};

fn try_import(log: &Path, out: &Path) -> Result<routersim_import::Imported, ImportError> {
    import(&ImportOptions::new(log, out))
}

#[test]
fn a_cut_short_last_line_is_skipped_and_said_a_cut_line_inside_is_an_error() {
    let dir = scratch("cut");
    let lines = small_incident(1_800_000_000.0);
    let mut text: String = lines.iter().map(|l| l.json() + "\n").collect();
    let whole = text.clone();
    text.push_str(&lines[0].json()[..40]);
    std::fs::write(dir.join("cut-last.jsonl"), &text).unwrap();
    let imported = try_import(&dir.join("cut-last.jsonl"), &dir.join("a")).unwrap();
    let last = lines.len() + 1;
    assert!(
        imported.notes.iter().any(|n| n
            == &format!(
                "line {last}, the last, is cut short (a log still being written?): skipped"
            )),
        "{:?}",
        imported.notes
    );
    let mut inside: Vec<&str> = whole.lines().collect();
    let cut = &inside[10][..50].to_string();
    inside[10] = cut;
    std::fs::write(dir.join("cut-inside.jsonl"), inside.join("\n")).unwrap();
    let e = try_import(&dir.join("cut-inside.jsonl"), &dir.join("b"))
        .unwrap_err()
        .to_string();
    assert!(
        e.ends_with("cut-inside.jsonl:11: the JSON ends too soon (a cut-short line?)"),
        "{e}"
    );
    assert!(!dir.join("b").exists(), "nothing is written on an error");
}

#[test]
fn unknown_fields_are_ignored_and_unknown_columns_named() {
    let dir = scratch("unknown");
    let text: String = small_incident(1_800_000_000.0)
        .iter()
        .map(|l| {
            l.json()
                .replacen('{', r#"{"a_field_from_a_newer_litellm":{"x":[1,2]},"#, 1)
                + "\n"
        })
        .collect();
    std::fs::write(dir.join("log.jsonl"), text).unwrap();
    let imported = try_import(&dir.join("log.jsonl"), &dir.join("a")).unwrap();
    assert_eq!((imported.requests, imported.faults.len()), (300, 1));
    std::fs::write(
        dir.join("calls.csv"),
        "timestamp,model_group,deployment,status,latency_ms,region\n1800000000,g,d,200,50,eu\n1800000001,g,d,503,20,eu\n",
    )
    .unwrap();
    let imported = try_import(&dir.join("calls.csv"), &dir.join("b")).unwrap();
    assert!(
        imported
            .notes
            .iter()
            .any(|n| n == "columns not read: region"),
        "{:?}",
        imported.notes
    );
}

#[test]
fn rows_in_any_order_import_the_same() {
    let dir = scratch("order");
    let config = small_config(&dir);
    let mut lines = small_incident(1_800_000_000.0);
    write_log(&dir.join("ended.jsonl"), &lines);
    // Shuffled far beyond completion order (a deterministic shuffle).
    let n = lines.len();
    for i in 0..n {
        lines.swap(i, (i * 7919 + 13) % n);
    }
    write_log(&dir.join("shuffled.jsonl"), &lines);
    let a = import_log(&dir.join("ended.jsonl"), Some(&config), &dir.join("a"));
    let b = import_log(&dir.join("shuffled.jsonl"), Some(&config), &dir.join("b"));
    assert_eq!(a.requests, 300);
    assert_eq!(
        (a.requests, a.faults.clone()),
        (b.requests, b.faults.clone())
    );
    let (fa, fb) = (&a.faults[0], &b.faults[0]);
    // d-a's failures every 0.4 s from 20 s to 39.6 s, its next success at 40 s: the window
    // ends halfway between.
    assert_eq!(
        (fa.from - a.t0, fa.healthy_at.map(|t| t - a.t0)),
        (20.0, Some(40.0))
    );
    assert!((fa.to.unwrap() - a.t0 - 39.8).abs() < 1e-6, "{fa:?}");
    assert_eq!((fb.from - b.t0, fb.probability), (20.0, 1.0));
    // The traffic comes out by arrival whatever the order of the rows.
    let scenario = std::fs::read_to_string(dir.join("b/scenario.yaml")).unwrap();
    assert!(
        scenario.contains("  - {at: 0s, model: gpt-4o")
            && scenario.contains("  - {at: 0.2s, model: gpt-4o"),
        "{scenario}"
    );
}

#[test]
fn a_log_with_no_failures_has_no_windows_and_says_so() {
    let dir = scratch("healthy");
    let lines: Vec<Line> = (0..50)
        .map(|i| Line::ok(1_800_000_000.0 + f64::from(i), "d-a", format!("r{i}")))
        .collect();
    write_log(&dir.join("log.jsonl"), &lines);
    let imported = try_import(&dir.join("log.jsonl"), &dir.join("out")).unwrap();
    assert!(imported.faults.is_empty());
    assert!(
        imported.notes.contains(
            &"no fault windows: no deployment's failure rate changed in the log".to_string()
        ),
        "{:?}",
        imported.notes
    );
    assert!(
        imported
            .notes
            .iter()
            .any(|n| n.starts_with("router: inferred from the log")),
        "{:?}",
        imported.notes
    );
    let scenario = std::fs::read_to_string(dir.join("out/scenario.yaml")).unwrap();
    assert!(!scenario.contains("faults:"), "{scenario}");
}

#[test]
fn mixed_formats_are_an_error_naming_the_line() {
    let dir = scratch("mixed");
    let mut text: String = small_incident(1_800_000_000.0)[..5]
        .iter()
        .map(|l| l.json() + "\n")
        .collect();
    text.push_str(r#"{"request_id":"r1","startTime":"2026-12-02T07:06:59Z","endTime":"2026-12-02T07:07:00Z","model_group":"g","status":"success","spend":0}"#);
    text.push('\n');
    std::fs::write(dir.join("log.jsonl"), text).unwrap();
    let e = try_import(&dir.join("log.jsonl"), &dir.join("a"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("log.jsonl:6: a spend-log row (it has request_id) in a log of LiteLLM standard logging payloads: mixed formats"), "{e}");
    std::fs::write(
        dir.join("calls.csv"),
        "timestamp,model_group,deployment,status,latency_ms\n1800000000,g,d,200,50\n{\"startTime\": 1}\n",
    )
    .unwrap();
    let e = try_import(&dir.join("calls.csv"), &dir.join("b"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(
            "calls.csv:3: 1 fields where the header has 5 (a cut-short line, or mixed formats?)"
        ),
        "{e}"
    );
}

#[test]
fn empty_foreign_and_misnamed_inputs_are_clear_errors() {
    let dir = scratch("foreign");
    let cases: [(&str, &[u8], &str); 5] = [
        ("empty.jsonl", b"\n\n", "empty.jsonl: the log is empty"),
        (
            "notes.txt",
            b"hello world\n",
            "notes.txt: line 1: not a log routersim import reads",
        ),
        (
            "other.jsonl",
            b"{\"level\":\"info\"}\n",
            "other.jsonl: line 1: a JSON object that is neither",
        ),
        (
            "broken.jsonl.gz",
            &[0x1f, 0x8b, 8, 0, 0, 0],
            "broken.jsonl.gz: ",
        ),
        (
            "calls.csv",
            b"timestamp,model_group,deployment,status,latency_ms\nyesterday,g,d,200,50\n",
            "calls.csv:2: timestamp: \"yesterday\" is neither RFC 3339 nor Unix seconds",
        ),
    ];
    for (name, bytes, expected) in cases {
        std::fs::File::create(dir.join(name))
            .unwrap()
            .write_all(bytes)
            .unwrap();
        let e = try_import(&dir.join(name), &dir.join("out"))
            .unwrap_err()
            .to_string();
        assert!(e.contains(expected), "{name}: {e}");
    }
    let lines = small_incident(1_800_000_000.0);
    write_log(&dir.join("log.jsonl"), &lines);
    let mut options = ImportOptions::new(dir.join("log.jsonl"), dir.join("out"));
    options.format = Some(Format::Csv);
    let e = import(&options).unwrap_err().to_string();
    assert!(e.ends_with("--format csv was given, but the log is LiteLLM standard logging payload (--format litellm)"), "{e}");
    assert_eq!(Format::from_name("spend-logs"), Some(Format::SpendLogs));
}

#[test]
fn a_config_that_does_not_load_is_an_error_naming_it() {
    let dir = scratch("bad-config");
    write_log(&dir.join("log.jsonl"), &small_incident(1_800_000_000.0));
    std::fs::write(dir.join("proxy.yaml"), "model_list: 3\n").unwrap();
    let mut options = ImportOptions::new(dir.join("log.jsonl"), dir.join("out"));
    options.config = Some(dir.join("proxy.yaml"));
    let e = import(&options).unwrap_err().to_string();
    assert!(
        e.starts_with(&dir.join("proxy.yaml").display().to_string()),
        "{e}"
    );
}

#[test]
fn absurd_times_are_errors_naming_the_line_and_absurd_retry_afters_are_not_read() {
    let dir = scratch("absurd");
    let header = "timestamp,model_group,deployment,status,latency_ms,retry_after_s\n";
    let cases = [
        (
            "1e300,g,d,200,50,\n",
            "calls.csv:2: the start (1e300) is not an instant between 1970 and 2286",
        ),
        (
            "1800000000,g,d,200,1e12,\n",
            "calls.csv:2: a call of 1000000000 s: longer than a day",
        ),
        (
            "-5,g,d,200,50,\n",
            "calls.csv:2: the start (-5e0) is not an instant between 1970 and 2286",
        ),
    ];
    for (row, expected) in cases {
        std::fs::write(dir.join("calls.csv"), format!("{header}{row}")).unwrap();
        let e = try_import(&dir.join("calls.csv"), &dir.join("out"))
            .unwrap_err()
            .to_string();
        assert!(e.ends_with(expected), "{e}");
    }
    let rows: String = (0..20)
        .map(|i| {
            format!(
                "{},g,d,{},50,1e300\n",
                1_800_000_000 + i,
                if i % 2 == 0 { 429 } else { 200 }
            )
        })
        .collect();
    std::fs::write(dir.join("calls.csv"), format!("{header}{rows}")).unwrap();
    let imported = try_import(&dir.join("calls.csv"), &dir.join("out")).unwrap();
    assert!(
        imported.faults.iter().all(|f| f.retry_after.is_none()),
        "{:?}",
        imported.faults
    );
}
