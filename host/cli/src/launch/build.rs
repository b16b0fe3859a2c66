//! A target's project in the run cache: its key, its toolchain's
//! environment, its manifest's `setup` and `build` commands, and where a
//! toolchain's error lands in the document's bodies.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use serde_json::{json, Value};

use super::process::Groups;

/// Written into a project once its `setup` and `build` commands passed.
pub const BUILT: &str = ".svc-run-built";
/// What the last build printed.
const BUILD_LOG: &str = ".svc-run-build.log";
/// The longest a `setup` or `build` command may take (a first Maven build
/// downloads the world).
const BUILD_LIMIT: Duration = Duration::from_secs(20 * 60);
/// Projects kept per platform; the least recently run go first, but none
/// used in the last [`IN_USE`] (another `svc design` or `svc test` may be running it).
const KEEP: usize = 8;
const IN_USE: Duration = Duration::from_secs(3600);

/// The cache key of a document on a platform: its canonical JSON (keys
/// sorted, no spaces) without what changes no code on this platform
/// (`presentation`, other platforms' bodies and templates), the platform,
/// the backend component's digest and svc's release. So an edit of a Go
/// body rebuilds only the Go project.
pub fn key(document: &Value, platform: &str, backend_sha256: &str) -> String {
    let mut doc = document.clone();
    if let Some(o) = doc.as_object_mut() {
        o.remove("presentation");
        let keep_own = |v: Option<&mut Value>| {
            if let Some(m) = v.and_then(Value::as_object_mut) {
                m.retain(|p, _| p == platform);
            }
        };
        keep_own(o.get_mut("bodiesByPlatform"));
        keep_own(o.get_mut("codegen").and_then(|c| c.get_mut("templates")));
    }
    doc.sort_all_objects();
    let text = doc.to_string();
    svc_runtime::sha256_hex(
        format!(
            "{}\0{platform}\0{backend_sha256}\0{text}",
            svc_ir::release::SVC
        )
        .as_bytes(),
    )
}

/// The project folder of a key.
pub fn project_dir(cache: &Path, key: &str, platform: &str) -> PathBuf {
    cache
        .join("projects")
        .join(format!("{platform}-{}", &key[..24.min(key.len())]))
}

/// An exclusive lock on `<cache>/locks/<name>.lock`, held until dropped:
/// several `svc design` and `svc test` sessions (and the threads of one) share the cache,
/// and neither a project nor the python-svc venv may be written by two at
/// once.
pub fn lock(cache: &Path, name: &str) -> Result<std::fs::File, String> {
    let path = lock_path(cache, name);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    file.lock()
        .map_err(|e| format!("cannot lock {}: {e}", path.display()))?;
    Ok(file)
}

fn lock_path(cache: &Path, name: &str) -> PathBuf {
    cache.join("locks").join(format!("{name}.lock"))
}

/// Marks a project as just used, and removes the least recently used
/// projects of its platform beyond [`KEEP`]: never the one in use, one
/// used within [`IN_USE`], or one another session holds the lock of.
pub fn touch_and_prune(cache: &Path, project: &Path, platform: &str) {
    let stamp = project.join(BUILT);
    let _ = std::fs::write(&stamp, b"");
    let Ok(entries) = std::fs::read_dir(cache.join("projects")) else {
        return;
    };
    let prefix = format!("{platform}-");
    let mut mine: Vec<(SystemTime, PathBuf)> = entries
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .map(|e| {
            // A project without its stamp is being built: its folder's time.
            let used = std::fs::metadata(e.path().join(BUILT))
                .or_else(|_| std::fs::metadata(e.path()))
                .and_then(|m| m.modified())
                .unwrap_or(SystemTime::UNIX_EPOCH);
            (used, e.path())
        })
        .collect();
    mine.sort_by_key(|m| std::cmp::Reverse(m.0));
    let now = SystemTime::now();
    for (used, old) in mine.into_iter().skip(KEEP) {
        let recent = now.duration_since(used).map_or(true, |age| age < IN_USE);
        let name = old.file_name().map(|n| n.to_string_lossy().into_owned());
        let Some(name) = name.filter(|_| !recent && old != project) else {
            continue;
        };
        let held = std::fs::OpenOptions::new()
            .write(true)
            .open(lock_path(cache, &name))
            .map(|f| f.try_lock().is_err())
            .unwrap_or(false);
        if !held {
            let _ = std::fs::remove_dir_all(&old);
        }
    }
}

/// What a java-svc build skips in the run cache (the project's service.pom.xml):
/// Spring AOT and the CDS training run, which make the start faster but
/// the build three times slower, and compiling the project's own tests,
/// which it does not run (docs/testing.md).
const JAVA_DEVELOPER_BUILD: &str =
    "-Dsvc.cds.skip=true -Dspring-boot.aot.skip=true -Dmaven.test.skip=true";
