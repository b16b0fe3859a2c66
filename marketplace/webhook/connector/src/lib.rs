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

use serde_json::{json, Value};
use svc_backend_sdk::connectors::runtime_helper;
use svc_backend_sdk::ir::{check_endpoint, is_identifier};
use svc_backend_sdk::template::{parts, Part};
use svc_backend_sdk::{Connector, ConnectorInfo, Dependency, Diagnostic, File, Rendered};

use svc_backend_sdk::connector_kit::{c_str, fill, py_collection, py_str};
use svc_backend_sdk::connector_kit::{child, Check};

pub const ID: &str = "svc/webhook";
pub const VERSION: &str = "0.1.0";
pub const PLATFORMS: [&str; 3] = ["go", "java-svc", "python-svc"];

/// The Python requirement of the python-svc code.
const HTTPX: &str = "httpx>=0.27,<1";

const DEFAULT_TIMEOUT_MS: u64 = 10_000;
/// Large enough for any webhook, small enough for every platform's clock.
const MAX_TIMEOUT_MS: u64 = 2_147_483_647;

const KNOWN: [&str; 5] = ["url", "fields", "headers", "timeoutMs", "outputKey"];

/// Headers the HTTP clients set themselves (Java's refuses them).
const RESTRICTED_HEADERS: [&str; 7] = [
    "connection",
    "content-length",
    "expect",
    "host",
    "te",
    "transfer-encoding",
    "upgrade",
];

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

/// A node's validated config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// `env:NAME` or an http(s) URL, which may hold `{{field}}`.
    pub url: String,
    /// The state fields sent; `None` sends the whole state.
    pub fields: Option<Vec<String>>,
    /// Header name and value (`env:NAME` or text with `{{field}}`), in order.
    pub headers: Vec<(String, String)>,
    pub timeout_ms: u64,
    pub output_key: Option<String>,
}

/// The JSON Schema of the node's `config`.
pub fn config_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "url": { "type": "string" },
            "fields": { "type": "array", "items": { "type": "string" } },
            "headers": { "type": "object" },
            "timeoutMs": { "type": "integer", "minimum": 1 },
            "outputKey": { "type": "string" }
        },
        "required": ["url"],
        "additionalProperties": false
    })
}

/// Checks a node's config, reporting every problem at once.
pub fn parse_config(config: &Value) -> Result<Config, Vec<Diagnostic>> {
    let mut c = Check::default();
    let example = "for example { \"url\": \"env:WEBHOOK_URL\", \"fields\": [\"question\"] }";
    let Some(obj) = c.object(config, &KNOWN, example) else {
        return Err(c.diags);
    };

    let url_hint = "write env:NAME to read the URL from the environment when the service runs (a webhook URL is often a secret), or an http(s) URL";
    let url = c
        .required(obj, "url", "add \"url\": \"env:WEBHOOK_URL\"")
        .and_then(|v| c.string(v, "`url`", "/url", url_hint))
        .filter(|u| check_url(&mut c, u, url_hint))
        .map(str::to_string);

    let mut fields = None;
    if let Some(v) = obj.get("fields") {
        let hint = "list the state fields to send, e.g. [\"question\"]; leave `fields` out to send the whole state";
        match v.as_array() {
            None => c.push(
                &svc_backend_sdk::ir::codes::WRONG_TYPE,
                "`fields` must be an array of state field names".to_string(),
                "/fields",
                hint,
            ),
            Some(items) => {
                let mut names: Vec<String> = Vec::new();
                for (i, item) in items.iter().enumerate() {
                    let ptr = format!("/fields/{i}");
                    let Some(name) = c.field_name(item, "a `fields` entry", &ptr) else {
                        continue;
                    };
                    if names.iter().any(|n| n == name) {
                        c.push(
                            &svc_backend_sdk::ir::codes::DUPLICATE_FIELD,
                            format!("`fields` lists `{name}` twice"),
                            &ptr,
                            "list each state field once",
                        );
                    }
                    names.push(name.to_string());
                }
                fields = Some(names);
            }
        }
    }

    let mut headers = Vec::new();
    if let Some(v) = obj.get("headers") {
        match v.as_object() {
            None => c.push(
                &svc_backend_sdk::ir::codes::WRONG_TYPE,
                "`headers` must be an object of header names to string values".to_string(),
                "/headers",
                "for example { \"Authorization\": \"env:WEBHOOK_TOKEN\", \"X-Source\": \"svc\" }",
            ),
            Some(map) => {
                for (name, value) in map {
                    let ptr = child("/headers", name);
                    if let Some(value) = check_header(&mut c, name, value, &ptr) {
                        headers.push((name.clone(), value.to_string()));
                    }
                }
            }
        }
    }

    let timeout_ms = match obj.get("timeoutMs") {
        None => Some(DEFAULT_TIMEOUT_MS),
        Some(v) => c.integer(
            v,
            "`timeoutMs`",
            "/timeoutMs",
            (1, MAX_TIMEOUT_MS),
            "the longest the call may take, in milliseconds (default 10000)",
        ),
    };

    let output_key = match obj.get("outputKey") {
        None => Some(None),
        Some(v) => c
            .field_name(v, "`outputKey`", "/outputKey")
            .map(|s| Some(s.to_string())),
    };

    let config = match (url, timeout_ms, output_key) {
        (Some(url), Some(timeout_ms), Some(output_key)) => Some(Config {
            url,
            fields,
            headers,
            timeout_ms,
            output_key,
        }),
        _ => None,
    };
    c.finish(config)
}

