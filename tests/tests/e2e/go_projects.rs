//! Every fixture the Go backend supports compiles to a module that passes
//! gofmt (every directory), go vet, go test (the fixture's test cases
//! included) and go build.

use std::time::Duration;

use crate::project_cases::compile_with_cases;
use svc_compile::testkit::{fixture_documents, read_expectation, Outcome};
use svc_tests::fixtures;
use svc_tests::service::{require_tool, run_shell};

#[test]
fn generated_go_modules_pass_their_toolchain() {
    if !require_tool("go") {
        return;
    }
    let mut checked = 0;
    let mut failures = Vec::new();
    for doc in fixture_documents(&fixtures().join("valid")).expect("fixtures") {
        let expect = read_expectation(&doc).expect("expectation");
        if !matches!(expect.platforms.get("go"), Some(Outcome::Ok(_))) {
            continue;
        }
        let project = match compile_with_cases("go", &doc) {
            Ok(p) => p,
            Err(d) => {
                failures.push(format!("{}: {d}", doc.display()));
                continue;
            }
        };
        checked += 1;
        let limit = Duration::from_secs(300);
        match run_shell(project.path(), "gofmt -l .", &[], limit) {
            Ok(out) if out.trim().is_empty() => {}
            Ok(out) => failures.push(format!("{}: gofmt would change:\n{out}", doc.display())),
            Err(e) => failures.push(e),
        }
        for step in ["go vet ./...", "go test ./...", "go build -o bin/service ."] {
            if let Err(e) = run_shell(project.path(), step, &[], limit) {
                failures.push(format!("{}: {e}", doc.display()));
            }
        }
    }
    assert!(checked >= 10, "only {checked} Go fixtures checked");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
