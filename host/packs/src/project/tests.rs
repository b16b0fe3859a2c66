use super::*;

const GOOD: &str = r#"{
  "kind": "plugin-creator",
  "name": "webhook",
  "version": "0.1.0",
  "connector": "svc/webhook",
  "platforms": ["go", "python-svc"],
  "hostApi": "^0.2",
  "crate": "connector",
  "templates": "templates",
  "document": "example/notify.graph.json"
}"#;

#[test]
fn reads_a_good_manifest() {
    let m = ProjectManifest::parse("svc.project.json", GOOD).unwrap();
    assert_eq!(m.connector, "svc/webhook");
    assert_eq!(m.version, semver::Version::new(0, 1, 0));
    assert_eq!(m.platforms, ["go", "python-svc"]);
    assert_eq!(m.pack_file_name(), "webhook-0.1.0.svc-pack.zip");
}

fn codes(text: &str) -> Vec<(String, usize, usize)> {
    ProjectManifest::parse("p.json", text)
        .unwrap_err()
        .into_iter()
        .map(|d| {
            let p = d.position.unwrap();
            (d.code, p.line, p.column)
        })
        .collect()
}

#[test]
fn reports_every_problem_with_its_position() {
    let bad = GOOD
        .replace("\"plugin-creator\"", "\"project\"")
        .replace("\"0.1.0\"", "\"1.0\"")
        .replace("\"^0.2\"", "\"^2\"")
        .replace("\"python-svc\"", "\"rust\"")
        .replace(
            "\"connector\": \"svc/webhook\"",
            "\"connector\": \"webhook\"",
        )
        .replace("\"connector\",\n", "\"../connector\",\n")
        .replace("\"document\"", "\"documnet\"");
    let got = codes(&bad);
    let want = [
        ("unknown-field", 10, 3),
        ("missing-field", 1, 1),
        ("manifest-kind", 2, 11),
        ("manifest-version", 4, 14),
        ("manifest-connector", 5, 16),
        ("host-api", 7, 14),
        ("manifest-path", 8, 12),
        ("manifest-platform", 6, 23),
    ];
    for (code, line, col) in want {
        assert!(
            got.contains(&(code.to_string(), line, col)),
            "{code} at {line}:{col} missing from {got:?}"
        );
    }
    assert_eq!(got.len(), want.len(), "{got:?}");
}

#[test]
fn unknown_keys_get_a_suggestion() {
    let bad = GOOD.replace("\"hostApi\"", "\"hostAPI\"");
    let d = ProjectManifest::parse("p.json", &bad).unwrap_err();
    let unknown = d.iter().find(|d| d.code == "unknown-field").unwrap();
    assert_eq!(unknown.hint.as_deref(), Some("did you mean `hostApi`?"));
}

#[test]
fn paths_must_be_plain_and_versions_without_build_metadata() {
    for (from, to) in [
        (
            "\"templates\": \"templates\"",
            "\"templates\": \"./templates\"",
        ),
        (
            "\"templates\": \"templates\"",
            "\"templates\": \"templates/\"",
        ),
        ("\"crate\": \"connector\"", "\"crate\": \".\""),
        ("\"0.1.0\"", "\"0.1.0+build.7\""),
    ] {
        let bad = GOOD.replacen(from, to, 1);
        assert_ne!(bad, GOOD, "{from}");
        let d = ProjectManifest::parse("p.json", &bad).unwrap_err();
        assert_eq!(d.len(), 1, "{to}: {d:?}");
        assert!(
            d[0].code == "manifest-path" || d[0].code == "manifest-version",
            "{d:?}"
        );
    }
    // A refused path says which rule it breaks.
    let bad = GOOD.replacen("\"crate\": \"connector\"", "\"crate\": \"../connector\"", 1);
    let d = ProjectManifest::parse("p.json", &bad).unwrap_err();
    assert!(d[0].message.contains("`..` component"), "{d:?}");
}

#[test]
fn languages_sources_and_limits() {
    // `crate` stays the Rust name of `source`.
    let rust = ProjectManifest::parse("p.json", GOOD).unwrap();
    assert_eq!(
        (rust.language, rust.source_dir.as_str()),
        (Language::Rust, "connector")
    );
    assert!(rust.limits.is_empty());
    let python = GOOD.replace(
        "\"crate\": \"connector\"",
        "\"language\": \"python\", \"source\": \"src\", \"limits\": {\"memoryMiB\": 512, \"timeoutMs\": 20000}",
    );
    let m = ProjectManifest::parse("p.json", &python).unwrap();
    assert_eq!(
        (m.language, m.source_dir.as_str()),
        (Language::Python, "src")
    );
    assert_eq!(
        (m.limits.memory_mib, m.limits.timeout_ms),
        (Some(512), Some(20000))
    );

    for (from, to, code, pointer) in [
        (
            "\"crate\"",
            "\"language\": \"js\", \"source\"",
            "manifest-language",
            "/language",
        ),
        (
            "\"crate\"",
            "\"language\": \"typescript\", \"crate\"",
            "manifest-source",
            "/crate",
        ),
        (
            "\"crate\"",
            "\"source\": \"a\", \"crate\"",
            "manifest-source",
            "/crate",
        ),
        ("\"crate\": \"connector\",", "", "missing-field", "/source"),
        (
            "\"crate\"",
            "\"limits\": {\"memoryMiB\": 4096}, \"crate\"",
            "manifest-limits",
            "/limits/memoryMiB",
        ),
        (
            "\"crate\"",
            "\"limits\": {\"timeoutMs\": 0}, \"crate\"",
            "manifest-limits",
            "/limits/timeoutMs",
        ),
        (
            "\"crate\"",
            "\"limits\": {\"cpu\": 1}, \"crate\"",
            "unknown-field",
            "/limits/cpu",
        ),
    ] {
        let bad = GOOD.replacen(from, to, 1);
        let d = ProjectManifest::parse("p.json", &bad).unwrap_err();
        assert_eq!(d.len(), 1, "{to}: {d:?}");
        assert_eq!(
            (d[0].code.as_str(), d[0].pointer.as_deref()),
            (code, Some(pointer)),
            "{to}"
        );
    }
}

#[test]
fn a_pack_raises_its_own_limits_up_to_the_maximum() {
    use svc_runtime::{Limits, MIB};
    let base = Limits::DEFAULT;
    assert_eq!(PackLimits::default().apply(base), base);
    let asked = PackLimits {
        memory_mib: Some(512),
        timeout_ms: Some(20_000),
    };
    let raised = asked.apply(base);
    assert_eq!(raised.memory_bytes, 512 * MIB as usize);
    assert_eq!(raised.timeout, std::time::Duration::from_secs(20));
    assert_eq!(raised.max_files, base.max_files);
    // Never lower than the host's own, never above the maximum.
    let small = PackLimits {
        memory_mib: Some(1),
        timeout_ms: Some(1),
    };
    assert_eq!(small.apply(base), base);
    let huge = PackLimits {
        memory_mib: Some(1 << 20),
        timeout_ms: None,
    };
    assert_eq!(huge.apply(base).memory_bytes, 1024 * MIB as usize);
    assert_eq!(huge.over_maximum(), [("memoryMiB", 1 << 20, 1024)]);
}

#[test]
fn names_and_ids() {
    assert!(is_pack_name("kv-cache"));
    assert!(!is_pack_name("Kv"));
    assert!(!is_pack_name("a--b"));
    assert!(!is_pack_name("-a"));
    assert!(is_connector_id("acme/slack"));
    assert!(!is_connector_id("acme/slack/x"));
    assert!(!is_connector_id("slack"));
}
