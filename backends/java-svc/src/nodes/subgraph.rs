//! A subgraph node: runs its child graph (the `ChildGraph` of the child's
//! package, graph.rs) on a fresh state built from `input`
//! (runtime/Subgraphs.java); only the fields `output` names come back, as a
//! patch the parent's run loop writes through the parent's reducers.

use svc_backend_sdk::ir::SubgraphNode;
use svc_backend_sdk::writer::CodeWriter;
use svc_backend_sdk::Diagnostic;

use super::{node_class, run_method};
use crate::java::{quote, runtime};
use crate::scope::Scope;

/// The class of subgraph node `id` (at index `index`, pointer `at`), or
/// `invalid-value` when its graph is still a path.
pub fn class(
    scope: &Scope,
    class: &str,
    id: &str,
    index: usize,
    at: &str,
    s: &SubgraphNode,
) -> Result<String, Diagnostic> {
    let child = svc_backend_sdk::subgraphs::embedded_child("subgraph", id, &s.graph, at)?;
    let name = scope.name(id);
    let mut w = CodeWriter::java();
    let child_graph = w.name(
        &format!("{}.graph", scope.child(id, index).package),
        "ChildGraph",
    );
    let subgraphs = runtime(&mut w, "Subgraphs");
    let values = runtime(&mut w, "Values");
    let map = w.name("java.util", "Map");
    // `input` is {child field: parent field}, `output` {parent field: child field}.
    let input: Vec<String> = s
        .input
        .iter()
        .map(|(to, from)| format!("{}, state.get({})", quote(to), quote(from)))
        .collect();
    let output: Vec<String> = s
        .output
        .iter()
        .map(|(to, from)| format!("{}, result.get({})", quote(to), quote(from)))
        .collect();
    let fields = vec![format!("private final {child_graph} child;")];
    Ok(node_class(
        w,
        scope,
        class,
        &format!(
            "The subgraph node {}: runs the graph {} on a fresh state; only its output reaches the state.",
            quote(&name),
            quote(&child.id)
        ),
        &fields,
        |w| {
            w.block(format!("public {class}({child_graph} child) {{"), "}", |w| {
                w.line("this.child = child;");
            });
            w.blank();
            run_method(w, true, |w| {
                w.line(format!(
                    "{map}<String, Object> result = {subgraphs}.run({}, {child_graph}.SCHEMA,",
                    quote(&name)
                ));
                w.indent()
                    .indent()
                    .line(format!("{values}.map({}), child::run);", input.join(", ")))
                    .dedent()
                    .dedent();
                w.line(format!(
                    "return {subgraphs}.output({values}.map({}));",
                    output.join(", ")
                ));
            });
        },
    ))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;

    use crate::nodes::files;
    use crate::scope::samples::{fixture, graph, parse, subgraph, template};
    use crate::scope::Scope;

    #[test]
    fn the_node_maps_input_and_output_around_its_child() {
        let doc = fixture("subgraph_node");
        let scope = Scope::root("p").child("inner", 1);
        let child = crate::scope::all_graphs(&doc, "p").remove(1).0;
        let made = files(child, &scope, &BTreeMap::new()).unwrap();
        let file = made
            .iter()
            .find(|f| f.path == "src/main/java/com/svc/p/subgraphs/inner/nodes/DeeperNode.java")
            .unwrap_or_else(|| panic!("{made:?}"));
        let text = String::from_utf8_lossy(&file.contents);
        for want in [
            "package com.svc.p.subgraphs.inner.nodes;\n",
            "import com.svc.p.subgraphs.inner.subgraphs.deeper.graph.ChildGraph;\n",
            "Map<String, Object> result = Subgraphs.run(\"inner__deeper\", ChildGraph.SCHEMA,\n                Values.map(\"q\", state.get(\"question\")), child::run);",
            "return Subgraphs.output(Values.map(\"reply\", result.get(\"r\")));",
        ] {
            assert!(text.contains(want), "{want}\n---\n{text}");
        }
    }

    #[test]
    fn a_graph_still_named_by_path_is_an_invalid_value() {
        let node = subgraph("sub", json!("child.graph.json"));
        let doc = parse(&graph("root", json!([template("pad"), node]), json!({})));
        let errors = files(&doc, &Scope::root("p"), &BTreeMap::new()).unwrap_err();
        let found: Vec<_> = errors
            .iter()
            .map(|e| (e.code.as_str(), e.pointer.as_deref(), e.message.as_str()))
            .collect();
        assert_eq!(
            found,
            [(
                "invalid-value",
                Some("/logical/nodes/2/graph"),
                "subgraph node `sub`: the host did not read its graph file"
            )]
        );
    }
}
