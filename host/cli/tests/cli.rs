//! The `svc` command line end to end: exit codes, diagnostics with
//! positions, nothing written on failure, atomic --force, deterministic
//! output, the component cache.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)] // test code

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn svc() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_svc"));
    // Never touch the user's cache from tests.
    c.env(
        "SVC_CACHE_DIR",
        std::env::temp_dir().join("svc-cli-test-cache"),
    );
    c
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures")
}

fn run(cmd: &mut Command) -> Output {
    cmd.output().expect("svc runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn every_invalid_fixture_exits_1_with_positions_and_writes_nothing() {
    let dir = fixtures().join("invalid");
    let mut count = 0;
    for entry in std::fs::read_dir(&dir).unwrap().flatten() {
        let path = entry.path();
        let name = path.to_string_lossy().into_owned();
        if !name.ends_with(".graph.json") {
            continue;
        }
        count += 1;
        let expect: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(name.replace(".graph.json", ".expect.json")).unwrap(),
        )
        .unwrap();
        let base = tempfile::tempdir().unwrap();
        let out = base.path().join("project");
        let o = run(svc()
            .args(["compile", &name, "--out"])
            .arg(&out)
            .args(["--platform", "go"]));
        assert_eq!(o.status.code(), Some(1), "{name}: {}", text(&o.stderr));
        assert!(!out.exists(), "{name} left {out:?} behind");
        assert_eq!(
            std::fs::read_dir(base.path()).unwrap().count(),
            0,
            "{name} left temp files"
        );
        let stderr = text(&o.stderr);
        for d in expect["diagnostics"].as_array().unwrap() {
            let line = d["line"].as_u64().expect("invalid fixtures declare lines");
            let col = d["column"].as_u64().unwrap();
            let code = d["code"].as_str().unwrap();
            let want = format!("{name}:{line}:{col}: error[{code}]");
            assert!(
                stderr.contains(&want),
                "{name}: expected `{want}` in\n{stderr}"
            );
        }
    }
    assert!(count >= 30, "only {count} invalid fixtures");
}

#[test]
fn json_format_reports_diagnostics_as_json() {
    let name = fixtures().join("invalid/unknown_field_typo.graph.json");
    let o =
        run(svc()
            .arg("compile")
            .arg(&name)
            .args(["--out", "/nonexistent/x", "--format", "json"]));
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON on stdout");
    assert_eq!(v["ok"], false);
    let d = &v["diagnostics"][1];
    assert_eq!(d["code"], "unknown-field");
    assert_eq!(d["hint"], "did you mean `outputKey`?");
    assert_eq!(d["node"], "reply");
    assert_eq!(d["position"]["line"], 31);
}

