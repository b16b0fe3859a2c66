//! `subgraph` nodes: an embedded child is validated like a top-level
//! document (its diagnostics point into the parent at
//! `/logical/nodes/<i>/graph/...`), and the `input` and `output` mappings
//! are checked against both states. A child given by path is read by the
//! host, which then runs [`subgraph_mapping`] itself.

use crate::diag::{did_you_mean, Diagnostic};
use crate::model::*;

impl<'a> super::Validator<'a> {
    pub(super) fn subgraph(&mut self, i: usize, n: &'a Node, s: &'a SubgraphNode) {
        let SubgraphRef::Embedded(child) = &s.graph else {
            return;
        };
        let prefix = format!("{}/graph", Self::node_ptr(i));
        for mut d in super::validate(child) {
            d.pointer = Some(format!("{prefix}{}", d.pointer.as_deref().unwrap_or("")));
            d.node.get_or_insert_with(|| n.id.clone());
            self.err(d);
        }
        let mapping = subgraph_mapping(self.doc, i);
        self.diags.extend(mapping);
    }
}

/// The `input` and `output` of the subgraph node at `index` against the
/// parent's and the (embedded) child's states: every field exists, the
/// types match, and every required child field is given.
pub fn subgraph_mapping(parent: &Document, index: usize) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let Some(n) = parent.logical.nodes.get(index) else {
        return out;
    };
    let NodeKind::Subgraph(s) = &n.kind else {
        return out;
    };
    let SubgraphRef::Embedded(child) = &s.graph else {
        return out;
    };
    let ptr = format!("/logical/nodes/{index}");
    let child_names: Vec<&str> = child
        .logical
        .state
        .iter()
        .map(|f| f.name.as_str())
        .collect();
    let mut pair = |child_field: &str, parent_field: &str, at: String, into_child: bool| {
        let Some(c) = child.state_field(child_field) else {
            let mut d = Diagnostic::error(
                "unknown-state-field",
                format!(
                    "`{child_field}` is not a state field of the subgraph `{}`",
                    child.id
                ),
            )
            .at(at)
            .node(&n.id);
            if let Some(s) = did_you_mean(child_field, child_names.iter().copied()) {
                d = d.hint(format!("did you mean `{s}`?"));
            }
            out.push(d);
            return;
        };
        // The parent field's existence is checked with the node's fields.
        let Some(p) = parent.state_field(parent_field) else {
            return;
        };
        if c.ty != p.ty || c.items != p.items {
            let (from, to) = if into_child { (p, c) } else { (c, p) };
            out.push(
                Diagnostic::error(
                    "subgraph-type",
                    format!(
                        "subgraph `{}` copies `{}` ({}) into `{}` ({}); the types must match",
                        n.id,
                        from.name,
                        from.describe(),
                        to.name,
                        to.describe()
                    ),
                )
                .at(at)
                .node(&n.id)
                .hint("map fields of the same type, or change one of the declarations"),
            );
        }
    };
    for (child_field, parent_field) in &s.input {
        pair(
            child_field,
            parent_field,
            format!("{ptr}/input/{child_field}"),
            true,
        );
    }
    for (parent_field, child_field) in &s.output {
        pair(
            child_field,
            parent_field,
            format!("{ptr}/output/{parent_field}"),
            false,
        );
    }
    for f in &child.logical.state {
        if f.required && !s.input.contains_key(&f.name) {
            out.push(
                Diagnostic::error(
                    "subgraph-type",
                    format!(
                        "the subgraph `{}` requires `{}`, which `input` does not give it",
                        child.id, f.name
                    ),
                )
                .at(format!("{ptr}/input"))
                .node(&n.id)
                .hint(format!("add \"{}\": \"<parent field>\" to `input`", f.name)),
            );
        }
    }
    out
}
