//! `intent_classifier` nodes: one model call that names an intent
//! (intent.go); a reply that names none is the fallback.

use svc_backend_sdk::ir::{Document, IntentNode, Node};
use svc_backend_sdk::subgraphs::GraphScope;
use svc_backend_sdk::writer::CodeWriter;

use super::llm::{model_literal, strings};
use super::{func_name, render, signature};
use crate::golang::quote;

pub fn write(doc: &Document, scope: &GraphScope, n: &Node, c: &IntentNode, body: &mut CodeWriter) {
    let name = scope.name(&n.id);
    let model_var = format!("model_{name}");
    let intents_var = format!("intents_{name}");
    body.line(format!(
        "// {model_var} is where {} sends its question.",
        quote(&name)
    ));
    body.line(format!(
        "var {model_var} = {}",
        model_literal(doc, c.model.as_ref())
    ));
    body.blank();
    body.line(format!(
        "// {intents_var} are the intents {} tells apart.",
        quote(&name)
    ));
    body.block(format!("var {intents_var} = []Intent{{"), "}", |w| {
        for i in &c.intents {
            let mut parts = vec![format!("Name: {}", quote(&i.name))];
            if let Some(d) = &i.description {
                parts.push(format!("Description: {}", quote(d)));
            }
            if !i.examples.is_empty() {
                parts.push(format!("Examples: {}", strings(&i.examples)));
            }
            w.line(format!("{{{}}},", parts.join(", ")));
        }
    });
    body.blank();
    body.line(format!(
        "// {} asks the model which intent the input has and writes it to {}.",
        func_name(&name),
        quote(&c.output_key)
    ));
    let open = signature(body, &func_name(&name));
    body.block(open, "}", |w| {
        w.line(format!(
            "intent, err := ClassifyIntent(ctx, {}, {model_var}, {intents_var}, {}, {})",
            quote(&name),
            render(&c.input),
            quote(&c.fallback)
        ));
        w.block("if err != nil {", "}", |w| {
            w.line("return nil, err");
        });
        w.line(format!(
            "return State{{{}: intent}}, nil",
            quote(&c.output_key)
        ));
    });
}
