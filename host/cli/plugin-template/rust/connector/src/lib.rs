//! The `__SVC_ID__` connector: writes a text, with `{{field}}` references
//! filled from the state at run time, into a state field.
//!
//! `render` returns, per platform, the body of the node's function (it
//! returns a state patch) and a helper file from `templates/`.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use svc_backend_sdk::connector_kit::config::{self, FieldName, Template};
use svc_backend_sdk::{Connector, ConnectorInfo, Diagnostic, File, Rendered};

pub const ID: &str = "__SVC_ID__";
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
const PLATFORMS: [&str; 3] = ["go", "java-svc", "python-svc"];

const GO_FILE: &str = include_str!("../../templates/go/connector___SVC_SNAKE__.go");
const PYTHON_FILE: &str = include_str!("../../templates/python-svc/__SVC_SNAKE__.py");
const JAVA_FILE: &str = include_str!("../../templates/java-svc/__SVC_CAMEL__.java");

// The node's `config`, declared once: `info()` publishes its JSON Schema,
// svc checks every node's config against it (each problem named, with
// the field's description as the hint), and `render` reads it as this.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Config {
    /// The state field that receives the text.
    pub output_key: FieldName,
    /// The text; `{{field}}` inserts a state field when the node runs.
    pub text: Template,
}

pub struct __SVC_CAMEL__Connector;

/// A string as a literal of Go, Java and Python alike.
fn literal(s: &str) -> String {
    Value::String(s.to_string()).to_string()
}

impl Connector for __SVC_CAMEL__Connector {
    fn info() -> ConnectorInfo {
        ConnectorInfo {
            id: ID.into(),
            version: VERSION.into(),
            platforms: PLATFORMS.iter().map(|p| p.to_string()).collect(),
            config_schema: config::schema::<Config>().to_string(),
            dependencies: Vec::new(),
        }
    }

    fn render(_node_id: &str, platform: &str, config: &Value) -> Result<Rendered, Vec<Diagnostic>> {
        let config: Config = config::read(config)?;
        let (key, text) = (literal(&config.output_key), literal(&config.text));
        let (path, contents, snippet) = match platform {
            "go" => (
                "internal/graph/connector___SVC_SNAKE__.go",
                GO_FILE,
                format!("return State{{{key}: connector__SVC_CAMEL__Render({text}, state)}}, nil"),
            ),
            "python-svc" => (
                "app/connectors/__SVC_SNAKE__.py",
                PYTHON_FILE,
                format!("from app.connectors.__SVC_SNAKE__ import render\n\ntext = {text}\nreturn {{{key}: render(text, state)}}"),
            ),
            "java-svc" => (
                "src/main/java/com/svc/connectors/__SVC_SNAKE__/__SVC_CAMEL__.java",
                JAVA_FILE,
                format!("return Map.of({key}, com.svc.connectors.__SVC_SNAKE__.__SVC_CAMEL__.render({text}, state));"),
            ),
            other => {
                return Err(vec![Diagnostic::error(
                    &svc_backend_sdk::codes::PLATFORM_UNSUPPORTED,
                    format!("{ID} has no template for `{other}`"),
                )
                .hint(format!("it supports {}", PLATFORMS.join(", ")))])
            }
        };
        Ok(Rendered {
            files: vec![File::text(path, contents)],
            snippet,
            dependencies: Vec::new(),
        })
    }
}

svc_backend_sdk::export_connector!(__SVC_CAMEL__Connector);

#[cfg(test)]
mod tests {
    use super::*;

    fn read(path: &str) -> Value {
        let text = std::fs::read_to_string(format!("{}/../{path}", env!("CARGO_MANIFEST_DIR"))).unwrap();
        serde_json::from_str(&text).unwrap()
    }

    #[test]
    fn info_matches_the_project_manifest() {
        let project = read("svc.project.json");
        let info = __SVC_CAMEL__Connector::info();
        assert_eq!(project["connector"], info.id.as_str());
        assert_eq!(project["version"], info.version.as_str());
        let platforms: Vec<&str> = project["platforms"].as_array().unwrap().iter().map(|p| p.as_str().unwrap()).collect();
        assert_eq!(platforms, info.platforms);
        let schema: Value = serde_json::from_str(&info.config_schema).unwrap();
        assert_eq!(schema["required"], serde_json::json!(["outputKey", "text"]));
        // svc checks a state field's name, and the `{{field}}` of a text.
        assert_eq!(schema["properties"]["outputKey"]["format"], "svc-field-name");
        assert_eq!(schema["properties"]["text"]["format"], "svc-template");
    }

    #[test]
    fn every_platform_renders_the_example() {
        let example = read(project_document().as_str());
        let node = example["logical"]["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n["kind"] == "connector")
            .unwrap();
        for platform in PLATFORMS {
            let r = __SVC_CAMEL__Connector::render("node", platform, &node["config"]).unwrap();
            assert!(r.snippet.contains("\"greeting\""), "{platform}: {}", r.snippet);
            assert_eq!(r.files.len(), 1);
            assert!(!r.files[0].contents.is_empty());
        }
    }

    fn project_document() -> String {
        read("svc.project.json")["document"].as_str().unwrap().to_string()
    }

    #[test]
    fn a_config_svc_did_not_check_is_refused_whole() {
        let bad = serde_json::json!({ "outputKey": "greeting", "text": 3 });
        let errors = __SVC_CAMEL__Connector::render("node", "go", &bad).unwrap_err();
        assert_eq!(errors[0].code, "invalid-config");
        let unknown = __SVC_CAMEL__Connector::render("node", "rust", &serde_json::json!({ "outputKey": "a", "text": "" }));
        assert_eq!(unknown.unwrap_err()[0].code, "platform-unsupported");
    }
}
