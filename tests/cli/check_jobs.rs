//! `routersim check --jobs N`: runs at once on N threads, with the same table, reports and
//! junit.xml, byte for byte, as one after the other.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::common::{routersim, scratch_dir};

/// A scenario of about 100 requests whose one deployment fails for a while (`rate` varies it).
fn scenario(name: &str, rate: u32) -> String {
    format!(
        "name: {name}
duration: 20s
router:
  model_list:
    - {{model_name: A, litellm_params: {{model: openai/a}}, model_info: {{id: a1}}}}
    - {{model_name: A, litellm_params: {{model: azure/a}}, model_info: {{id: a2}}}}
  router_settings: {{num_retries: 2, allowed_fails: 1}}
providers:
  a1: {{latency: {{p50: 300ms, p99: 1s}}}}
  a2: {{latency: {{p50: 400ms, p99: 1500ms}}}}
faults:
  - {{deployment: a1, from: 5s, to: 10s, error: service_unavailable}}
traffic:
  - {{model: A, rate: {rate}/s}}
expect:
  - {{metric: failed, max: 0}}
"
    )
}

/// Every file under `dir`, by its path below `dir`.
fn files(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut found = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let bytes = std::fs::read(&path).unwrap();
                found.insert(path.strip_prefix(dir).unwrap().to_path_buf(), bytes);
            }
        }
    }
    found
}

/// `text` with every `time="…"` attribute's value blanked.
fn without_wall_times(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(" time=\"") {
        let value = at + " time=\"".len();
        out.push_str(&rest[..value]);
        let end = rest[value..].find('"').map_or(rest.len(), |e| value + e);
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

#[test]
fn check_jobs_writes_the_same_bytes_as_a_serial_check() {
    let dir = scratch_dir("check-jobs");
    let scenarios = dir.join("scenarios");
    std::fs::create_dir_all(scenarios.join("sub")).unwrap();
    std::fs::write(scenarios.join("a.yaml"), scenario("a", 5)).unwrap();
    std::fs::write(scenarios.join("b.yaml"), scenario("b", 2)).unwrap();
    std::fs::write(scenarios.join("sub/c.yaml"), scenario("c", 8)).unwrap();
    // A case that does not load sits between the others: its row keeps its place.
    std::fs::write(scenarios.join("b2.yaml"), "name: broken\nduration: 1s\n").unwrap();
    let run = |jobs: &str| {
        let out = dir.join(format!("out-{jobs}"));
        let o = routersim(&[
            "check",
            scenarios.to_str().unwrap(),
            "--seeds",
            "1..4",
            "--jobs",
            jobs,
            "--out",
            out.to_str().unwrap(),
        ]);
        (o, out)
    };
    let (serial, serial_out) = run("1");
    // An error case among them: exit 2 either way.
    assert_eq!(serial.status.code(), Some(2), "{serial:?}");
    let serial_stdout = String::from_utf8(serial.stdout).unwrap();
    assert!(serial_stdout.contains("b2.yaml"), "{serial_stdout}");
    let serial_files = files(&serial_out);
    // 3 scenarios × 4 seeds, each with its summary.
    let summaries = serial_files
        .keys()
        .filter(|p| p.ends_with("summary.json"))
        .count();
    assert_eq!(summaries, 12, "{:?}", serial_files.keys());
    for jobs in ["2", "3"] {
        let (parallel, parallel_out) = run(jobs);
        assert_eq!(parallel.status.code(), Some(2));
        // The table too (rows in path and seed order, not completion order).
        assert_eq!(
            String::from_utf8(parallel.stdout).unwrap(),
            serial_stdout.replace("out-1", &format!("out-{jobs}")),
            "--jobs {jobs}"
        );
        let parallel_files = files(&parallel_out);
        assert_eq!(
            parallel_files.keys().collect::<Vec<_>>(),
            serial_files.keys().collect::<Vec<_>>()
        );
        // The pages name their folder (`out-1`, `out-2`), and junit.xml's `time` attributes
        // are wall seconds (different from any run to the next): the only differences allowed.
        let same = |bytes: &[u8]| {
            without_wall_times(
                &String::from_utf8_lossy(bytes).replace(&format!("out-{jobs}"), "out-1"),
            )
        };
        for (path, bytes) in &serial_files {
            assert!(
                same(&parallel_files[path]) == without_wall_times(&String::from_utf8_lossy(bytes)),
                "--jobs {jobs}: {} differs",
                path.display()
            );
        }
    }
}

#[test]
fn check_jobs_0_is_refused() {
    let o = routersim(&["check", "scenarios/ci", "--jobs", "0"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--jobs"));
}
