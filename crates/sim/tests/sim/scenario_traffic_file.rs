//! `traffic_file: requests.csv`: rows become arrivals, merged in time with `traffic`; every
//! mistake names the file, line and column before anything runs.

use std::path::{Path, PathBuf};
use std::time::Duration;

use routersim_sim::scenario::{ScenarioError, load_scenario};
use routersim_sim::traffic::Arrivals;

fn temp_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("traffic-file-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("logs")).expect("temp dir");
    dir
}

const SCENARIO: &str = "duration: 10s\nrouter:\n  model_list:\n    - {model_name: gpt, litellm_params: {model: openai/gpt}}\n    - {model_name: claude, litellm_params: {model: anthropic/claude}}\n  router_settings:\n    model_group_alias: {smart: gpt}\ntraffic_file: logs/requests.csv\n";

/// A scenario beside `logs/requests.csv` holding `csv`, with `extra` YAML appended.
fn scenario_with(name: &str, csv: &str, extra: &str) -> PathBuf {
    let dir = temp_dir(name);
    std::fs::write(dir.join("logs/requests.csv"), csv).expect("write");
    let file = dir.join("s.yaml");
    std::fs::write(&file, format!("{SCENARIO}{extra}")).expect("write");
    file
}

fn error(name: &str, csv: &str) -> ScenarioError {
    load_scenario(&scenario_with(name, csv, "")).expect_err("should fail")
}

/// The error as printed, with the temp dir cut off.
fn shown(e: &ScenarioError) -> String {
    let text = e.to_string();
    let cut = text
        .find("logs/")
        .or_else(|| text.find("s.yaml"))
        .unwrap_or(0);
    text[cut..].to_string()
}

#[test]
fn rows_become_arrivals_merged_in_time_with_traffic() {
    let csv = "# replayed from the gateway log\n\
               model,at,stream,input_tokens,output_tokens,tags\n\
               gpt,0.5s,,,,\n\
               smart,1s,true,1200,300,eu; batch\n\
               claude,1s,false,,40,\n\
               gpt,2500ms,,7,,\n";
    let file = scenario_with(
        "merge",
        csv,
        "traffic:\n  - {at: 1s, model: claude, input_tokens: 9}\n",
    );
    let s = load_scenario(&file).expect("valid");
    assert_eq!(s.traffic.len(), 1);
    let f = s.traffic_file.as_ref().expect("the file");
    assert_eq!(f.rows, 4);
    assert_eq!(
        f.path,
        file.parent().expect("dir").join("logs/requests.csv")
    );
    assert_eq!(s.expected_requests(), 5.0);
    assert_eq!(Arrivals::expected_count(&s.traffic), 1.0);

    let got: Vec<_> = s
        .arrivals()
        .map(|a| {
            let r = a.request;
            (
                a.at,
                r.id,
                r.model.to_string(),
                r.stream,
                r.input_tokens,
                r.output_tokens,
                r.tags,
            )
        })
        .collect();
    let ms = Duration::from_millis;
    let none: Vec<String> = Vec::new();
    assert_eq!(
        got,
        vec![
            (ms(500), 0, "gpt".into(), false, 500, None, none.clone()),
            // At equal times, `traffic` entries come first, then the file's rows in order.
            (ms(1000), 1, "claude".into(), false, 9, None, none.clone()),
            (
                ms(1000),
                2,
                "smart".into(),
                true,
                1200,
                Some(300),
                vec!["eu".to_string(), "batch".to_string()]
            ),
            (
                ms(1000),
                3,
                "claude".into(),
                false,
                500,
                Some(40),
                none.clone()
            ),
            (ms(2500), 4, "gpt".into(), false, 7, None, none),
        ]
    );
}

#[test]
fn only_at_and_model_are_required() {
    let file = scenario_with("minimal", "at,model\n0s,gpt\n10s,gpt\n", "");
    let s = load_scenario(&file).expect("valid");
    assert_eq!(s.arrivals().count(), 2);
}

