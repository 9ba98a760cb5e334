//! `bench --proxy` (and `--serve`'s ratios): the wire benches measure both sides in one run
//! and print each ratio, with no failed call on either side.

use crate::common::routersim;

/// The number after `key` in `line` (up to the next space, comma or parenthesis).
fn number_after(line: &str, key: &str) -> f64 {
    let rest = &line[line
        .find(key)
        .unwrap_or_else(|| panic!("{key:?} in {line:?}"))
        + key.len()..];
    let end = rest.find([' ', ',', ')']).unwrap_or(rest.len());
    rest[..end]
        .parse()
        .unwrap_or_else(|_| panic!("a number after {key:?} in {line:?}"))
}

/// The line of `stdout` that starts with `prefix`.
fn line_starting<'a>(stdout: &'a str, prefix: &str) -> &'a str {
    stdout
        .lines()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("a line starting {prefix:?} in {stdout}"))
}

#[test]
fn bench_proxy_prints_direct_proxy_and_their_ratio_from_one_run() {
    let out = routersim(&["bench", "--proxy", "--phase", "100ms", "--connections", "4"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for kind in ["JSON", "SSE "] {
        let line = line_starting(&stdout, &format!("{kind} on 4 connections: direct "));
        let direct = number_after(line, "direct ");
        let proxy = number_after(line, "proxy ");
        let ratio = number_after(line, "proxy/direct ");
        assert!(direct > 0.0 && proxy > 0.0, "{line}");
        // A median of per-round ratios: positive, and the proxy not ten times faster.
        assert!(ratio > 0.0 && ratio < 10.0, "{line}");
        assert!(
            line.ends_with("(0 errors)"),
            "every call answered whole: {line}"
        );
    }
    // Threads' CPU time comes from Linux's schedstat; without it the lines say so.
    let schedstat = std::path::Path::new("/proc/thread-self/schedstat").exists();
    assert_eq!(
        !schedstat,
        stdout.contains("CPU per JSON request: not measured"),
        "{stdout}"
    );
    for kind in ["JSON", "SSE"].into_iter().filter(|_| schedstat) {
        let line = line_starting(&stdout, &format!("CPU per {kind} request: direct "));
        let direct_load = number_after(line, "direct ");
        let direct_provider = number_after(line, "load generator + ");
        let direct = number_after(line, "provider = ");
        // "proxied A + B + C proxy = T µs"
        let proxied = &line[line.find("proxied ").unwrap_or(0) + "proxied ".len()..];
        let parts: Vec<f64> = proxied[..proxied.find(" proxy = ").unwrap_or(0)]
            .split(" + ")
            .map(|n| n.parse().unwrap_or_else(|_| panic!("a number in {line:?}")))
            .collect();
        let [proxied_load, proxied_provider, proxy] = parts[..] else {
            panic!("three CPU figures after `proxied` in {line:?}");
        };
        let proxied_total = number_after(proxied, "proxy = ");
        let bound = number_after(line, "cores' bound on proxy/direct ");
        for v in [
            direct_load,
            direct_provider,
            proxied_load,
            proxied_provider,
            proxy,
        ] {
            assert!(v > 0.0, "every thread spends CPU per request: {line}");
        }
        // The proxy answers the caller and calls the provider: more work than the provider's.
        assert!(proxy > proxied_provider, "{line}");
        assert!(
            (direct - direct_load - direct_provider).abs() < 0.11,
            "{line}"
        );
        let sum = proxied_load + proxied_provider + proxy;
        assert!((proxied_total - sum).abs() < 0.16, "{line}");
        assert!((bound - direct / proxied_total).abs() < 0.011, "{line}");
    }
    let added = line_starting(&stdout, "added p50 on 1 connection: ");
    assert!(number_after(added, "direct p50 ") > 0.0, "{added}");
    assert!(
        stdout.contains("medians of 5 rounds of 100 ms phases"),
        "{stdout}"
    );
}
