//! The committed JSON Schema matches the model, accepts every valid fixture,
//! and refuses the structurally invalid ones; normalization is idempotent.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)] // test code

use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn graphs(dir: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(workspace().join("fixtures").join(dir))
        .expect("fixtures dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(".graph.json"))
        .collect();
    out.sort();
    assert!(!out.is_empty());
    out
}

#[test]
fn committed_schema_is_current() {
    let path = workspace().join("fixtures/schema/ir-v2.schema.json");
    let generated = svc_ir::schema::json_schema();
    if std::env::var_os("SVC_UPDATE_SCHEMA").is_some() {
        std::fs::write(&path, &generated).expect("write schema");
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "fixtures/schema/ir-v2.schema.json is stale; regenerate it with \
         `SVC_UPDATE_SCHEMA=1 cargo test -p svc-ir --test schema_and_fixtures` and commit it"
    );
}

fn validator() -> jsonschema::Validator {
    let schema: serde_json::Value =
        serde_json::from_str(&svc_ir::schema::json_schema()).expect("schema is JSON");
    jsonschema::validator_for(&schema).expect("schema compiles")
}

#[test]
fn schema_accepts_every_valid_fixture_and_its_normalized_form() {
    let v = validator();
    for path in graphs("valid") {
        let text = std::fs::read_to_string(&path).expect("read");
        let value: serde_json::Value = serde_json::from_str(&text).expect("json");
        let errors: Vec<String> = v
            .iter_errors(&value)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{}: {errors:#?}", path.display());

        let doc = svc_ir::SourceFile::new(path.display().to_string(), text)
            .parse()
            .unwrap_or_else(|d| panic!("{}: {d:#?}", path.display()));
        let normalized: serde_json::Value =
            serde_json::from_str(&doc.to_canonical_json()).expect("json");
        let errors: Vec<String> = v.iter_errors(&normalized).map(|e| e.to_string()).collect();
        assert!(
            errors.is_empty(),
            "normalized {}: {errors:#?}",
            path.display()
        );
    }
}

#[test]
fn schema_refuses_structural_errors() {
    let v = validator();
    for name in [
        "unknown_field_typo",
        "unknown_top_level_field",
        "wrong_type",
        "invalid_platform",
        "invalid_auth",
        "invalid_node_kind",
        "ir_version_unsupported",
    ] {
        let path = workspace().join(format!("fixtures/invalid/{name}.graph.json"));
        let value: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).expect("read")).expect("json");
        assert!(!v.is_valid(&value), "the schema accepted {name}");
    }
}

#[test]
fn normalizing_twice_changes_nothing() {
    for path in graphs("valid") {
        let text = std::fs::read_to_string(&path).expect("read");
        let once = svc_ir::SourceFile::new("a", text)
            .parse()
            .expect("valid")
            .to_canonical_json();
        let twice = svc_ir::from_normalized_json(&once)
            .expect("normalized reparses")
            .to_canonical_json();
        assert_eq!(once, twice, "{}", path.display());
    }
}
