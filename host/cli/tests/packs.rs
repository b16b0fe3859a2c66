#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
//! Packs end to end, through the `svc` binary: `svc plugin new` then `svc
//! pack` on a fresh project, deterministic zips, the connector test kit,
//! connector code compiled into every platform and run by the project's own
//! tests, and every failure mode of packing and of compiling with packs.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use svc_tests::service::{
    require_platform, require_tool, run_shell, toolchain_checks, Project, Service,
};

const PLATFORMS: [&str; 3] = ["go", "java-svc", "python-svc"];

/// Builds (cargo, Maven) take both cores; one heavy test at a time.
static HEAVY: Mutex<()> = Mutex::new(());

fn heavy() -> std::sync::MutexGuard<'static, ()> {
    HEAVY.lock().unwrap_or_else(|e| e.into_inner())
}

fn workspace() -> PathBuf {
    svc_tests::workspace()
}

/// Where connector crates build: `packs` in the workspace's target
/// directory (CARGO_TARGET_DIR's when set, as .ci/run does, so its cache
/// outlives a clone).
fn packs_target() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR").unwrap_or_else(|| "target".into());
    workspace().join(target).join("packs")
}

/// The `svc` binary with a private plugin directory and component cache,
/// and connector crates built in one shared target directory.
fn svc(args: &[&str]) -> Output {
    static EMPTY: OnceLock<PathBuf> = OnceLock::new();
    let plugins = EMPTY.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("svc-empty-plugins-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    });
    Command::new(env!("CARGO_BIN_EXE_svc"))
        .args(args)
        .env("SVC_PLUGIN_DIR", plugins)
        .env("SVC_CACHE_DIR", svc_tests::service::cache_dir())
        .env("CARGO_TARGET_DIR", packs_target())
        .output()
        .unwrap()
}

fn ok(out: &Output) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "svc failed ({}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// Exit 1 and the diagnostics printed as JSON.
fn fails(out: &Output) -> Vec<serde_json::Value> {
    assert_eq!(
        out.status.code(),
        Some(1),
        "expected exit 1:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)));
    v["diagnostics"].as_array().unwrap().clone()
}

fn codes(diags: &[serde_json::Value]) -> Vec<String> {
    diags
        .iter()
        .map(|d| d["code"].as_str().unwrap().to_string())
        .collect()
}

/// A scaffolded `demo` pack project and its pack, made once.
struct Demo {
    _dir: tempfile::TempDir,
    root: PathBuf,
    dist: PathBuf,
    zip: PathBuf,
}

fn demo() -> &'static Demo {
    static DEMO: OnceLock<Demo> = OnceLock::new();
    DEMO.get_or_init(|| {
        let _guard = heavy();
        let dir = tempfile::tempdir().unwrap();
        let parent = dir.path().to_str().unwrap();
        ok(&svc(&["plugin", "new", "demo", "--dir", parent]));
        let root = dir.path().join("demo");
        let dist = dir.path().join("dist");
        ok(&svc(&[
            "pack",
            "--root",
            root.to_str().unwrap(),
            "--out",
            dist.to_str().unwrap(),
        ]));
        let zip = dist.join("demo-0.1.0.svc-pack.zip");
        assert!(zip.is_file());
        Demo {
            _dir: dir,
            root,
            dist,
            zip,
        }
    })
}

/// Compiles `doc` for `platform` with the packs in `plugins` and runs the
/// project's own setup and checks.
fn compile_and_check(doc: &Path, platform: &str, plugins: &Path, out: &Path) -> Project {
    ok(&svc(&[
        "compile",
        doc.to_str().unwrap(),
        "--platform",
        platform,
        "--plugins",
        plugins.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--force",
    ]));
    let project = Project::at(out).unwrap();
    let limit = Duration::from_secs(600);
    run_shell(out, &project.command("setup"), &[], limit).unwrap();
    for step in toolchain_checks(platform) {
        if let Err(e) = run_shell(out, step, &[], limit) {
            panic!("{platform}: {e}");
        }
    }
    project
}

#[test]
fn plugin_new_then_pack_works_packs_identically_and_runs_on_every_platform() {
    let demo = demo();
    let _guard = heavy();
    // The scaffold's own tests pass as generated.
    let target = packs_target();
    let test = format!(
        "CARGO_TARGET_DIR={} cargo test -q --manifest-path connector/Cargo.toml",
        target.display()
    );
    run_shell(&demo.root, &test, &[], Duration::from_secs(900)).unwrap();

    // Packing again gives the same bytes; validate-pack agrees.
    let again = demo.dist.join("again");
    ok(&svc(&[
        "pack",
        "--root",
        demo.root.to_str().unwrap(),
        "--out",
        again.to_str().unwrap(),
    ]));
    assert_eq!(
        std::fs::read(&demo.zip).unwrap(),
        std::fs::read(again.join("demo-0.1.0.svc-pack.zip")).unwrap(),
        "packing twice must give identical zips"
    );
    let valid = ok(&svc(&[
        "validate-pack",
        "--root",
        demo.root.to_str().unwrap(),
    ]));
    assert!(valid.contains("go, java-svc, python-svc"), "{valid}");

    // The test kit runs the bare component against the example.
    let wasm = target.join("wasm32-wasip2/release/svc_connector_demo.wasm");
    let example = demo.root.join("example");
    let kit = ok(&svc(&[
        "test-plugin",
        wasm.to_str().unwrap(),
        "--fixtures",
        example.to_str().unwrap(),
    ]));
    assert!(kit.contains("4 checks, 4 passed, 0 failed"), "{kit}");

    // Every platform compiles the example with the pack and passes its own
    // checks; the service answers with what the connector computed.
    let doc = example.join("demo.graph.json");
    let out = tempfile::tempdir().unwrap();
    for platform in PLATFORMS {
        if !require_platform(platform) {
            continue;
        }
        let project = compile_and_check(&doc, platform, &demo.dist, &out.path().join(platform));
        // The build manifest records which connector, from which pack.
        let used = &project.manifest["connectors"][0];
        assert_eq!(used["id"], "local/demo", "{platform}");
        assert_eq!(used["node"], "greet", "{platform}");
        assert_eq!(used["packSha256"].as_str().unwrap().len(), 64, "{platform}");
        if platform == "java-svc" {
            continue; // its own Spring tests ran above; starting the jar again adds a minute
        }
        run_shell(
            project.path(),
            &project.command("build"),
            &[],
            Duration::from_secs(300),
        )
        .unwrap();
        let service =
            Service::launch(&project, &[("SVC_API_KEY", "k")], Duration::from_secs(60)).unwrap();
        let r = service
            .send(
                "POST",
                "/invoke",
                &[("Content-Type", "application/json"), ("X-API-Key", "k")],
                br#"{"state": {"name": "Ada"}}"#,
            )
            .unwrap();
        assert_eq!(r.status, 200, "{platform}: {}", r.text());
        assert_eq!(r.json()["result"]["greeting"], "Hello, Ada!", "{platform}");
    }
}

/// Python and TypeScript connectors as `svc plugin new --lang` makes them:
/// their own tests pass, they pack twice to the same bytes and validate,
/// and every platform compiles the example and passes its own checks; on Go
/// and Python the service answers with what the connector computed. The
/// Python component sees nothing of the machine when it runs.
#[test]
fn python_and_typescript_connectors_pack_and_run_on_every_platform() {
    let _guard = heavy();
    for (lang, tool, own_tests) in [
        (
            "python",
            "componentize-py",
            "python -m pytest -q -p no:cacheprovider connector",
        ),
        (
            "typescript",
            "npm",
            "cd connector && npm ci --no-audit --no-fund --loglevel=error && npm test",
        ),
    ] {
        if !require_tool(tool) {
            continue;
        }
        let dir = tempfile::tempdir().unwrap();
        let name = format!("greet-{lang}");
        let parent = dir.path().to_str().unwrap();
        ok(&svc(&[
            "plugin", "new", &name, "--lang", lang, "--dir", parent,
        ]));
        let root = dir.path().join(&name);
        run_shell(&root, own_tests, &[], Duration::from_secs(900))
            .unwrap_or_else(|e| panic!("{lang}: {e}"));

        let dist = dir.path().join("dist");
        let pack = |out: &Path| {
            ok(&svc(&[
                "pack",
                "--root",
                root.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
            ]))
        };
        pack(&dist);
        pack(&dist.join("again"));
        let file = format!("{name}-0.1.0.svc-pack.zip");
        assert_eq!(
            std::fs::read(dist.join(&file)).unwrap(),
            std::fs::read(dist.join("again").join(&file)).unwrap(),
            "{lang}: packing twice must give identical zips"
        );
        let valid = ok(&svc(&["validate-pack", "--root", root.to_str().unwrap()]));
        assert!(valid.contains("go, java-svc, python-svc"), "{valid}");

        let doc = root.join(format!("example/{}.graph.json", name.replace('-', "_")));
        let out = tempfile::tempdir().unwrap();
        for platform in PLATFORMS {
            if !require_platform(platform) {
                continue;
            }
            let project = compile_and_check(&doc, platform, &dist, &out.path().join(platform));
            assert_eq!(
                project.manifest["connectors"][0]["id"],
                format!("local/{name}"),
                "{lang} {platform}"
            );
            if platform == "java-svc" {
                continue; // its own Spring tests ran above
            }
            run_shell(
                project.path(),
                &project.command("build"),
                &[],
                Duration::from_secs(300),
            )
            .unwrap();
            let service =
                Service::launch(&project, &[("SVC_API_KEY", "k")], Duration::from_secs(60))
                    .unwrap();
            let r = service
                .send(
                    "POST",
                    "/invoke",
                    &[("Content-Type", "application/json"), ("X-API-Key", "k")],
                    br#"{"state": {"name": "Ada"}}"#,
                )
                .unwrap();
            assert_eq!(r.status, 200, "{lang} {platform}: {}", r.text());
            assert_eq!(
                r.json()["result"]["greeting"],
                "Hello, Ada!",
                "{lang} {platform}"
            );
        }

        if lang == "python" {
            // What the component sees of the machine while it renders: a
            // render that reports it instead of rendering.
            let app = root.join("connector/app.py");
            let mut code = std::fs::read_to_string(&app).unwrap();
            code.push_str(PROBE);
            std::fs::write(&app, code).unwrap();
            let d = fails(&svc(&[
                "validate-pack",
                "--root",
                root.to_str().unwrap(),
                "--format",
                "json",
            ]));
            let seen = d[0]["message"].as_str().unwrap();
            assert!(
                seen.contains("env=0 files=denied net=denied clock=0"),
                "{seen}"
            );

            // A render that needs 300 MiB hits the default memory cap; the
            // pack's own `limits` lets it through.
            let mut code = std::fs::read_to_string(&app).unwrap();
            code.push_str(HOG);
            std::fs::write(&app, code).unwrap();
            let validate = || {
                svc(&[
                    "validate-pack",
                    "--root",
                    root.to_str().unwrap(),
                    "--format",
                    "json",
                ])
            };
            let refused = codes(&fails(&validate()));
            assert_eq!(refused, ["plugin-memory"; 3], "one per platform");
            let manifest = root.join("svc.project.json");
            let text = std::fs::read_to_string(&manifest).unwrap().replacen(
                "\"templates\"",
                "\"limits\": { \"memoryMiB\": 512 },\n  \"templates\"",
                1,
            );
            std::fs::write(&manifest, text).unwrap();
            let d = fails(&validate());
            assert_eq!(codes(&d)[0], "connector-config", "{d:?}");
        }
    }
}

/// Appended to a Python connector: `render` reports what the sandbox lets
/// it see (variables, a file, a socket, the clock) as its diagnostic.
const PROBE: &str = r#"

def probe() -> str:
    import os
    import time

    try:
        open("/etc/hostname").read()
        files = "read"
    except OSError:
        files = "denied"
    try:
        import socket

        socket.create_connection(("127.0.0.1", 9), timeout=1)
        net = "open"
    except Exception:
        net = "denied"
    return f"env={len(os.environ)} files={files} net={net} clock={int(time.time())}"


def report(self, node_id, platform, node_config):
    raise Err([error("connector-config", probe(), "")])


Connector.render = report
"#;

/// Appended after [`PROBE`]: `render` holds 300 MiB, then reports.
const HOG: &str = r#"

def hog(self, node_id, platform, node_config):
    held = bytearray(300 << 20)
    report(self, node_id, platform, node_config + str(len(held))[:0])


Connector.render = hog
"#;

#[test]
fn compiling_with_packs_explains_each_failure() {
    let demo = demo();
    let dir = tempfile::tempdir().unwrap();
    let doc = demo.root.join("example/demo.graph.json");
    let text = std::fs::read_to_string(&doc).unwrap();
    let write = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_string()
    };
    let out = dir.path().join("out");
    let out = out.to_str().unwrap();
    let plugins = demo.dist.to_str().unwrap();
    let compile = |doc: &str, platform: &str, plugins: &[&str]| {
        let mut args = vec![
            "compile",
            doc,
            "--platform",
            platform,
            "--out",
            out,
            "--format",
            "json",
        ];
        if !plugins.is_empty() {
            args.push("--plugins");
            args.extend(plugins);
        }
        svc(&args)
    };

    // No pack: the connector is missing.
    let d = fails(&compile(doc.to_str().unwrap(), "go", &[]));
    assert_eq!(codes(&d), ["connector-missing"]);
    assert_eq!(d[0]["pointer"], "/logical/nodes/1");
    assert!(d[0]["hint"].as_str().unwrap().contains("--plugins"));

    // A range no loaded version matches.
    let v2 = write("v2.graph.json", &text.replace("\"^0.1\"", "\"^0.2\""));
    let d = fails(&compile(&v2, "python-svc", &[plugins]));
    assert_eq!(codes(&d), ["connector-version"]);
    assert!(d[0]["message"].as_str().unwrap().contains("0.1.0"), "{d:?}");

    // No template for the target in the graph.
    let mut graph: serde_json::Value = serde_json::from_str(&text).unwrap();
    graph["codegen"]["templates"]
        .as_object_mut()
        .unwrap()
        .remove("java-svc");
    let no_java = write("no_java.graph.json", &graph.to_string());
    let d = fails(&compile(&no_java, "java-svc", &[plugins]));
    assert_eq!(codes(&d), ["template-required"]);
    assert!(d[0]["message"]
        .as_str()
        .unwrap()
        .contains("template required (codegen.templates[\"java-svc\"])"));

    // A config the connector's schema refuses, placed in the document.
    graph["logical"]["nodes"][1]["config"]["txt"] = serde_json::json!(1);
    let bad_config = write(
        "bad_config.graph.json",
        &serde_json::to_string_pretty(&graph).unwrap(),
    );
    let d = fails(&compile(&bad_config, "go", &[plugins]));
    assert_eq!(codes(&d), ["unknown-field"]);
    assert_eq!(d[0]["pointer"], "/logical/nodes/1/config/txt");
    assert!(d[0]["position"]["line"].as_u64().unwrap() > 1);

    // A plugin path that does not exist, and a pack that is not a zip.
    let d = fails(&compile(
        doc.to_str().unwrap(),
        "go",
        &["/nonexistent/packs"],
    ));
    assert_eq!(codes(&d), ["plugin-path"]);
    let junk = write("junk.svc-pack.zip", "PK not really");
    let d = fails(&compile(doc.to_str().unwrap(), "go", &[&junk]));
    assert_eq!(codes(&d), ["zip-malformed"]);
    assert!(
        std::fs::metadata(out).is_err(),
        "a failed compile writes nothing"
    );

    // A tampered pack: one entry changed after packing.
    let bytes = std::fs::read(&demo.zip).unwrap();
    let needle = b"Hello";
    let at = bytes.windows(needle.len()).position(|w| w == needle);
    if let Some(at) = at {
        let mut tampered = bytes.clone();
        tampered[at] = b'J';
        let evil = dir.path().join("evil.svc-pack.zip");
        std::fs::write(&evil, tampered).unwrap();
        let d = fails(&compile(
            doc.to_str().unwrap(),
            "go",
            &[evil.to_str().unwrap()],
        ));
        assert!(
            codes(&d) == ["zip-crc"] || codes(&d) == ["pack-hash-mismatch"],
            "{d:?}"
        );
    }
}