fn check_url(c: &mut Check, url: &str, hint: &str) -> bool {
    if url.starts_with("env:") {
        return c.env_name(url, "`url`", "/url");
    }
    if !c.placeholders(url, "`url`", "/url") {
        return false;
    }
    // Placeholders are filled when the node runs; the rest must be a URL.
    let literal: String = parts(url)
        .into_iter()
        .map(|p| match p {
            Part::Text(t) => t,
            Part::Field(_) => "x",
        })
        .collect();
    if let Err(why) = check_endpoint(&literal) {
        let why = why.replace(&format!("`{literal}`"), &format!("`{url}`"));
        let hint = if is_identifier(url) {
            format!("to read the URL from the variable {url}, write \"env:{url}\"")
        } else {
            hint.to_string()
        };
        c.push(
            &svc_backend_sdk::ir::codes::INVALID_ENDPOINT,
            format!("`url`: {why}"),
            "/url",
            &hint,
        );
        return false;
    }
    true
}

/// An HTTP token (RFC 9110), the form of a header name.
fn is_token(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

fn check_header<'a>(c: &mut Check, name: &str, value: &'a Value, ptr: &str) -> Option<&'a str> {
    let value = c.string(
        value,
        &format!("header `{name}`"),
        ptr,
        "a header value is a string: env:NAME reads it from the environment, `{{field}}` inserts a state field",
    )?;
    let mut ok = true;
    if !is_token(name) {
        c.push(
            &svc_backend_sdk::ir::codes::INVALID_HEADER,
            format!("`{name}` is not a valid header name"),
            ptr,
            "header names are letters, digits and !#$%&'*+-.^_`|~",
        );
        ok = false;
    } else if RESTRICTED_HEADERS.contains(&name.to_ascii_lowercase().as_str()) {
        c.push(
            &svc_backend_sdk::ir::codes::INVALID_HEADER,
            format!("header `{name}` is set by the HTTP client and cannot be configured"),
            ptr,
            "remove it",
        );
        ok = false;
    }
    if value.contains(['\r', '\n', '\0']) {
        c.push(
            &svc_backend_sdk::ir::codes::INVALID_HEADER,
            format!("the value of header `{name}` holds a line break or NUL"),
            ptr,
            "write the value on one line",
        );
        ok = false;
    }
    if value.starts_with("env:") {
        ok &= c.env_name(value, &format!("header `{name}`"), ptr);
    } else {
        ok &= c.placeholders(value, &format!("header `{name}`"), ptr);
    }
    ok.then_some(value)
}

fn go_snippet(cfg: &Config) -> Result<String, Diagnostic> {
    let fields = match &cfg.fields {
        None => "nil".to_string(),
        Some(f) => format!(
            "[]string{{{}}}",
            f.iter().map(|s| c_str(s)).collect::<Vec<_>>().join(", ")
        ),
    };
    let headers = if cfg.headers.is_empty() {
        "nil".to_string()
    } else {
        format!(
            "map[string]string{{{}}}",
            cfg.headers
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
    let headers = if cfg.headers.is_empty() {
        "None".to_string()
    } else {
        let items: Vec<String> = cfg
            .headers
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
    let headers = if cfg.headers.is_empty() {
        "null".to_string()
    } else {
        format!(
            "java.util.Map.ofEntries({})",
            cfg.headers
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
            config_schema: config_schema().to_string(),
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
        let cfg = parse_config(node_config)?;
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
