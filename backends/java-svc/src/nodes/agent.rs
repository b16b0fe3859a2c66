//! An agent node: runs an agent of `logical.agents` through the graph's
//! `Agents` (graph/GraphAgents.java); only the agent's answer reaches the
//! state.

use svc_backend_sdk::ir::{AgentNode, Document, TextWrite};
use svc_backend_sdk::writer::CodeWriter;

use super::llm::list_of;
use super::{node_class, render, run_method};
use crate::java::{quote, runtime};
use crate::scope::Scope;

pub fn class(doc: &Document, scope: &Scope, class: &str, id: &str, a: &AgentNode) -> String {
    let name = scope.name(id);
    let mut w = CodeWriter::java();
    let agents = runtime(&mut w, "Agents");
    let task = render(&mut w, &a.input);
    let roles = list_of(&mut w, &a.caller_roles);
    // One assistant message for a `messages` field, the text otherwise.
    let message =
        doc.state_field(&a.output_key).and_then(|f| f.text_write()) == Some(TextWrite::Message);
    let value = if message {
        format!("{}.assistantMessage(reply)", runtime(&mut w, "Text"))
    } else {
        "reply".to_string()
    };
    let fields = vec![format!("private final {agents} agents;")];
    node_class(
        w,
        scope,
        class,
        &format!(
            "The agent node {}: runs the agent {}; only its answer reaches the state.",
            quote(&name),
            quote(&scope.name(&a.agent))
        ),
        &fields,
        |w| {
            w.block(format!("public {class}({agents} agents) {{"), "}", |w| {
                w.line("this.agents = agents;");
            });
            w.blank();
            run_method(w, true, |w| {
                w.line(format!(
                    "String reply = agents.run({}, {}, {task}, {roles});",
                    quote(&name),
                    quote(&scope.name(&a.agent))
                ));
                w.line(format!("return {value};"));
            });
        },
    )
}
