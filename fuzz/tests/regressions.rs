//! Every fuzz target on its seeds and on every input the fuzzer found a
//! crash with (`fuzz/regressions/<target>/`, kept after the fix), on stable,
//! so a fixed crash stays fixed without nightly.
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)] // test code

use std::path::Path;

use svc_fuzz::seeds::{seeds, workspace};
use svc_fuzz::TARGETS;

#[test]
fn seeds_run_clean() {
    for (target, run) in TARGETS {
        let seeds = seeds(target).unwrap();
        assert!(!seeds.is_empty(), "{target} has no seeds");
        for seed in seeds {
            eprintln!("{target}: {}", seed.name);
            run(&seed.bytes);
        }
    }
}

#[test]
fn crashes_found_by_fuzzing_stay_fixed() {
    let dir = workspace().join("fuzz/regressions");
    for entry in std::fs::read_dir(&dir).unwrap() {
        let folder = entry.unwrap().path();
        if !folder.is_dir() {
            continue;
        }
        let name = folder.file_name().unwrap().to_string_lossy().into_owned();
        let Some((_, run)) = TARGETS.iter().find(|(t, _)| *t == name) else {
            panic!("{}: no fuzz target named {name}", folder.display());
        };
        for input in std::fs::read_dir(&folder).unwrap() {
            let path = input.unwrap().path();
            eprintln!("{}", path.display());
            run(&std::fs::read(&path).unwrap());
        }
    }
}

/// The seeds reach the readers' success paths (where the round-trip
/// assertions are), not only their refusals.
#[test]
fn seeds_include_accepted_inputs() {
    let valid = seeds("ir_document").unwrap();
    assert!(valid.iter().any(|s| {
        let text = String::from_utf8(s.bytes.clone()).unwrap();
        svc_ir::SourceFile::new(&s.name, text).parse().is_ok()
    }));
    for s in seeds("open_pack").unwrap() {
        svc_packs::archive::open_pack(&s.name, &s.bytes).unwrap();
    }
    // The four marketplace manifests are valid; the scaffolds' have
    // placeholders.
    let manifests = seeds("project_manifest").unwrap();
    let accepted = manifests.iter().filter(|s| {
        let text = String::from_utf8(s.bytes.clone()).unwrap();
        svc_packs::project::ProjectManifest::parse(&s.name, &text).is_ok()
    });
    assert_eq!(accepted.count(), 4);
    let config = seeds("config").unwrap();
    assert!(config.iter().all(|s| {
        let (path, sources) = svc_fuzz::split_config(std::str::from_utf8(&s.bytes).unwrap());
        svc_config::parse_path(&path).is_some() && sources.load().is_ok()
    }));
    assert!(Path::new(&workspace().join("fuzz/regressions")).is_dir());
}
