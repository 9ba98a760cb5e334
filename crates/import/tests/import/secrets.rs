//! Nothing secret survives an import: prompts, responses, API keys, user and team ids, request
//! ids, endpoints, the config's credentials and master key never reach any file of the output
//! folder (the scenario, the router copy, the traffic, the imported report).

use crate::common::{
    Line, all_text, import_log, recorded, scratch, small_config, small_incident, write_log,
};

fn assert_absent(out: &std::path::Path, secrets: &[&str]) {
    let files = all_text(out);
    assert!(files.len() > 10, "{files:?}");
    for (path, text) in files {
        for secret in secrets {
            assert!(!text.contains(secret), "{secret:?} in {}", path.display());
        }
    }
}

#[test]
fn no_prompt_key_user_team_or_request_id_survives() {
    let dir = scratch("secrets");
    let mut lines = small_incident(1_800_000_000.0);
    lines.push(Line::failed(
        1_800_000_061.0,
        "d-a",
        "429",
        "RateLimitError",
        "call-secret-id-123",
    ));
    write_log(&dir.join("log.jsonl"), &lines);
    let out = dir.join("out");
    import_log(&dir.join("log.jsonl"), Some(&small_config(&dir)), &out);
    assert_absent(
        &out,
        &[
            "a prompt that must not be copied",
            "88dc28d0f030c55ed4ab77ed8faf098196cb1c05df778539800c9f1243fe6b4b",
            "user-4711",
            "team-0815",
            "call-secret-id-123",
            "req-1",
            "chatcmpl-",
            "10.1.2.3",
            "sk-live-config-secret",
            "user:pw",
            "hunter2",
            "sk-master-secret",
        ],
    );
    // What routes is kept.
    let router = std::fs::read_to_string(out.join("router.yaml")).unwrap();
    assert!(
        router.contains("num_retries: 2") && router.contains("openai/d-a"),
        "{router}"
    );
}

#[test]
fn a_recorded_litellm_log_leaves_its_prompts_and_keys_behind() {
    let (name, dir) = recorded().into_iter().next().unwrap();
    let out = scratch(&format!("secrets-{name}")).join("out");
    import_log(
        &dir.join("standard_logging.jsonl.gz"),
        Some(&dir.join("litellm.yaml")),
        &out,
    );
    // drive's prompts, the dummy key drive's config gives every deployment, LiteLLM's user id
    // and key label, and the fake providers' addresses.
    assert_absent(
        &out,
        &[
            "routersim drive request",
            "sk-routersim-dummy",
            "default_user_id",
            "litellm_proxy_master_key",
            "127.0.0.1",
        ],
    );
}
