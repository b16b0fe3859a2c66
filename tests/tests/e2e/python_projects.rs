//! Every fixture the Python backend supports compiles to a project that
//! passes `ruff check`, `ruff format --check`, `python -m compileall` and its
//! own pytest tests (the fixture's test cases included), run in the active
//! Python environment.

use std::time::Duration;

use crate::project_cases::compile_with_cases;
use svc_compile::testkit::{fixture_documents, read_expectation, Outcome};
use svc_tests::fixtures;
use svc_tests::service::{require_python_sdk, require_tool, run_shell};

#[test]
fn generated_python_projects_pass_their_toolchain() {
    if !require_python_sdk() || !require_tool("ruff") {
        return;
    }
    let mut checked = 0;
    let mut failures = Vec::new();
    for doc in fixture_documents(&fixtures().join("valid")).expect("fixtures") {
        let expect = read_expectation(&doc).expect("expectation");
        if !matches!(expect.platforms.get("python-svc"), Some(Outcome::Ok(_))) {
            continue;
        }
        let project = match compile_with_cases("python-svc", &doc) {
            Ok(p) => p,
            Err(d) => {
                failures.push(format!("{}: {d}", doc.display()));
                continue;
            }
        };
        checked += 1;
        let limit = Duration::from_secs(300);
        for step in [
            "ruff check --no-cache .",
            "ruff format --check --no-cache .",
            "python -m compileall -q app",
            "python -m pytest -q -p no:cacheprovider",
        ] {
            if let Err(e) = run_shell(project.path(), step, &[], limit) {
                failures.push(format!("{}: {e}", doc.display()));
            }
        }
    }
    assert!(checked >= 10, "only {checked} Python fixtures checked");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
