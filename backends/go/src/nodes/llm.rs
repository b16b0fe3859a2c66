//! `llm` nodes: one chat call of an OpenAI-compatible model.

use svc_backend_sdk::ir::{Document, LlmNode, Node};
use svc_backend_sdk::llm::LlmOutput;
use svc_backend_sdk::writer::CodeWriter;

use super::{func_name, render, signature};
use crate::golang::{literal, quote};

pub fn write(doc: &Document, n: &Node, llm: &LlmNode, body: &mut CodeWriter) {
    let settings = doc.logical.settings.model.as_ref();
    let model = llm.model.as_ref();
    let mut parts = vec![format!(
        "Name: {}",
        quote(model.map(|m| m.name.as_str()).unwrap_or_default())
    )];
    if let Some(t) = model.and_then(|m| m.temperature) {
        parts.push(format!(
            "Temperature: ptr({})",
            literal(&serde_json::json!(t))
        ));
    }
    if let Some(mt) = model.and_then(|m| m.max_tokens) {
        parts.push(format!("MaxTokens: {mt}"));
    }
    parts.push(format!(
        "BaseURLEnv: {}",
        quote(
            settings
                .map(|s| s.base_url_env.as_str())
                .unwrap_or("OPENAI_BASE_URL")
        )
    ));
    parts.push(format!(
        "APIKeyEnv: {}",
        quote(
            settings
                .map(|s| s.api_key_env.as_str())
                .unwrap_or("OPENAI_API_KEY")
        )
    ));
    let model_var = format!("model_{}", n.id);
    body.line(format!(
        "// {model_var} is where {} sends its prompt.",
        quote(&n.id)
    ));
    body.line(format!("var {model_var} = Model{{{}}}", parts.join(", ")));
    body.blank();

    let value = match svc_backend_sdk::llm::output(doc, llm) {
        LlmOutput::ReplaceMessages => "Replace{Value: assistantMessage(reply)}",
        LlmOutput::AppendMessage => "assistantMessage(reply)",
        LlmOutput::TextList => "textItems(asList(reply))",
        LlmOutput::List => "asList(reply)",
        LlmOutput::Scalar => "reply",
    };
    let system = llm
        .prompt
        .system
        .as_deref()
        .map(render)
        .unwrap_or_else(|| "\"\"".into());
    body.line(format!(
        "// {} asks the model; empty prompt parts are not sent.",
        func_name(&n.id)
    ));
    let open = signature(body, &func_name(&n.id));
    body.block(open, "}", |w| {
        w.line(format!(
            "reply, err := chat(ctx, {}, {model_var}, {system}, {})",
            quote(&n.id),
            render(&llm.prompt.user)
        ));
        w.block("if err != nil {", "}", |w| {
            w.line("return nil, err");
        });
        w.line(format!(
            "return State{{{}: {value}}}, nil",
            quote(&llm.output_key)
        ));
    });
}
