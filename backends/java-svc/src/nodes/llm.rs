//! An LLM node: one chat call through the runtime's `LlmClient`, or with
//! `boundToolIds` the tool-calling loop of `Agents`; its reply written as
//! the output field's type asks.

use svc_backend_sdk::ir::{model_variables, CallPolicy, Document, LlmNode, ModelRef};
use svc_backend_sdk::llm::LlmOutput;
use svc_backend_sdk::writer::CodeWriter;

use super::{node_class, render, run_method};
use crate::java::{literal, quote, runtime};
use crate::scope::Scope;

/// The tool-calling loop's turns for an `llm` node (python-svc's worker
/// default; the IR gives such a node no `maxTurns`).
const BOUND_TOOL_TURNS: u32 = 8;

/// `new LlmClient.Model(new LlmClient.Provider(baseUrlEnv, apiKeyEnv),
/// name, temperature, maxTokens)`: what a node or an agent of `doc` calls,
/// with `.withPolicy(timeout, retry, fallbacks)` when it is called otherwise
/// than by the runtime's defaults.
pub fn model_literal(
    w: &mut CodeWriter,
    client: &str,
    doc: &Document,
    model: Option<&ModelRef>,
) -> String {
    let variables = model_variables(doc, model.map_or("openai", |m| m.provider.as_str()));
    let name = model.map(|m| m.name.as_str()).unwrap_or_default();
    let base = model_new(
        client,
        model.map_or("openai", |m| m.provider.as_str()),
        &variables,
        name,
        model.and_then(|m| m.temperature),
        model.and_then(|m| m.max_tokens),
    );
    let call = model.map(|m| m.call.clone()).unwrap_or_default();
    let fallbacks: Vec<String> = model
        .map(|m| m.fallback_models())
        .unwrap_or_default()
        .iter()
        .map(|f| {
            let fallback = model_new(
                client,
                &f.provider,
                &f.variables(doc),
                &f.name,
                f.temperature,
                f.max_tokens,
            );
            with_policy(w, client, fallback, &f.call, &[])
        })
        .collect();
    with_policy(w, client, base, &call, &fallbacks)
}

/// `new LlmClient.Model(...)` of the four fields every model has; its
/// `Provider` names the API only when it is not the default, `openai`.
fn model_new(
    client: &str,
    provider: &str,
    (base_url_env, api_key_env): &(String, String),
    name: &str,
    temperature: Option<f64>,
    max_tokens: Option<u32>,
) -> String {
    let temperature = temperature
        .map(|t| format!("{t:?}"))
        .unwrap_or_else(|| "null".into());
    let max_tokens = max_tokens
        .map(|t| t.to_string())
        .unwrap_or_else(|| "null".into());
    let api = match provider {
        "anthropic" => format!("{client}.Api.ANTHROPIC, "),
        _ => String::new(),
    };
    format!(
        "new {client}.Model(new {client}.Provider({api}{}, {}), {}, {temperature}, {max_tokens})",
        quote(base_url_env),
        quote(api_key_env),
        quote(name)
    )
}

/// `model` with `.withPolicy(timeout, retry, fallbacks)` when any differs
/// from the runtime's defaults (null and an empty list keep a default).
fn with_policy(
    w: &mut CodeWriter,
    client: &str,
    model: String,
    call: &CallPolicy,
    fallbacks: &[String],
) -> String {
    if call.timeout_ms.is_none() && call.retry.is_none() && fallbacks.is_empty() {
        return model;
    }
    let duration = w.name("java.time", "Duration");
    let list = w.name("java.util", "List");
    let timeout = call
        .timeout_ms
        .map(|ms| format!("{duration}.ofMillis({ms})"))
        .unwrap_or_else(|| "null".into());
    let retry = call
        .retry
        .as_ref()
        .map(|r| {
            format!(
                "new {client}.Retry({}, {duration}.ofMillis({}), {duration}.ofMillis({}))",
                r.max_attempts, r.initial_delay_ms, r.max_delay_ms
            )
        })
        .unwrap_or_else(|| "null".into());
    let fallbacks = if fallbacks.is_empty() {
        format!("{list}.of()")
    } else {
        format!("{list}.of({})", fallbacks.join(", "))
    };
    format!("{model}.withPolicy({timeout}, {retry}, {fallbacks})")
}

/// `List.of("a", "b")`, imported.
pub fn list_of(w: &mut CodeWriter, items: &[String]) -> String {
    let list = w.name("java.util", "List");
    format!(
        "{list}.of({})",
        items
            .iter()
            .map(|s| quote(s))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

pub fn class(doc: &Document, scope: &Scope, class: &str, id: &str, llm: &LlmNode) -> String {
    let name = scope.name(id);
    let mut w = CodeWriter::java();
    let client = runtime(&mut w, "LlmClient");
    let model = model_literal(&mut w, &client, doc, llm.model.as_ref());
    let value = match svc_backend_sdk::llm::output(doc, llm) {
        LlmOutput::ReplaceMessages => format!(
            "new {}.Replace({}.assistantMessage(reply))",
            runtime(&mut w, "StateSchema"),
            runtime(&mut w, "Text")
        ),
        LlmOutput::AppendMessage => {
            format!("{}.assistantMessage(reply)", runtime(&mut w, "Text"))
        }
        LlmOutput::TextList => format!("{client}.textItems({client}.asList(reply))"),
        LlmOutput::List => format!("{client}.asList(reply)"),
        LlmOutput::Scalar | LlmOutput::Structured => "reply".to_string(),
    };
    let system = match llm.prompt.system.as_deref() {
        Some(s) => render(&mut w, s),
        None => "\"\"".into(),
    };
    let user = render(&mut w, &llm.prompt.user);
    let schema = svc_backend_sdk::llm::output_schema(doc, llm);
    // A node with tools runs the loop of the graph's Agents.
    let tools = !llm.bound_tool_ids.is_empty();
    let (caller, param) = if tools {
        (runtime(&mut w, "Agents"), "agents")
    } else {
        (client.clone(), "llm")
    };
    let call = if tools {
        let tools: Vec<String> = llm.bound_tool_ids.iter().map(|t| scope.name(t)).collect();
        let bound = list_of(&mut w, &tools);
        format!(
            "agents.toolLoop({}, {system}, {bound}, MODEL, {BOUND_TOOL_TURNS}, {user})",
            quote(&name)
        )
    } else if schema.is_some() {
        format!(
            "llm.chatJson({}, MODEL, {system}, {user}, SCHEMA)",
            quote(&name)
        )
    } else {
        format!("llm.chat({}, MODEL, {system}, {user})", quote(&name))
    };
    let mut fields = vec![format!(
        "private static final {client}.Model MODEL = {model};"
    )];
    // The output field's shape: the model is asked for it and its reply
    // checked against it.
    let reply_type = match &schema {
        Some(schema) => {
            let map = format!("{}<String, Object>", w.name("java.util", "Map"));
            fields.push(format!(
                "private static final {map} SCHEMA = {};",
                literal(&mut w, schema)
            ));
            map
        }
        None => "String".to_string(),
    };
    fields.push(format!("private final {caller} {param};"));
    node_class(
        w,
        scope,
        class,
        &format!(
            "The LLM node {}: empty prompt parts are not sent.",
            quote(&name)
        ),
        &fields,
        |w| {
            w.block(format!("public {class}({caller} {param}) {{"), "}", |w| {
                w.line(format!("this.{param} = {param};"));
            });
            w.blank();
            run_method(w, true, |w| {
                w.line(format!("{reply_type} reply = {call};"));
                w.line(format!("return {value};"));
            });
        },
    )
}
