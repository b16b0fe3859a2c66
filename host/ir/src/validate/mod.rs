//! The semantic rules of IR v2: ids, references, topology, types.
//! Every rule is checked and every violation reported, each with a pointer.
//! One file per rule group; `validate` runs them in order.

use std::collections::HashMap;

use crate::diag::{did_you_mean, Diagnostic};
use crate::model::*;

/// The fields a node that produces one text can write to (see
/// `StateField::text_write`).
pub(crate) const TEXT_TARGETS: &str =
    "a `string` field, a `messages` field (one assistant message) or an `append` array of strings (one more item)";

mod a2a_tokens;
pub(crate) mod agents;
pub(crate) mod document;
pub(crate) mod ids;
mod nodes;
pub(crate) mod parallel;
mod publishing;
pub(crate) mod state;
pub(crate) mod templates;

#[cfg(test)]
mod tests;
pub(crate) mod tools;
pub(crate) mod topology;
mod values;

pub use ids::is_identifier;
pub use tools::check_endpoint;
pub(crate) use values::describe_type;
pub use values::{is_message, schema_problem, value_matches};

pub(crate) fn validate(doc: &Document) -> Vec<Diagnostic> {
    let mut v = Validator {
        doc,
        diags: Vec::new(),
        fields: doc
            .logical
            .state
            .iter()
            .map(|f| (f.name.as_str(), f))
            .collect(),
    };
    v.top_level();
    v.state();
    v.nodes();
    v.agents();
    v.topology();
    v.tools();
    v.settings();
    v.publishing();
    v.a2a_tokens();
    v.bodies_and_templates();
    v.diags
}

pub(crate) struct Validator<'a> {
    doc: &'a Document,
    diags: Vec<Diagnostic>,
    fields: HashMap<&'a str, &'a StateField>,
}

impl<'a> Validator<'a> {
    pub(crate) fn err(&mut self, d: Diagnostic) {
        self.diags.push(d);
    }

    /// The document being checked.
    pub(crate) fn doc(&self) -> &'a Document {
        self.doc
    }

    /// The declared state field `name`.
    pub(crate) fn field(&self, name: &str) -> Option<&'a StateField> {
        self.fields.get(name).copied()
    }

    pub(super) fn node_ptr(i: usize) -> String {
        format!("/logical/nodes/{i}")
    }

    pub(super) fn field_names(&self) -> Vec<&'a str> {
        self.doc
            .logical
            .state
            .iter()
            .map(|f| f.name.as_str())
            .collect()
    }

    /// Reports `name` when it is not a declared state field.
    pub(crate) fn check_field_ref(
        &mut self,
        name: &str,
        ptr: String,
        node: Option<&str>,
        role: &str,
    ) -> bool {
        if self.fields.contains_key(name) {
            return true;
        }
        let names = self.field_names();
        let mut d = Diagnostic::error(
            &UNKNOWN_STATE_FIELD,
            format!("{role} `{name}` is not a state field"),
        )
        .at(ptr);
        if let Some(n) = node {
            d = d.node(n);
        }
        d = match did_you_mean(name, names.iter().copied()) {
            Some(s) => d.hint(format!("did you mean `{s}`?")),
            None if names.is_empty() => d.hint("declare it in `logical.state`"),
            None => d.hint(format!(
                "declare it in `logical.state` or use one of: {}",
                names.join(", ")
            )),
        };
        self.err(d);
        false
    }
}

crate::diagnostic_codes! {
    /// A node writes its output to a state field that cannot hold it.
    ///
    /// Nodes that produce one text (`response_template`, `llm` with the default `outputShape` `scalar`) write it to a `string` field, a `messages` field (as one assistant message) or an `append` array of strings (as one more item). An `llm` node with `outputShape` `list` writes an `array` of strings. Any other target, such as an `integer` field or an `append` array of integers, is refused, naming the field's type.
    ///
    /// Point `outputKey` at a field of a fitting type, or change the field.
    ///
    /// # Example
    ///
    /// `fixtures/invalid/text_into_integer_append.graph.json`:
    ///
    /// ```json
    /// { "name": "scores", "type": "array", "items": { "type": "integer" }, "reducer": "append" }
    /// ...
    /// { "id": "note", "kind": "response_template", "template": "seen {{question}}", "outputKey": "scores" }
    /// ```
    ///
    /// # Fix
    ///
    /// ```json
    /// { "name": "notes", "type": "array", "items": { "type": "string" }, "reducer": "append" }
    /// ...
    /// { "id": "note", "kind": "response_template", "template": "seen {{question}}", "outputKey": "notes" }
    /// ```
    pub OUTPUT_TYPE = "output-type", group "state";

    /// An outputKey, {{placeholder}} or condition field names no declared state field.
    ///
    /// Nodes read and write the state declared in `logical.state`: `outputKey`, every `{{name}}` in templates, prompts and tool inputs, and a condition's `field` must name one of its fields. The hint suggests the nearest name.
    ///
    /// Fix the name, or declare the field in `logical.state`.
    ///
    /// # Example
    ///
    /// `fixtures/invalid/template_field_unknown.graph.json` (and `output_key_unknown.graph.json`):
    ///
    /// ```json
    /// { "id": "reply", "kind": "response_template", "template": "Re: {{questoin}}", "outputKey": "answer" }
    /// ```
    ///
    /// # Fix
    ///
    /// ```json
    /// { "id": "reply", "kind": "response_template", "template": "Re: {{question}}", "outputKey": "answer" }
    /// ```
    pub UNKNOWN_STATE_FIELD = "unknown-state-field", group "state";
}