/// Copies the demo project so a test can break it.
fn copy_demo(to: &Path) -> PathBuf {
    let root = to.join("demo");
    run_shell(
        to,
        &format!("cp -r {} {}", demo().root.display(), root.display()),
        &[],
        Duration::from_secs(60),
    )
    .unwrap();
    root
}

#[test]
fn packing_fails_closed_and_allow_partial_records_what_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let root = copy_demo(dir.path());
    let r = root.to_str().unwrap();
    let dist = dir.path().join("dist");
    let d = dist.to_str().unwrap();
    let _guard = heavy();

    // A platform the example does not render (its codegen.templates entry
    // is gone): refused, unless partial packs are allowed.
    let doc = root.join("example/demo.graph.json");
    let mut graph: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&doc).unwrap()).unwrap();
    graph["codegen"]["templates"]
        .as_object_mut()
        .unwrap()
        .remove("java-svc");
    std::fs::write(&doc, serde_json::to_string_pretty(&graph).unwrap()).unwrap();
    let diags = fails(&svc(&["pack", "--root", r, "--out", d, "--format", "json"]));
    assert_eq!(codes(&diags), ["pack-document"]);
    assert!(
        diags[0]["message"]
            .as_str()
            .unwrap()
            .starts_with("[java-svc]"),
        "{diags:?}"
    );
    assert!(std::fs::read_dir(&dist).is_err(), "nothing written");
    let packed = ok(&svc(&[
        "pack",
        "--root",
        r,
        "--out",
        d,
        "--allow-partial",
        "--format",
        "json",
    ]));
    let packed: serde_json::Value = serde_json::from_str(&packed).unwrap();
    assert_eq!(
        packed["manifest"]["platforms"],
        serde_json::json!(["go", "python-svc"])
    );
    assert_eq!(packed["manifest"]["missing"][0]["platform"], "java-svc");
    // The partial pack serves Go and says why it cannot serve Java.
    let doc = demo().root.join("example/demo.graph.json");
    let out = dir.path().join("out");
    let compile = |platform: &str| {
        svc(&[
            "compile",
            doc.to_str().unwrap(),
            "--platform",
            platform,
            "--plugins",
            d,
            "--out",
            out.to_str().unwrap(),
            "--force",
            "--format",
            "json",
        ])
    };
    ok(&compile("go"));
    let diags = fails(&compile("java-svc"));
    assert_eq!(codes(&diags), ["template-required"]);
    assert!(
        diags[0]["message"]
            .as_str()
            .unwrap()
            .contains("packed without it"),
        "{diags:?}"
    );

    // --platforms picks a subset; an unknown one is refused.
    let sub = dir.path().join("sub");
    let packed = ok(&svc(&[
        "pack",
        "--root",
        r,
        "--out",
        sub.to_str().unwrap(),
        "--platforms",
        "go",
        "--format",
        "json",
    ]));
    let packed: serde_json::Value = serde_json::from_str(&packed).unwrap();
    assert_eq!(packed["manifest"]["platforms"], serde_json::json!(["go"]));
    let diags = fails(&svc(&[
        "pack",
        "--root",
        r,
        "--platforms",
        "rust",
        "--format",
        "json",
    ]));
    assert_eq!(codes(&diags), ["pack-platform"]);
}

