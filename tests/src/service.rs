//! Compiling a fixture and starting the generated service from the
//! commands in its `.svc-build-manifest.json`, on a free loopback port.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use svc_compile::NoConnectors;
use svc_ir::SourceFile;
use svc_runtime::{Limits, Runtime, RuntimeOptions};

use crate::http;
use crate::Builtins;

/// A compiled project in a temporary directory (removed when dropped).
pub struct Project {
    _dir: Option<tempfile::TempDir>,
    root: PathBuf,
    pub manifest: serde_json::Value,
}

impl Project {
    pub fn path(&self) -> &Path {
        &self.root
    }

    pub fn command(&self, name: &str) -> String {
        self.manifest["commands"][name]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }
}

/// Where the tests cache compiled components (outside the user's cache).
pub fn cache_dir() -> PathBuf {
    std::env::temp_dir().join("svc-tests-component-cache")
}

pub fn test_runtime() -> Runtime {
    Runtime::new(RuntimeOptions {
        cache_dir: Some(cache_dir()),
        limits: Limits::default(),
    })
}

/// Compiles `fixture` for `platform` with the built-in backends.
pub fn compile(platform: &str, fixture: &Path) -> Result<Project, Vec<svc_ir::Diagnostic>> {
    compile_with(platform, fixture, &[])
}

/// [`compile`], passing `options` to the backend's emit as `svc compile`
/// does (`testCases`: the fixture's test cases, run by the project's own
/// tests).
pub fn compile_with(
    platform: &str,
    fixture: &Path,
    options: &[(String, String)],
) -> Result<Project, Vec<svc_ir::Diagnostic>> {
    let runtime = test_runtime();
    let text = std::fs::read_to_string(fixture).map_err(|e| {
        vec![svc_ir::Diagnostic::error(
            &svc_ir::codes::IO,
            format!("{}: {e}", fixture.display()),
        )]
    })?;
    let mut source = SourceFile::new(fixture.display().to_string(), text);
    let io = |e: std::io::Error| vec![svc_ir::Diagnostic::error(&svc_ir::codes::IO, e.to_string())];
    let dir = tempfile::Builder::new()
        .prefix("svc-project-")
        .tempdir()
        .map_err(io)?;
    let root = dir.path().join("project");
    svc_compile::Compile {
        platform: Some(platform),
        options,
        out: svc_compile::Output::Dir {
            path: &root,
            force: false,
        },
        keep: None,
    }
    .run(
        &mut source,
        &Builtins { runtime: &runtime },
        &mut NoConnectors,
    )?;
    let manifest = std::fs::read_to_string(root.join(".svc-build-manifest.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    Ok(Project {
        _dir: Some(dir),
        root,
        manifest,
    })
}

impl Project {
    /// A project already written to `root` (by `svc compile`, say).
    pub fn at(root: &Path) -> Result<Project, String> {
        let path = root.join(".svc-build-manifest.json");
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let manifest =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(Project {
            _dir: None,
            root: root.to_path_buf(),
            manifest,
        })
    }
}

/// The checks a generated project must pass with its own toolchain, as
/// shell lines run from its root (after its `setup` command).
pub fn toolchain_checks(platform: &str) -> &'static [&'static str] {
    match platform {
        "go" => &[
            "test -z \"$(gofmt -l .)\"",
            "go vet ./...",
            "go test ./...",
            "go build -o bin/service .",
        ],
        "python-svc" => &[
            "ruff check --no-cache .",
            "ruff format --check --no-cache .",
            "python -m compileall -q app",
            "python -m pytest -q -p no:cacheprovider",
        ],
        "java-svc" => &["./mvnw -q -B test"],
        _ => &[],
    }
}

/// Whether the toolchain of `platform` is here (in CI its absence fails).
pub fn require_platform(platform: &str) -> bool {
    match platform {
        "go" => require_tool("go"),
        "python-svc" => require_python_sdk() && require_tool("ruff"),
        "java-svc" => require_jdk21(),
        _ => false,
    }
}

/// Runs `run` on each target whose toolchain is here, at once (one thread
/// each), and asserts that every target answers as the first one did.
pub fn alike_on_every_target<T: PartialEq + std::fmt::Debug + Send>(run: fn(&'static str) -> T) {
    let platforms: Vec<&'static str> = ["go", "java-svc", "python-svc"]
        .into_iter()
        .filter(|p| require_platform(p))
        .collect();
    let answers: Vec<(&str, T)> = std::thread::scope(|s| {
        let runs: Vec<_> = platforms
            .iter()
            .map(|p| (*p, s.spawn(move || run(p))))
            .collect();
        runs.into_iter()
            // A target's failure fails the test with its own message.
            .map(|(p, h)| (p, h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))))
            .collect()
    });
    if let Some(((first, expected), rest)) = answers.split_first() {
        for (platform, got) in rest {
            assert_eq!(got, expected, "{platform} answered otherwise than {first}");
        }
    }
}

