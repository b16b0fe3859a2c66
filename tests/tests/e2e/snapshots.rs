//! The emitted project of every valid fixture on every built-in backend, as
//! insta snapshots in `tests/snapshots/`, so a change to generated code is
//! reviewed as a diff (`cargo insta review`). The toolchain and HTTP tests
//! stay the proof that the code works; these only show what changed.
//!
//! Files that every project of a backend holds byte for byte are one
//! snapshot, `<platform>__shared`. A file copied from the backend's runtime
//! (`backends/<platform>/runtime/`, vetted and tested there) is named, not
//! spelled out: `=== path: runtime graph/agents.go`. Each fixture's
//! snapshot lists its whole tree and spells out the files generated for
//! it. The backend component's digest in the build manifest is redacted. A
//! Java project's package comes from its document id; it is written
//! `{package}` here so that the runtime files in it (the HTTP contract's)
//! of every Java project compare equal.

use std::collections::BTreeMap;

use svc_compile::testkit::{fixture_documents, read_expectation, Outcome};
use svc_compile::ProjectFile;
use svc_ir::SourceFile;
use svc_tests::service::test_runtime;
use svc_tests::{fixtures, workspace, Builtins};

#[test]
fn emitted_projects_match_their_snapshots() {
    let runtime = test_runtime();
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(workspace().join("tests/snapshots"));
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    // The manifest records the digest of the backend component, which
    // changes with every rebuild of it, not with the code it emits.
    settings.add_filter(
        r#"("backend": \{\s*"name": "[^"]+",\s*"version": "[^"]+",\s*"sha256": )"[0-9a-f]{64}""#,
        r#"$1"[backend component sha256]""#,
    );
    // python-svc projects carry the wheel of sdk/python (vendor/), which
    // changes with every change to the SDK, not to the code emitted; its
    // install is tested by the manifest-commands and container tests.
    settings.add_filter(
        r#"("path": "vendor/[^"]+\.whl",\s*"sha256": )"[0-9a-f]{64}",(\s*"size": )\d+"#,
        r#"$1"[svc-sdk wheel sha256]",$2"[svc-sdk wheel size]""#,
    );
    let _bound = settings.bind_to_scope();

    for backend in svc_builtin::BACKENDS {
        let platform = backend.platform;
        let projects = projects(platform, &Builtins { runtime: &runtime });
        assert!(
            projects.len() >= 10,
            "{platform}: only {} projects",
            projects.len()
        );
        let runtime = RuntimeSources::of(platform);
        let shared = shared_files(&projects);
        insta::assert_snapshot!(
            format!("{platform}__shared"),
            render(&shared, |_| false, |file| runtime.source_of(file))
        );
        for (fixture, files) in &projects {
            let tree: BTreeMap<&str, &ProjectFile> =
                files.iter().map(|f| (f.path.as_str(), f)).collect();
            insta::assert_snapshot!(
                format!("{platform}__{fixture}"),
                render(
                    &tree,
                    |path| shared.contains_key(path),
                    |file| runtime.source_of(file)
                )
            );
        }
    }
}

/// Every valid fixture that compiles for `platform`, by fixture name.
fn projects(platform: &str, backends: &Builtins) -> Vec<(String, Vec<ProjectFile>)> {
    let mut out = Vec::new();
    for path in fixture_documents(&fixtures().join("valid")).expect("fixtures") {
        let expect = read_expectation(&path).expect("expectation");
        if !matches!(expect.platforms.get(platform), Some(Outcome::Ok(_))) {
            continue;
        }
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".graph.json"))
            .expect("fixture name")
            .to_string();
        let text = std::fs::read_to_string(&path).expect("read fixture");
        // The path in the document's diagnostics and manifest is relative,
        // so the snapshots do not depend on where the repository lives.
        let mut source =
            SourceFile::new(format!("fixtures/valid/{name}.graph.json"), text).with_origin(&path);
        let generated = svc_compile::Compile {
            platform: Some(platform),
            ..svc_compile::Compile::default()
        }
        .run(&mut source, backends, &mut svc_compile::NoConnectors)
        .unwrap_or_else(|d| panic!("{name} [{platform}]: {d:?}"));
        out.push((name, redact_java_package(generated.files)));
    }
    out
}

