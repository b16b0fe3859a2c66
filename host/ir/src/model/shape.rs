//! The shape of a value that has `items` or `properties`: the JSON Schema
//! generated services check request values and structured model replies
//! against (docs/ir-reference.md, "Structured output").

use serde_json::{json, Map, Value};

use super::{FieldType, ItemType, StateField};

/// Nesting and size limits of a schema both providers' strict modes take
/// (OpenAI's are the lower: 10 levels, and we keep the property count well
/// under its 5000).
pub const MAX_SCHEMA_DEPTH: usize = 10;
pub const MAX_SCHEMA_PROPERTIES: usize = 1000;

impl StateField {
    /// The field's type with what is nested in it, as one [`ItemType`].
    pub fn shape(&self) -> ItemType {
        ItemType {
            ty: self.ty,
            items: self.items.clone().map(Box::new),
            properties: self.properties.clone(),
            description: self.description.clone(),
        }
    }

    /// The JSON Schema a value of the field is checked against, when the
    /// field declares `properties` at any depth (otherwise its type check
    /// is all there is).
    pub fn value_schema(&self) -> Option<Value> {
        let shape = self.shape();
        shape.has_properties().then(|| shape.json_schema())
    }
}

impl ItemType {
    /// Whether an object's properties are declared here or below.
    pub fn has_properties(&self) -> bool {
        self.properties.is_some() || self.items.as_ref().is_some_and(|it| it.has_properties())
    }

    /// The JSON Schema of the shape, in the form both providers' strict
    /// modes accept: every object lists all its properties as required and
    /// allows no others. An untyped array or object stays open (it is only
    /// sent to a model when [`ItemType::strict_problem`] found none).
    pub fn json_schema(&self) -> Value {
        let mut out = Map::new();
        let ty = match self.ty {
            // A list of `{role, content}` objects.
            FieldType::Messages => "array",
            other => other.as_str(),
        };
        out.insert("type".into(), json!(ty));
        if let Some(d) = &self.description {
            out.insert("description".into(), json!(d));
        }
        if let Some(items) = &self.items {
            out.insert("items".into(), items.json_schema());
        }
        if let Some(props) = &self.properties {
            let schemas: Map<String, Value> = props
                .iter()
                .map(|(name, p)| (name.clone(), p.json_schema()))
                .collect();
            out.insert("properties".into(), Value::Object(schemas));
            out.insert("required".into(), json!(props.keys().collect::<Vec<_>>()));
            out.insert("additionalProperties".into(), json!(false));
        }
        Value::Object(out)
    }

    /// The first part of the shape a provider's strict structured output
    /// cannot express, as (pointer below the field, what it is, how to fix
    /// it): an open object, an untyped array, messages, too deep or too
    /// many properties.
    pub fn strict_problem(&self) -> Option<(String, String, String)> {
        let mut count = 0;
        self.strict_walk("", 1, &mut count)
    }

    fn strict_walk(
        &self,
        at: &str,
        depth: usize,
        count: &mut usize,
    ) -> Option<(String, String, String)> {
        let found = |what: String, fix: &str| Some((at.to_string(), what, fix.to_string()));
        if depth > MAX_SCHEMA_DEPTH {
            return found(
                format!("nests deeper than {MAX_SCHEMA_DEPTH} levels"),
                "flatten the type",
            );
        }
        match self.ty {
            FieldType::Messages => found(
                "is a `messages` value".into(),
                "declare an `array` of objects with `role` and `content` properties instead",
            ),
            FieldType::Array => match &self.items {
                Some(items) => items.strict_walk(&format!("{at}/items"), depth + 1, count),
                None => found(
                    "is an `array` without `items`".into(),
                    "declare the type of its items",
                ),
            },
            FieldType::Object => match &self.properties {
                Some(props) if !props.is_empty() => {
                    *count += props.len();
                    if *count > MAX_SCHEMA_PROPERTIES {
                        return Some((
                            format!("{at}/properties"),
                            format!("makes more than {MAX_SCHEMA_PROPERTIES} properties in all"),
                            "ask for a smaller object".into(),
                        ));
                    }
                    props.iter().find_map(|(name, p)| {
                        p.strict_walk(
                            &format!("{at}/properties/{}", crate::diag::pointer_token(name)),
                            depth + 1,
                            count,
                        )
                    })
                }
                _ => found(
                    "is an `object` without `properties`".into(),
                    "declare its properties: a strict schema names every key",
                ),
            },
            _ => None,
        }
    }
}