#[test]
fn validate_pack_checks_manifest_host_api_document_and_component() {
    let dir = tempfile::tempdir().unwrap();
    let root = copy_demo(dir.path());
    let r = root.to_str().unwrap();
    let manifest = root.join("svc.project.json");
    let original = std::fs::read_to_string(&manifest).unwrap();
    let validate = || svc(&["validate-pack", "--root", r, "--format", "json"]);

    // The manifest's schema: an unknown field and a bad version, with positions.
    std::fs::write(
        &manifest,
        original.replace(
            "\"version\": \"0.1.0\"",
            "\"version\": \"1.0\", \"colour\": \"blue\"",
        ),
    )
    .unwrap();
    let d = fails(&validate());
    assert_eq!(codes(&d), ["unknown-field", "manifest-version"]);
    assert_eq!(d[0]["position"]["line"], 4);

    // A host API this svc does not provide, and one it loads but no longer
    // builds against (the SDK builds 0.2 components).
    for old in ["\"^1.0\"", "\"^0.1\""] {
        std::fs::write(&manifest, original.replace("\"^0.2\"", old)).unwrap();
        assert_eq!(codes(&fails(&validate())), ["host-api"], "{old}");
    }

    // An invalid example document.
    std::fs::write(&manifest, &original).unwrap();
    let doc = root.join("example/demo.graph.json");
    let doc_text = std::fs::read_to_string(&doc).unwrap();
    std::fs::write(
        &doc,
        doc_text.replace("\"to\": \"end\"", "\"to\": \"nowhere\""),
    )
    .unwrap();
    let d = fails(&validate());
    assert!(codes(&d).iter().any(|c| c == "unresolved-ref"), "{d:?}");
    std::fs::write(&doc, &doc_text).unwrap();

    // A template folder that links outside the project is not packed.
    let _guard = heavy();
    let outside = dir.path().join("secrets");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("id_rsa"), "private").unwrap();
    let go = root.join("templates/go");
    let kept = root.join("templates/go.kept");
    std::fs::rename(&go, &kept).unwrap();
    std::os::unix::fs::symlink(&outside, &go).unwrap();
    assert_eq!(codes(&fails(&validate())), ["pack-outside"]);
    std::fs::remove_file(&go).unwrap();
    std::fs::rename(&kept, &go).unwrap();

    // The component's info() must match the manifest.
    std::fs::write(
        &manifest,
        original.replace("\"version\": \"0.1.0\"", "\"version\": \"0.2.0\""),
    )
    .unwrap();
    let d = fails(&validate());
    assert_eq!(codes(&d), ["connector-info"]);
    assert!(d[0]["message"].as_str().unwrap().contains("0.2.0"), "{d:?}");
}

