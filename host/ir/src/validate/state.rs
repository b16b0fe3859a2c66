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
                        "invalid-id",
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
                        "duplicate-id",
                        format!("state field `{}` is declared twice", f.name),
                    )
                    .at(format!("{ptr}/name")),
                );
            }
            if f.reducer == Reducer::Append && !f.ty.is_list() {
                self.err(
                    Diagnostic::error(
                        "reducer-type",
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
            if f.items.is_some() && f.ty != FieldType::Array {
                self.err(
                    Diagnostic::error(
                        "items-type",
                        format!(
                            "`items` only applies to `array` fields; `{}` is `{}`",
                            f.name,
                            f.ty.as_str()
                        ),
                    )
                    .at(format!("{ptr}/items")),
                );
            }
            if let Some(def) = &f.default {
                if !value_matches(f.ty, f.items.as_ref(), def) {
                    self.err(
                        Diagnostic::error(
                            "default-type",
                            format!(
                                "the default of `{}` does not match its type `{}`",
                                f.name,
                                describe_type(f.ty, f.items.as_ref())
                            ),
                        )
                        .at(format!("{ptr}/default")),
                    );
                }
            }
        }
    }
}
