//! What `svc test` prints (a case × target table, the failures with their
//! first difference, the skips with their reason, timings with the builds
//! apart) and the JUnit XML it writes (one suite per target).

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};

use super::file::TestFile;
use super::run::{TargetReport, TargetState, Verdict};

/// Whether the run passed: no case failed and some target ran the cases.
pub fn passed(reports: &[TargetReport]) -> bool {
    let failed = reports
        .iter()
        .flat_map(|r| &r.cases)
        .any(|c| matches!(c.verdict, Verdict::Fail(_)));
    let ran = reports
        .iter()
        .any(|r| matches!(r.state, TargetState::Ran { .. }));
    ran && !failed
}

pub fn table(tests: &TestFile, reports: &[TargetReport], keep: bool) -> String {
    let mut out = String::new();
    let width = tests
        .cases
        .iter()
        .map(|c| c.name.chars().count())
        .max()
        .unwrap_or(4)
        .max(4);
    let _ = write!(out, "\n{:width$}", "case");
    for r in reports {
        let _ = write!(out, "  {:10}", r.platform);
    }
    out.truncate(out.trim_end_matches(' ').len());
    out.push('\n');
    for (i, case) in tests.cases.iter().enumerate() {
        let _ = write!(out, "{:width$}", case.name);
        for r in reports {
            let mark = match r.cases.get(i).map(|c| &c.verdict) {
                Some(Verdict::Pass) => "pass",
                Some(Verdict::Fail(_)) => "FAIL",
                Some(Verdict::Skipped(_)) | None => "skipped",
            };
            let _ = write!(out, "  {mark:10}");
        }
        out.truncate(out.trim_end_matches(' ').len());
        out.push('\n');
    }
    let mut failures = String::new();
    for r in reports {
        if let TargetState::Broken(why) = &r.state {
            let _ = writeln!(failures, "  {}: {}", r.platform, indent(why));
            continue;
        }
        for c in &r.cases {
            if let Verdict::Fail(why) = &c.verdict {
                let _ = writeln!(
                    failures,
                    "  case `{}` on {}: {}",
                    c.name,
                    r.platform,
                    indent(why)
                );
            }
        }
    }
    if !failures.is_empty() {
        let _ = write!(out, "\nfailures:\n{failures}");
    }
    let skipped: Vec<String> = reports
        .iter()
        .filter_map(|r| match &r.state {
            TargetState::Skipped(why) => Some(format!("  {}: {why}", r.platform)),
            _ => None,
        })
        .collect();
    if !skipped.is_empty() {
        let _ = write!(out, "\nskipped:\n{}\n", skipped.join("\n"));
    }
    let count = |f: fn(&Verdict) -> bool| {
        reports
            .iter()
            .flat_map(|r| &r.cases)
            .filter(|c| f(&c.verdict))
            .count()
    };
    let _ = writeln!(
        out,
        "\n{} passed, {} failed, {} skipped",
        count(|v| matches!(v, Verdict::Pass)),
        count(|v| matches!(v, Verdict::Fail(_))),
        count(|v| matches!(v, Verdict::Skipped(_)))
    );
    for r in reports {
        if let TargetState::Ran {
            build_ms,
            reused,
            run_ms,
        } = r.state
        {
            let build = if reused {
                format!("build reused ({:.1} s to check)", build_ms / 1000.0)
            } else {
                format!("built in {:.1} s", build_ms / 1000.0)
            };
            let _ = writeln!(
                out,
                "{}: cases in {:.2} s (service start included); {build}",
                r.platform,
                run_ms / 1000.0
            );
        }
        if keep {
            if let Some(p) = &r.project {
                let _ = writeln!(out, "{}: project kept in {}", r.platform, p.display());
            }
        }
    }
    if !reports
        .iter()
        .any(|r| matches!(r.state, TargetState::Ran { .. }))
    {
        let _ = writeln!(out, "no target ran the cases");
    }
    out
}

fn indent(text: &str) -> String {
    text.trim_end().replace('\n', "\n      ")
}

/// JUnit XML: a suite per target (`<graph> on <platform>`), a test case per
/// case with its time, failures with their first difference, skips with
/// their reason.
pub fn junit(graph: &str, reports: &[TargetReport], path: &Path) -> Result<(), String> {
    let mut report = Report::new(format!("svc test {graph}"));
    for r in reports {
        let mut suite = TestSuite::new(format!("{graph} on {}", r.platform));
        for c in &r.cases {
            let status = match &c.verdict {
                Verdict::Pass => TestCaseStatus::success(),
                Verdict::Fail(why) => {
                    let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
                    s.set_message(why.lines().next().unwrap_or_default());
                    s.set_description(why.as_str());
                    s
                }
                Verdict::Skipped(why) => {
                    let mut s = TestCaseStatus::skipped();
                    s.set_message(why.as_str());
                    s
                }
            };
            let mut case = TestCase::new(c.name.as_str(), status);
            case.set_classname(r.platform.as_str());
            case.set_time(Duration::from_secs_f64(c.ms / 1000.0));
            suite.add_test_case(case);
        }
        report.add_test_suite(suite);
    }
    let xml = report.to_string().map_err(|e| e.to_string())?;
    std::fs::write(path, xml).map_err(|e| e.to_string())
}