/// Packs every marketplace project, checks `marketplace/index.json` against
/// the packs (`SVC_UPDATE_INDEX=1` rewrites it), and compiles each example
/// for every platform; each project passes its own checks, and on Go and
/// Python the service does what the connector promises.
#[test]
fn marketplace_packs_are_indexed_and_run_on_every_platform() {
    let market = workspace().join("marketplace");
    let dist = tempfile::tempdir().unwrap();
    let d = dist.path().to_str().unwrap();
    let mut entries = Vec::new();
    let _guard = heavy();
    // The Python and TypeScript connectors' own tests, in their languages'
    // runners (the Rust ones are workspace crates); packing needs the same
    // tools.
    if !require_tool("componentize-py") || !require_tool("npm") {
        return;
    }
    for (name, own_tests) in [
        (
            "slack-notify",
            "python -m pytest -q -p no:cacheprovider connector",
        ),
        (
            "json-path",
            "cd connector && npm ci --no-audit --no-fund --loglevel=error && npm test",
        ),
    ] {
        run_shell(&market.join(name), own_tests, &[], Duration::from_secs(900))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    let index_path = market.join("index.json");
    let update = std::env::var_os("SVC_UPDATE_INDEX").is_some();
    let committed: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&index_path).unwrap_or_default())
            .unwrap_or_default();
    for name in ["json-path", "kv-cache", "slack-notify", "webhook"] {
        let root = market.join(name);
        let out = ok(&svc(&[
            "pack",
            "--root",
            root.to_str().unwrap(),
            "--out",
            d,
            "--format",
            "json",
        ]));
        let packed: serde_json::Value = serde_json::from_str(&out).unwrap();
        let m = &packed["manifest"];
        assert_eq!(
            m["platforms"],
            serde_json::json!(PLATFORMS),
            "{name} packs every platform"
        );
        // componentize-py and ComponentizeJS do not build the same bytes
        // twice, so a Python or TypeScript pack rebuilt on another machine
        // has another digest: the index keeps the one its publisher built,
        // and every other field is checked.
        let mut sha256 = packed["sha256"].clone();
        if !update && ["json-path", "slack-notify"].contains(&name) {
            if let Some(kept) = committed["packs"]
                .as_array()
                .and_then(|packs| packs.iter().find(|p| p["name"] == name))
            {
                sha256 = kept["sha256"].clone();
            }
        }
        entries.push(serde_json::json!({
            "name": m["name"],
            "connector": m["connector"],
            "version": m["version"],
            "description": m["description"],
            "platforms": m["platforms"],
            "file": Path::new(packed["pack"].as_str().unwrap()).file_name().unwrap().to_str().unwrap(),
            "sha256": sha256,
        }));
    }
    let index = serde_json::to_string_pretty(&serde_json::json!({
        "formatVersion": 1,
        "packs": entries,
    }))
    .unwrap()
        + "\n";
    if update {
        std::fs::write(&index_path, &index).unwrap();
    }
    assert_eq!(
        std::fs::read_to_string(&index_path).unwrap_or_default(),
        index,
        "marketplace/index.json is stale: run `SVC_UPDATE_INDEX=1 cargo test -p svc-cli --test packs marketplace`"
    );

    let out = tempfile::tempdir().unwrap();
    for platform in PLATFORMS {
        if !require_platform(platform) {
            continue;
        }
        let kv = compile_and_check(
            &market.join("kv-cache/example/cached_answer.graph.json"),
            platform,
            dist.path(),
            &out.path().join(format!("kv-{platform}")),
        );
        let hook = compile_and_check(
            &market.join("webhook/example/notify.graph.json"),
            platform,
            dist.path(),
            &out.path().join(format!("hook-{platform}")),
        );
        let slack = compile_and_check(
            &market.join("slack-notify/example/notify_channel.graph.json"),
            platform,
            dist.path(),
            &out.path().join(format!("slack-{platform}")),
        );
        let path = compile_and_check(
            &market.join("json-path/example/extract_name.graph.json"),
            platform,
            dist.path(),
            &out.path().join(format!("path-{platform}")),
        );
        if platform == "java-svc" {
            continue; // their Spring tests ran above; a jar start adds a minute each
        }
        let headers = [("Content-Type", "application/json"), ("X-API-Key", "k")];
        let env = [("SVC_API_KEY", "k")];
        for p in [&kv, &hook, &slack, &path] {
            run_shell(p.path(), &p.command("build"), &[], Duration::from_secs(300)).unwrap();
        }

        // The cache misses, then hits with the computed answer.
        let service = Service::launch(&kv, &env, Duration::from_secs(60)).unwrap();
        let ask = br#"{"state": {"question": "why?"}}"#;
        let first = service.send("POST", "/invoke", &headers, ask).unwrap();
        assert_eq!(first.status, 200, "{platform}: {}", first.text());
        assert_eq!(first.json()["result"]["cached"], false, "{platform}");
        let second = service
            .send("POST", "/invoke", &headers, ask)
            .unwrap()
            .json();
        assert_eq!(second["result"]["cached"], true, "{platform}: {second}");
        assert_eq!(
            second["result"]["answer"],
            first.json()["result"]["answer"],
            "{platform}"
        );
        drop(service);

        // The webhook receives the chosen fields and its reply is kept.
        let stub = svc_tests::http::Stub::start(|_| {
            svc_tests::http::Reply::Json(200, r#"{"ticket": 42}"#.to_string())
        })
        .unwrap();
        let url = format!("{}/hook", stub.url());
        let service = Service::launch(
            &hook,
            &[("SVC_API_KEY", "k"), ("WEBHOOK_URL", &url)],
            Duration::from_secs(60),
        )
        .unwrap();
        let r = service
            .send(
                "POST",
                "/invoke",
                &headers,
                br#"{"state": {"question": "disk full"}}"#,
            )
            .unwrap();
        assert_eq!(r.status, 200, "{platform}: {}", r.text());
        assert_eq!(
            r.json()["result"]["receipt"],
            serde_json::json!({"ticket": 42}),
            "{platform}"
        );
        let sent = stub.received();
        assert_eq!(sent.len(), 1, "{platform}");
        assert_eq!(
            sent[0].json(),
            serde_json::json!({"question": "disk full"}),
            "{platform}"
        );
        drop(service);

        // A failing webhook is an upstream_error naming the node.
        let failing =
            svc_tests::http::Stub::start(|_| svc_tests::http::Reply::Json(500, "{}".to_string()))
                .unwrap();
        let url = format!("{}/hook", failing.url());
        let service = Service::launch(
            &hook,
            &[("SVC_API_KEY", "k"), ("WEBHOOK_URL", &url)],
            Duration::from_secs(60),
        )
        .unwrap();
        let r = service
            .send(
                "POST",
                "/invoke",
                &headers,
                br#"{"state": {"question": "x"}}"#,
            )
            .unwrap();
        assert_eq!(r.status, 502, "{platform}: {}", r.text());
        let error = &r.json()["error"];
        assert_eq!(error["code"], "upstream_error", "{platform}");
        assert_eq!(error["details"]["reason"], "status", "{platform}");
        assert_eq!(error["details"]["node"], "notify", "{platform}");
        drop(service);

        // The Python connector: the channel gets {"text": ...} with the
        // ticket filled in (Slack answers "ok" as text), and the graph keeps
        // what was posted; a refusing webhook is an upstream_error.
        let channel =
            svc_tests::http::Stub::start(|_| svc_tests::http::Reply::Text(200, "ok".to_string()))
                .unwrap();
        let url = format!("{}/services/T0/B0/x", channel.url());
        let service = Service::launch(
            &slack,
            &[("SVC_API_KEY", "k"), ("SLACK_WEBHOOK_URL", &url)],
            Duration::from_secs(60),
        )
        .unwrap();
        let ticket = br#"{"state": {"ticket": "disk full"}}"#;
        let r = service.send("POST", "/invoke", &headers, ticket).unwrap();
        assert_eq!(r.status, 200, "{platform}: {}", r.text());
        assert_eq!(
            r.json()["result"]["answer"],
            "Posted: New ticket: disk full",
            "{platform}"
        );
        let sent = channel.received();
        assert_eq!(sent.len(), 1, "{platform}");
        assert_eq!(
            sent[0].json(),
            serde_json::json!({"text": "New ticket: disk full"}),
            "{platform}"
        );
        drop(service);
        let refusing = svc_tests::http::Stub::start(|_| {
            svc_tests::http::Reply::Text(403, "invalid_token".to_string())
        })
        .unwrap();
        let url = format!("{}/services/T0/B0/x", refusing.url());
        let service = Service::launch(
            &slack,
            &[("SVC_API_KEY", "k"), ("SLACK_WEBHOOK_URL", &url)],
            Duration::from_secs(60),
        )
        .unwrap();
        let r = service.send("POST", "/invoke", &headers, ticket).unwrap();
        assert_eq!(r.status, 502, "{platform}: {}", r.text());
        let error = &r.json()["error"];
        assert_eq!(error["details"]["reason"], "status", "{platform}");
        assert_eq!(error["details"]["node"], "post", "{platform}");
        drop(service);

        // The TypeScript connector: the path compiled into steps finds the
        // first item's name, and the default stands in when there is none.
        let service = Service::launch(&path, &env, Duration::from_secs(60)).unwrap();
        for (payload, want) in [
            (r#"{"items": [{"name": "Ada"}, {"name": "Grace"}]}"#, "Ada"),
            (r#"{"items": []}"#, "unknown"),
            (r#"{"other": 1}"#, "unknown"),
        ] {
            let body = format!(r#"{{"state": {{"payload": {payload}}}}}"#);
            let r = service
                .send("POST", "/invoke", &headers, body.as_bytes())
                .unwrap();
            assert_eq!(r.status, 200, "{platform} {payload}: {}", r.text());
            assert_eq!(r.json()["result"]["name"], want, "{platform} {payload}");
        }
    }
}
