//! `intent_classifier`: one model call that names one of the node's
//! intents for a templated input, or the fallback.

use std::collections::HashMap;

use super::llm::ModelRef;
use super::{Here, KindRules};
use crate::diag::Diagnostic;
use crate::model::Document;
use crate::requirements::Requirement;
use crate::validate::Validator;

crate::kind_fields! {
    /// One model call that names an intent.
    pub struct IntentNode {
        /// Template (`{{field}}`) of the text to classify.
        input: String = required("input"),
        intents: Vec<Intent> = required("intents"),
        /// Written when the reply names no intent.
        #[schemars(default = "default_fallback")]
        fallback: String = or("fallback", default_fallback()),
        /// Falls back to `settings.model`; normalization fills it in.
        #[serde(skip_serializing_if = "Option::is_none")]
        model: Option<ModelRef> = optional("model"),
        /// A `string` field.
        output_key: String = required("outputKey"),
    }
}

pub fn default_fallback() -> String {
    "other".into()
}

crate::kind_fields! {
    /// An intent the model may name.
    pub struct Intent as "an intent" {
        name: String = required("name"),
        #[serde(skip_serializing_if = "Option::is_none")]
        description: Option<String> = optional("description"),
        #[serde(skip_serializing_if = "Vec::is_empty")]
        #[schemars(default)]
        examples: Vec<String> = or_empty("examples"),
    }
}

impl KindRules for IntentNode {
    fn output_key(&self) -> Option<&str> {
        Some(&self.output_key)
    }

    fn asks_model(&self) -> bool {
        true
    }

    fn validate<'a>(&'a self, v: &mut Validator<'a>, here: &Here<'a>) {
        let (at, id) = (here.at.as_str(), here.id);

        v.check_template(&self.input, format!("{at}/input"), id);
        v.text_output(id, &self.output_key, at, "the intent's name", false);
        v.needs_model(self.model.is_some(), id, at, "intent_classifier node");
        if self.intents.is_empty() {
            v.err(
                Diagnostic::error(
                    &crate::codes::INVALID_VALUE,
                    format!("intent_classifier `{}` lists no intents", id),
                )
                .at(format!("{at}/intents"))
                .node(id)
                .hint("add { \"name\": \"billing\", \"description\": \"...\" }"),
            );
        }
        let mut seen: HashMap<String, usize> = HashMap::new();
        for (j, intent) in self.intents.iter().enumerate() {
            let at = format!("{at}/intents/{j}/name");
            if intent.name.trim().is_empty() {
                v.err(
                    Diagnostic::error(&crate::codes::INVALID_VALUE, "an intent has an empty name")
                        .at(at)
                        .node(id),
                );
            } else if let Some(first) = seen.insert(intent.name.trim().to_lowercase(), j) {
                v.err(
                        Diagnostic::error(
                            &DUPLICATE_INTENT,
                            format!(
                                "intent `{}` is listed twice (first at {at}/intents/{first}); replies are matched case-insensitively",
                                intent.name
                            ),
                        )
                        .at(at)
                        .node(id),
                    );
            }
        }
        if self.fallback.trim().is_empty() {
            v.err(
                Diagnostic::error(&crate::codes::INVALID_VALUE, "`fallback` is empty")
                    .at(format!("{at}/fallback"))
                    .node(id)
                    .hint("name the intent written when nothing matches, e.g. \"other\""),
            );
        }
    }

    fn requirements(&self, doc: &Document, at: &str, out: &mut Vec<Requirement>) {
        if let Some(m) = &self.model {
            m.requirements(doc, &format!("{at}/model"), out);
        }
    }
}

crate::diagnostic_codes! {
    /// An intent_classifier lists the same intent name twice.
    ///
    /// The model's reply is matched to an intent name trimmed and case-insensitively, so two intents whose names differ only in case or surrounding spaces could never be told apart. Each name must be unique.
    ///
    /// Rename or merge the duplicate intent.
    ///
    /// # Example
    ///
    /// `fixtures/invalid/intent_duplicate.graph.json`:
    ///
    /// ```json
    /// "intents": [ { "name": "billing" }, { "name": "Billing" } ]
    /// ```
    ///
    /// # Fix
    ///
    /// ```json
    /// "intents": [ { "name": "billing" }, { "name": "shipping" } ]
    /// ```
    pub DUPLICATE_INTENT = "duplicate-intent", group "nodes";
}
