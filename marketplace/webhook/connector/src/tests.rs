use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use svc_backend_sdk::Connector;

use super::*;

fn project_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn manifest() -> Value {
    read_json(&project_dir().join("svc.project.json"))
}

fn example() -> Value {
    let doc = manifest()["document"].as_str().unwrap().to_string();
    read_json(&project_dir().join(doc))
}

/// The config of the example's connector node.
fn example_config() -> Value {
    let doc = example();
    let node = doc["logical"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["kind"] == "connector")
        .unwrap()
        .clone();
    node["config"].clone()
}

/// The host's check of a node's config against the schema `info()`
/// publishes: the one check a config gets before `render`.
fn host_check(config: &Value) -> Vec<Diagnostic> {
    let schema = serde_json::from_str(&Webhook::info().config_schema).unwrap();
    svc_packs::schema::ConfigSchema::compile(schema)
        .unwrap()
        .diagnostics(config, "node", ID)
}

#[test]
fn info_matches_the_project_manifest() {
    let m = manifest();
    let info = Webhook::info();
    assert_eq!(m["kind"], "plugin-creator");
    assert_eq!(m["name"], "webhook");
    assert_eq!(info.id, m["connector"].as_str().unwrap());
    assert_eq!(info.version, m["version"].as_str().unwrap());
    let platforms: Vec<&str> = m["platforms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    assert_eq!(info.platforms, platforms);
    for key in ["source", "templates", "document"] {
        assert!(
            project_dir().join(m[key].as_str().unwrap()).exists(),
            "{key}"
        );
    }
    // The schema is the config type's, every field described.
    let schema: Value = serde_json::from_str(&info.config_schema).unwrap();
    assert_eq!(schema["additionalProperties"], false);
    assert_eq!(schema["required"], json!(["url"]));
    let props = schema["properties"].as_object().unwrap();
    let names: Vec<&str> = props.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        ["url", "fields", "headers", "timeoutMs", "outputKey"]
    );
    for (name, prop) in props {
        assert!(prop["description"].is_string(), "{name}: {prop}");
    }
    // The union of every platform's dependencies.
    let deps: Vec<(&str, &str)> = info
        .dependencies
        .iter()
        .map(|d| (d.platform.as_str(), d.spec.as_str()))
        .collect();
    assert_eq!(
        deps,
        [
            ("go", "svc-runtime:upstream"),
            ("java-svc", "svc-runtime:upstream"),
            ("python-svc", "httpx>=0.27,<1"),
            ("python-svc", "svc-runtime:upstream")
        ]
    );
}

#[test]
fn the_example_names_the_connector_for_every_platform() {
    let doc = example();
    let node = doc["logical"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["kind"] == "connector")
        .unwrap()
        .clone();
    let id = node["id"].as_str().unwrap();
    for p in PLATFORMS {
        let t = &doc["codegen"]["templates"][p][id];
        assert_eq!(t["connector"], ID, "{p}");
        assert_eq!(t["version"], "^0.1", "{p}");
    }
    assert_eq!(host_check(&node["config"]), []);
}

#[test]
fn every_platform_renders_the_example() {
    let config = example_config();
    for p in PLATFORMS {
        let r = Webhook::render("node", p, &config).unwrap_or_else(|d| panic!("{p}: {d:?}"));
        assert!(!r.snippet.contains("__SVC_"), "{p}: {}", r.snippet);
        assert!(!r.snippet.ends_with('\n'));
        assert!(
            r.snippet.contains("\"env:WEBHOOK_URL\""),
            "{p}: {}",
            r.snippet
        );
        assert!(r.snippet.contains("\"receipt\""), "{p}: {}", r.snippet);
        assert!(r.snippet.contains("10000"), "{p}: {}", r.snippet);
        assert_eq!(r.files.len(), 2, "{p}");
        for f in &r.files {
            assert!(!f.contents.is_empty() && !f.executable, "{}", f.path);
            assert!(
                !String::from_utf8_lossy(&f.contents).contains("__SVC_"),
                "{}",
                f.path
            );
        }
        let paths: Vec<&str> = r.files.iter().map(|f| f.path.as_str()).collect();
        let deps: Vec<&str> = r.dependencies.iter().map(|d| d.spec.as_str()).collect();
        match p {
            "go" => {
                assert_eq!(
                    paths,
                    [
                        "internal/graph/connector_webhook.go",
                        "internal/graph/connector_webhook_test.go"
                    ]
                );
                assert_eq!(
                    r.snippet,
                    "return webhookSend(ctx, webhookConfig{\n\
                     \tURL:       \"env:WEBHOOK_URL\",\n\
                     \tFields:    []string{\"question\"},\n\
                     \tHeaders:   nil,\n\
                     \tTimeoutMs: 10000,\n\
                     \tOutputKey: \"receipt\",\n\
                     }, state)"
                );
                assert_eq!(deps, ["svc-runtime:upstream"]);
            }
            "python-svc" => {
                assert_eq!(
                    paths,
                    [
                        "app/connectors/webhook.py",
                        "tests/test_connector_webhook.py"
                    ]
                );
                assert!(r.snippet.contains("    fields=[\"question\"],\n"));
                assert!(r.snippet.contains("    headers=None,\n"));
                assert_eq!(deps, ["httpx>=0.27,<1", "svc-runtime:upstream"]);
            }
            _ => {
                assert_eq!(
                    paths,
                    [
                        "src/main/java/com/svc/connectors/webhook/Webhook.java",
                        "src/test/java/com/svc/connectors/webhook/WebhookTest.java"
                    ]
                );
                assert!(r.snippet.contains("java.util.List.of(\"question\")"));
                assert!(r.snippet.contains("10000L"));
                assert!(r.snippet.contains("        \"node\",\n"), "{}", r.snippet);
                assert_eq!(deps, ["svc-runtime:upstream"]);
            }
        }
        for d in &r.dependencies {
            assert_eq!(d.platform, p);
        }
    }
}

