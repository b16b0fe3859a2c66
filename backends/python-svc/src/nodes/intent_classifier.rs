//! An intent_classifier node: one model call picks one of its intents; a
//! reply naming none gives the fallback.

use svc_backend_sdk::ir::IntentNode;
use svc_backend_sdk::writer::CodeWriter;

use super::{graph_node, model_constant, render, Site, WITH_DEADLINE};
use crate::py::{module_file, quote, suite, top_level_gap, write_expr, Expr, LINE, RUNTIME};

pub(super) fn module(site: &Site, c: &IntentNode) -> String {
    let mut w = CodeWriter::python();
    model_constant(&mut w, site.doc, c.model.as_ref());
    let intents = Expr::List(
        c.intents
            .iter()
            .map(|i| {
                let mut entries = vec![(quote("name"), Expr::atom(quote(&i.name)))];
                if let Some(d) = &i.description {
                    entries.push((quote("description"), Expr::atom(quote(d))));
                }
                if !i.examples.is_empty() {
                    entries.push((
                        quote("examples"),
                        Expr::List(i.examples.iter().map(|e| Expr::atom(quote(e))).collect()),
                    ));
                }
                Expr::Dict(entries)
            })
            .collect(),
    );
    write_expr(&mut w, 0, "INTENTS = ", &intents, "");
    top_level_gap(&mut w);
    let text = render(&mut w, &c.input, LINE - 11);
    let decorator = graph_node(&mut w, &site.name);
    w.line(decorator);
    suite(&mut w, WITH_DEADLINE, |w| {
        write_expr(w, 1, "content = ", &text, "");
        let classify = w.name(RUNTIME, "classify_intent");
        let call = Expr::call(
            classify,
            vec![
                Expr::atom(quote(&site.name)),
                Expr::atom("MODEL"),
                Expr::atom("INTENTS"),
                Expr::atom("content"),
                Expr::kw("fallback", Expr::atom(quote(&c.fallback))),
                Expr::kw("deadline", Expr::atom("deadline")),
            ],
        );
        write_expr(w, 1, "intent = ", &call, "");
        w.line(format!("return {{{}: intent}}", quote(&c.output_key)));
    });
    module_file(
        &format!(
            "The intent_classifier `{}`: one model call; a reply naming no intent gives `{}`.",
            site.name, c.fallback
        ),
        w,
    )
}