/// Every JVM of a java-svc project in the run cache (Maven, its forks, the
/// service) compiles with C1 only and collects with one thread: a short
/// build or run spends half the CPU it would on C2's compiler threads.
const JAVA_SHORT_RUNS: &str = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC";

/// Variables a platform's commands run with: python-svc's commands run in
/// the run cache's own virtual environment (made on first use), so that
/// `pip install` never touches the user's Python; java-svc's get
/// [`JAVA_DEVELOPER_BUILD`] in `MAVEN_ARGS` and [`JAVA_SHORT_RUNS`] in
/// `JAVA_TOOL_OPTIONS`, each before the user's own (so
/// `MAVEN_ARGS=-Dsvc.cds.skip=false` makes the training run again).
/// The environment is made again when the python-svc backend (`backend`,
/// its digest, which covers the SDK wheel it embeds) changed: pip keeps an
/// installed SDK of the same version, so a venv kept across backends would
/// run every later project on the first one's SDK.
pub fn toolchain_env(
    cache: &Path,
    platform: &str,
    backend: &str,
) -> Result<Vec<(String, String)>, String> {
    if platform == "java-svc" {
        let before_users = |name: &str, ours: &str| {
            let theirs = std::env::var(name).unwrap_or_default();
            (
                name.to_string(),
                format!("{ours} {theirs}").trim_end().to_string(),
            )
        };
        return Ok(vec![
            before_users("MAVEN_ARGS", JAVA_DEVELOPER_BUILD),
            before_users("JAVA_TOOL_OPTIONS", JAVA_SHORT_RUNS),
        ]);
    }
    if platform != "python-svc" {
        return Ok(Vec::new());
    }
    let venv = cache.join("python-venv");
    let _held = lock(cache, "python-venv")?;
    let stamp = venv.join(".svc-backend");
    if venv.is_dir() && std::fs::read_to_string(&stamp).ok().as_deref() != Some(backend) {
        std::fs::remove_dir_all(&venv).map_err(|e| format!("{}: {e}", venv.display()))?;
        // The projects built into the old venv are installed in none now.
        let projects = std::fs::read_dir(cache.join("projects"))
            .into_iter()
            .flatten();
        for dir in projects.flatten() {
            if dir.file_name().to_string_lossy().starts_with("python-svc-") {
                let _ = std::fs::remove_file(dir.path().join(BUILT));
            }
        }
    }
    if !venv.join("bin").join("python").is_file() {
        let python = std::env::var("SVC_PYTHON").unwrap_or_else(|_| "python3".into());
        let out = Command::new(&python)
            .args(["-m", "venv"])
            .arg(&venv)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("cannot run `{python} -m venv` for python-svc: {e} (install Python 3.11+, or set SVC_PYTHON)"))?;
        if !out.status.success() {
            return Err(format!(
                "`{python} -m venv {}` failed: {}",
                venv.display(),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        std::fs::write(&stamp, backend).map_err(|e| format!("{}: {e}", stamp.display()))?;
    }
    let path = std::env::var("PATH").unwrap_or_default();
    Ok(vec![
        ("VIRTUAL_ENV".into(), venv.display().to_string()),
        (
            "PATH".into(),
            format!("{}:{path}", venv.join("bin").display()),
        ),
    ])
}

/// The manifest's commands of a project written by `svc compile`.
pub fn commands(project: &Path) -> Result<svc_compile::manifest::Commands, String> {
    let path = project.join(".svc-build-manifest.json");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let manifest: Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_value(manifest["commands"].clone())
        .map_err(|e| format!("{}: commands: {e}", path.display()))
}

/// Runs the manifest's `setup`, then `build`, in the project; on failure,
/// the output of both.
pub fn build(
    project: &Path,
    platform: &str,
    env: &[(String, String)],
    groups: &Groups,
) -> Result<(), String> {
    let commands = commands(project)?;
    let log = project.join(BUILD_LOG);
    let file = std::fs::File::create(&log).map_err(|e| format!("{}: {e}", log.display()))?;
    let read_log = || std::fs::read_to_string(&log).unwrap_or_default();
    for line in [&commands.setup, &commands.build] {
        if line.trim().is_empty() {
            continue;
        }
        let out = file.try_clone().map_err(|e| e.to_string())?;
        let err = file.try_clone().map_err(|e| e.to_string())?;
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(line)
            .current_dir(project)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err);
        let mut child = groups
            .spawn(&mut cmd, platform)
            .map_err(|e| format!("cannot run `{line}`: {e}"))?;
        let started = Instant::now();
        let status = loop {
            match child.try_wait() {
                Ok(Some(s)) => break Some(s),
                Ok(None) if started.elapsed() > BUILD_LIMIT => {
                    groups.stop(&mut child);
                    return Err(format!(
                        "`{line}` took longer than {} minutes\n{}",
                        BUILD_LIMIT.as_secs() / 60,
                        read_log()
                    ));
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(20)),
                // Reaped by a stop of every service.
                Err(_) => break None,
            }
        };
        groups.finished(&child);
        match status {
            Some(s) if s.success() => {}
            Some(s) => return Err(format!("`{line}` failed ({s})\n{}", read_log())),
            None => return Err(format!("`{line}` was stopped\n{}", read_log())),
        }
    }
    Ok(())
}

/// The toolchain errors in `log` (go's `file.go:L:C: message`, javac's
/// `File.java:[L,C] message`), each placed in the node body it came from:
/// the generated line is looked up among the bodies of `platform`
/// (bodies are copied into the project line for line, re-indented).
pub fn locations(project: &Path, log: &str, bodies: &[(String, String)]) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for line in log.lines() {
        let Some((file, line_no, column, message)) = toolchain_error(line) else {
            continue;
        };
        let path = if Path::new(&file).is_absolute() {
            PathBuf::from(&file)
        } else {
            project.join(file.trim_start_matches("./"))
        };
        let Ok(relative) = path.strip_prefix(project) else {
            continue;
        };
        let generated = std::fs::read_to_string(&path)
            .ok()
            .and_then(|t| t.lines().nth(line_no.saturating_sub(1)).map(str::to_string))
            .unwrap_or_default();
        let mut place = json!({
            "file": relative.display().to_string(),
            "fileLine": line_no,
            "message": message,
        });
        if let Some((node, body_line, body_column)) = in_bodies(&generated, column, bodies) {
            place["node"] = json!(node);
            place["line"] = json!(body_line);
            place["column"] = json!(body_column);
        }
        if !out.contains(&place) {
            out.push(place);
        }
    }
    out
}