#[test]
fn a_full_config_renders_its_literals() {
    let config = json!({
        "url": "https://hooks.example.com/{{ team }}/x",
        "fields": ["question", "answer"],
        "headers": { "Authorization": "env:HOOK_TOKEN", "X-Note": "say \"hi\" to {{question}}" },
        "timeoutMs": 2500
    });
    assert_eq!(host_check(&config), []);
    let cfg: Config = config::read(&config).unwrap();
    assert_eq!(cfg.output_key, None);
    assert_eq!(cfg.headers.0.len(), 2);
    let go = Webhook::render("node", "go", &config).unwrap().snippet;
    assert!(go.contains(
        "map[string]string{\"Authorization\": \"env:HOOK_TOKEN\", \"X-Note\": \"say \\\"hi\\\" to {{question}}\"}"
    ), "{go}");
    assert!(go.contains("OutputKey: \"\","), "{go}");
    let py = Webhook::render("node", "python-svc", &config)
        .unwrap()
        .snippet;
    assert!(py.contains("'say \"hi\" to {{question}}'"), "{py}");
    assert!(py.contains("output_key=None,"), "{py}");
    let java = Webhook::render("node", "java-svc", &config)
        .unwrap()
        .snippet;
    assert!(
        java.contains("java.util.Map.entry(\"Authorization\", \"env:HOOK_TOKEN\")"),
        "{java}"
    );
    assert!(java.ends_with("2500L,\n        null);"), "{java}");
}

#[test]
fn defaults() {
    let cfg: Config = config::read(&json!({ "url": "env:HOOK" })).unwrap();
    assert_eq!(
        cfg,
        Config {
            url: Url("env:HOOK".into()),
            fields: None,
            headers: Headers::default(),
            timeout_ms: 10_000,
            output_key: None,
        }
    );
}

#[test]
fn an_unknown_platform_is_refused() {
    let d = Webhook::render("node", "rust", &json!({ "url": "env:HOOK" })).unwrap_err();
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].code, "platform-unsupported");
    assert!(d[0].hint.as_deref().unwrap().contains("python-svc"));
}

#[test]
fn invalid_configs_point_at_the_problem() {
    let cases = [
        (json!("env:HOOK"), "wrong-type", ""),
        (json!({}), "missing-field", ""),
        (
            json!({ "url": "env:HOOK", "fileds": [] }),
            "unknown-field",
            "/fileds",
        ),
        (
            json!({ "url": "env:HOOK", "a/b": 1 }),
            "unknown-field",
            "/a~1b",
        ),
        (json!({ "url": 3 }), "wrong-type", "/url"),
        (json!({ "url": "env:1BAD" }), "invalid-env-name", "/url"),
        (json!({ "url": "env:" }), "invalid-env-name", "/url"),
        (
            json!({ "url": "ftp://example.com" }),
            "invalid-endpoint",
            "/url",
        ),
        (json!({ "url": "WEBHOOK_URL" }), "invalid-endpoint", "/url"),
        (
            json!({ "url": "https://x/{{not a field}}" }),
            "invalid-field-name",
            "/url",
        ),
        (
            json!({ "url": "env:HOOK", "fields": "question" }),
            "wrong-type",
            "/fields",
        ),
        (
            json!({ "url": "env:HOOK", "fields": ["ok", 3] }),
            "wrong-type",
            "/fields/1",
        ),
        (
            json!({ "url": "env:HOOK", "fields": ["ok", "no-dash"] }),
            "invalid-field-name",
            "/fields/1",
        ),
        (
            json!({ "url": "env:HOOK", "fields": ["a", "a"] }),
            "duplicate-field",
            "/fields/1",
        ),
        (
            json!({ "url": "env:HOOK", "headers": ["X"] }),
            "wrong-type",
            "/headers",
        ),
        (
            json!({ "url": "env:HOOK", "headers": { "X-A": 1 } }),
            "wrong-type",
            "/headers/X-A",
        ),
        (
            json!({ "url": "env:HOOK", "headers": { "X A": "v" } }),
            "invalid-header",
            "/headers/X A",
        ),
        (
            json!({ "url": "env:HOOK", "headers": { "Host": "v" } }),
            "invalid-header",
            "/headers/Host",
        ),
        (
            json!({ "url": "env:HOOK", "headers": { "X-A": "a\nb" } }),
            "invalid-header",
            "/headers/X-A",
        ),
        (
            json!({ "url": "env:HOOK", "headers": { "X-A": "env:no way" } }),
            "invalid-env-name",
            "/headers/X-A",
        ),
        (
            json!({ "url": "env:HOOK", "headers": { "X-A": "{{1x}}" } }),
            "invalid-field-name",
            "/headers/X-A",
        ),
        (
            json!({ "url": "env:HOOK", "timeoutMs": "10" }),
            "wrong-type",
            "/timeoutMs",
        ),
        (
            json!({ "url": "env:HOOK", "timeoutMs": 1.5 }),
            "wrong-type",
            "/timeoutMs",
        ),
        (
            json!({ "url": "env:HOOK", "timeoutMs": 0 }),
            "out-of-range",
            "/timeoutMs",
        ),
        (
            json!({ "url": "env:HOOK", "timeoutMs": -5 }),
            "out-of-range",
            "/timeoutMs",
        ),
        (
            json!({ "url": "env:HOOK", "timeoutMs": 1u64 << 40 }),
            "out-of-range",
            "/timeoutMs",
        ),
        (
            json!({ "url": "env:HOOK", "outputKey": true }),
            "wrong-type",
            "/outputKey",
        ),
        (
            json!({ "url": "env:HOOK", "outputKey": "re ply" }),
            "invalid-field-name",
            "/outputKey",
        ),
    ];
    for (config, code, pointer) in cases {
        let d = host_check(&config);
        assert_eq!(d.len(), 1, "{config}: {d:?}");
        assert_eq!(d[0].code, code, "{config}: {d:?}");
        assert_eq!(d[0].pointer.as_deref(), Some(pointer), "{config}: {d:?}");
        assert!(d[0].hint.is_some(), "{config}: {d:?}");
    }
}

