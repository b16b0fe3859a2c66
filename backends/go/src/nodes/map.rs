//! `map` nodes: the child graph (`subgraph_<node>.go`, graph.rs, as a
//! subgraph node's) runs once per item of `over`, each on a fresh state
//! (runtime subgraph.go), at most `maxConcurrency` at once (runtime
//! parallel.go); the outputs reach `outputKey` in item order.

use svc_backend_sdk::ir::{MapNode, Node};
use svc_backend_sdk::subgraphs::GraphScope;
use svc_backend_sdk::writer::CodeWriter;
use svc_backend_sdk::Diagnostic;

use super::{func_name, signature};
use crate::golang::{quote, rt};

pub fn write(
    scope: &GraphScope,
    n: &Node,
    at: &str,
    m: &MapNode,
    body: &mut CodeWriter,
) -> Result<bool, Diagnostic> {
    svc_backend_sdk::subgraphs::embedded_child("map", &n.id, &m.graph, at)?;
    let name = scope.name(&n.id);
    // One line: gofmt aligns nothing there.
    let mut values: Vec<String> = m
        .input
        .iter()
        .map(|(child, parent)| format!("{}: state[{}]", quote(child), quote(parent)))
        .collect();
    values.push(format!("{}: item", quote(&m.item_field)));
    body.line(format!(
        "// {} runs the graph of the map node {} once per item of {}; the outputs go to {} in item order.",
        func_name(&name),
        quote(&name),
        quote(&m.over),
        quote(&m.output_key)
    ));
    let open = signature(body, &func_name(&name));
    body.block(open, "}", |w| {
        let (map, run_child, context) = (rt(w, "Map"), rt(w, "RunChild"), w.name("context", "Context"));
        w.block(
            format!(
                "out, err := {map}(ctx, {}, state[{}], {}, {}, func(ctx {context}, index int, item any) (any, error) {{",
                quote(&name),
                quote(&m.over),
                m.max_items,
                m.max_concurrency
            ),
            "})",
            |w| {
                w.line(format!(
                    "child, err := {run_child}(ctx, {}, schema_{name}, run_{name}, map[string]any{{{}}})",
                    quote(&name),
                    values.join(", ")
                ));
                w.block("if err != nil {", "}", |w| {
                    w.line("return nil, err");
                });
                w.line(format!("return child[{}], nil", quote(&m.output)));
            },
        );
        w.block("if err != nil {", "}", |w| {
            w.line("return nil, err");
        });
        w.line(format!("return State{{{}: out}}, nil", quote(&m.output_key)));
    });
    Ok(true)
}
