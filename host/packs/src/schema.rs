//! Checks a connector node's `config` against the JSON Schema its connector
//! publishes in `info()`: full draft 2020-12 with the `jsonschema` crate,
//! `format` enforced (configs carry URLs, ids and durations), svc's own
//! formats among them (`svc_ir::config_formats`: field names, templates,
//! URLs, headers). This is the one check of a config: the connector reads
//! it as a typed value after. Each violation keeps the pointer of the
//! offending value inside the config, which the host places in the user's
//! document, and the code and hint of its format, else the description the
//! schema gives the value.

use std::collections::HashSet;

use jsonschema::error::ValidationErrorKind;
use jsonschema::Validator;
use serde_json::Value;
use svc_ir::codes::{
    Code, CONNECTOR_CONFIG, DUPLICATE_FIELD, INVALID_VALUE, MISSING_FIELD, OUT_OF_RANGE,
    UNKNOWN_FIELD, WRONG_TYPE,
};
use svc_ir::config_formats::{self, FORMATS};
use svc_ir::diag::pointer_token;
use svc_ir::Diagnostic;

/// A problem at a JSON pointer relative to the checked value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub pointer: String,
    pub message: String,
    /// The code of an svc format's problem or of a keyword a rule of the
    /// document matches (`keyword_code`); `None`: `connector-config`.
    pub code: Option<&'static Code>,
    /// How to fix it, when the format or the schema says.
    pub hint: Option<String>,
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
        let mut options = jsonschema::draft202012::options().should_validate_formats(true);
        for (name, check) in FORMATS {
            options = options.with_format(name, move |value: &str| check(value).is_ok());
        }
        let validator = options.build(&schema).map_err(|e| e.to_string())?;
        // JSON Schema ignores a format it does not know; one of svc's names
        // misspelt would leave a check undone.
        if let Some(unknown) = svc_formats_in(&schema)
            .into_iter()
            .find(|f| !FORMATS.iter().any(|(name, _)| name == f))
        {
            let known: Vec<&str> = FORMATS.iter().map(|(name, _)| *name).collect();
            return Err(format!(
                "it names the format `{unknown}`, which is not one of svc's ({})",
                known.join(", ")
            ));
        }
        Ok(ConfigSchema { schema, validator })
    }

    /// The schema as the component gave it.
    pub fn value(&self) -> &Value {
        &self.schema
    }

    /// The violations of `config`, the config of node `node_id` that uses
    /// `connector`, as diagnostics (pointers relative to the config).
    pub fn diagnostics(&self, config: &Value, node_id: &str, connector: &str) -> Vec<Diagnostic> {
        self.check(config)
            .into_iter()
            .map(|v| {
                Diagnostic::error(
                    v.code.unwrap_or(&CONNECTOR_CONFIG),
                    format!("node `{node_id}`: config of connector `{connector}`: {}", v.message),
                )
                .at(v.pointer)
                .hint(v.hint.unwrap_or_else(|| {
                    format!("make the node's config match the config schema that `{connector}` publishes")
                }))
            })
            .collect()
    }

    /// Every violation of the schema by `value`, in the order found.
    pub fn check(&self, value: &Value) -> Vec<Violation> {
        let mut out = Vec::new();
        for error in self.validator.iter_errors(value) {
            let at = error.instance_path().as_str().to_string();
            let keyword = error.schema_path().as_str();
            match error.kind() {
                // One violation per unknown key, at the key, with a guess.
                ValidationErrorKind::AdditionalProperties { unexpected } => {
                    let known = self.properties_beside(keyword);
                    for key in unexpected {
                        out.push(Violation {
                            pointer: format!("{at}/{}", pointer_token(key)),
                            message: unknown_field(key, &known),
                            code: Some(&UNKNOWN_FIELD),
                            hint: None,
                        });
                    }
                }
                // A property name breaks `propertyNames`: point at it.
                ValidationErrorKind::PropertyNames { error: inner } => {
                    let key = inner.instance().as_str().unwrap_or_default();
                    let pointer = format!("{at}/{}", pointer_token(key));
                    out.push(self.violation(inner, pointer));
                }
                _ => out.push(self.violation(&error, at)),
            }
        }
        // A value of the wrong type breaks every other keyword about it
        // too (`enum`, `format`): its type is what to fix first.
        let mistyped: HashSet<String> = out
            .iter()
            .filter(|v| v.code == Some(&WRONG_TYPE))
            .map(|v| v.pointer.clone())
            .collect();
        out.retain(|v| v.code == Some(&WRONG_TYPE) || !mistyped.contains(&v.pointer));
        out
    }

    /// `error` at `pointer`: an svc format's problem with its code and
    /// hint, else the validator's message with the value's description.
    fn violation(&self, error: &jsonschema::ValidationError<'_>, pointer: String) -> Violation {
        let problem = match error.kind() {
            ValidationErrorKind::Format { format } => error
                .instance()
                .as_str()
                .and_then(|text| config_formats::check(format, text)),
            ValidationErrorKind::UniqueItems => {
                return self
                    .repeated_field(error, &pointer)
                    .unwrap_or_else(|| Violation {
                        pointer,
                        message: error.to_string(),
                        code: None,
                        hint: self.description_of(error.schema_path().as_str()),
                    });
            }
            // What the missing field is for tells what to write.
            ValidationErrorKind::Required { property } => {
                let parent = parent_of(error.schema_path().as_str());
                let hint = property.as_str().and_then(|name| {
                    let at = format!("{parent}/properties/{}", pointer_token(name));
                    self.description_at(&at)
                        .map(|d| format!("add `{name}`: {d}"))
                });
                return Violation {
                    pointer,
                    message: error.to_string(),
                    code: Some(&MISSING_FIELD),
                    hint,
                };
            }
            _ => None,
        };
        match problem {
            Some(problem) => Violation {
                pointer,
                message: problem.message,
                code: Some(problem.code),
                hint: Some(problem.hint),
            },
            None => Violation {
                pointer,
                message: error.to_string(),
                code: keyword_code(error.kind()),
                hint: self.description_of(error.schema_path().as_str()),
            },
        }
    }

    /// A list of state field names (`uniqueItems` over items of the format
    /// `svc-field-name`) that names one twice: `duplicate-field`, at the
    /// second mention.
    fn repeated_field(
        &self,
        error: &jsonschema::ValidationError<'_>,
        at: &str,
    ) -> Option<Violation> {
        let parent = parent_of(error.schema_path().as_str());
        let items = self.schema.pointer(&format!("{parent}/items/format"))?;
        if items != config_formats::FIELD_NAME {
            return None;
        }
        let list = error.instance().as_array()?;
        let mut seen = HashSet::new();
        let (i, name) = list
            .iter()
            .enumerate()
            .find_map(|(i, v)| (!seen.insert(v.as_str()?)).then_some((i, v.as_str()?)))?;
        Some(Violation {
            pointer: format!("{at}/{i}"),
            message: format!("the list names the state field `{name}` twice"),
            code: Some(&DUPLICATE_FIELD),
            hint: Some("list each state field once".to_string()),
        })
    }

    /// The `description` of the schema object holding the keyword at
    /// `keyword_path`: what the value is for, which tells how to fix it.
    fn description_of(&self, keyword_path: &str) -> Option<String> {
        self.description_at(parent_of(keyword_path))
    }

    /// The `description` of the schema object at `pointer`, but the root's:
    /// that describes the config as a whole (often to its developers), not
    /// a value to fix.
    fn description_at(&self, pointer: &str) -> Option<String> {
        if pointer.is_empty() {
            return None;
        }
        self.schema
            .pointer(pointer)
            .and_then(|s| s.get("description"))
            .and_then(Value::as_str)
            .map(str::to_string)
    }

    /// The `properties` names of the schema object holding the keyword at
    /// `keyword_path` (an `additionalProperties` location).
    fn properties_beside(&self, keyword_path: &str) -> Vec<&str> {
        let parent = parent_of(keyword_path);
        self.schema
            .pointer(&format!("{parent}/properties"))
            .and_then(Value::as_object)
            .map(|p| p.keys().map(String::as_str).collect())
            .unwrap_or_default()
    }
}

