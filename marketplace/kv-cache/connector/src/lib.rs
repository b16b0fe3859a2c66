//! `svc/kv-cache`: a connector node over an in-process key-value cache
//! shared by every request of the service. `get` writes a hit into a state
//! field (a miss writes nothing there) and can record whether it hit; `set`
//! stores a state field's value for `ttlSeconds`; `delete` removes a key.
//! Each `namespace` is its own cache of at most `maxEntries` values.
//!
//! The code of each platform lives in `../templates/<platform>/`: a runtime
//! file (and its tests) placed verbatim in the generated project, and one
//! snippet per operation whose `__SVC_NAME__` placeholders are filled from the
//! node's config. `{{field}}` references in the key are left for the
//! runtime file to fill when the node runs.

use serde_json::{json, Value};
use svc_backend_sdk::{Connector, ConnectorInfo, Dependency, Diagnostic, File, Rendered};

use svc_backend_sdk::connector_kit::Check;
use svc_backend_sdk::connector_kit::{c_str, fill, py_str};

pub const ID: &str = "svc/kv-cache";
pub const VERSION: &str = "0.1.0";
pub const PLATFORMS: [&str; 3] = ["go", "java-svc", "python-svc"];

/// The Python requirement of the python-svc code.
const CACHETOOLS: &str = "cachetools>=5.3,<7";
/// The Maven dependency of the java-svc code; Spring Boot's BOM picks the version.
const CAFFEINE: &str = "com.github.ben-manes.caffeine:caffeine";

const DEFAULT_TTL_SECONDS: u64 = 300;
const DEFAULT_NAMESPACE: &str = "default";
const DEFAULT_MAX_ENTRIES: u64 = 10_000;
/// Bounds every platform's integers and clocks hold.
const MAX_TTL_SECONDS: u64 = 2_147_483_647;
const MAX_MAX_ENTRIES: u64 = 2_147_483_647;

const KNOWN: [&str; 7] = [
    "op",
    "key",
    "field",
    "hitField",
    "ttlSeconds",
    "namespace",
    "maxEntries",
];
const OPS: [&str; 3] = ["get", "set", "delete"];

/// (path in the project, contents) of each platform's files.
const GO_FILES: [(&str, &str); 2] = [
    (
        "internal/graph/connector_kv_cache.go",
        include_str!("../../templates/go/internal/graph/connector_kv_cache.go"),
    ),
    (
        "internal/graph/connector_kv_cache_test.go",
        include_str!("../../templates/go/internal/graph/connector_kv_cache_test.go"),
    ),
];
const PYTHON_FILES: [(&str, &str); 2] = [
    (
        "app/connectors/kv_cache.py",
        include_str!("../../templates/python-svc/app/connectors/kv_cache.py"),
    ),
    (
        "tests/test_connector_kv_cache.py",
        include_str!("../../templates/python-svc/tests/test_connector_kv_cache.py"),
    ),
];
const JAVA_FILES: [(&str, &str); 2] = [
    (
        "src/main/java/com/svc/connectors/kv_cache/KvCache.java",
        include_str!(
            "../../templates/java-svc/src/main/java/com/svc/connectors/kv_cache/KvCache.java"
        ),
    ),
    (
        "src/test/java/com/svc/connectors/kv_cache/KvCacheTest.java",
        include_str!(
            "../../templates/java-svc/src/test/java/com/svc/connectors/kv_cache/KvCacheTest.java"
        ),
    ),
];

/// Snippets by platform, then operation (get, set, delete).
const GO_SNIPPETS: [&str; 3] = [
    include_str!("../../templates/go/get.go.tmpl"),
    include_str!("../../templates/go/set.go.tmpl"),
    include_str!("../../templates/go/delete.go.tmpl"),
];
const PYTHON_SNIPPETS: [&str; 3] = [
    include_str!("../../templates/python-svc/get.py.tmpl"),
    include_str!("../../templates/python-svc/set.py.tmpl"),
    include_str!("../../templates/python-svc/delete.py.tmpl"),
];
const JAVA_SNIPPETS: [&str; 3] = [
    include_str!("../../templates/java-svc/get.java.tmpl"),
    include_str!("../../templates/java-svc/set.java.tmpl"),
    include_str!("../../templates/java-svc/delete.java.tmpl"),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Get,
    Set,
    Delete,
}

impl Op {
    fn index(self) -> usize {
        match self {
            Op::Get => 0,
            Op::Set => 1,
            Op::Delete => 2,
        }
    }

    /// The operation's name in the config (`op`) and its template's name.
    fn name(self) -> &'static str {
        OPS[self.index()]
    }
}

