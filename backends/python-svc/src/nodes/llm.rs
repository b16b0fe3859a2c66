//! An LLM node: one chat call, or with bound tools the worker's
//! tool-calling loop; empty prompt parts are not sent.

use svc_backend_sdk::ir::LlmNode;
use svc_backend_sdk::llm::LlmOutput;
use svc_backend_sdk::writer::CodeWriter;

use super::{call_line, graph_node, model_constant, render, Site, WITH_DEADLINE};
use crate::py::{
    literal, module_file, quote, suite, top_level_gap, write_expr, Expr, LINE, RUNTIME,
};

pub(super) fn module(site: &Site, llm: &LlmNode) -> String {
    let mut w = CodeWriter::python();
    model_constant(&mut w, site.doc, llm.model.as_ref());
    if !llm.bound_tool_ids.is_empty() {
        // The registered names of the tools, as agents call them.
        let tools = Expr::Tuple(
            llm.bound_tool_ids
                .iter()
                .map(|t| Expr::atom(quote(&site.scope.name(t))))
                .collect(),
        );
        write_expr(&mut w, 0, "TOOLS = ", &tools, "");
        top_level_gap(&mut w);
    }

    let system = match llm.prompt.system.as_deref() {
        Some(s) => render(&mut w, s, LINE - 13),
        None => Expr::atom("\"\""),
    };
    let user = render(&mut w, &llm.prompt.user, LINE - 11);
    let value = match svc_backend_sdk::llm::output(site.doc, llm) {
        LlmOutput::ReplaceMessages => format!(
            "{}({}(reply))",
            w.name(RUNTIME, "Replace"),
            w.name(RUNTIME, "assistant_message")
        ),
        LlmOutput::AppendMessage => format!("{}(reply)", w.name(RUNTIME, "assistant_message")),
        LlmOutput::TextList => format!(
            "{}({}(reply))",
            w.name(RUNTIME, "text_items"),
            w.name(RUNTIME, "as_list")
        ),
        LlmOutput::List => format!("{}(reply)", w.name(RUNTIME, "as_list")),
        LlmOutput::Scalar | LlmOutput::Structured => "reply".to_string(),
    };
    let schema = svc_backend_sdk::llm::output_schema(site.doc, llm);
    if let Some(schema) = &schema {
        w.line("# The output field's shape: the model is asked for it and its reply checked against it.");
        write_expr(&mut w, 0, "SCHEMA = ", &literal(schema), "");
        top_level_gap(&mut w);
    }
    let decorator = graph_node(&mut w, &site.name);
    w.line(decorator);
    suite(&mut w, WITH_DEADLINE, |w| {
        write_expr(w, 1, "system = ", &system, "");
        write_expr(w, 1, "user = ", &user, "");
        if schema.is_some() {
            let chat_json = w.name(RUNTIME, "chat_json");
            call_line(
                w,
                1,
                &format!("reply = {chat_json}("),
                &format!(
                    "{}, MODEL, system, user, SCHEMA, deadline=deadline",
                    quote(&site.name)
                ),
                ")",
            );
        } else if llm.bound_tool_ids.is_empty() {
            let chat = w.name(RUNTIME, "chat");
            call_line(
                w,
                1,
                &format!("reply = {chat}("),
                &format!(
                    "{}, MODEL, system, user, deadline=deadline",
                    quote(&site.name)
                ),
                ")",
            );
        } else {
            // The worker's tool-calling loop, bounded by its max_turns.
            let worker = w.name("svc.agents", "Worker");
            let run = w.name("svc.agents", "run_worker");
            write_expr(
                w,
                1,
                "agent = ",
                &Expr::call(
                    worker,
                    vec![
                        Expr::atom(quote(&site.name)),
                        Expr::atom("system"),
                        Expr::kw("tools", Expr::atom("TOOLS")),
                        Expr::kw("model", Expr::atom("MODEL")),
                    ],
                ),
                "",
            );
            w.line(format!("reply = {run}(agent, user, deadline=deadline)"));
        }
        w.line(format!("return {{{}: {value}}}", quote(&llm.output_key)));
    });
    module_file(
        &format!(
            "The LLM node `{}`: empty prompt parts are not sent.",
            site.name
        ),
        w,
    )
}
