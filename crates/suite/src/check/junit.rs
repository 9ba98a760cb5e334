//! `junit.xml` as Jenkins, GitLab and GitHub's test reporters read it.
//!
//! - One `<testsuite>` per run (scenario × seed), named `<classname> seed-<N>`, with
//!   `<properties>` `seed`, `scenario` (the path as discovered), `routersim_version` and, for
//!   a run that happened, `virtual_seconds` (the run's length in virtual time).
//! - One `<testcase>` per `expect` line (`seed-<N> expect <line as written>`) and one for the
//!   golden (`seed-<N> golden`: failed when it changed, `<skipped>` when there is none); a
//!   scenario that did not load is one `load` case, a run that could not happen one
//!   `seed-<N> run` case, each with an `<error>`.
//! - `classname` is the scenario path with every `.` made `_` (`scenarios/ci/storm_yaml`):
//!   Jenkins splits a classname at its last dot into package and class, which would turn
//!   `storm.yaml` into a class `yaml` of a package `scenarios/ci/storm`.
//! - `time` is wall-clock seconds, what CI dashboards add up and show as the suite's
//!   duration (a virtual time there made a 0.3 s check read as a 30-minute one): the golden
//!   case carries the run's wall time (it checks the run as a whole), `expect` cases `0`, so a
//!   suite's cases add up to its time, and the suites to the root's. The `time` attributes are
//!   the only part of the file that changes from one check of the same input to the next.

use routersim_report::summary::Summary;

use super::case::{CaseResult, CheckReport, GoldenStatus, assertion};
use routersim_sim::expect::format_value;

/// The suite's name in junit.xml.
pub const SUITE_NAME: &str = "routersim check";

/// A testcase's outcome.
enum Outcome {
    Pass,
    Failure {
        kind: &'static str,
        message: String,
        body: String,
    },
    Error {
        message: String,
        body: String,
    },
    Skipped(String),
}

/// One `<testcase>`.
struct TestCase {
    name: String,
    time: f64,
    outcome: Outcome,
    system_out: Option<String>,
}

/// The `classname` of a scenario's cases (see the module docs).
pub fn classname(case: &CaseResult) -> String {
    case.scenario.display().to_string().replace('.', "_")
}

/// Escapes text for XML content and attribute values; characters XML 1.0 cannot hold become
/// `?`, so any message makes a well-formed file.
pub fn xml_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            '\t' => out.push_str("&#9;"),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('?'),
            c => out.push(c),
        }
    }
    out
}

/// Element content: like [`xml_escape`] but keeps line breaks and tabs readable.
fn xml_text(text: &str) -> String {
    xml_escape(text)
        .replace("&#10;", "\n")
        .replace("&#9;", "\t")
}

/// The run's virtual duration in seconds.
fn virtual_seconds(summary: &Summary) -> f64 {
    summary.run_end_ms / 1000.0
}

/// Wall-clock seconds as junit's `time`: to the millisecond, without float noise (`0`,
/// `0.052`).
fn seconds(time: f64) -> String {
    format_value((time * 1000.0).round() / 1000.0)
}

/// An `expect` line as written, without its measured value.
fn written(line: &str) -> &str {
    line.rsplit_once(" (").map_or(line, |(head, _)| head)
}

/// Every testcase of one run, in order.
fn test_cases(case: &CaseResult) -> Vec<TestCase> {
    let prefix = case.name();
    let Some(seed) = case.seed.filter(|_| case.summary.is_some()) else {
        // The scenario did not load, or the run did not happen.
        let name = if case.seed.is_some() {
            format!("{prefix} run")
        } else {
            prefix
        };
        return vec![TestCase {
            name,
            time: 0.0,
            outcome: Outcome::Error {
                message: case.headline(),
                body: case.failure_lines().join("\n"),
            },
            system_out: None,
        }];
    };
    let mut cases: Vec<TestCase> = case
        .expectations
        .iter()
        .map(|e| {
            let line = assertion(e);
            TestCase {
                name: format!("seed-{seed} expect {}", written(&line)),
                time: 0.0,
                outcome: if e.passed {
                    Outcome::Pass
                } else {
                    Outcome::Failure {
                        kind: "expectation",
                        message: line,
                        body: e.to_string(),
                    }
                },
                system_out: None,
            }
        })
        .collect();
    let golden = case
        .golden_path
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    let outcome = match (&case.error, &case.golden) {
        (Some(error), _) => Outcome::Error {
            message: case.headline(),
            body: error.clone(),
        },
        (None, GoldenStatus::Changed(diffs)) => {
            let mut body = vec![format!(
                "golden {golden} differs in {} metric(s):",
                diffs.len()
            )];
            body.extend(diffs.iter().map(|d| format!("  {d}")));
            Outcome::Failure {
                kind: "golden",
                message: format!("golden: {} metric(s) differ", diffs.len()),
                body: body.join("\n"),
            }
        }
        (None, GoldenStatus::Missing) => Outcome::Skipped(format!("no golden ({golden})")),
        (None, GoldenStatus::NotChecked) => Outcome::Skipped("golden not checked".into()),
        (None, GoldenStatus::Matched | GoldenStatus::Blessed) => Outcome::Pass,
    };
    cases.push(TestCase {
        name: format!("seed-{seed} golden"),
        time: case.wall_seconds,
        outcome,
        system_out: system_out(case),
    });
    cases
}

