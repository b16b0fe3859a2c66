//! Components built against `svc:codegen@0.1.0` keep loading and producing
//! the same output. `tests/compat/v0.1/` holds a go backend and a webhook
//! connector pack built from the tree before 0.2 (see its README), and the
//! documents compiled here; the snapshots were taken with the 0.1 host, so a
//! difference is a change in what a 0.1 component produces today.
//!
//! A snapshot lists each file's path, size and sha256: the exact bytes
//! matter, and the full text of these projects is in the other snapshots.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use svc_compile::ProjectFile;
use svc_ir::SourceFile;
use svc_packs::registry::Registry;
use svc_runtime::{sha256_hex, WitVersion};
use svc_tests::service::{require_jdk21, require_tool, run_shell, test_runtime};
use svc_tests::{workspace, Builtins, OneBackend};

fn compat() -> PathBuf {
    workspace().join("tests/compat/v0.1")
}

fn settings() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(workspace().join("tests/snapshots"));
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings
}

fn listing(files: &[ProjectFile]) -> String {
    files
        .iter()
        .map(|f| {
            // python-svc's wheel of sdk/python changes with the SDK, not
            // with what the host renders (see snapshots.rs).
            if f.path.starts_with("vendor/") && f.path.ends_with(".whl") {
                return format!("[the svc-sdk wheel of sdk/python] {}\n", f.path);
            }
            format!(
                "{} {} {}{}\n",
                sha256_hex(&f.contents),
                f.contents.len(),
                f.path,
                if f.executable { " (executable)" } else { "" }
            )
        })
        .collect()
}

fn registry(runtime: &Arc<svc_runtime::Runtime>) -> Registry {
    let mut registry = Registry::new(Arc::clone(runtime));
    registry
        .add_path(&compat().join("webhook.svc-pack.zip"))
        .expect("the 0.1 pack opens");
    registry
}

fn compile(
    document: &str,
    platform: &str,
    backends: &dyn svc_compile::BackendSource,
    runtime: &Arc<svc_runtime::Runtime>,
) -> Vec<ProjectFile> {
    let text = std::fs::read_to_string(compat().join(document)).expect("read document");
    let mut source = SourceFile::new(format!("tests/compat/v0.1/{document}"), text);
    svc_compile::Compile {
        platform: Some(platform),
        ..svc_compile::Compile::default()
    }
    .run(&mut source, backends, &mut registry(runtime))
    .unwrap_or_else(|d| panic!("{document} [{platform}]: {d:#?}"))
    .files
}

#[test]
fn a_0_1_backend_and_pack_produce_what_they_did_under_the_0_1_host() {
    let runtime = Arc::new(test_runtime());
    let backend = OneBackend {
        runtime: &runtime,
        name: "go backend 0.1".into(),
        bytes: std::fs::read(compat().join("go-backend.wasm")).expect("read the 0.1 backend"),
    };
    let _bound = settings().bind_to_scope();
    for document in ["contract_core.graph.json", "notify.graph.json"] {
        let files = compile(document, "go", &backend, &runtime);
        insta::assert_snapshot!(
            format!("compat_v0.1__backend_go__{document}"),
            listing(&files)
        );
    }
}

#[test]
fn a_0_1_pack_renders_for_every_builtin_backend() {
    let runtime = Arc::new(test_runtime());
    let _bound = settings().bind_to_scope();
    for platform in ["go", "java-svc", "python-svc"] {
        let files = compile(
            "notify.graph.json",
            platform,
            &Builtins { runtime: &runtime },
            &runtime,
        );
        let manifest = files
            .iter()
            .find(|f| f.path == ".svc-build-manifest.json")
            .expect("manifest");
        let text = String::from_utf8_lossy(&manifest.contents);
        assert!(
            text.contains(&sha256_hex(
                &std::fs::read(compat().join("webhook.svc-pack.zip")).unwrap()
            )),
            "{platform}: the manifest names the 0.1 pack"
        );
        let body: Vec<ProjectFile> = files
            .into_iter()
            .filter(|f| f.path != ".svc-build-manifest.json")
            .collect();
        insta::assert_snapshot!(format!("compat_v0.1__pack__{platform}"), listing(&body));
        match platform {
            "go" => go_builds_and_tests(&body),
            "java-svc" => java_builds_and_tests(&body),
            _ => {}
        }
    }
}

/// The 0.1 pack's Go code, written against the runtime's names of then,
/// builds and passes its own tests in today's project (whose graph calls
/// the runtime as a library: connectors.go keeps those names).
fn go_builds_and_tests(files: &[ProjectFile]) {
    if !require_tool("go") {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let project = dir.path().join("project");
    svc_compile::write::write_project(&project, files, false).expect("write the project");
    let limit = Duration::from_secs(300);
    match run_shell(&project, "gofmt -l .", &[], limit) {
        Ok(out) => assert!(out.trim().is_empty(), "gofmt would change:\n{out}"),
        Err(e) => panic!("the 0.1 webhook pack's go project: {e}"),
    }
    for step in ["go vet ./...", "go test ./..."] {
        if let Err(e) = run_shell(&project, step, &[], limit) {
            panic!("the 0.1 webhook pack's go project: {e}");
        }
    }
}

/// The 0.1 pack's Java code calls the runtime through
/// `com.svc.connectors.runtime` (the runtime's package was named after the
/// graph then): it builds and passes its own tests in today's project,
/// whose classes there delegate to `dev.svc.runtime`.
fn java_builds_and_tests(files: &[ProjectFile]) {
    if !require_jdk21() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let project = dir.path().join("project");
    svc_compile::write::write_project(&project, files, false).expect("write the project");
    // Short JVMs, as java_projects.rs runs them.
    let short = [(
        "JAVA_TOOL_OPTIONS",
        "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
    )];
    if let Err(e) = run_shell(
        &project,
        "./mvnw -q -B test",
        &short,
        Duration::from_secs(600),
    ) {
        panic!("the 0.1 webhook pack's java-svc project: {e}");
    }
}

#[test]
fn the_host_tells_the_versions_apart_and_names_what_it_looked_for() {
    let runtime = test_runtime();
    let old = std::fs::read(compat().join("go-backend.wasm")).expect("read the 0.1 backend");
    let backend = runtime.load_backend("go 0.1", &old).expect("loads");
    assert_eq!(backend.wit_version(), WitVersion::V0_1);
    let builtin = svc_builtin::backend("go").expect("built-in go");
    let current = runtime
        .load_backend_with_digest(builtin.name, builtin.wasm, Some(builtin.sha256))
        .expect("loads");
    assert_eq!(current.wit_version(), WitVersion::V0_2);

    // A backend is no connector: the refusal names both the versions looked
    // for and what the component does export.
    let err = runtime.load_connector("go 0.1", &old).unwrap_err();
    assert_eq!(err.code().name, "plugin-world");
    let message = err.to_string();
    for part in [
        "svc:codegen/connector@0.2.0",
        "svc:codegen/connector@0.1.0",
        "svc:codegen/emitter@0.1.0",
    ] {
        assert!(message.contains(part), "{part}: {message}");
    }
}