/// `(file, line, column, message)` of one toolchain error line.
fn toolchain_error(line: &str) -> Option<(String, usize, usize, String)> {
    let line = line.trim().trim_start_matches("[ERROR]").trim();
    for ext in [".go:", ".java:"] {
        let Some(at) = line.find(ext) else { continue };
        let file = line[..at + ext.len() - 1].to_string();
        let rest = &line[at + ext.len()..];
        // javac through Maven: `[12,5] message`; go: `12:5: message`.
        let (numbers, message) = if let Some(r) = rest.strip_prefix('[') {
            let (n, m) = r.split_once(']')?;
            (n.replace(',', ":"), m)
        } else {
            let mut parts = rest.splitn(3, ':');
            let l = parts.next()?;
            let c = parts.next()?;
            (format!("{l}:{c}"), parts.next().unwrap_or(""))
        };
        let (l, c) = numbers.split_once(':')?;
        let (l, c) = (l.trim().parse().ok()?, c.trim().parse().ok()?);
        return Some((file, l, c, message.trim().to_string()));
    }
    None
}

/// The node, line and column (1-based) in a body of the generated line.
fn in_bodies(
    generated: &str,
    column: usize,
    bodies: &[(String, String)],
) -> Option<(String, usize, usize)> {
    let wanted = generated.trim();
    if wanted.is_empty() {
        return None;
    }
    let indent = |s: &str| s.len() - s.trim_start().len();
    for (node, body) in bodies {
        for (i, line) in body.lines().enumerate() {
            if line.trim() == wanted {
                let col = (column + indent(line))
                    .saturating_sub(indent(generated))
                    .max(1);
                return Some((node.clone(), i + 1, col));
            }
        }
    }
    None
}

