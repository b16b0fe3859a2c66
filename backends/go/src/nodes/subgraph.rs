//! `subgraph` nodes: the child graph (`subgraph_<node>.go`, graph.rs) runs
//! on a fresh state built from `input` (runtime subgraph.go); only the
//! fields `output` names come back.

use svc_backend_sdk::ir::{Node, SubgraphNode};
use svc_backend_sdk::subgraphs::GraphScope;
use svc_backend_sdk::writer::CodeWriter;
use svc_backend_sdk::Diagnostic;

use super::{func_name, signature};
use crate::golang::{quote, rt};

pub fn write(
    scope: &GraphScope,
    n: &Node,
    at: &str,
    s: &SubgraphNode,
    body: &mut CodeWriter,
) -> Result<bool, Diagnostic> {
    svc_backend_sdk::subgraphs::embedded_child("subgraph", &n.id, &s.graph, at)?;
    let name = scope.name(&n.id);
    // Map literals on one line: gofmt aligns nothing there.
    let map = |pairs: Vec<String>| format!("map[string]any{{{}}}", pairs.join(", "));
    let values = map(s
        .input
        .iter()
        .map(|(child, parent)| format!("{}: state[{}]", quote(child), quote(parent)))
        .collect());
    let copied = map(s
        .output
        .iter()
        .map(|(parent, child)| format!("{}: out[{}]", quote(parent), quote(child)))
        .collect());
    body.line(format!(
        "// {} runs the subgraph {} on a fresh state; only its output reaches the state.",
        func_name(&name),
        quote(&name)
    ));
    let open = signature(body, &func_name(&name));
    body.block(open, "}", |w| {
        let run = rt(w, "RunChild");
        w.line(format!(
            "out, err := {run}(ctx, {}, schema_{name}, run_{name}, {values})",
            quote(&name)
        ));
        w.block("if err != nil {", "}", |w| {
            w.line("return nil, err");
        });
        let output = rt(w, "ChildOutput");
        w.line(format!("return {output}({copied}), nil"));
    });
    Ok(true)
}
