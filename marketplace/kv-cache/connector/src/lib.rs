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

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use svc_backend_sdk::connector_kit::config::{self, FieldName, Template};
use svc_backend_sdk::connector_kit::{c_str, fill, py_str};
use svc_backend_sdk::{Connector, ConnectorInfo, Dependency, Diagnostic, File, Rendered};

pub const ID: &str = "svc/kv-cache";
pub const VERSION: &str = "0.1.0";
pub const PLATFORMS: [&str; 3] = ["go", "java-svc", "python-svc"];

/// The Python requirement of the python-svc code.
const CACHETOOLS: &str = "cachetools>=5.3,<7";
/// The Maven dependency of the java-svc code; Spring Boot's BOM picks the version.
const CAFFEINE: &str = "com.github.ben-manes.caffeine:caffeine";

const DEFAULT_TTL_SECONDS: u64 = 300;
/// Bounds every platform's integers and clocks hold.
const MAX_TTL_SECONDS: u64 = 2_147_483_647;
const MAX_MAX_ENTRIES: u64 = 2_147_483_647;

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

// What a node does with the cache (the field's description says it to
// users).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
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
        ["get", "set", "delete"][self.index()]
    }
}

// A node's config, declared once: its JSON Schema is what `info()`
// publishes and the host checks every node's config against; `render`
// reads the checked config as this type and checks what ties its fields
// to the operation ([`check_operation`]).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Config {
    /// get reads the value of a key, set stores one, delete removes one.
    pub op: Op,
    /// The cache key: text in which `{{field}}` inserts a state field, e.g. "answer:{{question}}".
    #[schemars(length(min = 1))]
    pub key: Template,
    /// get: the state field a hit is written to; set: the state field whose value is stored. Not for delete.
    pub field: Option<FieldName>,
    /// get only: a boolean state field that receives true on a hit, false on a miss.
    pub hit_field: Option<FieldName>,
    /// set only: how long the value is kept, in seconds (default 300).
    #[schemars(range(min = 1, max = MAX_TTL_SECONDS))]
    pub ttl_seconds: Option<u64>,
    /// A fixed name: nodes with the same namespace share one cache (default "default").
    #[serde(default = "default_namespace")]
    #[schemars(length(min = 1), extend("format" = "svc-literal"))]
    pub namespace: String,
    /// The most values the namespace holds (default 10000); the node that first uses a namespace sets it.
    #[serde(default = "default_max_entries")]
    #[schemars(range(min = 1, max = MAX_MAX_ENTRIES))]
    pub max_entries: u64,
}

fn default_namespace() -> String {
    "default".to_string()
}

fn default_max_entries() -> u64 {
    10_000
}

/// What the schema cannot say: which fields each operation takes.
fn check_operation(cfg: &Config) -> Result<(), Vec<Diagnostic>> {
    let op = cfg.op.name();
    let mut diags = Vec::new();
    let unused = |key: &str, uses: &str| {
        Diagnostic::error(
            &svc_backend_sdk::ir::codes::UNUSED_FIELD,
            format!("`{key}` is not used by `{op}`"),
        )
        .at(format!("/{key}"))
        .hint(format!("remove it: `{key}` applies to {uses}"))
    };
    match (cfg.op, &cfg.field) {
        (Op::Delete, Some(_)) => diags.push(unused("field", "get and set")),
        (Op::Get | Op::Set, None) => {
            let what = if cfg.op == Op::Get {
                "where a hit is written"
            } else {
                "the value stored"
            };
            diags.push(
                Diagnostic::error(
                    &svc_backend_sdk::ir::codes::MISSING_FIELD,
                    format!("`{op}` needs `field`: the state field {what}"),
                )
                .at("")
                .hint("add \"field\": \"<state field>\""),
            );
        }
        _ => {}
    }
    if cfg.op != Op::Get && cfg.hit_field.is_some() {
        diags.push(unused("hitField", "get"));
    }
    if cfg.op != Op::Set && cfg.ttl_seconds.is_some() {
        diags.push(unused("ttlSeconds", "set"));
    }
    if let (Some(f), Some(h)) = (&cfg.field, &cfg.hit_field) {
        if f == h {
            diags.push(
                Diagnostic::error(
                    &svc_backend_sdk::ir::codes::INVALID_VALUE,
                    format!("`hitField` is `{}`, the same state field as `field`", &**h),
                )
                .at("/hitField")
                .hint("name a boolean state field of its own"),
            );
        }
    }
    if diags.is_empty() {
        Ok(())
    } else {
        Err(diags)
    }
}

/// The placeholder values of a config, written by `string` and `optional`
/// (a literal or the platform's null) and `int` (an integer literal).
fn values(
    cfg: &Config,
    string: fn(&str) -> String,
    none: &str,
    int: fn(u64) -> String,
) -> Vec<(&'static str, String)> {
    let opt = |v: &Option<FieldName>| v.as_deref().map_or(none.to_string(), string);
    vec![
        ("NAMESPACE", string(&cfg.namespace)),
        ("MAX_ENTRIES", int(cfg.max_entries)),
        ("KEY", string(&cfg.key)),
        ("FIELD", opt(&cfg.field)),
        ("HIT_FIELD", opt(&cfg.hit_field)),
        (
            "TTL_SECONDS",
            int(cfg.ttl_seconds.unwrap_or(DEFAULT_TTL_SECONDS)),
        ),
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
            config_schema: config::schema::<Config>().to_string(),
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
        let cfg: Config = config::read(node_config)?;
        check_operation(&cfg)?;
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
