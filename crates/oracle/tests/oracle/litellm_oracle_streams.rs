//! The differential test of streams against real LiteLLM 1.110.2: every recorded stream
//! trace in `tests/fixtures/litellm-oracle/streams/` is replayed through routersim with
//! `profile: litellm-1.110` (its input is the scenario of the same name in
//! `tools/litellm-oracle/stream/scenarios/`), and every decision must agree: attempts
//! (deployment, group, outcome, `max_tokens`), waits, fallback hops (a continuation
//! included), the text and finish reason the caller received, the end, LiteLLM's header
//! counts and the deployments cooling afterwards.

use std::path::Path;

use routersim_oracle::PROFILE;
use routersim_oracle::stream::{CUSTOM_PATH_TIMEOUT, MODEL_ID_QUIRK, check_stream_files};

/// The requests excused from the comparison, each for a reason the harness's module docs give:
/// exactly these, so an exclusion cannot grow unnoticed (a new trace that shows one is added
/// here, with its reason).
const EXPECTED_KNOWN: [(&str, usize, &str); 4] = [
    (
        "09_stall_after_content_stream_timeout",
        0,
        CUSTOM_PATH_TIMEOUT,
    ),
    (
        "111_continuation_breaks_again_resumes_the_list",
        0,
        MODEL_ID_QUIRK,
    ),
    ("23_continuation_chain", 0, MODEL_ID_QUIRK),
    (
        "84_custom_stall_after_content_continued",
        0,
        CUSTOM_PATH_TIMEOUT,
    ),
];

#[test]
fn every_recorded_stream_scenario_agrees_with_litellm_1_110() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = crate_dir.join("../..");
    let traces = crate_dir.join("tests/fixtures/litellm-oracle/streams");
    let inputs = root.join("tools/litellm-oracle/stream/scenarios");
    let mut names: Vec<_> = std::fs::read_dir(&traces)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    names.sort();
    assert!(!names.is_empty(), "no fixtures in {}", traces.display());
    let mut failures = Vec::new();
    let (mut agree, mut known) = (0, 0);
    let mut excused = Vec::new();
    for trace in &names {
        let scenario = inputs.join(trace.file_name().unwrap());
        match check_stream_files(&scenario, trace, PROFILE) {
            Ok(check) if !check.mismatches.is_empty() => {
                failures.extend(check.mismatches.iter().map(ToString::to_string));
            }
            Ok(check) if check.known.is_empty() => agree += 1,
            Ok(check) => {
                known += 1;
                for (request, why) in &check.known {
                    let stem = trace.file_stem().unwrap().to_string_lossy().into_owned();
                    excused.push((stem, *request, *why));
                    println!(
                        "known divergence: {} request {request}: {why}",
                        trace.file_stem().unwrap().to_string_lossy()
                    );
                }
            }
            Err(e) => failures.push(format!("cannot check: {e}")),
        }
    }
    println!(
        "{agree} of {} stream scenarios agree with LiteLLM 1.110.2 ({known} diverge by choice, \
         listed above)",
        names.len()
    );
    let expected: Vec<(String, usize, &str)> = EXPECTED_KNOWN
        .iter()
        .map(|(name, request, why)| ((*name).to_string(), *request, *why))
        .collect();
    assert_eq!(
        excused, expected,
        "the requests excused from the comparison"
    );
    assert!(
        failures.is_empty(),
        "{agree} of {} stream scenarios agree with LiteLLM 1.110.2; disagreements:\n{}",
        names.len(),
        failures.join("\n")
    );
}
