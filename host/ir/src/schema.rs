//! The JSON Schema of IR v2, generated from the model. The committed copy
//! (`fixtures/schema/ir-v2.schema.json`) is checked against this by a test.

use serde_json::{json, Value};

use crate::model::Document;

/// The schema as pretty JSON with a trailing newline.
pub fn json_schema() -> String {
    let schema = schemars::schema_for!(Document);
    let mut value = schema.to_value();
    add_kind_alias(&mut value, "response_template", "response_transformer");
    // Published with the shared specification's version, as an annotation
    // (validators ignore keywords they do not know).
    if let Value::Object(map) = &mut value {
        map.insert(
            "x-svc-specification".into(),
            json!(crate::release::SPECIFICATION),
        );
    }
    let mut text = serde_json::to_string_pretty(&value).unwrap_or_default();
    text.push('\n');
    text
}

/// serde aliases are read-only, so schemars does not list them; the schema
/// must accept what the reader accepts.
fn add_kind_alias(value: &mut Value, kind: &str, alias: &str) {
    match value {
        Value::Object(map) => {
            if map.get("const").and_then(Value::as_str) == Some(kind)
                && map.get("type").and_then(Value::as_str) == Some("string")
            {
                map.remove("const");
                map.insert("enum".into(), json!([kind, alias]));
                return;
            }
            for v in map.values_mut() {
                add_kind_alias(v, kind, alias);
            }
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|v| add_kind_alias(v, kind, alias)),
        _ => {}
    }
}