/// Runs a project's manifest `build` command (after its `setup`): what
/// [`Service::launch`] then runs.
pub fn build(project: &Project) -> Result<(), String> {
    run_shell(
        project.path(),
        &project.command("build"),
        &[],
        Duration::from_secs(600),
    )
    .map(drop)
}

/// Runs a project's manifest `setup` command, then [`toolchain_checks`]:
/// what the end-to-end tests do before they launch a service.
pub fn check_project(project: &Project, platform: &str) -> Result<(), String> {
    check_project_with(project, platform, &[])
}

/// [`check_project`] with variables for the project's tests (a database
/// they need, say).
pub fn check_project_with(
    project: &Project,
    platform: &str,
    env: &[(&str, &str)],
) -> Result<(), String> {
    let limit = Duration::from_secs(600);
    run_shell(project.path(), &project.command("setup"), &[], limit)?;
    for step in toolchain_checks(platform) {
        run_shell(project.path(), step, env, limit)?;
    }
    Ok(())
}

/// Runs a shell line in `dir`, bounded in time; returns its combined output
/// or an error that says what failed.
pub fn run_shell(
    dir: &Path,
    line: &str,
    env: &[(&str, &str)],
    limit: Duration,
) -> Result<String, String> {
    if line.trim().is_empty() {
        return Ok(String::new());
    }
    let log = dir.join(format!(".svc-test-{}.log", std::process::id()));
    let file = std::fs::File::create(&log).map_err(|e| e.to_string())?;
    let err = file.try_clone().map_err(|e| e.to_string())?;
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(line)
        .current_dir(dir)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(file)
        .stderr(err)
        .spawn()
        .map_err(|e| format!("cannot run `{line}`: {e}"))?;
    let started = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().map_err(|e| e.to_string())? {
            break s;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            let out = std::fs::read_to_string(&log).unwrap_or_default();
            let _ = std::fs::remove_file(&log);
            return Err(format!("`{line}` took longer than {limit:?}:\n{out}"));
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let out = std::fs::read_to_string(&log).unwrap_or_default();
    let _ = std::fs::remove_file(&log);
    if status.success() {
        Ok(out)
    } else {
        Err(format!(
            "`{line}` failed ({status}) in {}:\n{out}",
            dir.display()
        ))
    }
}

/// A running generated service; stopped when dropped.
pub struct Service {
    child: Child,
    pub port: u16,
    log: PathBuf,
}

impl Service {
    /// Runs the project's `setup` and `build` commands, then its `run`
    /// command with SVC_HOST/SVC_PORT pointing at a free loopback port,
    /// and waits until `/health` answers.
    pub fn start(
        project: &Project,
        env: &[(&str, &str)],
        ready: Duration,
    ) -> Result<Service, String> {
        run_shell(
            project.path(),
            &project.command("setup"),
            &[],
            Duration::from_secs(600),
        )?;
        build(project)?;
        Self::launch(project, env, ready)
    }

    /// Starts the `run` command only (setup and build already done).
    pub fn launch(
        project: &Project,
        env: &[(&str, &str)],
        ready: Duration,
    ) -> Result<Service, String> {
        Self::run_in(project.path(), &project.command("run"), env, ready)
    }

    /// Starts the `run` command without SVC_HOST and SVC_PORT, so that the
    /// service listens where its document's `settings.server` says, which
    /// must be loopback `port`.
    pub fn launch_at(
        project: &Project,
        port: u16,
        env: &[(&str, &str)],
        ready: Duration,
    ) -> Result<Service, String> {
        Self::start_in(
            project.path(),
            &project.command("run"),
            env,
            port,
            false,
            ready,
        )
    }

    /// Starts `run` (a shell command) in `dir` the way `launch` starts a
    /// project: SVC_HOST/SVC_PORT at a free loopback port, ready when
    /// `/health` answers 200. For the tests' own peers (reference servers).
    pub fn run_in(
        dir: &Path,
        run: &str,
        env: &[(&str, &str)],
        ready: Duration,
    ) -> Result<Service, String> {
        let port = http::free_port().map_err(|e| e.to_string())?;
        Self::start_in(dir, run, env, port, true, ready)
    }

    fn start_in(
        dir: &Path,
        run: &str,
        env: &[(&str, &str)],
        port: u16,
        set_address: bool,
        ready: Duration,
    ) -> Result<Service, String> {
        let log = dir.join(format!(".svc-service-{port}.log"));
        let file = std::fs::File::create(&log).map_err(|e| e.to_string())?;
        let err = file.try_clone().map_err(|e| e.to_string())?;
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(format!("exec {run}"))
            .current_dir(dir)
            .env_remove("SVC_API_KEY")
            .env_remove("SVC_HOST")
            .env_remove("SVC_PORT");
        if set_address {
            cmd.env("SVC_HOST", "127.0.0.1")
                .env("SVC_PORT", port.to_string());
        }
        cmd.envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(file)
            .stderr(err);
        let child = cmd
            .spawn()
            .map_err(|e| format!("cannot start `{run}`: {e}"))?;
        let mut service = Service { child, port, log };
        let started = Instant::now();
        loop {
            if let Ok(Some(status)) = service.child.try_wait() {
                return Err(format!(
                    "`{run}` exited with {status} before answering:\n{}",
                    service.output()
                ));
            }
            if let Ok(r) = http::send(port, "GET", "/health", &[], b"", Duration::from_secs(2)) {
                if r.status == 200 {
                    return Ok(service);
                }
            }
            if started.elapsed() > ready {
                return Err(format!(
                    "`{run}` did not answer /health within {ready:?}:\n{}",
                    service.output()
                ));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// What the service printed so far.
    pub fn output(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    pub fn send(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> std::io::Result<http::Response> {
        http::send(
            self.port,
            method,
            path,
            headers,
            body,
            Duration::from_secs(30),
        )
    }

    /// [`Service::send`] that writes the whole body before reading, and
    /// fails when the write does (see [`http::Writes::Whole`]).
    pub fn send_whole(
        &self,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> std::io::Result<http::Response> {
        http::send_with(
            self.port,
            "POST",
            path,
            headers,
            body,
            Duration::from_secs(30),
            http::Writes::Whole,
        )
    }
}

impl Service {
    /// Stops the service as a process manager would (SIGTERM), waiting up
    /// to `limit` for it to exit; what it prints on the way out is kept.
    pub fn terminate(mut self, limit: Duration) -> Result<std::process::ExitStatus, String> {
        let pid = self.child.id().to_string();
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .map_err(|e| format!("cannot signal {pid}: {e}"))?;
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().map_err(|e| e.to_string())? {
                return Ok(status);
            }
            if started.elapsed() > limit {
                return Err(format!(
                    "the service did not stop within {limit:?} of SIGTERM:\n{}",
                    self.output()
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `run` without the variables it needs and expects it to refuse:
/// exit non-zero within `limit`, saying which variable to set.
pub fn expect_refusal(project: &Project, limit: Duration) -> Result<String, String> {
    expect_refusal_with(project, &[], limit)
}

/// [`expect_refusal`] with these variables set (the key, say, so that the
/// refusal is about something else).
pub fn expect_refusal_with(
    project: &Project,
    env: &[(&str, &str)],
    limit: Duration,
) -> Result<String, String> {
    let run = project.command("run");
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!("exec {run}"))
        .current_dir(project.path())
        .env_remove("SVC_API_KEY")
        .env("SVC_HOST", "127.0.0.1")
        .env(
            "SVC_PORT",
            http::free_port().map_err(|e| e.to_string())?.to_string(),
        )
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            let out = child.wait_with_output().map_err(|e| e.to_string())?;
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            return if status.success() {
                Err(format!("the service exited successfully:\n{text}"))
            } else {
                Ok(text)
            };
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("the service kept running for {limit:?}"));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Whether a tool is on PATH. In CI a missing toolchain fails the test;
/// elsewhere the test says it is skipping.
pub fn require_tool(tool: &str) -> bool {
    let found = Command::new(tool)
        .arg(if tool == "java" {
            "-version"
        } else {
            "version"
        })
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok();
    if found {
        return true;
    }
    let in_ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
    assert!(
        !in_ci,
        "`{tool}` is not installed, and CI=true: install it (see .ci/run)"
    );
    eprintln!("skipping: `{tool}` is not installed");
    false
}

/// A JDK 21 or newer: `JAVA_HOME` when it points at one. In CI its absence
/// fails the test; elsewhere the test says it is skipping.
pub fn require_jdk21() -> bool {
    let home = std::env::var_os("JAVA_HOME").map(PathBuf::from);
    let version = home.as_ref().and_then(|h| {
        let out = Command::new(h.join("bin").join("java"))
            .arg("-version")
            .output()
            .ok()?;
        let text = String::from_utf8_lossy(&out.stderr).into_owned();
        let quoted = text.split('"').nth(1)?.to_string();
        quoted.split('.').next()?.parse::<u32>().ok()
    });
    if version.is_some_and(|v| v >= 21) {
        return true;
    }
    let in_ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
    assert!(
        !in_ci,
        "JAVA_HOME does not point at a JDK 21 or newer ({home:?}), and CI=true: .ci/run selects one"
    );
    eprintln!("skipping: JAVA_HOME does not point at a JDK 21 or newer");
    false
}

/// `python` with the svc SDK importable (CI installs sdk/python into its
/// venv). In CI its absence fails the test; elsewhere the test skips.
pub fn require_python_sdk() -> bool {
    let ok = Command::new("python")
        .args(["-c", "import svc, fastapi, httpx, pytest"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if ok {
        return true;
    }
    let in_ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
    assert!(
        !in_ci,
        "`python` cannot import svc, fastapi, httpx and pytest, and CI=true: \
         run `pip install -e \"sdk/python[all]\" pytest` in the active venv (.ci/run does)"
    );
    eprintln!("skipping: `python` cannot import the svc SDK (pip install -e \"sdk/python[all]\")");
    false
}
