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

/// (node id, config) of the example's connector nodes.
fn example_nodes() -> Vec<(String, Value)> {
    example()["logical"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["kind"] == "connector")
        .map(|n| (n["id"].as_str().unwrap().to_string(), n["config"].clone()))
        .collect()
}

/// What a config gets before its code: the host's check against the
/// schema `info()` publishes, then (if it passes) `render`'s own, on every
/// platform alike.
fn problems(config: &Value) -> Vec<Diagnostic> {
    let schema = serde_json::from_str(&KvCache::info().config_schema).unwrap();
    let checked = svc_packs::schema::ConfigSchema::compile(schema)
        .unwrap()
        .diagnostics(config, "node", ID);
    if !checked.is_empty() {
        return checked;
    }
    let rendered: Vec<_> = PLATFORMS
        .iter()
        .map(|p| KvCache::render("node", p, config).err().unwrap_or_default())
        .collect();
    assert!(rendered.windows(2).all(|w| w[0] == w[1]), "{rendered:?}");
    rendered.into_iter().next().unwrap_or_default()
}

#[test]
fn info_matches_the_project_manifest() {
    let m = manifest();
    let info = KvCache::info();
    assert_eq!(m["kind"], "plugin-creator");
    assert_eq!(m["name"], "kv-cache");
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
    let schema: Value = serde_json::from_str(&info.config_schema).unwrap();
    assert_eq!(schema["additionalProperties"], false);
    assert_eq!(schema["required"], json!(["op", "key"]));
    assert_eq!(
        schema["properties"]["op"]["enum"],
        json!(["get", "set", "delete"])
    );
    let props = schema["properties"].as_object().unwrap();
    let names: Vec<&str> = props.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "op",
            "key",
            "field",
            "hitField",
            "ttlSeconds",
            "namespace",
            "maxEntries"
        ]
    );
    for (name, prop) in props {
        assert!(prop["description"].is_string(), "{name}: {prop}");
    }
    let deps: Vec<(&str, &str)> = info
        .dependencies
        .iter()
        .map(|d| (d.platform.as_str(), d.spec.as_str()))
        .collect();
    assert_eq!(
        deps,
        [
            ("java-svc", "com.github.ben-manes.caffeine:caffeine"),
            ("python-svc", "cachetools>=5.3,<7"),
        ]
    );
}

#[test]
fn the_example_names_the_connector_for_every_platform() {
    let doc = example();
    let nodes = example_nodes();
    assert_eq!(nodes.len(), 2);
    for (id, config) in &nodes {
        for p in PLATFORMS {
            let t = &doc["codegen"]["templates"][p][id];
            assert_eq!(t["connector"], ID, "{p} {id}");
            assert_eq!(t["version"], "^0.1", "{p} {id}");
        }
        assert_eq!(problems(config), [], "{id}");
    }
}

#[test]
fn every_platform_renders_the_example() {
    for (id, config) in example_nodes() {
        for p in PLATFORMS {
            let r =
                KvCache::render("node", p, &config).unwrap_or_else(|d| panic!("{p} {id}: {d:?}"));
            assert!(!r.snippet.contains("__SVC_"), "{p}: {}", r.snippet);
            assert!(!r.snippet.ends_with('\n'));
            assert!(
                r.snippet.contains("\"answer:{{question}}\""),
                "{p}: {}",
                r.snippet
            );
            assert!(r.snippet.contains("\"answers\""), "{p}: {}", r.snippet);
            assert_eq!(r.files.len(), 2, "{p}");
            for f in &r.files {
                assert!(!f.contents.is_empty() && !f.executable, "{}", f.path);
            }
            let paths: Vec<&str> = r.files.iter().map(|f| f.path.as_str()).collect();
            let deps: Vec<&str> = r.dependencies.iter().map(|d| d.spec.as_str()).collect();
            match p {
                "go" => {
                    assert_eq!(
                        paths,
                        [
                            "internal/graph/connector_kv_cache.go",
                            "internal/graph/connector_kv_cache_test.go"
                        ]
                    );
                    assert!(deps.is_empty());
                }
                "python-svc" => {
                    assert_eq!(
                        paths,
                        [
                            "app/connectors/kv_cache.py",
                            "tests/test_connector_kv_cache.py"
                        ]
                    );
                    assert_eq!(deps, ["cachetools>=5.3,<7"]);
                }
                _ => {
                    assert_eq!(
                        paths,
                        [
                            "src/main/java/com/svc/connectors/kv_cache/KvCache.java",
                            "src/test/java/com/svc/connectors/kv_cache/KvCacheTest.java"
                        ]
                    );
                    assert_eq!(deps, ["com.github.ben-manes.caffeine:caffeine"]);
                }
            }
        }
    }
}

