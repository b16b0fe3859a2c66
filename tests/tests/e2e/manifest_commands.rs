//! Each target's `.svc-build-manifest.json` commands, run exactly as written
//! and in order (setup, build, test, run) in a fresh environment with only
//! the toolchain: for Python a new virtual environment without the svc SDK
//! (its release is on no package index: the project's setup installs the
//! wheel the compiler wrote into `vendor/`), for Go an empty module cache.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::json;
use svc_tests::fixtures;
use svc_tests::service::{compile, require_platform, run_shell, Project, Service};

const KEY: &str = "manifest-key-71c3";

/// Runs the manifest's lines in order with `env`, then sends one request to
/// the service its `run` line starts.
fn run_in_order(project: &Project, env: &[(&str, &str)]) {
    for step in ["setup", "build", "test"] {
        let line = project.command(step);
        run_shell(project.path(), &line, env, Duration::from_secs(900))
            .unwrap_or_else(|e| panic!("the manifest's `{step}` line failed: {e}"));
    }
    let mut with_key = env.to_vec();
    with_key.push(("SVC_API_KEY", KEY));
    let service = Service::launch(project, &with_key, Duration::from_secs(120))
        .unwrap_or_else(|e| panic!("the manifest's `run` line failed: {e}"));
    let r = service
        .send(
            "POST",
            "/invoke",
            &[("Content-Type", "application/json"), ("X-API-Key", KEY)],
            br#"{"state": {"question": "Where is my invoice?"}}"#,
        )
        .expect("request");
    let want = json!({"result": {
        "question": "Where is my invoice?",
        "category": "billing",
        "answer": "Billing team will answer: Where is my invoice?"
    }});
    assert_eq!(r.status, 200, "{}\n{}", r.text(), service.output());
    assert_eq!(r.json(), want);
}

fn example(platform: &str) -> Project {
    compile(
        platform,
        &fixtures().join("valid").join("support_triage.graph.json"),
    )
    .unwrap_or_else(|d| panic!("compile: {d:?}"))
}

/// PATH without the active virtual environment's bin directory.
fn path_without_venv() -> String {
    let path = std::env::var("PATH").unwrap_or_default();
    let venv = std::env::var("VIRTUAL_ENV").ok().map(PathBuf::from);
    std::env::split_paths(&path)
        .filter(|p| venv.as_ref().is_none_or(|v| !p.starts_with(v)))
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(":")
}

#[test]
fn python_manifest_commands_work_in_order_in_a_fresh_venv() {
    if !require_platform("python-svc") {
        return;
    }
    let project = example("python-svc");
    let tmp = tempfile::tempdir().expect("tempdir");
    let venv = tmp.path().join("venv");
    let base = path_without_venv();
    run_shell(
        tmp.path(),
        &format!("python3 -m venv {}", venv.display()),
        &[("PATH", base.as_str())],
        Duration::from_secs(120),
    )
    .expect("venv");
    let path = format!("{}/bin:{base}", venv.display());
    let venv_text = venv.display().to_string();
    run_in_order(
        &project,
        &[("PATH", path.as_str()), ("VIRTUAL_ENV", venv_text.as_str())],
    );
}

#[test]
fn go_manifest_commands_work_in_order_with_an_empty_module_cache() {
    if !require_platform("go") {
        return;
    }
    let project = example("go");
    let gopath = tempfile::tempdir().expect("tempdir");
    let gopath_text = gopath.path().display().to_string();
    run_in_order(
        &project,
        &[("GOPATH", gopath_text.as_str()), ("GOFLAGS", "-modcacherw")],
    );
}

#[test]
fn java_manifest_commands_work_in_order() {
    if !require_platform("java-svc") {
        return;
    }
    let project = example("java-svc");
    run_in_order(&project, &[]);
}
