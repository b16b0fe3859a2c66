//! The Dockerfiles of the three targets, built and run with podman.
//!
//! No container registry is reachable from this machine, so the base images
//! the Dockerfiles name are local stand-ins made by
//! `tests/containers/stand-ins.sh` from Debian's packages and this machine's
//! Go and JDK, tagged with the official names in a podman storage of the
//! tests' own (`~/.cache/svc/containers`); the Dockerfiles themselves are
//! the generated ones, unchanged. Each image is built, inspected (non-root
//! user, no credential in its configuration, a `/health` check on python-svc
//! and java-svc), refused without its key, run until `/health` answers,
//! invoked with and without the key, its health check run by podman, and
//! stopped with SIGTERM. Each Dockerfile also passes hadolint.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use svc_tests::service::{compile, require_jdk21, require_tool, run_shell, Project, Service};

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

/// The tests' own podman storage: the stand-ins carry the official images'
/// names and must never shadow real ones in the machine's storage.
fn store() -> PathBuf {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    cache.join("svc/containers")
}

/// A podman command line with the tests' settings (runc, limits the VM
/// allows: tests/containers/containers.conf) on the tests' storage.
fn podman_line(args: &str) -> String {
    let conf = svc_tests::workspace().join("tests/containers/containers.conf");
    let store = store();
    format!(
        "env CONTAINERS_CONF='{}' podman --root '{}' --runroot '{}' {args}",
        conf.display(),
        store.join("root").display(),
        store.join("run").display()
    )
}

/// A podman command, bounded in time.
fn podman(dir: &Path, args: &str, limit: Duration) -> Result<String, String> {
    run_shell(dir, &podman_line(args), &[], limit)
}

/// Removes the test's container and image however the test ends.
struct Cleanup {
    container: String,
    image: String,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        let dir = std::env::temp_dir();
        let minute = Duration::from_secs(60);
        let _ = podman(&dir, &format!("rm -f -t 2 {}", self.container), minute);
        let _ = podman(&dir, &format!("rmi -f {}", self.image), minute);
        // The build stages' untagged images.
        let _ = podman(&dir, "image prune -f", minute);
    }
}

/// Builds the project's image on the stand-in bases.
fn build_image(project: &Project, platform: &str, image: &str) -> Result<(), String> {
    let dir = project.path();
    let mut extra = String::new();
    // Maven's downloads from the machine's cache, as a CI runner would mount
    // it (python-svc needs nothing: svc-sdk comes from the project's vendor/).
    if platform == "java-svc" {
        let home = std::env::var("HOME").map_err(|_| "HOME is not set".to_string())?;
        let m2 = Path::new(&home).join(".m2");
        std::fs::create_dir_all(&m2).map_err(|e| e.to_string())?;
        extra.push_str(&format!(" -v '{}':/root/.m2", m2.display()));
    }
    podman(
        dir,
        &format!("build -q --network host --pull=never --format docker{extra} -t {image} ."),
        Duration::from_secs(1200),
    )
    .map(|_| ())
}

