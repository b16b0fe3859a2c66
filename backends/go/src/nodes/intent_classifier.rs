//! `intent_classifier` nodes: one model call that names an intent
//! (intent.go); a reply that names none is the fallback.

use svc_backend_sdk::ir::{Document, IntentNode, Node};
use svc_backend_sdk::subgraphs::GraphScope;
use svc_backend_sdk::writer::CodeWriter;

use super::llm::{model_literal, strings};
use super::{func_name, render, signature};
use crate::golang::{quote, rt};

pub fn write(doc: &Document, scope: &GraphScope, n: &Node, c: &IntentNode, body: &mut CodeWriter) {
    let name = scope.name(&n.id);
    let model_var = format!("model_{name}");
    let intents_var = format!("intents_{name}");
    body.line(format!(
        "// {model_var} is where {} sends its question.",
        quote(&name)
    ));
    let model = model_literal(body, doc, c.model.as_ref());
    body.line(format!("var {model_var} = {model}"));
    body.blank();
    body.line(format!(
        "// {intents_var} are the intents {} tells apart.",
        quote(&name)
    ));
    let intent = rt(body, "Intent");
    body.block(format!("var {intents_var} = []{intent}{{"), "}", |w| {
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
        let (classify, input) = (rt(w, "ClassifyIntent"), render(w, &c.input));
        w.line(format!(
            "intent, err := {classify}(ctx, {}, {model_var}, {intents_var}, {input}, {})",
            quote(&name),
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
