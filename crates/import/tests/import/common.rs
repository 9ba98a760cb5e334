//! Helpers: the fixtures, a scratch folder, the recorded incidents, reading reports.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use routersim_import::{ImportOptions, Imported, import};

/// `crates/import/tests/fixtures`.
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// A fresh, empty folder for one test.
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("routersim-import-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The recorded incidents: the committed ones (two recordings of each: `recorded/`, and
/// `recorded-2/`, recorded one incident at a time, whose regional outage ends with failures in
/// the same slot as the first successes after it), more recordings of the 429 storm alone
/// (`recorded-storms/N/429-storm`: live runs whose cooldowns ran late against the replay's, see
/// `closes_loop.rs`), and (with `ROUTERSIM_IMPORT_RECORDED=DIR`, which `.ci/run` sets after
/// re-recording them) the fresh ones; each with its name.
#[allow(
    clippy::disallowed_methods,
    reason = "the test's environment names a fresh recording"
)]
pub fn recorded() -> Vec<(String, PathBuf)> {
    let mut roots = vec![fixtures().join("recorded"), fixtures().join("recorded-2")];
    if let Ok(fresh) = std::env::var("ROUTERSIM_IMPORT_RECORDED")
        && !fresh.is_empty()
    {
        roots.push(PathBuf::from(fresh));
    }
    let mut out = Vec::new();
    for root in roots {
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
            .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
            .map(|e| e.unwrap().path())
            .filter(|p| p.join("litellm.yaml").exists())
            .collect();
        dirs.sort();
        assert!(
            dirs.len() >= 3,
            "fewer than three incidents in {}",
            root.display()
        );
        for dir in dirs {
            let name = dir.file_name().unwrap().to_string_lossy().to_string();
            out.push((name, dir));
        }
    }
    let storms = fixtures().join("recorded-storms");
    let mut more: Vec<PathBuf> = std::fs::read_dir(&storms)
        .unwrap_or_else(|e| panic!("{}: {e}", storms.display()))
        .map(|e| e.unwrap().path().join("429-storm"))
        .collect();
    more.sort();
    assert!(!more.is_empty(), "no recordings in {}", storms.display());
    for dir in more {
        assert!(dir.join("litellm.yaml").exists(), "{}", dir.display());
        out.push(("429-storm".to_string(), dir));
    }
    out
}

/// Imports `log` with `config` into `out`.
pub fn import_log(log: &Path, config: Option<&Path>, out: &Path) -> Imported {
    let mut options = ImportOptions::new(log, out);
    options.config = config.map(Path::to_path_buf);
    import(&options).unwrap_or_else(|e| panic!("{}: {e}", log.display()))
}

/// A provider call of a live report's `provider_calls.csv`.
#[derive(Clone, Debug)]
pub struct ProviderCall {
    pub at_ms: f64,
    pub deployment: String,
    pub outcome: String,
    pub status: Option<u16>,
    pub retry_after_ms: Option<f64>,
    pub latency_ms: f64,
    pub tokens: u32,
    pub stream: bool,
    pub request_id: String,
}

/// `dir/live/provider_calls.csv`.
pub fn provider_calls(dir: &Path) -> Vec<ProviderCall> {
    let mut reader = csv::Reader::from_path(dir.join("live/provider_calls.csv")).unwrap();
    reader
        .deserialize::<BTreeMap<String, String>>()
        .map(|row| {
            let row = row.unwrap();
            let get = |k: &str| row.get(k).cloned().unwrap_or_default();
            ProviderCall {
                at_ms: get("at_ms").parse().unwrap(),
                deployment: get("deployment_id"),
                outcome: get("outcome"),
                status: get("status").parse().ok(),
                retry_after_ms: get("retry_after_ms").parse().ok(),
                latency_ms: get("latency_ms").parse().unwrap(),
                tokens: get("tokens").parse().unwrap_or(0),
                stream: get("stream") == "true",
                request_id: get("request_id"),
            }
        })
        .collect()
}

/// Calls per deployment in a report's `attempts.csv`.
pub fn attempts_by_deployment(report: &Path) -> BTreeMap<String, u64> {
    let mut reader = csv::Reader::from_path(report.join("attempts.csv")).unwrap();
    let mut out = BTreeMap::new();
    for row in reader.deserialize::<BTreeMap<String, String>>() {
        *out.entry(row.unwrap()["deployment_id"].clone())
            .or_default() += 1;
    }
    out
}

/// Failed calls per deployment and failure kind in a report's `attempts.csv` (a cut stream's
/// kind is its error's, as in `provider_calls.csv` after `break:`).
pub fn failures_by_kind(report: &Path) -> BTreeMap<(String, String), u64> {
    let mut reader = csv::Reader::from_path(report.join("attempts.csv")).unwrap();
    let mut out = BTreeMap::new();
    for row in reader.deserialize::<BTreeMap<String, String>>() {
        let row = row.unwrap();
        if row["outcome"] != "ok" {
            *out.entry((row["deployment_id"].clone(), row["outcome"].clone()))
                .or_default() += 1;
        }
    }
    out
}