/// The schema object holding the keyword at `keyword_path`.
fn parent_of(keyword_path: &str) -> &str {
    keyword_path
        .rsplit_once('/')
        .map_or("", |(parent, _)| parent)
}

/// The `format` names of `schema` that claim svc's prefix.
fn svc_formats_in(schema: &Value) -> Vec<&str> {
    match schema {
        Value::Object(map) => {
            let own = map
                .get("format")
                .and_then(Value::as_str)
                .filter(|f| f.starts_with("svc-"));
            own.into_iter()
                .chain(map.values().flat_map(svc_formats_in))
                .collect()
        }
        Value::Array(items) => items.iter().flat_map(svc_formats_in).collect(),
        _ => Vec::new(),
    }
}

/// The code of a keyword that says the same as a rule of the document
/// does (a wrong type, a number out of range, a value not allowed; a
/// missing field is `violation`'s own); `None` for the rest
/// (`connector-config`).
fn keyword_code(kind: &ValidationErrorKind) -> Option<&'static Code> {
    match kind {
        ValidationErrorKind::Type { .. } => Some(&WRONG_TYPE),
        ValidationErrorKind::Minimum { .. }
        | ValidationErrorKind::Maximum { .. }
        | ValidationErrorKind::ExclusiveMinimum { .. }
        | ValidationErrorKind::ExclusiveMaximum { .. } => Some(&OUT_OF_RANGE),
        ValidationErrorKind::Enum { .. }
        | ValidationErrorKind::Constant { .. }
        | ValidationErrorKind::MinLength { .. }
        | ValidationErrorKind::MaxLength { .. }
        | ValidationErrorKind::Pattern { .. } => Some(&INVALID_VALUE),
        _ => None,
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

    /// svc's formats report their own code and hint, at the value (a
    /// header's name at its key); other keywords take the description.
    #[test]
    fn svc_formats_and_descriptions_say_how_to_fix_it() {
        let schema = ConfigSchema::compile(json!({
            "type": "object",
            "properties": {
                "url": { "type": "string", "format": "svc-url" },
                "outputKey": { "type": "string", "format": "svc-field-name" },
                "fields": { "type": "array", "uniqueItems": true, "items": { "type": "string", "format": "svc-field-name" } },
                "headers": {
                    "type": "object",
                    "propertyNames": { "format": "svc-header-name" },
                    "additionalProperties": { "type": "string", "format": "svc-header-value" }
                },
                "timeoutMs": { "type": "integer", "minimum": 1, "description": "the longest the call may take, in milliseconds" }
            }
        }))
        .unwrap();
        let v = json!({"url": "WEBHOOK_URL", "outputKey": "re ply", "fields": ["a", "b", "a"],
            "headers": {"Host": "x", "X-A": "a\nb"}, "timeoutMs": 0});
        let mut got: Vec<(String, Option<&str>, Option<String>)> = schema
            .check(&v)
            .into_iter()
            .map(|v| (v.pointer, v.code.map(|c| c.name), v.hint))
            .collect();
        got.sort();
        let hint = |s: &str| Some(s.to_string());
        assert_eq!(
            got,
            [
                ("/fields/2".into(), Some("duplicate-field"), hint("list each state field once")),
                ("/headers/Host".into(), Some("invalid-header"), hint("remove it")),
                ("/headers/X-A".into(), Some("invalid-header"), hint("write the value on one line")),
                ("/outputKey".into(), Some("invalid-field-name"),
                    hint("use the name of a state field: letters, digits and `_`, not starting with a digit")),
                ("/timeoutMs".into(), Some("out-of-range"), hint("the longest the call may take, in milliseconds")),
                ("/url".into(), Some("invalid-endpoint"),
                    hint("to read the URL from the variable WEBHOOK_URL, write \"env:WEBHOOK_URL\"")),
            ]
        );
        let good = json!({"url": "https://x/{{id}}", "outputKey": "reply",
            "headers": {"Authorization": "env:TOKEN"}, "timeoutMs": 5});
        assert_eq!(schema.check(&good), []);
    }

    #[test]
    fn a_wrong_type_stops_at_the_value() {
        let got = schema().check(&json!([1]));
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0].pointer, "");
        assert!(got[0].message.contains("\"object\""), "{}", got[0].message);
    }

    #[test]
    fn a_missing_field_is_hinted_by_its_description_never_by_the_roots() {
        let schema = ConfigSchema::compile(json!({
            "type": "object", "description": "for the connector's developers",
            "required": ["url", "op"],
            "properties": { "url": { "type": "string", "description": "where to send it" }, "op": {} }
        }))
        .unwrap();
        let mut got: Vec<(String, Option<String>)> = schema
            .check(&json!({}))
            .into_iter()
            .map(|v| (v.message, v.hint))
            .collect();
        got.sort();
        assert_eq!(
            got,
            [
                ("\"op\" is a required property".to_string(), None),
                (
                    "\"url\" is a required property".to_string(),
                    Some("add `url`: where to send it".to_string())
                ),
            ]
        );
        let root = schema.check(&json!([]));
        assert_eq!(root[0].hint, None, "{root:?}");
    }

    #[test]
    fn a_misspelt_svc_format_is_refused_others_are_the_standards() {
        let e = ConfigSchema::compile(json!({"properties": {"k": {"format": "svc-feld-name"}}}))
            .unwrap_err();
        assert!(
            e.contains("`svc-feld-name`") && e.contains("svc-field-name"),
            "{e}"
        );
        assert!(ConfigSchema::compile(json!({"properties": {"k": {"format": "x-own"}}})).is_ok());
    }

    #[test]
    fn a_repeated_name_is_found_at_its_second_mention_in_a_long_list() {
        let schema = ConfigSchema::compile(json!({"properties": {"fields": {
            "type": "array", "uniqueItems": true, "items": {"type": "string", "format": "svc-field-name"}}}}))
        .unwrap();
        let mut fields: Vec<Value> = (0..50_000).map(|i| json!(format!("f{i}"))).collect();
        fields.push(json!("f7"));
        let got = schema.check(&json!({ "fields": fields }));
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0].pointer, "/fields/50000");
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