#[test]
fn snippets_per_operation() {
    let get = json!({ "op": "get", "key": "answer:{{question}}", "field": "answer", "hitField": "cached" });
    assert_eq!(
        KvCache::render("node", "go", &get).unwrap().snippet,
        "return kvCacheGet(kvCacheConfig{\n\
         \tNamespace:  \"default\",\n\
         \tMaxEntries: 10000,\n\
         \tKey:        \"answer:{{question}}\",\n\
         \tField:      \"answer\",\n\
         \tHitField:   \"cached\",\n\
         }, state)"
    );
    assert_eq!(
        KvCache::render("node", "python-svc", &get).unwrap().snippet,
        "from app.connectors.kv_cache import cache_get\n\n\
         return cache_get(\n    state,\n    namespace=\"default\",\n    max_entries=10000,\n    \
         key=\"answer:{{question}}\",\n    field=\"answer\",\n    hit_field=\"cached\",\n)"
    );
    assert_eq!(
        KvCache::render("node", "java-svc", &get).unwrap().snippet,
        "return com.svc.connectors.kv_cache.KvCache.get(\n        state,\n        \"default\",\n        \
         10000L,\n        \"answer:{{question}}\",\n        \"answer\",\n        \"cached\");"
    );
    let get_no_hit = json!({ "op": "get", "key": "k", "field": "answer" });
    assert!(KvCache::render("node", "go", &get_no_hit)
        .unwrap()
        .snippet
        .contains("HitField:   \"\","));
    assert!(KvCache::render("node", "python-svc", &get_no_hit)
        .unwrap()
        .snippet
        .contains("hit_field=None,"));
    assert!(KvCache::render("node", "java-svc", &get_no_hit)
        .unwrap()
        .snippet
        .ends_with("\"answer\",\n        null);"));

    let set = json!({ "op": "set", "key": "k", "field": "answer", "namespace": "it's \"q\"", "maxEntries": 5 });
    let go = KvCache::render("node", "go", &set).unwrap().snippet;
    assert!(go.starts_with("return kvCacheSet(kvCacheConfig{\n"), "{go}");
    assert!(go.contains("\tNamespace:  \"it's \\\"q\\\"\",\n"), "{go}");
    assert!(go.contains("\tTTLSeconds: 300,\n"), "{go}");
    let py = KvCache::render("node", "python-svc", &set).unwrap().snippet;
    assert!(py.contains("    namespace='it\\'s \"q\"',\n"), "{py}");
    assert!(py.contains("    ttl_seconds=300,\n"), "{py}");
    let java = KvCache::render("node", "java-svc", &set).unwrap().snippet;
    assert!(
        java.contains("KvCache.set(") && java.ends_with("\"answer\",\n        300L);"),
        "{java}"
    );
    assert!(java.contains("        5L,\n"), "{java}");

    let delete = json!({ "op": "delete", "key": "k" });
    assert_eq!(
        KvCache::render("node", "go", &delete).unwrap().snippet,
        "return kvCacheDelete(kvCacheConfig{\n\
         \tNamespace:  \"default\",\n\
         \tMaxEntries: 10000,\n\
         \tKey:        \"k\",\n\
         }, state)"
    );
    let py = KvCache::render("node", "python-svc", &delete)
        .unwrap()
        .snippet;
    assert!(
        py.starts_with("from app.connectors.kv_cache import cache_delete\n"),
        "{py}"
    );
    let java = KvCache::render("node", "java-svc", &delete)
        .unwrap()
        .snippet;
    assert!(java.ends_with("10000L,\n        \"k\");"), "{java}");
}

#[test]
fn defaults() {
    let cfg: Config = config::read(&json!({ "op": "get", "key": "k", "field": "v" })).unwrap();
    assert_eq!(
        cfg,
        Config {
            op: Op::Get,
            key: Template("k".into()),
            field: Some(FieldName("v".into())),
            hit_field: None,
            ttl_seconds: None,
            namespace: "default".into(),
            max_entries: 10_000,
        }
    );
    let cfg: Config = config::read(&json!({ "op": "delete", "key": "k" })).unwrap();
    assert_eq!(cfg.field, None);
}

#[test]
fn an_unknown_platform_is_refused() {
    let d = KvCache::render("node", "rust", &json!({ "op": "delete", "key": "k" })).unwrap_err();
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].code, "platform-unsupported");
    assert!(d[0].hint.as_deref().unwrap().contains("java-svc"));
}