/// Every file under `dir`, as text (lossy), with its path.
pub fn all_text(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    paths.sort();
    for path in paths {
        if path.is_dir() {
            out.extend(all_text(&path));
        } else {
            out.push((
                path.clone(),
                String::from_utf8_lossy(&std::fs::read(&path).unwrap()).to_string(),
            ));
        }
    }
    out
}

/// One LiteLLM standard logging payload line, as the proxy writes it (the fields the import
/// reads, and a few it must never copy).
#[derive(Clone, Debug)]
pub struct Line {
    pub start: f64,
    pub latency: f64,
    pub group: &'static str,
    pub deployment: &'static str,
    /// `None`: success; `Some((code, class))`: failure.
    pub error: Option<(&'static str, &'static str)>,
    pub retry_after: Option<&'static str>,
    pub call_id: String,
}

impl Line {
    pub fn ok(start: f64, deployment: &'static str, call_id: impl Into<String>) -> Self {
        Self {
            start,
            latency: 0.05,
            group: "gpt-4o",
            deployment,
            error: None,
            retry_after: None,
            call_id: call_id.into(),
        }
    }

    pub fn failed(
        start: f64,
        deployment: &'static str,
        code: &'static str,
        class: &'static str,
        call_id: impl Into<String>,
    ) -> Self {
        Self {
            error: Some((code, class)),
            ..Self::ok(start, deployment, call_id)
        }
    }

    pub fn json(&self) -> String {
        let mut v = serde_json::json!({
            "id": format!("chatcmpl-{}", self.call_id),
            "litellm_call_id": self.call_id,
            "trace_id": format!("trace-{}", self.call_id),
            "status": if self.error.is_some() { "failure" } else { "success" },
            "startTime": self.start,
            "endTime": self.start + self.latency,
            "completionStartTime": self.start + self.latency,
            "model": format!("openai/{}", self.deployment),
            "model_group": self.group,
            "model_id": self.deployment,
            "api_base": format!("http://10.1.2.3/{}/v1", self.deployment),
            "prompt_tokens": 12,
            "completion_tokens": if self.error.is_some() { 0 } else { 20 },
            "messages": [{"role": "user", "content": "a prompt that must not be copied"}],
            "metadata": {"user_api_key_hash": "88dc28d0f030c55ed4ab77ed8faf098196cb1c05df778539800c9f1243fe6b4b",
                         "user_api_key_user_id": "user-4711", "user_api_key_team_id": "team-0815"},
            "request_tags": ["eu"],
            "model_parameters": {"max_tokens": 20},
            "hidden_params": {"additional_headers": {}},
        });
        if let Some((code, class)) = self.error {
            v["error_information"] = serde_json::json!({"error_code": code, "error_class": class,
                "error_message": "the provider said no"});
            if let Some(ra) = self.retry_after {
                v["hidden_params"]["additional_headers"]["retry-after"] = serde_json::json!(ra);
            }
        }
        v.to_string()
    }
}

/// Writes `lines` (in the order given) as a JSON-lines log.
pub fn write_log(path: &Path, lines: &[Line]) {
    let text: String = lines.iter().map(|l| l.json() + "\n").collect();
    std::fs::write(path, text).unwrap();
}

/// A small incident: `d-a` fails with 503 from 20 s to 40 s of a minute, one request every
/// 200 ms alternating between `d-a` and `d-b` (a failure on `d-a` is retried on `d-b`);
/// rows in the order calls ended.
pub fn small_incident(t0: f64) -> Vec<Line> {
    let mut lines = Vec::new();
    for i in 0..300 {
        let at = t0 + f64::from(i) * 0.2;
        let id = format!("req-{i}");
        let on_a = i % 2 == 0;
        if on_a && (20.0..40.0).contains(&(at - t0)) {
            lines.push(Line::failed(
                at,
                "d-a",
                "503",
                "ServiceUnavailableError",
                id.clone(),
            ));
            lines.push(Line::ok(at + 0.06, "d-b", id));
        } else {
            lines.push(Line::ok(at, if on_a { "d-a" } else { "d-b" }, id));
        }
    }
    lines.sort_by(|a, b| (a.start + a.latency).total_cmp(&(b.start + b.latency)));
    lines
}

/// A proxy config for [`small_incident`].
pub fn small_config(dir: &Path) -> PathBuf {
    let path = dir.join("proxy.yaml");
    std::fs::write(
        &path,
        "model_list:\n  - {model_name: gpt-4o, litellm_params: {model: openai/d-a, api_key: sk-live-config-secret, api_base: 'https://user:pw@10.1.2.3/d-a/v1'}, model_info: {id: d-a}}\n  - {model_name: gpt-4o, litellm_params: {model: openai/d-b, api_key: os.environ/OPENAI_KEY}, model_info: {id: d-b}}\nrouter_settings: {num_retries: 2, redis_password: hunter2}\ngeneral_settings: {master_key: sk-master-secret}\n",
    )
    .unwrap();
    path
}