/// Counts of a list of testcases: tests, failures, errors, skipped.
fn counts(cases: &[TestCase]) -> [usize; 4] {
    let mut n = [cases.len(), 0, 0, 0];
    for case in cases {
        match case.outcome {
            Outcome::Pass => {}
            Outcome::Failure { .. } => n[1] += 1,
            Outcome::Error { .. } => n[2] += 1,
            Outcome::Skipped(_) => n[3] += 1,
        }
    }
    n
}

/// The check as JUnit XML (see the module docs).
pub fn junit_xml(report: &CheckReport) -> String {
    let suites: Vec<(&CaseResult, Vec<TestCase>)> =
        report.cases.iter().map(|c| (c, test_cases(c))).collect();
    let mut total = [0usize; 4];
    let mut total_time = 0.0;
    for (_, cases) in &suites {
        for (t, n) in total.iter_mut().zip(counts(cases)) {
            *t += n;
        }
        total_time += suite_time(cases);
    }
    let [tests, failures, errors, skipped] = total;
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    xml.push_str(&format!(
        "<testsuites name=\"{SUITE_NAME}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{skipped}\" time=\"{}\">\n",
        seconds(total_time)
    ));
    let version = env!("CARGO_PKG_VERSION");
    for (case, cases) in &suites {
        let class = xml_escape(&classname(case));
        let [tests, failures, errors, skipped] = counts(cases);
        xml.push_str(&format!(
            "  <testsuite name=\"{class} {}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{skipped}\" time=\"{}\">\n",
            xml_escape(&case.name()),
            seconds(suite_time(cases))
        ));
        xml.push_str("    <properties>\n");
        let seed = case.seed.map(|s| s.to_string()).unwrap_or_default();
        let virtual_time = case
            .summary
            .as_ref()
            .map(|s| format_value(virtual_seconds(s)));
        let properties = [
            ("seed", Some(seed)),
            ("scenario", Some(case.scenario.display().to_string())),
            ("routersim_version", Some(version.to_string())),
            ("virtual_seconds", virtual_time),
        ];
        for (name, value) in properties
            .iter()
            .filter_map(|(n, v)| v.as_deref().map(|v| (n, v)))
        {
            xml.push_str(&format!(
                "      <property name=\"{name}\" value=\"{}\"/>\n",
                xml_escape(value)
            ));
        }
        xml.push_str("    </properties>\n");
        for test in cases {
            push_case(&mut xml, &class, test);
        }
        xml.push_str("  </testsuite>\n");
    }
    xml.push_str("</testsuites>\n");
    xml
}

/// A suite's time: its cases' times added up, as they are written (so the sums agree).
fn suite_time(cases: &[TestCase]) -> f64 {
    cases
        .iter()
        .map(|c| seconds(c.time).parse::<f64>().unwrap_or(0.0))
        .sum()
}

fn push_case(xml: &mut String, class: &str, test: &TestCase) {
    let open = format!(
        "    <testcase classname=\"{class}\" name=\"{}\" time=\"{}\"",
        xml_escape(&test.name),
        seconds(test.time)
    );
    if matches!(test.outcome, Outcome::Pass) && test.system_out.is_none() {
        xml.push_str(&open);
        xml.push_str("/>\n");
        return;
    }
    xml.push_str(&open);
    xml.push_str(">\n");
    match &test.outcome {
        Outcome::Pass => {}
        Outcome::Failure {
            kind,
            message,
            body,
        } => xml.push_str(&format!(
            "      <failure message=\"{}\" type=\"{kind}\">{}</failure>\n",
            xml_escape(message),
            xml_text(body)
        )),
        Outcome::Error { message, body } => xml.push_str(&format!(
            "      <error message=\"{}\" type=\"scenario\">{}</error>\n",
            xml_escape(message),
            xml_text(body)
        )),
        Outcome::Skipped(message) => xml.push_str(&format!(
            "      <skipped message=\"{}\"/>\n",
            xml_escape(message)
        )),
    }
    if let Some(out) = &test.system_out {
        xml.push_str(&format!(
            "      <system-out>{}</system-out>\n",
            xml_text(out)
        ));
    }
    xml.push_str("    </testcase>\n");
}

/// What a run's `<system-out>` says: the run in one line, its report, every `expect` line and
/// the golden's status.
fn system_out(case: &CaseResult) -> Option<String> {
    let summary = case.summary.as_ref()?;
    let mut lines = vec![format!(
        "{} requests in {} s virtual: ok {}, failed {}",
        summary.requests,
        format_value(virtual_seconds(summary)),
        summary.ok,
        summary.failed
    )];
    if let Some(out) = &case.out_dir {
        lines.push(format!("report: {}", out.display()));
    }
    lines.extend(case.config_lines.iter().cloned());
    lines.extend(case.expectations.iter().map(|e| e.to_string()));
    let golden = case
        .golden_path
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    lines.push(match &case.golden {
        GoldenStatus::NotChecked => "golden: not checked".into(),
        GoldenStatus::Missing => format!("golden: none ({golden})"),
        GoldenStatus::Matched => format!("golden: matches {golden}"),
        GoldenStatus::Changed(d) => format!("golden: {} metric(s) differ from {golden}", d.len()),
        GoldenStatus::Blessed => format!("golden: written to {golden}"),
    });
    Some(lines.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xml_escaping_covers_markup_quotes_and_control_characters() {
        assert_eq!(
            xml_escape("a<b & \"c\" 'd'>\n\u{1}"),
            "a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;&#10;?"
        );
    }

    #[test]
    fn an_expect_line_is_named_as_written() {
        assert_eq!(written("failed <= 0 (measured 1)"), "failed <= 0");
        assert_eq!(written("failed <= 0 (no value)"), "failed <= 0");
    }
}
