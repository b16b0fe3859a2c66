//! A map node: runs its child graph (the `ChildGraph` of the child's
//! package, graph.rs, as a subgraph node's) once per item of `over`, each
//! on a fresh state (runtime/Subgraphs.java), at most `maxConcurrency` at
//! once (runtime/Parallel.java); the outputs reach `outputKey` in item
//! order, as a patch the parent's run loop writes through its reducers.

use svc_backend_sdk::ir::MapNode;
use svc_backend_sdk::writer::CodeWriter;
use svc_backend_sdk::Diagnostic;

use super::{node_class, run_method};
use crate::java::{quote, runtime};
use crate::scope::Scope;

/// The class of map node `id` (at index `index`, pointer `at`), or
/// `invalid-value` when its graph is still a path.
pub fn class(
    scope: &Scope,
    class: &str,
    id: &str,
    index: usize,
    at: &str,
    m: &MapNode,
) -> Result<String, Diagnostic> {
    let child = svc_backend_sdk::subgraphs::embedded_child("map", id, &m.graph, at)?;
    let name = scope.name(id);
    let mut w = CodeWriter::java();
    let child_graph = w.name(
        &format!("{}.graph", scope.child(id, index).package),
        "ChildGraph",
    );
    let (subgraphs, values, parallel) = (
        runtime(&mut w, "Subgraphs"),
        runtime(&mut w, "Values"),
        runtime(&mut w, "Parallel"),
    );
    let (map, list) = (w.name("java.util", "Map"), w.name("java.util", "List"));
    // `input` is {child field: parent field}; the item goes to itemField.
    let mut input: Vec<String> = m
        .input
        .iter()
        .map(|(to, from)| format!("{}, state.get({})", quote(to), quote(from)))
        .collect();
    input.push(format!("{}, item", quote(&m.item_field)));
    let fields = vec![format!("private final {child_graph} child;")];
    Ok(node_class(
        w,
        scope,
        class,
        &format!(
            "The map node {}: runs the graph {} once per item of {}; the outputs go to {} in item order.",
            quote(&name),
            quote(&child.id),
            quote(&m.over),
            quote(&m.output_key)
        ),
        &fields,
        |w| {
            w.block(format!("public {class}({child_graph} child) {{"), "}", |w| {
                w.line("this.child = child;");
            });
            w.blank();
            run_method(w, true, |w| {
                w.line(format!(
                    "{list}<Object> outputs = {parallel}.map({}, state.get({}), {}, {}, (index, item) -> {{",
                    quote(&name),
                    quote(&m.over),
                    m.max_items,
                    m.max_concurrency
                ));
                w.indent();
                w.line(format!(
                    "{map}<String, Object> result = {subgraphs}.run({}, {child_graph}.SCHEMA,",
                    quote(&name)
                ));
                w.indent()
                    .indent()
                    .line(format!("{values}.map({}), child::run);", input.join(", ")))
                    .dedent()
                    .dedent();
                w.line(format!("return result.get({});", quote(&m.output)));
                w.dedent();
                w.line("});");
                w.line(format!(
                    "return {values}.map({}, outputs);",
                    quote(&m.output_key)
                ));
            });
        },
    ))
}
