//! The commands `svc` shares with the Python SDK agree with it: `svc get`
//! and `svc compile` (no document) against the shared vectors in
//! fixtures/config, `svc new` against `python -m svc new`, and the hand-over
//! of `run`/`info`/`register` when the SDK is missing.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)] // test code

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

fn svc() -> Command {
    Command::new(env!("CARGO_BIN_EXE_svc"))
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn cases() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(workspace().join("fixtures/config"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    out.sort();
    assert!(out.len() >= 6, "{out:?}");
    out
}

/// `svc get` with the case's environment (and nothing of the machine's
/// variables the case names).
fn get(case: &Path, expect: &serde_json::Value, path: &str) -> (i32, String) {
    let mut cmd = svc();
    cmd.args(["get", path, "--root"]).arg(case);
    for key in ["exports", "env"] {
        if let Some(m) = expect[key].as_object() {
            for name in m.keys() {
                cmd.env_remove(name);
            }
        }
    }
    for name in expect["unset"].as_array().into_iter().flatten() {
        cmd.env_remove(name.as_str().unwrap());
    }
    for (name, value) in expect["env"].as_object().into_iter().flatten() {
        cmd.env(name, value.as_str().unwrap());
    }
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn svc_get_matches_the_shared_vectors() {
    let mut checked = 0;
    for case in cases() {
        let expect: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(case.join("expect.json")).unwrap())
                .unwrap();
        for q in expect["queries"].as_array().unwrap() {
            let path = q["path"].as_str().unwrap();
            let (code, stdout) = get(&case, &expect, path);
            assert_eq!(code, 0, "{}: {path}", case.display());
            assert_eq!(
                stdout,
                q["output"].as_str().unwrap(),
                "{}: {path}",
                case.display()
            );
            checked += 1;
        }
    }
    assert!(checked >= 30, "only {checked} queries");
}

#[test]
fn env_yaml_exports_reach_references() {
    // The env_yaml vector names exports; `${NAME}` references see them.
    let case = workspace().join("fixtures/config/env_yaml");
    let expect: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(case.join("expect.json")).unwrap()).unwrap();
    let (_, out) = get(&case, &expect, "db.pool_size");
    assert_eq!(out, "\"5\"\n");
}

#[test]
fn svc_compile_without_a_document_matches_the_shared_vectors() {
    for case in cases() {
        let expected = case.join("compiled.json");
        if !case.join("application.yaml").is_file() || !expected.is_file() {
            continue;
        }
        let out = tempfile::tempdir().unwrap();
        let o = svc()
            .args(["compile", "--root"])
            .arg(&case)
            .arg("--out")
            .arg(out.path())
            .output()
            .unwrap();
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}: {}",
            case.display(),
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(
            std::fs::read_to_string(out.path().join("application.json")).unwrap(),
            std::fs::read_to_string(&expected).unwrap(),
            "{}",
            case.display()
        );
        // A different existing application.json is kept without --force.
        std::fs::write(out.path().join("application.json"), "{}\n").unwrap();
        let o = svc()
            .args(["compile", "--root"])
            .arg(&case)
            .arg("--out")
            .arg(out.path())
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1));
        assert_eq!(
            std::fs::read_to_string(out.path().join("application.json")).unwrap(),
            "{}\n"
        );
    }
}

#[test]
fn malformed_paths_are_usage_errors() {
    let case = workspace().join("fixtures/config/nesting");
    let o = svc()
        .args(["get", "a..b", "--root"])
        .arg(&case)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
}

fn python_has_sdk() -> bool {
    let ok = Command::new("python")
        .args(["-c", "import svc"])
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        let in_ci = std::env::var("CI").is_ok_and(|v| v == "true");
        assert!(!in_ci, "python cannot import svc, and CI=true");
        eprintln!("skipping: python cannot import the svc SDK");
    }
    ok
}

#[test]
fn svc_new_writes_what_the_python_sdk_writes() {
    let base = tempfile::tempdir().unwrap();
    let rust = base.path().join("rust");
    let o = svc()
        .args(["new", "my-agent", "--dir"])
        .arg(&rust)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let ours = common::tree(&rust.join("my-agent"));
    assert!(ours.contains_key("app/__init__.py") && ours.contains_key("pyproject.toml"));
    assert!(String::from_utf8_lossy(&ours["pyproject.toml"]).contains("name = \"my-agent\""));
    // Non-empty without --force: refused and untouched.
    let o = svc()
        .args(["new", "my-agent", "--dir"])
        .arg(&rust)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let o = svc().args(["new", "Bad Name"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    if !python_has_sdk() {
        return;
    }
    let py = base.path().join("python");
    let o = Command::new("python")
        .args(["-m", "svc", "new", "my-agent", "--dir"])
        .arg(&py)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(ours, common::tree(&py.join("my-agent")));
}

#[test]
fn run_info_and_register_hand_over_or_say_what_to_install() {
    let o = svc()
        .args(["run", "--root", "/nonexistent"])
        .env("SVC_PYTHON", "/nonexistent/python")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("pip install") && err.contains("sdk/python[server]"),
        "{err}"
    );
    if !python_has_sdk() {
        return;
    }
    let base = tempfile::tempdir().unwrap();
    assert_eq!(
        svc()
            .args(["new", "demo", "--dir"])
            .arg(base.path())
            .status()
            .unwrap()
            .code(),
        Some(0)
    );
    let o = svc()
        .args(["info", "--root"])
        .arg(base.path().join("demo"))
        .env("SVC_PYTHON", "python")
        .current_dir(base.path().join("demo"))
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let info: serde_json::Value = serde_json::from_slice(&o.stdout).expect("info prints JSON");
    assert!(
        info["components"]["graphs"]
            .as_array()
            .is_some_and(|g| !g.is_empty()),
        "{info}"
    );
    // `svc mcp` hands over too: a new project has nothing to serve yet.
    let o = svc()
        .args(["mcp", "--root"])
        .arg(base.path().join("demo"))
        .env("SVC_PYTHON", "python")
        .current_dir(base.path().join("demo"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("nothing to serve over MCP"), "{err}");
}