/// A node's validated config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    pub op: Op,
    /// May hold `{{field}}`, filled when the node runs.
    pub key: String,
    /// get: where a hit is written; set: the value stored. `None` for delete.
    pub field: Option<String>,
    /// get only: receives true on a hit, false on a miss.
    pub hit_field: Option<String>,
    pub ttl_seconds: u64,
    pub namespace: String,
    pub max_entries: u64,
}

/// The JSON Schema of the node's `config`.
pub fn config_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "op": { "type": "string", "enum": OPS },
            "key": { "type": "string" },
            "field": { "type": "string" },
            "hitField": { "type": "string" },
            "ttlSeconds": { "type": "integer", "minimum": 1 },
            "namespace": { "type": "string" },
            "maxEntries": { "type": "integer", "minimum": 1 }
        },
        "required": ["op", "key"],
        "additionalProperties": false
    })
}

/// Checks a node's config, reporting every problem at once.
pub fn parse_config(config: &Value) -> Result<Config, Vec<Diagnostic>> {
    let mut c = Check::default();
    let example =
        "for example { \"op\": \"get\", \"key\": \"answer:{{question}}\", \"field\": \"answer\" }";
    let Some(obj) = c.object(config, &KNOWN, example) else {
        return Err(c.diags);
    };

    let op = c
        .required(obj, "op", "add \"op\": \"get\", \"set\" or \"delete\"")
        .and_then(|v| c.one_of(v, "`op`", "/op", &OPS))
        .map(|s| match s {
            "get" => Op::Get,
            "set" => Op::Set,
            _ => Op::Delete,
        });

    let key_hint = "the cache key: text in which `{{field}}` inserts a state field, e.g. \"answer:{{question}}\"";
    let key = c
        .required(obj, "key", "add \"key\", e.g. \"answer:{{question}}\"")
        .and_then(|v| c.string(v, "`key`", "/key", key_hint));
    let key = match key {
        Some("") => {
            c.push(
                &svc_backend_sdk::ir::codes::INVALID_VALUE,
                "`key` is empty".to_string(),
                "/key",
                key_hint,
            );
            None
        }
        Some(k) if c.placeholders(k, "`key`", "/key") => Some(k.to_string()),
        _ => None,
    };

    let field = obj
        .get("field")
        .map(|v| c.field_name(v, "`field`", "/field"));
    let hit_field = obj
        .get("hitField")
        .map(|v| c.field_name(v, "`hitField`", "/hitField"));

    let ttl_hint = "how long `set` keeps the value, in seconds (default 300)";
    let ttl_seconds = obj.get("ttlSeconds").map(|v| {
        c.integer(
            v,
            "`ttlSeconds`",
            "/ttlSeconds",
            (1, MAX_TTL_SECONDS),
            ttl_hint,
        )
    });

    let ns_hint =
        "a fixed name; nodes with the same namespace share one cache (default \"default\")";
    let namespace = match obj.get("namespace") {
        None => Some(DEFAULT_NAMESPACE.to_string()),
        Some(v) => match c.string(v, "`namespace`", "/namespace", ns_hint) {
            Some("") => {
                c.push(
                    &svc_backend_sdk::ir::codes::INVALID_VALUE,
                    "`namespace` is empty".to_string(),
                    "/namespace",
                    ns_hint,
                );
                None
            }
            Some(n) if n.contains("{{") => {
                c.push(
                    &svc_backend_sdk::ir::codes::INVALID_VALUE,
                    format!("`namespace` `{n}` holds a placeholder; a namespace is fixed"),
                    "/namespace",
                    "put `{{field}}` references in `key` instead",
                );
                None
            }
            other => other.map(str::to_string),
        },
    };

    let max_entries = match obj.get("maxEntries") {
        None => Some(DEFAULT_MAX_ENTRIES),
        Some(v) => c.integer(
            v,
            "`maxEntries`",
            "/maxEntries",
            (1, MAX_MAX_ENTRIES),
            "the most values the namespace holds (default 10000); the node that first uses a namespace sets it",
        ),
    };

    // What each operation uses.
    if let Some(op) = op {
        let name = OPS[op.index()];
        if op == Op::Delete {
            if field.is_some() {
                unused(&mut c, "field", name);
            }
        } else if field.is_none() {
            let what = if op == Op::Get {
                "where a hit is written"
            } else {
                "the value stored"
            };
            c.push(
                &svc_backend_sdk::ir::codes::MISSING_FIELD,
                format!("`{name}` needs `field`: the state field {what}"),
                "",
                "add \"field\": \"<state field>\"",
            );
        }
        if op != Op::Get && hit_field.is_some() {
            unused(&mut c, "hitField", name);
        }
        if op != Op::Set && ttl_seconds.is_some() {
            unused(&mut c, "ttlSeconds", name);
        }
        if let (Some(Some(f)), Some(Some(h))) = (&field, &hit_field) {
            if f == h {
                c.push(
                    &svc_backend_sdk::ir::codes::INVALID_VALUE,
                    format!("`hitField` is `{h}`, the same state field as `field`"),
                    "/hitField",
                    "name a boolean state field of its own",
                );
            }
        }
    }

    let config = match (
        op,
        key,
        field,
        hit_field,
        ttl_seconds,
        namespace,
        max_entries,
    ) {
        (Some(op), Some(key), field, hit_field, ttl, Some(namespace), Some(max_entries))
            if !matches!(field, Some(None))
                && !matches!(hit_field, Some(None))
                && !matches!(ttl, Some(None)) =>
        {
            Some(Config {
                op,
                key,
                field: field.flatten().map(str::to_string),
                hit_field: hit_field.flatten().map(str::to_string),
                ttl_seconds: ttl.flatten().unwrap_or(DEFAULT_TTL_SECONDS),
                namespace,
                max_entries,
            })
        }
        _ => None,
    };
    c.finish(config)
}

