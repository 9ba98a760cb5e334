//! A scenario's inline router section reads numbers as PyYAML (LiteLLM) does, like a
//! `router_file`: CRLF line endings, `1_000`, `"1000"`, `010` (octal 8), `1:30` (90).

use std::path::Path;
use std::time::Duration;

use routersim_sim::scenario::parse_scenario;

#[test]
fn the_inline_router_reads_numbers_as_litellm_sees_them() {
    let text = "duration: 10s
router:
  model_list:
    - {model_name: \"openai/*\", litellm_params: {model: \"openai/*\", rpm: 1_000, tpm: \"100000\"}, model_info: {id: oa}}
    - {model_name: \"*\", litellm_params: {model: \"anthropic/*\", rpm: 010, tpm: \"1_000\"}, model_info: {id: any}}
  router_settings:
    num_retries: \"2\"
    timeout: 1:30
    cooldown_time: 1_0
traffic:
  - {model: openai/gpt-4o, rate: 2/s}
  - {model: claude-3, rate: 1/s}
"
    .replace('\n', "\r\n");
    let s = match parse_scenario(&text, Path::new("s.yaml")) {
        Ok(s) => s,
        Err(e) => panic!("should load: {e}"),
    };
    let d = &s.router.deployments;
    assert_eq!((d[0].rpm, d[0].tpm), (Some(1000), Some(100_000)));
    assert_eq!((d[1].rpm, d[1].tpm), (Some(8), Some(1000)));
    assert_eq!(s.router.settings.num_retries, 2);
    assert_eq!(s.router.settings.timeout, Some(Duration::from_secs(90)));
    assert_eq!(s.router.settings.cooldown_time, Duration::from_secs(10));
}
