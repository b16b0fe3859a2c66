//! `parallel` and `join`: branches that start together and end together
//! (docs/ir-reference.md, "Parallel branches and map"). The node's own
//! fields are checked here; the regions its branches span, the writes they
//! share and the joins they reach need the whole graph and are checked in
//! `validate/parallel.rs`.

use super::{Here, KindRules};
use crate::diag::{did_you_mean, Diagnostic};
use crate::model::NodeKind;
use crate::validate::Validator;

crate::kind_fields! {
    /// Runs branches concurrently, each from a copy of the state, and
    /// merges their writes at its `join` in the order of `branches`.
    pub struct ParallelNode {
        /// The first node of each branch (at least two, distinct).
        branches: Vec<String> = required("branches"),
        /// The `join` node every branch reaches.
        join: String = required("join"),
        /// At most this many branches at a time (1 to 10,000); left out, all at once.
        #[serde(skip_serializing_if = "is_zero")]
        #[schemars(default, range(min = 1))]
        max_concurrency: u32 = count("maxConcurrency", 0, 10_000),
    }
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl KindRules for ParallelNode {
    fn validate<'a>(&'a self, v: &mut Validator<'a>, here: &Here<'a>) {
        let (at, id) = (here.at.as_str(), here.id);
        let nodes = &v.doc().logical.nodes;
        let ids: Vec<&str> = nodes.iter().map(|n| n.id.as_str()).collect();
        let unknown = |name: &str, ptr: String| {
            let mut d = Diagnostic::error(
                &crate::codes::UNRESOLVED_REF,
                format!("parallel `{id}` names node `{name}`, which does not exist"),
            )
            .at(ptr)
            .node(id);
            if let Some(s) = did_you_mean(name, ids.iter().copied()) {
                d = d.hint(format!("did you mean `{s}`?"));
            }
            d
        };
        if self.branches.len() < 2 {
            v.err(
                Diagnostic::error(
                    &crate::codes::INVALID_VALUE,
                    format!(
                        "parallel `{id}` has {} branch(es); it needs at least two",
                        self.branches.len()
                    ),
                )
                .at(format!("{at}/branches"))
                .node(id)
                .hint("name the first node of each branch, or use an edge for a single path"),
            );
        }
        for (j, b) in self.branches.iter().enumerate() {
            let ptr = format!("{at}/branches/{j}");
            if self.branches[..j].contains(b) {
                v.err(
                    Diagnostic::error(
                        &crate::codes::INVALID_VALUE,
                        format!("parallel `{id}` names branch `{b}` twice"),
                    )
                    .at(ptr)
                    .node(id),
                );
            } else if !ids.contains(&b.as_str()) {
                v.err(unknown(b, ptr));
            } else if b == &self.join || b == id {
                v.err(
                    Diagnostic::error(
                        &crate::codes::INVALID_VALUE,
                        format!("parallel `{id}`'s branch `{b}` is the parallel node or its join"),
                    )
                    .at(ptr)
                    .node(id)
                    .hint("a branch starts at the first node of its own work"),
                );
            }
        }
        match nodes.iter().find(|n| n.id == self.join) {
            None => v.err(unknown(&self.join, format!("{at}/join"))),
            Some(n) if !matches!(n.kind, NodeKind::Join) => v.err(
                Diagnostic::error(
                    &crate::codes::INVALID_VALUE,
                    format!(
                        "parallel `{id}`'s join `{}` is a `{}` node; it must be a `join`",
                        n.id,
                        n.kind.name()
                    ),
                )
                .at(format!("{at}/join"))
                .node(id)
                .hint(format!(
                    "add {{ \"id\": \"{}_join\", \"kind\": \"join\" }} and name it here",
                    id
                )),
            ),
            Some(_) => {}
        }
    }
}
