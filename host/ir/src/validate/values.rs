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
