//! An agent node: runs an agent of `logical.agents` (see `agents.rs`) on
//! its input; only the agent's answer reaches the state.

use svc_backend_sdk::ir::{AgentNode, TextWrite};
use svc_backend_sdk::writer::CodeWriter;

use super::{graph_node, render, Site, WITH_DEADLINE};
use crate::py::{module_file, quote, suite, write_expr, Expr, LINE, RUNTIME};

pub(super) fn module(site: &Site, a: &AgentNode) -> String {
    let agent = site.scope.name(&a.agent);
    let mut w = CodeWriter::python();
    let task = render(&mut w, &a.input, LINE - 11);
    let decorator = graph_node(&mut w, &site.name);
    w.line(decorator);
    suite(&mut w, WITH_DEADLINE, |w| {
        write_expr(w, 1, "task = ", &task, "");
        let run = w.name("svc", "run_agent");
        let roles = Expr::Tuple(
            a.caller_roles
                .iter()
                .map(|r| Expr::atom(quote(r)))
                .collect(),
        );
        let call = Expr::call(
            run,
            vec![
                Expr::atom("task"),
                Expr::atom(quote(&agent)),
                Expr::kw("caller_roles", roles),
                Expr::kw("deadline", Expr::atom("deadline")),
            ],
        );
        write_expr(w, 1, "reply = ", &call, "");
        // One assistant message for a `messages` field.
        let key = quote(&a.output_key);
        let message = site
            .doc
            .state_field(&a.output_key)
            .and_then(|f| f.text_write())
            == Some(TextWrite::Message);
        if message {
            let wrap = w.name(RUNTIME, "assistant_message");
            w.line(format!("return {{{key}: {wrap}(reply)}}"));
        } else {
            w.line(format!("return {{{key}: reply}}"));
        }
    });
    module_file(
        &format!(
            "The agent node `{}`: runs the agent `{agent}`; only its answer reaches the state.",
            site.name
        ),
        w,
    )
}
