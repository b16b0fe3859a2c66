//! `llm` nodes: one chat call of an OpenAI-compatible model, or with
//! `boundToolIds` the tool-calling loop of the runtime (agents.go).

use svc_backend_sdk::ir::{Document, LlmNode, ModelRef, Node};
use svc_backend_sdk::llm::LlmOutput;
use svc_backend_sdk::subgraphs::GraphScope;
use svc_backend_sdk::writer::CodeWriter;

use super::{func_name, render, signature};
use crate::golang::{literal, quote, rt};

/// The tool-calling loop's turns for an `llm` node (python-svc's worker
/// default; the IR gives such a node no `maxTurns`).
const BOUND_TOOL_TURNS: u32 = 8;

/// A `Model{...}` literal: the model's settings, and where the provider's
/// URL and key come from (`settings.model`'s variables).
pub fn model_literal(w: &mut CodeWriter, doc: &Document, model: Option<&ModelRef>) -> String {
    let settings = doc.logical.settings.model.as_ref();
    let mut parts = vec![format!(
        "Name: {}",
        quote(model.map(|m| m.name.as_str()).unwrap_or_default())
    )];
    if let Some(t) = model.and_then(|m| m.temperature) {
        parts.push(format!(
            "Temperature: {}({})",
            rt(w, "Ptr"),
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
    format!("{}{{{}}}", rt(w, "Model"), parts.join(", "))
}

/// A Go `[]string{...}` literal; `nil` when empty.
pub fn strings(items: &[String]) -> String {
    if items.is_empty() {
        "nil".into()
    } else {
        format!(
            "[]string{{{}}}",
            items
                .iter()
                .map(|s| quote(s))
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}

pub fn write(doc: &Document, scope: &GraphScope, n: &Node, llm: &LlmNode, body: &mut CodeWriter) {
    let name = scope.name(&n.id);
    let model_var = format!("model_{name}");
    body.line(format!(
        "// {model_var} is where {} sends its prompt.",
        quote(&name)
    ));
    let model = model_literal(body, doc, llm.model.as_ref());
    body.line(format!("var {model_var} = {model}"));
    body.blank();

    let value = match svc_backend_sdk::llm::output(doc, llm) {
        LlmOutput::ReplaceMessages => format!(
            "{}{{Value: {}(reply)}}",
            rt(body, "Replace"),
            rt(body, "AssistantMessage")
        ),
        LlmOutput::AppendMessage => format!("{}(reply)", rt(body, "AssistantMessage")),
        LlmOutput::TextList => {
            format!("{}({}(reply))", rt(body, "TextItems"), rt(body, "AsList"))
        }
        LlmOutput::List => format!("{}(reply)", rt(body, "AsList")),
        LlmOutput::Scalar => "reply".to_string(),
    };
    let system = match llm.prompt.system.as_deref() {
        Some(system) => render(body, system),
        None => "\"\"".into(),
    };
    let call = if llm.bound_tool_ids.is_empty() {
        body.line(format!(
            "// {} asks the model; empty prompt parts are not sent.",
            func_name(&name)
        ));
        format!(
            "{}(ctx, {}, {model_var}, {system}, {})",
            rt(body, "Chat"),
            quote(&name),
            render(body, &llm.prompt.user)
        )
    } else {
        body.line(format!(
            "// {} asks the model, which may call its tools {} before it answers.",
            func_name(&name),
            llm.bound_tool_ids
                .iter()
                .map(|t| quote(t))
                .collect::<Vec<_>>()
                .join(", ")
        ));
        let tools: Vec<String> = llm.bound_tool_ids.iter().map(|t| scope.name(t)).collect();
        format!(
            "{}(ctx, {}, {system}, {}, {model_var}, {BOUND_TOOL_TURNS}, {})",
            rt(body, "ToolLoop"),
            quote(&name),
            strings(&tools),
            render(body, &llm.prompt.user)
        )
    };
    let open = signature(body, &func_name(&name));
    body.block(open, "}", |w| {
        w.line(format!("reply, err := {call}"));
        w.block("if err != nil {", "}", |w| {
            w.line("return nil, err");
        });
        w.line(format!(
            "return State{{{}: {value}}}, nil",
            quote(&llm.output_key)
        ));
    });
}
