//! Checks a connector node's `config` against the JSON Schema its connector
//! publishes in `info()`. The subset understood is what configuration
//! schemas use: `type`, `properties`, `required`, `additionalProperties`,
//! `enum`, `const`, `items`, `minimum`, `maximum`, `minLength`, `minItems`.
//! Other keywords are left to the connector's own `render` checks.

use serde_json::Value;
use svc_ir::diag::pointer_token;
use svc_ir::json::value_kind;

/// A problem at a JSON pointer relative to the checked value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub pointer: String,
    pub message: String,
}

pub fn check(schema: &Value, value: &Value) -> Vec<Violation> {
    let mut out = Vec::new();
    walk(schema, value, "", &mut out);
    out
}

fn type_matches(name: &str, v: &Value) -> bool {
    match name {
        "string" => v.is_string(),
        "integer" => v.is_i64() || v.is_u64(),
        "number" => v.is_number(),
        "boolean" => v.is_boolean(),
        "object" => v.is_object(),
        "array" => v.is_array(),
        "null" => v.is_null(),
        _ => true,
    }
}

fn walk(schema: &Value, v: &Value, ptr: &str, out: &mut Vec<Violation>) {
    let Some(s) = schema.as_object() else {
        return;
    };
    let mut fail = |pointer: String, message: String| out.push(Violation { pointer, message });
    if let Some(t) = s.get("type") {
        let names: Vec<&str> = match t {
            Value::String(one) => vec![one.as_str()],
            Value::Array(many) => many.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if !names.is_empty() && !names.iter().any(|n| type_matches(n, v)) {
            fail(
                ptr.to_string(),
                format!("expected {}, found {}", names.join(" or "), value_kind(v)),
            );
            return;
        }
    }
    if let Some(Value::Array(allowed)) = s.get("enum") {
        if !allowed.contains(v) {
            let list: Vec<String> = allowed.iter().map(Value::to_string).collect();
            fail(
                ptr.to_string(),
                format!("must be one of {}, found {v}", list.join(", ")),
            );
        }
    }
    if let Some(c) = s.get("const") {
        if c != v {
            fail(ptr.to_string(), format!("must be {c}, found {v}"));
        }
    }
    if let (Some(min), Some(n)) = (s.get("minimum").and_then(Value::as_f64), v.as_f64()) {
        if n < min {
            fail(
                ptr.to_string(),
                format!("must be at least {min}, found {n}"),
            );
        }
    }
    if let (Some(max), Some(n)) = (s.get("maximum").and_then(Value::as_f64), v.as_f64()) {
        if n > max {
            fail(ptr.to_string(), format!("must be at most {max}, found {n}"));
        }
    }
    if let (Some(min), Some(text)) = (s.get("minLength").and_then(Value::as_u64), v.as_str()) {
        if (text.chars().count() as u64) < min {
            fail(
                ptr.to_string(),
                format!("must have at least {min} characters"),
            );
        }
    }
    if let Value::Array(items) = v {
        if let Some(min) = s.get("minItems").and_then(Value::as_u64) {
            if (items.len() as u64) < min {
                fail(ptr.to_string(), format!("must have at least {min} items"));
            }
        }
        if let Some(item_schema) = s.get("items") {
            for (i, item) in items.iter().enumerate() {
                walk(item_schema, item, &format!("{ptr}/{i}"), out);
            }
        }
    }
    if let Value::Object(members) = v {
        let props = s.get("properties").and_then(Value::as_object);
        if let Some(Value::Array(required)) = s.get("required") {
            for key in required.iter().filter_map(Value::as_str) {
                if !members.contains_key(key) {
                    out.push(Violation {
                        pointer: ptr.to_string(),
                        message: format!("missing required field `{key}`"),
                    });
                }
            }
        }
        for (key, value) in members {
            let at = format!("{ptr}/{}", pointer_token(key));
            match props.and_then(|p| p.get(key)) {
                Some(sub) => walk(sub, value, &at, out),
                None => match s.get("additionalProperties") {
                    Some(Value::Bool(false)) => {
                        let known: Vec<&str> = props
                            .map(|p| p.keys().map(String::as_str).collect())
                            .unwrap_or_default();
                        let hint = match svc_ir::diag::did_you_mean(key, known.iter().copied()) {
                            Some(s) => format!(" (did you mean `{s}`?)"),
                            None if known.is_empty() => String::new(),
                            None => format!(" (known: {})", known.join(", ")),
                        };
                        out.push(Violation {
                            pointer: at,
                            message: format!("unknown field `{key}`{hint}"),
                        });
                    }
                    Some(sub @ Value::Object(_)) => walk(sub, value, &at, out),
                    _ => {}
                },
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "additionalProperties": false,
            "required": ["url"],
            "properties": {
                "url": { "type": "string", "minLength": 1 },
                "timeoutMs": { "type": "integer", "minimum": 1 },
                "op": { "enum": ["get", "set"] },
                "fields": { "type": "array", "items": { "type": "string" } },
                "headers": { "type": "object", "additionalProperties": { "type": "string" } }
            }
        })
    }

    #[test]
    fn accepts_a_good_config() {
        let v = json!({"url": "env:X", "timeoutMs": 5, "fields": ["a"], "headers": {"k": "v"}});
        assert_eq!(check(&schema(), &v), []);
    }

    #[test]
    fn reports_each_violation_at_its_pointer() {
        let v = json!({"timeoutMs": 0, "op": "put", "fields": ["a", 3], "headers": {"k": 1}, "urll": "x"});
        let got: Vec<(String, String)> = check(&schema(), &v)
            .into_iter()
            .map(|v| (v.pointer, v.message))
            .collect();
        let pointers: Vec<&str> = got.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(
            pointers,
            ["", "/timeoutMs", "/op", "/fields/1", "/headers/k", "/urll"],
            "{got:?}"
        );
        assert!(got[0].1.contains("`url`"));
        assert!(got[5].1.contains("did you mean `url`?"), "{}", got[5].1);
    }

    #[test]
    fn a_wrong_type_stops_at_the_value() {
        let got = check(&schema(), &json!([1]));
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].message, "expected object, found an array");
    }
}