/// Writes a Java project's package (the folder holding `Application.java`)
/// as `{package}` in paths and text.
fn redact_java_package(files: Vec<ProjectFile>) -> Vec<ProjectFile> {
    let Some(dir) = files.iter().find_map(|f| {
        f.path
            .strip_prefix("src/main/java/")
            .and_then(|p| p.strip_suffix("/Application.java"))
            .map(str::to_string)
    }) else {
        return files;
    };
    let package = dir.replace('/', ".");
    files
        .into_iter()
        .map(|f| {
            let contents = match String::from_utf8(f.contents) {
                Ok(text) => text.replace(&package, "{package}").into_bytes(),
                Err(e) => e.into_bytes(),
            };
            ProjectFile {
                path: f.path.replace(&dir, "{package}"),
                contents,
                executable: f.executable,
            }
        })
        .collect()
}

/// The files every project holds with the same bytes.
fn shared_files(projects: &[(String, Vec<ProjectFile>)]) -> BTreeMap<&str, &ProjectFile> {
    let mut shared: BTreeMap<&str, &ProjectFile> =
        projects[0].1.iter().map(|f| (f.path.as_str(), f)).collect();
    for (_, files) in &projects[1..] {
        shared.retain(|path, file| {
            files.iter().any(|f| {
                f.path == *path && f.contents == file.contents && f.executable == file.executable
            })
        });
    }
    shared
}

/// The files of a backend's runtime (`backends/<platform>/runtime/`), by
/// their path there, for the backends that copy theirs into a project.
struct RuntimeSources {
    platform: String,
    files: Vec<(String, String)>,
}

impl RuntimeSources {
    fn of(platform: &str) -> Self {
        let dir = match platform {
            "go" => "backends/go/runtime",
            "java-svc" => "backends/java-svc/runtime",
            _ => {
                return RuntimeSources {
                    platform: platform.into(),
                    files: Vec::new(),
                }
            }
        };
        let root = workspace().join(dir);
        let mut files = Vec::new();
        let mut pending = vec![root.clone()];
        while let Some(d) = pending.pop() {
            for entry in std::fs::read_dir(&d).expect("runtime dir") {
                let path = entry.expect("runtime entry").path();
                if path.is_dir() {
                    pending.push(path);
                } else if let Ok(text) = std::fs::read_to_string(&path) {
                    let name = path.strip_prefix(&root).expect("under root");
                    files.push((name.to_string_lossy().replace('\\', "/"), text));
                }
            }
        }
        files.sort();
        RuntimeSources {
            platform: platform.into(),
            files,
        }
    }

    /// The runtime file `file` is a copy of, as the backend copies: a go
    /// file as it is (the project's `svc-runtime/`); a Java one of the
    /// runtime's package (`dev.svc.runtime`) as it is, one that reads the
    /// generated classes naming the graph's package (here `{package}`) for
    /// `__SVC_PACKAGE__`.
    fn source_of(&self, file: &ProjectFile) -> Option<&str> {
        let text = std::str::from_utf8(&file.contents).ok()?;
        let text = match self.platform.as_str() {
            "go" => text.to_string(),
            // A copy the backend failed to fill would still read as the
            // runtime's: spelled out, its unfilled package shows.
            _ if text.contains("__SVC_PACKAGE__") => return None,
            _ => text.replace("{package}", "com.svc.__SVC_PACKAGE__"),
        };
        self.files
            .iter()
            .find(|(_, source)| *source == text)
            .map(|(name, _)| name.as_str())
    }
}

/// The tree as text: one header per file, then its contents unless it is
/// one of the shared files, a copy of a runtime file (named by `origin`)
/// or not text.
fn render<'r>(
    tree: &BTreeMap<&str, &ProjectFile>,
    is_shared: impl Fn(&str) -> bool,
    origin: impl Fn(&ProjectFile) -> Option<&'r str>,
) -> String {
    let mut out = String::new();
    for (path, file) in tree {
        let mode = if file.executable { " (executable)" } else { "" };
        if is_shared(path) {
            out.push_str(&format!("=== {path}{mode}: shared\n"));
            continue;
        }
        if let Some(source) = origin(file) {
            out.push_str(&format!("=== {path}{mode}: runtime {source}\n"));
            continue;
        }
        match std::str::from_utf8(&file.contents) {
            Ok(text) => {
                out.push_str(&format!("=== {path}{mode}\n{text}"));
                if !text.ends_with('\n') {
                    out.push_str("\n[no newline at end]\n");
                }
            }
            Err(_) if path.starts_with("vendor/") && path.ends_with(".whl") => {
                out.push_str(&format!(
                    "=== {path}{mode}: the svc-sdk wheel of sdk/python\n"
                ));
            }
            Err(_) => out.push_str(&format!(
                "=== {path}{mode}: {} bytes, sha256 {}\n",
                file.contents.len(),
                svc_runtime::sha256_hex(&file.contents)
            )),
        }
    }
    out
}
