//! The state schema: field names, types, reducers, defaults.

use std::collections::HashSet;

use crate::diag::Diagnostic;
use crate::model::*;

use super::ids::is_identifier;
use super::values::{describe_type, value_matches};
use super::Validator;

impl<'a> Validator<'a> {
    pub(super) fn state(&mut self) {
        let mut seen = HashSet::new();
        for (i, f) in self.doc.logical.state.iter().enumerate() {
            let ptr = format!("/logical/state/{i}");
            if !is_identifier(&f.name) {
                self.err(
                    Diagnostic::error(
                        &crate::codes::INVALID_ID,
                        format!(
                            "state field name `{}` must match {FIELD_NAME_PATTERN}",
                            f.name
                        ),
                    )
                    .at(format!("{ptr}/name"))
                    .hint("state fields become identifiers in every target language"),
                );
            }
            if !seen.insert(f.name.as_str()) {
                self.err(
                    Diagnostic::error(
                        &crate::codes::DUPLICATE_ID,
                        format!("state field `{}` is declared twice", f.name),
                    )
                    .at(format!("{ptr}/name")),
                );
            }
            if f.reducer == Reducer::Append && !f.ty.is_list() {
                self.err(
                    Diagnostic::error(
                        &REDUCER_TYPE,
                        format!(
                            "state field `{}` of type `{}` cannot use the `append` reducer",
                            f.name,
                            f.ty.as_str()
                        ),
                    )
                    .at(format!("{ptr}/reducer"))
                    .hint("`append` works on `array` and `messages` fields; use `replace` or change the type"),
                );
            }
            self.shape(&f.shape(), &f.name, &ptr);
            // Every target fills defaults before it checks required fields,
            // so `required` would never refuse a request.
            if f.required && f.default.as_ref().is_some_and(|d| !d.is_null()) {
                self.err(
                    Diagnostic::error(
                        &crate::codes::INVALID_VALUE,
                        format!(
                            "state field `{}` is required and has a default, which a request that leaves it out would get",
                            f.name
                        ),
                    )
                    .at(format!("{ptr}/default"))
                    .hint("remove `default` (the request must give the field), or remove `required`"),
                );
            }
            if let Some(def) = &f.default {
                if !value_matches(f.ty, f.items.as_ref(), def) {
                    self.err(
                        Diagnostic::error(
                            &DEFAULT_TYPE,
                            format!(
                                "the default of `{}` does not match its type `{}`",
                                f.name,
                                describe_type(f.ty, f.items.as_ref())
                            ),
                        )
                        .at(format!("{ptr}/default")),
                    );
                } else if let Some((at, problem)) = f
                    .value_schema()
                    .and_then(|schema| super::values::schema_problem(&schema, def))
                {
                    self.err(
                        Diagnostic::error(
                            &DEFAULT_TYPE,
                            format!(
                                "the default of `{}` does not fit its properties at \"{at}\": {problem}",
                                f.name
                            ),
                        )
                        .at(format!("{ptr}/default{at}")),
                    );
                }
            }
        }
    }

    /// `items` only on arrays, `properties` only on objects, property names
    /// that every target can use, at every depth of a field's type.
    fn shape(&mut self, t: &ItemType, field: &str, ptr: &str) {
        if t.items.is_some() && t.ty != FieldType::Array {
            self.err(
                Diagnostic::error(
                    &ITEMS_TYPE,
                    format!(
                        "`items` only applies to `array` types; `{field}` is `{}` here",
                        t.ty.as_str()
                    ),
                )
                .at(format!("{ptr}/items")),
            );
        }
        if t.properties.is_some() && t.ty != FieldType::Object {
            self.err(
                Diagnostic::error(
                    &PROPERTIES_TYPE,
                    format!(
                        "`properties` only applies to `object` types; `{field}` is `{}` here",
                        t.ty.as_str()
                    ),
                )
                .at(format!("{ptr}/properties")),
            );
        }
        if let Some(items) = &t.items {
            self.shape(items, field, &format!("{ptr}/items"));
        }
        for (name, p) in t.properties.iter().flatten() {
            let at = format!("{ptr}/properties/{}", crate::diag::pointer_token(name));
            if !is_identifier(name) {
                self.err(
                    Diagnostic::error(
                        &crate::codes::INVALID_ID,
                        format!(
                            "property name `{name}` of `{field}` must match {FIELD_NAME_PATTERN}"
                        ),
                    )
                    .at(at.clone())
                    .hint(
                        "properties become keys that every target and model provider must accept",
                    ),
                );
            }
            self.shape(p, field, &at);
        }
    }
}

crate::diagnostic_codes! {
    /// A state field's `default` does not match the field's type.
    ///
    /// A default is the value a field has before any node writes it, so it must be a value of the field's type (and of its `items` type for arrays). Generated services would otherwise start from a state their own validation refuses.
    ///
    /// Change the default, or the field's type.
    ///
    /// # Example
    ///
    /// `fixtures/invalid/default_type_mismatch.graph.json`:
    ///
    /// ```json
    /// { "name": "count", "type": "integer", "default": "zero" }
    /// ```
    ///
    /// # Fix
    ///
    /// ```json
    /// { "name": "count", "type": "integer", "default": 0 }
    /// ```
    pub DEFAULT_TYPE = "default-type", group "state";

    /// `items` is given for a state field that is not an array.
    ///
    /// `items` declares the type of an `array` field's elements. On any other type it means nothing and usually shows that the field was meant to be an array.
    ///
    /// Remove `items`, or make the field an `array`.
    ///
    /// # Example
    ///
    /// ```json
    /// { "name": "tags", "type": "string", "items": { "type": "string" } }
    /// ```
    ///
    /// # Fix
    ///
    /// ```json
    /// { "name": "tags", "type": "array", "items": { "type": "string" } }
    /// ```
    pub ITEMS_TYPE = "items-type", group "state";

    /// The append reducer is used on a field that is not an array or messages.
    ///
    /// `append` adds each written value to a list, so it only applies to `array` and `messages` fields. On a scalar there is nothing to append to.
    ///
    /// Use `replace` (the default), or make the field an `array`.
    ///
    /// # Example
    ///
    /// `fixtures/invalid/reducer_on_scalar.graph.json`:
    ///
    /// ```json
    /// { "name": "answer", "type": "string", "reducer": "append" }
    /// ```
    ///
    /// # Fix
    ///
    /// ```json
    /// { "name": "answer", "type": "array", "items": { "type": "string" }, "reducer": "append" }
    /// ```
    pub REDUCER_TYPE = "reducer-type", group "state";

    /// `properties` is given for a type that is not an object.
    ///
    /// `properties` declares the keys of an `object` value (a state field, an array's items or another property). On any other type it means nothing.
    ///
    /// Remove `properties`, or make the type an `object`.
    ///
    /// # Example
    ///
    /// `fixtures/invalid/properties_type.graph.json`:
    ///
    /// ```json
    /// { "name": "invoice", "type": "string", "properties": { "total": { "type": "number" } } }
    /// ```
    ///
    /// # Fix
    ///
    /// ```json
    /// { "name": "invoice", "type": "object", "properties": { "total": { "type": "number" } } }
    /// ```
    pub PROPERTIES_TYPE = "properties-type", group "state";
}
