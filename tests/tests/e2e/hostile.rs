//! Deliberately hostile components: each must end in a diagnostic naming
//! the component, within twice its limit, and the host must survive to
//! compile a good graph afterwards.

use std::time::{Duration, Instant};

use svc_compile::{BackendSource, Compile, Generated, NoConnectors, Output};
use svc_ir::{Diagnostic, SourceFile};
use svc_runtime::Limits;
use svc_tests::{fixtures, hostile, runtime, Builtins, OneBackend};

const LIMITS: Limits = Limits {
    memory_bytes: 64 * 1024 * 1024,
    timeout: Duration::from_millis(1000),
    max_files: 10_000,
    max_output_bytes: 16 * 1024 * 1024,
};

fn minimal() -> SourceFile {
    let path = fixtures().join("valid/minimal.graph.json");
    let text = std::fs::read_to_string(&path).expect("fixture");
    SourceFile::new(path.display().to_string(), text)
}

/// Compiles the minimal fixture for go in memory.
fn generate(backends: &dyn BackendSource) -> Result<Generated, Vec<Diagnostic>> {
    Compile {
        platform: Some("go"),
        ..Compile::default()
    }
    .run(&mut minimal(), backends, &mut NoConnectors)
}

/// Runs one hostile component; returns its diagnostics and the time taken.
fn run(name: &str) -> (Vec<Diagnostic>, Duration) {
    let path = hostile(name).expect("hostile component built by build.rs");
    let rt = runtime(LIMITS);
    let bytes = std::fs::read(path).expect("component bytes");
    // Compile (or load) the component before the clock starts: the limits
    // under test apply to calls into it.
    rt.load_backend(name, &bytes)
        .expect("the hostile component loads");
    let backends = OneBackend {
        runtime: &rt,
        name: name.to_string(),
        bytes,
    };
    let started = Instant::now();
    let result = generate(&backends);
    let elapsed = started.elapsed();
    let diags = result.expect_err("a hostile component must not produce a project");
    (diags, elapsed)
}

fn assert_one(diags: &[Diagnostic], code: &str, mentions: &str) {
    assert_eq!(diags.len(), 1, "{diags:#?}");
    assert_eq!(diags[0].code, code, "{}", diags[0].render());
    assert!(diags[0].message.contains(mentions), "{}", diags[0].render());
}

#[test]
fn an_infinite_loop_is_stopped_by_the_deadline() {
    let (d, t) = run("svc-hostile-loop");
    assert_one(&d, "plugin-timeout", "svc-hostile-loop");
    assert!(t < LIMITS.timeout * 2, "took {t:?}");
    assert!(t >= LIMITS.timeout, "stopped early, after {t:?}");
}

#[test]
fn a_memory_bomb_hits_the_cap() {
    let (d, t) = run("svc-hostile-memory");
    assert_one(&d, "plugin-memory", "67108864 bytes");
    assert!(t < LIMITS.timeout * 2, "took {t:?}");
}

#[test]
fn a_trap_becomes_a_diagnostic() {
    let (d, _) = run("svc-hostile-trap");
    assert_one(&d, "plugin-trap", "svc-hostile-trap");
}

#[test]
fn a_parent_directory_path_is_refused() {
    let (d, _) = run("svc-hostile-dotdot");
    assert_one(&d, "unsafe-path", "climbs out of the project");
}

#[test]
fn an_absolute_path_is_refused() {
    let (d, _) = run("svc-hostile-absolute");
    assert_one(&d, "unsafe-path", "absolute");
}

#[test]
fn a_flood_of_files_hits_the_file_cap() {
    let (d, t) = run("svc-hostile-many-files");
    assert_one(&d, "plugin-too-many-files", "100000 files");
    assert!(t < LIMITS.timeout * 2, "took {t:?}");
}

#[test]
fn the_host_survives_every_hostile_component() {
    // One runtime, every hostile component in turn, then a good compile.
    let rt = runtime(LIMITS);
    for name in [
        "svc-hostile-trap",
        "svc-hostile-memory",
        "svc-hostile-dotdot",
    ] {
        let backends = OneBackend {
            runtime: &rt,
            name: name.into(),
            bytes: std::fs::read(hostile(name).expect("built")).expect("bytes"),
        };
        assert!(generate(&backends).is_err());
    }
    let good = generate(&Builtins { runtime: &rt }).unwrap_or_else(|d| panic!("{d:#?}"));
    assert!(good.files.iter().any(|f| f.path == "go.mod"));
}

#[test]
fn a_backends_warnings_come_with_its_project_placed_in_the_document() {
    let rt = runtime(LIMITS);
    let name = "svc-hostile-warning";
    let backends = OneBackend {
        runtime: &rt,
        name: name.into(),
        bytes: std::fs::read(hostile(name).expect("built")).expect("bytes"),
    };
    let generated = generate(&backends)
        .unwrap_or_else(|d| panic!("a warning must not stop the compile: {d:#?}"));
    assert!(generated.files.iter().any(|f| f.path == "README.md"));
    let [w] = generated.warnings.as_slice() else {
        panic!("{:#?}", generated.warnings)
    };
    assert_eq!(w.severity, svc_ir::Severity::Warning);
    assert_eq!(w.code, "example-warning");
    assert_eq!(w.source.as_deref(), Some(name));
    assert_eq!(w.node.as_deref(), Some("start"), "{}", w.render());
    assert!(
        w.position.is_some(),
        "placed in the document: {}",
        w.render()
    );
}

#[test]
fn a_late_module_check_that_fails_removes_the_project_it_waited_for() {
    let rt = runtime(LIMITS);
    let name = "svc-hostile-late-check";
    let backends = OneBackend {
        runtime: &rt,
        name: name.into(),
        bytes: std::fs::read(hostile(name).expect("built")).expect("bytes"),
    };
    let two_cores = std::thread::available_parallelism().map_or(1, |n| n.get()) > 1;
    // Into a folder: on two cores the files come from the separate call,
    // unchecked, and are written to a temporary directory; the checking
    // call's verdict comes after, and when it fails nothing is left.
    let base = tempfile::tempdir().expect("tempdir");
    let out = base.path().join("project");
    let found = Compile {
        platform: Some("go"),
        out: Output::Dir {
            path: &out,
            force: false,
        },
        ..Compile::default()
    }
    .run(&mut minimal(), &backends, &mut NoConnectors)
    .expect_err("the check fails");
    assert_eq!(found[0].code, "example-late-fault", "{found:#?}");
    let expected = if two_cores {
        "module-check: only"
    } else {
        "module-check: none"
    };
    assert!(found[0].message.contains(expected), "{}", found[0].render());
    assert!(
        found[0].position.is_some(),
        "placed in the document: {}",
        found[0].render()
    );
    let left: Vec<_> = std::fs::read_dir(base.path()).expect("read").collect();
    assert!(left.is_empty(), "{left:?}");

    // In memory (no late check) the check runs inside the one call.
    let found = generate(&backends).expect_err("the check fails");
    assert!(
        found[0].message.contains("module-check: none"),
        "{}",
        found[0].render()
    );
}