/// A diagnostic about a tool or an MCP server names it and the nodes that
/// use it, in human and JSON output alike.
#[test]
fn usage_errors_exit_2() {
    // Without a document `compile` precompiles application.yaml: none here.
    let empty = tempfile::tempdir().unwrap();
    let o = run(svc().args(["compile", "--root"]).arg(empty.path()));
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("application.yaml does not exist"),
        "{}",
        text(&o.stderr)
    );
    assert_eq!(
        run(svc().args(["compile", "x.graph.json"])).status.code(),
        Some(2)
    );
    assert_eq!(run(svc().args(["frobnicate"])).status.code(), Some(2));
    let o = run(svc().args([
        "compile",
        "x.graph.json",
        "--out",
        "o",
        "--platform",
        "rust",
    ]));
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("python-svc"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn compiling_twice_gives_identical_trees_and_force_replaces_only_out() {
    let base = tempfile::tempdir().unwrap();
    let doc = fixtures().join("valid/minimal.graph.json");
    let (a, b) = (base.path().join("a"), base.path().join("b"));
    for out in [&a, &b] {
        let o = run(svc()
            .arg("compile")
            .arg(&doc)
            .arg("--out")
            .arg(out)
            .args(["--platform", "go"]));
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    }
    let (ta, tb) = (common::tree(&a), common::tree(&b));
    assert!(ta.contains_key(".svc-build-manifest.json"));
    assert_eq!(ta, tb, "two compiles of one document differ");

    // A non-empty --out is refused without --force, and left untouched.
    std::fs::write(a.join("extra.txt"), "mine").unwrap();
    let o = run(svc()
        .arg("compile")
        .arg(&doc)
        .arg("--out")
        .arg(&a)
        .args(["--platform", "go"]));
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("--force"), "{}", text(&o.stderr));
    assert!(a.join("extra.txt").exists());

    // --force replaces that directory and nothing beside it.
    std::fs::write(base.path().join("sibling.txt"), "keep").unwrap();
    let o = run(svc().arg("compile").arg(&doc).arg("--out").arg(&a).args([
        "--platform",
        "go",
        "--force",
    ]));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(!a.join("extra.txt").exists());
    assert_eq!(common::tree(&a), tb);
    assert!(base.path().join("sibling.txt").exists());
    let names: Vec<_> = std::fs::read_dir(base.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(names.len(), 3, "{names:?}");
}

/// A compile with `--timings` and `--format json` into `out`, with its own
/// cache directory: its stdout as JSON and the names of its phases.
fn timed_compile(
    doc: &Path,
    out: &Path,
    cache: &Path,
    extra: &[&str],
) -> (Output, serde_json::Value, Vec<String>) {
    let o = run(svc()
        .env("SVC_CACHE_DIR", cache)
        .arg("compile")
        .arg(doc)
        .arg("--out")
        .arg(out)
        .args(["--format", "json", "--timings"])
        .args(extra));
    let t: serde_json::Value = text(&o.stderr)
        .lines()
        .last()
        .and_then(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| panic!("no timings: {}", text(&o.stderr)));
    let names = t["timings_ms"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    (o, t, names)
}

/// `--timings` prints every phase of a compile, in the order they run,
/// with their total, as one JSON object on stderr; stdout stays the
/// compile's own output (here JSON, still parseable).
#[test]
fn timings_name_every_phase_in_order() {
    let base = tempfile::tempdir().unwrap();
    let cache = base.path().join("cache");
    let doc = fixtures().join("valid/support_triage.graph.json");
    let (o, t, names) = timed_compile(&doc, &base.path().join("p"), &cache, &["--platform", "go"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let result: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(result["ok"], true);
    assert_eq!(
        names,
        [
            "read the document",
            "find plugins",
            "read the test file",
            "check the test file",
            "check --out",
            "parse and check the document",
            "load the backend",
            "instantiate it",
            "info, negotiate, render connectors",
            "emit",
            "check paths, manifest",
            "write the project, keep it for reuse",
        ]
    );
    let phases = t["timings_ms"].as_object().unwrap();
    let sum: f64 = phases.values().map(|v| v.as_f64().unwrap()).sum();
    let total = t["total_ms"].as_f64().unwrap();
    assert!(
        total > 0.0 && (sum - total).abs() < 0.01 * phases.len() as f64,
        "{t}"
    );
    // The same compile again reuses the project: no engine, no emission.
    let (o, _, names) = timed_compile(&doc, &base.path().join("q"), &cache, &["--platform", "go"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(
        names,
        [
            "read the document",
            "find plugins",
            "read the test file",
            "find the project made before",
            "write the project",
        ]
    );
    // Without the flag, nothing is printed on stderr.
    let quiet = run(svc()
        .arg("compile")
        .arg(&doc)
        .arg("--out")
        .arg(base.path().join("r"))
        .args(["--platform", "go"]));
    assert_eq!(quiet.status.code(), Some(0));
    assert_eq!(text(&quiet.stderr), "");
}

/// A compile of exactly the inputs of an earlier one writes the project
/// that one made, byte for byte, and reports the same; any changed input
/// (document, test file, platform, options, limits, a backend from a file,
/// a file the document names) compiles again, and every check still runs.
#[test]
fn only_an_unchanged_compile_reuses_a_project() {
    let base = tempfile::tempdir().unwrap();
    let cache = base.path().join("cache");
    let src = base.path().join("src");
    std::fs::create_dir(&src).unwrap();
    let doc = src.join("support_triage.graph.json");
    let tests = src.join("support_triage.tests.json");
    std::fs::copy(fixtures().join("valid/support_triage.graph.json"), &doc).unwrap();
    std::fs::copy(fixtures().join("valid/support_triage.tests.json"), &tests).unwrap();
    let outs = std::cell::Cell::new(0);
    let compile = |doc: &Path, extra: &[&str]| {
        outs.set(outs.get() + 1);
        let out = base.path().join(format!("out{}", outs.get()));
        let (o, _, names) = timed_compile(doc, &out, &cache, extra);
        let reused = names.iter().any(|n| n == "find the project made before");
        if o.status.success() {
            assert_eq!(reused, !names.iter().any(|n| n == "emit"), "{names:?}");
        }
        (o, out, reused)
    };

    let (first, first_out, reused) = compile(&doc, &[]);
    assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
    assert!(!reused);
    let (again, again_out, reused) = compile(&doc, &[]);
    assert!(reused);
    assert_eq!(
        common::tree_with_modes(&first_out),
        common::tree_with_modes(&again_out)
    );
    let report = |o: &Output| {
        let mut r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        r["out"] = serde_json::Value::Null;
        r
    };
    assert_eq!(report(&first), report(&again));
    // --out is still checked: not empty, no --force.
    let refused = run(svc()
        .env("SVC_CACHE_DIR", &cache)
        .arg("compile")
        .arg(&doc)
        .arg("--out")
        .arg(&first_out));
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        text(&refused.stderr).contains("out-not-empty"),
        "{}",
        text(&refused.stderr)
    );

    // A limit the project does not fit is enforced, though a project was kept.
    let (o, _, reused) = compile(&doc, &["--max-files", "3"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stdout));
    assert!(!reused);
    assert!(
        text(&o.stdout).contains("too-many-files"),
        "{}",
        text(&o.stdout)
    );
    assert!(!compile(&doc, &["--platform", "python-svc"]).2);
    assert!(!compile(&doc, &["--sdk", "index", "--platform", "python-svc"]).2);

    // The document's text, then the test file beside it.
    let mut text_now = std::fs::read_to_string(&doc).unwrap();
    text_now.push('\n');
    std::fs::write(&doc, &text_now).unwrap();
    assert!(!compile(&doc, &[]).2);
    assert!(compile(&doc, &[]).2);
    let cases = std::fs::read_to_string(&tests).unwrap();
    std::fs::write(&tests, format!("{cases}\n")).unwrap();
    assert!(!compile(&doc, &[]).2);
    std::fs::remove_file(&tests).unwrap();
    let (o, out, reused) = compile(&doc, &[]);
    assert!(!reused && o.status.success());
    assert_ne!(
        common::tree(&out),
        common::tree(&first_out),
        "the test file's cases are gone"
    );

    // A backend loaded from a file is neither kept nor reused.
    let wasm = component_file(base.path(), "go");
    let backend = ["--backend", wasm.to_str().unwrap()];
    assert!(!compile(&doc, &backend).2);
    assert!(!compile(&doc, &backend).2);

    // A document naming a folder is compiled every time: its files change
    // the project without changing the document.
    let mut rag: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(fixtures().join("valid/rag_node.graph.json")).unwrap(),
    )
    .unwrap();
    let nodes = rag["logical"]["nodes"].as_array_mut().unwrap();
    let node = nodes.iter_mut().find(|n| n["kind"] == "rag").unwrap();
    node["documents"] = serde_json::json!("docs");
    let rag_doc = src.join("rag.graph.json");
    std::fs::write(&rag_doc, rag.to_string()).unwrap();
    std::fs::create_dir(src.join("docs")).unwrap();
    std::fs::write(src.join("docs/a.md"), "Refunds take fourteen days.").unwrap();
    let (o, before, reused) = compile(&rag_doc, &["--platform", "go"]);
    assert!(o.status.success() && !reused, "{}", text(&o.stdout));
    std::fs::write(src.join("docs/a.md"), "Refunds take three weeks.").unwrap();
    let (_, after, reused) = compile(&rag_doc, &["--platform", "go"]);
    assert!(!reused);
    let mentions = |dir: &Path, words: &str| {
        common::tree(dir)
            .values()
            .any(|bytes| String::from_utf8_lossy(bytes).contains(words))
    };
    assert!(mentions(&before, "fourteen days") && !mentions(&before, "three weeks"));
    assert!(mentions(&after, "three weeks") && !mentions(&after, "fourteen days"));

    // --no-cache keeps nothing.
    let fresh = base.path().join("fresh-cache");
    let o = run(svc()
        .env("SVC_CACHE_DIR", &fresh)
        .arg("compile")
        .arg(&doc)
        .arg("--out")
        .arg(base.path().join("nocache"))
        .arg("--no-cache"));
    assert!(o.status.success());
    assert!(!fresh.exists());
}

#[test]
fn the_manifest_records_every_file_with_its_hash() {
    let base = tempfile::tempdir().unwrap();
    let out = base.path().join("p");
    let doc = fixtures().join("valid/minimal.graph.json");
    let o = run(svc()
        .arg("compile")
        .arg(&doc)
        .arg("--out")
        .arg(&out)
        .args(["--platform", "go"]));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let m: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.join(".svc-build-manifest.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(m["platform"], "go");
    assert_eq!(m["irVersion"], "2.0.0");
    assert_eq!(m["document"]["id"], "minimal");
    assert!(!m["commands"]["test"].as_str().unwrap().is_empty());
    let files = common::tree(&out);
    let listed: Vec<&str> = m["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    let on_disk: Vec<&str> = files
        .keys()
        .map(String::as_str)
        .filter(|p| *p != ".svc-build-manifest.json")
        .collect();
    assert_eq!(listed, on_disk);
    for f in m["files"].as_array().unwrap() {
        let bytes = &files[f["path"].as_str().unwrap()];
        assert_eq!(f["size"].as_u64().unwrap() as usize, bytes.len());
        assert_eq!(f["sha256"].as_str().unwrap().len(), 64);
    }
}

#[test]
fn the_component_cache_is_written_reused_and_survives_corruption() {
    let cache = tempfile::tempdir().unwrap();
    let base = tempfile::tempdir().unwrap();
    let doc = fixtures().join("valid/minimal.graph.json");
    let compile = |n: &str| {
        run(svc()
            .arg("compile")
            .arg(&doc)
            .arg("--out")
            .arg(base.path().join(n))
            .args(["--platform", "go", "--cache-dir"])
            .arg(cache.path()))
    };
    assert_eq!(compile("one").status.code(), Some(0));
    let entries: Vec<PathBuf> = std::fs::read_dir(cache.path())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert!(entries[0].to_string_lossy().ends_with(".cwasm"));
    assert_eq!(compile("two").status.code(), Some(0));
    // A damaged entry is ignored and the component compiled again (the
    // project kept for reuse is removed, so the compile loads the backend).
    std::fs::remove_dir_all(cache.path().join("projects")).unwrap();
    std::fs::write(&entries[0], b"not a compiled component").unwrap();
    let o = compile("three");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(
        common::tree(&base.path().join("one")),
        common::tree(&base.path().join("three"))
    );
    // --no-cache leaves the directory alone.
    std::fs::remove_file(&entries[0]).unwrap();
    std::fs::remove_dir_all(cache.path().join("projects")).unwrap();
    let o = run(svc()
        .arg("compile")
        .arg(&doc)
        .arg("--out")
        .arg(base.path().join("four"))
        .args(["--platform", "go", "--no-cache", "--cache-dir"])
        .arg(cache.path()));
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(std::fs::read_dir(cache.path()).unwrap().count(), 0);
}

#[test]
fn capabilities_come_from_the_components() {
    let o = run(svc().args(["capabilities", "--format", "json"]));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let go = v
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["platform"] == "go")
        .expect("go backend");
    assert!(go["capabilities"]["nodeKinds"]
        .as_array()
        .unwrap()
        .iter()
        .any(|k| k == "start"));
    let o = run(svc().args(["version"]));
    assert_eq!(o.status.code(), Some(0));
    assert!(text(&o.stdout).contains("built-in backend go"));
    // The release's versions (svc_ir::release), as the specification's table gives them.
    assert!(
        text(&o.stdout).starts_with("svc 0.3.2 (specification 2.2.0, "),
        "{}",
        text(&o.stdout)
    );
    let o = run(Command::new(env!("CARGO_BIN_EXE_svc-java")).arg("version"));
    assert!(
        text(&o.stdout).starts_with("svc-java 0.2.2 (specification 2.2.0, "),
        "{}",
        text(&o.stdout)
    );
}

#[test]
fn an_unreadable_document_is_a_diagnostic_not_a_crash() {
    let o = run(svc().args([
        "compile",
        "/nonexistent/g.graph.json",
        "--out",
        "/tmp/never-written",
    ]));
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("cannot read"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn svc_java_and_svc_platform_java_give_identical_trees() {
    let base = tempfile::tempdir().unwrap();
    let doc = fixtures().join("valid/support_triage.graph.json");
    let (a, b) = (base.path().join("svc"), base.path().join("svc-java"));
    let o = run(svc()
        .arg("compile")
        .arg(&doc)
        .arg("--out")
        .arg(&a)
        .args(["--platform", "java-svc"]));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let mut java = Command::new(env!("CARGO_BIN_EXE_svc-java"));
    java.env(
        "SVC_CACHE_DIR",
        std::env::temp_dir().join("svc-cli-test-cache"),
    );
    let o = run(java.arg("compile").arg(&doc).arg("--out").arg(&b));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let ta = common::tree(&a);
    assert!(ta.contains_key("pom.xml"));
    assert_eq!(ta, common::tree(&b));
    // And svc-java refuses what java-svc cannot do, e.g. a LangSmith project.
    let mut java = Command::new(env!("CARGO_BIN_EXE_svc-java"));
    let o = run(java
        .arg("compile")
        .arg(fixtures().join("valid/tracing_langsmith_project.graph.json"))
        .arg("--out")
        .arg(base.path().join("project")));
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("tracing.project"),
        "{}",
        text(&o.stderr)
    );
    assert!(!base.path().join("project").exists());
}

#[test]
fn every_declared_refusal_exits_1_and_writes_nothing() {
    let mut checked = 0;
    for entry in std::fs::read_dir(fixtures().join("valid"))
        .unwrap()
        .flatten()
    {
        let path = entry.path();
        let name = path.to_string_lossy().into_owned();
        if !name.ends_with(".graph.json") {
            continue;
        }
        let expect: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(name.replace(".graph.json", ".expect.json")).unwrap(),
        )
        .unwrap();
        for (platform, outcome) in expect["platforms"].as_object().unwrap() {
            if outcome == "ok" {
                continue;
            }
            let base = tempfile::tempdir().unwrap();
            let out = base.path().join("p");
            let o = run(svc()
                .arg("compile")
                .arg(&path)
                .arg("--out")
                .arg(&out)
                .args(["--platform", platform]));
            assert_eq!(
                o.status.code(),
                Some(1),
                "{name} on {platform}: {}",
                text(&o.stderr)
            );
            assert!(!out.exists(), "{name} on {platform} left output");
            assert_eq!(std::fs::read_dir(base.path()).unwrap().count(), 0);
            // Every refusal names the node or setting it is about.
            assert!(
                text(&o.stderr).contains("= at: /"),
                "{name}: {}",
                text(&o.stderr)
            );
            checked += 1;
        }
    }
    // The fixtures' refusals shrink as targets gain features (A2A came to go
    // and java-svc): this only guards against a directory read that finds none.
    assert!(checked >= 10, "only {checked} refusals checked");
}

/// A built-in component written to a file, to load it as a third-party one.
fn component_file(dir: &Path, platform: &str) -> PathBuf {
    let b = svc_builtin::backend(platform).expect("built-in backend");
    let path = dir.join(format!("{platform}.wasm"));
    std::fs::write(&path, b.wasm).unwrap();
    path
}

#[test]
fn a_backend_from_a_file_is_used_like_a_built_in_one() {
    let base = tempfile::tempdir().unwrap();
    let wasm = component_file(base.path(), "go");
    let doc = fixtures().join("valid/support_triage.graph.json");
    let builtin = base.path().join("builtin");
    assert_eq!(
        run(svc().arg("compile").arg(&doc).arg("--out").arg(&builtin))
            .status
            .code(),
        Some(0)
    );
    let flag = base.path().join("flag");
    let o = run(svc()
        .arg("compile")
        .arg(&doc)
        .arg("--out")
        .arg(&flag)
        .arg("--backend")
        .arg(&wasm));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let env = base.path().join("env");
    let o = run(svc()
        .arg("compile")
        .arg(&doc)
        .arg("--out")
        .arg(&env)
        .env("SVC_BACKEND_GO", &wasm));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(common::tree(&builtin), common::tree(&flag));
    assert_eq!(common::tree(&builtin), common::tree(&env));
    // A backend for another platform is refused, naming both.
    let java = component_file(base.path(), "java-svc");
    let o = run(svc()
        .arg("compile")
        .arg(&doc)
        .arg("--out")
        .arg(base.path().join("x"))
        .arg("--backend")
        .arg(&java));
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("is a backend for `java-svc`, not `go`"),
        "{}",
        text(&o.stderr)
    );
    // A file that is not a component is a diagnostic, not a crash.
    let junk = base.path().join("junk.wasm");
    std::fs::write(&junk, b"not wasm").unwrap();
    let o = run(svc()
        .arg("compile")
        .arg(&doc)
        .arg("--out")
        .arg(base.path().join("y"))
        .arg("--backend")
        .arg(&junk));
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("error[plugin-load]"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn test_plugin_runs_a_component_against_the_fixtures() {
    let base = tempfile::tempdir().unwrap();
    let wasm = component_file(base.path(), "go");
    let o = run(svc()
        .arg("test-plugin")
        .arg(&wasm)
        .arg("--fixtures")
        .arg(fixtures()));
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}{}",
        text(&o.stdout),
        text(&o.stderr)
    );
    let out = text(&o.stdout);
    assert!(out.contains("go: ") && out.contains(" 0 failed"), "{out}");
    // A fixture whose declared outcome the component does not meet fails.
    let fx = base.path().join("fixtures");
    std::fs::create_dir_all(&fx).unwrap();
    std::fs::copy(
        fixtures().join("valid/minimal.graph.json"),
        fx.join("m.graph.json"),
    )
    .unwrap();
    std::fs::write(
        fx.join("m.expect.json"),
        r#"{"description": "wrong on purpose", "platforms": {"go": [{"code": "unsupported"}]}}"#,
    )
    .unwrap();
    let o = run(svc()
        .arg("test-plugin")
        .arg(&wasm)
        .arg("--fixtures")
        .arg(&fx));
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stdout).contains("FAIL"), "{}", text(&o.stdout));
}
