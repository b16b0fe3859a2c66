//! `svc/webhook`: a connector node that POSTs state fields as a JSON object
//! to a URL (`env:VAR` or a literal) and may store the parsed JSON reply in
//! a state field. Failures are `upstream_error`s with the reasons of HTTP
//! tools: connect, timeout, status, too_large and (with `outputKey`)
//! invalid_json.
//!
//! The code of each platform lives in `../templates/<platform>/`: a runtime
//! file (and its tests) placed verbatim in the generated project, and a
//! snippet whose `__SVC_NAME__` placeholders are filled from the node's config.
//! `{{field}}` references inside config strings are left for the runtime
//! file to fill when the node runs.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use svc_backend_sdk::connector_kit::config::{self, FieldName, Headers, Url};
use svc_backend_sdk::connector_kit::{c_str, fill, py_collection, py_str};
use svc_backend_sdk::connectors::runtime_helper;
use svc_backend_sdk::{Connector, ConnectorInfo, Dependency, Diagnostic, File, Rendered};

pub const ID: &str = "svc/webhook";
pub const VERSION: &str = "0.1.0";
pub const PLATFORMS: [&str; 3] = ["go", "java-svc", "python-svc"];

/// The Python requirement of the python-svc code.
const HTTPX: &str = "httpx>=0.27,<1";

/// Large enough for any webhook, small enough for every platform's clock.
const MAX_TIMEOUT_MS: u64 = 2_147_483_647;

/// (path in the project, contents) of each platform's files.
const GO_FILES: [(&str, &str); 2] = [
    (
        "internal/graph/connector_webhook.go",
        include_str!("../../templates/go/internal/graph/connector_webhook.go"),
    ),
    (
        "internal/graph/connector_webhook_test.go",
        include_str!("../../templates/go/internal/graph/connector_webhook_test.go"),
    ),
];
const PYTHON_FILES: [(&str, &str); 2] = [
    (
        "app/connectors/webhook.py",
        include_str!("../../templates/python-svc/app/connectors/webhook.py"),
    ),
    (
        "tests/test_connector_webhook.py",
        include_str!("../../templates/python-svc/tests/test_connector_webhook.py"),
    ),
];
const JAVA_FILES: [(&str, &str); 2] = [
    (
        "src/main/java/com/svc/connectors/webhook/Webhook.java",
        include_str!(
            "../../templates/java-svc/src/main/java/com/svc/connectors/webhook/Webhook.java"
        ),
    ),
    (
        "src/test/java/com/svc/connectors/webhook/WebhookTest.java",
        include_str!(
            "../../templates/java-svc/src/test/java/com/svc/connectors/webhook/WebhookTest.java"
        ),
    ),
];
const GO_SNIPPET: &str = include_str!("../../templates/go/snippet.go.tmpl");
const PYTHON_SNIPPET: &str = include_str!("../../templates/python-svc/snippet.py.tmpl");
const JAVA_SNIPPET: &str = include_str!("../../templates/java-svc/snippet.java.tmpl");

// A node's config, declared once: its JSON Schema is what `info()`
// publishes and the host checks every node's config against; `render`
// reads the checked config as this type.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Config {
    /// Where to POST: env:NAME reads the URL from the environment when the service runs (a webhook URL is often a secret), or an http(s) URL in which `{{field}}` inserts a state field.
    pub url: Url,
    /// The state fields sent, each once; leave it out to send the whole state.
    #[schemars(extend("uniqueItems" = true))]
    pub fields: Option<Vec<FieldName>>,
    /// Headers sent with the call, in order: env:NAME reads a value from the environment, `{{field}}` inserts a state field.
    #[serde(default)]
    pub headers: Headers,
    /// The longest the call may take, in milliseconds (default 10000).
    #[serde(default = "default_timeout_ms")]
    #[schemars(range(min = 1, max = MAX_TIMEOUT_MS))]
    pub timeout_ms: u64,
    /// The state field that receives the parsed JSON reply; leave it out to ignore the reply.
    pub output_key: Option<FieldName>,
}

fn default_timeout_ms() -> u64 {
    10_000
}

