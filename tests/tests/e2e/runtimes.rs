//! The runtimes the backends copy into projects, checked once where they
//! live. The Go runtime, `backends/go/runtime`, is the module
//! `svc.dev/runtime`: with the build tag `svcstub` its `svcstub.go` files
//! stand in for what a project generates, and it passes gofmt, go vet and
//! its own tests there. The java-svc runtime, package `dev.svc.runtime` of
//! `backends/java-svc/runtime`, is the Maven artifact `dev.svc:svc-runtime`
//! (its pom.xml): its classes compile and its own tests pass there (the
//! JSON text vectors' `TextVectorsTest` on `fixtures/json-text/vectors.json`
//! among them), not in every generated project.

use std::time::Duration;

use svc_tests::service::{require_jdk21, require_tool, run_shell};
use svc_tests::workspace;

#[test]
fn the_go_runtime_passes_gofmt_vet_and_its_own_tests() {
    if !require_tool("go") {
        return;
    }
    let runtime = workspace().join("backends/go/runtime");
    let limit = Duration::from_secs(900);
    let mut failures = Vec::new();
    for step in ["gofmt -l .", "go vet -tags svcstub ./..."] {
        match run_shell(&runtime, step, &[], limit) {
            Ok(out) if out.trim().is_empty() => {}
            Ok(out) => failures.push(format!("`{step}` says:\n{out}")),
            Err(e) => failures.push(e),
        }
    }
    if let Err(e) = run_shell(&runtime, "go test -tags svcstub ./...", &[], limit) {
        failures.push(e);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn the_java_runtime_builds_and_passes_its_own_tests() {
    if !require_jdk21() {
        return;
    }
    let runtime = workspace().join("backends/java-svc/runtime");
    if let Err(e) = run_shell(
        &runtime,
        "./mvnw -q -B verify",
        &[],
        Duration::from_secs(900),
    ) {
        panic!("{e}");
    }
}
