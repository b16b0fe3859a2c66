//! An intent_classifier node: one model call that names an intent
//! (runtime/IntentClassifier.java); a reply that names none is the fallback.

use svc_backend_sdk::ir::{Document, IntentNode};
use svc_backend_sdk::writer::CodeWriter;

use super::llm::{list_of, model_literal};
use super::{node_class, render, run_method};
use crate::java::{quote, runtime};
use crate::scope::Scope;

pub fn class(doc: &Document, scope: &Scope, class: &str, id: &str, c: &IntentNode) -> String {
    let name = scope.name(id);
    let mut w = CodeWriter::java();
    let client = runtime(&mut w, "LlmClient");
    let classifier = runtime(&mut w, "IntentClassifier");
    let list = w.name("java.util", "List");
    let intents: Vec<String> = c
        .intents
        .iter()
        .map(|i| {
            let description = i
                .description
                .as_deref()
                .map(quote)
                .unwrap_or_else(|| "null".into());
            let examples = list_of(&mut w, &i.examples);
            format!(
                "new {classifier}.Intent({}, {description}, {examples})",
                quote(&i.name)
            )
        })
        .collect();
    let input = render(&mut w, &c.input);
    let model = model_literal(&mut w, &client, doc, c.model.as_ref());
    let mut fields = vec![format!(
        "private static final {client}.Model MODEL = {model};"
    )];
    fields.push(format!(
        "private static final {list}<{classifier}.Intent> INTENTS = {list}.of("
    ));
    let last = intents.len().saturating_sub(1);
    for (i, intent) in intents.iter().enumerate() {
        let end = if i == last { ");" } else { "," };
        fields.push(format!("        {intent}{end}"));
    }
    fields.push(format!("private final {client} llm;"));
    node_class(
        w,
        scope,
        class,
        &format!(
            "The intent_classifier node {}: asks the model which intent its input has.",
            quote(&name)
        ),
        &fields,
        |w| {
            w.block(format!("public {class}({client} llm) {{"), "}", |w| {
                w.line("this.llm = llm;");
            });
            w.blank();
            run_method(w, true, |w| {
                w.line(format!(
                    "return {classifier}.classify(llm, {}, MODEL, INTENTS, {input}, {});",
                    quote(&name),
                    quote(&c.fallback)
                ));
            });
        },
    )
}
