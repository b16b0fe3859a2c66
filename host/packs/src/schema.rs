//! Checks a connector node's `config` against the JSON Schema its connector
//! publishes in `info()`: full draft 2020-12 with the `jsonschema` crate,
//! `format` enforced (configs carry URLs, ids and durations). Each violation
//! keeps the pointer of the offending value inside the config, which the host
//! places in the user's document.

use jsonschema::error::ValidationErrorKind;
use jsonschema::Validator;
use serde_json::Value;
use svc_ir::diag::pointer_token;

/// A problem at a JSON pointer relative to the checked value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub pointer: String,
    pub message: String,
}

/// A connector's config schema, compiled once when the connector loads.
pub struct ConfigSchema {
    schema: Value,
    validator: Validator,
}

impl std::fmt::Debug for ConfigSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("ConfigSchema").field(&self.schema).finish()
    }
}

impl ConfigSchema {
    /// Compiles `schema`; the error says why it is not a usable schema (an
    /// unknown draft, a bad keyword value, a `$ref` outside the document:
    /// nothing is fetched).
    pub fn compile(schema: Value) -> Result<Self, String> {
        let validator = jsonschema::draft202012::options()
            .should_validate_formats(true)
            .build(&schema)
            .map_err(|e| e.to_string())?;
        Ok(ConfigSchema { schema, validator })
    }

    /// The schema as the component gave it.
    pub fn value(&self) -> &Value {
        &self.schema
    }

    /// Every violation of the schema by `value`, in the order found.
    pub fn check(&self, value: &Value) -> Vec<Violation> {
        let mut out = Vec::new();
        for error in self.validator.iter_errors(value) {
            let at = error.instance_path().as_str().to_string();
            match error.kind() {
                // One violation per unknown key, at the key, with a guess.
                ValidationErrorKind::AdditionalProperties { unexpected } => {
                    let known = self.properties_beside(error.schema_path().as_str());
                    for key in unexpected {
                        out.push(Violation {
                            pointer: format!("{at}/{}", pointer_token(key)),
                            message: unknown_field(key, &known),
                        });
                    }
                }
                _ => out.push(Violation {
                    pointer: at,
                    message: error.to_string(),
                }),
            }
        }
        out
    }

    /// The `properties` names of the schema object holding the keyword at
    /// `keyword_path` (an `additionalProperties` location).
    fn properties_beside(&self, keyword_path: &str) -> Vec<&str> {
        let parent = keyword_path
            .rsplit_once('/')
            .map_or("", |(parent, _)| parent);
        self.schema
            .pointer(&format!("{parent}/properties"))
            .and_then(Value::as_object)
            .map(|p| p.keys().map(String::as_str).collect())
            .unwrap_or_default()
    }
}

fn unknown_field(key: &str, known: &[&str]) -> String {
    let hint = match svc_ir::diag::did_you_mean(key, known.iter().copied()) {
        Some(s) => format!(" (did you mean `{s}`?)"),
        None if known.is_empty() => String::new(),
        None => format!(" (known: {})", known.join(", ")),
    };
    format!("unknown field `{key}`{hint}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> ConfigSchema {
        ConfigSchema::compile(json!({
            "type": "object",
            "additionalProperties": false,
            "required": ["url"],
            "properties": {
                "url": { "type": "string", "minLength": 1 },
                "timeoutMs": { "type": "integer", "minimum": 1 },
                "op": { "enum": ["get", "set"] },
                "fields": { "type": "array", "items": { "type": "string" } },
                "headers": { "type": "object", "additionalProperties": { "type": "string" } },
                "endpoint": { "type": "string", "format": "uri" },
                "region": { "type": "string", "pattern": "^[a-z]+-[0-9]$" },
                "auth": { "oneOf": [
                    { "type": "object", "required": ["token"], "properties": { "token": { "type": "string" } } },
                    { "type": "object", "required": ["user"], "properties": { "user": { "type": "string" } } }
                ] }
            }
        }))
        .unwrap()
    }

    #[test]
    fn accepts_a_good_config() {
        let v = json!({"url": "env:X", "timeoutMs": 5, "fields": ["a"], "headers": {"k": "v"}});
        assert_eq!(schema().check(&v), []);
    }

    fn pointers_and_messages(v: &Value) -> Vec<(String, String)> {
        let mut got: Vec<(String, String)> = schema()
            .check(v)
            .into_iter()
            .map(|v| (v.pointer, v.message))
            .collect();
        got.sort();
        got
    }

    #[test]
    fn reports_each_violation_at_its_pointer() {
        let v = json!({"timeoutMs": 0, "op": "put", "fields": ["a", 3], "headers": {"k": 1}, "urll": "x"});
        let got = pointers_and_messages(&v);
        let pointers: Vec<&str> = got.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(
            pointers,
            ["", "/fields/1", "/headers/k", "/op", "/timeoutMs", "/urll"],
            "{got:?}"
        );
        assert!(got[0].1.contains("\"url\""), "{}", got[0].1);
        assert!(got[5].1.contains("did you mean `url`?"), "{}", got[5].1);
    }

    /// The keywords the hand-written subset let through.
    #[test]
    fn format_pattern_and_one_of_are_enforced() {
        let v = json!({"url": "x", "endpoint": "not a uri", "region": "EU", "auth": {"token": "t", "user": "u"}});
        let got = pointers_and_messages(&v);
        let pointers: Vec<&str> = got.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(pointers, ["/auth", "/endpoint", "/region"], "{got:?}");
        assert!(got[1].1.contains("uri"), "{}", got[1].1);
        assert!(got[2].1.contains("^[a-z]+-[0-9]$"), "{}", got[2].1);
        let good = json!({"url": "x", "endpoint": "https://example.com/a", "region": "eu-1", "auth": {"user": "u"}});
        assert_eq!(schema().check(&good), []);
    }

    #[test]
    fn a_wrong_type_stops_at_the_value() {
        let got = schema().check(&json!([1]));
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0].pointer, "");
        assert!(got[0].message.contains("\"object\""), "{}", got[0].message);
    }

    #[test]
    fn an_unusable_schema_is_refused_with_the_reason() {
        let e = ConfigSchema::compile(json!({"type": "objekt"})).unwrap_err();
        assert!(e.contains("objekt"), "{e}");
        // Nothing is fetched: a remote reference cannot be resolved.
        let e = ConfigSchema::compile(json!({"$ref": "https://example.com/s.json"})).unwrap_err();
        assert!(!e.is_empty());
    }
}