#[test]
fn invalid_configs_point_at_the_problem() {
    let cases = [
        (json!(["get"]), "wrong-type", ""),
        (json!({ "key": "k" }), "missing-field", ""),
        (json!({ "op": "get", "field": "v" }), "missing-field", ""),
        (json!({ "op": "get", "key": "k" }), "missing-field", ""),
        (json!({ "op": "set", "key": "k" }), "missing-field", ""),
        (
            json!({ "op": "delete", "key": "k", "nmespace": "x" }),
            "unknown-field",
            "/nmespace",
        ),
        (json!({ "op": 1, "key": "k" }), "wrong-type", "/op"),
        (json!({ "op": "put", "key": "k" }), "invalid-value", "/op"),
        (json!({ "op": "delete", "key": 7 }), "wrong-type", "/key"),
        (
            json!({ "op": "delete", "key": "" }),
            "invalid-value",
            "/key",
        ),
        (
            json!({ "op": "delete", "key": "a:{{b c}}" }),
            "invalid-field-name",
            "/key",
        ),
        (
            json!({ "op": "get", "key": "k", "field": 1 }),
            "wrong-type",
            "/field",
        ),
        (
            json!({ "op": "get", "key": "k", "field": "9v" }),
            "invalid-field-name",
            "/field",
        ),
        (
            json!({ "op": "get", "key": "k", "field": "v", "hitField": "v-hit" }),
            "invalid-field-name",
            "/hitField",
        ),
        (
            json!({ "op": "get", "key": "k", "field": "v", "hitField": "v" }),
            "invalid-value",
            "/hitField",
        ),
        (
            json!({ "op": "delete", "key": "k", "field": "v" }),
            "unused-field",
            "/field",
        ),
        (
            json!({ "op": "set", "key": "k", "field": "v", "hitField": "h" }),
            "unused-field",
            "/hitField",
        ),
        (
            json!({ "op": "get", "key": "k", "field": "v", "ttlSeconds": 5 }),
            "unused-field",
            "/ttlSeconds",
        ),
        (
            json!({ "op": "set", "key": "k", "field": "v", "ttlSeconds": 0 }),
            "out-of-range",
            "/ttlSeconds",
        ),
        (
            json!({ "op": "set", "key": "k", "field": "v", "ttlSeconds": "60" }),
            "wrong-type",
            "/ttlSeconds",
        ),
        (
            json!({ "op": "set", "key": "k", "field": "v", "ttlSeconds": 1u64 << 40 }),
            "out-of-range",
            "/ttlSeconds",
        ),
        (
            json!({ "op": "delete", "key": "k", "namespace": 3 }),
            "wrong-type",
            "/namespace",
        ),
        (
            json!({ "op": "delete", "key": "k", "namespace": "" }),
            "invalid-value",
            "/namespace",
        ),
        (
            json!({ "op": "delete", "key": "k", "namespace": "ns-{{user}}" }),
            "invalid-value",
            "/namespace",
        ),
        (
            json!({ "op": "delete", "key": "k", "maxEntries": 0 }),
            "out-of-range",
            "/maxEntries",
        ),
        (
            json!({ "op": "delete", "key": "k", "maxEntries": 2.5 }),
            "wrong-type",
            "/maxEntries",
        ),
    ];
    for (config, code, pointer) in cases {
        let d = problems(&config);
        assert_eq!(d.len(), 1, "{config}: {d:?}");
        assert_eq!(d[0].code, code, "{config}: {d:?}");
        assert_eq!(d[0].pointer.as_deref(), Some(pointer), "{config}: {d:?}");
        assert!(d[0].hint.is_some(), "{config}: {d:?}");
    }
}

#[test]
fn every_problem_is_reported_at_once() {
    // The schema's, all at once, by the host...
    let codes = |d: Vec<Diagnostic>| {
        let mut got: Vec<(String, String)> = d
            .into_iter()
            .map(|d| (d.code, d.pointer.unwrap_or_default()))
            .collect();
        got.sort();
        got
    };
    let d = problems(&json!({ "op": "get", "key": 1, "hitField": "1", "x": 1 }));
    let want = [
        ("invalid-field-name", "/hitField"),
        ("unknown-field", "/x"),
        ("wrong-type", "/key"),
    ];
    assert_eq!(codes(d), want.map(|(c, p)| (c.to_string(), p.to_string())));
    // ...then what ties the fields to the operation, all at once.
    let d = problems(&json!({ "op": "get", "key": "k", "hitField": "h", "ttlSeconds": 5 }));
    let want = [("missing-field", ""), ("unused-field", "/ttlSeconds")];
    assert_eq!(codes(d), want.map(|(c, p)| (c.to_string(), p.to_string())));
}

/// `SVC_CONNECTOR_DUMP=DIR cargo test -p svc-connector-kv-cache dump` writes
/// what each platform renders for each operation under DIR, to check with
/// the platforms' own tools.
#[test]
fn dump() {
    let Some(dir) = std::env::var_os("SVC_CONNECTOR_DUMP") else {
        return;
    };
    let mut cases = example_nodes();
    cases.push((
        "delete".into(),
        json!({ "op": "delete", "key": "answer:{{question}}", "namespace": "it's \"q\"" }),
    ));
    cases.push((
        "miss_only".into(),
        json!({ "op": "get", "key": "{{question}}", "field": "answer", "maxEntries": 3 }),
    ));
    for (name, config) in cases {
        for p in PLATFORMS {
            let r = KvCache::render("node", p, &config).unwrap();
            let base = Path::new(&dir).join(&name).join(p);
            for f in &r.files {
                let path = base.join(&f.path);
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(path, &f.contents).unwrap();
            }
            std::fs::write(base.join("snippet.txt"), &r.snippet).unwrap();
        }
    }
}
