//! State values against their declared types.

use serde_json::Value;

use crate::model::*;

/// Whether a JSON value has the declared state type.
pub fn value_matches(ty: FieldType, items: Option<&ItemType>, v: &Value) -> bool {
    match ty {
        FieldType::String => v.is_string(),
        FieldType::Integer => v.is_i64() || v.is_u64(),
        FieldType::Number => v.is_number(),
        FieldType::Boolean => v.is_boolean(),
        FieldType::Object => v.is_object(),
        FieldType::Array => match (v.as_array(), items) {
            (Some(list), Some(it)) => list
                .iter()
                .all(|x| value_matches(it.ty, it.items.as_deref(), x)),
            (Some(_), None) => true,
            (None, _) => false,
        },
        FieldType::Messages => v.as_array().is_some_and(|list| list.iter().all(is_message)),
    }
}

/// `{ "role": string, "content": string }` and nothing else.
pub fn is_message(v: &Value) -> bool {
    v.as_object().is_some_and(|m| {
        m.len() == 2
            && m.get("role").is_some_and(Value::is_string)
            && m.get("content").is_some_and(Value::is_string)
    })
}

pub(crate) fn describe_type(ty: FieldType, items: Option<&ItemType>) -> String {
    match (ty, items) {
        (FieldType::Array, Some(it)) => {
            format!("array of {}", describe_type(it.ty, it.items.as_deref()))
        }
        (FieldType::Messages, _) => "a list of {role, content} messages".into(),
        (FieldType::Integer, None) => "an integer".into(),
        (FieldType::Array, None) => "an array".into(),
        (FieldType::Object, None) => "an object".into(),
        (t, _) => format!("a {}", t.as_str()),
    }
}

/// The first place where `v` does not fit `schema` (a schema of
/// [`crate::ItemType::json_schema`]'s form), as (JSON pointer into `v`,
/// problem), in the order every target's runtime reports it: the value's
/// type, then an object's declared properties in order, then its unknown
/// keys in sorted order; an array's items by index.
pub fn schema_problem(schema: &Value, v: &Value) -> Option<(String, String)> {
    schema_walk(schema, v, "")
}

fn schema_walk(schema: &Value, v: &Value, at: &str) -> Option<(String, String)> {
    let ty = schema.get("type").and_then(Value::as_str).unwrap_or("");
    let fits = match ty {
        "string" => v.is_string(),
        // 3.0 is an integer, as in JSON Schema.
        "integer" => v.is_i64() || v.is_u64() || v.as_f64().is_some_and(|f| f.fract() == 0.0),
        "number" => v.is_number(),
        "boolean" => v.is_boolean(),
        "object" => v.is_object(),
        "array" => v.is_array(),
        _ => true,
    };
    if !fits {
        return Some((at.to_string(), format!("expected {ty}")));
    }
    if let (Some(list), Some(items)) = (v.as_array(), schema.get("items")) {
        return list
            .iter()
            .enumerate()
            .find_map(|(i, x)| schema_walk(items, x, &format!("{at}/{i}")));
    }
    let (Some(map), Some(props)) = (v.as_object(), schema.get("properties")) else {
        return None;
    };
    let required = schema.get("required").and_then(Value::as_array);
    for name in required.into_iter().flatten().filter_map(Value::as_str) {
        let here = format!("{at}/{}", crate::diag::pointer_token(name));
        match (map.get(name), props.get(name)) {
            (None, _) => return Some((here, "missing".into())),
            (Some(x), Some(s)) => {
                if let Some(p) = schema_walk(s, x, &here) {
                    return Some(p);
                }
            }
            (Some(_), None) => {}
        }
    }
    if schema.get("additionalProperties") == Some(&Value::Bool(false)) {
        let mut extra: Vec<&String> = map.keys().filter(|k| props.get(*k).is_none()).collect();
        extra.sort();
        if let Some(k) = extra.first() {
            return Some((
                format!("{at}/{}", crate::diag::pointer_token(k)),
                "not allowed".into(),
            ));
        }
    }
    None
}
