//! A subgraph node: its child graph (generated in the child's package, see
//! `scope.rs`) runs on a fresh state built from `input`; `output` copies
//! fields back.

use svc_backend_sdk::ir::SubgraphNode;
use svc_backend_sdk::writer::CodeWriter;
use svc_backend_sdk::Diagnostic;

use super::{graph_node, Site, WITH_DEADLINE};
use crate::py::{module_file, quote, suite, top_level_gap, write_expr, Expr};

pub(super) fn module(site: &Site, s: &SubgraphNode) -> Result<String, Diagnostic> {
    svc_backend_sdk::subgraphs::embedded_child("subgraph", &site.node.id, &s.graph, &site.at(""))?;
    let child = site.scope.child(&site.node.id, site.index);
    let mut w = CodeWriter::python();
    let graph = w.name(&format!("{}.graph", child.package), "Graph");
    w.line(format!("CHILD = {graph}()"));
    top_level_gap(&mut w);
    let values = Expr::Dict(
        s.input
            .iter()
            .map(|(c, p)| (quote(c), Expr::atom(format!("state.get({})", quote(p)))))
            .collect(),
    );
    let copied = Expr::Dict(
        s.output
            .iter()
            .map(|(p, c)| (quote(p), Expr::atom(format!("result.get({})", quote(c)))))
            .collect(),
    );
    let decorator = graph_node(&mut w, &site.name);
    w.line(decorator);
    suite(&mut w, WITH_DEADLINE, |w| {
        write_expr(w, 1, "values = ", &values, "");
        w.line(format!(
            "result = CHILD.run_child({}, values, deadline)",
            quote(&site.name)
        ));
        write_expr(w, 1, "patch = ", &copied, "");
        w.line("return {k: v for k, v in patch.items() if v is not None}");
    });
    Ok(module_file(
        &format!(
            "The subgraph node `{}`: runs its child graph ({}) on a fresh state.",
            site.name, child.package
        ),
        w,
    ))
}
