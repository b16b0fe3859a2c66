//! `hitl`: pauses the run for a reviewer, whose value resumes it.

use std::collections::BTreeMap;

use serde_json::Value;

use super::{Here, KindRules};
use crate::diag::Diagnostic;
use crate::model::CheckpointerKind;
use crate::validate::Validator;

crate::kind_fields! {
    /// Pauses the run for a reviewer (needs a checkpointer).
    pub struct HitlNode {
        /// What the reviewer sees; string values are templates.
        #[schemars(default)]
        payload: BTreeMap<String, Value> = or_empty("payload"),
        /// The field that receives the reviewer's value.
        output_key: String = required("outputKey"),
    }
}

impl KindRules for HitlNode {
    fn output_key(&self) -> Option<&str> {
        Some(&self.output_key)
    }

    fn validate<'a>(&'a self, v: &mut Validator<'a>, here: &Here<'a>) {
        let (at, id) = (here.at.as_str(), here.id);
        for (k, value) in &self.payload {
            if let Value::String(s) = value {
                v.check_template(s, format!("{at}/payload/{k}"), id);
            }
        }
        if v.doc().logical.settings.checkpointer.kind == CheckpointerKind::None {
            v.err(
                Diagnostic::error(
                    &HITL_CHECKPOINTER,
                    format!(
                        "hitl node `{id}` pauses the run, which needs a checkpointer to resume it"
                    ),
                )
                .at(at)
                .node(id)
                .hint("set \"settings\": { \"checkpointer\": { \"type\": \"memory\" } }"),
            );
        }
    }
}

crate::diagnostic_codes! {
    /// A `hitl` node is used without a checkpointer to resume the run.
    ///
    /// A `hitl` node pauses the run until a reviewer answers; the paused run is kept by the checkpointer so that a resume can continue it. With `settings.checkpointer.type` `none` (the default) there is nothing to resume from, so the document is refused, naming the node.
    ///
    /// Set a checkpointer, or remove the node.
    ///
    /// # Example
    ///
    /// `fixtures/invalid/hitl_without_checkpointer.graph.json`:
    ///
    /// ```json
    /// { "id": "review", "kind": "hitl", "payload": { "q": "{{question}}" }, "outputKey": "answer" }
    /// ```
    ///
    /// # Fix
    ///
    /// ```json
    /// "settings": { "checkpointer": { "type": "memory" } }
    /// ```
    pub HITL_CHECKPOINTER = "hitl-checkpointer", group "nodes";
}
