//! A broken stream's partial output in the reports: under `profile: litellm-1.110` (LiteLLM
//! 1.110.2 logs the usage of the chunks delivered before the break) `requests.csv` and
//! `summary.json` bill what the caller received; the documented rules bill nothing.

use crate::common::{routersim, scratch_dir};

fn scenario(profile: &str) -> String {
    format!(
        "duration: 1m\nrouter:\n  model_list:\n    - {{model_name: g, litellm_params: {{model: openai/a}}, model_info: {{id: a}}}}\n  router_settings:\n    profile: {profile}\nproviders:\n  a: {{ttft: 100ms, inter_token: 10ms, script: [{{stream_break: {{after_tokens: 20}}}}]}}\ntraffic:\n  - {{at: 0s, model: g, stream: true, output_tokens: 50}}\n"
    )
}

#[test]
fn a_broken_stream_bills_its_partial_output_under_1_110_only() {
    for (profile, billed) in [("litellm-1.110", "20"), ("litellm", "0")] {
        let dir = scratch_dir(&format!("stream-billing-{profile}"));
        let file = dir.join("s.yaml");
        std::fs::write(&file, scenario(profile)).unwrap();
        let out = dir.join("out");
        let output = routersim(&[
            "run",
            file.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let csv = std::fs::read_to_string(out.join("requests.csv")).unwrap();
        let mut lines = csv.lines();
        let header: Vec<&str> = lines.next().unwrap().split(',').collect();
        let row: Vec<&str> = lines.next().unwrap().split(',').collect();
        let col = |name: &str| row[header.iter().position(|h| *h == name).unwrap()];
        assert_eq!(col("stream_outcome"), "broken_after_content", "{profile}");
        assert_eq!(col("tokens_delivered"), "20", "{profile}");
        assert_eq!(col("tokens_billed"), billed, "{profile}");
        let summary: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap())
                .unwrap();
        assert_eq!(
            summary["streams"]["tokens_billed"].to_string(),
            billed,
            "{profile}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
