//! A map node: its child graph (generated in the child's package, as a
//! subgraph node's, see `scope.rs`) runs once per item of `over`, each on a
//! fresh state, at most `maxConcurrency` at once (svc.runtime's
//! `map_items`); the outputs reach `outputKey` in item order.

use svc_backend_sdk::ir::MapNode;
use svc_backend_sdk::writer::CodeWriter;
use svc_backend_sdk::Diagnostic;

use super::{graph_node, Site, WITH_DEADLINE};
use crate::py::{module_file, quote, suite, top_level_gap, write_expr, Expr};

pub(super) fn module(site: &Site, m: &MapNode) -> Result<String, Diagnostic> {
    svc_backend_sdk::subgraphs::embedded_child("map", &site.node.id, &m.graph, &site.at(""))?;
    let child = site.scope.child(&site.node.id, site.index);
    let mut w = CodeWriter::python();
    let graph = w.name(&format!("{}.graph", child.package), "Graph");
    w.line(format!("CHILD = {graph}()"));
    top_level_gap(&mut w);
    let mut values: Vec<(String, Expr)> = m
        .input
        .iter()
        .map(|(c, p)| (quote(c), Expr::atom(format!("state.get({})", quote(p)))))
        .collect();
    values.push((quote(&m.item_field), Expr::atom("item")));
    let decorator = graph_node(&mut w, &site.name);
    w.line(decorator);
    let (any, map_items) = (w.name("typing", "Any"), w.name("svc.runtime", "map_items"));
    suite(&mut w, WITH_DEADLINE, |w| {
        // Each item gets the run's time left when it starts.
        suite(
            w,
            format!("def run_item(index: int, item: {any}, left: float | None) -> {any}:"),
            |w| {
                write_expr(w, 2, "values = ", &Expr::Dict(values.clone()), "");
                w.line(format!(
                    "return CHILD.run_child({}, values, left).get({})",
                    quote(&site.name),
                    quote(&m.output)
                ));
            },
        );
        w.blank();
        w.line(format!(
            "outputs = {map_items}({}, state.get({}), {}, {}, run_item, deadline)",
            quote(&site.name),
            quote(&m.over),
            m.max_items,
            m.max_concurrency
        ));
        w.line(format!("return {{{}: outputs}}", quote(&m.output_key)));
    });
    Ok(module_file(
        &format!(
            "The map node `{}`: runs its child graph ({}) once per item of `{}`.",
            site.name, child.package, m.over
        ),
        w,
    ))
}
