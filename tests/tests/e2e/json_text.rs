//! "Inserted as JSON" (Templates in docs/ir-reference.md) is one text form on
//! every target, pinned by the shared vectors `fixtures/json-text/vectors.json`.
//! The Java runtime's own test of it
//! (`backends/java-svc/runtime/test/TextVectorsTest.java`) is not part of
//! generated projects: it is added here, with the vectors, to a project of
//! the minimal fixture and run with Maven. The Go runtime's
//! (`backends/go/runtime/graph/text_vectors_test.go`) runs with that
//! runtime's tests in the repository (runtimes.rs), and the Python SDK's
//! tests read the same file (`sdk/python/tests/test_values.py`).

use std::path::Path;
use std::time::Duration;

use svc_tests::service::{compile, require_jdk21, run_shell};
use svc_tests::{fixtures, workspace};

/// Writes `text` at `path` below the project root.
fn add(project: &Path, path: &str, text: &str) {
    let dest = project.join(path);
    std::fs::create_dir_all(dest.parent().expect("parent")).expect("create the folder");
    std::fs::write(&dest, text).expect("write the file");
}

fn read(path: &str) -> String {
    let path = workspace().join(path);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn minimal(platform: &str) -> svc_tests::service::Project {
    compile(platform, &fixtures().join("valid/minimal.graph.json"))
        .unwrap_or_else(|d| panic!("minimal [{platform}]: {d:?}"))
}

#[test]
fn the_java_runtime_writes_the_shared_json_text_vectors() {
    if !require_jdk21() {
        return;
    }
    let project = minimal("java-svc");
    // The runtime's package is the same in every project: the test is
    // copied as it is.
    add(
        project.path(),
        "src/test/java/dev/svc/runtime/TextVectorsTest.java",
        &read("backends/java-svc/runtime/test/TextVectorsTest.java"),
    );
    add(
        project.path(),
        "src/test/resources/json-text-vectors.json",
        &read("fixtures/json-text/vectors.json"),
    );
    if let Err(e) = run_shell(
        project.path(),
        "./mvnw -q -B test -Dtest=TextVectorsTest -Dsurefire.failIfNoSpecifiedTests=false",
        &[],
        Duration::from_secs(600),
    ) {
        panic!("{e}");
    }
}