fn unused(c: &mut Check, key: &str, op: &str) {
    let uses = match key {
        "field" => "get and set",
        "hitField" => "get",
        _ => "set",
    };
    c.push(
        &svc_backend_sdk::ir::codes::UNUSED_FIELD,
        format!("`{key}` is not used by `{op}`"),
        &format!("/{key}"),
        &format!("remove it: `{key}` applies to {uses}"),
    );
}

/// The placeholder values of a config, written by `string` and `optional`
/// (a literal or the platform's null) and `int` (an integer literal).
fn values(
    cfg: &Config,
    string: fn(&str) -> String,
    none: &str,
    int: fn(u64) -> String,
) -> Vec<(&'static str, String)> {
    let opt = |v: &Option<String>| v.as_deref().map_or(none.to_string(), string);
    vec![
        ("NAMESPACE", string(&cfg.namespace)),
        ("MAX_ENTRIES", int(cfg.max_entries)),
        ("KEY", string(&cfg.key)),
        ("FIELD", opt(&cfg.field)),
        ("HIT_FIELD", opt(&cfg.hit_field)),
        ("TTL_SECONDS", int(cfg.ttl_seconds)),
    ]
}

fn snippet(platform: &str, cfg: &Config) -> Result<String, Diagnostic> {
    let i = cfg.op.index();
    let (template, values) = match platform {
        "go" => (
            GO_SNIPPETS[i],
            values(cfg, c_str, "\"\"", |n| n.to_string()),
        ),
        "python-svc" => (
            PYTHON_SNIPPETS[i],
            values(cfg, py_str, "None", |n| n.to_string()),
        ),
        _ => (
            JAVA_SNIPPETS[i],
            values(cfg, c_str, "null", |n| format!("{n}L")),
        ),
    };
    let name = format!("{platform}/{}", cfg.op.name());
    Ok(fill(&name, template, &values)?.trim_end().to_string())
}

fn files(list: &[(&str, &str)]) -> Vec<File> {
    list.iter()
        .map(|(path, contents)| File::text(*path, *contents))
        .collect()
}

fn dependencies(platform: &str) -> Vec<Dependency> {
    let spec = match platform {
        "python-svc" => CACHETOOLS,
        "java-svc" => CAFFEINE,
        _ => return Vec::new(),
    };
    vec![Dependency {
        platform: platform.to_string(),
        spec: spec.to_string(),
    }]
}

pub struct KvCache;

impl Connector for KvCache {
    fn info() -> ConnectorInfo {
        ConnectorInfo {
            id: ID.to_string(),
            version: VERSION.to_string(),
            platforms: PLATFORMS.iter().map(|p| p.to_string()).collect(),
            config_schema: config_schema().to_string(),
            dependencies: PLATFORMS.iter().flat_map(|p| dependencies(p)).collect(),
        }
    }

    fn render(
        _node_id: &str,
        platform: &str,
        node_config: &Value,
    ) -> Result<Rendered, Vec<Diagnostic>> {
        if !PLATFORMS.contains(&platform) {
            return Err(vec![Diagnostic::error(
                &svc_backend_sdk::codes::PLATFORM_UNSUPPORTED,
                format!("{ID} has no code for the platform `{platform}`"),
            )
            .hint(format!("{ID} supports {}", PLATFORMS.join(", ")))]);
        }
        let cfg = parse_config(node_config)?;
        let list = match platform {
            "go" => &GO_FILES,
            "python-svc" => &PYTHON_FILES,
            _ => &JAVA_FILES,
        };
        Ok(Rendered {
            files: files(list),
            snippet: snippet(platform, &cfg).map_err(|d| vec![d])?,
            dependencies: dependencies(platform),
        })
    }
}

svc_backend_sdk::export_connector!(KvCache);

#[cfg(test)]
mod tests;
