//! `llm` nodes: one chat call of an OpenAI-compatible model, or with
//! `boundToolIds` the tool-calling loop of the runtime (agents.go).

use svc_backend_sdk::ir::{model_variables, CallPolicy, Document, LlmNode, ModelRef, Node};
use svc_backend_sdk::llm::LlmOutput;
use svc_backend_sdk::subgraphs::GraphScope;
use svc_backend_sdk::writer::CodeWriter;

use super::{func_name, render, signature};
use crate::golang::{literal, quote, rt};

/// The tool-calling loop's turns for an `llm` node (python-svc's worker
/// default; the IR gives such a node no `maxTurns`).
const BOUND_TOOL_TURNS: u32 = 8;

/// A `Model{...}` literal: the model's settings, where the provider's
/// URL and key come from (`settings.model`'s variables), and how it is
/// called (only what differs from the runtime's defaults).
pub fn model_literal(w: &mut CodeWriter, doc: &Document, model: Option<&ModelRef>) -> String {
    let fallbacks: Vec<String> = model
        .map(|m| m.fallback_models())
        .unwrap_or_default()
        .iter()
        .map(|f| {
            let (base_url_env, api_key_env) = f.variables(doc);
            let parts = model_fields(
                w,
                (&f.provider, &f.name),
                f.temperature,
                f.max_tokens,
                (&base_url_env, &api_key_env),
                &f.call,
            );
            format!("{{{}}}", parts.join(", "))
        })
        .collect();
    let (base_url_env, api_key_env) =
        model_variables(doc, model.map_or("openai", |m| m.provider.as_str()));
    let variables = (base_url_env.as_str(), api_key_env.as_str());
    let call = model.map(|m| m.call.clone()).unwrap_or_default();
    let mut parts = model_fields(
        w,
        model.map_or(("openai", ""), |m| (m.provider.as_str(), m.name.as_str())),
        model.and_then(|m| m.temperature),
        model.and_then(|m| m.max_tokens),
        variables,
        &call,
    );
    let model_type = rt(w, "Model");
    if !fallbacks.is_empty() {
        parts.push(format!(
            "Fallbacks: []{model_type}{{{}}}",
            fallbacks.join(", ")
        ));
    }
    format!("{model_type}{{{}}}", parts.join(", "))
}

/// The fields of a `Model{...}` literal but its fallbacks; `Provider` only
/// when it is not the default, `openai`.
fn model_fields(
    w: &mut CodeWriter,
    (provider, name): (&str, &str),
    temperature: Option<f64>,
    max_tokens: Option<u32>,
    (base_url_env, api_key_env): (&str, &str),
    call: &CallPolicy,
) -> Vec<String> {
    let mut parts = Vec::new();
    if provider != "openai" {
        parts.push(format!("Provider: {}", quote(provider)));
    }
    parts.push(format!("Name: {}", quote(name)));
    if let Some(t) = temperature {
        parts.push(format!(
            "Temperature: {}({})",
            rt(w, "Ptr"),
            literal(&serde_json::json!(t))
        ));
    }
    if let Some(mt) = max_tokens {
        parts.push(format!("MaxTokens: {mt}"));
    }
    parts.push(format!("BaseURLEnv: {}", quote(base_url_env)));
    parts.push(format!("APIKeyEnv: {}", quote(api_key_env)));
    if let Some(ms) = call.timeout_ms {
        let millisecond = w.name("time", "Millisecond");
        parts.push(format!("Timeout: {ms} * {millisecond}"));
    }
    if let Some(r) = &call.retry {
        let millisecond = w.name("time", "Millisecond");
        parts.push(format!(
            "Retry: {}{{MaxAttempts: {}, InitialDelay: {} * {millisecond}, MaxDelay: {} * {millisecond}}}",
            rt(w, "Retry"),
            r.max_attempts,
            r.initial_delay_ms,
            r.max_delay_ms
        ));
    }
    parts
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
        LlmOutput::Scalar | LlmOutput::Structured => "reply".to_string(),
    };
    let system = match llm.prompt.system.as_deref() {
        Some(system) => render(body, system),
        None => "\"\"".into(),
    };
    let schema = svc_backend_sdk::llm::output_schema(doc, llm);
    if let Some(schema) = &schema {
        body.line(format!(
            "// schema_{name} is the shape of {}: the model is asked for it and its reply checked against it.",
            quote(&llm.output_key)
        ));
        body.line(format!("var schema_{name} = {}", literal(schema)));
        body.blank();
    }
    let call = if schema.is_some() {
        body.line(format!(
            "// {} asks the model for an object of {}'s shape; empty prompt parts are not sent.",
            func_name(&name),
            quote(&llm.output_key)
        ));
        format!(
            "{}(ctx, {}, {model_var}, {system}, {}, schema_{name})",
            rt(body, "ChatJSON"),
            quote(&name),
            render(body, &llm.prompt.user)
        )
    } else if llm.bound_tool_ids.is_empty() {
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
