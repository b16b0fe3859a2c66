//! `agent` nodes: run an agent of `logical.agents` (agent_registry.go) on
//! the node's input; only the agent's answer reaches the state.

use svc_backend_sdk::ir::{AgentNode, Document, Node, TextWrite};
use svc_backend_sdk::subgraphs::GraphScope;
use svc_backend_sdk::writer::CodeWriter;

use super::llm::strings;
use super::{func_name, render, signature};
use crate::golang::{quote, rt};

pub fn write(doc: &Document, scope: &GraphScope, n: &Node, a: &AgentNode, body: &mut CodeWriter) {
    let name = scope.name(&n.id);
    // One assistant message for a `messages` field, the text otherwise.
    let message =
        doc.state_field(&a.output_key).and_then(|f| f.text_write()) == Some(TextWrite::Message);
    let value = if message {
        format!("{}(reply)", rt(body, "AssistantMessage"))
    } else {
        "reply".to_string()
    };
    body.line(format!(
        "// {} runs the agent {}; only its answer reaches the state.",
        func_name(&name),
        quote(&a.agent)
    ));
    let open = signature(body, &func_name(&name));
    body.block(open, "}", |w| {
        let (run, input) = (rt(w, "RunAgent"), render(w, &a.input));
        w.line(format!(
            "reply, err := {run}(ctx, {}, {}, {input}, {})",
            quote(&name),
            quote(&scope.name(&a.agent)),
            strings(&a.caller_roles)
        ));
        w.block("if err != nil {", "}", |w| {
            w.line("return nil, err");
        });
        w.line(format!(
            "return State{{{}: {value}}}, nil",
            quote(&a.output_key)
        ));
    });
}