#[test]
fn images_build_and_serve_on_every_target() {
    if !require_tool("podman") || !require_jdk21() {
        return;
    }
    let root = svc_tests::workspace();
    run_shell(
        &root,
        "tests/containers/stand-ins.sh",
        &[("SVC_CONTAINER_STORE", store().to_str().unwrap())],
        Duration::from_secs(1200),
    )
    .expect("the stand-in base images");
    let fixture = root.join("fixtures/valid/support_triage.graph.json");
    let key = "container-key-7f3a";
    let body = br#"{"state": {"question": "Where is my invoice?"}}"#;
    for platform in ["go", "python-svc", "java-svc"] {
        let project = compile(platform, &fixture).expect("the example compiles");
        let dir = project.path();
        let tag = format!("svc-e2e-{platform}-{}", std::process::id());
        let image = format!("localhost/{tag}:test");
        let _cleanup = Cleanup {
            container: tag.clone(),
            image: image.clone(),
        };
        build_image(&project, platform, &image).unwrap_or_else(|e| panic!("{platform}: {e}"));

        // What the image says about itself.
        let inspect = podman(
            dir,
            &format!("image inspect {image}"),
            Duration::from_secs(60),
        )
        .expect("podman image inspect");
        let inspect: serde_json::Value = serde_json::from_str(&inspect).expect("inspect is JSON");
        let config = &inspect[0]["Config"];
        let user = config["User"].as_str().unwrap_or_default();
        let uid = user.split(':').next().unwrap_or_default();
        assert!(
            uid.parse::<u32>().is_ok_and(|u| u > 0),
            "{platform}: the image runs as {user:?}"
        );
        let env = config["Env"].as_array().cloned().unwrap_or_default();
        assert!(
            !env.iter()
                .any(|e| e.as_str().unwrap_or_default().contains("API_KEY")),
            "{platform}: a credential in the image: {env:?}"
        );
        let health = &inspect[0]["Healthcheck"]["Test"];
        assert_eq!(
            health.is_array(),
            platform != "go",
            "{platform}: health check {health}"
        );

        // Without its key the service refuses to start, naming the variable.
        let refused = podman(
            dir,
            &format!("run --rm --network host -e SVC_PORT=1 {image}"),
            Duration::from_secs(120),
        )
        .expect_err("started without SVC_API_KEY");
        assert!(
            refused.contains("SVC_API_KEY is not set"),
            "{platform}: {refused}"
        );

        // With it, the service answers on the host's loopback.
        let service = Service::run_in(
            dir,
            &podman_line(&format!(
                "run --rm --name {tag} --network host --health-interval disable \
                 -e SVC_PORT -e SVC_API_KEY {image}"
            )),
            &[("SVC_API_KEY", key)],
            Duration::from_secs(120),
        )
        .unwrap_or_else(|e| panic!("{platform}: {e}"));
        let json = [("Content-Type", "application/json")];
        let r = service
            .send("POST", "/invoke", &json, body)
            .expect("invoke");
        assert_eq!(r.status, 401, "{platform}: without the key: {}", r.text());
        let with_key = [("Content-Type", "application/json"), ("X-API-Key", key)];
        let r = service
            .send("POST", "/invoke", &with_key, body)
            .expect("invoke");
        assert_eq!(r.status, 200, "{platform}: {}", r.text());
        assert_eq!(
            r.json()["result"]["answer"],
            "Billing team will answer: Where is my invoice?",
            "{platform}"
        );

        // The service process itself is not root.
        let pid = podman(
            dir,
            &format!("inspect --format '{{{{.State.Pid}}}}' {tag}"),
            Duration::from_secs(60),
        )
        .expect("podman inspect");
        let status = std::fs::read_to_string(format!("/proc/{}/status", pid.trim()))
            .expect("the container's process");
        let uids = status
            .lines()
            .find_map(|l| l.strip_prefix("Uid:"))
            .expect("a Uid line");
        assert!(
            uids.split_whitespace().all(|u| u == uid),
            "{platform}: the service runs as {uids}, the image says {uid}"
        );

        // The image's own health check, as an orchestrator would run it.
        if platform != "go" {
            podman(
                dir,
                &format!("healthcheck run {tag}"),
                Duration::from_secs(60),
            )
            .unwrap_or_else(|e| panic!("{platform}: health check: {e}"));
        }

        let output = service.output();
        let status = service
            .terminate(Duration::from_secs(30))
            .unwrap_or_else(|e| panic!("{platform}: {e}"));
        // The JVM answers SIGTERM with 143 (128 + 15) after its shutdown hooks.
        let clean = status.success() || (platform == "java-svc" && status.code() == Some(143));
        assert!(clean, "{platform}: stopped with {status}:\n{output}");
        let gone = podman(
            dir,
            &format!("container exists {tag}"),
            Duration::from_secs(60),
        );
        assert!(gone.is_err(), "{platform}: the container outlived its stop");
    }
}
