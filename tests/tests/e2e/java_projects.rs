//! Every fixture the Java backend supports compiles to a Maven project whose
//! own tests (`./mvnw -q test`, the fixture's test cases included) pass with
//! JDK 21+; and `svc-java compile` gives the same tree as `svc compile
//! --platform java-svc`.

use std::time::Duration;

use crate::project_cases::compile_with_cases;
use svc_compile::testkit::{fixture_documents, read_expectation, Outcome};
use svc_tests::fixtures;
use svc_tests::service::{require_jdk21, run_shell};

#[test]
fn generated_maven_projects_pass_their_own_tests() {
    if !require_jdk21() {
        return;
    }
    let mut checked = 0;
    let mut failures = Vec::new();
    for doc in fixture_documents(&fixtures().join("valid")).expect("fixtures") {
        let expect = read_expectation(&doc).expect("expectation");
        if !matches!(expect.platforms.get("java-svc"), Some(Outcome::Ok(_))) {
            continue;
        }
        let project = match compile_with_cases("java-svc", &doc) {
            Ok(p) => p,
            Err(d) => {
                failures.push(format!("{}: {d}", doc.display()));
                continue;
            }
        };
        checked += 1;
        // Short JVMs (Maven, the tests' fork): C1 alone and one GC thread
        // spend half the CPU of the default tiers on this machine.
        let short = [(
            "JAVA_TOOL_OPTIONS",
            "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
        )];
        if let Err(e) = run_shell(
            project.path(),
            "./mvnw -q -B test",
            &short,
            Duration::from_secs(600),
        ) {
            failures.push(format!("{}: {e}", doc.display()));
        }
    }
    assert!(checked >= 9, "only {checked} Java fixtures checked");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