#[test]
fn a_bare_variable_name_as_url_gets_a_hint() {
    let d = host_check(&json!({ "url": "WEBHOOK_URL" }));
    assert_eq!(
        d[0].hint.as_deref(),
        Some("to read the URL from the variable WEBHOOK_URL, write \"env:WEBHOOK_URL\"")
    );
}

#[test]
fn hints_say_what_the_value_is_for() {
    let hint = |config: Value| host_check(&config)[0].hint.clone().unwrap();
    assert!(hint(json!({})).starts_with("add `url`: Where to POST"));
    assert_eq!(
        hint(json!({ "url": "env:HOOK", "timeoutMs": 0 })),
        "The longest the call may take, in milliseconds (default 10000)."
    );
    // A config that is no object is no value of the schema's to describe.
    assert!(hint(json!("env:HOOK")).starts_with("make the node's config match"));
}

#[test]
fn every_problem_is_reported_at_once() {
    let d = host_check(&json!({ "url": 1, "timeoutMs": 0, "outputKey": "", "extra": 1 }));
    let mut got: Vec<(&str, &str)> = d
        .iter()
        .map(|d| (d.code.as_str(), d.pointer.as_deref().unwrap()))
        .collect();
    got.sort();
    assert_eq!(
        got,
        [
            ("invalid-field-name", "/outputKey"),
            ("out-of-range", "/timeoutMs"),
            ("unknown-field", "/extra"),
            ("wrong-type", "/url"),
        ]
    );
}

#[test]
fn long_python_collections_are_laid_out_as_ruff_does() {
    let fields: Vec<String> = (0..12).map(|i| format!("field_number_{i}")).collect();
    let config = json!({ "url": "env:HOOK", "fields": fields });
    let py = Webhook::render("node", "python-svc", &config)
        .unwrap()
        .snippet;
    assert!(
        py.contains("    fields=[\n        \"field_number_0\",\n"),
        "{py}"
    );
    assert!(
        py.contains("        \"field_number_11\",\n    ],\n"),
        "{py}"
    );
}

/// `SVC_CONNECTOR_DUMP=DIR cargo test -p svc-connector-webhook dump` writes
/// what each platform renders for the example (and a config using every
/// field) under DIR, to check with the platforms' own tools.
#[test]
fn dump() {
    let Some(dir) = std::env::var_os("SVC_CONNECTOR_DUMP") else {
        return;
    };
    let full = json!({
        "url": "https://hooks.example.com/{{question}}/x",
        "fields": ["question", "receipt"],
        "headers": { "Authorization": "env:HOOK_TOKEN", "X-Note": "say \"hi\" to {{question}}" },
        "timeoutMs": 2500
    });
    for (name, config) in [("example", example_config()), ("full", full)] {
        for p in PLATFORMS {
            let r = Webhook::render("node", p, &config).unwrap();
            let base = Path::new(&dir).join(name).join(p);
            for f in &r.files {
                let path = base.join(&f.path);
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(path, &f.contents).unwrap();
            }
            std::fs::write(base.join("snippet.txt"), &r.snippet).unwrap();
        }
    }
}