fn go_snippet(cfg: &Config) -> Result<String, Diagnostic> {
    let fields = match &cfg.fields {
        None => "nil".to_string(),
        Some(f) => format!(
            "[]string{{{}}}",
            f.iter().map(|s| c_str(s)).collect::<Vec<_>>().join(", ")
        ),
    };
    let headers = if cfg.headers.0.is_empty() {
        "nil".to_string()
    } else {
        format!(
            "map[string]string{{{}}}",
            cfg.headers
                .0
                .iter()
                .map(|(k, v)| format!("{}: {}", c_str(k), c_str(v)))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    fill(
        "go/snippet.go.tmpl",
        GO_SNIPPET,
        &[
            ("URL", c_str(&cfg.url)),
            ("FIELDS", fields),
            ("HEADERS", headers),
            ("TIMEOUT_MS", cfg.timeout_ms.to_string()),
            ("OUTPUT_KEY", c_str(cfg.output_key.as_deref().unwrap_or(""))),
        ],
    )
}

fn python_snippet(cfg: &Config) -> Result<String, Diagnostic> {
    let fields = match &cfg.fields {
        None => "None".to_string(),
        Some(f) => {
            let items: Vec<String> = f.iter().map(|s| py_str(s)).collect();
            py_collection("FIELDS", '[', ']', &items)
        }
    };
    let headers = if cfg.headers.0.is_empty() {
        "None".to_string()
    } else {
        let items: Vec<String> = cfg
            .headers
            .0
            .iter()
            .map(|(k, v)| format!("{}: {}", py_str(k), py_str(v)))
            .collect();
        py_collection("HEADERS", '{', '}', &items)
    };
    fill(
        "python-svc/snippet.py.tmpl",
        PYTHON_SNIPPET,
        &[
            ("URL", py_str(&cfg.url)),
            ("FIELDS", fields),
            ("HEADERS", headers),
            ("TIMEOUT_MS", cfg.timeout_ms.to_string()),
            (
                "OUTPUT_KEY",
                cfg.output_key.as_deref().map_or("None".to_string(), py_str),
            ),
        ],
    )
}

fn java_snippet(node_id: &str, cfg: &Config) -> Result<String, Diagnostic> {
    let fields = match &cfg.fields {
        None => "null".to_string(),
        Some(f) => format!(
            "java.util.List.of({})",
            f.iter().map(|s| c_str(s)).collect::<Vec<_>>().join(", ")
        ),
    };
    let headers = if cfg.headers.0.is_empty() {
        "null".to_string()
    } else {
        format!(
            "java.util.Map.ofEntries({})",
            cfg.headers
                .0
                .iter()
                .map(|(k, v)| format!("java.util.Map.entry({}, {})", c_str(k), c_str(v)))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    fill(
        "java-svc/snippet.java.tmpl",
        JAVA_SNIPPET,
        &[
            ("NODE", c_str(node_id)),
            ("URL", c_str(&cfg.url)),
            ("FIELDS", fields),
            ("HEADERS", headers),
            ("TIMEOUT_MS", format!("{}L", cfg.timeout_ms)),
            (
                "OUTPUT_KEY",
                cfg.output_key.as_deref().map_or("null".to_string(), c_str),
            ),
        ],
    )
}

fn files(list: &[(&str, &str)]) -> Vec<File> {
    list.iter()
        .map(|(path, contents)| File::text(*path, *contents))
        .collect()
}

/// What the code needs on each platform: the backend's upstream HTTP
/// client (the runtime helper `upstream`: Go's upstream.go, the SDK's
/// svc.upstream, the Java runtime's Upstream), and httpx on python-svc.
fn dependencies(platform: &str) -> Vec<Dependency> {
    let mut deps = vec![runtime_helper(platform, "upstream")];
    if platform == "python-svc" {
        deps.insert(
            0,
            Dependency {
                platform: platform.to_string(),
                spec: HTTPX.to_string(),
            },
        );
    }
    deps
}

pub struct Webhook;

impl Connector for Webhook {
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
        node_id: &str,
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
        let (snippet, list) = match platform {
            "go" => (go_snippet(&cfg), &GO_FILES),
            "python-svc" => (python_snippet(&cfg), &PYTHON_FILES),
            _ => (java_snippet(node_id, &cfg), &JAVA_FILES),
        };
        let snippet = snippet.map_err(|d| vec![d])?;
        Ok(Rendered {
            files: files(list),
            snippet: snippet.trim_end().to_string(),
            dependencies: dependencies(platform),
        })
    }
}

svc_backend_sdk::export_connector!(Webhook);

#[cfg(test)]
mod tests;