#[test]
fn each_mistake_names_file_line_and_column() {
    let cases = [
        (
            "at,model\n1s,gpt\n12,gpt\n",
            "logs/requests.csv:3: at: expected a duration such as 300ms, 1.5s, 2m or 1h, found \
             \"12\"; write the unit too (12s or 12ms)",
        ),
        (
            "at,model\n2s,gpt\n1s,gpt\n",
            "logs/requests.csv:3: at: at 1s is before the previous row's 2s: rows must be in time \
             order (sort the file by `at`; equal times keep file order)",
        ),
        (
            "at,model\n11s,gpt\n",
            "logs/requests.csv:2: at: at 11s is after the scenario's duration (10s)",
        ),
        (
            "at,model\n1s,gtp\n",
            "logs/requests.csv:2: model: no model group or alias \"gtp\"; the router has: claude, \
             gpt, smart",
        ),
        (
            "at,model,stream\n1s,gpt,yes\n",
            "logs/requests.csv:2: stream: expected true or false (or nothing), found \"yes\"",
        ),
        (
            "at,model,input_tokens\n1s,gpt,-5\n",
            "logs/requests.csv:2: input_tokens: expected a whole number from 0 to 4294967295, \
             found \"-5\"",
        ),
        (
            "at,model,colour\n1s,gpt,red\n",
            "logs/requests.csv:1: unknown column \"colour\"; the columns are at, model, stream, \
             input_tokens, output_tokens, tags (at and model are required)",
        ),
        (
            "at,stream\n1s,true\n",
            "logs/requests.csv:1: missing the column \"model\"; the columns are at, model, \
             stream, input_tokens, output_tokens, tags (at and model are required)",
        ),
        (
            "at,model\n1s,gpt\n2s,gpt,true\n",
            "logs/requests.csv:3: expected 2 cells (as the header has), found 3",
        ),
        (
            "at,model\n1s,\n",
            "logs/requests.csv:2: model: expected a model group or alias, found nothing",
        ),
        (
            "",
            "logs/requests.csv:1: expected a header line naming the columns; the columns are at, \
             model, stream, input_tokens, output_tokens, tags (at and model are required)",
        ),
    ];
    for (i, (csv, expected)) in cases.into_iter().enumerate() {
        assert_eq!(shown(&error(&format!("case-{i}"), csv)), expected, "{csv}");
    }
}

#[test]
fn a_line_without_end_stops_at_64_kib() {
    let csv = format!("at,model\n1s,gpt\n{}", "x".repeat(100_000));
    assert_eq!(
        shown(&error("long-line", &csv)),
        "logs/requests.csv:3: a line longer than 64 KiB: is this a CSV file of requests?"
    );
}

#[test]
fn a_missing_file_is_the_scenarios_mistake() {
    let dir = temp_dir("missing");
    let file = dir.join("s.yaml");
    std::fs::write(&file, SCENARIO).expect("write");
    let e = load_scenario(&file).expect_err("missing");
    assert_eq!(e.file, file);
    assert_eq!((e.line, e.path.as_str()), (Some(8), "traffic_file"));
    assert!(e.message.starts_with("cannot read "), "{e}");
}

#[test]
fn a_file_changed_after_loading_ends_the_arrivals_with_an_error() {
    let file = scenario_with("changed", "at,model\n1s,gpt\n2s,gpt\n3s,gpt\n", "");
    let s = load_scenario(&file).expect("valid");
    std::fs::write(
        file.parent().expect("dir").join("logs/requests.csv"),
        "at,model\n1s,gpt\n",
    )
    .expect("write");
    let mut arrivals = s.arrivals();
    assert_eq!(arrivals.by_ref().count(), 1);
    let e = arrivals.take_error().expect("the change is an error");
    assert!(
        e.message
            .contains("the file changed after the scenario was loaded: it had 3 rows, now 1"),
        "{e}"
    );
}