/// The last `max` bytes of a log (at a line start), for an answer.
pub fn tail(log: &str, max: usize) -> String {
    if log.len() <= max {
        return log.to_string();
    }
    let mut start = log.len() - max;
    while !log.is_char_boundary(start) {
        start += 1;
    }
    let from = log[start..].find('\n').map_or(start, |i| start + i + 1);
    let mut out = String::new();
    let _ = write!(out, "[... {} bytes before]\n{}", from, &log[from..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_ignores_key_order_spacing_and_positions_but_not_content() {
        let a = json!({"id": "g", "logical": {"nodes": [1, 2]}, "presentation": {"nodes": {"a": {"x": 1}}}});
        let b = json!({"logical": {"nodes": [1, 2]}, "id": "g"});
        assert_eq!(key(&a, "go", "s"), key(&b, "go", "s"));
        assert_ne!(key(&a, "go", "s"), key(&a, "python-svc", "s"));
        assert_ne!(key(&a, "go", "s"), key(&a, "go", "t"));
        let c = json!({"id": "g", "logical": {"nodes": [2, 1]}});
        assert_ne!(key(&a, "go", "s"), key(&c, "go", "s"));
        // Another platform's body or template changes no Go code.
        let d = json!({"id": "g", "bodiesByPlatform": {"go": {"n": "a"}, "python-svc": {"n": "b"}},
            "codegen": {"templates": {"python-svc": {}}}});
        let e = json!({"id": "g", "bodiesByPlatform": {"go": {"n": "a"}, "python-svc": {"n": "c"}},
            "codegen": {"templates": {"java-svc": {}}}});
        assert_eq!(key(&d, "go", "s"), key(&e, "go", "s"));
        assert_ne!(key(&d, "python-svc", "s"), key(&e, "python-svc", "s"));
    }

    #[test]
    fn pruning_keeps_the_recent_the_unbuilt_and_the_locked() {
        let cache = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let projects = cache.path().join("projects");
        let old = SystemTime::now() - Duration::from_secs(2 * 3600);
        let make = |name: &str, stamped_at: Option<SystemTime>| {
            let dir = projects.join(name);
            std::fs::create_dir_all(&dir).unwrap_or_default();
            if let Some(t) = stamped_at {
                let f = std::fs::File::create(dir.join(BUILT));
                let _ = f.and_then(|f| f.set_modified(t));
            }
            dir
        };
        for i in 0..10 {
            make(&format!("go-old{i:02}"), Some(old - Duration::from_secs(i)));
        }
        let recent = make(
            "go-recent",
            Some(SystemTime::now() - Duration::from_secs(60)),
        );
        let building = make("go-building", None);
        let _held = lock(cache.path(), "go-old09");
        let current = make("go-current", None);
        touch_and_prune(cache.path(), &current, "go");
        let left: Vec<String> = std::fs::read_dir(&projects)
            .map(|r| {
                r.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        for kept in [
            "go-current",
            "go-recent",
            "go-building",
            "go-old00",
            "go-old04",
            "go-old09",
        ] {
            assert!(left.contains(&kept.to_string()), "{kept} pruned: {left:?}");
        }
        // Eight kept by age (current, recent, building, old00..old04); of
        // the rest only the locked one stays.
        assert!(!left.contains(&"go-old05".to_string()), "{left:?}");
        assert_eq!(left.len(), 9, "{left:?}");
        assert!(recent.exists() && building.exists());
    }

    /// java-svc builds and runs as a developer build with short-run JVM
    /// flags, before whatever the user's variables add; go gets nothing.
    #[test]
    fn java_svc_gets_the_developer_build_before_the_users_flags() {
        let cache = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let env = toolchain_env(cache.path(), "java-svc", "").unwrap_or_default();
        let get = |name: &str| {
            env.iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
                .unwrap_or_default()
        };
        assert!(
            get("MAVEN_ARGS").starts_with(JAVA_DEVELOPER_BUILD),
            "{env:?}"
        );
        assert!(get("MAVEN_ARGS").contains("-Dsvc.cds.skip=true"), "{env:?}");
        assert!(
            get("JAVA_TOOL_OPTIONS").starts_with(JAVA_SHORT_RUNS),
            "{env:?}"
        );
        assert_eq!(toolchain_env(cache.path(), "go", ""), Ok(Vec::new()));
    }

    #[test]
    fn go_and_javac_errors_are_read_with_their_positions() {
        assert_eq!(
            toolchain_error("graph/node_classify.go:12:9: undefined: nope"),
            Some((
                "graph/node_classify.go".into(),
                12,
                9,
                "undefined: nope".into()
            ))
        );
        assert_eq!(
            toolchain_error(
                "[ERROR] /tmp/p/src/main/java/a/Classify.java:[7,20] cannot find symbol"
            ),
            Some((
                "/tmp/p/src/main/java/a/Classify.java".into(),
                7,
                20,
                "cannot find symbol".into()
            ))
        );
        assert_eq!(toolchain_error("# example.com/graph"), None);
    }

    #[test]
    fn a_generated_line_is_found_in_its_body_with_the_column_moved_by_the_indent() {
        let bodies = vec![
            ("a".to_string(), "x := 1\nreturn x".to_string()),
            (
                "b".to_string(),
                "y := nope\n  return State{}, nil".to_string(),
            ),
        ];
        assert_eq!(
            in_bodies("\ty := nope", 7, &bodies),
            Some(("b".into(), 1, 6))
        );
        assert_eq!(
            in_bodies("\treturn State{}, nil", 2, &bodies),
            Some(("b".into(), 2, 3))
        );
        assert_eq!(in_bodies("z := 2", 1, &bodies), None);
    }
}
