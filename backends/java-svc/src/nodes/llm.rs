//! An LLM node: one chat call through the runtime's `LlmClient`, its reply
//! written as the output field's type asks.

use svc_backend_sdk::ir::{Document, LlmNode};
use svc_backend_sdk::llm::LlmOutput;
use svc_backend_sdk::writer::CodeWriter;

use super::{node_class, render, run_method};
use crate::java::{quote, runtime};

pub fn class(doc: &Document, pkg: &str, class: &str, id: &str, llm: &LlmNode) -> String {
    let model = llm.model.as_ref();
    let name = quote(model.map(|m| m.name.as_str()).unwrap_or_default());
    let temperature = model
        .and_then(|m| m.temperature)
        .map(|t| format!("{t:?}"))
        .unwrap_or_else(|| "null".into());
    let max_tokens = model
        .and_then(|m| m.max_tokens)
        .map(|t| t.to_string())
        .unwrap_or_else(|| "null".into());
    let mut w = CodeWriter::java();
    let client = runtime(&mut w, pkg, "LlmClient");
    let value = match svc_backend_sdk::llm::output(doc, llm) {
        LlmOutput::ReplaceMessages => format!(
            "new {}.Replace({}.assistantMessage(reply))",
            runtime(&mut w, pkg, "StateSchema"),
            runtime(&mut w, pkg, "Text")
        ),
        LlmOutput::AppendMessage => {
            format!("{}.assistantMessage(reply)", runtime(&mut w, pkg, "Text"))
        }
        LlmOutput::TextList => format!("{client}.textItems({client}.asList(reply))"),
        LlmOutput::List => format!("{client}.asList(reply)"),
        LlmOutput::Scalar => "reply".to_string(),
    };
    let system = match llm.prompt.system.as_deref() {
        Some(s) => render(&mut w, pkg, s),
        None => "\"\"".into(),
    };
    let user = render(&mut w, pkg, &llm.prompt.user);
    let fields = vec![
        format!("private static final {client}.Model MODEL = new {client}.Model({name}, {temperature}, {max_tokens});"),
        format!("private final {client} llm;"),
    ];
    node_class(
        w,
        pkg,
        class,
        &format!(
            "The LLM node {}: empty prompt parts are not sent.",
            quote(id)
        ),
        &fields,
        |w| {
            w.block(format!("public {class}({client} llm) {{"), "}", |w| {
                w.line("this.llm = llm;");
            });
            w.blank();
            run_method(w, true, |w| {
                w.line(format!(
                    "String reply = llm.chat({}, MODEL, {system}, {user});",
                    quote(id)
                ));
                w.line(format!("return {value};"));
            });
        },
    )
}
